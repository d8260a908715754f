"""sort_range: an in-place sort of a range of an integer array, for the kernels that sort rows
(generate.py's sort_dedup_rows, plan.py's plan_sort_rows). One function compiled once for each
array type and shared by its callers: Numba's `ndarray.sort` compiles its generic quicksort into
every kernel that calls it, seconds of a cold start each."""

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
