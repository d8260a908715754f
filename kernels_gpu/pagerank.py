"""PageRank kernels, CUDA twins of kernels_cpu/pagerank.py; no atomics.

pr_pull: one warp per local vertex, lanes stride over its in-edges reading float32 contributions,
a shuffle reduction in double. pr_contrib: one thread per vertex.

PageRank-Delta: prd_push, one thread per frontier edge (load-balanced, lb_edges in _cuda.py),
atomicAdd (double) on the residuals and ghost slots; prd_take, prd_select and prd_scatter, one
thread per item.
"""

import numpy as np

from ._cuda import WARP, function, i64, launch, launch_edges
from .frontier import frontier_offsets

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

__global__ void totem_prd_take(const i64* queue, i64 qlen, double* residual, double* rank,
                               const i64* out_degree, double* push, double damping) {
    i64 i = global_thread();
    if (i >= qlen) return;
    i64 v = queue[i];
    double r = residual[v];
    residual[v] = 0.0;
    rank[v] += r;
    push[v] = out_degree[v] > 0 ? damping * r / out_degree[v] : 0.0;
}

template <typename I>
__global__ void totem_prd_push(const i64* indptr, const I* indices, i64 n_local,
                               const double* push, double* residual, const i64* queue,
                               const i64* offs, i64 qlen, i64* touched, i64* touched_len) {
    lb_edges(indptr, queue, offs, qlen, [&](i64 v, i64 e, i64) {
        i64 t = indices[e];
        if (atomicAdd(&residual[t], push[v]) == 0.0 && t >= n_local)    // a share is > 0
            touched[atomicAdd((u64*)touched_len, 1ULL)] = t - n_local;
    });
}

__global__ void totem_prd_scatter(const double* inbox, const i64* lvids, i64 n,
                                  double* residual) {
    i64 i = global_thread();
    if (i < n) residual[lvids[i]] += inbox[i];
}

__global__ void totem_prd_select(const double* residual, i64 n, double threshold,
                                 i64* next_queue, i64* next_len) {
    i64 v = global_thread();
    if (v < n && residual[v] > threshold) next_queue[atomicAdd((u64*)next_len, 1ULL)] = v;
}
"""


def pr_contrib(rank, out_degree, contrib):
    launch(function(SOURCE, "totem_pr_contrib"), rank.size,
           (rank, out_degree, contrib, i64(rank.size)))


def pr_pull(indptr, indices, contrib, rank, base, damping):
    k = function(SOURCE, "totem_pr_pull", indices.dtype)
    launch(k, rank.size * WARP, (indptr, indices, contrib, rank, i64(rank.size),
                                 np.float64(base), np.float64(damping)))


def prd_take(queue, qlen, residual, rank, out_degree, push, damping):
    launch(function(SOURCE, "totem_prd_take"), qlen,
           (queue, i64(qlen), residual, rank, out_degree, push, np.float64(damping)))


def prd_push(indptr, indices, n_local, push, residual, queue, qlen, touched, touched_len):
    offs = frontier_offsets(indptr, queue, qlen)
    k = function(SOURCE, "totem_prd_push", indices.dtype)
    launch_edges(k, qlen, (indptr, indices, i64(n_local), push, residual, queue, offs, i64(qlen),
                           touched, touched_len))


def prd_scatter(inbox, lvids, residual):
    launch(function(SOURCE, "totem_prd_scatter"), inbox.size,
           (inbox, lvids, i64(inbox.size), residual))


def prd_select(residual, n, threshold, next_queue, next_len):
    launch(function(SOURCE, "totem_prd_select"), n,
           (residual, i64(n), np.float64(threshold), next_queue, next_len))
