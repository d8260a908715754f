"""Boundary statistics of a vertex-to-partition assignment, without building local CSRs
(partitioners.estimate_stats calls it; raw arrays only).

One pass over the whole CSR in vertex order, in blocks of rows with about equal rows + edges
(`row_blocks`). Each block counts its boundary edges per source partition in its own row of
`counts` (no shared counters); marking remote targets is a benign race (every writer stores 1).
"""

import numpy as np
from numba import njit, prange

from .jit import BLOCKS, graph_kernel, row_blocks


@graph_kernel("indices")
def plan_cut_stats(indptr, indices, owner, n_parts, mark):
    """Boundary edges per partition (edges from its vertices to vertices owned elsewhere); sets
    mark[p, t] = 1 for every such target t of partition p, so that the count of ones in mark[p]
    is p's remote vertices (its ghost slots)."""
    n = indptr.size - 1
    bounds = row_blocks(indptr, n, BLOCKS)
    nblocks = bounds.size - 1
    counts = np.zeros((nblocks, n_parts), dtype=np.int64)
    for b in prange(nblocks):
        for u in range(bounds[b], bounds[b + 1]):
            p = owner[u]
            for e in range(indptr[u], indptr[u + 1]):
                t = indices[e]
                if owner[t] != p:
                    if mark[p, t] == 0:     # read first: a hub's line stays shared
                        mark[p, t] = 1
                    counts[b, p] += 1
    return counts.sum(axis=0)
