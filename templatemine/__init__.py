"""templatemine: find and strip site templates in web crawls.

Flow (folder by folder):
    warc/    WARC/ARC files -> raw records (robust, streamed)
    html/    one record -> page, pagelets, links, shingles (pure Python)
    tables/  Spark: records -> PAGES, LINKS, PAGELETS tables (Parquet)
"""

__version__ = "0.1.0"
