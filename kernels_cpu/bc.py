"""Betweenness centrality kernels: Brandes' forward and backward phases (TOTEM fig. 18).

Forward (push, out-edges), level by level: a frontier vertex adds its path count sigma to every
neighbour that is unvisited or on the next level. Claims use atomic_min on the level, sigma grows
through atomic_add (fadd); boundary slots collect the sum of the senders' sigma (atomic_add).
Backward (pull, out-edges, no atomics): a vertex v on level d sums x(w) = (1 + delta(w)) / sigma(w)
over out-neighbours w on level d + 1 (remote ones arrive in ghosts, already 0 when not on d + 1);
delta(v) = sigma(v) * sum.
Mapping: equal-edge blocks over the frontier's edge lists, hubs split (forward); one iteration
per vertex of the level (backward: the forward queues, kept in order, list each level's vertices,
so no step scans all vertices). Backward takes a range of rows [first, end) and skips the level's
vertices outside it without reading their edges (edges streamed in chunks of rows); n_local stays
the first ghost slot.
"""

import numpy as np
from numba import prange

from .jit import APPEND, append, block_edges, flush, frontier_blocks, kernel, prefetch_rows

from .atomics import PREFETCH, atomic_add, atomic_min, prefetch
from .bfs import UNVISITED


@kernel("qlen", serial_below=64, frontier=("indptr", "queue"))
def bc_forward(indptr, indices, n_local, level, sigma, box, queue, qlen, depth, next_queue,
               next_len, touched, touched_len):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    for b in prange(nblocks):
        buf = np.empty(APPEND, dtype=np.int64)
        sent = np.empty(APPEND, dtype=np.int64)
        count = 0
        n_sent = 0
        i, lo, hi = block_edges(offsets, nblocks, b)
        while lo < hi:
            prefetch_rows(indptr, indices, queue, qlen, i, level)
            v = queue[i]
            sv = sigma[v]
            stop = min(hi, offsets[i + 1])
            first = indptr[v] - offsets[i]
            end = first + stop
            for e in range(first + lo, end):
                if e + PREFETCH < end:
                    prefetch(level, indices[e + PREFETCH])
                t = indices[e]
                if t < n_local:
                    lt = level[t]
                    if lt == UNVISITED or lt == depth + 1:
                        if atomic_min(level, t, depth + 1) == UNVISITED:
                            count = append(buf, count, t, next_queue, next_len)
                        atomic_add(sigma, t, sv)
                elif atomic_add(box, t - n_local, sv) == 0.0:     # sigma > 0: a first message
                    n_sent = append(sent, n_sent, t - n_local, touched, touched_len)
            lo = stop
            i += 1
        flush(buf, count, next_queue, next_len)
        flush(sent, n_sent, touched, touched_len)


@kernel("inbox")
def bc_forward_scatter(inbox, lvids, level, sigma, depth, next_queue, next_len):
    for i in prange(inbox.size):
        m = inbox[i]
        if m != 0.0:
            v = lvids[i]
            lv = level[v]
            if lv == UNVISITED or lv == depth + 1:
                if atomic_min(level, v, depth + 1) == UNVISITED:
                    next_queue[atomic_add(next_len, 0, 1)] = v
                sigma[v] += m


@kernel("lvids")
def bc_publish(level, sigma, delta, lvids, depth, out):
    """out[i] = (1 + delta) / sigma of lvids[i] if it is on level depth + 1, else 0."""
    for i in prange(lvids.size):
        v = lvids[i]
        out[i] = (1.0 + delta[v]) / sigma[v] if level[v] == depth + 1 else 0.0


@kernel("vertices", frontier=("indptr", "vertices"), first="first", end="end")
def bc_backward(indptr, indices, n_local, level, sigma, delta, ghosts, depth, bc, source,
                vertices, first=0, end=-1):
    """`vertices`: the local vertices on level `depth` (kept from the forward phase); only those
    in rows first..end-1 (end < 0: n_local) are done, the others skipped unread."""
    rows_end = n_local if end < 0 else end
    for i in prange(vertices.size):
        v = vertices[i]
        if v < first or v >= rows_end:
            continue
        s = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            t = indices[e]
            if t < n_local:
                if level[t] == depth + 1:
                    s += (1.0 + delta[t]) / sigma[t]
            else:
                s += ghosts[t - n_local]
        delta[v] = sigma[v] * s
        if v != source:
            bc[v] += delta[v]
