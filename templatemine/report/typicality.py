"""Kohlschütter's two classes of web text, as plain numbers (no pyspark).

Kohlschütter, "A densitometric analysis of web template content" (WWW 2009
poster), finds two fuzzy classes of text in the corpus-level histogram of
tokens per text density (density.py): C1, short navigational text (mode near
density 2), and C2, running text (mode near 12). This module holds the pure
parts of the density report (templatemine/report/density_report.py):

- term typicality, eq. (2) of section 3, over the partitions pi1 (rounded
  density <= 8) and pi2 (>= 9), limited to terms whose collection-wide
  document frequency w1u2 is at least 100;
- the fit of eq. (1), section 2: two beta distributions plus a normal
  distribution, on densities normalised by x_norm = 36, to the token share per
  density bin; a two-beta fit without the normal for comparison;
- a small PNG raster (zlib + struct), so that the report's chart exists as a
  picture without a plotting library.

Where the poster leaves a choice open, the choice is said where it is made.
"""

from __future__ import annotations

import math
import re
import struct
import zlib
from dataclasses import asdict, dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np

# ---------------------------------------------------------------- term typicality (section 3)

PARTITION_BOUNDARY = 8  # pi1: rounded density <= 8, pi2: >= 9 (section 3)
MIN_DOC_FREQ = 100  # w1u2 >= 100 (section 3), on 356,437 documents
TYPICAL = 0.05  # |eps| >= 0.05 counts as typical of a class (section 3: 20% / 42.7% of the terms)
TOP_TERMS = 10  # Table 1
TERM_PATTERN = r"\w+"  # terms: lower-cased word characters (Spark: density_report.SPARK_TERM_PATTERN)


def partition(density_bin: int, boundary: int = PARTITION_BOUNDARY) -> int:
    """1 for pi1 (rounded density <= boundary), 2 for pi2 (section 3)."""
    return 1 if density_bin <= boundary else 2


def terms(text: str) -> list[str]:
    """The terms of a block: lower-cased \\w+ words."""
    return re.findall(TERM_PATTERN, text.lower())


def term_typicality(w1: int, w2: int, n_docs: int) -> float:
    """eps(t) = log_{N+1} ((w2(t) + 1) / (w1(t) + 1)), eq. (2): w1, w2 the
    term's document frequencies in pi1 and pi2, N the number of documents.
    In [-1, +1]; negative: typical of C1 (low density), positive: of C2."""
    if n_docs < 1:
        raise ValueError("n_docs must be at least 1")
    return math.log((w2 + 1) / (w1 + 1)) / math.log(n_docs + 1)


def default_min_doc_freq(n_docs: int) -> int:
    """The poster's w1u2 >= 100 (on 356,437 documents) cannot apply to a crawl
    of a few hundred pages, where it would keep only terms of most pages. Our
    choice: 100 from 10,000 documents up, 1% of the documents below (at least 2),
    so that a term must recur before its ratio is read."""
    return max(2, min(MIN_DOC_FREQ, math.ceil(n_docs / 100)))


@dataclass(frozen=True)
class TermRow:
    term: str
    w1: int  # documents with the term in a pi1 block
    w2: int  # documents with the term in a pi2 block
    w12: int  # documents with the term anywhere (w1u2)
    epsilon: float


@dataclass
class TypicalityTable:
    """Table 1 and the counts of section 3's last paragraph."""
    n_docs: int
    min_doc_freq: int
    boundary: int
    n_terms: int  # terms with w1u2 >= min_doc_freq
    n_c1: int  # of those, eps <= -TYPICAL
    n_c2: int  # eps >= +TYPICAL
    top_c1: list[TermRow] = field(default_factory=list)  # most negative eps first
    top_c2: list[TermRow] = field(default_factory=list)  # most positive eps first

    def to_json(self) -> dict:
        return {**{k: v for k, v in asdict(self).items() if k not in ("top_c1", "top_c2")},
                "top_c1": [asdict(r) for r in self.top_c1], "top_c2": [asdict(r) for r in self.top_c2]}


def doc_freqs(blocks: Iterable[tuple[object, str, int]], boundary: int = PARTITION_BOUNDARY
              ) -> dict[str, tuple[int, int, int]]:
    """{term: (w1, w2, w1u2)} over (document, text, density bin) blocks: the
    reference of the report's Spark aggregation, for small inputs and tests."""
    seen: dict[str, tuple[set, set]] = {}
    for doc, text, b in blocks:
        part = partition(b, boundary)
        for t in set(terms(text)):
            seen.setdefault(t, (set(), set()))[part - 1].add(doc)
    return {t: (len(d1), len(d2), len(d1 | d2)) for t, (d1, d2) in seen.items()}


def typicality_table(freqs: Iterable[tuple[str, int, int, int]], n_docs: int, min_doc_freq: int,
                     boundary: int = PARTITION_BOUNDARY, top: int = TOP_TERMS) -> TypicalityTable:
    """eq. (2) for every (term, w1, w2, w1u2) with w1u2 >= min_doc_freq; the
    `top` terms of each sign (Table 1; ties by term), and the typical counts."""
    rows = [TermRow(t, w1, w2, w12, term_typicality(w1, w2, n_docs))
            for t, w1, w2, w12 in freqs if w12 >= min_doc_freq]
    c1 = sorted((r for r in rows if r.epsilon < 0), key=lambda r: (r.epsilon, r.term))
    c2 = sorted((r for r in rows if r.epsilon > 0), key=lambda r: (-r.epsilon, r.term))
    return TypicalityTable(n_docs=n_docs, min_doc_freq=min_doc_freq, boundary=boundary, n_terms=len(rows),
                           n_c1=sum(r.epsilon <= -TYPICAL for r in rows), n_c2=sum(r.epsilon >= TYPICAL for r in rows),
                           top_c1=c1[:top], top_c2=c2[:top])


# ---------------------------------------------------------------- the mixture of eq. (1) (section 2)

X_NORM = 36.0  # "x scores (densities) have been normalized by x_norm = 36 to [0:1] before fitting"
FIT_MIN_LAST_BIN = 25  # the poster's axis ends at 25: fit at least that far (fit_bins says why)
NEGLIGIBLE_SHARE = 0.01  # a component holding less of the tokens in a bin dominates nothing there


@dataclass
class MixtureFit:
    """eq. (1) fitted to the token share per rounded density bin.

    The poster's transition term (1 - c) phi_{mu,sigma^2}(e x + f) is, as a
    function of x, a normal of mean (mu - f)/e and deviation sigma/e times
    1/e: four parameters for three. Here it is N(mu, sigma) in x with weight
    (1 - c), so that c d, c (1 - d) and 1 - c are token shares (in the poster
    (1 - c) is not, it also carries the 1/e). Class 1 is the beta of lower mean
    (low density, C1). Each component is integrated over its bin
    ([k - 0.5, k + 0.5) / x_norm, the last bin open upwards when it is
    density_bin's pooled bin) rather than read at the bin's centre: the
    histogram is of rounded densities."""
    model: str  # "beta+beta+normal" (eq. 1) or "beta+beta"
    c: float  # weight of the two betas together
    d: float  # share of class 1 within them
    a1: float
    b1: float
    a2: float
    b2: float
    mu: float  # normal, in normalised x (0 .. 1); nan without it
    sigma: float
    r2: float
    rmse: float  # on token shares, as the poster's RMSE
    bins: list[int]  # the bins fitted
    x_norm: float = X_NORM
    last_open: bool = True  # the last bin also holds everything above

    @property
    def weights(self) -> dict[str, float]:
        """Token shares of class 1, class 2 and the normal transition."""
        return {"class1": self.c * self.d, "class2": self.c * (1 - self.d), "normal": 1 - self.c}

    def components(self) -> dict[str, np.ndarray]:
        """Expected token share per fitted bin of each weighted component, and "fit"."""
        b = np.asarray(self.bins)
        lo, hi = bin_edges(b, self.x_norm, self.last_open)
        w = self.weights
        comp = {"class1": w["class1"] * beta_mass(self.a1, self.b1, lo, hi),
                "class2": w["class2"] * beta_mass(self.a2, self.b2, lo, hi),
                "normal": w["normal"] * normal_mass(self.mu, self.sigma, lo, hi) if w["normal"] > 0
                else np.zeros(len(b))}
        comp["fit"] = comp["class1"] + comp["class2"] + comp["normal"]
        return comp

    @property
    def modes(self) -> dict[str, float | None]:
        """The modes of the two classes, in density units (None when a beta has
        no interior mode), and the normal's mean."""
        return {"class1": beta_mode(self.a1, self.b1) * self.x_norm if beta_mode(self.a1, self.b1) is not None
                else None,
                "class2": beta_mode(self.a2, self.b2) * self.x_norm if beta_mode(self.a2, self.b2) is not None
                else None,
                "normal": None if math.isnan(self.mu) else self.mu * self.x_norm}

    def to_json(self) -> dict:
        d = asdict(self)
        d.update(weights=self.weights, modes=self.modes,
                 sigma_density=None if math.isnan(self.sigma) else self.sigma * self.x_norm)
        return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}


def beta_mode(a: float, b: float) -> float | None:
    return (a - 1) / (a + b - 2) if a > 1 and b > 1 else None


def bin_edges(bins: np.ndarray, x_norm: float = X_NORM, last_open: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A rounded density k holds densities in [k - 0.5, k + 0.5), normalised."""
    lo = (np.asarray(bins, dtype=float) - 0.5) / x_norm
    hi = (np.asarray(bins, dtype=float) + 0.5) / x_norm
    if last_open and len(hi):
        hi[-1] = np.inf
    return lo, hi


def beta_mass(a: float, b: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    from scipy.stats import beta

    return beta.cdf(np.clip(hi, 0, 1), a, b) - beta.cdf(np.clip(lo, 0, 1), a, b)


def normal_mass(mu: float, sigma: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    from scipy.stats import norm

    return norm.cdf(hi, mu, sigma) - norm.cdf(lo, mu, sigma)


def fit_bins(hist: Mapping[int, float], max_bin: int) -> list[int]:
    """Bins 1 .. the last non-empty one, padded to at least FIT_MIN_LAST_BIN
    and at most max_bin. Bin 0 cannot occur (a block with tokens has density
    >= 1).

    The padding is the poster's axis: Figure 1 runs from density 0 to 25, and
    its R^2 = 0.998 and RMSE = 0.0021 (section 2), which the report sets
    beside ours, are read over that range; a run whose densities end at 17
    is fitted over the same 25 bins, so that the two pairs of numbers measure
    the same thing. The cost, said on the page: the empty bins are measured
    zeros that the fit predicts easily, so they raise R^2 (and lower RMSE)
    against a fit to the last non-empty bin only. They also keep the mixture
    from putting tokens where none was measured, which a fit ending at the
    last non-empty bin would not see."""
    last = max([b for b, v in hist.items() if v > 0], default=0)
    return list(range(1, min(max_bin, max(last, FIT_MIN_LAST_BIN)) + 1))


def padded_bins(fit: MixtureFit, hist: Mapping[int, float]) -> tuple[int, int] | None:
    """(first, last) of the fitted bins past the last non-empty one (fit_bins'
    padding to the poster's axis), None when the fit ends at measured tokens."""
    last = max([b for b, v in hist.items() if v > 0], default=0)
    return (last + 1, fit.bins[-1]) if fit.bins and last < fit.bins[-1] else None


def _shares(hist: Mapping[int, float], bins: list[int]) -> np.ndarray:
    y = np.array([float(hist.get(b, 0)) for b in bins])
    total = y.sum()
    return y / total if total > 0 else y


def _moments_beta(y: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """Method-of-moments beta for a histogram y over normalised centres x."""
    s = y.sum()
    if s <= 0:
        return 2.0, 20.0
    m = float(np.clip((y * x).sum() / s, 0.01, 0.99))
    v = float(max((y * (x - m) ** 2).sum() / s, 1e-4))
    k = max(m * (1 - m) / v - 1, 2.0)
    return max(m * k, 0.6), max((1 - m) * k, 0.6)


def _unpack(theta: np.ndarray, with_normal: bool) -> tuple:
    if with_normal:
        c, d, la1, lb1, la2, lb2, mu, ls = theta
        return c, d, *np.exp([la1, lb1, la2, lb2]), mu, math.exp(ls)
    d, la1, lb1, la2, lb2 = theta
    return 1.0, d, *np.exp([la1, lb1, la2, lb2]), float("nan"), float("nan")


def _predict(theta, with_normal: bool, lo, hi) -> np.ndarray:
    c, d, a1, b1, a2, b2, mu, sigma = _unpack(theta, with_normal)
    y = c * (d * beta_mass(a1, b1, lo, hi) + (1 - d) * beta_mass(a2, b2, lo, hi))
    if with_normal:
        y = y + (1 - c) * normal_mass(mu, sigma, lo, hi)
    return y


def _starts(y: np.ndarray, bins: list[int], x_norm: float, boundary: int, with_normal: bool) -> list[np.ndarray]:
    """Deterministic starting points: moments of the two partitions (section
    3's pi1 / pi2 as a first guess of C1 / C2), the normal between them."""
    x = np.asarray(bins, dtype=float) / x_norm
    low = np.asarray(bins) <= boundary
    a1, b1 = _moments_beta(np.where(low, y, 0), x)
    a2, b2 = _moments_beta(np.where(low, 0, y), x)
    d0 = float(np.clip(y[low].sum() / max(y.sum(), 1e-12), 0.05, 0.95))
    betas = np.log([a1, b1, a2, b2])
    if not with_normal:
        return [np.r_[d, betas] for d in (d0, 0.5)]
    starts = []
    for c in (0.9, 0.7, 0.5):
        for mu in (boundary + 0.5, boundary - 2.5, boundary + 3.5):
            starts.append(np.r_[c, d0, betas, mu / x_norm, math.log(2.5 / x_norm)])
    return starts


FIT_CHUNK = 100  # evaluations per solver run (fit_mixture)
FIT_MAX_CHUNKS = 36  # runs more for the best start at most
FIT_GAIN = 1e-4  # a run that lowers the cost by less than this share ends the fit


def fit_mixture(hist: Mapping[int, float], *, with_normal: bool = True, max_bin: int = 40,
                x_norm: float = X_NORM, boundary: int = PARTITION_BOUNDARY) -> MixtureFit | None:
    """Least-squares fit of eq. (1) (with_normal) or of two betas alone to the
    token share per rounded density bin, {bin: tokens}; None without tokens.
    Several deterministic starts, the best kept (the surface has local minima)."""
    from scipy.optimize import least_squares

    bins = fit_bins(hist, max_bin)
    y = _shares(hist, bins)
    if y.sum() <= 0:
        return None
    lo, hi = bin_edges(np.asarray(bins), x_norm, last_open=bins[-1] == max_bin)
    la, lb = math.log(0.5), math.log(5000.0)
    if with_normal:
        bounds = ([0, 0, la, la, la, la, 0, math.log(0.5 / x_norm)], [1, 1, lb, lb, lb, lb, 1, math.log(0.5)])
    else:
        bounds = ([0, la, la, la, la], [1, lb, lb, lb, lb])
    def solve(start):
        return least_squares(lambda t: _predict(t, with_normal, lo, hi) - y, start, bounds=bounds,
                             method="trf", x_scale="jac", max_nfev=FIT_CHUNK)

    best = None
    for start in _starts(y, bins, x_norm, boundary, with_normal):
        res = solve(np.clip(start, np.asarray(bounds[0]) + 1e-9, np.asarray(bounds[1]) - 1e-9))
        if best is None or res.cost < best.cost:
            best = res
    # the best start, on from where it stopped: a solver started again (its trust region
    # and scaling afresh) converges in a few chunks where one run of 4,000 evaluations
    # crawled along a flat valley (a beta narrowing towards its bound) and ended unconverged,
    # 9 starts taking 100 s on one histogram (found in review on 2026-11-28)
    for _ in range(FIT_MAX_CHUNKS):
        if best.status != 0:  # converged (or stopped for a reason other than the budget)
            break
        more = solve(best.x)
        done = more.cost >= best.cost * (1 - FIT_GAIN)
        best = more if more.cost < best.cost else best
        if done:
            break
    return _as_fit(best.x, with_normal, y, lo, hi, bins, x_norm, bins[-1] == max_bin)


def _as_fit(theta, with_normal, y, lo, hi, bins, x_norm, last_open) -> MixtureFit:
    c, d, a1, b1, a2, b2, mu, sigma = _unpack(theta, with_normal)
    if a1 / (a1 + b1) > a2 / (a2 + b2):  # class 1 is the low-density one
        a1, b1, a2, b2, d = a2, b2, a1, b1, 1 - d
    resid = _predict(theta, with_normal, lo, hi) - y
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float((resid ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")
    return MixtureFit(model="beta+beta+normal" if with_normal else "beta+beta", c=float(c), d=float(d),
                      a1=float(a1), b1=float(b1), a2=float(a2), b2=float(b2), mu=float(mu), sigma=float(sigma),
                      r2=r2, rmse=float(np.sqrt((resid ** 2).mean())), bins=list(bins), x_norm=x_norm,
                      last_open=last_open)


def measured_modes(hist: Mapping[int, float], boundary: int = PARTITION_BOUNDARY) -> dict[str, int | None]:
    """The fullest bin of pi1 and of pi2 (the poster sees modes at 2 and 12)."""
    def peak(keep):
        cands = [(v, -b) for b, v in hist.items() if keep(b) and v > 0]
        return -max(cands)[1] if cands else None
    return {"pi1": peak(lambda b: b <= boundary), "pi2": peak(lambda b: b > boundary)}


def class_crossing(fit: MixtureFit) -> float | None:
    """The density where the fitted class 2 starts to carry more tokens than
    class 1 (a boundary read off the fit, to set beside pi1 / pi2's 8 | 9)."""
    xs = np.arange(1.0, fit.bins[-1] + 0.001, 0.05)
    lo, hi = (xs - 0.025) / fit.x_norm, (xs + 0.025) / fit.x_norm
    w = fit.weights
    diff = w["class2"] * beta_mass(fit.a2, fit.b2, lo, hi) - w["class1"] * beta_mass(fit.a1, fit.b1, lo, hi)
    above = np.nonzero(diff > 0)[0]
    return None if not len(above) else float(xs[above[0]])


def normal_dominates(fit: MixtureFit, min_share: float = NEGLIGIBLE_SHARE) -> tuple[int, int] | None:
    """First and last bin of the contiguous run, around the normal's own peak
    bin, where the normal carries more tokens than each beta (so more than a
    third of the bin's fitted total) and at least `min_share` of all tokens;
    None when the peak bin itself is not so dominated (or there is no normal).

    The poster reads off Figure 1 that "for 5 <= rho <= 10 the normal
    distribution dominates" (section 2): one stretch of densities, where the
    transition between C1 and C2 is the main component. Hence one run around
    the normal's peak, not the first and last bin it wins anywhere (a class
    winning the bins in between cut that stretch in two), and the share: in a
    far tail every component is ~0 and whichever decays slowest "wins" (a
    normal of 1e-10 of the tokens dominated bins 14 to 25; found in review)."""
    comp = fit.components()
    normal = comp["normal"]
    if fit.weights["normal"] <= 0 or not len(normal):
        return None
    wins = (normal > np.maximum(comp["class1"], comp["class2"])) & (normal >= min_share)
    peak = int(np.argmax(normal))
    if not wins[peak]:
        return None
    lo = hi = peak
    while lo > 0 and wins[lo - 1]:
        lo -= 1
    while hi < len(wins) - 1 and wins[hi + 1]:
        hi += 1
    return fit.bins[lo], fit.bins[hi]


# ---------------------------------------------------------------- PNG raster

# 5x7 glyphs, one 5-bit row each, top to bottom; text is drawn upper-cased
_GLYPHS = {
    "0": (0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E), "1": (0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E),
    "2": (0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F), "3": (0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E),
    "4": (0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02), "5": (0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E),
    "6": (0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E), "7": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08),
    "8": (0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E), "9": (0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C),
    "A": (0x0E, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11), "B": (0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E),
    "C": (0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E), "D": (0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C),
    "E": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F), "F": (0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10),
    "G": (0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F), "H": (0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11),
    "I": (0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E), "J": (0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C),
    "K": (0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11), "L": (0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F),
    "M": (0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11), "N": (0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11),
    "O": (0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), "P": (0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10),
    "Q": (0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D), "R": (0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11),
    "S": (0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E), "T": (0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04),
    "U": (0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E), "V": (0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04),
    "W": (0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A), "X": (0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11),
    "Y": (0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04), "Z": (0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F),
    " ": (0,) * 7, ".": (0, 0, 0, 0, 0, 0x0C, 0x0C), ",": (0, 0, 0, 0, 0x0C, 0x04, 0x08),
    ":": (0, 0x0C, 0x0C, 0, 0x0C, 0x0C, 0), "-": (0, 0, 0, 0x1F, 0, 0, 0), "+": (0, 0x04, 0x04, 0x1F, 0x04, 0x04, 0),
    "=": (0, 0, 0x1F, 0, 0x1F, 0, 0), "%": (0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03),
    "/": (0, 0x01, 0x02, 0x04, 0x08, 0x10, 0), "(": (0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02),
    ")": (0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08), "<": (0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02),
    ">": (0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08), "?": (0x0E, 0x11, 0x01, 0x02, 0x04, 0, 0x04),
    "^": (0x04, 0x0A, 0x11, 0, 0, 0, 0), "|": (0x04,) * 7,
}
_FOLD = {"\u2264": "<", "\u2265": ">", "\u00b2": "^", "\u2013": "-", "\u2014": "-", "\u00d7": "X"}
GLYPH_W, GLYPH_H = 6, 8  # advance and line height at scale 1 (5x7 and one pixel apart)

Color = tuple[int, int, int]


def hex_color(value: str) -> Color:
    value = value.lstrip("#")
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


class Canvas:
    """An RGB raster with the few primitives the density chart needs."""

    def __init__(self, width: int, height: int, background: Color = (255, 255, 255)):
        if width < 1 or height < 1:
            raise ValueError("empty canvas")
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def get(self, x: int, y: int) -> Color:
        i = 3 * (y * self.width + x)
        return tuple(self.pixels[i:i + 3])  # type: ignore[return-value]

    def set(self, x: int, y: int, color: Color) -> None:
        if 0 <= x < self.width and 0 <= y < self.height:
            i = 3 * (y * self.width + x)
            self.pixels[i:i + 3] = bytes(color)

    def rect(self, x0: float, y0: float, x1: float, y1: float, color: Color) -> None:
        """Fill [x0, x1) x [y0, y1), clipped, in any corner order."""
        xa, xb = sorted((int(round(x0)), int(round(x1))))
        ya, yb = sorted((int(round(y0)), int(round(y1))))
        xa, xb, ya, yb = max(xa, 0), min(xb, self.width), max(ya, 0), min(yb, self.height)
        if xa >= xb:
            return
        row = bytes(color) * (xb - xa)
        for y in range(ya, yb):
            i = 3 * (y * self.width + xa)
            self.pixels[i:i + len(row)] = row

    def line(self, x0: float, y0: float, x1: float, y1: float, color: Color, width: int = 1) -> None:
        """A straight line, `width` pixels thick (square pen), stepped along its longer axis."""
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        n = int(math.ceil(steps))
        half = (width - 1) / 2
        for k in range(n + 1):
            t = k / n
            x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
            self.rect(x - half, y - half, x - half + width, y - half + width, color)

    def polyline(self, points: Sequence[tuple[float, float]], color: Color, width: int = 2) -> None:
        for (xa, ya), (xb, yb) in zip(points, points[1:]):
            self.line(xa, ya, xb, yb, color, width)

    def text(self, x: float, y: float, s: str, color: Color = (0, 0, 0), scale: int = 1,
             anchor: str = "start") -> None:
        """Text in the 5x7 font, top-left at (x, y) (anchor "middle"/"end" shift it)."""
        s = "".join(_FOLD.get(ch, ch) for ch in s.upper())
        w = text_width(s, scale)
        x = x - (w / 2 if anchor == "middle" else w if anchor == "end" else 0)
        for k, ch in enumerate(s):
            rows = _GLYPHS.get(ch, _GLYPHS["?"])
            for r, bits in enumerate(rows):
                for c in range(5):
                    if bits & (0x10 >> c):
                        px, py = x + (k * GLYPH_W + c) * scale, y + r * scale
                        self.rect(px, py, px + scale, py + scale, color)

    def png(self) -> bytes:
        return png_bytes(self.width, self.height, self.pixels)


def text_width(s: str, scale: int = 1) -> int:
    return max(len(s) * GLYPH_W - 1, 0) * scale


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(width: int, height: int, rgb: bytes | bytearray) -> bytes:
    """An 8-bit truecolour PNG (ISO/IEC 15948): signature, IHDR, one IDAT of
    the rows each behind filter byte 0, IEND."""
    if len(rgb) != 3 * width * height:
        raise ValueError(f"expected {3 * width * height} bytes of RGB, got {len(rgb)}")
    stride = 3 * width
    raw = b"".join(b"\x00" + bytes(rgb[y * stride:(y + 1) * stride]) for y in range(height))
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND", b""))
