"""Connected components (weak): local union-find (Afforest), then min-label propagation across
partitions.

Local phase, once (Sutton, Ben-Nun, Barak, IPDPS'18; GAP's cc.cc): every local vertex and every
ghost slot is a union-find node (ghost slot s is node n_local + s). Link each vertex to its first
SAMPLE neighbours, compress, find the most frequent component, then link the remaining edges of
the vertices outside it; edges to ghosts are always linked, since a ghost has no edges of its own
here to link it from the other side. Trees always hang the higher node under the lower.
Global phase (push, min): a set's label is the smallest global id among its nodes, ghosts
included; sets whose label dropped send it to the owners of their ghosts, who lower the label of
the set holding that vertex, until no label changes.
Races: links through compare-and-swap on the parent (atomic_cas, LLVM cmpxchg); labels drop
through atomic_min and the writer that lowered a label claims the set's flag with atomic_max.
Mapping: one iteration per vertex (link, compress), per ghost (publish), per message (scatter).
The link kernels take a range of rows (`first`, and the end: n_local for cc_link_sample, `end`
for cc_link_rest, whose n_local also tells ghosts apart) and read only those rows' edges, so the
edges can come in chunks of rows; which links are made depends on timing anyway, and the
components after compression are those of one call over all rows.
"""

import numpy as np
from numba import njit, prange

from .atomics import atomic_cas, atomic_max, atomic_min
from .jit import APPEND, BLOCKS, append, flush, kernel, row_blocks, spread

SAMPLE = 2


@njit(nogil=True, cache=True)
def _link(u, v, comp):
    p1 = comp[u]
    p2 = comp[v]
    while p1 != p2:
        high = max(p1, p2)
        low = min(p1, p2)
        p_high = comp[high]
        if p_high == low:
            break
        if p_high == high and atomic_cas(comp, high, high, low) == high:
            break
        p1 = comp[comp[high]]
        p2 = comp[low]


@kernel("comp")
def cc_compress(comp):
    for n in prange(comp.size):
        while comp[n] != comp[comp[n]]:
            comp[n] = comp[comp[n]]


@kernel("n_local", rows="indptr", first="first")
def cc_link_sample(indptr, indices, n_local, comp, r, first=0):
    """Link every vertex of rows first..n_local-1 to its r-th neighbour."""
    for u in prange(first, n_local):
        e = indptr[u] + r
        if e < indptr[u + 1]:
            _link(u, indices[e], comp)


@kernel("n_local", rows="indptr", first="first", end="end")
def cc_link_rest(indptr, indices, n_local, comp, skip, first=0, end=-1):
    """Link the edges not sampled of rows first..end-1 (end < 0: n_local); vertices of
    component `skip` link only their ghost edges, a prefix or a suffix of the row (the plan keeps
    a row's boundary edges together: kernels_cpu/plan.py). n_local stays the first ghost node
    whatever the rows."""
    rows_end = n_local if end < 0 else end
    blocks = row_blocks(indptr, rows_end, BLOCKS, first)
    nblocks = blocks.size - 1
    stride = spread(nblocks)    # rows of the skipped component cost little
    for i in prange(nblocks):
        b = i * stride % nblocks
        for u in range(blocks[b], blocks[b + 1]):
            start, stop = indptr[u], indptr[u + 1]
            if comp[u] == skip and stop > start and indices[start] >= n_local:
                e = start + SAMPLE
                while e < stop and indices[e] >= n_local:
                    _link(u, indices[e], comp)
                    e += 1
            elif comp[u] == skip:
                e = stop - 1
                while e >= start + SAMPLE and indices[e] >= n_local:
                    _link(u, indices[e], comp)
                    e -= 1
            else:
                for e in range(start + SAMPLE, stop):
                    _link(u, indices[e], comp)


@njit(nogil=True, cache=True)
def cc_frequent(comp, samples, seed):
    """The most frequent component among `samples` random nodes (-1 if there are none)."""
    if comp.size == 0:
        return -1
    np.random.seed(seed)
    picks = np.sort(comp[np.random.randint(0, comp.size, samples)])
    best, best_count, count = picks[0], 0, 0
    for i in range(picks.size):
        count = count + 1 if i > 0 and picks[i] == picks[i - 1] else 1
        if count > best_count:
            best, best_count = picks[i], count
    return best


@kernel("comp")
def cc_labels(comp, gvid, label):
    """label[root] = smallest global id among the nodes of the root's set."""
    for x in prange(comp.size):
        r = comp[x]
        if gvid[x] < label[r]:      # read first: most nodes share one root, and an atomic on
            atomic_min(label, r, gvid[x])   # one address from every thread serialises them


@kernel("box")
def cc_publish(comp, label, n_local, changed, box, everything, touched, touched_len):
    """Send the label of every ghost's set whose label changed (or all of them)."""
    nblocks = min(box.size, BLOCKS)
    for b in prange(nblocks):
        sent = np.empty(APPEND, dtype=np.int64)
        n_sent = 0
        for g in range(b * box.size // nblocks, (b + 1) * box.size // nblocks):
            r = comp[n_local + g]
            if everything or changed[r]:
                box[g] = label[r]
                n_sent = append(sent, n_sent, g, touched, touched_len)
        flush(sent, n_sent, touched, touched_len)


@kernel("inbox")
def cc_scatter(inbox, lvids, comp, label, changed):
    for i in prange(inbox.size):
        m = inbox[i]
        r = comp[lvids[i]]
        if m < label[r]:
            if m < atomic_min(label, r, m):
                atomic_max(changed, r, 1)


@kernel("comp")
def cc_finish(comp, label, n_local, out):
    for v in prange(n_local):
        out[v] = label[comp[v]]
