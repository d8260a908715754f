"""CSR construction and transposition: counting sort by row, O(V + E), stable (every row keeps
its entries' order).

Counting and placing run in parallel without atomics and without per-thread tables of rows: a
thread owns a block of rows (`row_blocks`: blocks of about equal entries where the rows' sizes are
known, of equal ids where they are not) and scans every entry, counting or placing only those of
its rows. Each thread reads all the entries (sequential reads, cheap beside the placement's random
writes) and writes only its own rows, in the entries' order: the result does not depend on the
thread count. Fewer than PARALLEL_ENTRIES entries take one block.
"""

import numba
import numpy as np
from numba import njit, prange

from .atomics import atomic_add
from .jit import graph_kernel

PARALLEL_ENTRIES = 1 << 16

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


def row_blocks(n_entries, n_rows, indptr=None):
    """The bounds of the blocks of rows the threads own: one block per thread (one block for
    fewer than PARALLEL_ENTRIES entries), of about equal entries by `indptr` where given, else
    of equal numbers of rows."""
    parts = numba.get_num_threads() if n_entries >= PARALLEL_ENTRIES else 1
    if indptr is None:
        return (np.arange(parts + 1, dtype=np.int64) * n_rows) // parts
    bounds = np.searchsorted(indptr, np.arange(parts + 1) * (indptr[-1] / parts), side="left")
    bounds[0], bounds[-1] = 0, n_rows
    return np.minimum(bounds, n_rows).astype(np.int64)


@njit(parallel=True, nogil=True, cache=True)
def count_rows(src, dst, mirror, bounds, counts):
    """counts[u + 1] += the entries of row u: one per src[e] == u, and with mirror one per
    dst[e] == u, src[e] != u (with src a CSR's indices, the in-degrees). Thread k counts the
    rows bounds[k]:bounds[k + 1]."""
    for k in prange(bounds.size - 1):
        lo, hi = bounds[k], bounds[k + 1]
        for e in range(src.size):
            u = src[e]
            if lo <= u < hi:
                counts[u + 1] += 1
            if mirror:
                v = dst[e]
                if lo <= v < hi and u != v:
                    counts[v + 1] += 1


@njit(inline="always", nogil=True, cache=True)
def _place(fill, row, entry, out, has_weights, out_weights, weights, e):
    """`entry` (and, with weights, weights[e]) at fill[row], which advances."""
    p = fill[row]
    fill[row] = p + 1
    out[p] = entry
    if has_weights:
        out_weights[p] = weights[e]


@njit(parallel=True, nogil=True, cache=True)
def place_rows(src, dst, weights, has_weights, mirror, bounds, fill, indices, out_weights):
    """Place entry (src[e], dst[e]) at fill[src[e]] and advance it (with mirror also (dst[e],
    src[e]) at fill[dst[e]] unless a self-loop): stable, the entries' order within each row.
    Thread k places the rows bounds[k]:bounds[k + 1] (`row_blocks` of the final indptr)."""
    for k in prange(bounds.size - 1):
        lo, hi = bounds[k], bounds[k + 1]
        for e in range(src.size):
            u = src[e]
            v = dst[e]
            if lo <= u < hi:
                _place(fill, u, v, indices, has_weights, out_weights, weights, e)
            if mirror and lo <= v < hi and u != v:
                _place(fill, v, u, indices, has_weights, out_weights, weights, e)


@njit(parallel=True, nogil=True, cache=True)
def place_transposed(indptr, indices, weights, has_weights, bounds, fill, out, out_weights):
    """The transpose of the CSR (indptr, indices, weights): edge (u, v) placed as u at fill[v],
    which advances; each row of the transpose lists its sources in ascending order (the CSR's
    row order). Thread k places the rows bounds[k]:bounds[k + 1]."""
    for k in prange(bounds.size - 1):
        lo, hi = bounds[k], bounds[k + 1]
        for u in range(indptr.size - 1):
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if lo <= v < hi:
                    _place(fill, v, u, out, has_weights, out_weights, weights, e)


def target_counts(indices, n_vertices):
    """counts[v + 1] = how many of `indices` are v (a CSR's in-degrees, shifted by one: the
    transpose's row offsets once summed); n_vertices + 1 items."""
    counts = np.zeros(n_vertices + 1, np.int64)
    count_rows(indices, indices, False, row_blocks(indices.size, n_vertices), counts)
    return counts


def transpose(indptr, indices, weights=None):
    """(indptr, indices, weights) of the transpose of a CSR of n_vertices = indptr.size - 1
    rows, its rows' sources in ascending order; weights None where there are none."""
    n, m = indptr.size - 1, indices.size
    t_indptr = np.cumsum(target_counts(indices, n))
    has_w = weights is not None
    t_indices = np.empty(m, indices.dtype)
    t_weights = np.empty(m if has_w else 0, np.float64)
    place_transposed(indptr, indices, weights if has_w else t_weights, has_w,
                     row_blocks(m, n, t_indptr), t_indptr, t_indices, t_weights)
    restore_indptr(t_indptr)
    return t_indptr, t_indices, t_weights if has_w else None


@njit(nogil=True, cache=True)
def restore_indptr(fill):
    """The indptr that `place_rows` advanced as its `fill` (each row's start moved to the next
    row's), shifted back: the placement needs no second array of rows."""
    for u in range(fill.size - 1, 0, -1):
        fill[u] = fill[u - 1]
    fill[0] = 0


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


@njit(parallel=True, nogil=True, cache=True)
def _inexact_in_float32(values):
    count = 0
    for e in prange(values.size):
        if np.float64(np.float32(values[e])) != values[e]:
            count += 1
    return count


def weights_dtype(weights):
    """float32 where every weight is a float32 exactly (the generators' integer weights are; a
    NaN, or a value float32 rounds, is not), else float64: the type a partition's weights are
    held in. Half the bytes every kernel reads per edge, and the same values in every sum and
    comparison."""
    if weights is None or weights.dtype != np.float64:
        return np.float64 if weights is None else weights.dtype
    return np.float32 if _inexact_in_float32(weights) == 0 else np.float64
