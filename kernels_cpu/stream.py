"""ExpTM-compaction's CPU side (HyTGraph, sections II-B and V-A): gather the edge lists of the
active vertices of streamed chunks into one consecutive staging buffer, so that a single copy moves
them to the GPU, and build the index (offsets) the GPU kernels address them by.

`stream_offsets` is the exclusive prefix sum of the queue's degrees (a two-pass blocked scan: the
first pass reads each row's degree, the second sums within blocks); `stream_gather` copies the rows
of queue[:qlen] into out[offsets[i]:offsets[i+1]] in blocks of equal edge counts (a hub's row is
cut across blocks, as in jit.frontier_blocks), with an optional weights array copied alongside into
its own buffer. Each thread writes its own range of the output: no races.

The rows are scattered and mostly short, so the gather is bound by memory latency, and the
mispredicted exit of each row's copy loop stops the processor from running ahead to the next rows'
loads: about one DRAM latency per row. Both kernels therefore prefetch the rows PREFETCH_ROWS
queue items ahead (their indptr entries twice as far ahead), so that the latencies of many rows
overlap; at degree 2 the per-row loop overhead dominates and prefetching gains little.
`totem_py.calibrate` times these two calls for the compaction throughput of the cost model
(bsp/transfer_model.py).
"""

import numpy as np
from numba import njit, prange

from .atomics import prefetch
from .jit import BLOCKS, EDGES_PER_BLOCK, kernel

SCAN_ITEMS = 1 << 14     # queue items per block of the parallel scan
PREFETCH_ROWS = 16       # how far ahead in the queue the rows are prefetched
PREFETCH_EDGES = 64      # how much of each row (the hardware prefetcher follows longer rows)

@kernel("qlen", serial_below=1 << 16)
def stream_offsets(indptr, queue, qlen, offsets):
    """offsets[i] = edges of queue[:i] for i in 0..qlen (offsets needs qlen + 1 entries);
    returns the total, offsets[qlen]."""
    nblocks = max(1, (qlen + SCAN_ITEMS - 1) // SCAN_ITEMS)
    sums = np.zeros(nblocks + 1, dtype=np.int64)
    for b in prange(nblocks):
        lo, hi = b * SCAN_ITEMS, min(qlen, (b + 1) * SCAN_ITEMS)
        s = 0
        for i in range(lo, hi):
            if i + PREFETCH_ROWS < qlen:
                prefetch(indptr, queue[i + PREFETCH_ROWS])
            v = queue[i]
            d = indptr[v + 1] - indptr[v]
            offsets[i + 1] = d
            s += d
        sums[b + 1] = s
    for b in range(nblocks):
        sums[b + 1] += sums[b]
    offsets[0] = 0
    for b in prange(nblocks):
        lo, hi = b * SCAN_ITEMS, min(qlen, (b + 1) * SCAN_ITEMS)
        s = sums[b]
        for i in range(lo, hi):
            s += offsets[i + 1]
            offsets[i + 1] = s
    return sums[nblocks]


@kernel("qlen", frontier=("indptr", "queue"))
def stream_gather(indptr, indices, queue, qlen, offsets, out, weights=None, wout=None):
    """out[offsets[i]:offsets[i+1]] = indices of row queue[i], for i < qlen (offsets from
    stream_offsets); with `weights`, wout gets the rows' weights the same way."""
    offs = offsets[:qlen + 1]
    total = offs[qlen]
    nblocks = max(1, min(BLOCKS * 4, total // EDGES_PER_BLOCK))
    for b in prange(nblocks):
        lo = total * b // nblocks
        hi = total * (b + 1) // nblocks
        i = np.searchsorted(offs, lo, side="right") - 1    # the row edge `lo` lies in
        e = lo
        while e < hi:
            if i + 2 * PREFETCH_ROWS < qlen:
                prefetch(indptr, queue[i + 2 * PREFETCH_ROWS])
            if i + PREFETCH_ROWS < qlen:
                u = queue[i + PREFETCH_ROWS]
                first, last = indptr[u], min(indptr[u + 1], indptr[u] + PREFETCH_EDGES) - 1
                for k in range(first, last + 1, 64 // indices.itemsize):
                    prefetch(indices, k)
                prefetch(indices, last)
                if weights is not None:
                    for k in range(first, last + 1, 64 // weights.itemsize):
                        prefetch(weights, k)
                    prefetch(weights, last)
            end = min(hi, offs[i + 1])
            src = indptr[queue[i]] + (e - offs[i])
            for k in range(end - e):
                out[e + k] = indices[src + k]
            if weights is not None:
                for k in range(end - e):
                    wout[e + k] = weights[src + k]
            e = end
            i += 1


@njit(cache=True, nogil=True)
def auto_choose(vertices, edges, lines, chunk_lines, tef, rows, bpe, memcpy_Bps, compaction_Bps,
                random_Bps, dense_Bps, tlp_bytes, alpha, beta, fixed_s, n_resident, n_staged,
                lazy, lazy_loss, codes):
    """bsp/stream.py's auto choice in one pass (compiled: it runs every superstep, and NumPy's
    many small array operations would cost auto more than its choices save). Per chunk: -1 idle,
    else HyTGraph's rule on the costs of bsp/transfer_model.py (Profile.filter_s, compaction_s,
    zerocopy_s: `tef` given, compaction infinite for kernels over all rows), compaction dropped
    when it saves under `fixed_s` in all, copies dropped for zero-copy while `lazy` unless they
    save more than `lazy_loss`; chunks below n_resident (n_staged once unstaged) resident (3).
    Writes `codes`; returns whether the lazily resident chunks are to be unstaged. The NumPy
    twin is in tests/test_stream.py."""
    n = edges.size
    tiz, tec = np.empty(n), np.empty(n)
    any_compact = False
    kept, compact_s = 0.0, 0.0
    for c in range(n):
        if edges[c] == 0:
            codes[c] = -1
            continue
        share = lines[c] / max(chunk_lines[c], 1)
        d = min(max(1.0 - (1.0 - share) ** 2, 0.0), 1.0)
        nbytes = float(lines[c] * 128)
        moved = nbytes if tlp_bytes == 0 else np.ceil(nbytes / tlp_bytes) * tlp_bytes
        tiz[c] = moved * ((1.0 - d) / random_Bps + d / dense_Bps)
        if rows:
            tec[c] = np.inf
        else:
            gathered = float(edges[c] * bpe) + 8.0 * float(vertices[c])
            moved = gathered if tlp_bytes == 0 else np.ceil(gathered / tlp_bytes) * tlp_bytes
            tec[c] = moved / memcpy_Bps + gathered / compaction_Bps
        codes[c] = 2 if tiz[c] < tef[c] else 0
        if tec[c] < alpha * tef[c] and tec[c] < beta * tiz[c]:
            codes[c] = 1
            if c >= n_resident:
                any_compact = True
                kept += min(tef[c], tiz[c])
                compact_s += tec[c]
    if any_compact and kept - compact_s < fixed_s:
        for c in range(n_resident, n):
            if codes[c] == 1:
                codes[c] = 2 if tiz[c] < tef[c] else 0
    unstage = False
    if lazy:
        gain, copies = 0.0, False
        for c in range(n_resident, n):
            if codes[c] == 0 or codes[c] == 1:
                copies = True
                gain += tiz[c] - (tef[c] if codes[c] == 0 else tec[c])
        if copies:
            if gain > lazy_loss:
                unstage = True
            else:
                for c in range(n_resident, n):
                    if codes[c] == 0 or codes[c] == 1:
                        codes[c] = 2
    for c in range(n_staged if unstage else n_resident):
        if codes[c] >= 0:
            codes[c] = 3
    return unstage
