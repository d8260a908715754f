"""Box helpers, CUDA twins of kernels_cpu/boxes.py (CuPy element-wise operations; positions within
one box are distinct, so plain fancy-index updates are race-free). Flags are packed and put into a
reader's bitmap by raw kernels, one thread per byte."""

import cupy

from ._cuda import function, i64, launch


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


SOURCE = r"""
__global__ void totem_box_pack_bits(const bool* flags, const i64* pos, i64 n,
                                    unsigned char* out, i64 nbytes) {
    i64 j = global_thread();
    if (j >= nbytes) return;
    unsigned int byte = 0;
    for (int k = 0; k < 8; k++) {
        i64 i = (j << 3) + k;
        if (i < n && flags[pos[i]]) byte |= 1u << k;
    }
    out[j] = (unsigned char)byte;
}

__global__ void totem_box_put_bits(const unsigned char* packed, i64 npacked,
                                   unsigned char* bits, i64 a, i64 b) {
    i64 j = (a >> 3) + global_thread();
    if (j >= (b + 7) >> 3) return;
    i64 i0 = (j << 3) - a;
    unsigned int w;
    if (i0 >= 0) {
        i64 q = i0 >> 3;
        int r = (int)(i0 & 7);
        w = packed[q] >> r;
        if (r && q + 1 < npacked) w |= (unsigned int)packed[q + 1] << (8 - r);
    } else {
        w = (unsigned int)packed[0] << (int)(-i0);
    }
    i64 lo = max(a - (j << 3), (i64)0), hi = min(b - (j << 3), (i64)8);
    unsigned int mask = ((1u << hi) - 1) ^ ((1u << lo) - 1);
    bits[j] = (unsigned char)((bits[j] & ~mask) | (w & mask));
}
"""


def box_pack_bits(flags, pos, out):
    """out = the flags at `pos`, packed 8 to a byte, flag i in bit i & 7 of byte i >> 3 (the
    CPU twin's order); one thread per byte, gathering its 8 flags."""
    launch(function(SOURCE, "totem_box_pack_bits"), out.size,
           (flags, pos, i64(pos.size), out, i64(out.size)))


def box_put_bits(packed, bits, a, b):
    """Bits a..b-1 of the bitmap `bits` = bits 0..b-a-1 of `packed`, other bits kept; one thread
    per byte of `bits` in the range."""
    if b > a:
        launch(function(SOURCE, "totem_box_put_bits"), ((b + 7) >> 3) - (a >> 3),
               (packed, i64(packed.size), bits, i64(a), i64(b)))


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
