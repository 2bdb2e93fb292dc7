"""Greedy MDL frontier segmentation of a hub page's DOM tree (Chakrabarti 2001).

S. Chakrabarti, "Integrating the Document Object Model with hyperlinks for
enhanced topic distillation and information extraction", WWW 2001, section 3.
A mixed hub gives only a subtree of its page to links on the topic. After the
h <- E a step of HITS every link leaf has a hub score (the authority of its
target); instead of adding all of them up into one page score (HITS) or
keeping them apart (MicroHITS), we cut the page's DOM tree along a frontier F
and, below each frontier node, pool the leaves' scores and hand the pool back
to every leaf (the paper's iteration pseudo-code, section 4):

    for each frontier node v in F:  h(v) = sum_{w in L_v} h(w);  for w in L_v: h(w) <- h(v)

so authority spreads from the good links of a relevant list to its other
links, but not into the navigation bar next to it.

The tree. A page is given as one node path per link leaf, from the page root
down to and including the leaf itself; the internal nodes are the distinct
proper prefixes and a node's children are the distinct next keys below it,
in first-seen order (document order when the leaves are passed in document
order).

The model (section 3). Hub scores under node w are taken to be drawn from an
exponential distribution Q_w with mean m_w, fixed at its maximum likelihood
value, the mean of the scores of the leaves L_w under w ("a simple
approximation ... first minimize the data encoding cost for H_v by picking
... the ML parameters, thus fix Q_v, then evaluate KL(Q_u;Q_v)"). m_w is
floored at the quantum delta: after discretisation a mean below one quantum
cannot be told from it (and an all-zero subtree would otherwise have m = 0).

Data cost (the Shannon bound the paper states before equation (3); the
formula is missing from our copy of the text). Scores are discretised with
quantum delta, so a score h costs -log2(delta * f(h)) bits with
f(h) = (1/m) exp(-h/m), and the n scores H_w of a subtree with sum S_w cost

    D(H_w | m) = sum_h [log2(m/delta) + (h/m) log2 e] = n log2(m/delta) + (S_w/m) log2 e

bits (each term >= 0 because m >= delta). Only n and S_w are needed.

Model cost (the KL distance before equation (3)). Specialising the parent's
Q_u (mean m_u) to a child's Q_v (mean m_v) costs KL(Q_u;Q_v), which we read
as D(Q_u || Q_v); for exponentials, in bits,

    KL(m_u; m_v) = [ln(m_v/m_u) + m_u/m_v - 1] / ln 2.

Greedy expansion (equations (3) and (4) are a knapsack-hard frontier search;
the paper uses "the obvious greedy expansion strategy": "initialize our
frontier with the global root and keep picking a node u from the frontier to
see if expanding it to its immediate children {v} will result in a reduction
in code length"). Starting at the page root, for a node u with children {v}:

    prune(u)  = D(H_u | m_u)
    expand(u) = sum_v [KL(m_u; m_v) + D(H_v | m_v)]  (+ node_bits per child v)

and u is
- kept whole in the frontier if it is a leaf (a leaf is never expanded);
- kept whole ("pruned") if every leaf under it scores 0: nothing to spread;
- expanded if exactly one child has a positive total score, or if
  expand(u) <= prune(u): the paper's conservative policy, "If a DOM node has
  only one child with a positive hub score, or if there is a tie in the cost
  of expanding vs. pruning, we expand the node, thereby pushing the frontier
  down and preventing the leaf hub score from spreading out to possibly
  irrelevant outlinks". A tie is equality up to a relative 1e-12 (rounding in
  the sums of the two sides);
- otherwise pruned: it joins the frontier.
An expanded node is replaced by its children, each considered in turn.
Because every decision is local the result does not depend on the order.

Frontier bits (ours). With ML means and single-link children the two costs
differ only by third-order terms (a list of links scoring 0.9 x 7 and 1.7
expands by 0.07 bits, 1.0 x 7 and 1.7 by 0.04; 1.1 x 7 and 0.3 prunes by 0.9 bits), so inside the
iteration a relevant list flips between "pooled" and "split into links" as its
scores move by a few per cent, the spread it receives changes n-fold, and the
iteration cycles instead of converging (measured on the topic web of
evaluate/synthetic_topics.py: L1 change of the authorities stuck at 0.04-0.12
for 50 iterations, 1 to 9 pages flipping each time). Describing the frontier
itself costs something, as in every MDL tree cut: `node_bits` per child model
is added to expand(u). graph/dom.py passes 1 bit (DistillConfig.mdl_node_bits);
with it the same iteration converges (docs/graph.md: 44 iterations for dom MDL
and 10 for dom MDL FT on the topic web's "rock climbing"; an earlier "9" here
was stale, found in review 2026-11-28). The default here, 0, is
the paper's cost as stated.

Discretisation (end of section 3): "reporting the top a fraction of positive
hub scores to within a small multiplicative error of e is quite enough. We
used a = 0.8 and e = 0.05". quantum() therefore returns e times the score at
which the top a fraction of all positive scores of the iteration begins (the
1 - a quantile); it is computed once per iteration over all pages and passed
to segment() for each page.

Pure Python and numpy (no Spark): segment() runs once per page per HITS
iteration, inside whatever maps over pages. `python -m templatemine.graph.mdl`
prints a micro-benchmark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Sequence

import numpy as np

__all__ = ["Segmentation", "quantum", "segment", "spread", "data_bits", "kl_bits", "model_mean",
           "split_bits", "code_length"]

LOG2E = math.log2(math.e)
_LN2 = math.log(2.0)
_TIE = 1e-12  # relative: expand(u) <= prune(u) * (1 + _TIE) counts as a tie, and ties expand


@dataclass(frozen=True)
class Segmentation:
    frontier: list             # node keys of the frontier in tree preorder (= document order for leaves given in it)
    leaf_frontier: np.ndarray  # int index into `frontier` for every input leaf, in input order
    expanded: int              # internal nodes expanded
    pruned: int                # internal nodes (not leaves) accepted whole into the frontier


# ---------------------------------------------------------------- code lengths

def model_mean(n: int, total: float, delta: float) -> float:
    """ML mean of an exponential over n scores summing to `total`, floored at delta."""
    m = total / n
    return m if m > delta else delta


def data_bits(values, mean: float, delta: float) -> float:
    """Bits for the scores `values` under an exponential with mean `mean`
    (>= delta), discretised with quantum delta: n log2(mean/delta) + (sum/mean) log2 e."""
    v = np.asarray(values, dtype=float)
    return _data_bits(v.size, float(v.sum()), mean, delta)


def _data_bits(n: int, total: float, mean: float, delta: float) -> float:
    return n * math.log2(mean / delta) + total / mean * LOG2E


def kl_bits(mu: float, mv: float) -> float:
    """KL(Q_u;Q_v) = D(Q_u || Q_v) in bits for exponentials with means mu, mv > 0."""
    return (math.log(mv / mu) + mu / mv - 1.0) / _LN2


def split_bits(n: int, total: float, child_n: Sequence[int], child_total: Sequence[float],
               delta: float, node_bits: float = 0.0) -> tuple[float, float]:
    """(prune, expand) bits at a node with n leaves summing to `total` whose
    children have child_n leaves summing to child_total."""
    mu = model_mean(n, total, delta)
    prune = _data_bits(n, total, mu, delta)
    expand = node_bits * len(child_n)
    for nv, sv in zip(child_n, child_total):
        mv = model_mean(nv, sv, delta)
        expand += kl_bits(mu, mv) + _data_bits(nv, sv, mv, delta)
    return prune, expand


# ---------------------------------------------------------------- the tree

class _Tree:
    """Nodes numbered in creation order, so a parent's id is below its children's."""
    __slots__ = ("keys", "parent", "children", "count", "total", "leaf_node")

    def __init__(self, leaf_paths: Sequence[tuple], h: list[float]):
        if not leaf_paths:
            raise ValueError("no leaves")
        root = leaf_paths[0][0]
        keys: list[Hashable] = [root]
        parent = [-1]
        children: list[list[int]] = [[]]
        index: dict = {}
        get = index.get
        keys_append, parent_append, children_append = keys.append, parent.append, children.append
        leaf_node = [0] * len(leaf_paths)
        prev: tuple = (root,)
        n_prev = 1
        stack = [0]  # node ids along prev
        for i, path in enumerate(leaf_paths):
            n = len(path)
            if not n or path[0] != root:
                raise ValueError(f"leaf {i}: path does not start at the page root {root!r}: {path!r}")
            # reuse the common prefix with the previous leaf (document order makes it long)
            j = 1
            lim = n if n < n_prev else n_prev
            while j < lim and path[j] == prev[j]:
                j += 1
            del stack[j:]
            nid = stack[-1]
            while j < n:
                key = path[j]
                k = (nid, key)
                c = get(k)
                if c is None:
                    c = len(keys)
                    index[k] = c
                    keys_append(key)
                    parent_append(nid)
                    children_append([])
                    children[nid].append(c)
                nid = c
                stack.append(c)
                j += 1
            leaf_node[i] = nid
            prev, n_prev = path, n
        count = [0] * len(keys)
        total = [0.0] * len(keys)
        for i, nid in enumerate(leaf_node):
            if count[nid]:
                raise ValueError(f"leaf {i}: duplicate leaf path {leaf_paths[i]!r}")
            if children[nid]:
                raise ValueError(f"leaf {i}: its node {keys[nid]!r} has children")
            count[nid] = 1
            total[nid] = h[i]
        for nid in range(len(keys) - 1, 0, -1):
            p = parent[nid]
            count[p] += count[nid]
            total[p] += total[nid]
        self.keys, self.parent, self.children = keys, parent, children
        self.count, self.total, self.leaf_node = count, total, leaf_node


def _scores(scores, n: int) -> np.ndarray:
    h = np.asarray(scores, dtype=float).reshape(-1)
    if h.size != n:
        raise ValueError(f"{h.size} scores for {n} leaves")
    if h.size and not (np.isfinite(h).all() and (h >= 0).all()):
        raise ValueError("hub scores must be finite and >= 0")
    return h


def _check_delta(delta: float) -> float:
    delta = float(delta)
    if not (delta > 0 and math.isfinite(delta)):
        raise ValueError(f"quantum must be positive and finite, not {delta}")
    return delta


# ---------------------------------------------------------------- API

def quantum(scores, a: float = 0.8, e: float = 0.05) -> float:
    """e times the score at which the top `a` fraction of the positive scores
    begins (their 1 - a quantile); 1.0 if no score is positive."""
    if not (0 < a <= 1) or not (e > 0):
        raise ValueError(f"need 0 < a <= 1 and e > 0, not a={a}, e={e}")
    h = np.asarray(scores, dtype=float).reshape(-1)
    pos = h[h > 0]
    if pos.size == 0:
        return 1.0
    # an actual score, no interpolation: what Spark's percentile_approx returns (graph/dom.py)
    return float(e * np.quantile(pos, 1.0 - a, method="inverted_cdf"))


def segment(leaf_paths: list[tuple], scores, delta: float, node_bits: float = 0.0) -> Segmentation:
    """Greedy MDL frontier of one page (see the module docstring)."""
    delta = _check_delta(delta)
    h = _scores(scores, len(leaf_paths))
    if not leaf_paths:
        return Segmentation([], np.zeros(0, dtype=np.int64), 0, 0)
    t = _Tree(leaf_paths, h.tolist())
    children, count, total = t.children, t.count, t.total
    log2, log = math.log2, math.log
    frontier_nodes: list[int] = []
    expanded = pruned = 0
    stack = [0]
    while stack:
        u = stack.pop()
        kids = children[u]
        if not kids:  # a leaf
            frontier_nodes.append(u)
            continue
        su = total[u]
        if su <= 0.0:  # nothing to spread
            frontier_nodes.append(u)
            pruned += 1
            continue
        n_pos = 0
        for v in kids:
            if total[v] > 0.0:
                n_pos += 1
        if n_pos != 1:
            # split_bits inlined (with node_bits): this loop runs per node per page per iteration;
            # the brute-force test checks the two agree
            nu = count[u]
            mu = su / nu
            if mu < delta:
                mu = delta
            prune = nu * log2(mu / delta) + su / mu * LOG2E
            expand = node_bits * len(kids)
            for v in kids:
                nv, sv = count[v], total[v]
                mv = sv / nv
                if mv < delta:
                    mv = delta
                expand += (log(mv / mu) + mu / mv - 1.0) / _LN2 + nv * log2(mv / delta) + sv / mv * LOG2E
            if expand > prune + _TIE * prune:
                frontier_nodes.append(u)
                pruned += 1
                continue
        expanded += 1
        stack.extend(reversed(kids))
    # every node below a frontier node inherits its frontier index
    parent = t.parent
    fr = [-1] * len(parent)
    for i, v in enumerate(frontier_nodes):
        fr[v] = i
    for nid in range(1, len(parent)):
        if fr[nid] < 0:
            fr[nid] = fr[parent[nid]]
    leaf_frontier = np.fromiter((fr[v] for v in t.leaf_node), dtype=np.int64, count=len(t.leaf_node))
    keys = t.keys
    return Segmentation([keys[v] for v in frontier_nodes], leaf_frontier, expanded, pruned)


def spread(scores, seg: Segmentation) -> np.ndarray:
    """New leaf scores: each leaf gets the total score of its frontier node's leaves."""
    h = _scores(scores, len(seg.leaf_frontier))
    if not h.size:
        return h.copy()
    pooled = np.bincount(seg.leaf_frontier, weights=h, minlength=len(seg.frontier))
    return pooled[seg.leaf_frontier]


def code_length(leaf_paths: list[tuple], scores, delta: float, seg: Segmentation) -> float:
    """Bits of a page's scores under a segmentation, equation (4) counted from
    the page root's model: sum over the nodes u above the frontier and their
    children v of KL(m_u; m_v), plus sum over frontier nodes v of D(H_v | m_v).
    With the root alone as the frontier it is prune(root)."""
    delta = _check_delta(delta)
    h = _scores(scores, len(leaf_paths))
    if not leaf_paths:
        return 0.0
    t = _Tree(leaf_paths, h.tolist())
    if len(seg.leaf_frontier) != len(leaf_paths):
        raise ValueError("segmentation is for another page")
    front = set()
    for i, v in enumerate(t.leaf_node):  # a leaf's frontier node: its nearest ancestor-or-self with that key
        key = seg.frontier[seg.leaf_frontier[i]]
        while v >= 0 and t.keys[v] != key:
            v = t.parent[v]
        if v < 0:
            raise ValueError(f"leaf {i}: frontier node {key!r} is not on its path")
        front.add(v)
    bits = 0.0
    stack = [0]
    while stack:
        u = stack.pop()
        mu = model_mean(t.count[u], t.total[u], delta)
        if u in front:
            bits += _data_bits(t.count[u], t.total[u], mu, delta)
            continue
        for v in t.children[u]:
            bits += kl_bits(mu, model_mean(t.count[v], t.total[v], delta))
            stack.append(v)
    return bits


# ---------------------------------------------------------------- benchmark

def _random_page(rng: np.random.Generator, n_leaves: int) -> tuple[list[tuple], np.ndarray]:
    """XPath-like paths, 3-9 levels, a few blocks of lists; scores mostly 0, some
    blocks exponential."""
    paths = []
    block_score = {}
    for i in range(n_leaves):
        depth = int(rng.integers(2, 8))
        path = ["/html/body"]
        for d in range(depth):
            path.append(f"{path[-1]}/{('div', 'ul', 'li', 'td')[d % 4]}[{int(rng.integers(1, 4))}]")
        path.append(f"a:{i}")
        paths.append(tuple(path))
        block_score.setdefault(path[2], rng.random() < 0.3)
    paths.sort(key=lambda p: p[:-1])
    h = np.array([rng.exponential(1.0) if block_score[p[2]] and rng.random() < 0.7 else 0.0 for p in paths])
    return paths, h


def _bench() -> None:
    import time
    rng = np.random.default_rng(1)
    for n_leaves, n_pages in ((100, 2000), (2000, 100)):
        pages = [_random_page(rng, n_leaves) for _ in range(n_pages)]
        delta = quantum(np.concatenate([h for _, h in pages]))
        n_nodes = sum(len(_Tree(p, h.tolist()).keys) for p, h in pages) / n_pages
        best_seg = best_all = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            segs = [segment(p, h, delta) for p, h in pages]
            t1 = time.perf_counter()
            for (_, h), s in zip(pages, segs):
                spread(h, s)
            t2 = time.perf_counter()
            best_seg = min(best_seg, (t1 - t0) / n_pages)
            best_all = min(best_all, (t2 - t0) / n_pages)
        fr = sum(len(s.frontier) for s in segs) / n_pages
        print(f"{n_leaves:5d} leaves, {n_nodes:6.0f} nodes/page, {fr:6.1f} frontier nodes/page: "
              f"segment {best_seg * 1e6:8.1f} us/page, segment+spread {best_all * 1e6:8.1f} us/page")


if __name__ == "__main__":
    _bench()
