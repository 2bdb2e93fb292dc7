"""Regularised isotonic regression on a tree, the smoothing step of page-level
template detection.

D. Chakrabarti, R. Kumar and K. Punera, "Page-level template detection via
isotonic smoothing", WWW 2007, section "Smoothing via Regularized Isotonic
Regression" (slides, "Templateness monotonicity" and the two smoothing
slides). A classifier gives every DOM node a raw "templateness" score x_i in
[0, 1], each node in isolation, so the scores need not respect the property
"a node is template if and only if all its children are". The smoothed scores
y_i enforce it: for i the parent of j, y_i <= y_j (a parent is at most as
template as each child), and minimise

    sum_i |x_i - y_i|  +  c * (number of sections)

where c >= 0 trades fidelity to the classifier against fragmentation.

Sections, not distinct values. The slide writes "# distinct y_i's" but then
calls the result "sections": "Section = adjacent nodes with same y_i values".
We count sections: maximal connected sets of nodes (adjacency = parent/child)
with equal y. In a tree that number is 1 + the number of parent-child edges
whose two y differ, which a bottom-up DP can charge edge by edge; the literal
global count of distinct values is not local (two far-apart regions with the
same value would share one charge, so a subtree's cost would depend on which
values are used elsewhere) and would need the set of used values in the DP
state. Sections are also the output the paper uses (regions of the page), and
sections >= distinct values, so this penalty is never weaker; on repeated
sibling boxes it is much stronger (twelve link items at one value are twelve
sections and one value), which is how a section of many small template-like
nodes can outvote the paragraphs beside it where the seed's count would keep
them (model._judge_guarded's guard; found in review, 2026-11-28). The seed's
count could be solved exactly too, by threshold decomposition: y >= V[j] is a
set closed under children for every j, the L1 cost splits over the gaps of V,
a run of gaps sharing one set is a min-weight closure (O(n)), and the sets of
successive runs nest (their weights per unit of gap are ordered), so a DP over
runs of V's gaps is exact in O(k^2 n). Not built (docs/pagelevel.md, "What is
missing or weak").

Candidate values. The slides' lemma: for L1 each optimal y_i can be taken
among the x_j. It carries over to the section penalty: fix a solution's
sections; the L1 part is piecewise linear in the section values under the
order constraints, so it is minimised at a vertex, where every group of equal
values contains a value pinned at some x_j; moving there keeps monotonicity and
can only merge adjacent sections, never split one. So y ranges over
V = sorted distinct x (k <= n values).

The DP (the slides quote O(n^2 log n); this one is O(n k) time and memory).
best[v][a] = least cost of v's subtree given y_v = V[a]: the |x - y| of the
subtree plus c for every section started strictly below v. A child w may keep
v's value (same section) or take a larger one (a new section):

    contribution_w(a) = min(best[w][a], c + min_{b > a} best[w][b])
    best[v][a]        = |x_v - V[a]| + sum_{children w} contribution_w(a)

and the optimum is c (the root's section) + min_a best[root][a]. The strict
suffix minima make each node O(k); nodes are processed a whole depth level
at a time (numpy rows), so the Python loop runs once per level, not per node.
y is recovered top-down.

Ties (deterministic, independent of node numbering): among choices whose
costs agree within a relative 1e-12 (float noise on mathematically equal
sums), prefer the least cost, then continuing the parent's section, then the
smaller value; at the root, the smaller value. With c larger than n times the
range of x everything is one section at the lower median of x.

Speed lever: k is the number of distinct scores. Rounding scores to a grid
(0.05 gives k <= 22 with `model._on_grid`'s value under the threshold) bounds
time and memory to O(22 n) whatever the page size;
see the benchmark under __main__.

Compiled DP. For a tree numbered parent-first (`parent[0] == -1`,
`parent[i] < i`: page mode's preorder node tables), the same DP runs in C
(pagelevel/_isotonic.pyx, built by setup.py like the compiled DOM walk) when
it is built and agrees with the numpy levels on probe trees at import
(`COMPILED_DP_ERROR` says why not otherwise). The numpy DP makes about ten
array calls per depth level, which on news pages cost more than the
arithmetic; the C loops make the same choices (a unit test holds them equal
on random trees, ties included).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TIE_RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class Smoothing:
    """y: smoothed score per node; sections: section id per node, 0..n_sections-1
    numbered in order of each section's first (lowest-numbered) node; cost: the
    objective sum |x - y| + c * n_sections of this y."""
    y: np.ndarray
    sections: np.ndarray
    n_sections: int
    cost: float


def _tol(v):
    return TIE_RTOL * (1.0 + np.abs(v))


def _levels(parent: Sequence[int], n: int) -> tuple[np.ndarray, list[np.ndarray]]:
    """Validate the parent array; return it and the depth levels, each level's
    nodes grouped contiguously by parent (breadth-first order)."""
    p = np.asarray(parent)
    if p.ndim != 1 or p.shape[0] != n:
        raise ValueError(f"parent has shape {p.shape}, x has {n} nodes")
    if not np.issubdtype(p.dtype, np.integer):
        raise ValueError(f"parent indices must be integers, got dtype {p.dtype}")
    p = p.astype(np.int64)
    if ((p < -1) | (p >= n)).any():
        raise ValueError("parent index out of range [-1, n)")
    roots = np.flatnonzero(p == -1)
    if roots.size != 1:
        raise ValueError(f"need exactly one root (parent -1), got {roots.size}")
    children: list[list[int]] = [[] for _ in range(n)]
    for i, q in enumerate(p.tolist()):
        if q >= 0:
            children[q].append(i)
    levels, level, seen = [], [int(roots[0])], 0
    while level:
        levels.append(np.array(level, dtype=np.int64))
        seen += len(level)
        level = [w for v in level for w in children[v]]
    if seen != n:
        raise ValueError("parent array has a cycle: some nodes do not reach the root")
    return p, levels


def _strict_suffix_min(b: np.ndarray) -> np.ndarray:
    """s[:, a] = min(b[:, a+1:]) (inf for the last column)."""
    s = np.empty_like(b)
    s[:, -1] = np.inf
    if b.shape[1] > 1:
        s[:, :-1] = np.minimum.accumulate(b[:, :0:-1], axis=1)[:, ::-1]
    return s


def _sections(p: np.ndarray, levels: list[np.ndarray], y: np.ndarray) -> tuple[np.ndarray, int]:
    head = np.arange(p.shape[0])                      # the top node of each node's section
    for level in levels[1:]:
        q = p[level]
        same = y[level] == y[q]
        head[level[same]] = head[q[same]]
    _, first, inverse = np.unique(head, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inverse.ravel()], int(first.shape[0])


def _checked(parent, x, c) -> tuple[np.ndarray, float]:
    """x as float64 and c as float, refused (ValueError) unless x is one row of
    finite scores and c finite and >= 0 (the parent array is _levels' to check;
    here only that an empty x has an empty one)."""
    xs = np.asarray(x, dtype=np.float64)
    if xs.ndim != 1:
        raise ValueError(f"x must be one-dimensional, got shape {xs.shape}")
    c = float(c)
    if not math.isfinite(c) or c < 0:
        raise ValueError(f"c must be finite and >= 0, got {c}")
    if not np.isfinite(xs).all():
        raise ValueError("x has non-finite scores")
    if xs.shape[0] == 0 and len(parent) != 0:
        raise ValueError(f"parent has {len(parent)} entries, x has 0 nodes")
    return xs, c


def smooth(parent: Sequence[int], x: Sequence[float], c: float) -> Smoothing:
    """Smooth raw scores x over the tree given by parent (parent[i] the parent of
    node i, -1 for the single root; any node order) with section penalty c."""
    xs, c = _checked(parent, x, c)
    n = xs.shape[0]
    if n == 0:
        return Smoothing(np.empty(0), np.empty(0, dtype=np.int64), 0, 0.0)
    values = np.unique(xs)
    if _compiled is not None:
        p = np.asarray(parent)
        if (p.ndim == 1 and p.shape[0] == n and np.issubdtype(p.dtype, np.integer) and p[0] == -1
                and (p[1:] >= 0).all() and (p[1:] < np.arange(1, n)).all()):
            idx, sections, n_sections = _compiled.dp(np.ascontiguousarray(p, dtype=np.int64),
                                                     np.ascontiguousarray(xs), values, c)
            return _result(xs, values[idx], sections, n_sections, c)
    p, levels = _levels(parent, n)
    k = values.shape[0]
    best = np.zeros((n, k))           # children's contributions, then best[v]
    for level in reversed(levels):
        b = best[level] + np.abs(xs[level, None] - values[None, :])
        best[level] = b
        if level is levels[0]:
            break
        contrib = np.minimum(b, c + _strict_suffix_min(b))
        q = p[level]
        starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))  # a level is grouped by parent
        best[q[starts]] += np.add.reduceat(contrib, starts, axis=0)

    idx = np.empty(n, dtype=np.int64)
    root = levels[0][0]
    m = best[root].min()
    idx[root] = int(np.argmax(best[root] <= m + _tol(m)))
    columns = np.arange(k)
    for level in levels[1:]:
        b = best[level]
        a = idx[p[level]]
        rows = np.arange(level.shape[0])
        stay = b[rows, a]
        s = _strict_suffix_min(b)[rows, a]
        keep = stay <= c + s + _tol(c + s)
        choice = np.argmax((b <= (s + _tol(s))[:, None]) & (columns[None, :] > a[:, None]), axis=1)
        idx[level] = np.where(keep, a, choice)

    y = values[idx]
    sections, n_sections = _sections(p, levels, y)
    return _result(xs, y, sections, n_sections, c)


def smooth_values(parent: Sequence[int], x: Sequence[float], c: float) -> Smoothing:
    """The seed's own objective, sum |x - y| + c * (number of distinct y), with
    the same constraint (a parent at most each child), solved exactly; `smooth`
    charges sections instead (module docstring). The result's cost is this
    objective's; sections are still the connected regions of equal y.

    Threshold decomposition. With V the sorted distinct x (the lemma: optimal y
    among them) and gap j between V[j-1] and V[j], U_j = {i : y_i >= V[j]} is
    closed under children, U_1 ⊇ U_2 ⊇ ..., and
        sum_i |x_i - y_i| = sum_j (V[j] - V[j-1]) * |U_j △ {i : x_i >= V[j]}|.
    The number of distinct y is 1 + the number of runs of gaps whose U differs
    from the run before (the first run holds everything, the last nothing). A
    run of gaps a..b sharing one U costs a min-weight closure with node weight
    w_i = V[b] + V[a-1] - 2 V[clip(r_i, a-1, b)] (r_i: x_i's index in V), one
    bottom-up pass; for a later run the weights per unit of gap are larger
    node by node, so the runs' largest minimisers nest (the closed sets are a
    lattice), and choosing runs independently is exact. A DP over where runs
    end then gives the optimum: O(k^2 n) for k distinct x, against `smooth`'s
    O(k n); checked against brute force in tests/unit/test_isotonic.py.
    Ties (relative 1e-12): fewer runs first, then the lower values; a node is
    in a run's set when in and out cost the same (the largest minimiser)."""
    xs, c = _checked(parent, x, c)
    n = xs.shape[0]
    if n == 0:
        return Smoothing(np.empty(0), np.empty(0, dtype=np.int64), 0, 0.0)
    p, levels = _levels(parent, n)
    values, r = np.unique(xs, return_inverse=True)
    r = r.ravel()
    k = values.shape[0]
    # every run a..b of gaps (1 <= a <= b <= k-1), as columns
    a_s, b_s = (np.array(t, dtype=np.int64) for t in zip(*[(a, b) for a in range(1, k) for b in range(a, k)])) \
        if k > 1 else (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    m = np.clip(r[:, None], a_s[None, :] - 1, b_s[None, :])                 # (n, runs)
    vm, lo, hi = values[m], values[a_s - 1][None, :], values[b_s][None, :]
    base = (vm - lo).sum(axis=0)                                              # every node out of U
    sub = hi + lo - 2 * vm                                                    # subtree weight, then summed
    below = np.zeros_like(sub)                                                # best of the children's subtrees
    for level in reversed(levels[1:]):
        q = p[level]
        starts = np.flatnonzero(np.concatenate(([True], q[1:] != q[:-1])))  # a level is grouped by parent
        sub[q[starts]] += np.add.reduceat(sub[level], starts, axis=0)
        below[q[starts]] += np.add.reduceat(np.minimum(sub[level], below[level]), starts, axis=0)
    root = levels[0][0]
    run_cost = base + np.minimum(sub[root], below[root])
    cost_of = {(int(a), int(b)): float(v) for a, b, v in zip(a_s, b_s, run_cost)}
    under = [float(np.maximum(values[j] - xs, 0).sum()) for j in range(k)]  # all y = V[j]: below it
    over = [float(np.maximum(xs - values[j], 0).sum()) for j in range(k)]   # ... and above it
    best, back = [0.0] * k, [0] * k    # best[j]: runs up to gap j; back[j]: where its last run starts (0: all)
    for j in range(k):
        best[j], back[j] = under[j], 0
        for a in range(1, j + 1):
            v = best[a - 1] + c + cost_of[(a, j)]
            if v < best[j] - _tol(best[j]):
                best[j], back[j] = v, a
    ends = [best[j] + over[j] for j in range(k)]
    j = int(np.argmax(np.array(ends) <= min(ends) + _tol(min(ends))))
    runs = []
    while back[j]:
        runs.append((back[j], j))
        j = back[j] - 1
    y = np.full(n, values[j])
    col = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(a_s, b_s))}
    for a, b in reversed(runs):        # lower runs first: a higher run's set lies inside a lower one's
        i = col[(a, b)]
        inside = np.zeros(n, dtype=bool)
        inside[root] = sub[root, i] <= below[root, i] + _tol(below[root, i])
        for level in levels[1:]:
            inside[level] = inside[p[level]] | (sub[level, i] <= below[level, i] + _tol(below[level, i]))
        y[inside] = values[b]
    sections, n_sections = _sections(p, levels, y)
    y.flags.writeable = False
    sections.flags.writeable = False
    return Smoothing(y, sections, n_sections, math.fsum(np.abs(xs - y).tolist()) + c * np.unique(y).shape[0])


def _result(xs: np.ndarray, y: np.ndarray, sections: np.ndarray, n_sections: int, c: float) -> Smoothing:
    y.flags.writeable = False
    sections.flags.writeable = False
    cost = math.fsum(np.abs(xs - y).tolist()) + c * n_sections
    return Smoothing(y, sections, n_sections, cost)


def _numpy_smooth(parent, x, c: float) -> Smoothing:
    """`smooth` with the numpy levels whatever is built (the reference the C DP is checked against)."""
    global _compiled
    was, _compiled = _compiled, None
    try:
        return smooth(parent, x, c)
    finally:
        _compiled = was


def _setup_compiled():
    """The compiled DP (pagelevel/_isotonic.pyx), checked against the numpy DP
    on probe trees; None (numpy) when it is not built or a probe differs."""
    if os.environ.get("TEMPLATEMINE_PURE_PYTHON"):
        return None, "disabled by TEMPLATEMINE_PURE_PYTHON"
    try:
        from templatemine.pagelevel import _isotonic
    except ImportError as e:
        return None, f"not built ({e})"
    global _compiled
    rng = np.random.default_rng(7)
    try:
        for n, c in ((1, 0.5), (2, 0.0), (40, 0.3), (200, 0.5), (200, 2.0)):
            parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)], dtype=np.int64)
            x = np.round(rng.random(n) * 20) / 20
            want = _numpy_smooth(parent, x, c)
            _compiled = _isotonic
            try:
                got = smooth(parent, x, c)
            finally:
                _compiled = None
            if not (np.array_equal(got.y, want.y) and np.array_equal(got.sections, want.sections)
                    and got.n_sections == want.n_sections):
                raise RuntimeError(f"the compiled DP differs from numpy's on a probe tree of {n} nodes, c={c}")
    except Exception as e:
        return None, f"disabled: {type(e).__name__}: {e}"
    return _isotonic, ""


def _benchmark() -> None:
    import time
    rng = np.random.default_rng(0)
    print("n      k      shape     ms (best of 5)")
    for n in (100, 300, 1000):
        for shape in ("random", "deep"):
            if shape == "random":     # random recursive tree, depth ~ e ln n
                parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
            else:                     # each node hangs under one of the last 3: depth ~ n/2
                parent = [-1] + [int(rng.integers(max(0, i - 3), i)) for i in range(1, n)]
            raw = rng.random(n)
            for label, x in (("k=n", raw), ("grid .05", np.round(raw * 20) / 20)):
                k = np.unique(x).shape[0]
                times = []
                for _ in range(5):
                    t = time.perf_counter()
                    smooth(parent, x, 0.3)
                    times.append(time.perf_counter() - t)
                print(f"{n:<6} {k:<6} {shape:<9} {1000 * min(times):8.2f}   ({label})")


# the compiled DP, or None (numpy); COMPILED_DP_ERROR says why not
_compiled = None
_compiled, COMPILED_DP_ERROR = _setup_compiled()

if __name__ == "__main__":
    _benchmark()
