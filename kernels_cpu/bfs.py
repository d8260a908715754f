"""BFS kernels: level-synchronous, top-down push and bottom-up pull (Beamer's direction
optimisation; TOTEM fig. 11 for the top-down form).

State: `level` (int32, UNVISITED = INT32_MAX), n_local entries followed by the ghost slots. In push
steps the tail is the outbox (reset to UNVISITED, the message identity, each step), so `level[t]`
serves local and remote targets alike. Bottom-up steps read no remote level: they get `level` over
the locals only and `ghosts`, a bitmap with bit s set when the remote vertex of ghost slot s is in
the frontier (the pull exchange's box, bit s & 7 of byte s >> 3), so target t is a frontier vertex
iff level[t] == depth (t < level.size) or bit t - level.size of ghosts.
Races: a vertex is claimed with atomic_min on its level; only the claimer (old == UNVISITED)
appends it to the next queue (local) or to the outbox's touched list (ghost), through a
block-local buffer flushed with one atomic reservation per APPEND items. Bottom-up rows are
written only by their own iteration, and bottom-up reads the local frontier from a bitmap built in
the same call (one word per iteration).
Mapping: blocks of equal edge counts over the frontier's edge lists, hubs split across blocks
(top-down), or blocks of rows with equal edges (bottom-up, row_blocks), spread over the threads
since visited rows cost nothing. Bottom-up walks rows [first, n_local) only (a chunk of rows: it
reads indptr[first..n_local] and those rows' edges, nothing else of the CSR); its `n_local` is that
range's end, the local vertex count being level.size.
"""

import numpy as np
from numba import prange

from .jit import (APPEND, BLOCKS, append, block_edges, flush, frontier_blocks, kernel,
                  prefetch_rows, row_blocks, spread)

from .atomics import PREFETCH, atomic_add, atomic_min, prefetch

UNVISITED = np.iinfo(np.int32).max


@kernel("qlen", serial_below=64, frontier=("indptr", "queue"))
def bfs_push(indptr, indices, n_local, level, queue, qlen, depth, next_queue, next_len,
             touched, touched_len):
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
            stop = min(hi, offsets[i + 1])
            first = indptr[v] - offsets[i]
            end = first + stop
            for e in range(first + lo, end):
                if e + PREFETCH < end:
                    prefetch(level, indices[e + PREFETCH])
                t = indices[e]
                if level[t] == UNVISITED:
                    if atomic_min(level, t, depth + 1) == UNVISITED:
                        if t < n_local:
                            count = append(buf, count, t, next_queue, next_len)
                        else:
                            n_sent = append(sent, n_sent, t - n_local, touched, touched_len)
            lo = stop
            i += 1
        flush(buf, count, next_queue, next_len)
        flush(sent, n_sent, touched, touched_len)


@kernel("n_local", rows="indptr", first="first")
def bfs_pull(indptr, indices, n_local, level, ghosts, depth, next_queue, next_len, first=0):
    """Rows first..n_local-1 (a chunk's rows when n_local is the chunk's end) of a partition
    whose level.size local vertices are followed by ghost slots, slot s in the frontier when bit
    s of the bitmap `ghosts` is set (bit s & 7 of byte s >> 3)."""
    # the local frontier as a bitmap (GAP's bottom-up): n/8 bytes stay in cache where the level
    # array (4n bytes) would be read at random, one cache miss per edge checked; the ghosts'
    # bits arrive as such from the exchange
    n_level = level.size
    bits = np.empty((n_level + 63) >> 6, dtype=np.int64)
    for w in prange(bits.size):
        word = 0
        for i in range(w << 6, min(n_level, (w + 1) << 6)):
            if level[i] == depth:
                word |= 1 << (i & 63)
        bits[w] = word
    blocks = row_blocks(indptr, n_local, BLOCKS, first)
    nblocks = blocks.size - 1
    stride = spread(nblocks)
    for i in prange(nblocks):
        b = i * stride % nblocks
        buf = np.empty(APPEND, dtype=np.int64)
        count = 0
        for v in range(blocks[b], blocks[b + 1]):
            if level[v] != UNVISITED:
                continue
            for e in range(indptr[v], indptr[v + 1]):
                t = indices[e]
                if t < n_level:
                    hit = (bits[t >> 6] >> (t & 63)) & 1
                else:
                    s = t - n_level
                    hit = (ghosts[s >> 3] >> (s & 7)) & 1
                if hit:
                    level[v] = depth + 1
                    count = append(buf, count, v, next_queue, next_len)
                    break
        flush(buf, count, next_queue, next_len)


@kernel("lvids")
def bfs_flags(level, lvids, depth, out):
    """out[i] = whether vertex lvids[i] is in the frontier (level == depth): what a bottom-up
    step's owners publish for their boundary vertices."""
    for i in prange(lvids.size):
        out[i] = level[lvids[i]] == depth


@kernel("inbox")
def bfs_scatter(inbox, lvids, level, next_queue, next_len):
    for i in prange(inbox.size):
        m = inbox[i]
        if m != UNVISITED:
            v = lvids[i]
            if atomic_min(level, v, m) == UNVISITED:
                next_queue[atomic_add(next_len, 0, 1)] = v
