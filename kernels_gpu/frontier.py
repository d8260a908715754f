"""Frontier helpers: `frontier_edges`, CUDA twin of kernels_cpu/frontier.py (a CuPy reduction),
and `frontier_offsets`, the exclusive scan of a queue's degrees that the load-balanced push
kernels (lb_edge in _cuda.py) take."""

import cupy

from ._cuda import function, i64, launch

SOURCE = r"""
__global__ void totem_frontier_degrees(const i64* indptr, const i64* queue, i64 qlen,
                                       i64* offs) {
    i64 i = global_thread();
    if (i == 0) offs[0] = 0;
    if (i < qlen) offs[i + 1] = indptr[queue[i] + 1] - indptr[queue[i]];
}
"""


def frontier_offsets(indptr, queue, qlen):
    """(offs, total): offs[i] = edges of queue[:i], for i in 0..qlen; total = offs[qlen]."""
    offs = cupy.empty(qlen + 1, dtype=cupy.int64)
    launch(function(SOURCE, "totem_frontier_degrees"), max(qlen, 1),
           (indptr, queue, i64(qlen), offs))
    offs = cupy.cumsum(offs)
    return offs, int(offs[qlen])


def frontier_edges(out_degree, queue, qlen):
    if qlen == 0:
        return 0
    return int(out_degree[queue[:qlen]].sum())
