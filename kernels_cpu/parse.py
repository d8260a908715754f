"""Byte scanners for text graph files, and the CSR build from the parsed chunks.

`scan_edges` parses one chunk of a file (whole lines) in a single serial pass: it is memory bound and
the caller feeds it chunks, so the file is never held whole. It stops at the first bad line and returns
an error code, the line (counted from the chunk start) and the byte offset of the offending token;
`totem_py/io.py` turns these into messages. The CSR is then built from the chunk arrays by a stable
counting sort (`count_rows`, `scatter_rows`), so every row keeps the file's edge order.
"""

import math

import numpy as np
from numba import njit

# Error codes of scan_edges.
OK = 0
BAD_ID = 1          # id is not a non-negative integer
NEGATIVE_ID = 2
ONE_COLUMN = 3      # the line ends after the first id
BAD_WEIGHT = 4
NO_WEIGHT = 5       # weight column required but missing
EXTRA_COLUMN = 6
ID_TOO_LARGE = 7    # more than ~10**18
ID_BELOW_ONE = 8    # 0 in a 1-based format
ID_BEYOND_SIZE = 9  # beyond the size declared in the header
TOO_MANY = 10       # more entries than the header declares
BAD_LINE = 11       # line does not start with the required prefix (DIMACS 'a')
WIDE_ID = 12        # id does not fit the output dtype: the caller rescans with int64 arrays
NONFINITE_WEIGHT = 13   # a weight too large for a double (1e400)
NEGATIVE_WEIGHT = 14    # a negative weight where the caller asked for none
AFTER_WEIGHT = 15       # more columns after the weight than allowed

_ID_CAP = 100_000_000_000_000_000  # ids stop growing past this (no int64 overflow)
_MANT_CAP = 100_000_000_000_000_000
_POW10 = np.array([10.0 ** k for k in range(23)])  # exact doubles


@njit(cache=True, nogil=True)
def _is_blank(c):
    # whitespace and commas separate columns; CR is blank so CRLF files parse
    return c == 32 or c == 9 or c == 44 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _at_end(buf, i, end):
    return i >= end or buf[i] == 10


@njit(cache=True, nogil=True)
def _skip_blanks(buf, i, end):
    while i < end and _is_blank(buf[i]):
        i += 1
    return i


@njit(cache=True, nogil=True)
def _parse_id(buf, i, end):
    """Unsigned decimal integer at buf[i]. Returns (value, next index, error code)."""
    if i < end and buf[i] == 45:
        return 0, i, NEGATIVE_ID
    v = 0
    nd = 0
    while i < end and 48 <= buf[i] <= 57:
        if v > _ID_CAP:
            return 0, i, ID_TOO_LARGE
        v = v * 10 + (buf[i] - 48)
        nd += 1
        i += 1
    if nd == 0 or not (i >= end or buf[i] == 10 or _is_blank(buf[i])):
        return 0, i, BAD_ID
    return v, i, OK


@njit(cache=True, nogil=True)
def _read_id(buf, i, end, one_based, limit, store_max):
    """A vertex id, shifted to 0-based and checked against the declared size and the output dtype."""
    v, i, err = _parse_id(buf, i, end)
    if err != OK:
        return v, i, err
    if one_based:
        if v < 1:
            return v, i, ID_BELOW_ONE
        v -= 1
    if v >= limit:
        return v, i, ID_BEYOND_SIZE
    if v > store_max:
        return v, i, WIDE_ID
    return v, i, OK


@njit(cache=True, nogil=True)
def _parse_float(buf, i, end):
    """[+-]digits[.digits][(e|E)[+-]digits] at buf[i]. Returns (value, next index, ok)."""
    neg = False
    if i < end and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    mant = 0
    exp10 = 0
    nd = 0
    while i < end and 48 <= buf[i] <= 57:
        if mant < _MANT_CAP:
            mant = mant * 10 + (buf[i] - 48)
        else:
            exp10 += 1
        nd += 1
        i += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            if mant < _MANT_CAP:
                mant = mant * 10 + (buf[i] - 48)
                exp10 -= 1
            nd += 1
            i += 1
    if nd == 0:
        return 0.0, i, False
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        eneg = False
        if i < end and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        e = 0
        ed = 0
        while i < end and 48 <= buf[i] <= 57:
            if e < 100000:
                e = e * 10 + (buf[i] - 48)
            ed += 1
            i += 1
        if ed == 0:
            return 0.0, i, False
        exp10 += -e if eneg else e
    if not (i >= end or buf[i] == 10 or _is_blank(buf[i])):
        return 0.0, i, False
    # exact for integers and for short decimals (both operands exact, one rounding)
    value = float(mant)
    if 0 < exp10 <= 22:
        value *= _POW10[exp10]
    elif -22 <= exp10 < 0:
        value /= _POW10[-exp10]
    elif exp10 != 0:
        value *= 10.0 ** exp10
    return (-value if neg else value), i, True


@njit(cache=True, nogil=True)
def scan_edges(buf, start, end, comment1, comment2, prefix, weight_mode, after_weight, one_based,
               limit1, limit2, max_edges, store_max, src, dst, weights, nonnegative=False):
    """Parse the edge lines of buf[start:end] into src, dst (and weights).

    comment1/comment2: first bytes of comment lines; prefix: required first byte of an edge line (0:
    none); weight_mode: 1 the third column is a required weight, 0 there is none, -1 decide from the
    first edge line; after_weight: how many columns may follow the weight (skipped);
    one_based: ids start at 1 and are shifted to 0; limit1/limit2: ids (0-based) must be below these;
    max_edges: more edges is an error; store_max: largest id src/dst can hold; nonnegative: a
    negative weight is an error. A weight must be finite.
    Returns (n_edges, weight_mode, max_id, error, error_line, error_pos).
    """
    i = start
    line = 0
    k = 0
    max_id = -1
    while i < end:
        line_start = i
        while i < end and (buf[i] == 32 or buf[i] == 9 or buf[i] == 13):
            i += 1
        if i >= end:
            break
        c = buf[i]
        if c == 10:                                   # blank line
            line += 1
            i += 1
            continue
        if c == comment1 or c == comment2:
            while i < end and buf[i] != 10:
                i += 1
            line += 1
            i += 1
            continue
        if prefix != 0:
            if c != prefix or i + 1 >= end or not _is_blank(buf[i + 1]):
                return k, weight_mode, max_id, BAD_LINE, line, line_start
            i = _skip_blanks(buf, i + 1, end)

        tok = i
        u, i, err = _read_id(buf, i, end, one_based, limit1, store_max)
        if err != OK:
            return k, weight_mode, max_id, err, line, tok
        i = _skip_blanks(buf, i, end)
        if _at_end(buf, i, end):
            return k, weight_mode, max_id, ONE_COLUMN, line, line_start
        tok = i
        v, i, err = _read_id(buf, i, end, one_based, limit2, store_max)
        if err != OK:
            return k, weight_mode, max_id, err, line, tok

        i = _skip_blanks(buf, i, end)
        w = 1.0
        if _at_end(buf, i, end):
            if weight_mode == 1:
                return k, weight_mode, max_id, NO_WEIGHT, line, line_start
            weight_mode = 0
        else:
            tok = i
            if weight_mode == 0:
                return k, weight_mode, max_id, EXTRA_COLUMN, line, tok
            weight_mode = 1
            w, i, ok = _parse_float(buf, i, end)
            if not ok:
                return k, weight_mode, max_id, BAD_WEIGHT, line, tok
            if not math.isfinite(w):
                return k, weight_mode, max_id, NONFINITE_WEIGHT, line, tok
            if nonnegative and w < 0:
                return k, weight_mode, max_id, NEGATIVE_WEIGHT, line, tok
            i = _skip_blanks(buf, i, end)
            for _ in range(after_weight):
                while i < end and buf[i] != 10 and not _is_blank(buf[i]):
                    i += 1
                i = _skip_blanks(buf, i, end)
            if not _at_end(buf, i, end):
                return k, weight_mode, max_id, AFTER_WEIGHT, line, i

        if k >= max_edges:
            return k, weight_mode, max_id, TOO_MANY, line, line_start
        src[k] = u
        dst[k] = v
        if weight_mode == 1:
            weights[k] = w
        max_id = max(max_id, u, v)
        k += 1
        line += 1
        i += 1                                        # past the newline
    return k, weight_mode, max_id, OK, line, 0


@njit(cache=True, nogil=True)
def count_lines(buf, start, end):
    n = 0
    for i in range(start, end):
        if buf[i] == 10:
            n += 1
    return n


@njit(cache=True, nogil=True)
def count_rows(src, dst, mirror, counts):
    """counts[u + 1] += out-degree of u; with mirror, (u, v) also counts as (v, u) unless u == v."""
    for e in range(src.size):
        counts[src[e] + 1] += 1
        if mirror and src[e] != dst[e]:
            counts[dst[e] + 1] += 1


@njit(cache=True, nogil=True)
def scatter_rows(src, dst, weights, has_weights, mirror, fill, indices, out_weights):
    """Place each edge at fill[src] and advance it (stable: file order within a row).

    `fill` starts as indptr and ends as indptr shifted by one row; `restore_indptr` undoes that,
    which saves a second vertex-sized array.
    """
    for e in range(src.size):
        u = src[e]
        v = dst[e]
        p = fill[u]
        fill[u] = p + 1
        indices[p] = v
        if has_weights:
            out_weights[p] = weights[e]
        if mirror and u != v:
            p = fill[v]
            fill[v] = p + 1
            indices[p] = u
            if has_weights:
                out_weights[p] = weights[e]


@njit(cache=True, nogil=True)
def restore_indptr(fill):
    for u in range(fill.size - 1, 0, -1):
        fill[u] = fill[u - 1]
    fill[0] = 0
