# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""The dynamic program of `isotonic.smooth` in C, for trees numbered so that
every node's parent comes before it (`parent[0] == -1`, `parent[i] < i`): the
preorder node tables of page mode, with the own-text leaves appended after.

Same recurrences, same tie rules and the same floating-point operations in the
same order as the numpy levels in isotonic.py (a node's children's
contributions are summed in increasing node number, as `np.add.reduceat` sums
a level's rows), so the chosen values are those of the numpy DP; isotonic.py
checks that on probe trees at import and otherwise keeps numpy. What it saves
is numpy's per-call overhead: the numpy DP makes about ten array calls per
depth level of the page, where this runs O(n k) plain loops.
"""

from libc.stdlib cimport malloc, free
from libc.math cimport fabs, INFINITY

import numpy as np

cdef double TIE_RTOL = 1e-12


cdef inline double tol(double v) noexcept nogil:
    return TIE_RTOL * (1.0 + fabs(v))


def dp(const long long[::1] parent, const double[::1] x, const double[::1] values, double c):
    """(index into `values` per node, section id per node, number of sections)."""
    cdef Py_ssize_t n = x.shape[0], k = values.shape[0], i, a, b, w, q
    cdef double *best = NULL
    cdef double *suf = NULL
    cdef double *row
    cdef double *crow
    cdef double m, s, v, stay
    cdef Py_ssize_t *first_child = NULL
    cdef Py_ssize_t *next_sibling = NULL
    cdef Py_ssize_t *last_child = NULL
    idx_arr = np.empty(n, dtype=np.int64)
    sec_arr = np.empty(n, dtype=np.int64)
    cdef long long[::1] idx = idx_arr
    cdef long long[::1] sections = sec_arr
    cdef Py_ssize_t n_sections = 0
    if n == 0:
        return idx_arr, sec_arr, 0
    best = <double *> malloc(n * k * sizeof(double))
    suf = <double *> malloc(k * sizeof(double))
    first_child = <Py_ssize_t *> malloc(n * sizeof(Py_ssize_t))
    next_sibling = <Py_ssize_t *> malloc(n * sizeof(Py_ssize_t))
    last_child = <Py_ssize_t *> malloc(n * sizeof(Py_ssize_t))
    if not (best and suf and first_child and next_sibling and last_child):
        free(best); free(suf); free(first_child); free(next_sibling); free(last_child)
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                first_child[i] = -1
                next_sibling[i] = -1
                last_child[i] = -1
            for i in range(1, n):  # children lists in increasing node number
                q = parent[i]
                if last_child[q] < 0:
                    first_child[q] = i
                else:
                    next_sibling[last_child[q]] = i
                last_child[q] = i
            # bottom-up: best[v][a] = |x_v - V[a]| + sum over children of min(best[w][a], c + min_{b>a} best[w][b])
            for i in range(n - 1, -1, -1):
                row = best + i * k
                w = first_child[i]
                if w < 0:
                    for a in range(k):
                        row[a] = 0.0
                else:
                    crow = best + w * k  # the first child's contribution starts the sum (0 + it, as numpy)
                    _contribution(crow, suf, k, c, row, 0)
                    w = next_sibling[w]
                    while w >= 0:
                        _contribution(best + w * k, suf, k, c, row, 1)
                        w = next_sibling[w]
                for a in range(k):
                    row[a] = row[a] + fabs(x[i] - values[a])
            # the root: the smallest value within the tolerance of the least cost
            row = best
            m = row[0]
            for a in range(1, k):
                if row[a] < m:
                    m = row[a]
            for a in range(k):
                if row[a] <= m + tol(m):
                    idx[0] = a
                    break
            # top-down: keep the parent's value unless a larger one is cheaper by more than c
            for i in range(1, n):
                row = best + i * k
                a = idx[parent[i]]
                idx[i] = a
                stay = row[a]
                s = _suffix_min_after(row, a, k)
                if not (stay <= c + s + tol(c + s)):
                    for b in range(a + 1, k):
                        if row[b] <= s + tol(s):
                            idx[i] = b
                            break
            # sections: a node starts one unless it keeps its parent's value; numbered by first node
            for i in range(n):
                if i == 0 or idx[i] != idx[parent[i]]:
                    sections[i] = n_sections
                    n_sections += 1
                else:
                    sections[i] = sections[parent[i]]
    finally:
        free(best); free(suf); free(first_child); free(next_sibling); free(last_child)
    return idx_arr, sec_arr, n_sections


cdef inline double _suffix_min_after(const double *row, Py_ssize_t a, Py_ssize_t k) noexcept nogil:
    """min(row[a+1:]), inf for the last column (isotonic._strict_suffix_min)."""
    cdef double s = INFINITY
    cdef Py_ssize_t b
    for b in range(k - 1, a, -1):
        if row[b] < s:
            s = row[b]
    return s


cdef inline void _contribution(const double *child, double *suf, Py_ssize_t k, double c, double *acc,
                               bint add) noexcept nogil:
    """acc (=, or += with add) min(child[a], c + min(child[a+1:]))."""
    cdef Py_ssize_t a
    cdef double s = INFINITY, v
    for a in range(k - 1, -1, -1):
        suf[a] = s
        if child[a] < s:
            s = child[a]
    for a in range(k):
        v = c + suf[a]
        if child[a] < v:
            v = child[a]
        if add:
            acc[a] = acc[a] + v
        else:
            acc[a] = v
