"""Uses of the clean graph: link analysis over the tables a run wrote (Bar-Yossef & Rajagopalan section 4; Chakrabarti 2001)."""

# the configurations `distill` runs (section 5's six, then Chakrabarti 2001's); here, not in
# distill.py, so the command line lists them without importing pyspark
CONFIGS = ("page vanilla", "page FNM", "pagelet vanilla", "pagelet FNM", "pagelet FT", "pagelet FT FNM")
DOM_CONFIGS = ("dom MDL", "dom MDL FT")  # graph/dom.py, without and with template filtering
