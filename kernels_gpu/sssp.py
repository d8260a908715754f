"""SSSP kernels, CUDA twins of kernels_cpu/sssp.py (same names, arguments and state).

sssp_relax: one thread per frontier edge (load-balanced, lb_edge in _cuda.py), weights float32 or
float64 (bsp/partition.py places float32 when exact); distances drop through a
64-bit atomicMin on the bit patterns (non-negative doubles order like integers); the lowering
writer claims the pending flag with atomicMax and appends the vertex. sssp_split: one thread per
work-list entry, near entries to the queue and far ones to `keep` through atomic counters (the
order within each is not kept: no result depends on it). sssp_vote: a CuPy reduction.
"""

import numpy as np

from ._cuda import function, i64, launch
from .frontier import frontier_offsets

SOURCE = r"""
__global__ void totem_sssp_split(const double* dist, int* pending, const i64* work, i64 n,
                                 double bound, i64* queue, i64* queue_len, i64* keep,
                                 i64* keep_len) {
    i64 i = global_thread();
    if (i >= n) return;
    i64 v = work[i];
    if (dist[v] < bound) {
        queue[atomicAdd((u64*)queue_len, 1ULL)] = v;
        pending[v] = 0;
    } else {
        keep[atomicAdd((u64*)keep_len, 1ULL)] = v;
    }
}

template <typename I, typename W>
__global__ void totem_sssp_relax(const i64* indptr, const I* indices, const W* weights,
                                 i64 n_local, double* dist, const i64* queue, const i64* offs,
                                 i64 qlen, int* pending, i64* work, i64* work_len, i64* touched,
                                 i64* touched_len) {
    i64 v, e;
    if (!lb_edge(indptr, queue, offs, qlen, &v, &e)) return;
    i64 t = indices[e];
    double nd = dist[v] + (double)weights[e];
    if (nd >= dist[t]) return;
    double old = atomic_min_nonneg(&dist[t], nd);
    if (nd >= old) return;
    if (t >= n_local) {
        if (isinf(old)) touched[atomicAdd((u64*)touched_len, 1ULL)] = t - n_local;
    } else if (pending[t] == 0 && atomicMax(&pending[t], 1) == 0) {
        work[atomicAdd((u64*)work_len, 1ULL)] = t;
    }
}

__global__ void totem_sssp_scatter(const double* inbox, const i64* lvids, i64 n, double* dist,
                                   int* pending, i64* work, i64* work_len) {
    i64 i = global_thread();
    if (i >= n) return;
    double m = inbox[i];
    i64 v = lvids[i];
    if (m < dist[v] && m < atomic_min_nonneg(&dist[v], m) && pending[v] == 0
            && atomicMax(&pending[v], 1) == 0)
        work[atomicAdd((u64*)work_len, 1ULL)] = v;
}
"""


def sssp_split(dist, pending, work, work_len, bound, queue, queue_len, keep, keep_len):
    n = int(work_len[0])
    queue_len[0] = 0
    keep_len[0] = 0
    launch(function(SOURCE, "totem_sssp_split"), n,
           (dist, pending, work, i64(n), np.float64(bound), queue, queue_len, keep, keep_len))


def sssp_relax(indptr, indices, weights, n_local, dist, queue, qlen, pending, work, work_len,
               touched, touched_len):
    offs, total = frontier_offsets(indptr, queue, qlen)
    k = function(SOURCE, "totem_sssp_relax", indices.dtype, weights.dtype)
    launch(k, total, (indptr, indices, weights, i64(n_local), dist, queue, offs, i64(qlen),
                      pending, work, work_len, touched, touched_len))


def sssp_scatter(inbox, lvids, dist, pending, work, work_len):
    launch(function(SOURCE, "totem_sssp_scatter"), inbox.size,
           (inbox, lvids, i64(inbox.size), dist, pending, work, work_len))


def sssp_vote(dist, work, work_len, bound):
    n = int(work_len[0])
    if n == 0:
        return 0, np.inf
    d = dist[work[:n]]
    return int((d < bound).sum()), float(d.min())
