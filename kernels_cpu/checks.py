"""Edge checks of the property verifiers (totem_py/algorithms/), on raw CSR arrays, one parallel
pass over the rows, with no temporary per edge.

Each check reports the first offending edge in edge order (-1 if none): the rows are cut into
BLOCKS contiguous runs, each run finds its first offender, and the smallest wins. Per-vertex marks
("has a parent", "has a tight in-edge") are benign races: every writer stores 1. The two walks
are parallel too: tight_reach level by level, weak_roots by a lock-free union-find.
"""

import numpy as np
from numba import njit, prange

from .atomics import atomic_cas
from .jit import APPEND, append, flush

BLOCKS = 1024
NONE = np.int64(-1)


@njit(inline="always")
def _first(found):
    """The smallest non-negative entry of `found` (one per block), or -1."""
    best = NONE
    for x in found:
        if x >= 0 and (best < 0 or x < best):
            best = x
    return best


@njit(inline="always")
def _rows(n, b):
    return b * n // BLOCKS, (b + 1) * n // BLOCKS


@njit(parallel=True, nogil=True, cache=True)
def level_edges(indptr, indices, levels, has_parent):
    """For hop levels (-1 unreached): the first edge from a reached vertex to an unreached one,
    the first that skips a level (target deeper than source + 1); has_parent[v] = 1 where some
    reached in-neighbour is one level up."""
    n = indptr.size - 1
    escape = np.full(BLOCKS, NONE)
    skip = np.full(BLOCKS, NONE)
    for b in prange(BLOCKS):
        lo, hi = _rows(n, b)
        for u in range(lo, hi):
            lu = levels[u]
            if lu < 0:
                continue
            for e in range(indptr[u], indptr[u + 1]):
                lv = levels[indices[e]]
                if lv < 0:
                    if escape[b] < 0:
                        escape[b] = e
                elif lv > lu + 1:
                    if skip[b] < 0:
                        skip[b] = e
                elif lv == lu + 1:
                    has_parent[indices[e]] = 1
    return _first(escape), _first(skip)


@njit(inline="always")
def _via(dist, weights, has_weights, u, e):
    return dist[u] + (weights[e] if has_weights else 1.0)


@njit(inline="always")
def _tol(rtol, via):
    return rtol * via


@njit(parallel=True, nogil=True, cache=True)
def distance_edges(indptr, indices, weights, has_weights, dist, rtol, has_tight):
    """For path lengths: the first edge out of a finite vertex that can still relax its
    target (by more than rtol relative; 0: any amount); has_tight[v] = 1 where some in-edge
    gives dist[v] within rtol."""
    n = indptr.size - 1
    relax = np.full(BLOCKS, NONE)
    for b in prange(BLOCKS):
        lo, hi = _rows(n, b)
        for u in range(lo, hi):
            if not np.isfinite(dist[u]):
                continue
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                via = _via(dist, weights, has_weights, u, e)
                tol = _tol(rtol, via)
                if dist[v] > via + tol:
                    if relax[b] < 0:
                        relax[b] = e
                elif abs(dist[v] - via) <= tol:
                    has_tight[v] = 1
    return _first(relax)


@njit(parallel=True, nogil=True, cache=True)
def tight_level(indptr, indices, weights, has_weights, dist, rtol, queue, qlen, seen, nxt, nlen):
    """One level of tight_reach: the unseen targets of queue[:qlen]'s tight edges, each
    claimed once (seen 0 -> 1, compare-and-swap) and appended to nxt (nlen[0] counts them)."""
    nblocks = min(qlen, BLOCKS)
    for b in prange(nblocks):
        buf = np.empty(APPEND, dtype=np.int64)
        count = 0
        for i in range(b * qlen // nblocks, (b + 1) * qlen // nblocks):
            u = queue[i]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if seen[v]:
                    continue
                via = _via(dist, weights, has_weights, u, e)
                if abs(dist[v] - via) <= _tol(rtol, via) and atomic_cas(seen, v, 0, 1) == 0:
                    count = append(buf, count, v, nxt, nlen)
        flush(buf, count, nxt, nlen)


def tight_reach(indptr, indices, weights, has_weights, dist, rtol, source, seen):
    """seen[v] = 1 for every vertex reached from `source` over tight edges (level by level,
    each level in parallel)."""
    n = indptr.size - 1
    queue, nxt = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    nlen = np.zeros(1, dtype=np.int64)
    queue[0] = source
    seen[source] = 1
    qlen = 1
    while qlen:
        nlen[0] = 0
        tight_level(indptr, indices, weights, has_weights, dist, rtol, queue, qlen, seen, nxt,
                    nlen)
        queue, nxt = nxt, queue
        qlen = int(nlen[0])


@njit(parallel=True, nogil=True, cache=True)
def integral(values):
    """Whether every entry is a whole number."""
    whole = np.ones(BLOCKS, dtype=np.bool_)
    for b in prange(BLOCKS):
        lo, hi = _rows(values.size, b)
        for i in range(lo, hi):
            if values[i] != np.floor(values[i]):
                whole[b] = False
                break
    return whole.all()


@njit(parallel=True, nogil=True, cache=True)
def label_edges(indptr, indices, labels):
    """The first edge whose ends carry different labels."""
    n = indptr.size - 1
    split = np.full(BLOCKS, NONE)
    for b in prange(BLOCKS):
        lo, hi = _rows(n, b)
        for u in range(lo, hi):
            for e in range(indptr[u], indptr[u + 1]):
                if labels[indices[e]] != labels[u]:
                    split[b] = e
                    break
            if split[b] >= 0:
                break
    return _first(split)


@njit(inline="always")
def _root(parent, a):
    """a's root, halving the path on the way. Parents only ever point at smaller ids and a
    halving write stores an ancestor, so concurrent finds and links keep a forest."""
    p = parent[a]
    while p != a:
        g = parent[p]
        parent[a] = g
        a = g
        p = parent[a]
    return a


@njit(parallel=True, nogil=True, cache=True)
def weak_roots(indptr, indices):
    """Each vertex's weakly connected component, as the smallest id in it: a lock-free
    union-find over the edges in parallel (the larger of two roots is linked under the smaller
    by compare-and-swap, which fails and retries if another link moved it first), then every
    vertex's root, found without writing (the links are done)."""
    n = indptr.size - 1
    parent = np.arange(n)
    for b in prange(BLOCKS):
        lo, hi = _rows(n, b)
        for u in range(lo, hi):
            for e in range(indptr[u], indptr[u + 1]):
                a, c = u, indices[e]
                while True:
                    a, c = _root(parent, a), _root(parent, c)
                    if a == c:
                        break
                    if a < c:
                        a, c = c, a
                    if atomic_cas(parent, a, a, c) == a:
                        break
    roots = np.empty(n, dtype=np.int64)
    for v in prange(n):
        roots[v] = _top(parent, parent[v])     # from an int64 (a prange index is unsigned)
    return roots


@njit(inline="always")
def _top(parent, a):
    """a's root, without writing."""
    while parent[a] != a:
        a = parent[a]
    return a
