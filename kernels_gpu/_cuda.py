"""Compiling and launching the CUDA sources of kernels_gpu/ through CuPy.

Each kernel module keeps its CUDA source as a string beside its launchers. Sources are compiled on
first use with NVRTC and memoised per device and per template instantiation (the index type of
the CSR, the value type of a box). Every kernel name carries the `totem_` prefix.
"""

import functools

import cupy
import numpy as np

THREADS = 256
STRIDE_BLOCKS = 264     # light grid-stride kernels (the length stays on the device): 2 per SM

PRELUDE = r"""
typedef long long i64;
typedef unsigned long long u64;
__device__ __forceinline__ i64 global_thread() {
    return (i64)blockIdx.x * blockDim.x + threadIdx.x;
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
    get_function makes a new kernel object each call, a host cost on every launch)."""
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


def zero(arr):
    """arr[:] = 0 by a memset queued on the current stream (`arr` contiguous)."""
    if arr.size:
        cupy.cuda.runtime.memsetAsync(arr.data.ptr, 0, arr.nbytes,
                                      cupy.cuda.get_current_stream().ptr)


def i64(x):
    return np.int64(x)
