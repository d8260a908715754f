"""Box kernels used by the exchange: fold a peer's box into an inbox, one combine per entry.

Positions within one peer's box are distinct (one ghost slot per remote vertex), so a parallel
loop over the entries writes each inbox position once: no races.
"""

import numpy as np
from numba import njit, prange

from .jit import kernel

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


@njit(nogil=True, cache=True)
def box_touched(box, identity):
    """Indices of the entries that differ from the identity (a message was written)."""
    count = 0
    for i in range(box.size):
        if box[i] != identity:
            count += 1
    out = np.empty(count, dtype=np.int64)
    k = 0
    for i in range(box.size):
        if box[i] != identity:
            out[k] = i
            k += 1
    return out
