"""The operators of both backends: kernels_gpu's compiled (COMPILE_ONLY), kernels_cpu's run."""

import numba.cuda.dispatcher

import kernels_cpu.operators as cpu
import kernels_gpu.operators as gpu

gpu.COMPILE_ONLY = True


class _Device:
    """What numba-cuda asks of the current device when it compiles a device function."""
    compute_capability = gpu.COMPILE_CC


numba.cuda.dispatcher.get_current_device = _Device


def _both(name):
    def call(*args, **kwargs):
        getattr(gpu, name)(*args, **kwargs)
        return getattr(cpu, name)(*args, **kwargs)
    call.__name__ = name
    return call


advance, pull, map_vertices, map_values, map_inbox, map_bits = (
    _both(n) for n in ("advance", "pull", "map_vertices", "map_values", "map_inbox", "map_bits"))
