"""Uses of the clean graph: link analysis over the tables a run wrote (Bar-Yossef & Rajagopalan section 4; Chakrabarti 2001)."""
