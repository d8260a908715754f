"""Box kernels used by the exchange on host arrays: combine a peer's box into an inbox, find the
touched entries, gather, fill, pack flags to bits and put them into a reader's bitmap. All
parallel: boxes hold one entry per remote vertex, millions on large graphs, so none of these may be
a single-threaded NumPy pass (np.packbits / np.unpackbits are).

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


def box_fold(inbox, pos, vals, combine, idx=None, offset=0):
    """Fold a peer's box into an inbox with the message's `combine`: entry i of `vals` goes to
    inbox position pos[i], or, given the peer's slots `idx` (numbered from `offset`), to
    pos[idx[i] - offset]."""
    if idx is not None:
        at = np.empty(idx.size, dtype=np.int64)
        box_positions(pos, idx, offset, at)
        pos = at
    COMBINE[combine](inbox, pos, vals)


@kernel("pos")
def box_gather(src, pos, out):
    for i in prange(pos.size):
        out[i] = src[pos[i]]


@kernel("out")
def box_pack_bits(flags, pos, out):
    """out = the flags at `pos`, packed 8 to a byte, flag i in bit i & 7 of byte i >> 3 (the
    "little" bit order of np.packbits, the order the kernels test ghost bits in); the last byte's
    unused bits are 0. `out` holds (pos.size + 7) // 8 bytes. Each iteration writes its own byte."""
    n = pos.size
    for j in prange(out.size):
        byte = 0
        for k in range(8):
            i = (j << 3) + k
            if i < n and flags[pos[i]]:
                byte |= 1 << k
        out[j] = byte


@kernel("packed")
def box_put_bits(packed, bits, a, b):
    """Bits a..b-1 of the bitmap `bits` (uint8, box_pack_bits' order) = bits 0..b-a-1 of
    `packed`; the other bits of the bytes it touches keep their values (they belong to other
    owners' ranges). Each iteration writes its own byte of `bits`."""
    first = a >> 3
    nbytes = ((b + 7) >> 3) - first if b > a else 0
    for k in prange(nbytes):
        j = first + k
        i0 = (j << 3) - a           # bit of `packed` that lands on bit 0 of byte j
        if i0 >= 0:
            q, r = i0 >> 3, i0 & 7
            w = packed[q] >> r
            if r and q + 1 < packed.size:
                w |= packed[q + 1] << (8 - r)
        else:
            w = packed[0] << -i0
        lo = max(a - (j << 3), 0)
        hi = min(b - (j << 3), 8)
        mask = ((1 << hi) - 1) ^ ((1 << lo) - 1)
        bits[j] = (bits[j] & ~mask) | (w & mask)


@kernel("count", counter=True)
def box_pack(box, touched, count, identity, idx, vals, n_out):
    """A push box's messages out in one pass, for a box whose ghosts have one owner: with
    n = count[0] slots recorded in `touched`, their (slot, value) pairs in idx[:n], vals[:n] when
    those are fewer bytes than the box (INDEX_BYTES + itemsize each), else the whole box in
    vals; n_out[0] = n. Every slot read is reset to `identity`, and count[0] to 0. On a GPU
    `idx`, `vals` and `n_out` are mapped host memory, so the messages reach the host with no
    copy and one wait."""
    n = count[0]
    n_out[0] = n
    if n * (8 + box.itemsize) < box.size * box.itemsize:
        for i in prange(n):
            t = touched[i]
            idx[i] = t
            vals[i] = box[t]
            box[t] = identity
    else:
        for i in prange(box.size):
            vals[i] = box[i]
            box[i] = identity
    count[0] = 0


@njit(nogil=True, cache=True)
def _owner_of(ghost_ptr, s):
    q = 0
    while ghost_ptr[q + 1] <= s:
        q += 1
    return q


@kernel("count", counter=True)
def box_split(box, touched, count, ghost_ptr, identity, idx, vals, sent):
    """A push box's messages split by owner for peers that read them in place (`box_fold_peer`):
    with n = count[0] recorded slots, when their (slot, value) pairs are fewer bytes than the box,
    owner q's go to idx and vals from position ghost_ptr[q] on, sent[q] of them, and each slot
    read is reset to `identity`; else every sent[q] = -1 and the box stays, to be read whole and
    then reset (`box_unsplit`). sent[-1] = n (sent has an entry per partition, and this one);
    count[0] is reset to 0."""
    n = count[0]
    for q in range(sent.size - 1):
        sent[q] = 0
    sent[sent.size - 1] = n
    if n * (8 + box.itemsize) >= box.size * box.itemsize:
        for q in range(sent.size - 1):
            sent[q] = -1
    else:
        for i in range(n):
            t = touched[i]
            q = _owner_of(ghost_ptr, t)
            j = ghost_ptr[q] + sent[q]
            sent[q] += 1
            idx[j] = t
            vals[j] = box[t]
            box[t] = identity
    count[0] = 0


def box_fold_peer(inbox, pos, idx, vals, box, sent, q, a, b, combine):
    """Fold what a peer's `box_split` left for owner q into an inbox with `combine`: sent[q]
    (slot, value) pairs from position a of idx and vals, or (sent[q] < 0) the peer's box slots
    a..b-1 whole; slot s lands at inbox position pos[s - a]."""
    n = int(sent[q])
    if n < 0:
        COMBINE[combine](inbox, pos, box[a:b])
    elif n:
        box_fold(inbox, pos, vals[a:a + n], combine, idx[a:a + n], a)


def box_unsplit(box, sent, identity):
    """After the peers read a box whole (`box_split` gave up on pairs): back to the identity."""
    if sent.size and sent[0] < 0:
        box_fill(box, identity)


@kernel("idx")
def box_place(pos, idx, offset, vals, lvid, out):
    """lvid[i] = pos[idx[i] - offset] and out[i] = vals[i]: a sparse box's entries with their
    inbox positions, copied into a device-readable buffer in the same pass."""
    for i in prange(idx.size):
        lvid[i] = pos[idx[i] - offset]
        out[i] = vals[i]


@kernel("idx")
def box_positions(pos, idx, offset, out):
    """out[i] = pos[idx[i] - offset]: inbox positions of a sparse box's entries."""
    for i in prange(idx.size):
        out[i] = pos[idx[i] - offset]


@kernel("pos")
def box_scatter(vals, pos, out, old, new):
    """out[pos[i]] = vals[i], or `new` where vals[i] == old (cast to out's type): a partition's
    state put in place by global id (positions are distinct: no races). Host only: results."""
    for i in prange(pos.size):
        v = vals[i]
        out[pos[i]] = new if v == old else v


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


@kernel("box")
def box_count(box, identity):
    """How many entries differ from the identity."""
    n = 0
    for i in prange(box.size):
        n += box[i] != identity
    return n


def box_touched(box, identity):
    """Indices of the entries that differ from the identity (a message was written), in order."""
    return (_touched if box.size >= 4 * CHUNK else _touched_serial)(box, identity)
