"""SSSP kernels: frontier-based Bellman-Ford relaxation in delta-stepping buckets (push).

State: `dist` (float64, +inf unreached) and `pending` flags, both with the ghost slots in their
tail (the tail of `dist` is the outbox, reset to +inf each step), and a work list of the pending
local vertices (improved, not yet relaxed). A step relaxes the pending vertices of the current
bucket (dist < bound); the rest stay on the list for a later bucket. Nothing scans all vertices.
Races: distances drop through atomic_min (LLVM atomicrmw fmin); the writer that lowers a local
vertex claims its pending flag with atomic_max, and only the claimer appends it to the work list
(a block-local buffer flushed with one atomic reservation per APPEND items), so a vertex is on
the list at most once. The plain read before the atomic only
skips relaxations that cannot win: distances never grow, so a stale read is never too small.
Mapping: blocks of equal edge counts over the frontier's edge lists (hubs split across blocks).
"""

import numpy as np
from numba import prange

from .atomics import atomic_add, atomic_max, atomic_min
from .jit import APPEND, append, BLOCKS, block_edges, flush, frontier_blocks, kernel


@kernel("work_len", counter=True)
def sssp_split(dist, pending, work, work_len, bound, queue, queue_len, keep, keep_len):
    """Work-list vertices with dist < bound go to `queue` (their flag cleared), the others to
    `keep` (the caller then swaps work and keep). The counters are arguments: Numba's parallel
    lowering may read a counter array allocated here before the loop's atomic adds land."""
    n = work_len[0]
    queue_len[0] = 0
    keep_len[0] = 0
    nblocks = min(n, BLOCKS)
    for b in prange(nblocks):
        near = np.empty(APPEND, dtype=np.int64)
        far = np.empty(APPEND, dtype=np.int64)
        n_near = 0
        n_far = 0
        for i in range(b * n // nblocks, (b + 1) * n // nblocks):
            v = work[i]
            if dist[v] < bound:
                pending[v] = 0
                n_near = append(near, n_near, v, queue, queue_len)
            else:
                n_far = append(far, n_far, v, keep, keep_len)
        flush(near, n_near, queue, queue_len)
        flush(far, n_far, keep, keep_len)


@kernel("qlen", serial_below=64, frontier=("indptr", "queue"))
def sssp_relax(indptr, indices, weights, n_local, dist, queue, qlen, pending, work, work_len,
               touched, touched_len):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    for b in prange(nblocks):
        buf = np.empty(APPEND, dtype=np.int64)
        sent = np.empty(APPEND, dtype=np.int64)
        count = 0
        n_sent = 0
        i, lo, hi = block_edges(offsets, nblocks, b)
        while lo < hi:
            v = queue[i]
            dv = dist[v]
            stop = min(hi, offsets[i + 1])
            first = indptr[v] - offsets[i]
            for e in range(first + lo, first + stop):
                t = indices[e]
                nd = dv + weights[e]
                if nd < dist[t]:
                    old = atomic_min(dist, t, nd)
                    if nd < old:
                        if t >= n_local:
                            if old == np.inf:       # the ghost slot's first message
                                n_sent = append(sent, n_sent, t - n_local, touched, touched_len)
                        elif pending[t] == 0 and atomic_max(pending, t, 1) == 0:
                            count = append(buf, count, t, work, work_len)
            lo = stop
            i += 1
        flush(buf, count, work, work_len)
        flush(sent, n_sent, touched, touched_len)


@kernel("inbox")
def sssp_scatter(inbox, lvids, dist, pending, work, work_len):
    for i in prange(inbox.size):
        m = inbox[i]
        v = lvids[i]
        if m < dist[v]:
            if m < atomic_min(dist, v, m) and pending[v] == 0:
                if atomic_max(pending, v, 1) == 0:
                    work[atomic_add(work_len, 0, 1)] = v


@kernel("work_len", counter=True)
def sssp_vote(dist, work, work_len, bound):
    """(work-list vertices inside the bucket, smallest distance on the list)."""
    active = 0
    smallest = np.inf
    for i in prange(work_len[0]):
        d = dist[work[i]]
        if d < bound:
            active += 1
        smallest = min(smallest, d)
    return active, smallest
