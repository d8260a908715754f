"""The bulk-synchronous engine: partitions, boxes, exchange, supersteps (no algorithm logic),
and what programs are written with: the engine protocol (Program), the operators and their
intrinsics."""

from .api import Message, Mode, Program, Vote
from .engine import Engine
from kernels_cpu.intrinsics import atomic_add, atomic_cas, atomic_max, atomic_min, atomic_or, test_bit
from kernels_cpu.templates import EdgeSpan
from .operators import (Frontier, advance, bitmap, bitmap_bytes, device_function, intersect,
                        pull, put, receive, vertex_map, vertex_values)
from .partition import EdgeOptions

__all__ = ["Program", "Message", "Mode", "Vote", "Engine", "EdgeOptions", "EdgeSpan",
           "Frontier", "advance", "pull", "intersect", "vertex_map", "vertex_values", "receive",
           "bitmap", "bitmap_bytes", "device_function", "put", "atomic_add", "atomic_cas",
           "atomic_max", "atomic_min", "atomic_or", "test_bit"]
