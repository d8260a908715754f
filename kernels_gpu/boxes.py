"""Box helpers, CUDA twins of kernels_cpu/boxes.py. What the exchange calls every superstep
(gather, set, fill) is a raw kernel, one thread per entry (CuPy's fancy indexing costs several
launches and tens of microseconds of Python per call), or a memset; the combines, used by tests
only on a device, are CuPy element-wise operations (positions within one box are distinct, so
plain fancy-index updates are race-free). Flags are packed and put into a reader's bitmap by raw
kernels, one thread per byte."""

import cupy
import numpy as np

from ._cuda import CTYPES, function, i64, launch, launch_strided, zero


def box_min(inbox, pos, vals):
    inbox[pos] = cupy.minimum(inbox[pos], vals)


def box_max(inbox, pos, vals):
    inbox[pos] = cupy.maximum(inbox[pos], vals)


def box_sum(inbox, pos, vals):
    inbox[pos] += vals


def box_or(inbox, pos, vals):
    inbox[pos] |= vals


COMBINE = {"min": box_min, "max": box_max, "sum": box_sum, "or": box_or}
_OPS = {"min": 0, "max": 1, "sum": 2, "or": 3}


def box_fold(inbox, pos, vals, combine, idx=None, offset=0):
    """The kernels_cpu twin, one thread per entry (a peer's entries have distinct positions)."""
    k = _typed("totem_box_fold", inbox, vals)
    if k is None:
        at = pos if idx is None else pos[idx - offset]
        COMBINE[combine](inbox, at, vals)
    else:
        launch(k, vals.size, (inbox, pos, idx if idx is not None else i64(0), i64(offset), vals,
                              i64(vals.size), np.int32(_OPS[combine])))


def _typed(name, *arrays):
    """The kernel `name` templated on the arrays' element type, or None where a raw kernel
    does not apply (a type it has no instance for, or a strided array)."""
    dtype = arrays[0].dtype
    if dtype not in CTYPES or not all(a.flags.c_contiguous for a in arrays):
        return None
    return function(SOURCE, name, dtype)


def box_gather(src, pos, out):
    k = _typed("totem_box_gather", src, out, pos)
    if k is None:
        out[:] = src[pos]
    else:
        launch(k, pos.size, (src, pos, i64(pos.size), out))


def box_touched(box, identity):
    """Indices of the entries that differ from the identity (a message was written)."""
    return cupy.flatnonzero(box != identity)


SOURCE = r"""
template <typename T> __device__ __forceinline__ T bit_or(T a, T b) { return a | b; }
__device__ __forceinline__ float bit_or(float a, float) { return a; }
__device__ __forceinline__ double bit_or(double a, double) { return a; }

template <typename T> __device__ __forceinline__ T combined(int op, T d, T v) {
    return op == 0 ? (v < d ? v : d) : op == 1 ? (v > d ? v : d)
         : op == 2 ? (T)(d + v) : (T)bit_or(d, v);
}

template <typename T>
__global__ void totem_box_fold(T* inbox, const i64* pos, const i64* idx, i64 offset,
                               const T* vals, i64 n, int op) {
    i64 i = global_thread();
    if (i >= n) return;
    i64 p = pos[idx ? idx[i] - offset : i];
    inbox[p] = combined(op, inbox[p], vals[i]);
}

// a push box's messages split by owner, for peers that read them in place (the CPU twin says how)
template <typename T>
__global__ void totem_box_split(T* box, const i64* touched, const i64* count,
                                const i64* ghost_ptr, int nparts, T identity, i64 size,
                                i64* idx, T* vals, i64* sent) {
    const i64 n = *count;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    if (global_thread() == 0) sent[nparts] = n;
    if (n * (8 + (i64)sizeof(T)) >= size * (i64)sizeof(T)) {
        if (global_thread() < nparts) sent[global_thread()] = -1;
        return;
    }
    for (i64 i = global_thread(); i < n; i += stride) {
        i64 t = touched[i];
        int q = 0;
        while (ghost_ptr[q + 1] <= t) q++;
        i64 j = ghost_ptr[q] + (i64)atomicAdd((unsigned long long*)&sent[q], 1ull);
        idx[j] = t;
        vals[j] = box[t];
        box[t] = identity;
    }
}

// a peer's split box (its idx, vals, box and sent, read over the link) folded into an inbox
template <typename T>
__global__ void totem_box_fold_peer(T* inbox, const i64* pos, const i64* idx, const T* vals,
                                    const T* box, const i64* sent, int q, i64 a, i64 b, int op) {
    i64 n = sent[q];
    const bool whole = n < 0;
    if (whole) n = b - a;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = global_thread(); i < n; i += stride) {
        i64 s = whole ? i : idx[a + i] - a;
        T v = whole ? box[a + i] : vals[a + i];
        i64 p = pos[s];
        inbox[p] = combined(op, inbox[p], v);
    }
}

template <typename T>
__global__ void totem_box_unsplit(T* box, const i64* sent, i64 size, T identity) {
    if (sent[0] >= 0) return;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    for (i64 i = global_thread(); i < size; i += stride) box[i] = identity;
}

template <typename T>
__global__ void totem_box_gather(const T* src, const i64* pos, i64 n, T* out) {
    i64 i = global_thread();
    if (i < n) out[i] = src[pos[i]];
}

template <typename T>
__global__ void totem_box_set(T* arr, const i64* idx, i64 n, T value) {
    i64 i = global_thread();
    if (i < n) arr[idx[i]] = value;
}

template <typename T>
__global__ void totem_box_put(T* arr, i64 i, T value) {
    arr[i] = value;
}

template <typename T>
__global__ void totem_box_fill(T* arr, i64 n, T value) {
    i64 i = global_thread();
    if (i < n) arr[i] = value;
}

template <typename T>
__global__ void totem_box_pack(T* box, const i64* touched, const i64* count, T identity,
                               i64 size, i64* idx, T* vals, i64* n_out) {
    const i64 n = *count;
    const i64 stride = (i64)gridDim.x * blockDim.x;
    if (global_thread() == 0) *n_out = n;
    if (n * (8 + (i64)sizeof(T)) < size * (i64)sizeof(T)) {
        for (i64 i = global_thread(); i < n; i += stride) {
            i64 t = touched[i];
            idx[i] = t;
            vals[i] = box[t];
            box[t] = identity;
        }
    } else {
        for (i64 i = global_thread(); i < size; i += stride) {
            vals[i] = box[i];
            box[i] = identity;
        }
    }
}

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


def box_split(box, touched, count, ghost_ptr, identity, idx, vals, sent):
    """The kernels_cpu twin's split, the count staying on the device (a grid-stride loop); `sent`
    zeroed by a memset first, count[0] = 0 by one after."""
    zero(sent)
    launch_strided(function(SOURCE, "totem_box_split", box.dtype),
                   (box, touched, count, ghost_ptr, np.int32(sent.size - 1),
                    box.dtype.type(identity), i64(box.size), idx, vals, sent))
    zero(count)


def _at(a):
    """A peer's array as a kernel argument: its address (it lies on another device)."""
    return np.uint64(a.data.ptr)


def box_fold_peer(inbox, pos, idx, vals, box, sent, q, a, b, combine):
    """The kernels_cpu twin: a grid-stride loop reading the peer's arrays over the link (peer
    access), the count of pairs on the peer's device."""
    launch_strided(function(SOURCE, "totem_box_fold_peer", inbox.dtype),
                   (inbox, pos, _at(idx), _at(vals), _at(box), _at(sent), np.int32(q), i64(a),
                    i64(b), np.int32(_OPS[combine])))


def box_unsplit(box, sent, identity):
    launch_strided(function(SOURCE, "totem_box_unsplit", box.dtype),
                   (box, sent, i64(box.size), box.dtype.type(identity)))


def box_pack(box, touched, count, identity, idx, vals, n_out):
    """The kernels_cpu twin's one pass (the count stays on the device: a grid-stride loop over
    the touched slots or the box), then count[0] = 0 by a memset."""
    launch_strided(function(SOURCE, "totem_box_pack", box.dtype),
                   (box, touched, count, box.dtype.type(identity), i64(box.size), idx, vals,
                    n_out))
    zero(count)


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
    """arr[:] = value: a memset for a zero bit pattern, else one thread per entry."""
    value = arr.dtype.type(value)
    k = _typed("totem_box_fill", arr)
    if k is None:
        arr.fill(value)
    elif not any(value.tobytes()):
        zero(arr)
    else:
        launch(k, arr.size, (arr, i64(arr.size), value))


def box_put(arr, i, value):
    """arr[i] = value (`i` an index): a memset of one entry for a zero bit pattern, else one
    thread; no view of `arr` is made (CuPy takes microseconds for one)."""
    value = arr.dtype.type(value)
    i = int(i)
    if not -arr.size <= i < arr.size:
        raise IndexError(f"index {i} is out of bounds for an array of {arr.size}")
    i %= arr.size
    k = _typed("totem_box_put", arr)
    if k is None:
        arr[i] = value
    elif not any(value.tobytes()):
        cupy.cuda.runtime.memsetAsync(arr.data.ptr + i * arr.itemsize, 0, arr.itemsize,
                                      cupy.cuda.get_current_stream().ptr)
    else:
        k((1,), (1,), (arr, i64(i), value))


def box_iota(arr):
    arr[:] = cupy.arange(arr.size, dtype=arr.dtype)


def box_set(arr, idx, value):
    k = _typed("totem_box_set", arr, idx)
    if k is None:
        arr[idx] = value
    else:
        launch(k, idx.size, (arr, idx, i64(idx.size), arr.dtype.type(value)))


def box_sort(idx):
    return cupy.sort(idx)


def box_first(inbox, pos, identity):
    """The positions among `pos` whose inbox entry still holds the identity."""
    return pos[inbox[pos] == identity]
