"""PageRank kernels: pull over in-edges (TOTEM fig. 14), no atomics.

Each round: contrib(u) = rank(u) / outdeg(u) (0 for sinks), then
rank(v) = (1 - d) / n + d * sum over in-edges (u, v) of contrib(u). `contrib` holds the ghost
slots in its tail, filled by the exchange with the owners' contributions.
Mapping: blocks of equal edge counts over the whole CSR, rows cut across blocks (a hub's row can
hold a few percent of a partition's edges: a block of whole rows would leave its thread with all of
them). A row inside one block is written by it; the parts of a row cut across blocks are kept per
block and added up afterwards in block order, so the sums are deterministic and need no atomics.

PageRank-Delta (push over out-edges, totem_py/algorithms/pagerank_delta.py): `prd_take` moves the
queue's residuals into their ranks and sets each one's share, d * residual / outdeg, aside in
`push`; `prd_push` adds the shares to the out-neighbours' residuals (atomic_add; a ghost slot's
first message is recorded), with the mapping of the other push kernels: blocks of equal edge
counts over the queue's edge lists, hubs split across blocks; `prd_select` lists the vertices
whose residual exceeds the threshold, `prd_scatter` adds an inbox to the residuals.
"""

import numpy as np
from numba import prange

from .atomics import PREFETCH, atomic_add, prefetch
from .jit import (APPEND, BLOCKS, EDGES_PER_BLOCK, append, block_edges, flush, frontier_blocks,
                  kernel, prefetch_rows)


@kernel("rank")
def pr_contrib(rank, out_degree, contrib):
    for v in prange(rank.size):  # contrib[:rank.size]: the local part
        d = out_degree[v]
        contrib[v] = rank[v] / d if d > 0 else 0.0   # float64 -> contrib's float32


@kernel("rank", rows="indptr")
def pr_pull(indptr, indices, contrib, rank, base, damping):
    n = rank.size
    start = indptr[0]
    total = indptr[n] - start
    nblocks = max(1, min(BLOCKS * 4, total // EDGES_PER_BLOCK))
    # per block, the partial sums of the rows it shares with its neighbours (at most two)
    split_v = np.full((nblocks, 2), -1, dtype=np.int64)
    split_s = np.zeros((nblocks, 2), dtype=np.float64)
    for b in prange(nblocks):
        lo = start + total * b // nblocks
        hi = start + total * (b + 1) // nblocks
        v = np.searchsorted(indptr, lo, side="right") - 1
        while lo < hi and v < n:
            stop = min(hi, indptr[v + 1])
            s = 0.0
            for e in range(lo, stop):
                if e + PREFETCH < hi:       # the block's rows are contiguous: look across them
                    prefetch(contrib, indices[e + PREFETCH])
                s += contrib[indices[e]]
            if lo == indptr[v] and stop == indptr[v + 1]:
                rank[v] = base + damping * s
            else:
                k = 0 if split_v[b, 0] < 0 else 1
                split_v[b, k] = v
                split_s[b, k] = s
            lo = stop
            v += 1
    for v in prange(n):           # rows without edges
        if indptr[v] == indptr[v + 1]:
            rank[v] = base
    current = -1                  # rows split over blocks: add their parts in block order
    acc = 0.0
    for b in range(nblocks):
        for k in range(2):
            v = split_v[b, k]
            if v < 0:
                continue
            if v != current:
                if current >= 0:
                    rank[current] = base + damping * acc
                current = v
                acc = 0.0
            acc += split_s[b, k]
    if current >= 0:
        rank[current] = base + damping * acc


@kernel("qlen")
def prd_take(queue, qlen, residual, rank, out_degree, push, damping):
    for i in prange(qlen):
        v = queue[i]
        r = residual[v]
        residual[v] = 0.0
        rank[v] += r
        d = out_degree[v]
        push[v] = damping * r / d if d > 0 else 0.0


@kernel("qlen", serial_below=64, frontier=("indptr", "queue"))
def prd_push(indptr, indices, n_local, push, residual, queue, qlen, touched, touched_len):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    for b in prange(nblocks):
        sent = np.empty(APPEND, dtype=np.int64)
        n_sent = 0
        i, lo, hi = block_edges(offsets, nblocks, b)
        while lo < hi:
            prefetch_rows(indptr, indices, queue, qlen, i, residual)
            v = queue[i]
            share = push[v]
            stop = min(hi, offsets[i + 1])
            first = indptr[v] - offsets[i]
            end = first + stop
            for e in range(first + lo, end):
                if e + PREFETCH < end:
                    prefetch(residual, indices[e + PREFETCH])
                t = indices[e]
                if atomic_add(residual, t, share) == 0.0 and t >= n_local:   # share > 0
                    n_sent = append(sent, n_sent, t - n_local, touched, touched_len)
            lo = stop
            i += 1
        flush(sent, n_sent, touched, touched_len)


@kernel("inbox")
def prd_scatter(inbox, lvids, residual):
    for i in prange(inbox.size):      # one entry per vertex
        residual[lvids[i]] += inbox[i]


@kernel("n")
def prd_select(residual, n, threshold, next_queue, next_len):
    nblocks = max(1, min(BLOCKS, n // 4096))
    for b in prange(nblocks):
        buf = np.empty(APPEND, dtype=np.int64)
        count = 0
        for v in range(b * n // nblocks, (b + 1) * n // nblocks):
            if residual[v] > threshold:
                count = append(buf, count, v, next_queue, next_len)
        flush(buf, count, next_queue, next_len)
