"""Fixtures every test module may use; the helpers they share are in tests/support/ (no test
module imports another).

The suite runs its commands without the compiling process of a first run (totem_py/ahead.py):
test_ahead.py tests that on its own.

Tiers (pyproject.toml): the default run is the whole suite; `-m "not slow"` the fast tier, for
a develop loop; `-m extended` more of the same checks, on demand; `-m gpu` on the GPU machine."""

import os

import pytest

os.environ.setdefault("TOTEM_COMPILE_AHEAD", "0")

from tests.support.twins import ON_GPU, SIMULATED, Twins  # noqa: E402

if SIMULATED:
    # a process under numba-cuda's simulator (tests/test_gpu_backend.py starts one for
    # test_operators.py) does not compile the tests' own functors for a GPU as well
    # (kernels_gpu/ptx.py, most of that run's time): the `ptxcheck` backend compiles the same
    # functors for the same templates and argument types in the main run
    import kernels_gpu.ptx
    kernels_gpu.ptx.SHIPPED += (os.path.dirname(os.path.realpath(__file__)) + os.sep,)

# modules whose tests all run scripts in processes of their own, marked here (their files are
# the experiments' own)
SLOW_MODULES = ("test_experiments.py",)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """An extended test is slow too, so `-m "not slow"` leaves it out; so are the tests of
    SLOW_MODULES. (tryfirst: before `-m` selects.)"""
    for item in items:
        if item.get_closest_marker("slow"):
            continue
        if item.get_closest_marker("extended") or item.path.name in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=ON_GPU)])
def twins(request):
    """The engine's kernels on the CPU and, where CuPy sees a device, their CUDA twins."""
    return Twins(request.param)


@pytest.fixture(params=["cpu", pytest.param("ptxcheck", marks=pytest.mark.slow),
                        pytest.param("gpu", marks=ON_GPU)] + ["simulated"] * SIMULATED)
def backend(request):
    """The operators' backends: the CPU's, the GPU's compiled to PTX and computed by the CPU's
    (tests/ptxcheck: NVVM compiles every functor, so slow), the GPU's on a device, and under
    numba-cuda's simulator."""
    operators = {"ptxcheck": "tests.ptxcheck", "simulated": "kernels_gpu"}.get(request.param)
    return Twins("gpu" if request.param == "gpu" else "cpu", operators)


@pytest.fixture
def often(monkeypatch):
    """The GPU cache's candidates every 5% of n queue vertices instead of every n, so that the
    runs of a matrix select, refresh and serve from the cache many times (results must not
    change)."""
    import bsp.stream
    monkeypatch.setattr(bsp.stream, "GAMMA", 0.05)
