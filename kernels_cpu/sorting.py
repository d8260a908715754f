"""sort_range: an in-place sort of a range of an integer array, for the kernels that sort rows
(buckets.py's small buckets, plan.py's plan_fill through sort_by_high_word, which sorts long
ranges by radix on a key). One function compiled once for each array type and shared by its
callers: Numba's `ndarray.sort` compiles its generic quicksort into every kernel that calls it,
seconds of a cold start each. And `interval`, the binary search of a value's range among sorted
bounds."""

import numpy as np
from numba import njit

SHORT = 16      # ranges this short sort by insertion


@njit(nogil=True, cache=True)
def _insertion(a, lo, hi):
    for k in range(lo + 1, hi):
        x = a[k]
        m = k - 1
        while m >= lo and a[m] > x:
            a[m + 1] = a[m]
            m -= 1
        a[m + 1] = x


@njit(nogil=True, cache=True)
def sort_range(a, lo, hi):
    """Sort a[lo:hi] in place, ascending: quicksort (median of three, Hoare's partition),
    insertion sort below SHORT items; the larger side waits on a stack while the smaller one is
    sorted, so the stack holds at most log2(n) ranges (allocated for long ranges only)."""
    if hi - lo <= SHORT:
        _insertion(a, lo, hi)
        return
    stack = np.empty(128, dtype=np.int64)
    top = 0
    while True:
        while hi - lo > SHORT:
            mid = (lo + hi - 1) >> 1
            if a[mid] < a[lo]:
                a[lo], a[mid] = a[mid], a[lo]
            if a[hi - 1] < a[mid]:
                a[mid], a[hi - 1] = a[hi - 1], a[mid]
                if a[mid] < a[lo]:
                    a[lo], a[mid] = a[mid], a[lo]
            pivot = a[mid]
            i, j = lo, hi - 1
            while i <= j:
                while a[i] < pivot:
                    i += 1
                while pivot < a[j]:
                    j -= 1
                if i <= j:
                    a[i], a[j] = a[j], a[i]
                    i += 1
                    j -= 1
            if j + 1 - lo < hi - i:         # [lo, j] is the smaller side: sort it first
                stack[top], stack[top + 1] = i, hi
                hi = j + 1
            else:
                stack[top], stack[top + 1] = lo, j + 1
                lo = i
            top += 2
        _insertion(a, lo, hi)
        if top == 0:
            return
        top -= 2
        lo, hi = stack[top], stack[top + 1]


RADIX = 64      # ranges this long sort by radix in sort_by_high_word


@njit(nogil=True, cache=True)
def _radix_pass(src, s0, dst, d0, n, shift, count):
    """src[s0:s0 + n] into dst[d0:d0 + n] stably ordered by their byte at `shift` (the top byte's
    sign bit flipped: negative keys first); False, moving nothing, when every item has the same
    byte there."""
    flip = 0x80 if shift == 56 else 0
    for d in range(256):
        count[d] = 0
    for i in range(s0, s0 + n):
        count[((src[i] >> shift) & 0xFF) ^ flip] += 1
    if count[((src[s0] >> shift) & 0xFF) ^ flip] == n:
        return False
    total = d0
    for d in range(256):
        c = count[d]
        count[d] = total
        total += c
    for i in range(s0, s0 + n):
        d = ((src[i] >> shift) & 0xFF) ^ flip
        dst[count[d]] = src[i]
        count[d] += 1
    return True


@njit(nogil=True, cache=True)
def sort_by_high_word(a, lo, hi):
    """Order a[lo:hi] by the signed 32-bit key in each item's high word, ties keeping their order:
    where the low words ascend with the position (plan_fill packs (key, position)), the same
    order as sort_range. Ranges of RADIX items or more sort in passes of 8 bits of the key
    (a pass whose byte every item shares is skipped) instead of by quicksort, whose n log n
    dominates the sorting of the hubs' long rows."""
    if hi - lo < RADIX:
        sort_range(a, lo, hi)
        return
    sort_by_high_word_with(a, lo, hi, np.empty(hi - lo, dtype=a.dtype), np.empty(256, np.int64))


@njit(nogil=True, cache=True)
def sort_by_high_word_with(a, lo, hi, tmp, count):
    """sort_by_high_word with its scratch given: tmp (at least hi - lo items of a's type) and
    count (256 int64s), for callers that sort many ranges. Only the bytes below the highest bit
    in which two keys differ are passed over."""
    n = hi - lo
    if n < RADIX:
        sort_range(a, lo, hi)
        return
    low, high = a[lo] >> 32, a[lo] >> 32
    for i in range(lo + 1, hi):
        k = a[i] >> 32
        low = min(low, k)
        high = max(high, k)
    differ = low ^ high
    in_tmp = False
    for shift in range(32, 64, 8):
        if differ >> (shift - 32) == 0:
            break
        if in_tmp:
            moved = _radix_pass(tmp, 0, a, lo, n, shift, count)
        else:
            moved = _radix_pass(a, lo, tmp, 0, n, shift, count)
        if moved:
            in_tmp = not in_tmp
    if in_tmp:
        for i in range(n):
            a[lo + i] = tmp[i]


@njit(nogil=True, cache=True, inline="always")
def interval(u, bounds):
    """k with bounds[k] <= u < bounds[k + 1] (bounds ascending)."""
    a, b = 0, bounds.size - 1
    while b - a > 1:
        m = (a + b) // 2
        if bounds[m] <= u:
            a = m
        else:
            b = m
    return a
