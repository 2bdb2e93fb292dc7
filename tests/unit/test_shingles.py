"""Shingles: equal to datasketch's MinHash, and the collision rates the
docstring of templatemine/html/shingles.py promises, measured on generated
perturbations of menus, footers and paragraphs."""

import random

import numpy as np
from datasketch import MinHash

from templatemine.html.shingles import Shingler, normalize_token, resemblance, tokens

# letters only: digits are folded to 0 by the normalisation, so "w1" and "w2" are one token
_rng = random.Random(0)
WORDS = sorted({"".join(_rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3 + i % 6)) for i in range(6000)})


def test_equals_datasketch_minhash_bit_for_bit():
    s = Shingler(ngram=2, rows=2, seed=1)
    rng = random.Random(7)
    for _ in range(50):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60)))
        feats, segs = s.segmented_ngrams(s.token_hashes(text.split()), np.zeros(len(text.split()), dtype=np.int64), 1)
        m = MinHash(num_perm=2, seed=1, scheme="affine32", hashfunc=lambda x: x)
        m.update_batch([int(v) for v in feats])
        assert s.minhashes(feats, segs, 1)[0].tolist() == m.hashvalues.tolist()


def test_vectorised_page_pass_equals_one_text_at_a_time():
    s = Shingler()
    texts = ["Home About Contact", "", "Copyright 2026 Example", "x", "a b c d e f g"]
    fallbacks = [[], ["https://example.org/img-link"], [], [], []]
    shingles, n_tokens, _ = s.shingle_texts(texts, fallbacks)
    assert n_tokens == [3, 0, 3, 1, 7]
    for text, got in zip(texts, shingles):
        if text:
            assert got == s.text_fingerprint(text)


def test_normalisation_ignores_case_digits_and_punctuation():
    s = Shingler()
    assert normalize_token("Version-2.14!") == "version 0 0"
    assert tokens("-- | --") == []
    a = s.text_fingerprint("Posted on March 3, 2024 - 17 comments")
    assert a == s.text_fingerprint("posted on March 9, 2025 -- 4 Comments")


def _menu(rng, n):
    return [" ".join(rng.choice(WORDS) for _ in range(2)) for _ in range(n)]


def _jaccard(s, a, b):
    fa = set(s.feature_hashes(a).tolist())
    fb = set(s.feature_hashes(b).tolist())
    return len(fa & fb) / len(fa | fb)


def test_one_changed_menu_item_collides_about_as_predicted():
    """A 20-item menu with one item changed keeps J ~ 0.9: shingles agree with
    probability J ** 2. Measured over 2000 generated menus, the rate must be
    within 0.05 of the mean predicted rate, and above 0.6."""
    s = Shingler()
    rng = random.Random(1)
    hits, predicted = 0, 0.0
    trials = 2000
    for _ in range(trials):
        items = _menu(rng, 20)
        changed = list(items)
        changed[rng.randrange(20)] = " ".join(rng.choice(WORDS) for _ in range(2))
        a, b = " | ".join(items), " | ".join(changed)
        predicted += _jaccard(s, a, b) ** 2
        hits += s.text_fingerprint(a) == s.text_fingerprint(b)
    rate, predicted = hits / trials, predicted / trials
    assert abs(rate - predicted) < 0.05, (rate, predicted)
    assert rate > 0.6


def test_changed_date_counter_or_highlight_never_changes_the_shingle():
    s = Shingler()
    rng = random.Random(2)
    for _ in range(200):
        items = _menu(rng, 15)
        header = f"Last updated {rng.randint(1, 28)} November {rng.randint(2000, 2030)}, {rng.randint(0, 999)} visits"
        other = f"Last updated {rng.randint(1, 28)} November {rng.randint(2000, 2030)}, {rng.randint(0, 999)} visits"
        assert s.text_fingerprint(" ".join(items) + " " + header) == s.text_fingerprint(" ".join(items) + " " + other)
        # "current page" highlight changes markup, not text: the pagelet text is equal
        assert s.text_fingerprint(" ".join(items).upper()) == s.text_fingerprint(" ".join(items))


def test_unrelated_pagelets_do_not_collide():
    """20,000 unrelated generated paragraphs: no two share a shingle."""
    s = Shingler()
    rng = random.Random(3)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40))) for _ in range(20000)]
    shingles, _, _ = s.shingle_texts(texts, [[] for _ in texts])
    assert len(set(shingles)) == len(set(texts))


def test_rows_trade_recall_for_precision():
    rng = random.Random(4)
    loose, strict = Shingler(rows=1), Shingler(rows=8)
    agree_loose = agree_strict = 0
    for _ in range(500):
        items = _menu(rng, 10)
        changed = list(items)
        changed[0] = "something else"
        a, b = " ".join(items), " ".join(changed)
        agree_loose += loose.text_fingerprint(a) == loose.text_fingerprint(b)
        agree_strict += strict.text_fingerprint(a) == strict.text_fingerprint(b)
    assert agree_loose > agree_strict


def _word_ngrams(text, ngram):
    """Reference feature set written out as token tuples (module doc, step 2):
    the word n-grams of the normalised tokens, or the tokens one by one when a
    text has fewer than n of them."""
    words = tokens(text)
    if len(words) < ngram:
        return {(w,) for w in words}
    return set(zip(*(words[i:] for i in range(ngram))))


def test_resemblance_is_the_jaccard_of_the_shingle_features():
    """`resemblance` counts the features the shingle is computed over: on
    generated texts (short ones, which fall back to unigrams, and punctuation
    and digits, which normalise) it equals the Jaccard of the word n-gram
    tuples of the module doc, for n = 1, 2, 3."""
    rng = random.Random(5)
    vocab = WORDS + ["|", "2013", "7", "Home,", "HOME", "--"]
    for _ in range(300):
        a = " ".join(rng.choice(vocab) for _ in range(rng.randint(1, 12)))
        words = a.split()
        b = " ".join(words[: rng.randint(0, len(words))] + [rng.choice(vocab) for _ in range(rng.randint(0, 4))])
        for n in (1, 2, 3):
            fa, fb = _word_ngrams(a, n), _word_ngrams(b, n)
            expected = len(fa & fb) / len(fa | fb) if fa or fb else 1.0
            assert abs(resemblance(a, b, n) - expected) < 1e-12, (a, b, n)
    assert _word_ngrams("Home | About us", 2) == {("home", "about"), ("about", "us")}
    assert resemblance("Home | About us", "home about US", 2) == 1.0
    assert resemblance("Home | About us", "About us", 2) == 0.5
    assert resemblance("Home", "home", 3) == 1.0
    assert resemblance("", "") == 1.0 and resemblance("", "Home") == 0.0


def test_a_shared_byline_is_not_an_almost_identical_header():
    """The collision templates/detect.py's almost-identity check removes: two
    post headers that share only their byline resemble each other far less
    than a menu with one item changed, though their shingles can agree."""
    byline = "Posted by Bethonie Butler on February 14, 2013 at 11:02 am"
    one = f"Hax-Philes: discuss advice in our new Hax forum {byline}"
    two = f"How to contact the Post newsroom {byline}"
    menu = " | ".join(["News", "Politics", "Opinions", "Local", "Sports", "Arts", "Business", "Tech", "Travel"])
    assert resemblance(one, two) < 0.5
    assert resemblance(menu, menu.replace("Travel", "Jobs")) > 0.75
