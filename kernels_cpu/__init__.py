"""Numba CPU kernels on raw arrays (DESIGN.md: they never see Graph, plans or config).

Every kernel is `@njit(parallel=True, nogil=True, cache=True)` where it loops over vertices or
edges; `kernels_gpu/` holds the CUDA twins with the same module and function names.
"""

import os

SPIN_CORES = 8

# Idle OpenMP workers either spin or sleep. A superstep launches tens of small kernels, and waking a
# sleeping team costs tens of microseconds per launch: on a 16-core H200 host spinning workers
# made hybrid runs 1.3-1.7x faster (rmat:24: SSSP HIGH 0.5 497 -> 332 ms, BFS 17.6 -> 10.0 ms).
# Spinning workers cost milliseconds per launch as soon as anything else competes for the cores
# (2.5 ms vs 11 us per launch on a loaded 2-core machine), so machines of fewer than 8 cores keep
# them asleep. Set OMP_WAIT_POLICY to override. It must be set before Numba starts its
# thread pool, i.e. before the first kernel.
os.environ.setdefault("OMP_WAIT_POLICY", "active" if (os.cpu_count() or 1) >= SPIN_CORES
                      else "passive")
