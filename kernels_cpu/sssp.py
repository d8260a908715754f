"""SSSP kernels: frontier-based Bellman-Ford relaxation in delta-stepping buckets (push).

State: `dist` (float64, +inf unreached) and `pending` flags (improved, not yet relaxed), both with
the ghost slots in their tail: the tail of `dist` is the outbox, reset to +inf each step.
A step relaxes the pending vertices of the current bucket (dist < bound); improvements inside the
bucket are relaxed again next step, those beyond wait for the next bucket.
Races: distances drop through atomic_min (LLVM atomicrmw fmin); a writer that lowered the value
flags the vertex pending (a benign store of 1). The plain read before the atomic only skips
relaxations that cannot win: distances never grow, so a stale read is never too small.
Mapping: one iteration per frontier vertex.
"""

import numpy as np
from numba import njit, prange

from .atomics import atomic_min
from .frontier import CHUNK


@njit(parallel=True, nogil=True, cache=True)
def sssp_frontier(n, dist, pending, bound, queue):
    """queue <- pending local vertices with dist < bound (in order), clearing their flag."""
    nchunks = (n + CHUNK - 1) // CHUNK
    counts = np.zeros(nchunks + 1, dtype=np.int64)
    for c in prange(nchunks):
        k = 0
        for v in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            k += pending[v] != 0 and dist[v] < bound
        counts[c + 1] = k
    offsets = np.cumsum(counts)
    for c in prange(nchunks):
        k = offsets[c]
        for v in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            if pending[v] != 0 and dist[v] < bound:
                queue[k] = v
                k += 1
                pending[v] = 0
    return offsets[-1]


@njit(parallel=True, nogil=True, cache=True)
def sssp_relax(indptr, indices, weights, dist, queue, qlen, pending):
    for i in prange(qlen):
        v = queue[i]
        dv = dist[v]
        for e in range(indptr[v], indptr[v + 1]):
            t = indices[e]
            nd = dv + weights[e]
            if nd < dist[t]:
                if nd < atomic_min(dist, t, nd):
                    pending[t] = 1


@njit(parallel=True, nogil=True, cache=True)
def sssp_scatter(inbox, boundary_lvid, dist, pending):
    for i in prange(inbox.size):
        m = inbox[i]
        if m < dist[boundary_lvid[i]]:
            if m < atomic_min(dist, boundary_lvid[i], m):
                pending[boundary_lvid[i]] = 1


@njit(parallel=True, nogil=True, cache=True)
def sssp_vote(n, dist, pending, bound):
    """(pending local vertices inside the bucket, smallest pending distance)."""
    active = 0
    smallest = np.inf
    for v in prange(n):
        if pending[v] != 0:
            d = dist[v]
            if d < bound:
                active += 1
            smallest = min(smallest, d)
    return active, smallest
