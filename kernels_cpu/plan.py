"""Kernels that build a partition's local CSR (partitioners/ calls them; raw arrays only).

Each local row holds its local edges (targets as local ids) and its boundary edges (targets as
n_local + outbox slot), each group ordered by a key per target (partitioners/plan.py: by degree).
A partition's views take two passes over its edges: plan_mark_remote marks the remote targets
(the ghosts, numbered by plan_ghosts), then plan_fill renames and orders every row, reading each
target's key and code from one table entry (`plan_keys`, `plan_codes`).
Rows are independent, so the fill runs in parallel over rows without races; marking remote
targets is a benign race (every writer stores 1). The loops take the rows in runs of RUN, one
after another (in the graph's order, as partitioners/plan.py passes them, a run's edges are
read front to back), and the runs in STRIDE interleaved blocks: in the plan's local order (the
ranks' rows), hubs first unless `hub_sort` is "off", a prange over the rows, one contiguous
range a thread, would give the first thread most of the edges, while the blocks give each
thread close to its share. The blocks decide which thread fills a row, never what the row
holds, and they balance any order.
"""

import numpy as np
from numba import njit, prange

from .atomics import PREFETCH, prefetch
from .jit import graph_kernel
from .sorting import sort_by_high_word_with


STRIDE = 1024   # run r of RUN rows goes to block r % STRIDE; prange hands each thread a run of
                # blocks
SPREAD = 633    # odd, so j -> j * SPREAD % STRIDE permutes the blocks: the first rows (the
                # largest hubs, when hub-sorted) land in blocks that different threads run
RUN = 16        # rows taken one after another: their edges are read front to back when the
                # rows come in the graph's order (a run of the largest hubs, in local order,
                # still goes to one thread)
ID_ORDER_RUN = 256  # the same for rows in the graph's order, whose degrees are mixed


@njit(nogil=True, cache=True, inline="always")
def _prefetch_ahead(indptr, indices, rows, n, i, state):
    """Start the reads of state at the first PREFETCH targets of the row RUN // 4 ahead."""
    k = i + RUN // 4
    if k < n:
        u = rows[k]
        for e in range(indptr[u], min(indptr[u + 1], indptr[u] + PREFETCH)):
            prefetch(state, indices[e])


@graph_kernel("indices")
def plan_mark_remote(indptr, indices, gvids, owner, pid, mark, run=RUN):
    """mark[t] = 1 for every target t of the partition's rows (`gvids`, in any order) owned by
    another partition."""
    boundary = np.zeros(STRIDE, dtype=np.int64)
    n = gvids.size
    for j in prange(STRIDE):
        count = 0
        for r in range(j * SPREAD % STRIDE, -(-n // run), STRIDE):
            for i in range(r * run, min(n, (r + 1) * run)):
                _prefetch_ahead(indptr, indices, gvids, n, i, owner)
                u = gvids[i]
                end = indptr[u + 1]
                for e in range(indptr[u], end):
                    if e + PREFETCH < end:
                        prefetch(owner, indices[e + PREFETCH])
                    t = indices[e]
                    if owner[t] != pid:
                        if mark[t] == 0:    # read first: a hub's line stays shared
                            mark[t] = 1
                        count += 1
        boundary[j] = count
    return boundary.sum()


@graph_kernel("gvids")
def plan_row_degrees(indptr, gvids, out):
    for i in prange(gvids.size):
        u = gvids[i]
        out[i + 1] = indptr[u + 1] - indptr[u]


CODE_BITS = 32              # a table entry: key << CODE_BITS | code
CODE_MASK = (1 << CODE_BITS) - 1
ROW_SCRATCH = 4096          # rows up to this long are ordered in their block's scratch


@graph_kernel("degree")
def plan_keys(degree, table):
    """table[v] = the sort key of vertex v in the high word, code 0: the rank of its degree among
    the distinct degrees, highest first (the order of the degrees, descending, in as few bits as
    it takes, so that a row sorts in few radix passes)."""
    top = 0
    for v in range(degree.size):
        top = max(top, degree[v])
    present = np.zeros(top + 1, np.int64)
    for v in prange(degree.size):
        if present[degree[v]] == 0:     # read first (a benign race: every writer stores 1)
            present[degree[v]] = 1
    above = 0
    for d in range(top, -1, -1):    # present[d] becomes the count of distinct degrees above d
        p = present[d]
        present[d] = above
        above += p
    for v in prange(degree.size):
        table[v] = present[degree[v]] << CODE_BITS


@graph_kernel("ids")
def plan_codes(table, ids, base):
    """The code of vertex ids[i] in `table` becomes base + i (its key kept)."""
    for i in prange(ids.size):
        v = ids[i]
        table[v] = ((table[v] >> CODE_BITS) << CODE_BITS) | (base + i)


GHOST_BLOCKS = 64   # runs of each partition's vertex list plan_ghosts scans at once


@graph_kernel("order")
def plan_ghosts(mark, order, part_ptr, table, n_local, ghost_ptr):
    """The marked vertices of `order` (every partition's vertices, partition after partition,
    each in its local order, part_ptr[q]:part_ptr[q + 1] for partition q), in that order: the
    ghosts, grouped by owner. Ghost k gets code n_local + k in `table`; ghost_ptr[q] is where
    partition q's group starts; the marks are cleared. Returns the ghosts."""
    parts = part_ptr.size - 1
    runs = parts * GHOST_BLOCKS
    found = np.zeros(runs + 1, np.int64)
    for r in prange(runs):
        q, k = r // GHOST_BLOCKS, r % GHOST_BLOCKS
        size = part_ptr[q + 1] - part_ptr[q]
        c = 0
        for i in range(part_ptr[q] + size * k // GHOST_BLOCKS,
                       part_ptr[q] + size * (k + 1) // GHOST_BLOCKS):
            if mark[order[i]]:
                c += 1
        found[r + 1] = c
    for r in range(runs):
        found[r + 1] += found[r]
    for q in range(parts + 1):
        ghost_ptr[q] = found[q * GHOST_BLOCKS]
    ghosts = np.empty(found[runs], order.dtype)
    for r in prange(runs):
        q, k = r // GHOST_BLOCKS, r % GHOST_BLOCKS
        size = part_ptr[q + 1] - part_ptr[q]
        at = found[r]
        for i in range(part_ptr[q] + size * k // GHOST_BLOCKS,
                       part_ptr[q] + size * (k + 1) // GHOST_BLOCKS):
            v = order[i]
            if mark[v]:
                mark[v] = 0
                ghosts[at] = v
                table[v] = ((table[v] >> CODE_BITS) << CODE_BITS) | (n_local + at)
                at += 1
    return ghosts


@graph_kernel("indices")
def plan_fill(indptr, indices, weights, has_weights, rows, dest, table, n_local,
              local_indices, local_weights, run=RUN):
    """Row rows[k] of (indptr, indices, weights) becomes the partition's row at dest[k] (the
    rows, all of the partition's or a block of them, in any order: in the graph's, its edges are read front to back), its targets renamed
    by their codes in `table` (a local id, or n_local + ghost slot): local targets and boundary
    targets in two groups, each by ascending key (`plan_keys`), ties in the row's order, the
    group whose first key is smaller first; so a group is a prefix or a suffix of the row (what
    cc_link_rest reads of a row). One random read per edge (its target's table entry, key and
    code together), prefetched within the row and for a row a few ahead. May run in place (the
    same arrays in and out, rows = arange, dest = indptr[:-1]): a row is read whole before it
    is written.

    A group's entries are ordered as int64s packing (key, position in the group), by insertion
    up to SHORT entries, else by sort_by_high_word (radix from RADIX entries), in the block's
    scratch for rows up to ROW_SCRATCH entries."""
    n = rows.size
    for j in prange(STRIDE):
        block_packed = np.empty(ROW_SCRATCH, np.int64)
        block_codes = np.empty(ROW_SCRATCH, np.int64)
        block_w = np.empty(ROW_SCRATCH if has_weights else 0, np.float64)
        block_tmp = np.empty(ROW_SCRATCH, np.int64)
        count = np.empty(256, np.int64)
        for r in range(j * SPREAD % STRIDE, -(-n // run), STRIDE):
            for i in range(r * run, min(n, (r + 1) * run)):
                _prefetch_ahead(indptr, indices, rows, n, i, table)
                u = rows[i]
                a, b = indptr[u], indptr[u + 1]
                length = b - a
                if length <= ROW_SCRATCH:
                    packed, codes, w, tmp = block_packed, block_codes, block_w, block_tmp
                else:
                    packed, codes = np.empty(length, np.int64), np.empty(length, np.int64)
                    w = np.empty(length if has_weights else 0, np.float64)
                    tmp = np.empty(length, np.int64)
                _fill_row(indices, weights, has_weights, a, b, table, n_local, packed, codes,
                          w, tmp, count, local_indices, local_weights, dest[i])


@njit(nogil=True, cache=True)
def _fill_row(indices, weights, has_weights, a, b, table, n_local, packed, codes, w, tmp, count,
              out, out_weights, dest):
    """plan_fill's row [a, b): local targets packed from the front of the scratch, boundary
    ones from its back (reversed after), each group sorted, then written out from `dest`."""
    length = b - a
    n_near = 0
    n_far = 0
    for p in range(length):
        e = a + p
        if p + PREFETCH < length:
            prefetch(table, indices[e + PREFETCH])
        x = table[indices[e]]
        code = x & CODE_MASK
        key = x >> CODE_BITS
        if code < n_local:
            at = n_near
            packed[at] = (key << 32) | n_near
            n_near += 1
        else:
            at = length - 1 - n_far
            packed[at] = (key << 32) | n_far
            n_far += 1
        codes[at] = code
        if has_weights:
            w[at] = weights[e]
    _reverse(packed, n_near, length)    # the boundary group in the row's order
    for lo, hi in ((0, n_near), (n_near, length)):      # one call site each: one inlined copy
        if hi - lo <= RANK_SORT:
            _rank_sort(packed, lo, hi, tmp)
        else:
            sort_by_high_word_with(packed, lo, hi, tmp, count)
    far_first = 0 < n_near < length and packed[n_near] >> 32 < packed[0] >> 32
    for g in range(2):
        if (g == 0) != far_first:       # the local group
            lo, hi, base, step = 0, n_near, 0, 1
        else:
            lo, hi, base, step = n_near, length, length - 1, -1
        for s in range(lo, hi):
            at = base + step * (packed[s] & 0xFFFFFFFF)
            out[dest] = codes[at]
            if has_weights:
                out_weights[dest] = w[at]
            dest += 1


RANK_SORT = 32      # groups up to this long sort by counting each item's rank


@njit(nogil=True, cache=True)
def _rank_sort(a, lo, hi, tmp):
    """Sort a[lo:hi] of distinct items: each goes to its rank, the count of items below it. The
    n**2 comparisons have no branches to mispredict (and vectorise), which for short groups
    beats insertion sort's n**2 / 4 unpredictable ones."""
    n = hi - lo
    for i in range(n):
        tmp[i] = a[lo + i]
    for i in range(n):
        x = tmp[i]
        rank = 0
        for j in range(n):
            rank += tmp[j] < x
        a[lo + rank] = x


@njit(nogil=True, cache=True)
def _reverse(arr, lo, hi):
    hi -= 1
    while lo < hi:
        arr[lo], arr[hi] = arr[hi], arr[lo]
        lo += 1
        hi -= 1
