"""Byte scanners for text graph files, and the CSR build from the parsed chunks.

`scan_edges` parses one chunk of a file (whole lines) in a single serial pass; the caller feeds it
chunks, so the file is never held whole, and `scan_pieces` runs it over pieces of a chunk (whole
lines each) in parallel. It stops at the first bad line and returns
an error code, the line (counted from the chunk start) and the byte offset of the offending token;
`totem_py/io.py` turns these into messages. The CSR is then built from the chunk arrays by a stable
counting sort (kernels_cpu/csr.py), so every row keeps the file's edge order.

Weights are read as Python's float() reads them (correctly rounded). The scanner computes a weight
itself only where one operation gives the exact answer: a mantissa below 2**53 times or divided by
a power of ten up to 10**22 (both exact doubles, one rounding). Any other weight it leaves as NaN
and records where its text starts; `parse_floats` then converts those tokens all at once with
NumPy's bytes-to-float conversion, which rounds correctly.

Columns are separated by blanks (spaces, tabs) and at most one comma: a comma with no value on
one side of it is an empty field, an error (`1,2,,5` does not read 5 as the weight).
"""

import numpy as np
from numba import njit, prange

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
NOT_INTEGER = 16        # a weight that is not an integer where the caller asked for integers
EMPTY_FIELD = 17        # a comma with no value on one side of it

_ID_CAP = 100_000_000_000_000_000  # ids stop growing past this (no int64 overflow)
_MANT_CAP = 100_000_000_000_000_000
_EXACT_MANT = 1 << 53                # mantissas below this are exact doubles
_POW10 = np.array([10.0 ** k for k in range(23)])  # exact doubles

# _parse_float's outcomes
EXACT, INEXACT, NOT_A_NUMBER = 0, 1, 2


@njit(cache=True, nogil=True)
def _is_blank(c):
    # whitespace and commas separate columns; CR is blank so CRLF files parse
    return c == 32 or c == 9 or c == 44 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@njit(cache=True, nogil=True)
def _separator(buf, i, end):
    """Skip the blanks after a field: spaces and at most one comma, which must have a field
    after it. Returns (next index, ok)."""
    while i < end and _is_space(buf[i]):
        i += 1
    if i < end and buf[i] == 44:
        comma = i
        i += 1
        while i < end and _is_space(buf[i]):
            i += 1
        if _at_end(buf, i, end) or buf[i] == 44:
            return comma, False
    return i, True


@njit(cache=True, nogil=True)
def _at_end(buf, i, end):
    return i >= end or buf[i] == 10


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
def _parse_float(buf, i, end, integer):
    """[+-]digits[.digits][(e|E)[+-]digits] at buf[i] ([+-]digits with `integer`). Returns (value,
    next index, outcome): EXACT, INEXACT (the value is left to `parse_floats`: NaN here) or
    NOT_A_NUMBER."""
    neg = False
    if i < end and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    mant = 0
    exp10 = 0
    nd = 0
    dropped = False
    while i < end and 48 <= buf[i] <= 57:
        if mant < _MANT_CAP:
            mant = mant * 10 + (buf[i] - 48)
        else:
            exp10 += 1
            dropped = True
        nd += 1
        i += 1
    if i < end and buf[i] == 46 and not integer:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            if mant < _MANT_CAP:
                mant = mant * 10 + (buf[i] - 48)
                exp10 -= 1
            else:
                dropped = True
            nd += 1
            i += 1
    if nd == 0:
        return 0.0, i, NOT_A_NUMBER
    if i < end and (buf[i] == 101 or buf[i] == 69) and not integer:
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
            return 0.0, i, NOT_A_NUMBER
        exp10 += -e if eneg else e
    if not (i >= end or buf[i] == 10 or _is_blank(buf[i])):
        return 0.0, i, NOT_A_NUMBER
    if mant == 0:
        return (-0.0 if neg else 0.0), i, EXACT
    if dropped or mant >= _EXACT_MANT or not -22 <= exp10 <= 22:
        return np.nan, i, INEXACT
    value = float(mant)
    if exp10 > 0:
        value *= _POW10[exp10]
    elif exp10 < 0:
        value /= _POW10[-exp10]
    return (-value if neg else value), i, EXACT


@njit(cache=True, nogil=True)
def scan_edges(buf, start, end, comment1, comment2, prefix, weight_mode, after_weight, one_based,
               limit1, limit2, max_edges, store_max, src, dst, weights, inexact,
               nonnegative=False, integer=False, first=0):
    """Parse the edge lines of buf[start:end] into src, dst (and weights).

    comment1/comment2: first bytes of comment lines; prefix: required first byte of an edge line (0:
    none); weight_mode: 1 the third column is a required weight, 0 there is none, -1 decide from the
    first edge line; after_weight: how many columns may follow the weight (skipped);
    one_based: ids start at 1 and are shifted to 0; limit1/limit2: ids (0-based) must be below these;
    max_edges: more edges is an error; store_max: largest id src/dst can hold; nonnegative: a
    negative weight is an error; integer: a weight must be an integer. A weight must be finite.
    The edges go from index `first` of src, dst and weights on.
    A weight the scanner cannot compute exactly is NaN in `weights`, and the byte offset of its
    text is in `inexact` (as long as `weights`), in file order; `parse_floats` reads them and
    the caller checks them (finite, non-negative); the offsets, too, from `first` on.
    Returns (n_edges, weight_mode, max_id, error, error_line, error_pos, n_inexact).
    """
    i = start
    line = 0
    k = 0
    n_inexact = 0
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
                return k, weight_mode, max_id, BAD_LINE, line, line_start, n_inexact
            i, ok = _separator(buf, i + 1, end)
            if not ok:
                return k, weight_mode, max_id, EMPTY_FIELD, line, i, n_inexact
        if i < end and buf[i] == 44:
            return k, weight_mode, max_id, EMPTY_FIELD, line, i, n_inexact

        tok = i
        u, i, err = _read_id(buf, i, end, one_based, limit1, store_max)
        if err != OK:
            return k, weight_mode, max_id, err, line, tok, n_inexact
        i, ok = _separator(buf, i, end)
        if not ok:
            return k, weight_mode, max_id, EMPTY_FIELD, line, i, n_inexact
        if _at_end(buf, i, end):
            return k, weight_mode, max_id, ONE_COLUMN, line, line_start, n_inexact
        tok = i
        v, i, err = _read_id(buf, i, end, one_based, limit2, store_max)
        if err != OK:
            return k, weight_mode, max_id, err, line, tok, n_inexact

        i, ok = _separator(buf, i, end)
        if not ok:
            return k, weight_mode, max_id, EMPTY_FIELD, line, i, n_inexact
        w = 1.0
        outcome = EXACT
        if _at_end(buf, i, end):
            if weight_mode == 1:
                return k, weight_mode, max_id, NO_WEIGHT, line, line_start, n_inexact
            weight_mode = 0
        else:
            tok = i
            if weight_mode == 0:
                return k, weight_mode, max_id, EXTRA_COLUMN, line, tok, n_inexact
            weight_mode = 1
            w, i, outcome = _parse_float(buf, i, end, integer)
            if outcome == NOT_A_NUMBER:
                return (k, weight_mode, max_id, NOT_INTEGER if integer else BAD_WEIGHT, line,
                        tok, n_inexact)
            if outcome == EXACT and nonnegative and w < 0:
                return k, weight_mode, max_id, NEGATIVE_WEIGHT, line, tok, n_inexact
            i, ok = _separator(buf, i, end)
            for _ in range(after_weight):
                if not ok:
                    break
                while i < end and buf[i] != 10 and not _is_blank(buf[i]):
                    i += 1
                i, ok = _separator(buf, i, end)
            if not ok:
                return k, weight_mode, max_id, EMPTY_FIELD, line, i, n_inexact
            if not _at_end(buf, i, end):
                return k, weight_mode, max_id, AFTER_WEIGHT, line, i, n_inexact

        if k >= max_edges:
            return k, weight_mode, max_id, TOO_MANY, line, line_start, n_inexact
        src[first + k] = u
        dst[first + k] = v
        if weight_mode == 1:
            weights[first + k] = w
            if outcome == INEXACT:
                inexact[first + n_inexact] = tok
                n_inexact += 1
        max_id = max(max_id, u, v)
        k += 1
        line += 1
        i += 1                                        # past the newline
    return k, weight_mode, max_id, OK, line, 0, n_inexact


@njit(cache=True, nogil=True)
def _token_lengths(buf, pos):
    out = np.empty(pos.size, np.int64)
    for j in range(pos.size):
        i = pos[j]
        while i < buf.size and buf[i] != 10 and not _is_blank(buf[i]):
            i += 1
        out[j] = i - pos[j]
    return out


@njit(cache=True, nogil=True)
def _gather_tokens(buf, pos, lengths, out):
    for j in range(pos.size):
        out[j, :lengths[j]] = buf[pos[j]:pos[j] + lengths[j]]


def parse_floats(buf, pos):
    """The numbers whose text starts at buf[pos] (ending at a blank or line end), as float()
    reads them: NumPy's bytes-to-float conversion of fixed-width byte strings, the tokens
    grouped by length (widths of powers of two, at least 8), so a few long ones do not widen
    the rest."""
    lengths = _token_lengths(buf, pos)
    widths = np.maximum(8, 1 << np.ceil(np.log2(np.maximum(lengths, 1))).astype(np.int64))
    out = np.empty(pos.size)
    for width in np.unique(widths):
        chosen = np.flatnonzero(widths == width)
        text = np.zeros((chosen.size, width), np.uint8)
        _gather_tokens(buf, pos[chosen], lengths[chosen], text)
        out[chosen] = text.view(f"S{width}").ravel().astype(np.float64)
    return out


@njit(cache=True, nogil=True)
def count_lines(buf, start, end):
    n = 0
    for i in range(start, end):
        if buf[i] == 10:
            n += 1
    return n


@njit(parallel=True, nogil=True, cache=True)
def count_pieces(buf, cuts, out):
    """out[j] = the newlines in buf[cuts[j]:cuts[j + 1]], the pieces at once."""
    for j in prange(cuts.size - 1):
        out[j] = count_lines(buf, cuts[j], cuts[j + 1])


@njit(parallel=True, nogil=True, cache=True)
def scan_pieces(buf, cuts, at, comment1, comment2, prefix, weight_mode, after_weight, one_based,
                limit1, limit2, max_edges, store_max, src, dst, weights, inexact, nonnegative,
                integer, out):
    """`scan_edges` over the pieces buf[cuts[j]:cuts[j + 1]] (whole lines each) at once, piece
    j's edges (and the offsets of its inexact weights) from at[j] on, its returns in out[j]
    (every piece is scanned to its end or its first error: which error comes first in the
    chunk is the caller's to pick). Where weight_mode is undecided (-1) each piece decides
    its own from its first edge line: the caller checks that they agree."""
    for j in prange(cuts.size - 1):
        k, mode, max_id, err, line, pos, n_inexact = scan_edges(
            buf, cuts[j], cuts[j + 1], comment1, comment2, prefix, weight_mode, after_weight,
            one_based, limit1, limit2, max_edges, store_max, src, dst, weights, inexact,
            nonnegative, integer, at[j])
        out[j, 0], out[j, 1], out[j, 2], out[j, 3] = k, mode, max_id, err
        out[j, 4], out[j, 5], out[j, 6] = line, pos, n_inexact
