"""Compiling and launching the CUDA sources of kernels_gpu/ through CuPy.

Each kernel module keeps its CUDA source as a string beside its launchers. Sources are compiled on
first use with NVRTC and memoised per device and per template instantiation (the index type of
the CSR, the value type of a box). Every kernel name carries the `totem_` prefix.
"""

import functools

import cupy
import numpy as np

THREADS = 256
WARP = 32

PRELUDE = r"""
#include <cuda/std/climits>
typedef long long i64;
typedef unsigned long long u64;
#define UNVISITED INT_MAX
__device__ __forceinline__ i64 global_thread() {
    return (i64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ double warp_sum(double x) {
    for (int o = 16; o > 0; o >>= 1) x += __shfl_down_sync(0xffffffffu, x, o);
    return x;
}
// Load-balanced frontier expansion (Gunrock's LB advance): the frontier's edges are numbered
// 0..total-1 in queue order, offs being the exclusive scan of the frontier's degrees, and each
// thread takes one edge, so a hub's edges spread over as many threads as it has edges and a
// degree-1 vertex costs one thread. Thread 0 of a block finds the frontier items its block's
// edges span; each thread then searches that short, cached range.
__device__ __forceinline__ i64 lb_find(const i64* offs, i64 lo, i64 hi, i64 k) {
    while (hi - lo > 1) {      // the last i in [lo, hi) with offs[i] <= k
        i64 mid = (lo + hi) >> 1;
        if (offs[mid] <= k) lo = mid; else hi = mid;
    }
    return lo;
}
// every thread of the block must call this (it synchronises the block)
__device__ __forceinline__ bool lb_edge(const i64* indptr, const i64* queue, const i64* offs,
                                        i64 qlen, i64* v, i64* e) {
    __shared__ i64 span[2];
    i64 total = offs[qlen];
    i64 k0 = (i64)blockIdx.x * blockDim.x;
    if (threadIdx.x == 0) {
        span[0] = lb_find(offs, 0, qlen, k0);
        i64 k1 = min(k0 + (i64)blockDim.x, total) - 1;
        span[1] = lb_find(offs, span[0], qlen, k1) + 1;
    }
    __syncthreads();
    i64 k = k0 + threadIdx.x;
    if (k >= total) return false;
    i64 i = lb_find(offs, span[0], span[1], k);
    *v = queue[i];
    *e = indptr[*v] + (k - offs[i]);
    return true;
}
// dist >= 0 everywhere, so the bit patterns of doubles order like 64-bit integers
__device__ __forceinline__ double atomic_min_nonneg(double* a, double v) {
    return __longlong_as_double(atomicMin((i64*)a, __double_as_longlong(v)));
}
"""

CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "i64",
          np.dtype(np.float32): "float", np.dtype(np.float64): "double",
          np.dtype(np.uint8): "unsigned char"}


@functools.lru_cache(maxsize=None)
def _module(source, names, device):
    return cupy.RawModule(code=PRELUDE + source, options=("-std=c++17",),
                          name_expressions=list(names))


def function(source, name, *dtypes):
    """The compiled kernel `name<ctype(dtypes)...>` for the current device."""
    expr = name if not dtypes else f"{name}<{', '.join(CTYPES[np.dtype(d)] for d in dtypes)}>"
    return _module(source, (expr,), cupy.cuda.Device().id).get_function(expr)


def launch(kernel, n_threads, args):
    """Launch enough blocks of THREADS threads for `n_threads` threads (nothing when 0)."""
    n_threads = int(n_threads)
    if n_threads > 0:
        kernel(((n_threads + THREADS - 1) // THREADS,), (THREADS,), args)


def i64(x):
    return np.int64(x)
