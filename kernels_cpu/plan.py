"""Kernels that build a partition's local CSR (partitioners/ calls them; raw arrays only).

Each local row holds its local edges (targets as local ids) and its boundary edges (targets as
n_local + outbox slot); plan_fill writes the local ones first, as TOTEM lays partitions out, and
plan_sort_rows then orders each group by a key per target (partitioners/plan.py: by degree).
Rows are independent, so the fill runs in parallel over rows without races; marking remote
targets is a benign race (every writer stores 1). Rows come in the plan's local order, hubs first
unless `hub_sort` is "off", so a prange over them, one contiguous range a thread, gives the
first thread most of the edges; the loops take the rows in STRIDE interleaved blocks instead,
which give each thread close to its share. The blocks decide which thread fills a row, never
what the row holds, and they balance any order.
"""

import numpy as np
from numba import njit, prange

from .atomics import PREFETCH, prefetch
from .jit import graph_kernel, prefetch_rows_every
from .sorting import sort_by_high_word


STRIDE = 1024   # row i goes to block i % STRIDE; prange hands each thread a run of blocks
SPREAD = 633    # odd, so j -> j * SPREAD % STRIDE permutes the blocks: the first rows (the
                # largest hubs, when hub-sorted) land in blocks that different threads run


@graph_kernel("indices")
def plan_mark_remote(indptr, indices, gvids, owner, pid, mark):
    """mark[t] = 1 for every target t of the partition's rows owned by another partition."""
    boundary = np.zeros(STRIDE, dtype=np.int64)
    for j in prange(STRIDE):
        count = 0
        for i in range(j * SPREAD % STRIDE, gvids.size, STRIDE):
            prefetch_rows_every(indptr, indices, gvids, gvids.size, i, STRIDE, owner)
            u = gvids[i]
            end = indptr[u + 1]
            for e in range(indptr[u], end):
                if e + PREFETCH < end:
                    prefetch(owner, indices[e + PREFETCH])
                t = indices[e]
                if owner[t] != pid:
                    mark[t] = 1
                    count += 1
        boundary[j] = count
    return boundary.sum()


@graph_kernel("gvids")
def plan_row_degrees(indptr, gvids, out):
    for i in prange(gvids.size):
        u = gvids[i]
        out[i + 1] = indptr[u + 1] - indptr[u]


@graph_kernel("indices")
def plan_fill(indptr, indices, weights, has_weights, gvids, code, n_local,
              local_indptr, local_indices, local_weights):
    """Copy the rows of `gvids` with targets renamed by `code` (a local id, or n_local + ghost
    slot): local targets first, then boundary ones, each in the row's order. One pass over each
    row, one random read per edge: boundary targets are written from the row's end backwards,
    then that run is reversed. The reads of `code` are prefetched, within a row and for the rows
    a few ahead (prefetch_rows_every, as in plan_mark_remote), so that their misses overlap."""
    for j in prange(STRIDE):
        for i in range(j * SPREAD % STRIDE, n_local, STRIDE):
            prefetch_rows_every(indptr, indices, gvids, n_local, i, STRIDE, code)
            u = gvids[i]
            pos_local, pos_remote = local_indptr[i], local_indptr[i + 1]
            end = indptr[u + 1]
            for e in range(indptr[u], end):
                if e + PREFETCH < end:
                    prefetch(code, indices[e + PREFETCH])
                c = code[indices[e]]
                if c < n_local:
                    pos = pos_local
                    pos_local += 1
                else:
                    pos_remote -= 1
                    pos = pos_remote
                local_indices[pos] = c
                if has_weights:
                    local_weights[pos] = weights[e]
            _reverse(local_indices, pos_local, local_indptr[i + 1])
            if has_weights:
                _reverse(local_weights, pos_local, local_indptr[i + 1])


SMALL = 15     # groups of at most this many entries sort by insertion


@njit(nogil=True, cache=True)
def _sort_small(indices, weights, has_weights, key, lo, hi):
    """Stable insertion sort of indices[lo:hi] (and weights) by key[target], in place."""
    for i in range(lo + 1, hi):
        t = indices[i]
        w = weights[i] if has_weights else 0.0
        k = key[t]
        j = i
        while j > lo and k < key[indices[j - 1]]:
            indices[j] = indices[j - 1]
            if has_weights:
                weights[j] = weights[j - 1]
            j -= 1
        indices[j] = t
        if has_weights:
            weights[j] = w


@njit(nogil=True, cache=True)
def _reverse(arr, lo, hi):
    hi -= 1
    while lo < hi:
        arr[lo], arr[hi] = arr[hi], arr[lo]
        lo += 1
        hi -= 1


@njit(nogil=True, cache=True)
def _rotate(arr, a, m, b):
    """arr[a:b] = arr[m:b] + arr[a:m], in place."""
    _reverse(arr, a, m)
    _reverse(arr, m, b)
    _reverse(arr, a, b)


@graph_kernel("indices")
def plan_sort_rows(indptr, indices, weights, has_weights, key, n_local):
    """Order each row as plan_fill wrote it (local edges, then boundary edges) by ascending
    key[target] within each of the two groups, the group whose first key is smaller first: the
    boundary edges stay a prefix or a suffix of the row (what cc_link_rest reads of a row).
    Groups of at most SMALL entries (most rows of a power-law graph) sort in place, longer ones
    as int64s packing (key, position in the row), by sort_by_high_word (radix from RADIX
    entries): key is int32. Both sorts are stable: ties keep plan_fill's order. Rows a few ahead
    have their first keys prefetched, so that those random reads' misses overlap."""
    for j in prange(STRIDE):
        for i in range(j * SPREAD % STRIDE, indptr.size - 1, STRIDE):
            ahead = i + 4 * STRIDE          # start the key reads of a row a few rows ahead
            if ahead < indptr.size - 1:
                for e in range(indptr[ahead], min(indptr[ahead + 1], indptr[ahead] + PREFETCH)):
                    prefetch(key, indices[e])
            a, b = indptr[i], indptr[i + 1]
            if b - a < 2:
                continue
            m = a
            while m < b and indices[m] < n_local:
                m += 1
            if m - a <= SMALL and b - m <= SMALL:
                _sort_small(indices, weights, has_weights, key, a, m)
                _sort_small(indices, weights, has_weights, key, m, b)
                if a < m < b and key[indices[m]] < key[indices[a]]:
                    # the boundary group first: rotate the row by three reversals
                    _rotate(indices, a, m, b)
                    if has_weights:
                        _rotate(weights, a, m, b)
                continue
            # longer groups: sort (key, position) pairs packed in one int64 (stable: ties
            # keep the row's order), one allocation and no indirect comparisons
            m -= a
            packed = np.empty(b - a, dtype=np.int64)
            for p in range(b - a):
                packed[p] = (np.int64(key[indices[a + p]]) << 32) | p
            for lo, hi in ((0, m), (m, b - a)):     # one call site: one inlined copy
                sort_by_high_word(packed, lo, hi)
            if a + m < b and (m == 0 or packed[m] >> 32 < packed[0] >> 32):
                _rotate(packed, 0, m, b - a)
            row = indices[a:b].copy()
            for p in range(b - a):
                indices[a + p] = row[packed[p] & 0xFFFFFFFF]
            if has_weights:
                w = weights[a:b].copy()
                for p in range(b - a):
                    weights[a + p] = w[packed[p] & 0xFFFFFFFF]
