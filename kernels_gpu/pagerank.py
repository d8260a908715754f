"""PageRank kernels, CUDA twins of kernels_cpu/pagerank.py; no atomics.

pr_pull: one warp per local vertex, lanes stride over its in-edges reading float32 contributions,
a shuffle reduction in double. pr_contrib: one thread per vertex.
"""

import numpy as np

from ._cuda import WARP, function, i64, launch

SOURCE = r"""
__global__ void totem_pr_contrib(const double* rank, const i64* out_degree, float* contrib,
                                 i64 n) {
    i64 v = global_thread();
    if (v < n) contrib[v] = out_degree[v] > 0 ? (float)(rank[v] / out_degree[v]) : 0.0f;
}

template <typename I>
__global__ void totem_pr_pull(const i64* indptr, const I* indices, const float* contrib,
                              double* rank, i64 n, double base, double damping) {
    i64 v = global_thread() / 32;
    int lane = threadIdx.x & 31;
    if (v >= n) return;
    double s = 0.0;
    for (i64 e = indptr[v] + lane; e < indptr[v + 1]; e += 32) s += contrib[indices[e]];
    s = warp_sum(s);
    if (lane == 0) rank[v] = base + damping * s;
}
"""


def pr_contrib(rank, out_degree, contrib):
    launch(function(SOURCE, "totem_pr_contrib"), rank.size,
           (rank, out_degree, contrib, i64(rank.size)))


def pr_pull(indptr, indices, contrib, rank, base, damping):
    k = function(SOURCE, "totem_pr_pull", indices.dtype)
    launch(k, rank.size * WARP, (indptr, indices, contrib, rank, i64(rank.size),
                                 np.float64(base), np.float64(damping)))
