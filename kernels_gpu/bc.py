"""Betweenness kernels, CUDA twins of kernels_cpu/bc.py (Brandes forward and backward phases).

bc_forward: one thread per frontier edge (load-balanced, lb_edges in _cuda.py); atomicMin
claims a level, atomicAdd (double) grows sigma and the boundary slots. bc_backward: one warp per
vertex of the level, lanes stride over its out-edges, shuffle-reduced; no atomics; warps whose
vertex is outside rows [first, end) return at once, reading no edges (n_local stays the first
ghost slot). Scatter and publish: one thread per entry.
"""

import numpy as np

from ._cuda import WARP, function, i64, launch, launch_edges
from .frontier import frontier_offsets

SOURCE = r"""
template <typename I>
__global__ void totem_bc_forward(const i64* indptr, const I* indices, i64 n_local, int* level,
                                 double* sigma, double* box, const i64* queue,
                                 const i64* offs, i64 qlen, int depth, i64* next_queue,
                                 i64* next_len, i64* touched, i64* touched_len) {
    lb_edges(indptr, queue, offs, qlen, [&](i64 v, i64 e, i64) {
        i64 t = indices[e];
        double sv = sigma[v];
        if (t < n_local) {
            int lt = level[t];
            if (lt == UNVISITED || lt == depth + 1) {
                if (atomicMin(&level[t], depth + 1) == UNVISITED)
                    next_queue[atomicAdd((u64*)next_len, 1ULL)] = t;
                atomicAdd(&sigma[t], sv);
            }
        } else if (atomicAdd(&box[t - n_local], sv) == 0.0) {   // sigma > 0: a first message
            touched[atomicAdd((u64*)touched_len, 1ULL)] = t - n_local;
        }
    });
}

__global__ void totem_bc_forward_scatter(const double* inbox, const i64* lvids, i64 n,
                                         int* level, double* sigma, int depth, i64* next_queue,
                                         i64* next_len) {
    i64 i = global_thread();
    if (i >= n || inbox[i] == 0.0) return;
    i64 v = lvids[i];
    int lv = level[v];
    if (lv == UNVISITED || lv == depth + 1) {
        if (atomicMin(&level[v], depth + 1) == UNVISITED)
            next_queue[atomicAdd((u64*)next_len, 1ULL)] = v;
        sigma[v] += inbox[i];
    }
}

__global__ void totem_bc_publish(const int* level, const double* sigma, const double* delta,
                                 const i64* lvids, i64 n, int depth, double* out) {
    i64 i = global_thread();
    if (i >= n) return;
    i64 v = lvids[i];
    out[i] = level[v] == depth + 1 ? (1.0 + delta[v]) / sigma[v] : 0.0;
}

template <typename I>
__global__ void totem_bc_backward(const i64* indptr, const I* indices, i64 n_local,
                                  const int* level, const double* sigma, double* delta,
                                  const double* ghosts, int depth, double* bc, i64 source,
                                  const i64* vertices, i64 n, i64 first, i64 end) {
    i64 w = global_thread() / 32;
    int lane = threadIdx.x & 31;
    if (w >= n) return;
    i64 v = vertices[w];
    if (v < first || v >= end) return;     // the whole warp: w, hence v, is the same on all lanes
    double s = 0.0;
    for (i64 e = indptr[v] + lane; e < indptr[v + 1]; e += 32) {
        i64 t = indices[e];
        if (t < n_local) {
            if (level[t] == depth + 1) s += (1.0 + delta[t]) / sigma[t];
        } else {
            s += ghosts[t - n_local];
        }
    }
    s = warp_sum(s);
    if (lane == 0) {
        delta[v] = sigma[v] * s;
        if (v != source) bc[v] += delta[v];
    }
}
"""


def bc_forward(indptr, indices, n_local, level, sigma, box, queue, qlen, depth, next_queue,
               next_len, touched, touched_len):
    offs = frontier_offsets(indptr, queue, qlen)
    launch_edges(function(SOURCE, "totem_bc_forward", indices.dtype), qlen,
           (indptr, indices, i64(n_local), level, sigma, box, queue, offs, i64(qlen),
            np.int32(depth), next_queue, next_len, touched, touched_len))


def bc_forward_scatter(inbox, lvids, level, sigma, depth, next_queue, next_len):
    launch(function(SOURCE, "totem_bc_forward_scatter"), inbox.size,
           (inbox, lvids, i64(inbox.size), level, sigma, np.int32(depth), next_queue, next_len))


def bc_publish(level, sigma, delta, lvids, depth, out):
    launch(function(SOURCE, "totem_bc_publish"), lvids.size,
           (level, sigma, delta, lvids, i64(lvids.size), np.int32(depth), out))


def bc_backward(indptr, indices, n_local, level, sigma, delta, ghosts, depth, bc, source,
                vertices, first=0, end=-1):
    end = n_local if end < 0 else end
    launch(function(SOURCE, "totem_bc_backward", indices.dtype), vertices.size * WARP,
           (indptr, indices, i64(n_local), level, sigma, delta, ghosts, np.int32(depth), bc,
            i64(source), vertices, i64(vertices.size), i64(first), i64(end)))
