"""Connected components (weak) by min-label propagation over both edge directions (push).

State: `label` (int64, starts as the global id) and `changed` flags, both with the ghost slots in
their tail: the tail of `label` is the outbox, reset to INT64_MAX each step. Every changed vertex pushes its
label to all neighbours; the component label converges to the smallest id in the component.
Races: labels drop through atomic_min; the writer that lowered a label flags the vertex (a benign
store of 1). A vertex whose own label drops while it pushes is flagged, so it pushes again.
Mapping: one iteration per frontier vertex.
"""

from numba import njit, prange

from .atomics import atomic_min


@njit(parallel=True, nogil=True, cache=True)
def cc_push(indptr, indices, label, queue, qlen, changed):
    for i in prange(qlen):
        v = queue[i]
        lv = label[v]
        for e in range(indptr[v], indptr[v + 1]):
            t = indices[e]
            if lv < label[t]:
                if lv < atomic_min(label, t, lv):
                    changed[t] = 1


@njit(parallel=True, nogil=True, cache=True)
def cc_scatter(inbox, boundary_lvid, label, changed):
    for i in prange(inbox.size):
        m = inbox[i]
        v = boundary_lvid[i]
        if m < label[v]:
            if m < atomic_min(label, v, m):
                changed[v] = 1
