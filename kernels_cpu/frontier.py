"""Frontier helper: the length and edge count of the next queue (what a vote reports), taken
together with emptying the next queue's counter."""

from numba import prange

from .jit import kernel


@kernel("next_len", counter=True)
def frontier_count(out_degree, queue, next_len, work, out):
    """out = (n, sum of out-degrees of queue[:n]) for n = next_len[0]; then next_len[0] = 0.
    `work` (two zeros) is the GPU twin's; here it stays as it is."""
    n = next_len[0]
    total = 0
    for i in prange(n):
        total += out_degree[queue[i]]
    out[0] = n
    out[1] = total
    next_len[0] = 0
