"""Frontier helpers: flags -> queue compaction and the edge count of a queue.

Compaction is two parallel passes over fixed chunks (count, then fill at the chunk's prefix
offset), so the queue comes out in vertex order without atomics.
"""

import numpy as np
from numba import njit, prange

CHUNK = 1 << 14


@njit(parallel=True, nogil=True, cache=True)
def frontier_from_flags(flags, queue):
    """queue[:k] = vertices whose flag is set, in order; clears the flags; returns k."""
    n = flags.size
    nchunks = (n + CHUNK - 1) // CHUNK
    counts = np.zeros(nchunks + 1, dtype=np.int64)
    for c in prange(nchunks):
        k = 0
        for v in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            k += flags[v] != 0
        counts[c + 1] = k
    offsets = np.cumsum(counts)
    for c in prange(nchunks):
        k = offsets[c]
        for v in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            if flags[v] != 0:
                queue[k] = v
                k += 1
                flags[v] = 0
    return offsets[-1]


@njit(parallel=True, nogil=True, cache=True)
def frontier_edges(out_degree, queue, qlen):
    """Sum of out-degrees of queue[:qlen] (the direction heuristic's frontier edges)."""
    total = 0
    for i in prange(qlen):
        total += out_degree[queue[i]]
    return total
