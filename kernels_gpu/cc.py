"""Afforest's kernels, CUDA twins of kernels_cpu/cc.py (the local phase of connected components).

Links use atomicCAS on the parent array (higher node under lower). Linking and compressing map one
thread per node; cc_link_rest maps one warp per vertex so hubs' edges spread over the lanes, and
of a row of the skipped component reads only the ghost edges, a prefix or a suffix (none when
there are no ghost nodes), as kernels_cpu/cc.py does;
cc_frequent samples on the device and counts on the host. The link kernels walk a range of rows
(thread or warp i takes vertex first + i, up to n_local for cc_link_sample and `end` for
cc_link_rest, whose n_local still tells ghosts apart).
"""

import cupy
import numpy as np

from ._cuda import WARP, function, i64, launch

SAMPLE = 2

SOURCE = r"""
#define SAMPLE 2
__device__ void link(i64 u, i64 v, i64* comp) {
    i64 p1 = comp[u], p2 = comp[v];
    while (p1 != p2) {
        i64 high = p1 > p2 ? p1 : p2, low = p1 > p2 ? p2 : p1;
        i64 p_high = comp[high];
        if (p_high == low) break;
        if (p_high == high && atomicCAS((u64*)&comp[high], (u64)high, (u64)low) == (u64)high)
            break;
        p1 = comp[comp[high]];
        p2 = comp[low];
    }
}

__global__ void totem_cc_compress(i64* comp, i64 n) {
    i64 x = global_thread();
    if (x >= n) return;
    while (comp[x] != comp[comp[x]]) comp[x] = comp[comp[x]];
}

template <typename I>
__global__ void totem_cc_link_sample(const i64* indptr, const I* indices, i64 n_local, i64* comp,
                                     int r, i64 first) {
    i64 u = first + global_thread();
    if (u >= n_local) return;
    i64 e = indptr[u] + r;
    if (e < indptr[u + 1]) link(u, indices[e], comp);
}

template <typename I>
__global__ void totem_cc_link_rest(const i64* indptr, const I* indices, i64 n_local, i64 n_nodes,
                                   i64* comp, i64 skip, i64 first, i64 end) {
    i64 u = first + global_thread() / 32;
    int lane = threadIdx.x & 31;
    if (u >= end) return;
    i64 row = indptr[u], start = row + SAMPLE, stop = indptr[u + 1];
    if (!__shfl_sync(0xffffffffu, comp[u] == skip, 0)) {
        for (i64 e = start + lane; e < stop; e += 32) link(u, indices[e], comp);
        return;
    }
    // the skipped component links only its ghost edges, a prefix or a suffix of the row
    if (n_nodes == n_local || start >= stop) return;
    bool prefix = indices[row] >= n_local;
    for (i64 k = lane; k - lane < stop - start; k += 32) {   // the warp's lanes stay together
        bool inside = k < stop - start;
        i64 t = inside ? (i64)indices[prefix ? start + k : stop - 1 - k] : 0;
        if (inside && t >= n_local) link(u, t, comp);
        if (__any_sync(0xffffffffu, inside && t < n_local)) break;
    }
}

"""


def cc_compress(comp):
    launch(function(SOURCE, "totem_cc_compress"), comp.size, (comp, i64(comp.size)))


def cc_link_sample(indptr, indices, n_local, comp, r, first=0):
    launch(function(SOURCE, "totem_cc_link_sample", indices.dtype), n_local - first,
           (indptr, indices, i64(n_local), comp, np.int32(r), i64(first)))


def cc_link_rest(indptr, indices, n_local, comp, skip, first=0, end=-1):
    end = n_local if end < 0 else end
    launch(function(SOURCE, "totem_cc_link_rest", indices.dtype), (end - first) * WARP,
           (indptr, indices, i64(n_local), i64(comp.size), comp, i64(skip), i64(first),
            i64(end)))


def cc_frequent(comp, samples, seed):
    if comp.size == 0:
        return -1
    picks = np.random.default_rng(seed).integers(0, comp.size, samples)
    values, counts = np.unique(comp[cupy.asarray(picks)].get(), return_counts=True)
    return int(values[np.argmax(counts)])
