"""Frontier helper: the length and edge count of the next queue (what a vote reports), taken
in one call that also empties the next queue's counter."""

from numba import prange

from .jit import kernel


@kernel("next_len", counter=True)
def frontier_count(out_degree, queue, next_len, counts):
    """counts = (n, sum of out-degrees of queue[:n]) for n = next_len[0]; then next_len[0] = 0."""
    n = next_len[0]
    total = 0
    for i in prange(n):
        total += out_degree[queue[i]]
    counts[0] = n
    counts[1] = total
    next_len[0] = 0
