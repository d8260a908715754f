"""PageRank kernels: pull over in-edges (TOTEM fig. 14), no atomics.

Each round: contrib(u) = rank(u) / outdeg(u) (0 for sinks), then
rank(v) = (1 - d) / n + d * sum over in-edges (u, v) of contrib(u). `contrib` holds the ghost
slots in its tail, filled by the exchange with the owners' contributions.
Mapping: blocks of rows with equal edges (row_blocks); each row is written only by its own
iteration.
"""

from numba import prange

from .jit import BLOCKS, kernel, row_blocks


@kernel("rank")
def pr_contrib(rank, out_degree, contrib):
    for v in prange(rank.size):  # contrib[:rank.size]: the local part
        d = out_degree[v]
        contrib[v] = rank[v] / d if d > 0 else 0.0   # float64 -> contrib's float32


@kernel("rank")
def pr_pull(indptr, indices, contrib, rank, base, damping):
    blocks = row_blocks(indptr, rank.size, BLOCKS)
    for b in prange(blocks.size - 1):
        for v in range(blocks[b], blocks[b + 1]):
            s = 0.0
            for e in range(indptr[v], indptr[v + 1]):
                s += contrib[indices[e]]
            rank[v] = base + damping * s
