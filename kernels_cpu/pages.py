"""Kernels over pages of edges read from a file (bsp/stream.py's EdgeFile), for the views a run
whose edges stay in the file builds page by page (partitioners/plan.py, `spill_views`).

`page_transpose` adds a page's edges whose targets fall in a range to that range's block of the
transposed CSR, in the order the page lists them (so the rows of the transpose list their sources
ascending, as Graph.reverse's do); `page_merge` writes rows that are a row of one CSR followed by
the same row of another (Graph.to_undirected's rows: out-edges, then in-edges). Serial loops: a
page's edges go to places that depend on the edges before them.
"""

from numba import njit


@njit(nogil=True, cache=True)
def page_transpose(indptr, r0, r1, lo, ids, weights, has_weights, a, b, fill, out_ids,
                   out_weights, base):
    """For rows r0..r1-1 (their edges indptr[r0]..indptr[r1], ids[e - lo]), each edge u -> t
    with a <= t < b: out_ids[fill[t - a] - base] = u (and its weight), fill[t - a] += 1."""
    for u in range(r0, r1):
        for e in range(indptr[u], indptr[u + 1]):
            t = ids[e - lo]
            if a <= t < b:
                k = fill[t - a] - base
                out_ids[k] = u
                if has_weights:
                    out_weights[k] = weights[e - lo]
                fill[t - a] += 1


@njit(nogil=True, cache=True)
def page_merge(a, b, p1, lo1, ids1, w1, p2, lo2, ids2, w2, has_weights, out_ids, out_weights):
    """Rows a..b-1: row v is row v of (p1, ids1) then row v of (p2, ids2) (ids1[e - lo1],
    ids2[e - lo2]), written back to back into out_ids from 0."""
    k = 0
    for v in range(a, b):
        for e in range(p1[v], p1[v + 1]):
            out_ids[k] = ids1[e - lo1]
            if has_weights:
                out_weights[k] = w1[e - lo1]
            k += 1
        for e in range(p2[v], p2[v + 1]):
            out_ids[k] = ids2[e - lo2]
            if has_weights:
                out_weights[k] = w2[e - lo2]
            k += 1


@njit(nogil=True, cache=True)
def page_count(ids, counts):
    """counts[t] += 1 for every id t of a page (in-degrees, page by page)."""
    for t in ids:
        counts[t] += 1
