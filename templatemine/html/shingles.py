"""Shingles: 64-bit fingerprints that near-identical pagelets share.

Section 3.2 of Bar-Yossef & Rajagopalan relaxes Definition 4 from "identical"
to "approximately identical" pagelets, using the shingling of Broder et al.: a
fingerprint s(p) invariant under small perturbations, with s(p) = s(T) for every
pagelet of a template T. We compute it as a MinHash *super-shingle*:

1. Normalise the text: split into words at white space, lower-case
   (`str.lower`, not `casefold`), every run of ASCII digits becomes `0` (so
   dates, counters, version numbers and page numbers do not change it), ASCII
   punctuation dropped (inside a word it leaves a space in that one token:
   `Home|About|Contact` is one token, not three; README Known gaps). Not
   folded: other scripts' digits (full-width `３`, Arabic-Indic), and a
   thousands separator is punctuation, so `1,000` is `0 0` where `999` is `0`:
   a counter crossing 1,000 changes the text (found in review; README Known gaps).
2. Features: the *set* of word n-grams (n = `ngram`, default 2). A text shorter
   than n tokens has its tokens as features (one feature at n = 2). A pagelet
   with no text (say, image links) uses the set of its links' target URLs instead.
3. MinHash with datasketch (`scheme="affine32"`, `rows` permutations from
   `seed`): each permutation keeps the minimum of a 32-bit permuted hash over the
   features. Tokens are hashed with CRC-32, n-grams by mixing token hashes.
4. The shingle is the concatenation of the `rows` minima: with the default
   rows = 2 that is exactly 64 bits (min_0 << 32 | min_1); for other `rows` the
   minima are hashed to 64 bits with blake2b.

What collides, and how often: for two feature sets A and B, each minimum agrees
with probability J = |A & B| / |A | B| (Jaccard), independently per
permutation, so the shingles are equal with probability J ** rows (plus an
accidental collision of the minima, and the CRC-32 chance ~|A|*|B|/2^32 that
two different features hash alike). The accidental part is not 2^-64: the
minimum of m 32-bit hashes lies near 2^32/m, so two unrelated sets of m
features agree in both minima with probability about (m / 2^33) ** 2 (3e-15 at
m = 500; measured in review, 2026-11-26): negligible per pair, and the
evidence filter's support and two-distinct-pages rules stand between such a
pair and a template. With rows = 2:
- identical text, or text differing only in ASCII digit values or case: J = 1, always equal;
- a 40-token menu with one item (two words) changed: J ~ 0.85, equal with p ~ 0.72;
- one item of a 20-item menu removed (the "current page" shown unlinked and
  unchanged in text keeps J = 1);
- unrelated paragraphs sharing a few common bigrams: J ~ 0.01, p ~ 1e-4.
tests/unit/test_shingles.py measures these rates on generated perturbations.

The MinHash arithmetic here is datasketch's own (its permutations and its
`_fmix` pre-mix) applied to all pagelets of a page in one numpy pass instead of
one `MinHash` object per pagelet; a unit test checks the values equal
`datasketch.MinHash.update_batch` bit for bit.
"""

from __future__ import annotations

import re
import string
import zlib
from hashlib import blake2b

import numpy as np
from datasketch import MinHash
from datasketch.minhash import _fmix

from templatemine.ids import to_signed64

# one C pass: ASCII punctuation -> space, digits -> "0"; then runs of 0 -> one 0
_FOLD = str.maketrans({**{c: " " for c in string.punctuation}, **{d: "0" for d in string.digits}})
_ZEROS = re.compile("0+")
_NO_TOKEN = -1  # cache value of a raw token that is punctuation only
_SEPARATOR = "\x00\x01sep\x01\x00"  # joins a page's texts; cannot occur in text split at whitespace
_SEPARATOR_HASH = -2
_MIX = np.uint32(0x9E3779B1)  # golden-ratio multiplier to combine token hashes into n-grams


def normalize_token(raw: str) -> str:
    """Lower case, ASCII punctuation removed (inner punctuation becomes a space),
    every run of ASCII digits folded to one 0 ("2024" and "7" alike). "" for a
    token of punctuation only."""
    return " ".join(_ZEROS.sub("0", raw.lower().translate(_FOLD)).split())


def tokens(text: str) -> list[str]:
    """Normalised word tokens of `text` (see `normalize_token`)."""
    return [t for t in map(normalize_token, text.split()) if t]


class Shingler:
    """MinHash super-shingles for many feature sets at once (see module doc)."""

    def __init__(self, ngram: int = 2, rows: int = 2, seed: int = 1):
        if ngram < 1 or rows < 1:
            raise ValueError("ngram and rows must be >= 1")
        self.ngram = ngram
        self.rows = rows
        self.seed = seed
        a, b = MinHash(num_perm=rows, seed=seed, scheme="affine32").permutations
        self._a = np.asarray(a, dtype=np.uint32)
        self._b = np.asarray(b, dtype=np.uint32)
        self._cache: dict[str, int] = {}

    # features -----------------------------------------------------------
    def token_hashes(self, raw_tokens: list[str], keep_empty: bool = False) -> np.ndarray:
        """CRC-32 of each normalised token of `raw_tokens` (white-space split
        text); tokens that normalise to nothing are dropped. Memoised per
        worker on the raw token, so the normalisation runs once per distinct
        token and the per-token work is a C-level dictionary lookup."""
        cache = self._cache
        if not cache:
            cache[_SEPARATOR] = _SEPARATOR_HASH
        missing = set(raw_tokens).difference(cache)  # C-level: membership in the dict
        if missing:
            if len(cache) > 200_000:  # bounded memory per worker
                cache.clear()
                cache[_SEPARATOR] = _SEPARATOR_HASH
                missing = set(raw_tokens).difference(cache)
            for t in missing:
                norm = normalize_token(t)
                cache[t] = zlib.crc32(norm.encode("utf-8", "surrogatepass")) if norm else _NO_TOKEN
        h = np.fromiter(map(cache.__getitem__, raw_tokens), dtype=np.int64, count=len(raw_tokens))
        return h if keep_empty else h[h != _NO_TOKEN].astype(np.uint32)

    def feature_hashes(self, text: str) -> np.ndarray:
        """The feature set (word n-gram hashes) of one text."""
        h = self.token_hashes(text.split())
        return self.segmented_ngrams(h, np.zeros(len(h), dtype=np.int64), 1)[0]

    @staticmethod
    def string_hashes(strings: list[str]) -> np.ndarray:
        return np.fromiter(
            (zlib.crc32(u.encode("utf-8", "surrogatepass")) for u in strings), dtype=np.uint32, count=len(strings)
        )

    # MinHash ------------------------------------------------------------
    def minhashes(self, features: np.ndarray, segment: np.ndarray, n_sets: int) -> np.ndarray:
        """(n_sets, rows) uint32 MinHash values, datasketch affine32, of the
        feature sets given as one array `features` with the set index of each
        feature in `segment` (every set must be non-empty)."""
        if n_sets == 0:
            return np.zeros((0, self.rows), dtype=np.uint32)
        order = np.argsort(segment, kind="stable")
        sizes = np.bincount(segment, minlength=n_sets)
        if (sizes == 0).any():
            raise ValueError("empty feature set has no shingle")
        hv = _fmix(features[order].astype(np.uint32).reshape(-1, 1), 32)
        with np.errstate(over="ignore"):
            phv = hv * self._a + self._b  # uint32 wrap-around is the modulo 2^32
        starts = np.zeros(n_sets, dtype=np.int64)
        np.cumsum(sizes[:-1], out=starts[1:])
        return np.minimum.reduceat(phv, starts, axis=0)

    def segmented_ngrams(self, h: np.ndarray, seg: np.ndarray, n_sets: int) -> tuple[np.ndarray, np.ndarray]:
        """Word n-gram hashes within each segment of the token hashes `h`
        (segment of each token in `seg`, non-decreasing); a segment with fewer
        than n tokens contributes its tokens (unigrams) instead."""
        n = self.ngram
        if n == 1 or len(h) == 0:
            return h, seg
        sizes = np.bincount(seg, minlength=n_sets)
        short = sizes[seg] < n
        feats, segs = [h[short]], [seg[short]]
        if len(h) >= n:
            m = len(h) - n + 1
            with np.errstate(over="ignore"):
                acc = h[:m].copy()
                for j in range(1, n):
                    acc = acc * _MIX + h[j : m + j]
            inside = seg[:m] == seg[n - 1 :]
            feats.append(acc[inside])
            segs.append(seg[:m][inside])
        return np.concatenate(feats), np.concatenate(segs)

    def shingle_texts(self, texts: list[str], fallbacks: list[list[str]]) -> tuple[list[int], list[int], np.ndarray]:
        """Shingles of many texts in one vectorised pass (one page's pagelets).

        Returns (shingle per text, token count per text, token hashes of all
        texts concatenated). A text without tokens is fingerprinted by the
        strings in its `fallbacks` entry (which must then be non-empty)."""
        n_sets = len(texts)
        # one split and one dictionary pass for the whole page: texts are joined
        # with a separator token that no whitespace-split text can contain
        raw = (" " + _SEPARATOR + " ").join(texts).split()
        h = self.token_hashes(raw, keep_empty=True)
        boundary = h == _SEPARATOR_HASH
        seg = np.cumsum(boundary)
        if len(seg) and seg[-1] != n_sets - 1:
            raise ValueError("a text contains the separator token")
        keep = (h != _NO_TOKEN) & ~boundary
        h, seg = h[keep].astype(np.uint32), seg[keep]
        n_tokens = np.bincount(seg, minlength=n_sets)
        feats, segs = self.segmented_ngrams(h, seg, n_sets)
        empty = np.flatnonzero(n_tokens == 0)
        if len(empty):
            extra = [self.string_hashes(fallbacks[i]) for i in empty]
            feats = np.concatenate([feats, *extra])
            segs = np.concatenate([segs, np.repeat(empty, [len(e) for e in extra])])
        return self.fingerprints(self.minhashes(feats, segs, n_sets)), n_tokens.tolist(), h

    def fingerprints(self, mins: np.ndarray) -> list[int]:
        """One signed 64-bit shingle per row of MinHash values."""
        if self.rows == 2:
            packed = (mins[:, 0].astype(np.uint64) << np.uint64(32)) | mins[:, 1].astype(np.uint64)
            return packed.view(np.int64).tolist()
        return [
            to_signed64(int.from_bytes(blake2b(row.tobytes(), digest_size=8).digest(), "big"))
            for row in mins
        ]

    def signature(self, h: np.ndarray) -> int | None:
        """Shingle of one token-hash sequence (None if empty): n-grams over all of it."""
        if not len(h):
            return None
        feats, segs = self.segmented_ngrams(h, np.zeros(len(h), dtype=np.int64), 1)
        return self.fingerprints(self.minhashes(feats, segs, 1))[0]

    def text_fingerprint(self, text: str) -> int | None:
        """Shingle of one text (None for a text without tokens)."""
        return self.signature(self.token_hashes(text.split()))


_FEATURES: dict[int, Shingler] = {}  # one feature hasher per n-gram size, per worker


def resemblance(a: str, b: str, ngram: int = 2) -> float:
    """Jaccard coefficient of the two texts' feature sets, the very hashes the
    shingle is computed over (`Shingler.feature_hashes`): the probability that
    one MinHash row of theirs agrees, so their shingles are equal with
    probability resemblance ** rows. Two texts without tokens resemble each
    other fully (their shingles come from their links)."""
    s = _FEATURES.get(ngram) or _FEATURES.setdefault(ngram, Shingler(ngram=ngram))
    fa, fb = np.unique(s.feature_hashes(a)), np.unique(s.feature_hashes(b))
    if not len(fa) and not len(fb):
        return 1.0
    shared = len(np.intersect1d(fa, fb, assume_unique=True))
    return shared / (len(fa) + len(fb) - shared)
