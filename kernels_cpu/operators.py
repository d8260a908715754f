"""The CPU backend of the operators (bsp/operators.py): Numba kernels with the functor compiled in.

Each operator is a template, a `prange` loop written once here, whose functor calls name the
globals `functor`, `row_fn`, `apply_fn` and `edge_fn` and pass the functor's arguments as the
tuple `args`. `compiled` makes one kernel per functor with the shared machinery of
kernels_cpu/templates.py: a copy of the template whose globals hold the functor (compiled by
Numba, inlined where it is called) and the template's switches (WEIGHTED, RECORD, OUTPUTS,
SPAN, PREFETCHING, the row totals' REDUCTION, TOTAL type and IDENTITY: constants Numba folds),
compiled by `SpelledCompiler` (which spells `args` out into the functor's arguments), twice: in
parallel and serially (small supersteps run on the calling thread: a parallel launch costs them
more than their work, most when other work competes for the cores). The kernels are cached on
disk under a name that carries a hash of the functor's code and of everything it calls, so an
edited functor compiles anew.

Mappings:
* advance over a queue: blocks of equal edge counts over the concatenated edge lists of the queue's
  vertices (hubs split across blocks), the rows a few items ahead and the targets PREFETCH edges
  ahead prefetched; selected targets are appended through lane-local buffers flushed with one
  atomic reservation per APPEND items.
* pull, reducing over every row: blocks of equal edge counts over the rows, rows cut across
  blocks; the parts of a cut row are added in block order afterwards, so sums are deterministic
  and need no atomics.
* pull reducing over the rows of a queue: blocks of queue items with equal items + edges (a
  hub's row in one block), taken as below.
* pull over the rows row_fn selects (searching, or reducing): blocks of rows with equal rows +
  edges (row_blocks; rows passed over cost nothing and cluster among the hubs), each thread's
  in ascending order (Afforest's sampled links build shallower union-find trees in row order:
  docs/results/ab/cc_operators_2core.txt); a searching row stops at its first hit.
* In these four, one lane a thread takes the blocks one at a time, in ascending order, from a
  shared counter (an atomic add per block, as OpenMP's dynamic schedule): blocks of equal edges
  still take unequal times (their reads hit the cache or miss it), and a thread that the OS
  gives to another process for a while takes fewer blocks instead of holding the others up at
  the loop's end.
* intersect: as the pull over selected rows, each row merging its sorted entries with the
  sorted row of each entry in turn (rows of a list: one block each).
* vertex maps: equal runs of vertices (or items of a list).
A pull walks each row's edges of its span (templates.EdgeSpan, found by span_bounds) from the
row's `skip`-th edge on.
Races are the functors' to handle, through bsp.intrinsics (LLVM atomicrmw / cmpxchg here).
"""

from pathlib import Path

import numpy as np
from numba import get_num_threads, njit, prange
from numba.core.registry import CPUDispatcher

from . import intrinsics, spinning

from .atomics import PREFETCH, at, atomic_add, node_at, nonneg, prefetch
from .jit import (APPEND, BLOCKS, EDGES_PER_BLOCK, SERIAL_EDGES, append, append_item,
                  block_edges, flush, frontier_blocks, prefetch_rows, queue_edges, queue_item,
                  row_blocks)
from .templates import (SUM, EdgeSpan, SpelledCompiler, files_key, functors, kernel_name,
                        next_common, reduced, span_bounds, specialize)

# vertex maps over fewer items run serially, and so do advances and queue pulls over fewer
# vertices unless their edges reach SERIAL_EDGES (below that the load-balanced walk has one
# block of edges, EDGES_PER_BLOCK, which one lane would walk)
SERIAL_ITEMS = 4096
FUSE_EDGES = 8192       # advance's rounds: about the serial work of a round back through the host
FUSE_SPINNING = 512     # and of a parallel launch inside a kernel, where idle threads spin
ROUND_EDGES = 1 << 16   # the largest round walked so (larger: the host's load-balanced walk)


def functor(*args):
    raise NotImplementedError("a template's functor: compiled by `compiled`")


row_fn = apply_fn = edge_fn = functor
edge_span = njit(nogil=True, inline="always")(span_bounds)
reduce_into = njit(nogil=True, inline="always")(reduced)
merge_step = njit(nogil=True, inline="always")(next_common)
WEIGHTED = RECORD = PREFETCHING = PREFETCHING2 = QUEUE = REDUCE = FILTER = LANES = False
OUTPUTS = 0
SPAN = EdgeSpan.ALL
REDUCTION, TOTAL, IDENTITY = SUM.values()      # a row's total: templates.reduction


# -- templates ----------------------------------------------------------------------------------

def advance_queue(indptr, indices, weights, n_local, queue, qlen, out0, len0, out1, len1,
                  touched, touched_len, pf, threads, args):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    claimed = np.zeros(1, dtype=np.int64)
    lanes = max(1, min(threads, nblocks))
    for lane in prange(lanes):
        buf0 = np.empty(APPEND, dtype=np.int64)
        buf1 = np.empty(APPEND, dtype=np.int64)
        sent = np.empty(APPEND, dtype=np.int64)
        n0 = 0
        n1 = 0
        n_sent = 0
        b = atomic_add(claimed, 0, 1)
        while b < nblocks:
            i, lo, hi = block_edges(offsets, nblocks, b)
            while lo < hi:
                if PREFETCHING:
                    prefetch_rows(indptr, indices, queue, qlen, i, pf)
                v = node_at(queue, i)
                stop = min(hi, offsets[i + 1])
                first = indptr[v] - offsets[i]
                end = first + stop
                for e in range(first + lo, end):
                    if PREFETCHING and e + PREFETCH < end:
                        prefetch(pf, node_at(indices, e + PREFETCH))
                    t = node_at(indices, e)
                    if WEIGHTED:
                        r = functor(v, t, at(weights, e), args)
                    else:
                        r = functor(v, t, 1.0, args)
                    if r:
                        if t < n_local:
                            if OUTPUTS > 1 and r == 2:
                                n1 = append(buf1, n1, t, out1, len1)
                            elif OUTPUTS > 0:
                                n0 = append(buf0, n0, t, out0, len0)
                        elif RECORD:
                            n_sent = append(sent, n_sent, t - n_local, touched, touched_len)
                lo = stop
                i += 1
            b = atomic_add(claimed, 0, 1)
        flush(buf0, n0, out0, len0)
        flush(buf1, n1, out1, len1)
        flush(sent, n_sent, touched, touched_len)


def advance_rounds(indptr, indices, weights, n_local, queue, nxt, len0, out1, len1, touched,
                   touched_len, counter, par_edges, most_items, most_edges, most_rounds, threads,
                   args):
    """Rounds after a walk, without going back to the host: while the vertices appended to
    `nxt` (len0[0] of them) are at least one, at most most_items holding at most most_edges
    edges, and fewer than most_rounds rounds ran, counter[0] grows by one and they are walked,
    the vertices they select appended to the other array (counted by len0 again; with OUTPUTS
    2, those for which the functor gives 2 to out1). A round of at most par_edges edges runs on
    the calling thread, a larger one on `threads` lanes, each an equal run of the round's
    vertices (a parallel launch inside the kernel: a few microseconds where the idle threads
    spin). Returns the rounds walked: the arrays `queue` and `nxt` have exchanged roles when
    that count is odd."""
    rounds = 0
    walked, appended = queue, nxt
    while rounds < most_rounds:
        qlen = len0[0]
        if qlen == 0 or qlen > most_items:
            break
        edges = queue_edges(indptr, appended, qlen)
        if edges > most_edges:
            break
        walked, appended = appended, walked
        len0[0] = 0
        counter[0] += 1
        rounds += 1
        lanes = min(threads, qlen) if LANES and edges > par_edges else 1
        # one lane appends straight into the lists (where LANES is off, a loop LLVM keeps tight)
        direct = not LANES or lanes == 1
        for lane in prange(lanes):
            buf0 = np.empty(0 if direct else APPEND, dtype=np.int64)
            buf1 = np.empty(0 if direct else APPEND, dtype=np.int64)
            sent = np.empty(0 if direct else APPEND, dtype=np.int64)
            n0 = 0
            n1 = 0
            n_sent = 0
            for i in range(lane * qlen // lanes, (lane + 1) * qlen // lanes):
                v = node_at(walked, i)
                for e in range(indptr[v], indptr[v + 1]):
                    t = node_at(indices, e)
                    if WEIGHTED:
                        r = functor(v, t, at(weights, e), args)
                    else:
                        r = functor(v, t, 1.0, args)
                    if r:
                        if t < n_local:
                            if OUTPUTS > 1 and r == 2:
                                n1 = append_item(buf1, n1, t, out1, len1, direct)
                            else:
                                n0 = append_item(buf0, n0, t, appended, len0, direct)
                        elif RECORD:
                            n_sent = append_item(sent, n_sent, t - n_local, touched,
                                                 touched_len, direct)
            flush(buf0, n0, appended, len0)
            flush(buf1, n1, out1, len1)
            flush(sent, n_sent, touched, touched_len)
    return rounds


def pull_reduce(indptr, indices, weights, first, end, limit, skip, pf, threads, args):
    start = indptr[first]
    total = indptr[end] - start
    nblocks = max(1, min(BLOCKS * 4, total // EDGES_PER_BLOCK))
    # per block, the partial sums of the rows it shares with its neighbours (at most two)
    split_v = np.full((nblocks, 2), -1, dtype=np.int64)
    split_s = np.full((nblocks, 2), IDENTITY, dtype=TOTAL)
    claimed = np.zeros(1, dtype=np.int64)
    lanes = max(1, min(threads, nblocks))
    for lane in prange(lanes):
        b = atomic_add(claimed, 0, 1)
        while b < nblocks:
            lo = start + total * b // nblocks
            hi = start + total * (b + 1) // nblocks
            # the first row starting at lo (rows without edges there included), or the row that
            # holds edge lo: a row without edges at position x belongs to the block holding edge x
            v = np.searchsorted(indptr, lo)
            if indptr[v] > lo:
                v -= 1
            v = nonneg(max(v, first))
            while lo < hi and v < end:
                stop = min(hi, indptr[v + 1])
                s = TOTAL(IDENTITY)
                e0, e1 = lo, stop
                if SPAN != EdgeSpan.ALL or skip:    # the part of the row's span in the block
                    e0, e1 = edge_span(indices, indptr[v], indptr[v + 1], limit, SPAN, skip)
                    e0, e1 = max(e0, lo), min(e1, stop)
                for e in range(e0, e1):
                    if PREFETCHING and e + PREFETCH < (hi if SPAN == EdgeSpan.ALL else e1):
                        prefetch(pf, node_at(indices, e + PREFETCH))  # a block's rows: contiguous
                    if WEIGHTED:
                        x = functor(v, node_at(indices, e), at(weights, e), args)
                    else:
                        x = functor(v, node_at(indices, e), 1.0, args)
                    s = TOTAL(reduce_into(REDUCTION, s, TOTAL(x)))
                if lo == stop:              # a row without edges
                    apply_fn(v, TOTAL(IDENTITY), args)
                elif lo == indptr[v] and stop == indptr[v + 1]:
                    apply_fn(v, s, args)
                else:
                    k = 0 if split_v[b, 0] < 0 else 1
                    split_v[b, k] = v
                    split_s[b, k] = s
                lo = stop
                v += 1
            if b == nblocks - 1:            # rows without edges after the last edge
                while v < end:
                    apply_fn(v, TOTAL(IDENTITY), args)
                    v += 1
            b = atomic_add(claimed, 0, 1)
    # rows cut across blocks: their parts reduced in block order, then applied (in a prange: an
    # inlined functor called outside one after a prange was miscompiled by Numba 0.68)
    cut_v = np.empty(2 * nblocks, dtype=np.int64)
    cut_s = np.full(2 * nblocks, IDENTITY, dtype=TOTAL)
    ncut = 0
    for c in range(nblocks):
        for j in range(2):
            row = split_v[c, j]
            if row >= 0:
                if ncut == 0 or cut_v[ncut - 1] != row:
                    cut_v[ncut] = row
                    ncut += 1
                cut_s[ncut - 1] = TOTAL(reduce_into(REDUCTION, cut_s[ncut - 1], split_s[c, j]))
    for i in prange(ncut):
        apply_fn(cut_v[i], cut_s[i], args)


def pull_reduce_queue(indptr, indices, weights, queue, qlen, limit, skip, threads, args):
    offsets, _ = frontier_blocks(indptr, queue, qlen)
    nblocks = max(1, min(BLOCKS * 4, (offsets[qlen] + qlen) // EDGES_PER_BLOCK))
    claimed = np.zeros(1, dtype=np.int64)
    lanes = max(1, min(threads, nblocks))
    for lane in prange(lanes):
        b = atomic_add(claimed, 0, 1)
        while b < nblocks:
            for i in range(queue_item(offsets, qlen, nblocks, b),
                           queue_item(offsets, qlen, nblocks, b + 1)):
                v = node_at(queue, i)
                s = TOTAL(IDENTITY)
                e0, e1 = edge_span(indices, indptr[v], indptr[v + 1], limit, SPAN, skip)
                for e in range(e0, e1):
                    if WEIGHTED:
                        x = functor(v, node_at(indices, e), at(weights, e), args)
                    else:
                        x = functor(v, node_at(indices, e), 1.0, args)
                    s = TOTAL(reduce_into(REDUCTION, s, TOTAL(x)))
                apply_fn(v, s, args)
            b = atomic_add(claimed, 0, 1)


def pull_rows(indptr, indices, weights, first, end, limit, skip, out0, len0, threads, args):
    """The rows for which row_fn is true: searching (a row stops at its first hit, which lists
    it) or, with REDUCE, the row's total (REDUCTION) then apply_fn. Each of up to `threads`
    lanes takes the next block from a shared counter."""
    blocks = row_blocks(indptr, end, BLOCKS, first)
    nblocks = blocks.size - 1
    lanes = max(1, min(threads, nblocks))
    claimed = np.zeros(1, dtype=np.int64)
    for lane in prange(lanes):
        buf = np.empty(APPEND, dtype=np.int64)
        count = 0
        b = atomic_add(claimed, 0, 1)
        while b < nblocks:
            for row in range(blocks[b], blocks[b + 1]):
                v = nonneg(row)
                if not row_fn(v, args):
                    continue
                e0, e1 = edge_span(indices, indptr[v], indptr[v + 1], limit, SPAN, skip)
                s = TOTAL(IDENTITY)
                for e in range(e0, e1):
                    if WEIGHTED:
                        r = functor(v, node_at(indices, e), at(weights, e), args)
                    else:
                        r = functor(v, node_at(indices, e), 1.0, args)
                    if REDUCE:
                        s = TOTAL(reduce_into(REDUCTION, s, TOTAL(r)))
                    elif r:
                        if OUTPUTS > 0:
                            count = append(buf, count, v, out0, len0)
                        break
                if REDUCE:
                    apply_fn(v, s, args)
            b = atomic_add(claimed, 0, 1)
        flush(buf, count, out0, len0)


def intersect_rows(indptr, indices, first, end, queue, threads, args):
    """For each row u (first..end-1, or with QUEUE the rows queue[first..end-1]) and each entry v
    of its row (with FILTER, those edge_fn passes): the entries x common to rows u and v, found
    by merging the two ascending rows; the row's total of functor(u, v, x) (REDUCTION), then
    apply_fn(u, total). Blocks of rows with equal rows + edges (one row each for a list), dealt
    to the threads in turn, as pull_rows."""
    blocks = np.arange(first, end + 1) if QUEUE else row_blocks(indptr, end, BLOCKS, first)
    nblocks = blocks.size - 1
    lanes = max(1, min(threads, nblocks))
    for lane in prange(lanes):
        for b in range(lane, nblocks, lanes):
            for k in range(blocks[b], blocks[b + 1]):
                u = node_at(queue, k) if QUEUE else nonneg(k)
                a0, a1 = indptr[u], indptr[u + 1]
                s = TOTAL(IDENTITY)
                for e in range(a0, a1):
                    v = node_at(indices, e)
                    if FILTER and not edge_fn(u, v, args):
                        continue
                    i, j = merge_step(indices, a0, a1, indptr[v], indptr[v + 1])
                    while i < a1:
                        x = node_at(indices, i)
                        s = TOTAL(reduce_into(REDUCTION, s, TOTAL(functor(u, v, x, args))))
                        i, j = merge_step(indices, i + 1, a1, j + 1, indptr[v + 1])
                apply_fn(u, s, args)


def vertex_map(n, queue, out0, len0, out1, len1, pf, pf2, args):
    nblocks = max(1, min(BLOCKS, n // 4096))
    selected = 0
    for b in prange(nblocks):
        buf0 = np.empty(APPEND, dtype=np.int64)
        buf1 = np.empty(APPEND, dtype=np.int64)
        n0 = 0
        n1 = 0
        end = (b + 1) * n // nblocks
        for i in range(b * n // nblocks, end):
            if PREFETCHING and QUEUE and i + PREFETCH < end:   # a list's vertices: random reads
                prefetch(pf, node_at(queue, i + PREFETCH))
                if PREFETCHING2:
                    prefetch(pf2, node_at(queue, i + PREFETCH))
            v = node_at(queue, i) if QUEUE else nonneg(i)
            r = functor(v, args)
            if r:
                selected += 1
                if OUTPUTS > 1 and r == 2:
                    n1 = append(buf1, n1, v, out1, len1)
                elif OUTPUTS > 0:
                    n0 = append(buf0, n0, v, out0, len0)
        flush(buf0, n0, out0, len0)
        flush(buf1, n1, out1, len1)
    return selected


def vertex_apply(n, queue, pf, pf2, args):
    """vertex_map with nothing to list or count: one `prange` over the vertices, which Numba
    vectorises where it can (a simple pass, such as PageRank's contributions, runs several times
    faster so than as vertex_map's loops over blocks)."""
    for i in prange(n):
        if PREFETCHING and QUEUE and i + PREFETCH < n:
            prefetch(pf, node_at(queue, i + PREFETCH))
            if PREFETCHING2:
                prefetch(pf2, node_at(queue, i + PREFETCH))
        functor(node_at(queue, i) if QUEUE else nonneg(i), args)



def vertex_values(vertices, out, args):
    for i in prange(vertices.size):
        out[i] = functor(node_at(vertices, i), args)


def scatter(values, lvids, out0, len0, out1, len1, args):
    n = values.size
    nblocks = max(1, min(BLOCKS, n // 4096))
    for b in prange(nblocks):
        buf0 = np.empty(APPEND, dtype=np.int64)
        buf1 = np.empty(APPEND, dtype=np.int64)
        n0 = 0
        n1 = 0
        for i in range(b * n // nblocks, (b + 1) * n // nblocks):
            v = node_at(lvids, i)
            r = functor(v, values[i], args)
            if r:
                if OUTPUTS > 1 and r == 2:
                    n1 = append(buf1, n1, v, out1, len1)
                elif OUTPUTS > 0:
                    n0 = append(buf0, n0, v, out0, len0)
        flush(buf0, n0, out0, len0)
        flush(buf1, n1, out1, len1)


def bitmap(n, out, args):
    for j in prange(n >> 3):        # whole bytes: no bound test per bit
        byte = 0
        for k in range(8):
            if functor(nonneg((j << 3) + k), args):
                byte |= 1 << k
        out[j] = byte
    j = n >> 3
    if j < out.size:                  # the last bits, and zeros after them
        byte = 0
        for k in range(n & 7):
            if functor(nonneg((j << 3) + k), args):
                byte |= 1 << k
        out[j] = byte
        out[j + 1:] = 0


# -- compilation --------------------------------------------------------------------------------

_HERE = Path(__file__).parent
_SOURCE_KEY = files_key(*(_HERE / f for f in ("operators.py", "jit.py", "atomics.py",
                                              "templates.py")))
_TWINS = {}


def _jitted(fn):
    """`fn` compiled by Numba to inline where it is called, the device functions it calls
    (bsp.operators.device_function) replaced in its globals by their own such compilations (the
    GPU backend reaches them through numba-cuda overloads of their stubs; a CPU overload of the
    same function, inlined, broke numba-cuda's typing of it in the same process)."""
    if isinstance(fn, CPUDispatcher):
        return fn
    twin = _TWINS.get(fn)
    if twin is None:
        helpers = {id(stub): f for stub, f in intrinsics.device_functions()}
        glob = {name: _jitted(helpers[id(fn.__globals__[name])]) for name in fn.__code__.co_names
                if id(fn.__globals__.get(name)) in helpers}
        source = fn if not glob else specialize(fn, fn.__name__, glob)
        twin = _TWINS[fn] = njit(nogil=True, inline="always")(source)
    return twin


_COMPILED = {}


def compiled(template, fns, arity, **switches):
    """(parallel, serial) kernels of `template` with its functors `fns` (a dict: functor,
    row_fn, apply_fn) compiled in for `arity` functor arguments and its switches set;
    memoised."""
    key = (template, *fns.values(), arity, *switches.values())    # call sites keep the order
    kernels = _COMPILED.get(key)
    if kernels is None:
        name = kernel_name(template, fns, switches, arity, _SOURCE_KEY)
        bindings = dict(switches, **{k: _jitted(f) for k, f in fns.items()})
        kernels = _COMPILED[key] = tuple(
            njit(parallel=parallel, nogil=True, cache=True, pipeline_class=SpelledCompiler)(
                specialize(template, name + suffix, bindings))
            for parallel, suffix in ((True, "_p"), (False, "_s")))
    return kernels


_DUMMY = {}


def _dummy(dtype=np.int64):
    """A one-element array standing in for an absent output (never written)."""
    arr = _DUMMY.get(dtype)
    if arr is None:
        arr = _DUMMY[dtype] = np.zeros(1, dtype=dtype)
    return arr


def _outs(outs):
    """(out0, len0, out1, len1) from up to two (items, counter) pairs."""
    flat = [a for pair in outs for a in pair]
    while len(flat) < 4:
        flat.append(_dummy())
    return flat


# -- what bsp/operators.py calls ----------------------------------------------------------------

def advance(fn, indptr, indices, weights, n_local, queue, qlen, outs, outbox, pf, args,
            consume=None):
    if consume is not None:     # before the launch: nothing in it appends to the consumed list
        consume[0] = 0
    par, ser = compiled(advance_queue, {"functor": fn}, len(args), WEIGHTED=weights is not None,
                        RECORD=outbox is not None, OUTPUTS=len(outs),
                        PREFETCHING=pf is not None)
    touched, count = (outbox.touched, outbox.count) if outbox is not None else (_dummy(), _dummy())
    many = qlen >= SERIAL_ITEMS or queue_edges(indptr, queue, qlen, 0, -1) >= SERIAL_EDGES
    (par if many else ser)(indptr, indices, _dummy(np.float64) if weights is None else weights,
                           n_local, queue, qlen, *_outs(outs), touched, count,
                           _dummy(np.float64) if pf is None else pf, get_num_threads(), args)


def advance_more(fn, indptr, indices, weights, n_local, queue, outs, outbox, args, counter,
                 most_rounds):
    """advance_rounds while a round is worth no launch from the host. Where idle threads sleep
    (OMP_WAIT_POLICY passive: a parallel launch costs tens of microseconds to wake them), the
    rounds run on the calling thread while they hold at most FUSE_EDGES * T / (T - 1) edges on
    T threads (a round back through the host costs about FUSE_EDGES edges' serial work, and T
    threads would save 1 - 1/T of the round's; one thread: no bound). Where they spin, a launch
    costs about FUSE_SPINNING edges' work: rounds of more run in parallel inside the kernel, up
    to ROUND_EDGES edges. `outs`: the next queue's (array, counter) pair, and a second
    list's."""
    threads = get_num_threads()
    spin = threads > 1 and spinning()
    par, ser = compiled(advance_rounds, {"functor": fn}, len(args), WEIGHTED=weights is not None,
                        RECORD=outbox is not None, OUTPUTS=len(outs), LANES=spin)
    if spin:
        kernel, par_edges = par, FUSE_SPINNING * threads // (threads - 1)
        most_edges = max(par_edges, ROUND_EDGES)
    else:
        kernel, par_edges = ser, 1 << 62
        most_edges = FUSE_EDGES * threads // (threads - 1) if threads > 1 else 1 << 62
    touched, count = (outbox.touched, outbox.count) if outbox is not None else (_dummy(), _dummy())
    nxt, len0, out1, len1 = _outs(outs)
    return kernel(indptr, indices, _dummy(np.float64) if weights is None else weights, n_local,
                  queue, nxt, len0, out1, len1, touched, count,
                  np.zeros(1, np.int64) if counter is None else counter, par_edges, most_edges,
                  most_edges, most_rounds, threads, args)


def pull(fn, indptr, indices, weights, first, end, args, row_fn=None, apply_fn=None, out=None,
         queue=None, qlen=0, pf=None, span=EdgeSpan.ALL, limit=0, skip=0, total=SUM):
    """`span` of each row's edges (targets below `limit` are local) from its `skip`-th on;
    `total`: the switches of a reducing form's row totals (templates.reduction)."""
    w = _dummy(np.float64) if weights is None else weights
    many = end - first >= SERIAL_ITEMS or indptr[end] - indptr[first] >= SERIAL_EDGES
    if apply_fn is not None and queue is not None:
        par, ser = compiled(pull_reduce_queue, {"functor": fn, "apply_fn": apply_fn}, len(args),
                            WEIGHTED=weights is not None, SPAN=span, **total)
        many = qlen >= SERIAL_ITEMS or queue_edges(indptr, queue, qlen, 0, -1) >= SERIAL_EDGES
        (par if many else ser)(indptr, indices, w, queue, qlen, limit, skip, get_num_threads(),
                               args)
    elif row_fn is None:
        par, ser = compiled(pull_reduce, {"functor": fn, "apply_fn": apply_fn}, len(args),
                            WEIGHTED=weights is not None, PREFETCHING=pf is not None, SPAN=span,
                            **total)
        (par if many else ser)(indptr, indices, w, first, end, limit, skip,
                               _dummy(np.float64) if pf is None else pf, get_num_threads(), args)
    else:
        fns = functors(functor=fn, row_fn=row_fn, apply_fn=apply_fn)
        par, ser = compiled(pull_rows, fns, len(args), WEIGHTED=weights is not None,
                            OUTPUTS=int(out is not None), REDUCE=apply_fn is not None, SPAN=span,
                            **total)
        out0, len0 = out if out is not None else (_dummy(), _dummy())
        (par if many else ser)(indptr, indices, w, first, end, limit, skip, out0, len0,
                               get_num_threads(), args)


def intersect(fn, indptr, indices, first, end, args, apply_fn, edge_fn=None, queue=None,
              total=SUM):
    """Rows first..end-1 (or queue[first..end-1]) of the ascending rows (indptr, indices)."""
    fns = functors(functor=fn, apply_fn=apply_fn, edge_fn=edge_fn)
    par, ser = compiled(intersect_rows, fns, len(args), QUEUE=queue is not None,
                        FILTER=edge_fn is not None, **total)
    rows = end - first if queue is not None else indptr[end] - indptr[first] + end - first
    (par if rows >= SERIAL_ITEMS else ser)(indptr, indices, first, end,
                                           _dummy() if queue is None else queue,
                                           get_num_threads(), args)


def map_vertices(fn, n, queue, outs, args, count=False, consume=None, pf=None):
    """fn(v) for v in 0..n-1, or for the items queue[:n]; returns how many returned true;
    `consume` (a list counter) is set to 0 afterwards; `pf`, an array or a pair of arrays, is
    prefetched at upcoming items."""
    pf, pf2 = pf if isinstance(pf, tuple) else (pf, None)
    switches = dict(QUEUE=queue is not None, PREFETCHING=pf is not None,
                    PREFETCHING2=pf2 is not None)
    queue = _dummy() if queue is None else queue
    pf, pf2 = (_dummy(np.float64) if a is None else a for a in (pf, pf2))
    if not outs and not count:
        par, ser = compiled(vertex_apply, {"functor": fn}, len(args), **switches)
        (par if n >= SERIAL_ITEMS else ser)(n, queue, pf, pf2, args)
        selected = 0
    else:
        par, ser = compiled(vertex_map, {"functor": fn}, len(args), OUTPUTS=len(outs),
                            **switches)
        selected = int((par if n >= SERIAL_ITEMS else ser)(n, queue, *_outs(outs), pf, pf2,
                                                            args))
    if consume is not None:     # after the launch, which read the list's items only
        consume[0] = 0
    return selected


def map_values(fn, vertices, out, args):
    par, ser = compiled(vertex_values, {"functor": fn}, len(args))
    (par if vertices.size >= SERIAL_ITEMS else ser)(vertices, out, args)


def map_inbox(fn, values, lvids, outs, args):
    par, ser = compiled(scatter, {"functor": fn}, len(args), OUTPUTS=len(outs))
    (par if values.size >= SERIAL_ITEMS else ser)(values, lvids, *_outs(outs), args)


def map_bits(fn, n, out, args):
    par, ser = compiled(bitmap, {"functor": fn}, len(args))
    (par if n >= SERIAL_ITEMS else ser)(n, out, args)
