"""Frontier helper: the edge count of a queue (the direction heuristic's frontier edges)."""

from numba import prange

from .jit import kernel


@kernel("qlen")
def frontier_edges(out_degree, queue, qlen):
    """Sum of out-degrees of queue[:qlen]."""
    total = 0
    for i in prange(qlen):
        total += out_degree[queue[i]]
    return total
