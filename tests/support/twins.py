"""Kernel platforms for tests.

`Twins("cpu")` / `Twins("gpu")`: the engine's own kernels of kernels_cpu and their CUDA twins on
the same data: `twins.boxes` is kernels_cpu.boxes or kernels_gpu.boxes, `put` copies an array
into the platform's memory and `get` back to NumPy.

The operators' backends (bsp/operators.py), `Twins(device, operators)`: the CPU's; tests/ptxcheck
(every call compiled by the GPU backend to PTX for sm_90, computed by the CPU's: no GPU needed);
the GPU's on a real device; in a process under numba-cuda's simulator (NUMBA_ENABLE_CUDASIM=1,
which tests/test_gpu_backend.py starts for some tests), the GPU's run as Python on NumPy arrays.
`part(n_local)` is a partition for the operators and `view(...)` a view of a CSR whose rows may
come in ranges, as streamed edges do. The fixtures `twins` and `backend` (conftest.py) sweep them.
"""

import importlib
import os
from types import SimpleNamespace

import numpy as np
import pytest

from totem_py.backend import cuda_device_count

ON_GPU = [pytest.mark.gpu, pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")]
SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


class Twins:
    def __init__(self, device, operators=None):
        self.device = device
        self.operators = operators or f"kernels_{device}"
        self.xp = importlib.import_module("cupy") if device == "gpu" else np

    @property
    def simulated(self):
        """GPU operators run as Python on NumPy arrays (numba-cuda's simulator): slow."""
        return self.operators == "kernels_gpu" and self.device == "cpu"

    def __getattr__(self, module):
        return importlib.import_module(f"kernels_{self.device}.{module}")

    def put(self, a):
        return self.xp.array(a, copy=True)

    def get(self, a):
        return a.get() if self.device == "gpu" else np.array(a)

    def part(self, n_local):
        """What the operators need of a partition: its backend, arrays and vertex count."""
        return SimpleNamespace(operator_package=self.operators, xp=self.xp, n_local=n_local,
                               kernels=lambda name: getattr(self, name),
                               to_device=lambda a, count=True: self.put(a),
                               to_host=lambda a, count=True: self.get(a),
                               empty=lambda n, dtype: self.xp.empty(n, dtype),
                               held=lambda key, n, dtype: self.xp.empty(n, dtype))

    def view(self, indptr, indices, n_local, weights=None, bounds=None, poison=None):
        return View(self, indptr, indices, n_local, weights, bounds, poison)


def ranges(bounds):
    return list(zip(bounds[:-1], bounds[1:]))


def poisoned(indptr, indices, first, end, poison):
    """indices with every entry outside rows [first, end) set to `poison`."""
    out = np.full_like(indices, poison)
    lo, hi = indptr[first], indptr[end]
    out[lo:hi] = indices[lo:hi]
    return out


class View:
    """A CSR for the operators (bsp.operators takes a view object as well as a view's name),
    its rows in the ranges [first, end) of `bounds` (default: one range, all rows), each range
    a segment of its own whose `indices` outside its rows point at `poison` (when given): an
    operator that reads an edge of another segment reads the poison."""

    def __init__(self, twins, indptr, indices, n_local, weights, bounds, poison):
        self.twins, self.n_local = twins, n_local
        targets = [int(indices.max()) + 1 if indices.size else 0, n_local]
        if poison is not None:
            targets.append(poison + 1)
        self.n_ghosts = max(targets) - n_local      # the ghost slots an edge may point at
        self.indptr = twins.put(indptr)
        nonempty = np.flatnonzero(np.diff(indptr))
        self.rows_end = int(nonempty[-1]) + 1 if nonempty.size else 0     # DeviceView's
        self.weights = None if weights is None else twins.put(weights)
        self.ranges = ranges([0, n_local] if bounds is None else bounds)
        self.indices = [twins.put(indices if poison is None else
                                  poisoned(indptr, indices, first, end, poison))
                        for first, end in self.ranges]

    def row_segments(self, reads=None, warps=True):
        for (first, end), indices in zip(self.ranges, self.indices):
            yield self.indptr, indices, self.weights, first, end

    def queue_segments(self, queue, qlen, pieces=1):
        """The queue's items by range, each range's in a sub-queue of its own (in range order,
        whatever `pieces`)."""
        items = self.twins.get(queue)[:qlen]
        for (first, end), indices in zip(self.ranges, self.indices):
            sub = items[(items >= first) & (items < end)]
            if sub.size:
                yield self.indptr, indices, self.weights, self.twins.put(sub), sub.size
