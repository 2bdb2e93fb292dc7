"""The FNM test of section 5 (graph/query.py): terms, phrases, folding."""

import pytest

from templatemine.graph.query import matches, normalise, parse_query


def test_phrases_and_words_are_terms():
    assert parse_query('"rock climbing" gear') == [" rock climbing ", " gear "]
    assert parse_query("Java  java") == [" java "]  # folded, deduplicated
    # an apostrophe is part of a word, not a quote: the phrase stays one term (found in review)
    assert parse_query('"rock climbing" O\'Reilly') == [" rock climbing ", " o reilly "]


def test_a_phrase_matches_only_as_whole_adjacent_words():
    terms = parse_query('"rock climbing"')
    assert matches("Rock-climbing in Yosemite!", terms)  # punctuation folds to a space
    assert matches("ROCK\nCLIMBING", terms)
    assert not matches("rock and climbing", terms)
    assert not matches("rockclimbing", terms)
    assert not matches("shamrock climbing", terms)  # whole words only
    assert not matches(None, terms)


def test_every_term_must_occur():
    terms = parse_query('"mutual fund" risk')
    assert matches("A mutual fund carries risk.", terms)
    assert not matches("A mutual fund.", terms)


def test_unbalanced_quote_and_empty_query():
    assert parse_query('"rock climbing') == [" rock ", " climbing "]
    with pytest.raises(ValueError):
        parse_query(' "" ')
    assert normalise("  a--b  ") == " a b "
