"""Every table's name, columns and Spark schema, in one place.

PAGES, LINKS and PAGELETS are the relations of Bar-Yossef & Rajagopalan,
section 3.2 ("the algorithms assume the pages, links, and pagelets in G are
stored as ... database tables"); RECORDS accounts for every input record.
Keep names and columns stable: later stages and users' jobs read them.
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    FloatType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

RECORDS = "records"
PAGES = "pages"
LINKS = "links"
PAGELETS = "pagelets"
NODES = "nodes"  # the page-level model's DOM nodes (templatemine/pagelevel/features.py)
EXTRACT_TABLES = (RECORDS, PAGES, LINKS, PAGELETS, NODES)


def _struct(*fields: tuple) -> StructType:
    return StructType([StructField(name, dtype, nullable) for name, dtype, nullable in fields])


# one row per link, nested in a capture (src_page_key is the capture's page_key)
LINK_FIELDS = _struct(
    ("link_ordinal", IntegerType(), False),  # position among the page's http(s) links
    ("dst_page_key", LongType(), False),
    ("dst_url", StringType(), False),
    ("anchor_text", StringType(), False),
    ("pagelet_ordinal", IntegerType(), False),  # the pagelet the link sits in (-1: none)
    ("same_site", BooleanType(), False),
)

# one row per pagelet, nested in a capture
PAGELET_FIELDS = _struct(
    ("ordinal", IntegerType(), False),  # document order within the page
    ("dom_path", StringType(), False),  # XPath-like: /html/body/div[2]/ul[1]
    ("dom_label", StringType(), False),  # tag#id.class of the element, "#text" for a text run
    ("text", StringType(), False),
    ("n_tokens", IntegerType(), False),
    ("n_links", IntegerType(), False),  # <a href>/<area href> inside, any scheme
    ("shingle", LongType(), False),  # 64-bit MinHash super-shingle (html/shingles.py)
)

# one row per DOM node of the page-level model, nested in a capture: block-level
# elements, pagelets and split elements holding text or links (pagelevel/features.py)
NODE_FIELDS = _struct(
    ("node", IntegerType(), False),  # preorder index within the page (0: <body>)
    ("parent", IntegerType(), False),  # -1 for the root
    ("depth", IntegerType(), False),
    ("dom_label", StringType(), False),
    ("pagelet_ordinal", IntegerType(), False),  # the pagelet holding the node (-1: above the pagelets)
    ("own_pagelets", ArrayType(IntegerType(), containsNull=False), False),  # pagelets of its own text
    ("text", StringType(), False),  # own text: not in any child node
    ("n_tokens", IntegerType(), False),  # tokens in the subtree
    ("features", ArrayType(FloatType(), containsNull=False), False),  # pagelevel.features.FEATURES order
    ("unlikely", BooleanType(), False),  # in an unlikely candidate's subtree (features.UNLIKELY_CANDIDATES)
    ("article", BooleanType(), False),  # in the page's article (Readability's top candidate + siblings) or an <h1>
    ("text_at", IntegerType(), False),  # its parent's own words before it: where its text goes (document order)
)

_RECORD_COLUMNS = (
    ("warc_file", StringType(), False),
    ("warc_offset", LongType(), False),
    ("record_type", StringType(), True),
    ("target_uri", StringType(), True),
    ("outcome", StringType(), False),  # "page" or why not (html/record.py OUTCOMES)
    ("detail", StringType(), True),
    ("warc_record_id", StringType(), True),  # WARC-Record-ID (null in ARC files)
    # a 3xx response's Location, resolved and normalised (null: none, or not a 3xx), and its
    # key where it is on the URL's site (registered domain): links are followed through those
    ("redirect_page_key", LongType(), True),
    ("redirect_url", StringType(), True),
)

_PAGE_COLUMNS = (
    ("page_key", LongType(), True),  # 64-bit hash of the normalised URL
    ("url", StringType(), True),  # normalised
    ("host", StringType(), True),
    ("site", StringType(), True),  # registered domain (Public Suffix List)
    ("fetch_time", TimestampType(), True),
    ("http_status", IntegerType(), True),
    ("content_type", StringType(), True),
    ("charset", StringType(), True),
    ("charset_source", StringType(), True),  # bom | header | meta | utf-8 | detected
    ("title", StringType(), True),
    ("text_length", IntegerType(), True),
    ("n_links", IntegerType(), True),
    ("n_pagelets", IntegerType(), True),
    ("dup_signature", LongType(), True),  # Broder-style page shingle, for near-duplicates
)

# What the per-file Python task emits: one row per input record, with the
# page's links and pagelets nested (parsed once, exploded by Spark).
CAPTURES_SCHEMA = _struct(
    *_RECORD_COLUMNS,
    *_PAGE_COLUMNS,
    ("links", ArrayType(LINK_FIELDS, containsNull=False), True),
    ("pagelets", ArrayType(PAGELET_FIELDS, containsNull=False), True),
    ("nodes", ArrayType(NODE_FIELDS, containsNull=False), True),
)

# page_key and fetch_time are set for pages and for non_2xx responses (a 404 tells a
# nightly run that a page it holds is gone), null otherwise
RECORDS_SCHEMA = _struct(*_RECORD_COLUMNS[:4], ("page_key", LongType(), True), *_RECORD_COLUMNS[4:],
                         _PAGE_COLUMNS[4])

PAGES_SCHEMA = _struct(
    ("page_key", LongType(), False),
    *_PAGE_COLUMNS[1:4],
    _PAGE_COLUMNS[4],
    ("warc_file", StringType(), False),
    ("warc_offset", LongType(), False),
    ("warc_record_id", StringType(), True),  # what the WET conversion records refer to
    ("target_uri", StringType(), True),  # WARC-Target-URI as captured, where it is not `url` (null: it is)
    *_PAGE_COLUMNS[5:],
    ("dup_of", LongType(), True),  # page_key of the page this one duplicates (null: none)
)

LINKS_SCHEMA = _struct(("src_page_key", LongType(), False), *[(f.name, f.dataType, f.nullable) for f in LINK_FIELDS])

PAGELETS_SCHEMA = _struct(("page_key", LongType(), False), *[(f.name, f.dataType, f.nullable) for f in PAGELET_FIELDS])

NODES_SCHEMA = _struct(("page_key", LongType(), False), *[(f.name, f.dataType, f.nullable) for f in NODE_FIELDS],
                       # pagelevel.features.FORMAT of `features`, set by extract: a nightly state's nodes come
                       # from many nights (perhaps of older templatemines), so each row says what it holds
                       ("features_format", IntegerType(), False))

TABLE_SCHEMAS = {RECORDS: RECORDS_SCHEMA, PAGES: PAGES_SCHEMA, LINKS: LINKS_SCHEMA, PAGELETS: PAGELETS_SCHEMA,
                 NODES: NODES_SCHEMA}

# A night's output folder only (nightly/night.py `_snapshot`): the URLs not crawled as pages that
# redirect to a snapshot page, from the state's RECORDS, which the folder does not hold
# (tables/targets.py `redirect_keys`; its readers take it for OUT's RECORDS' redirects)
REDIRECTS = "redirects"
REDIRECTS_SCHEMA = _struct(
    ("written_key", LongType(), True),  # the key of the URL a link names (LINKS.dst_page_key)
    ("page_key", LongType(), True),  # the crawled page the redirects end on
)
