"""Frontier helper, CUDA twin of kernels_cpu/frontier.py (a CuPy reduction)."""


def frontier_edges(out_degree, queue, qlen):
    if qlen == 0:
        return 0
    return int(out_degree[queue[:qlen]].sum())
