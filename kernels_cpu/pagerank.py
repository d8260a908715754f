"""PageRank kernels: pull over in-edges (TOTEM fig. 14), no atomics.

Each round: contrib(u) = rank(u) / outdeg(u) (0 for sinks), then
rank(v) = (1 - d) / n + d * sum over in-edges (u, v) of contrib(u). `contrib` holds the ghost
slots in its tail, filled by the exchange with the owners' contributions.
Mapping: blocks of equal edge counts over the whole CSR, rows cut across blocks (a hub's row can
hold a few percent of a partition's edges: a block of whole rows would leave its thread with all of
them). A row inside one block is written by it; the parts of a row cut across blocks are kept per
block and added up afterwards in block order, so the sums are deterministic and need no atomics.
"""

import numpy as np
from numba import prange

from .atomics import PREFETCH, prefetch
from .jit import BLOCKS, EDGES_PER_BLOCK, kernel


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
