"""The operators of both backends: kernels_gpu's compiled (COMPILE_ONLY), kernels_cpu's run.

The GPU backend is switched to COMPILE_ONLY, with a stand-in for the current device, only for
the length of each call: the same process may launch the GPU backend on a real device too."""

import contextlib

import numba.cuda.dispatcher

import kernels_cpu.operators as cpu
import kernels_gpu.operators as gpu


class _Device:
    """What numba-cuda asks of the current device when it compiles a device function."""
    compute_capability = gpu.COMPILE_CC


@contextlib.contextmanager
def _compile_only():
    saved = gpu.COMPILE_ONLY, numba.cuda.dispatcher.get_current_device
    gpu.COMPILE_ONLY, numba.cuda.dispatcher.get_current_device = True, _Device
    try:
        yield
    finally:
        gpu.COMPILE_ONLY, numba.cuda.dispatcher.get_current_device = saved


def _both(name):
    def call(*args, **kwargs):
        with _compile_only():
            getattr(gpu, name)(*args, **kwargs)
        return getattr(cpu, name)(*args, **kwargs)
    call.__name__ = name
    return call


advance, pull, intersect, map_vertices, map_values, map_inbox, map_bits = (
    _both(n) for n in ("advance", "pull", "intersect", "map_vertices", "map_values", "map_inbox",
                       "map_bits"))


def gather_rows(*args):
    """kernels_gpu's cache load (advance's load-balanced walk) compiled, kernels_cpu's run."""
    from kernels_cpu.chunks import chunk_cache_load
    with _compile_only():
        gpu.gather_rows(*args)
    chunk_cache_load(*args)
