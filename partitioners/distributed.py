"""Every MPI rank's share of the graph and its RankPlan, built by the ranks together: no rank ever
holds the whole graph, only its share of the edges, its ghosts and per-vertex tables of its own.

1. Home blocks. The vertices are cut into R ranges of consecutive ids, one per rank (equal ranges
   for a generated graph, ranges of about equal rows + edges for a file). Rank r reads the rows of
   its block from a .tcsr file by byte range (`read_share`), or generates its own range of the
   generator's edges twice, once to count what each home's buckets of rows get, then to send
   each edge to the home of its source (and of its target, undirected), which sorts and cleans
   its buckets as one process does (`generate_share`): the same graph as one process generates
   for the same seed.
2. The deal (`deal`). Vertices go to ranks as `partitioners.plan.deal_to_ranks` deals them: in
   out-degree order (highest first, ties by id), serpentine; under BLOCK, consecutive ranges. A
   vertex's place in that order needs only counts: how many vertices have a higher degree (every
   rank's histogram of its distinct degrees, allgathered: at most sqrt(2E) of them) and how many
   of its degree have smaller ids (the counts of the lower blocks, and its place within its own
   block).
3. The split. Each rank receives its vertices (ids, out- and in-degrees) and splits them between
   its CPU and GPU partitions as one process splits a rank's share (`plan._split`, the same local
   order); the homes learn every vertex's partition and local id (a directory, kept by blocks).
4. The views. For each CSR view the run walks, the homes send every rank the rows of its vertices
   (an in-view's rows are the out-rows reversed, sent to the target's home first). A rank asks the
   homes about the vertices its rows reach (partition, local id, degree), builds its LocalViews
   (`partitioners.ranks.local_views`) and tells the owners of its ghosts which of their vertices
   it holds, for their boundary tables.

The result is `partition(graph, ..., ranks=R)` restricted to the rank, array for array
(tests/mpi_driver.py checks it). Large streams go in rounds of at most ROUND_BYTES from each rank
(`shuffle`): MPI's counts stay below 2**31 and no send buffer copies a rank's edges. Every call
is collective; input errors found on one rank are raised on every rank (`agreed`), so no rank is
left waiting.

Memory per rank: about one copy of its E/R edges at a time, two (8 bytes per entry) while a
generated block's buckets are sorted. Its home block leaves in
SHIP_PIECES pieces, each piece's pages given back once sent (`release`), while the rows it
receives fill a staging array front to back (`_Layout`) before they move into place; the rows then
become the local views in place. Besides: per-vertex tables of its block and of its vertices, a
second block and its rows for an in-view (directed graphs), and, while a view is built, 5 bytes
per vertex of the whole graph (a mark, then an index). Peaks per rank against one process:
docs/results/mpi_memory_rmat22_cpu2.txt.
"""

import ctypes
import functools
import mmap
import sys
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from mpi4py import MPI

from bsp.errors import InputError, check_memory
from bsp.mpi import _mpi_type, complete
from kernels_cpu import buckets as _kb
from kernels_cpu import order as _ko
from kernels_cpu import ranks as _kr
from kernels_cpu.csr import index_dtype

from .plan import (_split, block_parts, block_weight, by_degree, check_degrees, check_options,
                   hub_product)
from .ranks import ByGvid, GraphSummary, RankPlan, boundary_tables, local_views

ROUND_BYTES = 1 << 22       # what a rank sends in one round of a shuffle, to all ranks together
GEN_EDGES = 1 << 20         # edges a rank generates per round of sending
COUNT_EDGES = 1 << 24       # edges a rank generates per round of counting (nothing is sent)
SHIP_PIECES = 8             # a home block's rows go to their owners in this many pieces
STAGES = 16                 # buckets a rank's arriving rows are staged in (`_Layout`)
PAGE = mmap.PAGESIZE
_NO_W = np.empty(0, np.float64)


# ---- moving streams between ranks -----------------------------------------------------------

def _displ(counts):
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def _complete(comm, requests):
    """Wait for a shuffle's nonblocking collectives, leaving the cores to slower ranks (blocking
    ones spin, taking cores from the ranks they wait for where ranks share cores), within a
    `Guarded` communicator's timeout."""
    waiter = getattr(comm, "waiter", None)
    if waiter is None:
        complete(requests)
    else:
        waiter.wait(requests, f"{comm.phase}: shuffle")


def shuffle(comm, counts, dtypes, pack, receive=None):
    """All-to-all of streams of items: this rank sends counts[d] items to rank d. Each item is
    one element of each dtype; `pack(d, start, outs)` fills `outs` (one array per dtype) with
    items start:start + len of the stream for d. Items travel in rounds of at most ROUND_BYTES
    per rank; `receive(s, start, arrays)` gets items start:start + len of the stream from rank s,
    in order. Without `receive`, returns the received arrays (grouped by source, in rank order);
    and the counts received. Collective."""
    size = comm.size
    counts = np.asarray(counts, dtype=np.int64)
    rcounts = np.empty(size, np.int64)
    _complete(comm, [comm.Ialltoall([counts, MPI.INT64_T], [rcounts, MPI.INT64_T])])
    dtypes = [np.dtype(t) for t in dtypes]
    types = [_mpi_type(t) for t in dtypes]
    outs = None
    if receive is None:
        outs = [np.empty(int(rcounts.sum()), t) for t in dtypes]
        at = _displ(rcounts)

        def receive(s, start, arrays):
            for out, a in zip(outs, arrays):
                out[at[s] + start:at[s] + start + a.size] = a
    step = max(1, ROUND_BYTES // (size * sum(t.itemsize for t in dtypes)))
    most = max(int(counts.max(initial=0)), int(rcounts.max(initial=0)))
    rounds = np.array([-(-most // step)], np.int64)
    _complete(comm, [comm.Iallreduce(MPI.IN_PLACE, [rounds, MPI.INT64_T], op=MPI.MAX)])
    rounds = int(rounds[0])
    for k in range(rounds):
        done = k * step
        sc, rc = np.clip(counts - done, 0, step), np.clip(rcounts - done, 0, step)
        sd, rd = _displ(sc), _displ(rc)
        sbufs = [np.empty(int(sc.sum()), t) for t in dtypes]
        rbufs = [np.empty(int(rc.sum()), t) for t in dtypes]
        for d in np.flatnonzero(sc):
            pack(d, done, [b[sd[d]:sd[d] + sc[d]] for b in sbufs])
        _complete(comm, [comm.Ialltoallv([sb, (sc, sd), t], [rb, (rc, rd), t])
                         for sb, rb, t in zip(sbufs, rbufs, types)])
        for s in np.flatnonzero(rc):
            receive(s, done, [b[rd[s]:rd[s] + rc[s]] for b in rbufs])
    return outs, rcounts


def alltoallv(comm, arrays, counts):
    """`shuffle` of aligned arrays already grouped by destination (counts[d] items for rank d,
    in rank order); returns (received arrays, counts received)."""
    at = _displ(counts)

    def pack(d, start, outs):
        for out, a in zip(outs, arrays):
            out[:] = a[at[d] + start:at[d] + start + out.size]
    return shuffle(comm, counts, [a.dtype for a in arrays], pack)


def by_rank(ranks, size, *arrays):
    """`arrays` reordered by the rank each item goes to (stably), and the counts per rank."""
    order = _ko.degree_order(ranks, False)
    return [_ko.take(a, order) for a in arrays], np.bincount(ranks, minlength=size)


def agreed(comm, fn, *args):
    """fn(*args) on every rank; an InputError on any rank is raised on every rank (the first by
    rank, naming it), so that none goes on to wait in a collective the others never reach."""
    result, failed = None, None
    try:
        result = fn(*args)
    except InputError as exc:
        failed = f"rank {comm.rank}: {exc}" if comm.size > 1 else str(exc)
    failed = next(filter(None, comm.allgather(failed)), None)
    if failed:
        raise InputError(failed)
    return result


# ---- a rank's home block ----------------------------------------------------------------------

@dataclass
class Share:
    """Rank r's home block: the out-rows of vertices bounds[r]:bounds[r + 1], a CSR whose
    targets are global ids, in the graph's row order; `in_degree` of those vertices once known
    (None: not read or counted)."""
    spec: str
    n_vertices: int
    n_edges: int
    directed: bool
    bounds: np.ndarray
    lo: int
    hi: int
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray | None
    in_degree: np.ndarray | None = None

    def summary(self, comm):
        """The GraphSummary every rank's plan carries (the mean weight over all ranks)."""
        w = None
        if self.weights is not None:
            total = comm.allreduce(float(self.weights.sum()))
            w = np.array([total / self.n_edges if self.n_edges else 1.0])
        return GraphSummary(self.n_vertices, self.n_edges, self.directed, self.spec, w)


def rank_bytes(ranks, n_vertices, n_edges, weighted, in_view=False):
    """About the most one rank holds while loading and partitioning a graph of `n_edges` edge
    entries: its home block, the rows of its vertices and their local views (with an in-view, a
    reversed block and its rows too), per-vertex tables of its block, and the 5 bytes per vertex
    of the whole graph that building a view takes."""
    item = index_dtype(n_vertices).itemsize + (8 if weighted else 0)
    return int((5 if in_view else 3) * n_edges / ranks * item + 96 * n_vertices / ranks
               + 5 * n_vertices)


def generate_share(comm, generator, undirected=False, weighted=False, in_view=False):
    """This rank's home block of a generated graph, generated by the ranks together: rank r
    generates edges r x M / R to (r + 1) x M / R of the M edges and sends each entry to the home
    of its row, where it lands in a bucket of 2**shift rows (kernels_cpu/buckets.py); the homes
    then sort and clean their buckets as one process does. The edges are generated twice: once
    in rounds of COUNT_EDGES, only to count the entries every bucket gets (the counts meet at
    the homes in one reduction), then in rounds of GEN_EDGES, sent. `generator`
    (totem_py.generators.Generator) has the graph's `spec`, `n_vertices` and `n_raw_edges`,
    `edges(first, count)` (src, dst arrays of those raw edges) and `weights(indptr, indices,
    first_row)`. Collective."""
    spec, n, total = generator.spec, generator.n_vertices, generator.n_raw_edges
    undirected = undirected or generator.symmetric
    size, r = comm.size, comm.rank
    agreed(comm, check_memory, rank_bytes(size, n, total * (2 if undirected else 1), weighted,
                                          in_view), f"its share of graph '{spec}'")
    bounds = np.array([n * k // size for k in range(size + 1)], dtype=np.int64)
    lo, hi = int(bounds[r]), int(bounds[r + 1])
    first, last = total * r // size, total * (r + 1) // size
    mirror = bool(undirected)
    bits = max(1, (n - 1).bit_length())
    shift = _kb.bucket_shift(n, total * (2 if mirror else 1))
    per_home = [_kb.n_buckets(int(bounds[h + 1] - bounds[h]), shift) for h in range(size)]
    base = np.concatenate([[0], np.cumsum(per_home)]).astype(np.int64)

    def rounds(step):
        for a in range(first, last, step):
            yield generator.edges(a, min(a + step, last) - a)

    hist = np.zeros(int(base[-1]), np.int64)    # entries per bucket, every home's buckets
    for src, dst in rounds(COUNT_EDGES):
        _kb.count_home_buckets(src, dst, mirror, bounds, base, shift, hist)
    mine = np.empty(per_home[r], np.int64)
    comm.Reduce_scatter([hist, MPI.INT64_T], [mine, MPI.INT64_T], recvcounts=per_home)
    bucket_ptr = np.concatenate([[0], np.cumsum(mine)]).astype(np.int64)
    keys = np.empty(int(bucket_ptr[-1]), np.int64)
    cursor = bucket_ptr[:-1].copy()
    staged = _Staging(keys.size // STAGES + 1, index_dtype(n))

    def place(rows, targets):
        _kb.place_entries(rows, targets, lo, shift, bits, cursor, keys)

    def receive(s, start, arrays):
        staged.add(arrays, place)

    counts = np.empty(size, np.int64)
    for src, dst in rounds(GEN_EDGES):
        entries = src.size + (int(np.count_nonzero(src != dst)) if mirror else 0)
        rows, to = np.empty(entries, src.dtype), np.empty(entries, src.dtype)
        _kr.group_edges(src, dst, bounds, mirror, counts, rows, to)
        del src, dst
        at = _displ(counts)

        def pack(d, start, outs):
            outs[0][:] = rows[at[d] + start:at[d] + start + outs[0].size]
            outs[1][:] = to[at[d] + start:at[d] + start + outs[1].size]
        shuffle(comm, counts, [rows.dtype, to.dtype], pack, receive)
    staged.flush(place)
    del staged, cursor
    whole = keys.view(index_dtype(n))       # the indices become its front
    indptr, indices = _kb.sorted_csr(
        _kb.Buckets(bucket_ptr, keys, shift, bits, lo, hi - lo, whole.dtype), in_place=True)
    del keys
    release(whole[indices.size:])           # what the duplicates and the wider keys took
    weights = generator.weights(indptr, indices, lo) if weighted else None
    m = comm.allreduce(int(indptr[-1]))
    return Share(str(spec), n, m, not undirected, bounds, lo, hi, indptr, indices, weights)


class _Staging:
    """Received entries (rows, targets) gathered into batches of `capacity`, so that they are
    placed into their buckets many at a time (`place(rows, targets)`, in parallel)."""

    def __init__(self, capacity, dtype):
        self.rows = np.empty(capacity, dtype)
        self.targets = np.empty(capacity, dtype)
        self.count = 0

    def add(self, arrays, place):
        rows, targets = arrays
        at = 0
        while at < rows.size:
            take = min(rows.size - at, self.rows.size - self.count)
            self.rows[self.count:self.count + take] = rows[at:at + take]
            self.targets[self.count:self.count + take] = targets[at:at + take]
            self.count += take
            at += take
            if self.count == self.rows.size:
                self.flush(place)

    def flush(self, place):
        if self.count:
            place(self.rows[:self.count], self.targets[:self.count])
        self.count = 0


def _balanced_bounds(offsets, n, m, size):
    """Block bounds of about equal rows + edges: bound k is the first vertex v with
    offsets[v] + v >= k (n + m) / size (a binary search on the mapped offsets)."""
    bounds = [0]
    for k in range(1, size):
        target = (n + m) * k // size
        a, b = bounds[-1], n
        while a < b:
            mid = (a + b) // 2
            if int(offsets[mid]) + mid < target:
                a = mid + 1
            else:
                b = mid
        bounds.append(a)
    return np.array(bounds + [n], dtype=np.int64)


def read_share(comm, store, undirected=False, weighted=False, in_view=False):
    """This rank's home block of a stored CSR (`store`: a totem_py.store.Store, opened on every
    rank), read by byte range; `undirected` adds the reverse of every edge of a directed graph
    (as `Graph.to_undirected`). `weighted`: the run needs weights (for the memory estimate).
    Adding the reverse edges holds a rank's block about three times over for a moment.
    Collective."""
    n, m = store.n_vertices, store.n_edges
    mirror = undirected and store.directed
    bounds = _balanced_bounds(store.offsets, n, m, comm.size)
    lo, hi = int(bounds[comm.rank]), int(bounds[comm.rank + 1])
    a, b = store.edge_range(lo, hi)

    def read():
        edges = (b - a) * comm.size * (2 if mirror else 1)      # as if every block were this one
        check_memory(rank_bytes(comm.size, n, edges, weighted or store.weighted,
                                in_view and not mirror), "its share of the graph",
                     store.path)
        indptr, ids, weights = store.rows(lo, hi)
        return indptr, ids, weights, store.in_degrees(lo, hi) if store.directed else None
    indptr, ids, weights, in_degree = agreed(comm, read)
    share = Share(store.path, n, m, store.directed, bounds, lo, hi, indptr, ids, weights,
                  in_degree)
    if mirror:
        rows = reversed_rows(comm, share)
        both = share.indptr + rows.indptr
        ids = np.empty(int(both[-1]), dtype=share.indices.dtype)
        w = np.empty(ids.size if share.weights is not None else 0)
        _kr.join_rows(share.indptr, share.indices, share.weights if share.weights is not None
                      else _NO_W, rows.indptr, rows.indices, rows.weights if rows.weights
                      is not None else _NO_W, share.weights is not None, both, ids, w)
        share = Share(share.spec, n, comm.allreduce(ids.size), False, bounds, lo, hi, both, ids,
                      w if share.weights is not None else None)
    return share


def reversed_rows(comm, share, degrees_only=False):
    """The in-rows of the block (for every vertex, the sources of its in-edges, ascending, and
    their weights: the rows of one process's `Graph.reverse()`), as a SimpleNamespace(indptr,
    indices, weights); each edge is sent to its target's home. Also sets `share.in_degree`.
    With `degrees_only`, only counts them (targets sent alone). Collective."""
    size, lo, hi = comm.size, share.lo, share.hi
    bounds, idx = share.bounds, share.indices.dtype
    counts = np.zeros(size, np.int64)
    _kr.count_in_ranges(share.indices, bounds, counts)
    has_w = share.weights is not None and not degrees_only
    w_in = share.weights if has_w else _NO_W

    def packer():
        state = np.zeros((size, 2), np.int64)

        def pack(d, start, outs):       # outs: targets [, sources [, weights]]
            u = outs[1] if len(outs) > 1 else np.empty(outs[0].size, idx)
            w = len(outs) > 2
            _kr.pack_reversed(share.indptr, share.indices, w_in, w, lo, bounds[d],
                              bounds[d + 1], state[d], outs[0], u, outs[2] if w else _NO_W)
        return pack

    if share.in_degree is None:
        degree = np.zeros(hi - lo, np.int64)

        def count(s, start, arrays):
            _kr.count_rows(arrays[0], lo, degree)
        shuffle(comm, counts, [idx], packer(), count)
        share.in_degree = degree
    if degrees_only:
        return None
    indptr = np.concatenate([[0], np.cumsum(share.in_degree)]).astype(np.int64)
    ids = np.empty(int(indptr[-1]), dtype=idx)
    weights = np.empty(ids.size if has_w else 0)
    fill = indptr[:-1].copy()
    over = []

    def place(s, start, arrays):
        bad = _kr.place_rows(arrays[0] - lo, arrays[1], arrays[2] if has_w else _NO_W, has_w,
                             fill, indptr[1:], ids, weights)
        if bad >= 0 and not over:
            over.append(int(arrays[0][bad]))
    shuffle(comm, counts, [idx, idx] + ([np.float64] if has_w else []), packer(), place)

    def check():
        short = np.flatnonzero(fill != indptr[1:])
        if over or short.size:
            v = over[0] if over else lo + int(short[0])
            raise InputError(f"'in_degrees' of vertex {v} does not count its in-edges",
                             share.spec)
    agreed(comm, check)
    return SimpleNamespace(indptr=indptr, indices=ids, weights=weights if has_w else None)


def weigh(comm, share, algorithm, where=None):
    """harness.prepare_graph on a share: unit weights for an algorithm that needs weights on an
    unweighted graph; an InputError on every rank for a negative weight where the algorithm
    declares `nonnegative_weights` (the edge's index in the whole graph's CSR, in file `where`).
    Collective."""
    if not getattr(algorithm, "needs_weights", False):
        return
    if share.weights is None:
        share.weights = np.ones(share.indices.size)
    if not getattr(algorithm, "nonnegative_weights", False):
        return
    first = comm.exscan(share.indices.size) or 0

    def non_negative():
        if share.weights.size and share.weights.min() < 0:
            bad = int(np.argmax(share.weights < 0))
            raise InputError(f"{algorithm.name} needs non-negative weights; edge {first + bad} "
                             f"weighs {share.weights[bad]}", where)
    agreed(comm, non_negative)


def giant_source(comm, bounds, gvids, labels, has_edges, seed=0):
    """harness.default_source of the whole graph from this rank's vertices (`gvids`), their
    weak-component labels (the smallest id in the component) and whether they have out-edges:
    the component with the most vertices that have out-edges (ties: the smallest label), then
    the same seeded choice among those vertices in id order (rng.choice of n items draws the
    index rng.choice(n) draws). Counts and candidates meet at the homes (`bounds`). Collective."""
    labels = labels[has_edges]
    values, counts = np.unique(labels, return_counts=True)
    (got, sizes), _ = alltoallv(comm, [values.astype(np.int64), counts.astype(np.int64)],
                                np.diff(np.searchsorted(values, bounds)))
    best = (0, 0)
    if got.size:
        at, where = np.unique(got, return_inverse=True)
        total = np.bincount(where, weights=sizes)
        k = int(np.argmax(total))              # the first of the largest: the smallest label
        best = (int(total[k]), -int(at[k]))
    size, giant = max(comm.allgather(best))
    giant = -giant
    mine = np.sort(gvids[has_edges][labels == giant]) if size else np.empty(0, np.int64)
    (got,), _ = alltoallv(comm, [mine.astype(np.int64)], np.diff(np.searchsorted(mine, bounds)))
    got.sort()
    counts = comm.allgather(got.size)
    if sum(counts) == 0:
        return 0
    i = int(np.random.default_rng(seed).choice(sum(counts)))
    before = sum(counts[:comm.rank])
    found = int(got[i - before]) if before <= i < before + got.size else -1
    return comm.allreduce(found, op=MPI.MAX)


# ---- the plan ---------------------------------------------------------------------------------

def deal(comm, degree, strategy="HIGH"):
    """The rank each vertex of this rank's block goes to: `partitioners.plan.deal_to_ranks` of
    the whole graph (out-degree order, highest first, ties by id; serpentine), from `degree`, the
    block's out-degrees, and every rank's degree histogram; under BLOCK, its consecutive ranges,
    from the weight of the blocks below. Collective."""
    size, r = comm.size, comm.rank
    if strategy == "BLOCK":
        weights = comm.allgather(block_weight(degree))
        return block_parts(degree, size, sum(weights[:r]), sum(weights))
    counts = np.bincount(degree)
    values = np.flatnonzero(counts)
    counts = counts[values]
    hists = comm.allgather((values, counts))
    every = np.unique(np.concatenate([v for v, _ in hists]))             # ascending
    table = np.zeros((size, every.size), np.int64)
    for s, (v, c) in enumerate(hists):
        table[s, np.searchsorted(every, v)] = c
    total = table.sum(axis=0)
    higher = np.cumsum(total[::-1])[::-1] - total       # vertices of a higher degree
    mine_higher = np.cumsum(table[r, ::-1])[::-1] - table[r]
    # per distinct degree: the vertices before this block's first one of that degree
    before = np.zeros(int(every[-1]) + 1 if every.size else 0, np.int64)
    before[every] = higher + table[:r, :].sum(axis=0) - mine_higher
    place = np.empty(degree.size, np.int64)
    _ko.set_positions(place, by_degree(degree))         # the block by degree, ties by id
    place += _ko.take(before, degree)
    rank = place % size
    odd = (place // size) % 2 == 1
    rank[odd] = size - 1 - rank[odd]
    return rank


def malloc_returns_memory():
    """Have glibc's malloc give large freed blocks back to the system at once (a fixed mmap
    threshold of 1 MiB): by default the threshold grows with every large block freed, and the
    buffers of loading and partitioning would then stay resident after use."""
    if sys.platform.startswith("linux"):
        _libc().mallopt(-3, 1 << 20)        # M_MMAP_THRESHOLD


def small_pages(n, dtype):
    """np.empty(n, dtype) whose memory is touched a 4 KiB page at a time (MADV_NOHUGEPAGE): NumPy
    asks Linux for 2 MiB pages for large arrays, and an array filled at many places at once
    would then be resident almost whole after a few writes."""
    a = np.empty(n, dtype)
    if a.nbytes >= 2 * PAGE and sys.platform.startswith("linux"):
        start = -(-a.ctypes.data // PAGE) * PAGE
        end = (a.ctypes.data + a.nbytes) // PAGE * PAGE
        _libc().madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), 15)
    return a


def release(a):
    """Give the memory pages wholly inside array `a` back to the system (Linux madvise
    MADV_DONTNEED; elsewhere nothing): for the parts of a large array that will not be read
    again, while the rest still is. Reading them again would give zeros."""
    if not a.nbytes or not sys.platform.startswith("linux"):
        return
    start = a.ctypes.data
    lo, hi = -(-start // PAGE) * PAGE, (start + a.nbytes) // PAGE * PAGE
    if hi > lo:
        _libc().madvise(ctypes.c_void_p(lo), ctypes.c_size_t(hi - lo), 4)   # MADV_DONTNEED


@functools.cache
def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _ship_rows(comm, rows, owner, members, bounds, places):
    """Send the block's rows (indptr, ids, weights) to the ranks that own their vertices (block
    row i to rank owner[i]) and put the rows this rank gets where `places` say: for each (dest,
    length, ids, weights), the row of member m (`members`: this rank's vertices, ascending) goes
    to ids[dest[m]:dest[m] + length[m]]. The block goes in SHIP_PIECES pieces of rows, each
    `release`d once sent, so a rank holds little more than one copy of its edges. Collective."""
    indptr, ids, weights = rows
    has_w = weights is not None
    first = np.searchsorted(members, bounds[:-1])      # rank s sends its rows ascending
    cursors = [np.column_stack([first, np.zeros_like(first)]) for _ in places]

    def receive(s, start, arrays):
        for cursor, (dest, length, out_ids, out_w) in zip(cursors, places):
            _kr.place_stream(arrays[0], arrays[1] if has_w else _NO_W, has_w, cursor[s], dest,
                             length, out_ids, out_w if has_w else _NO_W)
    cuts = np.linspace(0, indptr.size - 1, SHIP_PIECES + 1).astype(np.int64)
    for a, b in zip(cuts[:-1], cuts[1:]):
        grouped, by_dest = by_rank(owner[a:b], comm.size, np.arange(a, b, dtype=np.int32))
        ends = np.cumsum(by_dest)
        which = [grouped[0][e - k:e] for e, k in zip(ends, by_dest)]
        counts = [int((indptr[w + 1] - indptr[w]).sum()) for w in which]
        state = np.zeros((comm.size, 2), np.int64)

        def pack(d, start, outs):
            _kr.pack_rows(indptr, ids, weights if has_w else _NO_W, has_w, which[d], state[d],
                          outs[0], outs[1] if has_w else _NO_W)
        shuffle(comm, counts, [ids.dtype] + ([np.float64] if has_w else []), pack, receive)
        release(ids[indptr[a]:indptr[b]])
        if has_w:
            release(weights[indptr[a]:indptr[b]])


class _Layout:
    """The rows of this rank's vertices in one view, laid out as its LocalViews hold them:
    partition after partition, each in local order (`indptr`, `ids`, `weights`; `dest[m]`:
    where member m's row starts).

    Rows arrive in id order, which is not that order, and writing them straight into place
    would touch every page of the layout while the home block is still mostly held. So they
    first go to a staging array cut into STAGES buckets, each holding the rows of one range of
    the layout, filled front to back (`stage_at[m]`: where member m's row is staged); then
    `unstage` moves one bucket at a time into place and gives its pages back. A rank so holds
    about one copy of its rows (plus 1/STAGES) at any time."""

    def __init__(self, plan, members, length, dtype, weighted):
        self.length = length
        pos = _kr.searchsorted(members, np.concatenate([plan.gvids[p] for p in plan.local_pids]))
        self.indptr = np.zeros(pos.size + 1, np.int64)
        np.cumsum(_ko.take(length, pos), out=self.indptr[1:])
        self.dest = np.empty(members.size, np.int64)
        _ko.put(self.dest, pos, self.indptr[:-1])
        total = int(self.indptr[-1])
        bucket = np.empty(members.size, np.int16)
        _ko.put(bucket, pos, np.minimum(self.indptr[:-1] * STAGES // max(total, 1), STAGES - 1))
        del pos
        # the buckets' rows one bucket after another, each bucket's in id order (as they arrive)
        order = _ko.degree_order(bucket, False)
        ends = np.cumsum(np.bincount(bucket, minlength=STAGES))
        del bucket
        self.buckets = [order[e - k:e] for e, k in zip(ends, np.diff(ends, prepend=0))]
        sizes = _ko.take(length, order)
        staged = np.cumsum(sizes)
        self.stage_at = np.empty(members.size, np.int64)
        _ko.put(self.stage_at, order, staged - sizes)
        self.stage_ends = [int(staged[e - 1]) if e else 0 for e in ends]
        self.ids, self.stage = np.empty(total, dtype), small_pages(total, dtype)
        self.weights = np.empty(total) if weighted else None
        self.stage_w = small_pages(total, np.float64) if weighted else None

    def unstage(self):
        start = 0
        for rows, end in zip(self.buckets, self.stage_ends):
            for src, dst in ((self.stage, self.ids), (self.stage_w, self.weights)):
                if src is not None:
                    _kr.copy_rows(rows, self.stage_at, self.dest, self.length, src, dst)
                    release(src[start:end])
            start = end
        self.stage = self.stage_w = self.buckets = self.stage_at = self.dest = None


def _lookup(comm, gvids, bounds, columns):
    """The homes' `columns` (block arrays: partition, local id, degree) at `gvids` (ascending),
    as one (len(gvids), len(columns)) array of the local ids' type. Collective."""
    counts = np.diff(np.searchsorted(gvids, bounds))
    (asked,), got = alltoallv(comm, [gvids], counts)
    asked -= bounds[comm.rank]
    answers = np.column_stack([_ko.take(c, asked) for c in columns]).astype(
        columns[1].dtype).reshape(-1)
    (answers,), _ = alltoallv(comm, [answers], got * len(columns))
    return answers.reshape(-1, len(columns))


def _build(comm, plan, layout, members, mine, bounds, directory):
    """The rank's LocalViews of one view from its rows in `layout` (indptr, ids as global ids,
    weights: partition after partition, in local order; the ids become the views' own).
    mine: (pid, lvid, view degree) of the members; directory: the same for the home block.
    Collective."""
    indptr, ids, weights = layout
    n = plan.graph.n_vertices
    mark = np.zeros(n, np.uint8)
    _kr.mark_targets(ids, mark)
    _ko.set_value(mark, members, 0)
    remote = _ko.marked(mark)
    del mark
    answers = _lookup(comm, remote, bounds, directory)
    # members and remote vertices, both ascending and disjoint, merged by id
    at_m = np.arange(members.size) + _kr.searchsorted(remote, members)
    at_r = np.arange(remote.size) + _kr.searchsorted(members, remote)
    known = []          # (gvid, pid, lvid, degree), all of the local ids' type
    for m, r in zip([members] + list(mine), [remote] + list(answers.T)):
        k = np.empty(members.size + remote.size, answers.dtype)
        _ko.put(k, at_m, m)
        _ko.put(k, at_r, np.ascontiguousarray(r))
        known.append(k)
    gvid = known[0]
    del answers, at_m, at_r, remote
    where = np.empty(n, dtype=np.int32 if gvid.size <= np.iinfo(np.int32).max else np.int64)
    _ko.set_positions(where, gvid)
    _kr.rename(ids, where)
    del where
    parts = [(p, plan.gvids[p]) for p in plan.local_pids]
    views, groups = local_views(indptr, ids, weights, parts, known, plan.n_partitions, n)
    idx = gvid.dtype
    del known, gvid
    # the owners' side: which of their vertices every partition holds as ghosts
    records = [[] for _ in range(comm.size)]
    for (p, _), held in zip(parts, groups):
        for q, lvids in held:
            records[plan.rank_of[q]].append(np.concatenate([np.array([q, p, lvids.size],
                                                                     lvids.dtype), lvids]))
    flat = [np.concatenate(x) if x else np.empty(0, idx) for x in records]
    (got,), _ = alltoallv(comm, [np.concatenate(flat)], [f.size for f in flat])
    held_by = {q: {} for q in plan.local_pids}
    i = 0
    while i < got.size:
        q, p, k = (int(x) for x in got[i:i + 3])
        held_by[q][p] = got[i + 3:i + 3 + k]
        i += 3 + k
    for (q, gvids), view in zip(parts, views):
        boundary_tables(view, gvids.size, held_by[q], plan.n_partitions)
    return views


def plan_ranks(comm, share, strategy="HIGH", cpu_share=0.5, gpus=1, seed=0, hub_sort="degree",
               views=("out",)):
    """This rank's RankPlan of `partition(graph, strategy, cpu_share, gpus, seed, ranks=R,
    hub_sort=hub_sort)`, with the LocalViews of `views` (and always "out", which the run's
    statistics read). `cpu_share` may be a function of the rank's share (a stand-in graph of
    its vertices: n_vertices, out_degree, directed, indices' dtype) giving the share it needs;
    the ranks then take the largest. Consumes the share's rows. Collective."""
    size, rank = comm.size, comm.rank
    n, lo, hi = share.n_vertices, share.lo, share.hi
    directed = share.directed
    views = sorted({v if directed else "out" for v in views} | {"out"})
    in_rows = None
    if directed and {"in", "both"} & set(views):
        in_rows = reversed_rows(comm, share)
    elif directed and hub_sort == "hytgraph" and share.in_degree is None:
        reversed_rows(comm, share, degrees_only=True)
    out_degree = np.diff(share.indptr)
    # a directed graph's in-degrees are read by in-views and hytgraph's order only
    in_degree = share.in_degree if directed and share.in_degree is not None else out_degree
    agreed(comm, lambda: [check_degrees(d, range(lo, hi)) for d in (
        out_degree, in_degree, out_degree + in_degree if directed else in_degree)])
    owner = deal(comm, out_degree, str(strategy).upper()).astype(np.int32)
    sent = [np.arange(lo, hi, dtype=np.int64), out_degree] + \
        ([in_degree] if in_degree is not out_degree else [])
    got, _ = alltoallv(comm, *by_rank(owner, size, *sent))
    del sent
    members, m_out, m_in = got[0], got[1], got[-1]
    if callable(cpu_share):
        stand_in = SimpleNamespace(n_vertices=members.size, out_degree=m_out, directed=directed,
                                   indices=np.empty(0, index_dtype(n)))
        cpu_share = comm.allreduce(float(cpu_share(stand_in)), op=MPI.MAX)
    strategy = check_options(strategy, cpu_share, gpus, hub_sort)
    scores = ByGvid(members, hub_product(m_out, m_in)) if hub_sort == "hytgraph" else None
    split = _split(SimpleNamespace(out_degree=ByGvid(members, m_out)), members, strategy,
                   cpu_share, gpus, seed, hub_sort, scores)
    del scores
    kinds = comm.allgather([kind for kind, _ in split])
    plan = RankPlan(dict(graph=share.summary(comm), strategy=strategy, cpu_share=cpu_share,
                         gpus=gpus, seed=seed, hub_sort=hub_sort,
                         kinds=[k for ks in kinds for k in ks],
                         rank_of=[r for r, ks in enumerate(kinds) for _ in ks]),
                    rank, [v for _, v in split], [ByGvid(members, m_out)[v] for _, v in split])
    del split
    # the rows of the rank's vertices, laid out as its views will hold them
    length = {"out": m_out, "in": m_in, "both": m_out + m_in if directed else None}
    layouts, places = {}, {"out": [], "in": []}
    for view in views:
        lay = layouts[view] = _Layout(plan, members, length[view], share.indices.dtype,
                                      share.weights is not None)
        if view != "in":
            places["out"].append((lay.stage_at, m_out, lay.stage, lay.stage_w))
        if view != "out":
            at = lay.stage_at + m_out if view == "both" else lay.stage_at
            places["in"].append((at, m_in, lay.stage, lay.stage_w))
    _ship_rows(comm, (share.indptr, share.indices, share.weights), owner, members,
               share.bounds, places["out"])
    share.indptr = share.indices = share.weights = None
    if in_rows is not None:
        _ship_rows(comm, (in_rows.indptr, in_rows.indices, in_rows.weights), owner, members,
                   share.bounds, places["in"])
    del in_rows, places, owner
    for lay in layouts.values():
        lay.unstage()
    # every vertex's partition and local id, kept by its home (the directory)
    idx = index_dtype(n)
    pid, lvid = np.empty(members.size, np.int32), np.empty(members.size, idx)
    for p in plan.local_pids:
        at = _kr.searchsorted(members, plan.gvids[p])
        _ko.set_value(pid, at, p)
        _ko.set_positions(lvid, at)
    (g, p_home, l_home), _ = alltoallv(comm, [members, pid, lvid],
                                       np.diff(np.searchsorted(members, share.bounds)))
    dir_pid, dir_lvid = np.empty(hi - lo, np.int32), np.empty(hi - lo, idx)
    g -= lo
    _ko.put(dir_pid, g, p_home)
    _ko.put(dir_lvid, g, l_home)
    del g, p_home, l_home
    for view in views:
        directory = (dir_pid, dir_lvid, {"out": out_degree, "in": in_degree,
                                         "both": out_degree + in_degree}[view])
        lay = layouts.pop(view)
        plan.set_views(view, _build(comm, plan, (lay.indptr, lay.ids, lay.weights), members,
                                    (pid, lvid, length[view]), share.bounds, directory))
        del lay
    return plan
