"""Kernels of the distributed loader (partitioners/distributed.py): packing a rank's rows into the streams it
sends to other ranks, a round at a time, and placing what arrives. Raw arrays only.

A stream's position between rounds is kept in a two-element `state` (row, edge), so the send
buffers of a round hold only that round's items, never a second copy of a rank's edges.
"""

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
from numba import njit, prange

from .sorting import interval


THREADED_SEARCH = 1 << 20   # searchsorted over at least this many keys runs on threads


def searchsorted(a, v):
    """np.searchsorted(a, v), the keys `v` cut into one run per Numba thread, each searched by
    NumPy on its own thread (NumPy releases the GIL while it searches): the lookups of a rank's
    vertex ids, each a cache miss when the keys are not sorted, would otherwise be a long
    serial part of a plan, which makes several lookups of millions of ids."""
    threads = numba.get_num_threads()
    if threads == 1 or np.size(v) < THREADED_SEARCH:
        return np.searchsorted(a, v)
    out = np.empty(v.size, dtype=np.intp)
    cuts = np.linspace(0, v.size, threads + 1).astype(np.int64)

    def run(k):
        out[cuts[k]:cuts[k + 1]] = np.searchsorted(a, v[cuts[k]:cuts[k + 1]])

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, range(threads)))
    return out


@njit(nogil=True, cache=True)
def pack_rows(indptr, ids, weights, has_weights, rows, state, out_ids, out_weights):
    """The next out_ids.size edges of rows `rows` (their edges one row after the other), from
    state = (index into rows, edge within that row); state advances."""
    i, k = state[0], state[1]
    j, n = 0, out_ids.size
    while j < n:
        u = rows[i]
        a = indptr[u] + k
        take = min(indptr[u + 1] - a, n - j)
        out_ids[j:j + take] = ids[a:a + take]
        if has_weights:
            out_weights[j:j + take] = weights[a:a + take]
        j += take
        k += take
        if indptr[u] + k == indptr[u + 1]:
            i += 1
            k = 0
    state[0], state[1] = i, k


@njit(nogil=True, cache=True)
def pack_reversed(indptr, ids, weights, has_weights, first, lo, hi, state, out_t, out_u, out_w):
    """The next out_t.size edges (u, t) of the rows (row r is vertex first + r), in row order,
    whose target t is in lo:hi, as (t, u, weight); state = (row, edge) advances."""
    r, e = state[0], state[1]
    j, n = 0, out_t.size
    rows = indptr.size - 1
    while j < n and r < rows:
        if e >= indptr[r + 1]:
            r += 1
            continue
        t = ids[e]
        if lo <= t < hi:
            out_t[j] = t
            out_u[j] = first + r
            if has_weights:
                out_w[j] = weights[e]
            j += 1
        e += 1
    state[0], state[1] = r, e


GROUP_PIECES = 64    # runs of the items group_edges and count_in_ranges take at once


@njit(parallel=True, nogil=True, cache=True)
def count_in_ranges(ids, bounds, counts):
    """counts[k] += how many ids lie in bounds[k]:bounds[k + 1] (GROUP_PIECES runs of the ids
    counted at once)."""
    blocks = counts.size
    step = -(-ids.size // GROUP_PIECES)
    at = np.zeros((GROUP_PIECES, blocks), np.int64)
    for c in prange(GROUP_PIECES):
        mine = np.zeros(blocks, np.int64)
        for e in range(c * step, min(ids.size, (c + 1) * step)):
            mine[interval(ids[e], bounds)] += 1
        at[c] = mine
    for k in range(blocks):
        for c in range(GROUP_PIECES):
            counts[k] += at[c, k]


@njit(nogil=True, cache=True)
def count_rows(rows, first, counts):
    """counts[u - first] += 1 for every row u in `rows`."""
    for e in range(rows.size):
        counts[rows[e] - first] += 1


@njit(parallel=True, nogil=True, cache=True)
def group_edges(src, dst, bounds, mirror, counts, out_rows, out_targets):
    """The entries (src, dst) of the edges, and with `mirror` also (dst, src) unless a loop,
    grouped by the block of their row (a counting sort; edge order kept within a block): rows
    into out_rows, targets into out_targets (unless it is empty: counting rows only), counts[k]
    entries for block k. GROUP_PIECES runs of edges are counted and placed in parallel, each
    run's entries of a block after those of the runs before it."""
    size = counts.size
    step = -(-src.size // GROUP_PIECES)
    at = np.zeros((GROUP_PIECES, size), np.int64)
    for c in prange(GROUP_PIECES):      # (counters local to the run: no false sharing)
        mine = np.zeros(size, np.int64)
        for e in range(c * step, min(src.size, (c + 1) * step)):
            mine[interval(src[e], bounds)] += 1
            if mirror and src[e] != dst[e]:
                mine[interval(dst[e], bounds)] += 1
        at[c] = mine
    total = 0
    for k in range(size):       # each run's first slot in each block
        counts[k] = 0
        for c in range(GROUP_PIECES):
            n = at[c, k]
            at[c, k] = total
            total += n
            counts[k] += n
    targets = out_targets.size > 0
    for c in prange(GROUP_PIECES):
        mine = at[c].copy()
        for e in range(c * step, min(src.size, (c + 1) * step)):
            u, v = src[e], dst[e]
            k = interval(u, bounds)
            out_rows[mine[k]] = u
            if targets:
                out_targets[mine[k]] = v
            mine[k] += 1
            if mirror and u != v:
                k = interval(v, bounds)
                out_rows[mine[k]] = v
                if targets:
                    out_targets[mine[k]] = u
                mine[k] += 1


@njit(nogil=True, cache=True)
def place_stream(ids, weights, has_weights, state, dest, length, out_ids, out_weights):
    """Put the next ids.size items of a stream of rows where they belong: row m of the stream
    (m from state[0], item state[1] of it) goes to out[dest[m]:dest[m] + length[m]]; state
    advances."""
    m, k = state[0], state[1]
    j = 0
    while j < ids.size:
        take = min(length[m] - k, ids.size - j)
        at = dest[m] + k
        out_ids[at:at + take] = ids[j:j + take]
        if has_weights:
            out_weights[at:at + take] = weights[j:j + take]
        j += take
        k += take
        if k == length[m]:
            m += 1
            k = 0
    state[0], state[1] = m, k


@njit(nogil=True, cache=True)
def place_rows(rows, ids, weights, has_weights, fill, end, out_ids, out_weights):
    """Put edge e at row rows[e] (a row of this block), at fill[row], and advance fill; returns
    -1, or the first e whose row was already full (the declared degrees were too small)."""
    for e in range(rows.size):
        u = rows[e]
        p = fill[u]
        if p >= end[u]:
            return e
        fill[u] = p + 1
        out_ids[p] = ids[e]
        if has_weights:
            out_weights[p] = weights[e]
    return -1


@njit(parallel=True, nogil=True, cache=True)
def mark_targets(ids, mark):
    """mark[t] = 1 for every t in ids (a benign race: every writer stores 1)."""
    for e in prange(ids.size):
        if mark[ids[e]] == 0:       # read first: a hub's line stays shared
            mark[ids[e]] = 1


@njit(parallel=True, nogil=True, cache=True)
def rename(ids, table):
    """ids[e] = table[ids[e]], in place."""
    for e in prange(ids.size):
        ids[e] = table[ids[e]]


@njit(parallel=True, nogil=True, cache=True)
def join_rows(a_indptr, a_ids, a_w, b_indptr, b_ids, b_w, has_weights, indptr, ids, w):
    """Row u = row u of a, then row u of b (indptr: the joined rows' offsets)."""
    for u in prange(indptr.size - 1):
        p = indptr[u]
        for e in range(a_indptr[u], a_indptr[u + 1]):
            ids[p] = a_ids[e]
            if has_weights:
                w[p] = a_w[e]
            p += 1
        for e in range(b_indptr[u], b_indptr[u + 1]):
            ids[p] = b_ids[e]
            if has_weights:
                w[p] = b_w[e]
            p += 1


@njit(parallel=True, nogil=True, cache=True)
def copy_rows(rows, src_at, dst_at, length, src, dst):
    """dst[dst_at[m]:dst_at[m] + length[m]] = src[src_at[m]:...] for every m in rows."""
    for i in prange(rows.size):
        m = rows[i]
        a, b, k = src_at[m], dst_at[m], length[m]
        dst[b:b + k] = src[a:a + k]
