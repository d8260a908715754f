"""CSR construction and transposition: counting sort by source, O(V + E), stable.

Parallel over edges for the degree count (atomic add; serial up to jit.SMALL_GRAPH edges) and
serial for the stable scatter, which is memory bound and keeps the file's edge order within each
row.
"""

import numpy as np
from numba import njit, prange

from .atomics import atomic_add
from .jit import graph_kernel

INT32_MAX = np.iinfo(np.int32).max


def index_dtype(n_vertices):
    """int32 while ids fit, int64 beyond."""
    return np.dtype(np.int32) if n_vertices <= INT32_MAX else np.dtype(np.int64)


@graph_kernel("src")
def csr_degrees(src, n_vertices):
    counts = np.zeros(n_vertices + 1, dtype=np.int64)
    for e in prange(src.size):
        atomic_add(counts, src[e] + 1, 1)
    return counts


@njit(nogil=True, cache=True)
def csr_scatter(src, dst, weights, indptr, indices, out_weights, has_weights):
    """Place edge e at the next free position of row src[e] (stable)."""
    fill = indptr[:-1].copy()
    for e in range(src.size):
        u = src[e]
        pos = fill[u]
        fill[u] = pos + 1
        indices[pos] = dst[e]
        if has_weights:
            out_weights[pos] = weights[e]


@graph_kernel("out")
def csr_expand_rows(indptr, out):
    """out[e] = source row of edge e (the COO row array of a CSR)."""
    n = indptr.size - 1
    for u in prange(n):
        for e in range(indptr[u], indptr[u + 1]):
            out[e] = u


@graph_kernel("values")
def csr_row_sums(indptr, values, out):
    """out[u] = the sum of values[e] over row u's edges, in row order."""
    for u in prange(out.size):
        total = 0.0
        for e in range(indptr[u], indptr[u + 1]):
            total += values[e]
        out[u] = total
