"""Greedy MDL frontier segmentation (Chakrabarti 2001, section 3): a mixed hub
whose answer is worked out by hand, the conservative policy (ties and a single
positive child expand), the closed-form costs and the greedy checked against a
per-leaf brute force on random trees, spreading, and the quantum."""

import math
import random
import subprocess
import sys

import numpy as np
import pytest

from templatemine.graph.mdl import (Segmentation, code_length, data_bits, kl_bits, model_mean, quantum, segment,
                                    split_bits, spread)

R = "/html/body"


def _page(blocks):
    """blocks: (tag, scores, with_li); leaves R > R/tag > [R/tag/li[k]] > link:i."""
    paths, h = [], []
    for tag, scores, with_li in blocks:
        for k, s in enumerate(scores):
            p = [R, f"{R}/{tag}"]
            if with_li:
                p.append(f"{R}/{tag}/li[{k + 1}]")
            p.append(f"link:{len(paths)}")
            paths.append(tuple(p))
            h.append(float(s))
    return paths, np.array(h)


# ---------------------------------------------------------------- 1. a mixed hub

RELEVANT = np.linspace(0.7, 1.3, 8)              # mean 1
SECOND = [0.3, 0.25, 0.0, 0.35, 0.2, 0.3]        # a weaker list with one dead (0) link


def _mixed_hub():
    return _page([("ul[1]", [0.0] * 20, True),     # nav
                  ("ul[2]", RELEVANT, True),       # the relevant list
                  ("ol[1]", SECOND, True),         # a second relevant block
                  ("div[9]", [0.0] * 5, False)])   # footer: links straight under the div


def test_mixed_hub_frontier_separates_relevant_lists_from_zero_blocks():
    paths, h = _mixed_hub()
    # positives: 8 + 5; their 0.2 quantile is 0.3 (the 3rd smallest of 13), so delta = 0.05 * 0.3
    delta = quantum(h)
    assert delta == pytest.approx(0.015)
    seg = segment(paths, h, delta)
    # Root (39 leaves, sum 9.4, m = 0.241): two children are positive, so the costs decide.
    #   prune  = 39 log2(0.241/0.015) + 9.4/0.241 log2 e                                   = 212.5 bits
    #   expand = nav   KL(0.241; 0.015) 17.7 + 0 (an all-zero block costs nothing at m = delta)
    #          + list  KL(0.241; 1)      0.96 + 8 log2(1/0.015) + 8 log2 e   = 60.0
    #          + ol    KL(0.241; 0.233)  0.001 + 32.4
    #          + foot  KL(0.241; 0.015) 17.7 + 0                                          = 128.8 bits
    #   so the root is expanded: 2 x 17.7 bits of model buy back the 80.1 + 20.0 bits the
    #   25 zero links cost under the root's mean, and the list saves 19.9 bits for 0.96.
    # nav and footer are all zero: pruned whole, nothing to spread.
    # ul[2] (8 one-link <li>s, mean 1): prune 60.013 < expand 60.030 bits. Note how close:
    #   with one leaf per child, the KL cost and the data saving agree to second order in
    #   x = h/m - 1; per child the difference is 2 ln(1+x) + 1/(1+x) - (1+x) = -x^3/3 + x^4/2 ...
    #   nats, and a symmetric spread leaves only the positive x^4 term: a 0.017-bit margin.
    # ol[1]: the dead link would cost KL(0.233; 0.015) = 19.0 bits as its own model, against
    #   log2(0.233/0.015) = 3.96 bits under the list's mean: prune 32.4 < expand 45.4 bits.
    prune, expand = split_bits(39, float(h.sum()), [20, 8, 6, 5], [0.0, 8.0, 1.4, 0.0], delta)
    assert prune == pytest.approx(212.505, abs=1e-3) and expand == pytest.approx(128.849, abs=1e-3)
    ul2 = split_bits(8, 8.0, [1] * 8, list(RELEVANT), delta)
    assert ul2[0] == pytest.approx(60.0127, abs=1e-4) and ul2[1] == pytest.approx(60.0296, abs=1e-4)
    ol1 = split_bits(6, 1.4, [1] * 6, SECOND, delta)
    assert ol1[0] == pytest.approx(32.412, abs=1e-3) and ol1[1] == pytest.approx(45.447, abs=1e-3)

    assert seg.frontier == [f"{R}/ul[1]", f"{R}/ul[2]", f"{R}/ol[1]", f"{R}/div[9]"]
    assert seg.leaf_frontier.tolist() == [0] * 20 + [1] * 8 + [2] * 6 + [3] * 5
    assert (seg.expanded, seg.pruned) == (1, 4)

    new = spread(h, seg)
    assert new[:20].tolist() == [0.0] * 20 and new[34:].tolist() == [0.0] * 5
    assert new[20:28] == pytest.approx([8.0] * 8)       # every link of the list gets the list's total
    assert new[28:34] == pytest.approx([1.4] * 6)       # including the dead link
    # equation (4) from the root's model: the expansion at the root plus the four blocks' data
    assert code_length(paths, h, delta, seg) == pytest.approx(expand)
    root_only = Segmentation([R], np.zeros(len(paths), dtype=np.int64), 0, 1)
    assert code_length(paths, h, delta, root_only) == pytest.approx(prune)


def test_single_relevant_block_is_found_by_the_one_positive_child_rule():
    paths, h = _page([("ul[1]", [0.0] * 20, True), ("ul[2]", RELEVANT, True), ("div[9]", [0.0] * 5, False)])
    seg = segment(paths, h, quantum(h))
    assert seg.frontier == [f"{R}/ul[1]", f"{R}/ul[2]", f"{R}/div[9]"]
    new = spread(h, seg)
    assert new.tolist()[:20] == [0.0] * 20 and new[20:28] == pytest.approx([8.0] * 8) and new[28:].sum() == 0


def test_mixed_hub_nested_in_wrappers_and_a_page_with_nothing_positive():
    # the same blocks two wrapper divs further down: each wrapper has one child, so it is expanded
    paths, h = _mixed_hub()
    wrapped = [p[:1] + ("w1", "w2") + p[1:] for p in paths]
    seg = segment(wrapped, h, 0.015)
    assert seg.frontier == [f"{R}/ul[1]", f"{R}/ul[2]", f"{R}/ol[1]", f"{R}/div[9]"]
    assert (seg.expanded, seg.pruned) == (3, 4)
    z = np.zeros(len(paths))
    seg0 = segment(paths, z, 0.015)
    assert seg0.frontier == [R] and (seg0.expanded, seg0.pruned) == (0, 1)
    assert spread(z, seg0).tolist() == z.tolist()


# ---------------------------------------------------------------- 2. the conservative policy

def test_chain_nodes_with_one_child_are_expanded():
    paths = [("r", "div", "ul", f"li{i}", f"a{i}") for i in range(3)]
    h = np.array([1.0, 0.0, 2.0])
    seg = segment(paths, h, 0.05)
    # r and div have one (positive) child each; ul: the dead link glues the list (prune)
    assert seg.frontier == ["ul"] and (seg.expanded, seg.pruned) == (2, 1)
    prune, expand = split_bits(3, 3.0, [1, 1, 1], [1.0, 0.0, 2.0], 0.05)
    assert prune < expand
    # a chain that ends in a leaf: every node on it is expanded, the leaf is the frontier
    seg = segment([("r", "a", "b", "c", "leaf")], [0.4], 0.05)
    assert seg.frontier == ["leaf"] and (seg.expanded, seg.pruned) == (4, 0)
    # a one-leaf page whose root is the leaf
    seg = segment([("leaf",)], [0.4], 0.05)
    assert seg.frontier == ["leaf"] and seg.leaf_frontier.tolist() == [0] and (seg.expanded, seg.pruned) == (0, 0)


def test_one_positive_child_expands_even_when_pruning_is_cheaper():
    paths = [("r", "ul", f"a{i}") for i in range(4)]
    h = np.array([1.0, 0.0, 0.0, 0.0])
    prune, expand = split_bits(4, 1.0, [1] * 4, h.tolist(), 0.01)
    assert prune < expand          # 24.4 bits against 3 x 30.3 bits of KL for the zero links
    seg = segment(paths, h, 0.01)
    assert seg.frontier == ["a0", "a1", "a2", "a3"] and (seg.expanded, seg.pruned) == (2, 0)
    assert spread(h, seg).tolist() == h.tolist()   # no diffusion to the zero links
    # with a second positive child the costs decide, and pruning wins
    h2 = np.array([1.0, 0.5, 0.0, 0.0])
    assert split_bits(4, 1.5, [1] * 4, h2.tolist(), 0.01)[0] < split_bits(4, 1.5, [1] * 4, h2.tolist(), 0.01)[1]
    seg = segment(paths, h2, 0.01)
    assert seg.frontier == ["ul"] and (seg.expanded, seg.pruned) == (1, 1)
    assert spread(h2, seg).tolist() == [1.5] * 4


@pytest.mark.parametrize("value", [1.0, 0.1, 1 / 3, 0.7, 1e-3, 123.456])
@pytest.mark.parametrize("n", [2, 3, 7, 9])
def test_ties_expand(value, n):
    # children with the parent's mean: KL = 0 and the data costs add up to the parent's,
    # an exact tie (up to rounding, e.g. 0.1 * 3), so the node is expanded
    paths = [("r", "ul", f"a{i}") for i in range(n)]
    h = np.full(n, value)
    prune, expand = split_bits(n, float(h.sum()), [1] * n, h.tolist(), 1e-3)
    assert expand == pytest.approx(prune, rel=1e-12)
    seg = segment(paths, h, 1e-3)
    assert seg.frontier == [f"a{i}" for i in range(n)] and seg.pruned == 0
    # two sibling lists with equal means: tie at the div, then at each list
    paths = [("r", "div", f"ul{k}", f"a{k}{i}") for k in (1, 2) for i in range(n)]
    seg = segment(paths, np.full(2 * n, value), 1e-3)
    assert len(seg.frontier) == 2 * n and seg.expanded == 4 and seg.pruned == 0


def test_surprises_of_the_rule_are_as_computed():
    """Not a wish, a record: with one leaf per child the decision is a third-order effect."""
    paths = [("r", "ul", f"li{i}", f"a{i}") for i in range(8)]
    # one link a little above 7 equal ones: expand (59.944 < 60.013 bits): the list is split
    # into its 8 links and nothing spreads
    h = np.array([0.9] * 7 + [1.7])
    prune, expand = split_bits(8, 8.0, [1] * 8, h.tolist(), 0.015)
    assert expand < prune and prune - expand == pytest.approx(0.0689, abs=1e-3)
    assert len(segment(paths, h, 0.015).frontier) == 8
    # one link well below 7 equal ones: prune by 0.9 bits: the list is kept whole
    h = np.array([1.1] * 7 + [0.3])
    assert segment(paths, h, 0.015).frontier == ["ul"]


# ---------------------------------------------------------------- 3. brute force

def _naive_data_bits(values, m, delta):
    return sum(-math.log2(delta * (1.0 / m) * math.exp(-x / m)) for x in values)


def _naive_kl_bits(mu, mv):
    # E_{x ~ Q_u}[log2 q_u(x) - log2 q_v(x)] with E[x] = mu
    return math.log2(mv / mu) + (mu / mv - 1.0) * math.log2(math.e)


def _naive_greedy(paths, h, delta, record):
    """The rule as stated, on prefix tuples, with per-leaf loops."""
    def leaves(prefix):
        return [i for i, p in enumerate(paths) if p[:len(prefix)] == prefix]

    def children(prefix):
        out = []
        for i in leaves(prefix):
            if len(paths[i]) > len(prefix) and paths[i][:len(prefix) + 1] not in out:
                out.append(paths[i][:len(prefix) + 1])
        return out

    def mean(idx):
        return max(sum(h[i] for i in idx) / len(idx), delta)

    frontier, counts = [], {"expanded": 0, "pruned": 0, "near_ties": 0}

    def visit(u):
        kids = children(u)
        lu = leaves(u)
        if not kids:
            frontier.append(u)
            return
        if all(h[i] == 0 for i in lu):
            frontier.append(u)
            counts["pruned"] += 1
            return
        mu = mean(lu)
        prune = _naive_data_bits([h[i] for i in lu], mu, delta)
        expand = 0.0
        for v in kids:
            lv = leaves(v)
            expand += _naive_kl_bits(mu, mean(lv)) + _naive_data_bits([h[i] for i in lv], mean(lv), delta)
        record.append((len(lu), sum(h[i] for i in lu), [len(leaves(v)) for v in kids],
                       [sum(h[i] for i in leaves(v)) for v in kids], prune, expand))
        n_pos = sum(1 for v in kids if sum(h[i] for i in leaves(v)) > 0)
        # a tie is equality up to a relative 1e-12 (rounding); near the edge of that band the
        # per-leaf sums here and the closed form could round apart, so such cases are counted
        if n_pos != 1 and abs((expand - prune) / prune - 1e-12) < 1e-13:
            counts["near_ties"] += 1
        if n_pos == 1 or expand <= prune * (1 + 1e-12):
            counts["expanded"] += 1
            for v in kids:
                visit(v)
        else:
            frontier.append(u)
            counts["pruned"] += 1

    visit(paths[0][:1])
    return frontier, counts


def _random_case(rng):
    n = rng.randint(1, 8)
    paths = []
    for i in range(n):
        depth = rng.randint(0, 3)  # internal nodes below the root; the leaf is at depth <= 4
        p = ["root"]
        for _ in range(depth):
            p.append(p[-1] + "/" + rng.choice("ab"))
        p.append(f"leaf{i}")
        paths.append(tuple(p))
    paths.sort(key=lambda p: p[:-1])
    kind = rng.random()
    if kind < 0.25:   # repeated values: exact ties
        vals = [rng.choice([0.0, 0.5, 1.0, 1.0]) for _ in range(n)]
    elif kind < 0.5:
        vals = [0.0 if rng.random() < 0.4 else rng.expovariate(1.0) for _ in range(n)]
    else:
        vals = [rng.uniform(0, 3) if rng.random() < 0.8 else 0.0 for _ in range(n)]
    delta = rng.choice([0.01, 0.05, 0.2, 0.5, quantum(vals)])
    return paths, np.array(vals), delta


def test_greedy_and_closed_form_costs_equal_a_per_leaf_brute_force():
    rng = random.Random(20010501)
    near_ties = decided = 0
    for case in range(400):
        paths, h, delta = _random_case(rng)
        record = []
        frontier, counts = _naive_greedy(paths, h.tolist(), delta, record)
        near_ties += counts["near_ties"]
        for n, s, cn, cs, prune, expand in record:
            decided += 1
            p, e = split_bits(n, s, cn, cs, delta)
            assert p == pytest.approx(prune, rel=1e-9, abs=1e-9) and e == pytest.approx(expand, rel=1e-9, abs=1e-9)
        seg = segment(paths, h, delta)
        assert seg.frontier == [u[-1] for u in frontier], case
        assert (seg.expanded, seg.pruned) == (counts["expanded"], counts["pruned"]), case
        # each leaf maps to the frontier node on its path
        for i, p in enumerate(paths):
            assert p[:len(frontier[seg.leaf_frontier[i]])] == frontier[seg.leaf_frontier[i]]
        # spreading: each leaf gets its frontier node's total, so sum(new) = sum_v n_v h(v)
        new = spread(h, seg)
        totals = [sum(h[i] for i, p in enumerate(paths) if p[:len(u)] == u) for u in frontier]
        sizes = [sum(1 for p in paths if p[:len(u)] == u) for u in frontier]
        assert new.tolist() == pytest.approx([totals[seg.leaf_frontier[i]] for i in range(len(paths))])
        assert new.sum() == pytest.approx(sum(nv * tv for nv, tv in zip(sizes, totals)))
        # and the total code length is what the per-leaf model gives for that frontier
        naive_bits = 0.0
        stack = [paths[0][:1]]
        while stack:
            u = stack.pop()
            lu = [i for i, p in enumerate(paths) if p[:len(u)] == u]
            mu = max(h[lu].sum() / len(lu), delta)
            if u in frontier:
                naive_bits += _naive_data_bits(h[lu], mu, delta)
                continue
            kids = {paths[i][:len(u) + 1] for i in lu}
            for v in kids:
                lv = [i for i, p in enumerate(paths) if p[:len(v)] == v]
                naive_bits += _naive_kl_bits(mu, max(h[lv].sum() / len(lv), delta))
                stack.append(v)
        assert code_length(paths, h, delta, seg) == pytest.approx(naive_bits, rel=1e-9, abs=1e-9)
    assert decided > 300 and near_ties == 0


def test_kl_and_data_bits_against_their_definitions():
    # KL by numerical integration of q_u log2(q_u/q_v) on a fine grid
    for mu, mv in [(1.0, 1.0), (0.2, 1.0), (1.0, 0.2), (0.05, 0.3), (3.0, 0.7)]:
        x = np.linspace(0, 60 * mu, 600001)
        qu, qv = np.exp(-x / mu) / mu, np.exp(-x / mv) / mv
        integral = np.trapezoid(qu * (np.log2(qu) - np.log2(qv)), x)
        assert kl_bits(mu, mv) == pytest.approx(integral, rel=1e-6, abs=1e-9)
    assert kl_bits(0.5, 0.5) == 0.0
    vals = [0.0, 0.3, 1.2, 2.5]
    assert data_bits(vals, 1.0, 0.05) == pytest.approx(_naive_data_bits(vals, 1.0, 0.05))
    assert model_mean(4, 0.01, 0.05) == 0.05 and model_mean(4, 4.0, 0.05) == 1.0


# ---------------------------------------------------------------- 4. quantum

def test_quantum_known_values():
    # an actual score, no interpolation: positives 1..5, their 0.2 quantile is 1
    assert quantum([0, 0, 1, 2, 3, 4, 5]) == pytest.approx(0.05 * 1.0)  # the top 80% begin at 1
    assert quantum(np.array([[5.0, 4.0], [3.0, 0.0]]).T) == pytest.approx(0.05 * 3.0)   # positives 3, 4, 5
    assert quantum([1, 2, 3, 4, 5], a=0.5, e=0.1) == pytest.approx(0.3)
    assert quantum([7.0, 0.0]) == pytest.approx(0.35)
    assert quantum([2.0, 8.0], a=1.0) == pytest.approx(0.1)                             # the smallest positive
    assert quantum([0.0, 0.0]) == 1.0 and quantum([]) == 1.0
    with pytest.raises(ValueError):
        quantum([1.0], a=0.0)


# ---------------------------------------------------------------- the rest of the API

def test_inputs_are_checked_and_empty_pages_work():
    seg = segment([], [], 0.1)
    assert seg.frontier == [] and seg.leaf_frontier.shape == (0,) and spread([], seg).shape == (0,)
    paths = [("r", "a"), ("r", "b")]
    with pytest.raises(ValueError):
        segment(paths, [1.0], 0.1)
    with pytest.raises(ValueError):
        segment(paths, [1.0, -1.0], 0.1)
    with pytest.raises(ValueError):
        segment(paths, [1.0, float("nan")], 0.1)
    with pytest.raises(ValueError):
        segment(paths, [1.0, 1.0], 0.0)
    with pytest.raises(ValueError):
        segment([("r", "a"), ("s", "b")], [1.0, 1.0], 0.1)      # two roots
    with pytest.raises(ValueError):
        segment([("r", "a"), ("r", "a")], [1.0, 1.0], 0.1)      # the same leaf twice
    with pytest.raises(ValueError):
        segment([("r", "a"), ("r", "a", "b")], [1.0, 1.0], 0.1)  # a leaf with a child


def test_frontier_is_in_tree_order_and_keys_are_per_parent():
    # the same key under two parents is two nodes; leaves need not come grouped by block:
    # the frontier is in preorder of the tree, children in first-seen order
    paths = [("r", "x", "li", "a0"), ("r", "y", "li", "a1"), ("r", "x", "li", "a2"), ("r", "y", "li", "a3")]
    h = np.array([1.0, 1.0, 0.5, 2.0])
    seg = segment(paths, h, 0.05)
    assert seg.frontier == ["li", "li"]   # x/li, y/li
    assert seg.leaf_frontier.tolist() == [0, 1, 0, 1] and seg.leaf_frontier.dtype.kind == "i"
    assert spread(h, seg).tolist() == [1.5, 3.0, 1.5, 3.0]
    h = np.array([1.0, 0.0, 0.0, 2.0])    # one positive child under each li: down to the leaves
    seg = segment(paths, h, 0.05)
    assert seg.frontier == ["a0", "a2", "a1", "a3"] and seg.leaf_frontier.tolist() == [0, 2, 1, 3]
    assert spread(h, seg).tolist() == h.tolist()


def test_module_does_not_import_spark():
    code = "import sys, templatemine.graph.mdl; sys.exit('pyspark' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
