"""Vertex orders the partitioner needs (partitioners/plan.py), parallel: by degree (a stable
counting sort), the serpentine deal, a set of ids in increasing order, where a prefix of an
order reaches a share of the edges, and scatters of positions into per-vertex tables.

The degree order counts by the rank of each degree among the distinct degrees (a graph of E
edges has fewer than sqrt(2E) of them), ORDER_PIECES runs of the items counted and placed at
once, each run's items of a rank after those of the runs before it: the order np.argsort gives
with kind="stable", whatever the thread count.
"""

import numpy as np
from numba import njit, prange

from .jit import graph_kernel

ORDER_PIECES = 64


@njit(nogil=True, cache=True)
def _pieces(n, buckets):
    """Runs to count in: at most ORDER_PIECES, each of at least 4 items per bucket."""
    return max(1, min(ORDER_PIECES, n // max(4 * buckets, 1)))


@njit(nogil=True, cache=True, inline="always")
def _starts(at):
    """Counts per (piece, digit) to where each piece's items of each digit start: all of digit
    0 first, piece by piece, then digit 1, ..."""
    total = 0
    for d in range(at.shape[1]):
        for c in range(at.shape[0]):
            k = at[c, d]
            at[c, d] = total
            total += k


@graph_kernel("degree")
def degree_order(degree, descending):
    """The positions of `degree` (non-negative integers) ordered by degree, highest first if
    `descending`, ties by position: np.argsort(-degree or degree, kind="stable")."""
    n = degree.size
    out = np.empty(n, np.int64)
    if n == 0:
        return out
    top = 0
    for i in range(n):
        top = max(top, degree[i])
    rank = np.zeros(top + 1, np.int64)
    for i in prange(n):
        if rank[degree[i]] == 0:    # read first: a line written by every thread would bounce
            rank[degree[i]] = 1     # a benign race: every writer stores 1
    distinct = 0
    for k in range(top + 1):        # rank[d]: distinct degrees before d in the order
        d = top - k if descending else k
        present = rank[d]
        rank[d] = distinct
        distinct += present
    pieces = _pieces(n, distinct)
    step = -(-n // pieces)
    at = np.zeros((pieces, distinct), np.int64)
    for c in prange(pieces):
        mine = np.zeros(distinct, np.int64)
        for i in range(c * step, min(n, (c + 1) * step)):
            mine[rank[degree[i]]] += 1
        at[c] = mine
    _starts(at)
    for c in prange(pieces):
        mine = at[c].copy()
        for i in range(c * step, min(n, (c + 1) * step)):
            r = rank[degree[i]]
            out[mine[r]] = i
            mine[r] += 1
    return out


RADIX_BITS = 11     # bits of the key per pass of key_order


@graph_kernel("keys")
def key_order(keys, bits):
    """The positions of `keys` (non-negative integers below 2**bits) by key, ties by position:
    np.argsort(keys, kind="stable"), by a least-significant-digit radix sort, RADIX_BITS bits a
    pass, each pass a parallel counting sort (ORDER_PIECES runs)."""
    n = keys.size
    order = np.arange(n)
    if n == 0:
        return order
    spare = np.empty(n, np.int64)
    passes = max(1, -(-bits // RADIX_BITS))
    width = 1 << RADIX_BITS
    mask = width - 1
    pieces = _pieces(n, width)
    step = -(-n // pieces)
    at = np.zeros((pieces, width), np.int64)
    for k in range(passes):
        shift = k * RADIX_BITS
        for c in prange(pieces):
            mine = np.zeros(width, np.int64)
            for i in range(c * step, min(n, (c + 1) * step)):
                mine[(keys[order[i]] >> shift) & mask] += 1
            at[c] = mine
        _starts(at)
        for c in prange(pieces):
            mine = at[c].copy()
            for i in range(c * step, min(n, (c + 1) * step)):
                d = (keys[order[i]] >> shift) & mask
                spare[mine[d]] = order[i]
                mine[d] += 1
        order, spare = spare, order
    return order


@graph_kernel("items")
def serpentine_deal(items, parts):
    """`items` dealt to `parts` parts in serpentine order (0, 1, .., parts-1, parts-1, .., 0,
    0, ..), each part's in the items' order: (dealt, ptr), part k's at dealt[ptr[k]:ptr[k + 1]]."""
    n = items.size
    ptr = np.zeros(parts + 1, np.int64)
    for k in range(parts):
        # part k takes position j * parts + k in even rounds j, j * parts + parts - 1 - k in odd
        full = n // parts
        left = n - full * parts
        extra = 0
        if left:
            extra = 1 if (k if full % 2 == 0 else parts - 1 - k) < left else 0
        ptr[k + 1] = ptr[k] + full + extra
    dealt = np.empty(n, items.dtype)
    for k in range(parts):
        base = ptr[k]
        for j in prange(ptr[k + 1] - base):
            dealt[base + j] = items[j * parts + (k if j % 2 == 0 else parts - 1 - k)]
    return dealt, ptr


@graph_kernel("mark")
def _compact_marked(mark, out):
    """out = the positions of `mark` that are set, ascending; clears them."""
    n = mark.size
    pieces = ORDER_PIECES
    found = np.zeros(pieces + 1, np.int64)
    for c in prange(pieces):
        k = 0
        for i in range(n * c // pieces, n * (c + 1) // pieces):
            k += mark[i]
        found[c + 1] = k
    for c in range(pieces):
        found[c + 1] += found[c]
    for c in prange(pieces):
        at = found[c]
        for i in range(n * c // pieces, n * (c + 1) // pieces):
            if mark[i]:
                out[at] = i
                at += 1
                mark[i] = 0


def marked(mark):
    """The positions whose mark is set, ascending (np.flatnonzero(mark)), the marks cleared."""
    out = np.empty(int(np.count_nonzero(mark)), np.int64)
    _compact_marked(mark, out)
    return out


@graph_kernel("ids")
def pair_keys(high, low, ids, low_bits):
    """high[ids[i]] << low_bits | low[ids[i]] (both non-negative, low below 2**low_bits), as
    int64s."""
    out = np.empty(ids.size, np.int64)
    for i in prange(ids.size):
        out[i] = (np.int64(high[ids[i]]) << low_bits) | np.int64(low[ids[i]])
    return out


@graph_kernel("ids")
def _mark_ids(ids, mark):
    for i in prange(ids.size):
        mark[ids[i]] = 1


def sorted_ids(ids):
    """np.sort(ids) for distinct non-negative ids: a mark per id up to the largest and a parallel
    pass over the marks where the ids are many (a sixteenth of the largest or more), else
    NumPy's sort."""
    n = int(ids.max()) + 1 if ids.size else 0
    if ids.size * 16 < n or ids.size == 0:
        return np.sort(ids)
    mark = np.zeros(n, np.uint8)
    _mark_ids(ids, mark)
    out = np.empty(ids.size, ids.dtype)
    _compact_marked(mark, out)
    return out


@graph_kernel("values")
def prefix_reaching(values, target):
    """The length of the shortest prefix of `values` (non-negative) that adds up to `target` or
    more; with none, values.size + 1 (np.searchsorted(np.cumsum(values), target) + 1)."""
    n = values.size
    pieces = ORDER_PIECES
    sums = np.zeros(pieces + 1, np.int64)
    for c in prange(pieces):
        s = 0
        for i in range(n * c // pieces, n * (c + 1) // pieces):
            s += values[i]
        sums[c + 1] = s
    total = 0
    for c in range(pieces):
        if total + sums[c + 1] >= target:
            for i in range(n * c // pieces, n * (c + 1) // pieces):
                total += values[i]
                if total >= target:
                    return i + 1
        total += sums[c + 1]
    return n + 1


@graph_kernel("idx")
def take(a, idx):
    """a[idx]."""
    out = np.empty(idx.size, a.dtype)
    for i in prange(idx.size):
        out[i] = a[idx[i]]
    return out


@graph_kernel("ids")
def set_positions(table, ids):
    """table[ids[i]] = i."""
    for i in prange(ids.size):
        table[ids[i]] = i


@graph_kernel("ids")
def set_value(table, ids, value):
    """table[ids[i]] = value."""
    for i in prange(ids.size):
        table[ids[i]] = value


@graph_kernel("ids")
def put(table, ids, values):
    """table[ids[i]] = values[i]."""
    for i in prange(ids.size):
        table[ids[i]] = values[i]
