"""templatemine: find and strip site templates in web crawls.

Flow (folder by folder):
    warc/       WARC/ARC files -> raw records (robust, streamed)
    html/       one record -> page, pagelets, links, shingles (pure Python)
    tables/     Spark: records -> RECORDS, PAGES, LINKS, PAGELETS (Parquet)
    templates/  Spark: template shingles, candidates, template links, connected
                components (Bar-Yossef & Rajagopalan, Fig. 5; Fig. 4) -> templates
    clean/      Spark: clean_pages, clean_links
    evaluate/   bag-of-words P/R/F1 of clean text against gold text
"""

__version__ = "0.1.0"
