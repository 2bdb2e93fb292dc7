"""A query, and whether a text matches it: the FNM test of section 5.

Bar-Yossef & Rajagopalan filter "pages/pagelets that do not match the query
term (i.e., the query term does not occur in their text)". A query here is a
conjunction of terms: a quoted phrase is one term, every other word is one
term; a text matches when every term occurs in it as whole words, case and
punctuation folded. `matches` is the pure definition (unit-tested); `match_column`
builds the same test as a Spark expression, so no Python UDF runs per row.
"""

from __future__ import annotations

import re

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
SPARK_NON_WORD = r"[^\p{L}\p{N}_]+"  # the same class as Python's \W, in Java regex


def normalise(text: str) -> str:
    """Lower-cased words separated by single spaces, padded with one space each side."""
    return " " + " ".join(_NON_WORD.sub(" ", text.lower()).split()) + " "


def parse_query(query: str) -> list[str]:
    """Terms of `query`, each normalised and padded (' rock climbing ')."""
    # only double quotes make phrases: an apostrophe (O'Reilly) is part of a word
    # (shlex read it as an open quote, failed, and the fallback lost every phrase)
    if query.count('"') % 2 == 0:
        parts = [p for i, chunk in enumerate(query.split('"')) for p in ([chunk] if i % 2 else chunk.split())]
    else:  # an unbalanced quote: take the words
        parts = query.replace('"', " ").split()
    terms = []
    for part in parts:
        norm = normalise(part)
        if norm.strip() and norm not in terms:
            terms.append(norm)
    if not terms:
        raise ValueError(f"query {query!r} has no words")
    return terms


def matches(text: str | None, terms: list[str]) -> bool:
    norm = normalise(text or "")
    return all(t in norm for t in terms)


def term_columns(text_col, terms: list[str]):
    """One boolean Spark column per term: does it occur in `text_col`?"""
    from pyspark.sql import functions as F

    norm = F.concat(F.lit(" "), F.trim(F.regexp_replace(F.lower(F.coalesce(text_col, F.lit(""))),
                                                         SPARK_NON_WORD, " ")), F.lit(" "))
    return [F.instr(norm, t) > 0 for t in terms]


def match_column(text_col, terms: list[str]):
    """Spark twin of `matches`."""
    cols = term_columns(text_col, terms)
    out = cols[0]
    for c in cols[1:]:
        out = out & c
    return out
