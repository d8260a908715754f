"""Box kernels used by the exchange on host arrays: combine a peer's box into an inbox, find the
touched entries, gather, fill, pack and unpack flags to and from bits. All parallel: boxes hold one
entry per remote vertex, millions on large graphs, so none of these may be a single-threaded NumPy
pass (np.packbits / np.unpackbits are).

Positions within one peer's box are distinct (one ghost slot per remote vertex), so a parallel
loop over the entries writes each inbox position once: no races.
"""

import numpy as np
from numba import njit, prange

from .jit import kernel

CHUNK = 1 << 14


@kernel("pos")
def box_min(inbox, pos, vals):
    for i in prange(pos.size):
        if vals[i] < inbox[pos[i]]:
            inbox[pos[i]] = vals[i]


@kernel("pos")
def box_max(inbox, pos, vals):
    for i in prange(pos.size):
        if vals[i] > inbox[pos[i]]:
            inbox[pos[i]] = vals[i]


@kernel("pos")
def box_sum(inbox, pos, vals):
    for i in prange(pos.size):
        inbox[pos[i]] += vals[i]


@kernel("pos")
def box_or(inbox, pos, vals):
    for i in prange(pos.size):
        inbox[pos[i]] |= vals[i]


COMBINE = {"min": box_min, "max": box_max, "sum": box_sum, "or": box_or}


@kernel("pos")
def box_gather(src, pos, out):
    for i in prange(pos.size):
        out[i] = src[pos[i]]


@kernel("out")
def box_pack_bits(flags, pos, out):
    """out = the flags at `pos`, packed 8 to a byte, first flag in the most significant bit
    (np.packbits' default "big" order, which cupy.packbits also uses); the last byte's unused bits
    are 0. `out` holds (pos.size + 7) // 8 bytes. Each iteration writes its own byte."""
    n = pos.size
    for j in prange(out.size):
        byte = 0
        for k in range(8):
            i = (j << 3) + k
            if i < n and flags[pos[i]]:
                byte |= 0x80 >> k
        out[j] = byte


@kernel("out")
def box_unpack_bits(packed, out):
    """out[i] = bit i of `packed` (box_pack_bits' order), for i < out.size."""
    for i in prange(out.size):
        out[i] = (packed[i >> 3] >> (7 - (i & 7))) & 1


@kernel("idx")
def box_positions(pos, idx, offset, out):
    """out[i] = pos[idx[i] - offset]: inbox positions of a sparse box's entries."""
    for i in prange(idx.size):
        out[i] = pos[idx[i] - offset]


@kernel("arr")
def box_fill(arr, value):
    for i in prange(arr.size):
        arr[i] = value


@kernel("idx")
def box_set(arr, idx, value):
    for i in prange(idx.size):
        arr[idx[i]] = value


def box_sort(idx):
    return np.sort(idx)


@kernel("pos")
def _at_identity(inbox, pos, identity, flags):
    for i in prange(pos.size):
        flags[i] = inbox[pos[i]] == identity


def box_first(inbox, pos, identity):
    """The positions among `pos` whose inbox entry still holds the identity."""
    flags = np.empty(pos.size, dtype=np.uint8)
    _at_identity(inbox, pos, identity, flags)
    sel = box_touched(flags, 0)
    out = np.empty(sel.size, dtype=np.int64)
    box_gather(pos, sel, out)
    return out


@kernel("arr")
def box_iota(arr):
    for i in prange(arr.size):
        arr[i] = i


@njit(parallel=True, nogil=True, cache=True)
def _touched(box, identity):
    n = box.size
    nchunks = (n + CHUNK - 1) // CHUNK
    counts = np.zeros(nchunks + 1, dtype=np.int64)
    for c in prange(nchunks):
        k = 0
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            k += box[i] != identity
        counts[c + 1] = k
    offsets = np.cumsum(counts)
    out = np.empty(offsets[-1], dtype=np.int64)
    for c in prange(nchunks):
        k = offsets[c]
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            if box[i] != identity:
                out[k] = i
                k += 1
    return out


@njit(nogil=True, cache=True)
def _touched_serial(box, identity):
    count = 0
    for i in range(box.size):
        count += box[i] != identity
    out = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(box.size):
        if box[i] != identity:
            out[k] = i
            k += 1
    return out


def box_touched(box, identity):
    """Indices of the entries that differ from the identity (a message was written), in order."""
    return (_touched if box.size >= 4 * CHUNK else _touched_serial)(box, identity)
