"""A clean CSR (rows sorted, each neighbour once, no self-loops) from an unordered list of
entries (row, target), built by buckets of rows: the generators' and the ranks' CSR build.

1. `bucket_entries`: a counting sort of the entries by bucket (2**shift consecutive rows each),
   BUCKET_PIECES runs of the entries counted and placed in parallel, each run's entries of a
   bucket after those of the runs before it. An entry keeps its row's offset in the bucket
   (uint16) and its target.
2. `sort_buckets`: each bucket, on one thread, in scratch memory the size of the bucket (chosen
   to stay in cache): a least-significant-digit radix sort of its entries by target, then a
   stable counting sort by row, so every row comes out sorted; then each row without repeats
   or self-loops is written back over the bucket's front, and its length into `counts`.
3. `gather_buckets`: every bucket's kept front copied to its place in the compact array.

Every pass reads and writes memory front to back, except the placement into buckets (one write
stream per bucket, which stay in cache); no atomics, and which thread takes a bucket never
changes what it holds. Rows come out sorted whatever the entries' order, so the result does not
depend on the thread count or on the order the entries came in.
"""

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .jit import graph_kernel
from .sorting import interval, sort_range

BUCKET_PIECES = 64      # runs of entries bucket_entries counts and places at once
BUCKET_ENTRIES = 1 << 16    # about this many entries per bucket (their scratch stays in cache)
MAX_SHIFT = 16          # rows per bucket at most 2**16: an offset fits in uint16
DIGIT = 12              # at most this many bits of the target per radix pass
SMALL_BUCKET = 2048     # buckets of fewer entries sort row by row (`sort_range`)


def bucket_shift(n_rows, n_entries):
    """log2 of the rows per bucket: about BUCKET_ENTRIES entries per bucket on average."""
    per_row = max(n_entries, 1) / max(n_rows, 1)
    shift = int(np.floor(np.log2(max(BUCKET_ENTRIES / per_row, 1.0))))
    return min(shift, MAX_SHIFT)


def n_buckets(n_rows, shift):
    return max(1, -(-n_rows // (1 << shift)))


@graph_kernel("src")
def bucket_entries(src, dst, mirror, first, shift, bits, nb):
    """The entries (src[e], dst[e]), and with `mirror` (dst[e], src[e]) unless a self-loop,
    grouped into `nb` buckets by (row - first) >> shift: (bucket_ptr, keys), bucket b's entries
    at bucket_ptr[b]:bucket_ptr[b + 1] of `keys`, each the row's offset in its bucket above the
    target's `bits` bits (one array: one write stream per bucket)."""
    step = -(-src.size // BUCKET_PIECES)
    mask = (1 << shift) - 1
    at = np.zeros((BUCKET_PIECES, nb), np.int64)
    for c in prange(BUCKET_PIECES):     # (counters local to the run: no false sharing)
        mine = np.zeros(nb, np.int64)
        for e in range(c * step, min(src.size, (c + 1) * step)):
            u, v = src[e], dst[e]
            mine[(u - first) >> shift] += 1
            if mirror and u != v:
                mine[(v - first) >> shift] += 1
        at[c] = mine
    bucket_ptr = np.empty(nb + 1, np.int64)
    total = 0
    for b in range(nb):       # each run's first slot in each bucket
        bucket_ptr[b] = total
        for c in range(BUCKET_PIECES):
            k = at[c, b]
            at[c, b] = total
            total += k
    bucket_ptr[nb] = total
    keys = np.empty(total, np.int64)
    for c in prange(BUCKET_PIECES):
        mine = at[c].copy()
        for e in range(c * step, min(src.size, (c + 1) * step)):
            u, v = np.int64(src[e]), np.int64(dst[e])
            b = (u - first) >> shift
            p = mine[b]
            mine[b] = p + 1
            keys[p] = (((u - first) & mask) << bits) | v
            if mirror and u != v:
                b = (v - first) >> shift
                p = mine[b]
                mine[b] = p + 1
                keys[p] = (((v - first) & mask) << bits) | u
    return bucket_ptr, keys


@njit(nogil=True, cache=True)
def _digit_pass(a, out, lo, width, count):
    """a into out stably ordered by the bits lo:lo + width; False, moving nothing, when every
    item has the same digit there."""
    m = a.size
    mask = (1 << width) - 1
    count[:1 << width] = 0
    for i in range(m):
        count[(a[i] >> lo) & mask] += 1
    if count[(a[0] >> lo) & mask] == m:
        return False
    total = 0
    for d in range(1 << width):
        c = count[d]
        count[d] = total
        total += c
    for i in range(m):
        d = (a[i] >> lo) & mask
        out[count[d]] = a[i]
        count[d] += 1
    return True


@njit(nogil=True, cache=True)
def _sort_bucket(keys, key_bits, scratch):
    """Sort keys (non-negative, below 2**key_bits) in place: LSD radix, passes of at most DIGIT
    bits (a pass whose digit every key shares is skipped), `scratch` as large; short ones by
    `sort_range`."""
    m = keys.size
    if m < SMALL_BUCKET:
        sort_range(keys, 0, m)
        return
    passes = max(1, -(-key_bits // DIGIT))
    width = -(-key_bits // passes)
    count = np.empty(1 << width, np.int64)
    in_scratch = False
    for k in range(passes):
        lo, w = k * width, min(width, key_bits - k * width)
        if in_scratch:
            in_scratch = not _digit_pass(scratch, keys, lo, w, count)
        else:
            in_scratch = _digit_pass(keys, scratch, lo, w, count)
    if in_scratch:
        keys[:] = scratch


@graph_kernel("keys")
def sort_buckets(bucket_ptr, keys, shift, first, bits, counts, kept):
    """Each bucket's rows sorted, without repeats or self-loops (a target equal to the row's
    vertex, first + its row), their targets written back at the bucket's front: counts[row + 1]
    = the row's kept length, kept[b] = the bucket's. `bits`: the bits of a key below the row
    (`bucket_entries`); counts has one more item than there are rows."""
    nb = bucket_ptr.size - 1
    n_rows = counts.size - 1
    mask = (1 << bits) - 1
    for b in prange(nb):
        start, stop = bucket_ptr[b], bucket_ptr[b + 1]
        lo = b << shift
        nr = min(1 << shift, n_rows - lo)
        mine = keys[start:stop]
        row_bits = 0
        while (1 << row_bits) < nr:
            row_bits += 1
        _sort_bucket(mine, bits + row_bits, np.empty(stop - start, np.int64))
        k = 0
        r = -1
        row_start = 0
        for i in range(stop - start):
            key = mine[i]
            row = key >> bits
            v = key & mask
            if row != r:
                if r >= 0:
                    counts[lo + r + 1] = k - row_start
                r = row
                row_start = k
            if v != first + lo + row and (k == row_start or v != mine[k - 1]):
                mine[k] = v
                k += 1
        if r >= 0:
            counts[lo + r + 1] = k - row_start
        kept[b] = k


@graph_kernel("out")
def gather_buckets(bucket_ptr, kept, keys, indptr, shift, out):
    """out[indptr[b << shift]:...] = the kept front of bucket b, for every bucket."""
    for b in prange(bucket_ptr.size - 1):
        a = bucket_ptr[b]
        d = indptr[b << shift]
        for i in range(kept[b]):
            out[d + i] = keys[a + i]


@graph_kernel("src")
def count_home_buckets(src, dst, mirror, bounds, base, shift, hist):
    """hist[base[h] + ((u - bounds[h]) >> shift)] += 1 for the row u of every entry (src[e],
    dst[e]), and with `mirror` of (dst[e], src[e]) unless a self-loop; h is u's home block
    (bounds[h] <= u < bounds[h + 1]): how many entries each home's buckets get."""
    nb = hist.size
    pieces = max(1, min(BUCKET_PIECES, src.size // max(4 * nb, 1)))
    step = -(-src.size // pieces)
    at = np.zeros((pieces, nb), np.int64)
    for c in prange(pieces):
        mine = np.zeros(nb, np.int64)
        for e in range(c * step, min(src.size, (c + 1) * step)):
            u, v = src[e], dst[e]
            h = interval(u, bounds)
            mine[base[h] + ((u - bounds[h]) >> shift)] += 1
            if mirror and u != v:
                h = interval(v, bounds)
                mine[base[h] + ((v - bounds[h]) >> shift)] += 1
        at[c] = mine
    for b in prange(nb):
        for c in range(pieces):
            hist[b] += at[c, b]


@graph_kernel("rows")
def place_entries(rows, targets, first, shift, bits, cursor, keys):
    """Entries (rows[e], targets[e]) of rows first.. into their buckets (2**shift rows each) of
    `keys`, as `bucket_entries` packs them: bucket b's next free slot is cursor[b], which
    advances. Runs of the entries are placed at once, each run's entries of a bucket after
    those of the runs before it."""
    nb = cursor.size
    pieces = max(1, min(BUCKET_PIECES, rows.size // max(4 * nb, 1)))
    step = -(-rows.size // pieces)
    mask = (1 << shift) - 1
    at = np.zeros((pieces, nb), np.int64)
    for c in prange(pieces):
        mine = np.zeros(nb, np.int64)
        for e in range(c * step, min(rows.size, (c + 1) * step)):
            mine[(rows[e] - first) >> shift] += 1
        at[c] = mine
    for b in prange(nb):
        total = cursor[b]
        for c in range(pieces):
            k = at[c, b]
            at[c, b] = total
            total += k
        cursor[b] = total
    for c in prange(pieces):
        mine = at[c].copy()
        for e in range(c * step, min(rows.size, (c + 1) * step)):
            u = np.int64(rows[e]) - first
            b = u >> shift
            p = mine[b]
            mine[b] = p + 1
            keys[p] = ((u & mask) << bits) | np.int64(targets[e])


class Buckets(NamedTuple):
    """Entries grouped by buckets of rows (`bucket_entries`), for `sorted_csr`."""
    bucket_ptr: np.ndarray
    keys: np.ndarray
    shift: int
    bits: int
    first: int
    n_rows: int
    dtype: np.dtype


@njit(nogil=True, cache=True)
def gather_buckets_in_place(bucket_ptr, kept, keys, indptr, shift, out):
    """gather_buckets into `out`, a view of the keys' own memory as the indices' type (of at
    most 8 bytes): bucket after bucket, front to back, each item read before any write reaches
    it (an item's destination is never past its source, and the destination type is no wider)."""
    for b in range(bucket_ptr.size - 1):
        a = bucket_ptr[b]
        d = indptr[b << shift]
        for i in range(kept[b]):
            v = keys[a + i]
            out[d + i] = v


def bucketed(src, dst, n_rows, bits, mirror=False, first=0):
    """The entries (src[e], dst[e]) of rows first .. first + n_rows - 1 (with `mirror` also
    (dst[e], src[e]) unless a self-loop) grouped by buckets of rows; targets are below 2**bits.
    The arrays may be freed once this returns."""
    bits = max(int(bits), 1)
    shift = bucket_shift(n_rows, src.size * (2 if mirror else 1))
    nb = n_buckets(n_rows, shift)
    bucket_ptr, keys = bucket_entries(src, dst, mirror, first, shift, bits, nb)
    return Buckets(bucket_ptr, keys, shift, bits, first, n_rows, dst.dtype)


def sorted_csr(buckets, in_place=False):
    """(indptr, indices) of the bucketed entries' rows: each row sorted, without repeats or
    self-loops; indices of the targets' dtype. Consumes the buckets' keys. `in_place`: indices
    is the front of the keys' own memory (one array of 8 bytes per entry at any time instead
    of that and the indices; the gather is then serial)."""
    bucket_ptr, keys, shift, bits, first, n_rows, dtype = buckets
    counts = np.zeros(n_rows + 1, np.int64)
    kept = np.empty(bucket_ptr.size - 1, np.int64)
    sort_buckets(bucket_ptr, keys, shift, first, bits, counts, kept)
    indptr = np.cumsum(counts, out=counts)
    if in_place:
        indices = keys.view(dtype)
        gather_buckets_in_place(bucket_ptr, kept, keys, indptr, shift, indices)
        return indptr, indices[:indptr[-1]]
    indices = np.empty(int(indptr[-1]), dtype)
    gather_buckets(bucket_ptr, kept, keys, indptr, shift, indices)
    return indptr, indices
