"""Numba CPU kernels on raw arrays (DESIGN.md: they never see Graph, plans or config).

Every kernel is `@njit(parallel=True, nogil=True, cache=True)` where it loops over vertices or
edges; `kernels_gpu/` holds the CUDA twins with the same module and function names.
"""
