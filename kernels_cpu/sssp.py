"""SSSP kernels: frontier-based Bellman-Ford relaxation in delta-stepping buckets (push).

State: `dist` (float64, +inf unreached, the ghost slots in its tail: the outbox, reset to +inf each
step) and, for the local vertices lowered but not yet relaxed, two lists (Davidson et al.'s
near-far piles): the near list (dist < the bucket's bound: the next step's queue) and the far list
(the later buckets), with a `pending` flag per vertex saying which list holds it. A step relaxes
the near list only; the far list is split once per bucket (`sssp_split`), not rescanned every
step, and `far_min` (a lower bound of the far distances, kept by the writers) gives the next
bucket without a scan (each block of a kernel lowers it once). Nothing scans all vertices.
Races: distances drop through atomic_min (LLVM atomicrmw fmin); the writer that lowers a local
vertex claims its list with atomic_max on its flag (0 -> FAR, or anything -> NEAR), and only the
claimer appends it (a block-local buffer flushed with one atomic reservation per APPEND items), so
a vertex is on the near list at most once; a vertex moved from far to near leaves a stale far
entry that the next split drops. The plain reads before the atomics only skip updates that cannot
win: distances never grow, so a stale read is never too small.
Mapping: blocks of equal edge counts over the frontier's edge lists (hubs split across blocks).
"""

import numpy as np
from numba import njit, prange

from .atomics import PREFETCH, atomic_add, atomic_max, atomic_min, prefetch
from .jit import (APPEND, append, BLOCKS, block_edges, flush, frontier_blocks, kernel,
                  prefetch_rows)


NEAR, FAR = 2, 1      # pending flags: on the near list, on the far list (0: on neither)


@kernel("far_len", counter=True)
def sssp_split(dist, pending, far, far_len, bound, near, near_len, keep, keep_len, far_min):
    """A new bucket: far-list vertices with dist < bound move to the near list (claimed FAR ->
    NEAR), the other far ones go to `keep` (the caller then swaps far and keep) and far_min[0]
    becomes their smallest distance; stale entries (the vertex left the far list since) are
    dropped. The counters are arguments: Numba's parallel lowering may read a counter array
    allocated here before the loop's atomic adds land."""
    n = far_len[0]
    keep_len[0] = 0
    nblocks = min(n, BLOCKS)
    smallest = np.inf
    for b in prange(nblocks):
        moved = np.empty(APPEND, dtype=np.int64)
        kept = np.empty(APPEND, dtype=np.int64)
        n_moved = 0
        n_kept = 0
        end = (b + 1) * n // nblocks
        for i in range(b * n // nblocks, end):
            if i + PREFETCH < end:
                prefetch(pending, far[i + PREFETCH])
                prefetch(dist, far[i + PREFETCH])
            v = far[i]
            if pending[v] != FAR:
                continue
            d = dist[v]
            if d < bound:
                if atomic_max(pending, v, NEAR) == FAR:
                    n_moved = append(moved, n_moved, v, near, near_len)
            else:
                n_kept = append(kept, n_kept, v, keep, keep_len)
                smallest = min(smallest, d)
        flush(moved, n_moved, near, near_len)
        flush(kept, n_kept, keep, keep_len)
    far_min[0] = smallest


@kernel("near_len", counter=True)
def sssp_take(pending, near, near_len, n):
    """The near list becomes the step's queue: its vertices' flags are cleared (a vertex lowered
    again during the step is listed again) and the list is emptied; returns its length. `n`: that
    length when the caller knows it (a GPU twin then need not read it back), else -1."""
    n = near_len[0]
    for i in prange(n):
        pending[near[i]] = 0
    near_len[0] = 0
    return n


@njit(inline="always")
def _listed(pending, v, d, bound):
    """Vertex v's distance dropped to d: it goes on the near list (d < bound) unless it is there,
    or on the far list unless it is on either; returns 1 to append it to the near list, 2 to the
    far one, 0 for neither (the caller appends, and lowers far_min for d >= bound)."""
    if d < bound:
        if pending[v] != NEAR and atomic_max(pending, v, NEAR) != NEAR:
            return 1
        return 0
    if pending[v] == 0 and atomic_max(pending, v, FAR) == 0:
        return 2
    return 0


@kernel("qlen", serial_below=64, frontier=("indptr", "queue"))
def sssp_relax(indptr, indices, weights, n_local, dist, queue, qlen, pending, bound, near,
               near_len, far, far_len, far_min, touched, touched_len):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    for b in prange(nblocks):
        buf = np.empty(APPEND, dtype=np.int64)
        later = np.empty(APPEND, dtype=np.int64)
        sent = np.empty(APPEND, dtype=np.int64)
        count = 0
        n_later = 0
        n_sent = 0
        smallest = np.inf       # of the far distances this block wrote (one atomic per block)
        i, lo, hi = block_edges(offsets, nblocks, b)
        while lo < hi:
            prefetch_rows(indptr, indices, queue, qlen, i, dist)
            v = queue[i]
            dv = dist[v]
            stop = min(hi, offsets[i + 1])
            first = indptr[v] - offsets[i]
            end = first + stop
            for e in range(first + lo, end):
                if e + PREFETCH < end:
                    prefetch(dist, indices[e + PREFETCH])
                t = indices[e]
                nd = dv + weights[e]
                if nd < dist[t]:
                    old = atomic_min(dist, t, nd)
                    if nd < old:
                        if t >= n_local:
                            if old == np.inf:       # the ghost slot's first message
                                n_sent = append(sent, n_sent, t - n_local, touched, touched_len)
                            continue
                        if nd >= bound:
                            smallest = min(smallest, nd)
                        to = _listed(pending, t, nd, bound)
                        if to == 1:
                            count = append(buf, count, t, near, near_len)
                        elif to == 2:
                            n_later = append(later, n_later, t, far, far_len)
            lo = stop
            i += 1
        flush(buf, count, near, near_len)
        flush(later, n_later, far, far_len)
        flush(sent, n_sent, touched, touched_len)
        if smallest < far_min[0]:
            atomic_min(far_min, 0, smallest)


@kernel("inbox")
def sssp_scatter(inbox, lvids, dist, pending, bound, near, near_len, far, far_len, far_min):
    smallest = np.inf
    for i in prange(inbox.size):
        m = inbox[i]
        v = lvids[i]
        if m < dist[v] and m < atomic_min(dist, v, m):
            if m >= bound:
                smallest = min(smallest, m)
            to = _listed(pending, v, m, bound)
            if to == 1:
                near[atomic_add(near_len, 0, 1)] = v
            elif to == 2:
                far[atomic_add(far_len, 0, 1)] = v
    far_min[0] = min(far_min[0], smallest)
