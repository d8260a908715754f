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
