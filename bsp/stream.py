"""Streamed edges: HyTGraph's hybrid transfer management (HyTM) for a GPU partition whose edges
do not fit its budget (`--gpu-memory`).

The edges (and weights, for algorithms that read them) stay in pinned, mapped host memory, split
into chunks of consecutive rows holding about `chunk_bytes` of indices each (by default
CHUNK_BYTES, or less where the staging buffers would otherwise take more than half the budget:
`fitting_chunk_bytes`). The first chunks, as
many as the budget holds beside the row index and the staging buffers, are copied to the device
once and read from there (with `hub_sort` "degree", the default, or "hytgraph" the partitioner
puts the hubs first, so they hold the hubs' rows; with "off" they hold the lowest ids'). The
staging buffers follow the resident chunks in the same device arrays; under auto, the chunks
that fit in their room stay resident too until the first superstep whose copies would save more
than copying those chunks once costs (the model's figures for that superstep); from then on to
the end of the run, the room is the buffers' (forced zero-copy needs no buffers). Each
superstep the kernel that walks the edges runs once per *segment*, a set of queue vertices whose
rows one data path serves:

* resident: the chunks in device memory;
* ExpTM-filter: whole active chunks, up to `merge` adjacent ones per copy, copied into one of two
  device staging buffers (the copy of one group runs while the kernel reads the other);
* ExpTM-compaction: the CPU gathers the active rows (Numba, on a worker thread while the GPU runs
  the other segments) into a pinned buffer, one copy, and the kernel reads the compacted rows
  through a row index written for those vertices only;
* ImpTM-zero-copy: the kernel reads the rows from mapped host memory, all such chunks in one launch.

Per chunk, from the frontier (`chunk_stats`, one pass on the device), the cost model
(bsp/transfer_model.py, constants from `python -m totem_py.calibrate`) picks the engine with
HyTGraph's rule, unless `--transfer` forces one. Kernels see ordinary (indptr, indices, weights)
arrays: a staging buffer is presented as an array whose index e is edge e of the partition (its
start shifted back by the group's first edge), so kernels need no change; kernels over all rows take
a row range instead of a queue (`row_segments`). Emulated partitions run the same code on NumPy
arrays with the same bookkeeping. Every superstep's choices and bytes moved are in `stats`.

With `cache` bytes (`--gpu-cache`, taken out of the budget before the resident chunks), frontier
kernels also get HyTGraph's vertex-centric GPU cache (journal version, section VII): the
hotness of each streamed row (the edges read from it since the last selection,
`chunk_hotness`) picks, every time the queues have held `n` vertices (gamma |V|, gamma = 1), the
candidates: the hottest streamed rows, the longest prefix by hotness whose rows fit the cache. The
cache is refreshed only when more than BETA of the candidates are not cached yet (or it is empty):
their rows are gathered from the mapped host arrays by a device kernel (`chunk_cache_load`) into
one compact buffer, ascending by vertex, with a row index as compaction's (index[v], index[v + 1]).
`chunk_stats` then deals the queue's cached vertices into a segment of their own, read from the
cache, and leaves them out of the chunks' totals, so the cost model prices only the rest. Kernels
over all rows (`row_segments`) keep their path: they read whole chunks, which the cache does not
hold. The cache starts empty at every run (`reset`).
"""

import concurrent.futures
import functools
import os

import numpy as np

from kernels_cpu.chunks import chunk_copy
from kernels_cpu.stream import auto_choose, stream_gather, stream_offsets

from .errors import InputError

from .transfer_model import ALPHA, BETA as BETA_RULE, ENGINES, load_profile

FILTER, COMPACTION, ZEROCOPY = range(3)
RESIDENT = 3
CODES = "FCZR"          # per chunk and superstep in the statistics; '.' for an idle chunk
LETTERS = np.frombuffer(b"." + CODES.encode(), "S1")     # indexed by code + 1
# kernels_gpu/chunks.py keeps per-chunk totals and per-segment counts in shared arrays of 1024:
# a superstep has 4 fixed segments (resident, zero-copy, compaction, cache) and at most one filter
# group per chunk, so 1020 chunks keep the segments within them
MAX_CHUNKS = 1020
GAMMA = 1.0             # select candidates each time the queues have held GAMMA * n vertices
BETA = 0.3              # refresh when more than this share of the candidates is not cached
SEGMENTS = 4            # resident, zero-copy, compaction, cache; then the filter groups
PIECE_VERTICES = 16384  # a zero-copy segment is split in pieces of at least this many vertices
SORT_ZEROCOPY = 4096    # zero-copy segments of this many vertices or more are sorted first
# What a superstep's compaction costs beyond its bytes: the queue to the host and back, the
# worker thread, the row index (about what a compaction of a few vertices adds to a superstep
# over reading them in place). Compaction is chosen only when the bytes it saves over the
# alternatives pay for this.
COMPACTION_FIXED_S = 400e-6
# What a filter group costs a frontier kernel beyond its bytes: the sub-queue's scan and a launch
# per group, and copies that wait for the kernel reading the other staging buffer (what many
# groups add to a superstep over reading the same chunks in place, beyond what their bytes
# predict); spread over a group's chunks. An upper bound: the figure it comes from included each
# group's kernel waiting for the next group's copy, a wait the pipeline does not make.
FILTER_GROUP_S = 60e-6


CHUNK_BYTES = 32 << 20     # indices per chunk, unless the budget wants smaller ones
STAGING_SHARE = 0.5     # the most of the budget that the staging buffers of default chunks take


def fitting_chunk_bytes(budget, width, bpe, merge):
    """The default chunk size for a budget of `budget` bytes: CHUNK_BYTES of indices (`width`
    bytes each), or less, so that the three staging buffers of `merge` chunks (`bpe` bytes per
    edge) take at most STAGING_SHARE of the budget (rows longer than a chunk make more)."""
    edges = int(budget * STAGING_SHARE) // (3 * merge * bpe)
    return max(min(CHUNK_BYTES, edges * width), width)


def chunk_starts(indptr, n, width, chunk_bytes):
    """First row of each chunk (and n): chunks of consecutive rows with about `chunk_bytes` of
    edges each (a row longer than that is a chunk of its own); at most MAX_CHUNKS chunks."""
    edges = int(indptr[n] - indptr[0])
    per = max(1, chunk_bytes // width, -(-edges // MAX_CHUNKS))
    rows = np.searchsorted(indptr[:n + 1], indptr[0] + np.arange(per, edges, per), side="left")
    return np.unique(np.concatenate([[0], rows, [n]])).astype(np.int64)


def row_lines(indptr, width):
    """128-byte lines a zero-copy read of each row touches (0 for an empty row)."""
    a, b = indptr[:-1], indptr[1:]
    return np.where(b > a, (b * width - 1) // 128 - (a * width) // 128 + 1, 0)


class EdgeStream:
    """One view's edges for one GPU partition, streamed (see the module's docstring)."""

    def __init__(self, part, view, indptr, budget, transfer, chunk_bytes, merge=4, weights=None,
                 cache=0):
        """`weights`: the host weights to stream beside the indices (None: the algorithm
        reads none); `cache`: bytes of the budget for the GPU cache of hot rows."""
        self.part, self.view, self.indptr = part, view, indptr
        self.weights = weights
        self.transfer = transfer
        self.merge = max(1, int(merge))
        n = self.n = view.n_local
        hp = view.indptr
        self.width = view.indices.itemsize
        weights = weights is not None
        self.wwidth = self.weights.itemsize if weights else 0
        bpe = self.width + self.wwidth
        if chunk_bytes is None:
            chunk_bytes = fitting_chunk_bytes(budget, self.width, bpe, self.merge)
        starts = self.starts = chunk_starts(hp, n, self.width, chunk_bytes)
        ends = self.ends = hp[starts]                 # first edge of each chunk, and the last + 1
        nchunks = self.nchunks = starts.size - 1
        sizes = np.diff(ends)
        window = max(int(np.convolve(sizes, np.ones(self.merge, np.int64))[:max(nchunks, 1)].max(
            initial=0)), 1)
        self.capacity = window                        # edges per staging buffer
        # the budget holds edge data: the resident chunks, then 2 staging buffers and the
        # compaction buffer in the same arrays, and the cache (the row indexes, hotness, cache
        # flags and scratch queues, n-sized, count as vertex state) (forced zero-copy reads in
        # place and needs no buffers)
        buffers = 0 if transfer == "zerocopy" else window
        self.cache_capacity = max(int(cache), 0) // bpe      # edges the cache holds
        cache_bytes = self.cache_capacity * bpe
        fixed = 3 * buffers * bpe + cache_bytes
        if budget < fixed:
            need = f"its staging buffers need {fixed} bytes" if not cache_bytes else (
                f"its staging buffers ({fixed - cache_bytes} bytes) and --gpu-cache "
                f"({cache_bytes} bytes, this view's share) need {fixed} bytes")
            raise InputError(
                f"--gpu-memory: {budget} bytes (this view's share) is too small to stream GPU "
                f"partition {part.pid}'s "
                f"{int(ends[-1] - ends[0])} edges: {need} "
                f"(--chunk-bytes {chunk_bytes}, {self.merge} chunks per copy)")

        def fitting(room):     # chunks 0..k-1 fit `room` bytes
            fit = np.flatnonzero((ends - ends[0]) * bpe <= room)
            return int(fit[-1]) if fit.size else 0

        # resident chunks 0..n_resident-1 beside the staging buffers; auto keeps n_lazy
        # resident in the staging room too until a superstep first wants a copy (`_unstage`)
        self.n_resident = self.n_staged = fitting(budget - fixed)
        self.lazy = self.can_lazy = transfer == "auto" and buffers > 0
        if self.lazy:
            self.n_resident = fitting(budget - cache_bytes)
        self.n_lazy, self.e_lazy = self.n_resident, int(ends[self.n_resident])
        base = int(ends[self.n_staged])          # the staging buffers, in the same arrays
        size = max(self.e_lazy, base + 3 * buffers)
        xp, to = part.xp, part.to_device

        def resident(host):
            out = xp.empty(size, host.dtype)
            out[:self.e_lazy] = to(host[:self.e_lazy], count=False)
            return out
        self.res_indices = resident(view.indices)
        self.res_weights = resident(self.weights) if weights else None
        self.host_indices = part.mapped(view.indices)
        self.host_weights = part.mapped(self.weights) if weights else None

        def buffer(j):
            return tuple(None if a is None else a[base + j * buffers:base + (j + 1) * buffers]
                         for a in (self.res_indices, self.res_weights))
        self.staging = [buffer(0), buffer(1)]
        self.compact = buffer(2)
        wtype = self.weights.dtype if weights else None
        self.compact_host = (part.pinned(buffers, view.indices.dtype),
                             part.pinned(buffers, wtype) if weights else None)
        self.index = xp.zeros(n + 1, np.int64)        # row index of the compacted rows
        self.starts_dev = to(starts, count=False)
        self.cid = xp.empty(max(n, 1), np.int64)
        self.split = xp.empty(max(n, 1), np.int64)
        self.counters = xp.zeros((3, max(nchunks, 1)), np.int64)
        # the cache: its rows back to back, their row index, a flag per row (1: cached; all 0
        # without a cache, so that chunk_stats takes one path) and the rows' hotness
        self.first = int(starts[self.n_resident])       # the first streamed row
        self.cache_indices = xp.empty(self.cache_capacity, view.indices.dtype)
        self.cache_weights = xp.empty(self.cache_capacity, wtype) if weights else None
        self.cache_index = xp.zeros(n + 1, np.int64)
        self.cached = xp.zeros(max(n, 1), np.uint8)
        self.hot = xp.zeros(max(n, 1) if self.cache_capacity else 0, np.int64)
        self.n_cached = self.processed = 0
        self.device_bytes = int(cache_bytes + size * bpe)     # edge data on the device
        self.edge_bytes = int(ends[-1] - ends[0]) * bpe
        # the distinct lines of each chunk: rows that share a line are read once however many
        # of them are active, so no engine reads more than this
        self.chunk_lines = (row_lines(ends, self.width)
                            + (row_lines(ends, self.wwidth) if weights else 0))
        nonempty = np.concatenate([[0], np.cumsum(np.diff(hp) > 0)])
        rows, head = np.diff(starts), np.diff(nonempty[starts])
        self.full = (rows, sizes, self.chunk_lines)   # every row whole: (vertices, edges, lines)
        self.heads = (rows, head, head * (2 if weights else 1))   # every row's first line only
        self.profile = load_profile(warn=transfer == "auto") if transfer == "auto" else None
        if self.profile is not None:       # what a whole chunk's copy costs does not change
            self.tef_rows = self.profile.filter_s(sizes * bpe)
            self.tef_queue = self.tef_rows + FILTER_GROUP_S / self.merge
            self.lazy_loss = float(self.tef_rows[self.n_staged:self.n_resident].sum())
        self.pool = concurrent.futures.ThreadPoolExecutor(1) if part.device == "gpu" else None
        self.stats = self._empty_stats()

    def _unstage(self):
        """Auto's first copy: chunks n_staged.. stop being resident, their room being the
        staging buffers'."""
        self.lazy = False
        self.n_resident = self.n_staged
        self.first = int(self.starts[self.n_staged])

    # -- the choice -------------------------------------------------------------------------

    def _decide(self, counts, rows=False, warps=False):
        """Engine codes from the per-chunk (vertices, edges, lines) of a superstep, the lines
        capped at each chunk's distinct lines; recorded in the statistics."""
        vertices, edges, lines = counts
        lines = np.minimum(lines, self.chunk_lines)
        codes = self.choose(vertices, edges, lines, rows, warps)
        self._record(codes, lines)
        return codes

    def choose(self, vertices, edges, lines, rows=False, warps=False):
        """Engine code per chunk (-1 idle): resident chunks, then the forced or cheapest engine.
        `lines` are the distinct lines read (at most the chunk's). `rows`: a kernel over all
        rows, whose compaction copies whole chunks (never cheaper than filter, so auto does not
        pick it). `warps`: it maps a warp per row, and zero-copy reads go at the profile's rate
        for such kernels (else at its rate for a thread per edge or per row, whose neighbouring
        threads' reads coalesce)."""
        codes = np.full(self.nchunks, -1, np.int8)
        if self.transfer == "auto":
            # one compiled pass (kernels_cpu/stream.py) of: the costs of bsp/transfer_model.py
            # and HyTGraph's rule; compaction only if it saves COMPACTION_FIXED_S in all; while
            # the staging room holds chunks (lazy), copies only if they save more than copying
            # those chunks once costs (the room is then the buffers' for the rest of the run:
            # a superstep that skips those chunks would otherwise free it for a marginal gain).
            # The zero-copy cost's density: how much of the chunk's lines the reads touch. The
            # lines of active rows cluster (rows are consecutive, adjacent short rows share
            # lines), so a chunk whose lines are partly read streams nearly as a sequential read
            # does: the random rate weighs (1 - share)^2, not 1 - share (a linear weight
            # prices partly read chunks well below the rate they are read at)
            pm = self.profile
            if auto_choose(vertices, edges, lines, self.chunk_lines,
                           self.tef_rows if rows else self.tef_queue, rows,
                           self.width + self.wwidth, pm.memcpy_h2d_Bps, pm.compaction_Bps,
                           pm.zerocopy_random_Bps, pm.dense_Bps(warps), pm.tlp_bytes, ALPHA,
                           BETA_RULE, COMPACTION_FIXED_S, self.n_resident, self.n_staged,
                           self.lazy, self.lazy_loss, codes):
                self._unstage()
            return codes
        active = edges > 0
        codes[active] = ENGINES.index(self.transfer)
        codes[:self.n_resident][active[:self.n_resident]] = RESIDENT
        return codes

    def _groups(self, codes):
        """Runs of up to `merge` adjacent filter chunks: [(first chunk, end chunk)]."""
        f = np.flatnonzero(codes == FILTER)
        if f.size == 0:
            return []
        run = np.concatenate([[0], np.cumsum(np.diff(f) > 1)])     # run of adjacent chunks
        first = f[np.concatenate([[0], np.flatnonzero(np.diff(run)) + 1])][run]
        cut = np.flatnonzero((f - first) % self.merge == 0)          # a group starts
        return list(zip(f[cut].tolist(), (f[np.append(cut[1:], f.size) - 1] + 1).tolist()))

    # -- statistics -------------------------------------------------------------------------

    @staticmethod
    def _empty_stats():
        return dict(chunks="", resident=0, filter=0, compaction=0, zerocopy=0,
                    filter_bytes=0, compaction_bytes=0, zerocopy_bytes=0,
                    cache=0, cache_bytes=0, cache_refreshes=0)

    def _record(self, codes, lines):
        s = self.stats
        s["chunks"] += LETTERS[codes + 1].tobytes().decode()
        counts = np.bincount(codes + 1, minlength=len(LETTERS))
        for code, name in enumerate(ENGINES + ("resident",)):
            s[name] += int(counts[code + 1])
        s["zerocopy_bytes"] += int(lines[codes == ZEROCOPY].sum()) * 128

    def take_stats(self):
        out, self.stats = self.stats, self._empty_stats()
        return out

    # -- the cache of hot rows --------------------------------------------------------------

    def reset(self):
        """An empty cache and no hotness: the state of a run's start (call in the partition's
        context)."""
        self.cached.fill(0)
        self.hot.fill(0)
        self.n_cached = self.processed = 0
        if self.can_lazy and not self.lazy:      # the staging room holds its chunks again
            lo, hi = int(self.ends[self.n_staged]), self.e_lazy
            for out, host in ((self.res_indices, self.view.indices),
                              (self.res_weights, self.weights)):
                if out is not None:
                    out[lo:hi] = self.part.to_device(host[lo:hi], count=False)
            self.lazy = True
            self.n_resident = self.n_lazy
            self.first = int(self.starts[self.n_lazy])

    def _track(self, queue, qlen):
        """Add the queue's streamed rows to their hotness; once the queues since the last
        selection have held n vertices, select (and maybe refresh)."""
        self.part.kernels("chunks").chunk_hotness(self.indptr, queue, qlen, self.first, self.hot)
        self.processed += qlen
        if self.processed >= GAMMA * self.n:
            self.select()

    def candidates(self):
        """The streamed rows by hotness, hottest first (ties by vertex id), the longest prefix
        of rows with hotness whose edges fit the cache; ascending, on the device."""
        xp, first = self.part.xp, self.first
        hot = self.hot[first:self.n]
        order = xp.argsort(-hot, **({"kind": "stable"} if xp is np else {}))  # CuPy's is stable
        ranked = order + first
        size = xp.cumsum(self.indptr[ranked + 1] - self.indptr[ranked])
        k = int(xp.count_nonzero((size <= self.cache_capacity) & (hot[order] > 0)))
        return xp.sort(ranked[:k])

    def select(self):
        """HyTGraph's Algorithm 2, lines 5-13: pick the candidates, reset the hotness, and refresh
        the cache when more than BETA of the candidates are not in it (or it is empty).
        Returns whether it refreshed."""
        cand = self.candidates()
        self.hot.fill(0)
        self.processed = 0
        k = int(cand.size)
        new = int(self.part.xp.count_nonzero(self.cached[cand] == 0)) if k else 0
        if k == 0 or (self.n_cached and new <= BETA * k):
            return False
        self._refresh(cand)
        return True

    def _refresh(self, cand):
        """The cache holds exactly the rows of `cand` (ascending): gathered from the mapped host
        arrays by the device, with their row index and flags."""
        xp, k = self.part.xp, self.part.kernels("chunks")
        n = int(cand.size)
        offsets = xp.concatenate([xp.zeros(1, np.int64),
                                  xp.cumsum(self.indptr[cand + 1] - self.indptr[cand])])
        total = int(offsets[n])
        for src, out in ((self.host_indices, self.cache_indices),
                         (self.host_weights, self.cache_weights)):
            if out is not None:
                k.chunk_cache_load(self.indptr, src, cand, n, offsets, out)
                self.stats["cache_bytes"] += total * out.itemsize
        k.chunk_index(cand, n, offsets, self.cache_index)
        self.cached.fill(0)
        self.cached[cand] = 1
        self.n_cached = n
        self.stats["cache_refreshes"] += 1

    # -- frontier kernels -------------------------------------------------------------------

    def queue_segments(self, queue, qlen, pieces=1):
        """(indptr, indices, weights, sub-queue, length) per segment of queue[:qlen]; the
        zero-copy chunks' vertices in up to `pieces` segments of consecutive chunks, in order."""
        if qlen == 0:
            return
        part, k = self.part, self.part.kernels("chunks")
        if self.cache_capacity:
            self._track(queue, qlen)
        cnt = self.counters
        cnt.fill(0)
        k.chunk_stats(self.indptr, queue, qlen, self.starts_dev, self.width, self.wwidth,
                      self.cached, self.cid, cnt[0], cnt[1], cnt[2])
        counts = part.to_host(cnt, count=False)[:, :self.nchunks]
        vertices = counts[0]
        codes = self._decide(counts)
        groups = self._groups(codes)
        # segments: 0 resident (and the edgeless vertices of idle chunks), 1 zero-copy (its
        # first piece), 2 compaction, 3 the cached vertices (pseudo chunk nchunks, counted by
        # no chunk), 4.. the filter groups, then the zero-copy pieces after the first
        seg = np.zeros(self.nchunks + 1, np.int64)
        zc = np.flatnonzero(codes == ZEROCOPY)
        pieces = max(1, min(pieces, zc.size, int(vertices[zc].sum()) // PIECE_VERTICES))
        more = SEGMENTS + len(groups)            # the second zero-copy piece's segment
        piece = np.arange(zc.size) * pieces // max(zc.size, 1)
        seg[zc] = np.where(piece == 0, 1, more + piece - 1)
        seg[:-1][codes == COMPACTION] = 2
        seg[-1] = 3
        for j, (c, d) in enumerate(groups):
            seg[c:d] = SEGMENTS + j
        sizes = np.bincount(seg[:-1], weights=vertices,
                            minlength=more + pieces - 1).astype(np.int64)
        sizes[3] = qlen - int(vertices.sum())
        self.stats["cache"] += int(sizes[3])
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        if np.count_nonzero(sizes) == 1:      # one segment: the queue as it is
            sub = [queue if size else None for size in sizes]
        else:
            pos = part.to_device(offsets[:-1], count=False)
            k.chunk_split(queue, qlen, self.cid, part.to_device(seg, count=False), pos,
                          self.split)
            sub = [self.split[offsets[s]:offsets[s + 1]] for s in range(sizes.size)]
        pending = None
        if sizes[2]:
            pending = self._compact_queue(sub[2], int(sizes[2]), sub[2] is queue)
        filtered = self._filtered(groups)     # the first copies start now
        if sizes[0]:
            yield self.indptr, self.res_indices, self.res_weights, sub[0], int(sizes[0])
        if sizes[3]:
            yield self.cache_index, self.cache_indices, self.cache_weights, sub[3], int(sizes[3])
        for j in (1, *range(more, more + pieces - 1)):
            if sizes[j]:
                yield (self.indptr, self.host_indices, self.host_weights,
                       self._ascending(sub[j], int(sizes[j]), sub[j] is queue, SORT_ZEROCOPY),
                       int(sizes[j]))
        for j, indices, weights in filtered:
            yield self.indptr, indices, weights, sub[SEGMENTS + j], int(sizes[SEGMENTS + j])
        if pending is not None:
            yield from self._compacted(pending)

    def _ascending(self, sub, length, shared, least=0):
        """The segment sub[:length] sorted by vertex on the device, in place, when it holds
        `least` vertices or more (`shared`: sub is the algorithm's queue, which is copied to
        self.split first). Zero-copy segments of SORT_ZEROCOPY or more: the frontier kernels map
        a thread per edge in queue order, and queues are built by atomic appends: unsorted,
        neighbouring threads read rows far apart, one bus request for each row's few bytes,
        where in row order a warp's loads coalesce (the rows are consecutive in the mapped
        arrays) and adjacent short rows share lines. Compaction segments always: the CPU
        gathers the rows in queue order."""
        if length < least:
            return sub
        if shared:
            self.split[:length] = sub[:length]
            sub = self.split
        sub[:length].sort()
        return sub

    def _filtered(self, groups):
        """Start copying the first two filter groups into the two staging buffers; the returned
        generator yields (j, indices, weights) per group and, once the caller has queued group
        j's kernel, frees its buffer for the copy of group j + 2."""
        copies = [self._copy_group(j, c, d) for j, (c, d) in enumerate(groups[:2])]

        def walk():
            for j in range(len(groups)):
                self.part.wait_copied(j % 2)
                yield (j, *copies[j])
                self.part.release(j % 2)
                if j + 2 < len(groups):
                    copies.append(self._copy_group(j + 2, *groups[j + 2]))
        return walk()

    def _copy_group(self, j, c, d):
        """Start copying chunks c..d-1 into staging buffer j % 2; the shifted arrays."""
        lo, hi = int(self.ends[c]), int(self.ends[d])
        bufs = self.staging[j % 2]
        part = self.part
        out = []
        for buf, host in zip(bufs, (self.host_indices, self.host_weights)):
            if buf is None:
                out.append(None)
                continue
            part.copy_in(buf, host, lo, hi, j % 2)
            out.append(part.shifted(buf, lo, hi))
            self.stats["filter_bytes"] += (hi - lo) * buf.itemsize
        part.copied(j % 2)
        return out

    def _compact_queue(self, sub, length, shared):
        """Start the compaction of the rows of sub[:length] (`shared`: sub is the algorithm's
        queue): the queue, sorted on the device, comes to the host, the gather runs on the
        worker thread (inline on an emulated partition). (The sort runs on the device: a host
        sort would hold up the main thread every superstep.)"""
        sub = self._ascending(sub, length, shared)
        queue = self.part.to_host(sub[:length], count=False)
        if self.pool is None:
            return self._gather(queue)
        return self.pool.submit(self._gather, queue)

    def _gather(self, queue):
        """Batches of rows that fit the compaction buffer; the first one gathered into the
        pinned buffer: (batches, its offsets)."""
        hp = self.view.indptr
        deg = hp[queue + 1] - hp[queue]
        cum = np.cumsum(deg)
        batches, first = [], 0
        while first < queue.size:
            base = cum[first] - deg[first]
            last = max(first + 1, int(np.searchsorted(cum, base + self.capacity, side="right")))
            batches.append(queue[first:last])
            first = last
        return batches, self._gather_batch(batches[0])

    def _gather_batch(self, queue):
        self.part.host_wait(2)      # the last copy out of the pinned buffer is done
        hp, view = self.view.indptr, self.view
        offsets = np.empty(queue.size + 1, np.int64)
        stream_offsets(hp, queue, queue.size, offsets)
        stream_gather(hp, view.indices, queue, queue.size, offsets, self.compact_host[0],
                      self.weights, self.compact_host[1])
        return offsets

    def _compacted(self, pending):
        batches, offsets = pending if isinstance(pending, tuple) else pending.result()
        part, k = self.part, self.part.kernels("chunks")
        for b, q in enumerate(batches):
            if b:
                offsets = self._gather_batch(q)
            total = int(offsets[-1])
            for buf, host in zip(self.compact, self.compact_host):
                if buf is not None:
                    part.copy_in(buf, host, 0, total, 2)
                    self.stats["compaction_bytes"] += total * buf.itemsize
            qd, od = part.to_device(q), part.to_device(offsets)
            self.stats["compaction_bytes"] += q.nbytes + offsets.nbytes
            part.copied(2)
            part.wait_copied(2)
            k.chunk_index(qd, q.size, od, self.index)
            yield (self.index, part.shifted(self.compact[0], 0, total),
                   None if self.compact[1] is None else part.shifted(self.compact[1], 0, total),
                   qd, int(q.size))
            part.release(2)

    # -- kernels over all rows --------------------------------------------------------------

    def row_segments(self, reads=None, warps=True):
        """(indptr, indices, weights, first row, end row) covering every row the kernel reads:
        `reads` None, every row whole; "heads", every row's first line (CC's sampled links); or
        a callable giving per row 0 (not read: the kernel skips it), 1 (its first line) or 2
        (whole), as a bool or uint8 array on the device, evaluated only here. Chunks whose rows
        are not read are left out. `warps`: the kernel maps a warp per row (`choose`)."""
        if callable(reads):
            per_row = reads()
            if per_row.dtype == np.bool_:
                per_row = per_row.view(np.uint8)
            cnt = self.counters
            cnt.fill(0)
            self.part.kernels("chunks").chunk_row_stats(
                self.indptr, per_row, self.starts_dev, self.width, self.wwidth,
                cnt[0], cnt[1], cnt[2])
            counts = self.part.to_host(cnt, count=False)[:, :self.nchunks]
        else:
            counts = self.heads if reads == "heads" else self.full
        codes = self._decide(counts, rows=True, warps=warps)
        starts = self.starts
        if self.n_resident:
            yield self.indptr, self.res_indices, self.res_weights, 0, int(starts[self.n_resident])
        c = 0
        while c < self.nchunks:          # zero-copy chunks: one launch per run of them, idle
            if codes[c] != ZEROCOPY:     # chunks between them included (their rows are not read)
                c += 1
                continue
            last = d = c
            while d < self.nchunks and codes[d] in (ZEROCOPY, -1):
                last = d if codes[d] == ZEROCOPY else last
                d += 1
            yield (self.indptr, self.host_indices, self.host_weights, int(starts[c]),
                   int(starts[last + 1]))
            c = last + 1
        groups = self._groups(codes)
        for j, indices, weights in self._filtered(groups):
            c, d = groups[j]
            yield self.indptr, indices, weights, int(starts[c]), int(starts[d])
        for c in np.flatnonzero(codes == COMPACTION):   # every row active: the CPU copies chunks
            yield from self._compact_rows(int(c))

    def _compact_rows(self, c):
        part = self.part
        lo, hi = int(self.ends[c]), int(self.ends[c + 1])
        out = []
        part.host_wait(2)
        for buf, pinned, host in zip(self.compact, self.compact_host,
                                     (self.view.indices, self.weights)):
            if buf is None:
                out.append(None)
                continue
            chunk_copy(host, lo, hi, pinned)
            part.copy_in(buf, pinned, 0, hi - lo, 2)
            self.stats["compaction_bytes"] += (hi - lo) * buf.itemsize
            out.append(part.shifted(buf, lo, hi))
        part.copied(2)
        part.wait_copied(2)
        yield self.indptr, out[0], out[1], int(self.starts[c]), int(self.starts[c + 1])
        part.release(2)


# -- edges read from a file (GTS) ----------------------------------------------------------------

PIECE = 16 << 20        # bytes of one positioned read of a page


@functools.cache
def _readers():
    """The threads that read the pieces of a page at once."""
    return concurrent.futures.ThreadPoolExecutor(min(8, os.cpu_count() or 1))


class EdgeFile:
    """Edges (ids, and weights or None) stored as raw arrays in a file, read by range with
    positioned reads (`os.preadv`) into the caller's buffers; each range read is then dropped
    from the OS page cache (POSIX_FADV_DONTNEED), so that neither the process nor the cache
    holds more of the edges than the buffers. `unit_weights`: weights of 1 for a file without
    any (algorithms that read weights on an unweighted graph)."""

    def __init__(self, path, ids, weights=None, unit_weights=False):
        """`ids`, `weights`: (dtype, byte offset, count) of each array in the file."""
        self.path = path
        self.ids, self.weights = ids, weights
        self.unit_weights = unit_weights and weights is None
        self.dtype = np.dtype(ids[0])
        self.count = int(ids[2])
        self.read_bytes = 0
        self._fd = None

    @property
    def weighted(self):
        return self.weights is not None or self.unit_weights

    def _read(self, spec, lo, hi, out):
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDONLY)
        dtype, offset, _ = spec
        view = memoryview(out[:hi - lo]).cast("B")
        start = offset + lo * np.dtype(dtype).itemsize
        pieces = range(0, view.nbytes, PIECE)
        if len(pieces) > 1:             # several reads in flight: the disk's queue stays full
            list(_readers().map(lambda p: self._pread(view[p:p + PIECE], start + p), pieces))
        else:
            self._pread(view, start)
        if view.nbytes and hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self._fd, start, view.nbytes, os.POSIX_FADV_DONTNEED)
        self.read_bytes += view.nbytes

    def _pread(self, view, at):
        done = 0
        while done < view.nbytes:
            got = os.preadv(self._fd, [view[done:]], at + done)
            if got <= 0:
                raise InputError(f"{self.path}: the file ends before the edges it indexes (it "
                                 f"changed while the run read it)")
            done += got

    def read(self, lo, hi, ids, weights=None):
        """ids[:hi - lo] = the ids of edges lo..hi-1, and weights[:hi - lo] their weights when
        `weights` is given (1 for unit weights)."""
        self._read(self.ids, lo, hi, ids)
        if weights is not None:
            if self.weights is None:
                weights[:hi - lo] = 1
            else:
                self._read(self.weights, lo, hi, weights)

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __del__(self):
        self.close()


class _Moved:
    def __init__(self, buf, lo, hi):
        self.buf = buf
        self.__array_interface__ = dict(shape=(hi,), typestr=buf.dtype.str, version=3,
                                        data=(buf.ctypes.data - lo * buf.itemsize, False))


def shifted(buf, lo, hi):
    """A host array of `hi` entries whose entry e is buf[e - lo], for e in [lo, hi) (what a
    kernel that reads edges lo..hi-1 by their place in the CSR takes; the buffer stays
    referenced)."""
    return np.asarray(_Moved(buf, lo, hi))


def page_starts(indptr, n, page_edges):
    """First row of each page (and n): pages of consecutive rows with about `page_edges` edges
    each (a row longer than that is a page of its own); GTS's fixed-size pages, cut at rows."""
    edges = int(indptr[n] - indptr[0])
    per = max(1, int(page_edges))
    rows = np.searchsorted(indptr[:n + 1], indptr[0] + np.arange(per, edges, per), side="left")
    return np.unique(np.concatenate([[0], rows, [n]])).astype(np.int64)


class FileStream:
    """One view's edges for one partition (CPU or GPU), read from a file page by page (GTS,
    Kim et al., SIGMOD'16): the row index stays in memory, the edges in the file. A page is a
    run of consecutive rows holding about half of `budget` bytes (the partition's share of
    --host-memory for this view); two host buffers of a page each take the reads, one filled
    by a worker thread while the kernel reads the other. A kernel over a queue reads only the
    pages holding the queue's rows (GTS's page bitmap, from the same per-row counts as the
    chunk statistics); a kernel over all rows reads every page whose rows it reads. A GPU
    partition copies each page into one of two device staging buffers as it copies streamed
    chunks (`copy_in`, `shifted`): the kernels are the same as for streamed edges. A GPU
    partition keeps pages in a page cache of `cache` bytes of device memory (GTS's cache in
    free GPU memory): a page read is kept while a slot is free, else in place of the cached page
    used least often this run (not one the pass still has to reach) when the new page has been
    used more often; a cached page is read from the device. A kernel over every page then finds
    the same pages cached round after round, a frontier the pages it returns to. Unit weights
    (a file without weights, an algorithm that reads them) are one device page of ones, never
    read nor copied. Statistics:
    pages and bytes read from the file and pages found in the cache, per superstep
    (`take_stats`)."""

    nchunks = n_resident = cache_capacity = 0

    def __init__(self, part, view, indptr, source, budget, weights=False, cache=0):
        """`source`: the view's EdgeFile; `indptr` the row index on the partition's device;
        `weights`: whether the kernels read the weights; `cache`: bytes of device memory for
        the page cache and the staging buffers (a GPU partition's share of its budget)."""
        self.part, self.view, self.indptr, self.source = part, view, indptr, source
        self.budget = budget
        n = self.n = view.n_local
        hp = view.indptr
        self.width = source.dtype.itemsize
        self.weighted = weights
        self.unit = weights and source.unit_weights     # weights of 1: never read nor copied
        self.wwidth = 8 if weights and source.weighted and not self.unit else 0
        bpe = self.width + self.wwidth
        ones = 8 if self.unit else 0            # the page of ones, on the partition's device
        on_host = 2 * bpe + (0 if part.kind == "gpu" else ones)     # host bytes a page's edge
        self.starts = page_starts(hp, n, max(int(budget) // on_host, 1))
        self.ends = hp[self.starts]
        sizes = np.diff(self.ends)
        self.capacity = cap = max(int(sizes.max(initial=0)), 1)
        self.edge_bytes = int(hp[n] - hp[0]) * bpe
        self.host_bytes = cap * on_host        # what the run holds of these edges
        wt = np.float64 if self.wwidth else None
        self.buffers = [(part.pinned(cap, source.dtype), part.pinned(cap, wt) if wt else None)
                        for _ in range(2)]
        self.staging = None
        self.device_bytes = 0
        if part.kind == "gpu":
            xp = part.xp
            self.staging = [(xp.empty(cap, source.dtype), xp.empty(cap, wt) if wt else None)
                            for _ in range(2)]
            self.device_bytes = cap * (2 * bpe + ones)
        self.ones = None
        if self.unit:
            with part.context():
                self.ones = part.xp.ones(cap, np.float64)
        pages = self.starts.size - 1
        slots = min(max(int(cache or 0) - self.device_bytes, 0) // (cap * bpe), pages)
        self.slots = slots if part.kind == "gpu" else 0    # allocated by the first page kept
        self.cache_pages = []
        self.owner = np.full(self.slots, -1, np.int64)  # the page in each cache slot
        self.slot = np.full(pages, -1, np.int64)       # each page's cache slot
        self.uses = np.zeros(pages, np.int64)          # each page's uses this run
        self.pool = concurrent.futures.ThreadPoolExecutor(1)
        self.stats = self._empty_stats()

    @staticmethod
    def _empty_stats():
        return dict(EdgeStream._empty_stats(), pages=0, read_bytes=0, cached_pages=0)

    def take_stats(self):
        out, self.stats = self.stats, self._empty_stats()
        return out

    def reset(self):
        """Every run starts with an empty page cache."""
        self.owner.fill(-1)
        self.slot.fill(-1)
        self.uses.fill(0)

    def _cached(self, c, lo, hi):
        """(indices, weights) of cached page c, as the kernels take them."""
        s, cap = int(self.slot[c]), self.capacity
        ids, w = (None if buf is None else buf[s * cap:(s + 1) * cap]
                  for buf in self.cache_pages[0])
        return self.part.shifted(ids, lo, hi), self._weights(w, lo, hi)

    def _weights(self, w, lo=None, hi=None):
        """The weights the kernels take: the page's (shifted as the ids when lo is given), the
        page of ones for unit weights, or None."""
        w = self.ones if self.unit else w
        return w if w is None or lo is None else self.part.shifted(w, lo, hi)

    def _allocate(self):
        """The page cache's slots, allocated once the algorithm's state is (the first run's first
        page read): at most 80% of the device memory then free, so that the state and the
        buffers a superstep allocates still fit."""
        if self.slots < 1:
            return False
        free = self.part.free_device_bytes()
        page = self.capacity * (self.width + self.wwidth)
        if free is not None:
            self.slots = min(self.slots, int(0.8 * free) // page)
        self.owner = self.owner[:self.slots]
        if self.slots < 1:
            self.slots = 0
            return False
        xp, k = self.part.xp, self.slots * self.capacity
        with self.part.context():
            self.cache_pages = [(xp.empty(k, self.source.dtype),
                                 xp.empty(k, np.float64) if self.wwidth else None)]
        self.device_bytes += self.slots * page
        return True

    def _admit(self, c, pages, ids, w, n):
        """Keep page c (its n edges in `ids`, `w` on the device) in a free cache slot, else in
        place of the least used cached page that the pass (`pages`, ascending) has not still to
        reach, if c has been used more often."""
        if not self.cache_pages and not self._allocate():
            return
        free = np.flatnonzero(self.owner < 0)
        if free.size:
            s = int(free[0])
        else:
            held = self.uses[self.owner].copy()
            held[np.isin(self.owner, pages[pages > c])] = np.iinfo(np.int64).max
            s = int(np.argmin(held))
            if held[s] >= self.uses[c]:
                return
            self.slot[self.owner[s]] = -1
        cap = self.capacity
        with self.part.context():
            for buf, src in zip(self.cache_pages[0], (ids, w)):
                if buf is not None:
                    buf[s * cap:s * cap + n] = src[:n]
        self.owner[s], self.slot[c] = c, s

    def _fill(self, slot, lo, hi):
        ids, w = self.buffers[slot]
        before = self.source.read_bytes
        self.source.read(lo, hi, ids, w)
        return self.source.read_bytes - before

    def _pages(self, pages):
        """For each page c of `pages` (ascending), (indptr, indices, weights) whose entries
        lo..hi-1 are the page's edges, the next page read meanwhile."""
        part = self.part
        pages = np.asarray(pages, np.int64)
        self.uses[pages] += 1
        hit = self.slot[pages] >= 0       # cached when the pass starts (and kept until reached)
        reads = pages[~hit]
        pending, k = None, 0
        for c, cached in zip(pages.tolist(), hit):
            lo, hi = int(self.ends[c]), int(self.ends[c + 1])
            if cached:
                self.stats["cached_pages"] += 1
                yield (self.indptr, *self._cached(c, lo, hi))
                continue
            slot = k % 2
            got = (pending.result() if pending is not None else self._fill(slot, lo, hi))
            self.stats["pages"] += 1
            self.stats["read_bytes"] += got
            ids, w = self.buffers[slot]
            if self.staging is not None:
                dev = self.staging[slot]
                for buf, host in zip(dev, (ids, w)):
                    if buf is not None:
                        part.copy_in(buf, host, 0, hi - lo, slot)
                part.copied(slot)
                part.wait_copied(slot)
                ids, w = dev
            pending = None
            k += 1
            if k < len(reads):
                d = int(reads[k])
                part.host_wait(1 - slot)     # the copy out of the other host buffer is done
                pending = self.pool.submit(self._fill, 1 - slot, int(self.ends[d]),
                                           int(self.ends[d + 1]))
            self._admit(c, pages, ids, w, hi - lo)
            yield self.indptr, part.shifted(ids, lo, hi), self._weights(w, lo, hi)
            if self.staging is not None:
                part.release(slot)

    def queue_segments(self, queue, qlen, pieces=1):
        """(indptr, indices, weights, sub-queue, length) per page holding rows of queue[:qlen]
        with edges; the queue's vertices without edges in a segment of their own."""
        if qlen == 0:
            return
        part = self.part
        q = part.to_host(queue[:qlen], count=False)
        hp = self.view.indptr
        page = np.searchsorted(self.starts, q, side="right") - 1
        page[hp[q + 1] == hp[q]] = -1              # rows without edges read no page
        order = np.argsort(page, kind="stable")
        q, page = q[order], page[order]
        cut = np.flatnonzero(np.diff(page)) + 1
        firsts = np.concatenate([[0], cut])
        bounds = np.append(cut, q.size)
        active = page[firsts]
        if active[0] < 0:
            sub = part.to_device(q[:bounds[0]], count=False)
            ids, w = (self.staging or self.buffers)[0]
            yield self.indptr, ids, self._weights(w), sub, int(sub.size)
            firsts, bounds, active = firsts[1:], bounds[1:], active[1:]
        for (indptr, ids, w), a, b in zip(self._pages(active), firsts, bounds):
            sub = part.to_device(q[a:b], count=False)
            yield indptr, ids, w, sub, int(b - a)

    def row_segments(self, reads=None, warps=True):
        """(indptr, indices, weights, first row, end row) per page: `reads` None or "heads",
        every page, those with edges read from the file; a callable (per row whether it is
        read, as EdgeStream.row_segments takes it), only the pages holding rows it reads."""
        sizes = np.diff(self.ends)
        wanted = sizes > 0
        every = not callable(reads)
        if not every and self.n:
            per_row = self.part.to_host(reads(), count=False).astype(bool)
            hp = self.view.indptr
            per_row &= hp[1:self.n + 1] > hp[:self.n]
            wanted &= np.add.reduceat(per_row, self.starts[:-1]) > 0
        pages = self._pages(np.flatnonzero(wanted))
        empty = (self.staging or self.buffers)[0]
        for c in range(sizes.size):
            if wanted[c]:
                indptr, ids, w = next(pages)
            elif every:
                indptr, ids, w = self.indptr, empty[0], self._weights(empty[1])
            else:
                continue
            yield indptr, ids, w, int(self.starts[c]), int(self.starts[c + 1])
        next(pages, None)       # the last page's release
