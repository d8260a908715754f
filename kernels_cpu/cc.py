"""Connected components (weak) by min-label propagation over both edge directions (push).

State: `label` (int64, starts as the global id) and `changed` flags, both with the ghost slots in
their tail (the tail of `label` is the outbox, reset to INT64_MAX each step), and the queue of
local vertices whose label dropped. Every changed vertex pushes its label to all neighbours; the
component label converges to the smallest id in the component.
Races: labels drop through atomic_min; the writer that lowers a local label claims its flag with
atomic_max and only the claimer appends the vertex to the next queue (atomic counter). A vertex
whose own label drops while it pushes is appended, so it pushes again next step.
Mapping: one iteration per frontier vertex.
"""

from numba import prange

from .atomics import atomic_add, atomic_max, atomic_min
from .jit import kernel


@kernel("qlen", serial_below=256)
def cc_push(indptr, indices, n_local, label, queue, qlen, changed, next_queue, next_len):
    for i in prange(qlen):
        v = queue[i]
        lv = label[v]
        for e in range(indptr[v], indptr[v + 1]):
            t = indices[e]
            if lv < label[t]:
                if lv < atomic_min(label, t, lv) and t < n_local and changed[t] == 0:
                    if atomic_max(changed, t, 1) == 0:
                        next_queue[atomic_add(next_len, 0, 1)] = t


@kernel("inbox")
def cc_scatter(inbox, lvids, label, changed, next_queue, next_len):
    for i in prange(inbox.size):
        m = inbox[i]
        v = lvids[i]
        if m < label[v]:
            if m < atomic_min(label, v, m) and changed[v] == 0:
                if atomic_max(changed, v, 1) == 0:
                    next_queue[atomic_add(next_len, 0, 1)] = v


@kernel("qlen")
def cc_clear(changed, queue, qlen):
    """Lower the flags of the vertices now in the queue."""
    for i in prange(qlen):
        changed[queue[i]] = 0
