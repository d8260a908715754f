"""Box helpers, CUDA twins of kernels_cpu/boxes.py (CuPy element-wise operations; positions within
one box are distinct, so plain fancy-index updates are race-free)."""

import cupy


def box_min(inbox, pos, vals):
    inbox[pos] = cupy.minimum(inbox[pos], vals)


def box_max(inbox, pos, vals):
    inbox[pos] = cupy.maximum(inbox[pos], vals)


def box_sum(inbox, pos, vals):
    inbox[pos] += vals


def box_or(inbox, pos, vals):
    inbox[pos] |= vals


COMBINE = {"min": box_min, "max": box_max, "sum": box_sum, "or": box_or}


def box_gather(src, pos, out):
    out[:] = src[pos]


def box_touched(box, identity):
    """Indices of the entries that differ from the identity (a message was written)."""
    return cupy.flatnonzero(box != identity)


def box_pack_bits(flags, pos, out):
    """out = the flags at `pos`, packed 8 to a byte, first flag in the most significant bit
    (cupy.packbits' default "big" order, the one every CuPy version has; the CPU twin uses it
    too). `out` holds (pos.size + 7) // 8 bytes."""
    if pos.size:      # cupy.packbits of an empty array returns it, not uint8
        out[...] = cupy.packbits(flags[pos])


def box_unpack_bits(packed, out):
    """out[i] = bit i of `packed` (box_pack_bits' order), for i < out.size; `out` is bool."""
    if out.size:
        out[...] = cupy.unpackbits(packed)[:out.size].view(cupy.bool_)


def box_positions(pos, idx, offset, out):
    out[:] = pos[idx - offset]


def box_fill(arr, value):
    arr.fill(value)


def box_iota(arr):
    arr[:] = cupy.arange(arr.size, dtype=arr.dtype)


def box_set(arr, idx, value):
    arr[idx] = value


def box_sort(idx):
    return cupy.sort(idx)


def box_first(inbox, pos, identity):
    """The positions among `pos` whose inbox entry still holds the identity."""
    return pos[inbox[pos] == identity]
