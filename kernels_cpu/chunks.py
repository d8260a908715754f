"""Chunk bookkeeping for streamed edges (bsp/stream.py); kernels_gpu/chunks.py has the CUDA twins.

A GPU partition whose edges stay in host memory splits them into chunks of consecutive rows
(`starts[c]` is chunk c's first row). Per superstep, from the frontier queue:
`chunk_stats` counts per chunk the queue's vertices, their edges and the
128-byte lines a zero-copy read of their rows touches (misaligned starts count: a row spanning
bytes [a, b) touches (b - 1) // 128 - a // 128 + 1 lines, for the indices and, when weights are
read too, for the weights), leaving out the vertices whose rows the GPU cache holds (`cached[v]`
is 1: their chunk id is the pseudo chunk `nchunks`); `chunk_hotness` adds the degree of each
queue vertex at or past row `first` (the streamed rows) to its hotness; `chunk_cache_load` gathers
rows into the cache buffer (from the host arrays the device reads in place); `chunk_row_stats`
counts the same as `chunk_stats` for a kernel over all rows, per row as the algorithm reads it
(none, the first line only, or the whole row); `chunk_split` deals the queue into per-segment
sub-queues;
`chunk_index` writes the row index of a compacted sub-graph (whose rows kernels_cpu/stream.py
gathers); `chunk_copy` copies whole chunks on the CPU (compaction when every row is active).
These run on emulated GPU partitions only (a real one runs the CUDA twins), except `chunk_copy`,
host work for both. `chunk_stats` and `chunk_hotness` are serial loops (a queue vertex may add to
any chunk's or row's total: no races); `chunk_cache_load` runs a row per iteration of a parallel
loop, each writing its own range of the buffer.
"""

import numpy as np
from numba import njit, prange

from .jit import BLOCKS


@njit(nogil=True, cache=True)
def chunk_of(starts, v):
    """The chunk holding row v: the last c with starts[c] <= v."""
    return np.searchsorted(starts, v, side="right") - 1


@njit(nogil=True, cache=True)
def _lines(a, b, width):
    return (b * width - 1) // 128 - (a * width) // 128 + 1


@njit(nogil=True, cache=True)
def chunk_stats(indptr, queue, qlen, starts, width, wwidth, cached, cid, counts, edges, lines):
    nchunks = starts.size - 1
    for i in range(qlen):
        v = queue[i]
        if cached[v]:
            cid[i] = nchunks
            continue
        c = chunk_of(starts, v)
        cid[i] = c
        counts[c] += 1
        a, b = indptr[v], indptr[v + 1]
        if b > a:
            edges[c] += b - a
            lines[c] += _lines(a, b, width)
            if wwidth:
                lines[c] += _lines(a, b, wwidth)


@njit(nogil=True, cache=True)
def chunk_hotness(indptr, queue, qlen, first, hot):
    """hot[v] += degree of v, for the queue's vertices v >= first (the rows the GPU cache may
    hold: not resident)."""
    for i in range(qlen):
        v = queue[i]
        if v >= first:
            hot[v] += indptr[v + 1] - indptr[v]


@njit(parallel=True, nogil=True, cache=True)
def chunk_cache_load(indptr, src, rows, nrows, offsets, out):
    """out[offsets[i]:offsets[i + 1]] = src's entries of row rows[i], for i < nrows (offsets:
    the exclusive scan of the rows' degrees)."""
    for i in prange(nrows):
        a = indptr[rows[i]]
        o = offsets[i]
        for k in range(offsets[i + 1] - o):
            out[o + k] = src[a + k]


@njit(parallel=True, nogil=True, cache=True)
def chunk_row_stats(indptr, reads, starts, width, wwidth, counts, edges, lines):
    """Per chunk, over its rows v with an edge and reads[v] > 0: the rows, the edges read and
    the lines touched; reads[v] == 1 reads the row's first line (bottom-up BFS stops at the first
    parent), 2 the whole row. Overwrites the totals (the CUDA twin adds to them: zero them).
    Rows are reads' length."""
    for c in prange(starts.size - 1):
        nv = ne = nl = 0
        for v in range(starts[c], starts[c + 1]):
            r = reads[v]
            if r == 0:
                continue
            a, b = indptr[v], indptr[v + 1]
            if b <= a:
                continue
            nv += 1
            if r == 1:
                ne += 1
                nl += 2 if wwidth else 1
            else:
                ne += b - a
                nl += _lines(a, b, width) + (_lines(a, b, wwidth) if wwidth else 0)
        counts[c], edges[c], lines[c] = nv, ne, nl


@njit(nogil=True, cache=True)
def chunk_split(queue, qlen, cid, seg_of_chunk, pos, out):
    for i in range(qlen):
        s = seg_of_chunk[cid[i]]
        out[pos[s]] = queue[i]
        pos[s] += 1


@njit(nogil=True, cache=True)
def chunk_index(queue, qlen, offsets, index):
    """Rows of the compacted graph: queue[:qlen] ascending, its rows back to back from
    offsets[i]; so index[v] .. index[v + 1] is row v there (a vertex's end is its successor's
    start when both are in the queue)."""
    for i in range(qlen):
        v = queue[i]
        index[v] = offsets[i]
        index[v + 1] = offsets[i + 1]


@njit(parallel=True, nogil=True, cache=True)
def chunk_copy(src, lo, hi, out):
    """out[:hi - lo] = src[lo:hi] over all threads (compaction of fully active rows)."""
    n = hi - lo
    nblocks = max(1, min(BLOCKS, n // 65536))
    for b in prange(nblocks):
        for k in range(n * b // nblocks, n * (b + 1) // nblocks):
            out[k] = src[lo + k]
