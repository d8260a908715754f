"""SSSP kernels, CUDA twins of kernels_cpu/sssp.py (same names, arguments and state).

sssp_relax: one thread per frontier edge (load-balanced, lb_edges in _cuda.py), weights float32 or
float64 (bsp/partition.py places float32 when exact); distances drop through a
64-bit atomicMin on the bit patterns (non-negative doubles order like integers); the lowering
writer claims its list with atomicMax on its pending flag and appends the vertex (the near-far
lists of kernels_cpu/sssp.py). sssp_split: one thread per far-list entry, this bucket's to the
near list and the others to `keep` through atomic counters (the order within each is not kept: no
result depends on it), far_min lowered by atomicMin. sssp_take: grid-stride over the near list.
"""

import numpy as np

from ._cuda import function, i64, launch, launch_edges, launch_strided, zero
from .boxes import box_fill
from .frontier import frontier_offsets

SOURCE = r"""
#define NEAR 2
#define FAR 1

__global__ void totem_sssp_split(const double* dist, int* pending, const i64* far, i64 n,
                                 double bound, i64* near, i64* near_len, i64* keep,
                                 i64* keep_len, double* far_min) {
    i64 i = global_thread();
    if (i >= n) return;
    i64 v = far[i];
    if (pending[v] != FAR) return;
    double d = dist[v];
    if (d < bound) {
        if (atomicMax(&pending[v], NEAR) == FAR) near[atomicAdd((u64*)near_len, 1ULL)] = v;
    } else {
        keep[atomicAdd((u64*)keep_len, 1ULL)] = v;
        if (d < *far_min) atomic_min_nonneg(far_min, d);
    }
}

__global__ void totem_sssp_take(int* pending, const i64* near, const i64* near_len) {
    i64 n = *near_len;
    for (i64 i = global_thread(); i < n; i += (i64)gridDim.x * blockDim.x) pending[near[i]] = 0;
}

// vertex v's distance dropped to d: onto the near list (d < bound) unless there, or onto the
// far list unless on either (lowering far_min)
__device__ __forceinline__ void listed(int* pending, i64 v, double d, double bound, i64* near,
                                       i64* near_len, i64* far, i64* far_len, double* far_min) {
    if (d < bound) {
        if (pending[v] != NEAR && atomicMax(&pending[v], NEAR) != NEAR)
            near[atomicAdd((u64*)near_len, 1ULL)] = v;
        return;
    }
    if (d < *far_min) atomic_min_nonneg(far_min, d);
    if (pending[v] == 0 && atomicMax(&pending[v], FAR) == 0)
        far[atomicAdd((u64*)far_len, 1ULL)] = v;
}

template <typename I, typename W>
__global__ void totem_sssp_relax(const i64* indptr, const I* indices, const W* weights,
                                 i64 n_local, double* dist, const i64* queue, const i64* offs,
                                 i64 qlen, int* pending, double bound, i64* near, i64* near_len,
                                 i64* far, i64* far_len, double* far_min, i64* touched,
                                 i64* touched_len) {
    lb_edges(indptr, queue, offs, qlen, [&](i64 v, i64 e, i64) {
        i64 t = indices[e];
        double nd = dist[v] + (double)weights[e];
        if (nd >= dist[t]) return;
        double old = atomic_min_nonneg(&dist[t], nd);
        if (nd >= old) return;
        if (t >= n_local) {
            if (isinf(old)) touched[atomicAdd((u64*)touched_len, 1ULL)] = t - n_local;
        } else {
            listed(pending, t, nd, bound, near, near_len, far, far_len, far_min);
        }
    });
}

__global__ void totem_sssp_scatter(const double* inbox, const i64* lvids, i64 n, double* dist,
                                   int* pending, double bound, i64* near, i64* near_len,
                                   i64* far, i64* far_len, double* far_min) {
    i64 i = global_thread();
    if (i >= n) return;
    double m = inbox[i];
    i64 v = lvids[i];
    if (m < dist[v] && m < atomic_min_nonneg(&dist[v], m))
        listed(pending, v, m, bound, near, near_len, far, far_len, far_min);
}
"""


def sssp_split(dist, pending, far, far_len, bound, near, near_len, keep, keep_len, far_min):
    n = int(far_len[0])
    zero(keep_len)
    box_fill(far_min, np.inf)
    launch(function(SOURCE, "totem_sssp_split"), n,
           (dist, pending, far, i64(n), np.float64(bound), near, near_len, keep, keep_len,
            far_min))


def sssp_take(pending, near, near_len, n):
    launch_strided(function(SOURCE, "totem_sssp_take"), (pending, near, near_len))
    n = int(near_len[0]) if n < 0 else n
    zero(near_len)
    return n


def sssp_relax(indptr, indices, weights, n_local, dist, queue, qlen, pending, bound, near,
               near_len, far, far_len, far_min, touched, touched_len):
    offs = frontier_offsets(indptr, queue, qlen)
    k = function(SOURCE, "totem_sssp_relax", indices.dtype, weights.dtype)
    launch_edges(k, qlen, (indptr, indices, weights, i64(n_local), dist, queue, offs, i64(qlen),
                      pending, np.float64(bound), near, near_len, far, far_len, far_min,
                      touched, touched_len))


def sssp_scatter(inbox, lvids, dist, pending, bound, near, near_len, far, far_len, far_min):
    launch(function(SOURCE, "totem_sssp_scatter"), inbox.size,
           (inbox, lvids, i64(inbox.size), dist, pending, np.float64(bound), near, near_len,
            far, far_len, far_min))
