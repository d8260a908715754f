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
STRIDE_BLOCKS = 264     # light grid-stride kernels (the length stays on the device): 2 per SM
EDGE_BLOCKS_PER_SM = 8  # lb_edges kernels: enough resident threads per SM to hide latency

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
// 0..total-1 in queue order, offs being the exclusive scan of the frontier's degrees, so a hub's
// edges spread over as many threads as it has edges and a degree-1 vertex costs one thread.
// total = offs[qlen] is read on the device (the host launches without waiting for the scan): the
// grid strides over block-sized runs of edges. Per run, thread 0 finds the frontier items the
// run spans (searching on from the last run's), each thread searches that short, cached range
// for its edge k and calls f(v, e, k), e being the edge's index in indices[].
__device__ __forceinline__ i64 lb_find(const i64* offs, i64 lo, i64 hi, i64 k) {
    while (hi - lo > 1) {      // the last i in [lo, hi) with offs[i] <= k
        i64 mid = (lo + hi) >> 1;
        if (offs[mid] <= k) lo = mid; else hi = mid;
    }
    return lo;
}
// every thread of the block must call this (it synchronises the block)
template <typename F>
__device__ __forceinline__ void lb_edges(const i64* indptr, const i64* queue, const i64* offs,
                                         i64 qlen, F f) {
    __shared__ i64 span[2];
    const i64 total = offs[qlen];
    i64 lo = 0;
    for (i64 k0 = (i64)blockIdx.x * blockDim.x; k0 < total; k0 += (i64)gridDim.x * blockDim.x) {
        if (threadIdx.x == 0) {
            lo = span[0] = lb_find(offs, lo, qlen, k0);
            span[1] = lb_find(offs, lo, qlen, min(k0 + (i64)blockDim.x, total) - 1) + 1;
        }
        __syncthreads();
        i64 k = k0 + threadIdx.x;
        if (k < total) {
            i64 i = lb_find(offs, span[0], span[1], k);
            i64 v = queue[i];
            f(v, indptr[v] + (k - offs[i]), k);
        }
        __syncthreads();       // the next run rewrites span
    }
}
// dist >= 0 everywhere, so the bit patterns of doubles order like 64-bit integers
__device__ __forceinline__ double atomic_min_nonneg(double* a, double v) {
    return __longlong_as_double(atomicMin((i64*)a, __double_as_longlong(v)));
}
"""

CTYPES = {np.dtype(np.int32): "int", np.dtype(np.int64): "i64",
          np.dtype(np.float32): "float", np.dtype(np.float64): "double",
          np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "bool"}


@functools.lru_cache(maxsize=None)
def _module(source, names, device):
    return cupy.RawModule(code=PRELUDE + source, options=("-std=c++17",),
                          name_expressions=list(names))


_FUNCTIONS = {}     # (source, name, dtypes, device) -> kernel


def function(source, name, *dtypes):
    """The compiled kernel `name<ctype(dtypes)...>` for the current device, memoised (CuPy's
    get_function makes a new kernel object each call: 7-50 us a launch on an H100
    host)."""
    key = (source, name, dtypes, cupy.cuda.runtime.getDevice())
    kernel = _FUNCTIONS.get(key)
    if kernel is None:
        expr = name if not dtypes else \
            f"{name}<{', '.join(CTYPES[np.dtype(d)] for d in dtypes)}>"
        kernel = _FUNCTIONS[key] = _module(source, (expr,), key[3]).get_function(expr)
    return kernel


def launch(kernel, n_threads, args):
    """Launch enough blocks of THREADS threads for `n_threads` threads (nothing when 0)."""
    n_threads = int(n_threads)
    if n_threads > 0:
        kernel(((n_threads + THREADS - 1) // THREADS,), (THREADS,), args)


def launch_strided(kernel, args):
    """Launch a grid-stride kernel (it reads its length on the device) on STRIDE_BLOCKS blocks."""
    kernel((STRIDE_BLOCKS,), (THREADS,), args)


@functools.lru_cache(maxsize=None)
def _sm_count(device):
    return cupy.cuda.Device(device).attributes["MultiProcessorCount"]


def launch_edges(kernel, qlen, args):
    """Launch an lb_edges kernel over a queue of `qlen` vertices (nothing when 0): a grid-stride
    loop over the frontier's edges, whose number the host need not know, on enough blocks to
    fill every SM."""
    if qlen > 0:
        blocks = _sm_count(cupy.cuda.Device().id) * EDGE_BLOCKS_PER_SM
        kernel((blocks,), (THREADS,), args)


def zero(arr):
    """arr[:] = 0 by a memset queued on the current stream (`arr` contiguous)."""
    if arr.size:
        cupy.cuda.runtime.memsetAsync(arr.data.ptr, 0, arr.nbytes,
                                      cupy.cuda.get_current_stream().ptr)


def i64(x):
    return np.int64(x)
