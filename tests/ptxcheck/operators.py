"""The operators of both backends: kernels_gpu's compiled (kernels_gpu.ptx.compile_only, for
the length of each call), kernels_cpu's run."""

import kernels_cpu.operators as cpu
import kernels_gpu.operators as gpu
from kernels_gpu.ptx import compile_only


def _both(name):
    def call(*args, **kwargs):
        with compile_only():
            getattr(gpu, name)(*args, **kwargs)
        return getattr(cpu, name)(*args, **kwargs)
    call.__name__ = name
    return call


advance, advance_more, pull, intersect, map_vertices, map_values, map_inbox, map_bits = (
    _both(n) for n in ("advance", "advance_more", "pull", "intersect", "map_vertices",
                       "map_values", "map_inbox", "map_bits"))


def gather_rows(*args):
    """kernels_gpu's cache load (advance's load-balanced walk) compiled, kernels_cpu's run."""
    from kernels_cpu.chunks import chunk_cache_load
    with compile_only():
        gpu.gather_rows(*args)
    chunk_cache_load(*args)
