"""Regularised isotonic regression on a tree (Chakrabarti, Kumar & Punera 2007):
the DP against an exhaustive search on tiny trees, c = 0 (plain L1 isotonic
regression), large c (one section at the lower median), a page worked out by
hand, node-order independence, input validation, and the compiled DP (the
numpy levels' choices, bit for bit)."""

import itertools
import math

import numpy as np
import pytest

from templatemine.pagelevel import isotonic
from templatemine.pagelevel.isotonic import Smoothing, smooth, smooth_values


# ---------------------------------------------------------------- independent reference

def _n_sections(parent, y):
    """Connected components of the graph of equal-valued parent/child edges (BFS)."""
    n = len(parent)
    adj = [[] for _ in range(n)]
    for j, i in enumerate(parent):
        if i >= 0 and y[i] == y[j]:
            adj[i].append(j)
            adj[j].append(i)
    seen, count = [False] * n, 0
    for s in range(n):
        if not seen[s]:
            count += 1
            seen[s], stack = True, [s]
            while stack:
                for w in adj[stack.pop()]:
                    if not seen[w]:
                        seen[w] = True
                        stack.append(w)
    return count


def _monotone(parent, y):
    return all(i < 0 or y[i] <= y[j] for j, i in enumerate(parent))


def _objective(parent, x, y, c):
    return math.fsum(abs(a - b) for a, b in zip(x, y)) + c * _n_sections(parent, y)


def _brute(parent, x, c):
    """Least objective over every monotone assignment of the distinct x values."""
    values = sorted(set(x))
    best = math.inf
    for y in itertools.product(values, repeat=len(x)):
        if _monotone(parent, y):
            best = min(best, _objective(parent, x, y, c))
    return best


def _random_case(rng):
    n = int(rng.integers(1, 7))
    pool = rng.choice(np.round(rng.random(8), 2), size=int(rng.integers(1, 5)))  # k <= 4, repeats
    x = [float(v) for v in rng.choice(pool, size=n)]
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    perm = rng.permutation(n)                                 # arbitrary node order
    inv = np.argsort(perm)
    parent = [-1 if parent[perm[j]] < 0 else int(inv[parent[perm[j]]]) for j in range(n)]
    x = [x[perm[j]] for j in range(n)]
    return parent, x


C_VALUES = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 10.0)


def _check(parent, x, c, s):
    y = s.y.tolist()
    assert _monotone(parent, y)
    assert set(y) <= set(x)
    assert s.n_sections == _n_sections(parent, y)
    assert s.cost == pytest.approx(_objective(parent, x, y, c), abs=1e-12)
    assert sorted(set(s.sections.tolist())) == list(range(s.n_sections))
    firsts = [s.sections.tolist().index(k) for k in range(s.n_sections)]
    assert firsts == sorted(firsts)                           # numbered in order of first node
    for j, i in enumerate(parent):                            # same section <=> same value on an edge
        if i >= 0:
            assert (s.sections[i] == s.sections[j]) == (y[i] == y[j])


# ---------------------------------------------------------------- 1. DP == exhaustive search

def test_dp_matches_brute_force_on_random_tiny_trees():
    rng = np.random.default_rng(20070508)
    checked = 0
    for case in range(400):
        parent, x = _random_case(rng)
        c = C_VALUES[case % len(C_VALUES)] if case % 2 else float(rng.random())
        s = smooth(parent, x, c)
        _check(parent, x, c, s)
        assert abs(s.cost - _brute(parent, x, c)) <= 1e-9, (parent, x, c, s.y)
        checked += 1
    assert checked == 400


def _brute_values(parent, x, c):
    """The seed's objective, c per distinct value: least over every monotone
    assignment of the distinct x values."""
    values = sorted(set(x))
    best = math.inf
    for y in itertools.product(values, repeat=len(x)):
        if _monotone(parent, y):
            best = min(best, math.fsum(abs(a - b) for a, b in zip(x, y)) + c * len(set(y)))
    return best


def test_distinct_values_dp_matches_brute_force_on_random_tiny_trees():
    """smooth_values (threshold decomposition, runs of gaps) is exact for the
    seed's count of distinct values, on any node order."""
    rng = np.random.default_rng(20261128)
    for case in range(400):
        parent, x = _random_case(rng)
        c = C_VALUES[case % len(C_VALUES)] if case % 2 else float(rng.random())
        s = smooth_values(parent, x, c)
        y = s.y.tolist()
        assert _monotone(parent, y) and set(y) <= set(x)
        assert s.n_sections == _n_sections(parent, y)
        assert s.cost == pytest.approx(math.fsum(abs(a - b) for a, b in zip(x, y)) + c * len(set(y)), abs=1e-12)
        assert abs(s.cost - _brute_values(parent, x, c)) <= 1e-9, (parent, x, c, y)


def test_distinct_values_keep_paragraphs_that_sections_give_up():
    """Twelve link items at one value are twelve sections but one value: charged
    per section (smooth), they drag their parent and its two paragraphs over
    the threshold; charged per distinct value (the seed's slide), the
    paragraphs stay low. The page of test_pagelevel's guard test."""
    parent = [-1, 0, 1, 1] + [1] * 12
    x = [0.5, 0.5, 0.0, 0.0] + [1.0] * 12
    sections, values = smooth(parent, x, 0.5), smooth_values(parent, x, 0.5)
    assert sections.y.tolist()[2:4] == [1.0, 1.0]
    assert values.y.tolist()[2:4] == [0.0, 0.0] and values.y.tolist()[4:] == [1.0] * 12
    assert values.cost == pytest.approx(2.0)  # |0.5| twice + 2 values x 0.5


def test_c_zero_is_plain_l1_isotonic_regression():
    rng = np.random.default_rng(7)
    for _ in range(150):
        parent, x = _random_case(rng)
        s = smooth(parent, x, 0.0)
        assert set(s.y.tolist()) <= set(x)
        assert _monotone(parent, s.y.tolist())
        assert abs(s.cost - _brute(parent, x, 0.0)) <= 1e-9
        assert s.cost == pytest.approx(math.fsum(abs(a - b) for a, b in zip(x, s.y.tolist())), abs=1e-12)


def test_monotone_input_is_left_alone_when_sections_are_free():
    parent = [-1, 0, 0, 1, 1, 2]
    x = [0.1, 0.4, 0.2, 0.9, 0.5, 0.3]
    s = smooth(parent, x, 0.0)
    assert s.y.tolist() == x and s.cost == 0.0 and s.n_sections == 6


def test_large_c_collapses_to_one_section_at_the_lower_median():
    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(1, 40))
        parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
        x = np.round(rng.random(n), 2)
        c = n * (x.max() - x.min()) + 1.0
        s = smooth(parent, x, c)
        assert s.n_sections == 1 and s.sections.tolist() == [0] * n
        assert np.all(s.y == np.sort(x)[(n - 1) // 2])
        assert s.cost == pytest.approx(np.abs(x - np.sort(x)[(n - 1) // 2]).sum() + c)


# ---------------------------------------------------------------- 2. a page by hand

#  0 body 0.10 ─┬─ 1 nav 0.90 ─┬─ 2 0.90
#               │              ├─ 3 0.85
#               │              ├─ 4 0.95
#               │              └─ 5 0.10   stray leaf in the navigation bar
#               ├─ 6 main 0.10 ─┬─ 7 0.15
#               │               └─ 8 0.05
#               └─ 9 footer 0.80
NAMES = ["body", "nav", "n1", "n2", "n3", "stray", "main", "m1", "m2", "footer"]
PARENT = [-1, 0, 1, 1, 1, 1, 0, 6, 6, 0]
X = [0.10, 0.90, 0.90, 0.85, 0.95, 0.10, 0.10, 0.15, 0.05, 0.80]


@pytest.mark.parametrize("c", [0.1, 0.3, 0.6])
def test_hand_made_page(c):
    """For 0.05 < c < 0.7 the optimum is three sections:
    - {nav, n1, n2, n3, stray} at 0.9, the median of (0.9, 0.9, 0.85, 0.95, 0.1): the
      stray leaf must be >= nav's value, so it is smoothed up (0.8), n2 and n3 are pulled
      to 0.9 (0.05 each). Rather than nav lowered to 0.1 (0.8) with n1, n2, n3 three
      sections of their own (3c): 0.8 + 3c > 0.9 + c iff c > 0.05. Splitting off n3 at
      0.95 saves 0.05 for c more.
    - {body, main, m1, m2} at 0.1 (m1 pulled down 0.05, m2 up 0.05: m2 cannot go below
      main); m1 alone at 0.15 would save 0.05 for c.
    - {footer} at 0.8: joining the body's section costs 0.7 > c.
    Cost 0.9 + 0.1 + 3c."""
    s = smooth(PARENT, X, c)
    assert s.y.tolist() == [0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.8]
    assert s.sections.tolist() == [0, 1, 1, 1, 1, 1, 0, 0, 0, 2]
    assert s.n_sections == 3
    assert s.cost == pytest.approx(1.0 + 3 * c, abs=1e-12)
    assert s.cost == pytest.approx(_objective(PARENT, X, s.y.tolist(), c), abs=1e-12)


def test_hand_made_page_at_the_extremes():
    # c = 1: the footer joins the body's section (0.7 < c): two sections, 0.9 + 0.1 + 0.7 + 2
    s = smooth(PARENT, X, 1.0)
    assert s.y.tolist() == [0.1, 0.9, 0.9, 0.9, 0.9, 0.9, 0.1, 0.1, 0.1, 0.1]
    assert s.n_sections == 2 and s.cost == pytest.approx(3.7)
    # c > 2.2: one section beats two (3.9 + c < 1.7 + 2c); every value in [0.15, 0.8] costs
    # 3.9 (five scores either side), the tie goes to the smaller value
    s = smooth(PARENT, X, 2.5)
    assert s.y.tolist() == [0.15] * 10 and s.n_sections == 1 and s.cost == pytest.approx(6.4)
    # c = 0: raising the stray leaf (0.8) or lowering nav (0.8) tie; the DP continues
    # nav's section where it can and prefers the smaller value, all the same the optimum
    # is 0.8 + the two 0.05 in main (m2 under main; m1 free)
    s = smooth(PARENT, X, 0.0)
    assert s.cost == pytest.approx(0.85)
    assert s.cost == pytest.approx(_brute_small_page())


def _brute_small_page():
    """Exhaustive c = 0 optimum of the hand-made page, per subtree (the subtrees of the
    body are independent once the body's value is fixed)."""
    values = sorted(set(X))
    best = math.inf
    for y0 in values:
        total = abs(X[0] - y0)
        for nodes in ([1, 2, 3, 4, 5], [6, 7, 8], [9]):
            local = math.inf
            for ys in itertools.product([v for v in values if v >= y0], repeat=len(nodes)):
                y = dict(zip(nodes, ys))
                if all(PARENT[j] not in y or y[PARENT[j]] <= y[j] for j in nodes):
                    local = min(local, math.fsum(abs(X[j] - y[j]) for j in nodes))
            total += local
        best = min(best, total)
    return best


# ---------------------------------------------------------------- 3. node order, ties

def test_node_order_does_not_change_y():
    rng = np.random.default_rng(3)
    for _ in range(50):
        n = int(rng.integers(2, 60))
        parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
        x = np.round(rng.random(n) * 10) / 10                 # many ties
        c = float(rng.choice([0.0, 0.1, 0.35, 1.0]))
        base = smooth(parent, x, c)
        perm = rng.permutation(n)                             # new node j is old node perm[j]
        inv = np.argsort(perm)
        parent2 = [-1 if parent[perm[j]] < 0 else int(inv[parent[perm[j]]]) for j in range(n)]
        moved = smooth(parent2, x[perm], c)
        assert np.array_equal(moved.y, base.y[perm])
        assert moved.n_sections == base.n_sections
        assert moved.cost == pytest.approx(base.cost, abs=1e-9)


def test_tie_prefers_continuing_then_the_smaller_value():
    # root 0.2, one child 0.6, c = 0.4: staying at 0.2 costs 0.4, a new section at 0.6
    # costs c = 0.4 (a float tie): continue
    s = smooth([-1, 0], [0.2, 0.6], 0.4)
    assert s.y.tolist() == [0.2, 0.2] and s.n_sections == 1
    # single node pair at c large: any value in [0.2, 0.6] is a median; the smaller wins
    s = smooth([-1, 0], [0.6, 0.2], 5.0)
    assert s.y.tolist() == [0.2, 0.2]


def test_result_type_and_read_only_arrays():
    s = smooth([-1, 0, 0], [0.5, 0.7, 0.2], 0.1)
    assert isinstance(s, Smoothing)
    assert s.y.dtype == np.float64 and s.sections.dtype == np.int64
    with pytest.raises(ValueError):
        s.y[0] = 1.0
    with pytest.raises(AttributeError):
        s.cost = 0.0


def test_single_node_and_empty():
    s = smooth([-1], [0.3], 2.0)
    assert s.y.tolist() == [0.3] and s.sections.tolist() == [0] and s.n_sections == 1 and s.cost == 2.0
    s = smooth([], [], 1.0)
    assert s.y.shape == (0,) and s.n_sections == 0 and s.cost == 0.0


def test_larger_tree_is_feasible_and_consistent():
    rng = np.random.default_rng(5)
    n = 300
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
    x = rng.random(n)
    for c in (0.0, 0.2, 1.0):
        s = smooth(parent, x, c)
        _check(parent, x.tolist(), c, s)


# ---------------------------------------------------------------- 4. validation

@pytest.mark.parametrize("parent, x, c", [
    ([-1, 0], [0.1], 0.1),                 # length mismatch
    ([-1], [0.1, 0.2], 0.1),
    ([-1, 5], [0.1, 0.2], 0.1),            # parent out of range
    ([-1, -2], [0.1, 0.2], 0.1),
    ([-1, 1], [0.1, 0.2], 0.1),            # own parent
    ([-1, -1], [0.1, 0.2], 0.1),           # two roots
    ([1, 0], [0.1, 0.2], 0.1),             # no root
    ([-1, 2, 1], [0.1, 0.2, 0.3], 0.1),    # cycle off the root
    ([-1, 0.5], [0.1, 0.2], 0.1),          # non-integer parent
    ([-1, 0], [0.1, 0.2], -0.1),           # c < 0
    ([-1, 0], [0.1, 0.2], float("nan")),
    ([-1, 0], [0.1, 0.2], float("inf")),
    ([-1, 0], [0.1, float("nan")], 0.1),   # bad score
    ([-1, 0], [[0.1], [0.2]], 0.1),
    ([0], [], 0.1),
])
def test_invalid_input(parent, x, c):
    with pytest.raises(ValueError):
        smooth(parent, x, c)
    with pytest.raises(ValueError):
        smooth_values(parent, x, c)


def test_grid_rounding_costs_at_most_n_times_the_grid():
    """What page scoring restricts: scores rounded to a 0.05 grid (k <= 21) before
    the DP. The rounded solution, costed on the raw scores, is within n * grid of
    the exact optimum (each |x - y| term moves by at most grid / 2, twice)."""
    rng = np.random.default_rng(4)
    grid = 0.05
    for _ in range(200):
        n = int(rng.integers(1, 7))
        parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n)]
        x = [float(v) for v in rng.random(n)]
        c = float(rng.choice(C_VALUES))
        rounded = [round(v / grid) * grid for v in x]
        y = smooth(parent, rounded, c).y.tolist()
        assert _monotone(parent, y)
        assert _objective(parent, x, y, c) <= _brute(parent, x, c) + n * grid + 1e-9


# ---------------------------------------------------------------- 4. the compiled DP

compiled = pytest.mark.skipif(isotonic._compiled is None, reason=f"compiled DP: {isotonic.COMPILED_DP_ERROR}")


def _parent_first(rng, n, deep):
    """A tree numbered parent-first (what page mode passes), deep or bushy."""
    return [-1] + [int(rng.integers(max(0, i - 3) if deep else 0, i)) for i in range(1, n)]


@compiled
def test_compiled_dp_makes_the_numpy_dps_choices():
    rng = np.random.default_rng(2007)
    for case in range(300):
        n = int(rng.integers(1, 400))
        parent = _parent_first(rng, n, deep=case % 3 == 0)
        raw = rng.random(n)
        x = raw if case % 4 == 0 else np.round(raw * 20) / 20  # distinct scores, or the 0.05 grid's ties
        c = float(rng.choice([0.0, 0.05, 0.3, 0.5, 1.0, 2.0, 50.0]))
        got = smooth(parent, x, c)
        want = isotonic._numpy_smooth(parent, x, c)
        assert np.array_equal(got.y, want.y), (case, n, c)
        assert np.array_equal(got.sections, want.sections) and got.n_sections == want.n_sections
        assert got.cost == want.cost
    # scores that are a strided view (not contiguous) are taken as well
    parent, x = _parent_first(rng, 50, deep=False), np.round(rng.random(100) * 20) / 20
    assert np.array_equal(smooth(parent, x[::2], 0.5).y, isotonic._numpy_smooth(parent, x[::2], 0.5).y)


@compiled
def test_compiled_dp_matches_brute_force_and_takes_only_parent_first_trees(monkeypatch):
    rng = np.random.default_rng(20070508)
    for case in range(300):
        parent, x = _random_case(rng)
        order = np.argsort([_depth(parent, i) for i in range(len(parent))], kind="stable")  # renumber parent-first
        inv = np.argsort(order)
        parent = [-1 if parent[o] < 0 else int(inv[parent[o]]) for o in order]
        x = [x[o] for o in order]
        c = C_VALUES[case % len(C_VALUES)]
        s = smooth(parent, x, c)
        _check(parent, x, c, s)
        assert abs(s.cost - _brute(parent, x, c)) <= 1e-9, (parent, x, c, s.y)
    # a tree numbered otherwise takes the numpy levels (the C loops need parent[i] < i)
    calls = []
    real = isotonic._compiled.dp
    monkeypatch.setattr(isotonic, "_compiled", type("Spy", (), {"dp": staticmethod(
        lambda *a: calls.append(1) or real(*a))}))
    smooth([1, -1], [0.2, 0.6], 0.1)
    assert not calls
    smooth([-1, 0], [0.2, 0.6], 0.1)
    assert calls == [1]


def _depth(parent, i):
    d = 0
    while parent[i] >= 0:
        i, d = parent[i], d + 1
    return d
