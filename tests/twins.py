"""One kernel platform for tests that run the CPU kernels and, where CuPy sees a device, their
CUDA twins on the same data: `twins.bfs` is kernels_cpu.bfs or kernels_gpu.bfs, `put` copies an
array into the platform's memory and `get` back to NumPy. Use the `twins` fixture."""

import importlib

import numpy as np
import pytest

from totem_py.backend import cuda_device_count


class Twins:
    def __init__(self, device):
        self.device = device
        self.xp = importlib.import_module("cupy") if device == "gpu" else np

    def __getattr__(self, module):
        return importlib.import_module(f"kernels_{self.device}.{module}")

    def put(self, a):
        return self.xp.array(a, copy=True)

    def get(self, a):
        return a.get() if self.device == "gpu" else np.array(a)


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=[
    pytest.mark.gpu, pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")])])
def twins(request):
    return Twins(request.param)
