"""Numba CPU kernels on raw arrays (DESIGN.md: they never see Graph, plans or config).

Every kernel is `@njit(parallel=True, nogil=True, cache=True)` where it loops over vertices or
edges; `kernels_gpu/` holds the CUDA twins with the same module and function names.
"""

import os

# OpenMP workers that spin while idle cost milliseconds per kernel launch as soon as anything
# else competes for the cores (measured: 2.5 ms vs 11 us per launch on a loaded 2-core machine);
# supersteps launch many small kernels, so idle workers sleep instead. Set the variable to
# override. It must be set before Numba starts its thread pool, i.e. before the first kernel.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
