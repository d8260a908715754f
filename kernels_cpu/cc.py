"""Afforest, the local phase of connected components (totem_py/algorithms/cc.py): a union-find
over a partition's vertices and ghost slots, hand-tuned (the rows of the giant component are read
only up to their ghost edges, which no functor over whole rows can skip).

Sutton, Ben-Nun, Barak, IPDPS'18; GAP's cc.cc: every local vertex and every ghost slot is a
union-find node (ghost slot s is node n_local + s). Link each vertex to its first SAMPLE
neighbours, compress, find the most frequent component, then link the remaining edges of the
vertices outside it; edges to ghosts are always linked, since a ghost has no edges of its own
here to link it from the other side. Trees always hang the higher node under the lower.
Races: links through compare-and-swap on the parent (atomic_cas, LLVM cmpxchg).
Mapping: one iteration per vertex (link, compress).
The link kernels take a range of rows (`first`, and the end: n_local for cc_link_sample, `end`
for cc_link_rest, whose n_local also tells ghosts apart) and read only those rows' edges, so the
edges can come in chunks of rows; which links are made depends on timing anyway, and the
components after compression are those of one call over all rows.
"""

import numpy as np
from numba import njit, prange

from .atomics import atomic_cas
from .jit import BLOCKS, kernel, row_blocks, spread

SAMPLE = 2


@njit(nogil=True, cache=True)
def _link(u, v, comp):
    p1 = comp[u]
    p2 = comp[v]
    while p1 != p2:
        high = max(p1, p2)
        low = min(p1, p2)
        p_high = comp[high]
        if p_high == low:
            break
        if p_high == high and atomic_cas(comp, high, high, low) == high:
            break
        p1 = comp[comp[high]]
        p2 = comp[low]


@kernel("comp")
def cc_compress(comp):
    for n in prange(comp.size):
        while comp[n] != comp[comp[n]]:
            comp[n] = comp[comp[n]]


@kernel("n_local", rows="indptr", first="first")
def cc_link_sample(indptr, indices, n_local, comp, r, first=0):
    """Link every vertex of rows first..n_local-1 to its r-th neighbour."""
    for u in prange(first, n_local):
        e = indptr[u] + r
        if e < indptr[u + 1]:
            _link(u, indices[e], comp)


@kernel("n_local", rows="indptr", first="first", end="end")
def cc_link_rest(indptr, indices, n_local, comp, skip, first=0, end=-1):
    """Link the edges not sampled of rows first..end-1 (end < 0: n_local); vertices of
    component `skip` link only their ghost edges, a prefix or a suffix of the row (the plan keeps
    a row's boundary edges together: kernels_cpu/plan.py). n_local stays the first ghost node
    whatever the rows."""
    rows_end = n_local if end < 0 else end
    blocks = row_blocks(indptr, rows_end, BLOCKS, first)
    nblocks = blocks.size - 1
    stride = spread(nblocks)    # rows of the skipped component cost little
    for i in prange(nblocks):
        b = i * stride % nblocks
        for u in range(blocks[b], blocks[b + 1]):
            start, stop = indptr[u], indptr[u + 1]
            if comp[u] == skip and stop > start and indices[start] >= n_local:
                e = start + SAMPLE
                while e < stop and indices[e] >= n_local:
                    _link(u, indices[e], comp)
                    e += 1
            elif comp[u] == skip:
                e = stop - 1
                while e >= start + SAMPLE and indices[e] >= n_local:
                    _link(u, indices[e], comp)
                    e -= 1
            else:
                for e in range(start + SAMPLE, stop):
                    _link(u, indices[e], comp)


@njit(nogil=True, cache=True)
def cc_frequent(comp, samples, seed):
    """The most frequent component among `samples` random nodes (-1 if there are none)."""
    if comp.size == 0:
        return -1
    np.random.seed(seed)
    picks = np.sort(comp[np.random.randint(0, comp.size, samples)])
    best, best_count, count = picks[0], 0, 0
    for i in range(picks.size):
        count = count + 1 if i > 0 and picks[i] == picks[i - 1] else 1
        if count > best_count:
            best, best_count = picks[i], count
    return best
