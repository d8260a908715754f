"""Operators: how an algorithm walks its partition, the work per edge or vertex given as functors.

As Ligra's edgeMap / vertexMap and Gunrock's advance / filter: an algorithm's callbacks call these
with small plain Python functions, and the operators compile them into their loops, with Numba for
CPU partitions (kernels_cpu/operators.py) and numba-cuda for GPU partitions
(kernels_gpu/operators.py). Everything that is not the algorithm stays here and in the backends:
load balancing, serial launches for small supersteps, frontier queues and their swap, ghost
recording, streamed edges (the view's segments) and device placement.

    advance(part, view, frontier, edge_fn, *args)   for each frontier vertex s, each out-edge
                                                    (s, t, w): edge_fn(s, t, w, *args)
    pull(part, view, edge_fn, *args, apply=...)     for each row v, its edges (v, u, w): the total
                                                    of edge_fn(v, u, w, *args) (a sum, min or max
                                                    into a dtype), then apply(v, total, *args)
    pull(part, view, edge_fn, *args, row_fn=..., out=...)  the rows row_fn selects, with early
                                                    exit: a row stops at the first edge for
                                                    which edge_fn is true
    pull(..., span=EdgeSpan.GHOST, skip=k)          any form over the row's edges to ghost slots
                                                    (LOCAL: to local vertices), from its k-th
    intersect(part, view, common_fn, *args, apply=...)  for each row u, each neighbour v: the
                                                    total of common_fn(u, v, x, *args) over the
                                                    common neighbours x of u and v, ghosts' rows
                                                    included; then apply(u, total, *args)
    vertex_map(part, vertex_fn, *args)              vertex_fn(v, *args) for every local vertex
                                                    (or a list's); filters, counts
    vertex_values(part, vertex_fn, *args, at=lvids) out[i] = vertex_fn(lvids[i], *args)
    receive(part, inbox, fn, *args)                 fn(v, message, *args) per inbox entry
    bitmap(part, vertex_fn, *args, out=bits)        bits of the local vertices where it is true

Functors: `s`, `t`, `v`, `u` are local vertex ids; an edge's target t >= part.n_local is a ghost
slot (the box in a Mode's state array tail). `w` is the edge's weight (1.0 without weights).
`args` are arrays on the partition's device and scalars (ints, floats, bools), passed through
unchanged. A functor returns a truth value, or for operators that fill lists a list number
(1: the first list, 2: the second, 0: none). Atomics and bit tests come from bsp.intrinsics;
helpers a functor calls are decorated with `device_function`. A functor Numba or numba-cuda
cannot compile (a misspelt name, a NumPy call a GPU has not) is an InputError naming its file
and line and what Numba said (`functor_errors`).
"""

import dis
import functools
import importlib
import inspect
import re

import numpy as np
from numba.core.errors import NumbaError

from kernels_cpu import intrinsics
from kernels_cpu.templates import EdgeSpan, reduction

from .errors import InputError
from .paths import ROUNDS

_BACKENDS = {}
ASYNC_PIECES = 8        # advance with a source functor: zero-copy rows in this many pieces


def backend(part):
    """The operator backend module of the partition's device."""
    name = part.operator_package
    module = _BACKENDS.get(name)
    if module is None:
        module = _BACKENDS[name] = importlib.import_module(f"{name}.operators")
    return module


def functor_errors(*names):
    """Decorate an operator whose arguments `names` are functors: a Numba error while it runs
    (compiling them) becomes an InputError on one line, at the line Numba points to where it is
    one of theirs, else at the first line of the functor the message names (else the first)."""
    def wrap(operator):
        sig = inspect.signature(operator)

        @functools.wraps(operator)
        def call(*args, **kwargs):
            try:
                return operator(*args, **kwargs)
            except NumbaError as exc:
                given = sig.bind(*args, **kwargs).arguments
                functors = [given[n] for n in names if callable(given.get(n))]
                raise _functor_error(exc, functors) from None
        return call
    return wrap


_NOISE = ("Failed in ", "During: ", "File ", "No implementation of function", ">>>", "There are ",
          "- Of which", "Overload in function", "With argument", "Rejected as", "raised from",
          "^", "This error ", "See ", "The ")


def _functor_error(exc, functors):
    """The InputError of a Numba error `exc` raised compiling `functors`: at the line Numba
    names (its location, else the statement it was lowering) where it is in one of them, else
    at the line of the functor (the one the message names, else the first) that uses what
    failed, else at its first line."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(exc).splitlines()]
    lines = [re.sub(r"^(\w*TypingError|NumbaRuntimeError): ", "", line) for line in lines if line]
    codes = {fn.__name__: (fn, fn.__code__) for fn in functors if hasattr(fn, "__code__")}
    calls = [line[4:] for line in lines if line.startswith(">>> ")]
    named = used = None
    for call, inner in zip(calls, calls[1:]):
        if call.split("(")[0] in codes and inner.split("(")[0] not in codes:
            named, used = call.split("(")[0], inner.split("(")[0]
            essence = f"it calls {inner}, which Numba cannot compile where it runs"
            break
    else:
        essence = next((line for line in lines if not line.startswith(_NOISE)),
                       type(exc).__name__)
        named = next((c.split("(")[0] for c in calls if c.split("(")[0] in codes), None)
    if essence.startswith("NRT required"):      # numba-cuda lowering a list or an array
        essence = "it allocates memory (a list, an array), which a GPU kernel cannot"
    if not codes:
        return InputError(f"a functor does not compile: {essence}")
    loc = getattr(exc, "loc", None)
    path, line = getattr(loc, "filename", None), getattr(loc, "line", None)
    lowering = re.search(r"During: lowering .* at (.+) \((\d+)\)$", "\n".join(lines), re.M)
    if line is None and lowering:
        path, line = lowering[1], int(lowering[2])
    inside = [fc for fc in codes.values() if fc[1].co_filename == path and line is not None
              and fc[1].co_firstlineno <= line]
    if inside:
        fn, code = max(inside, key=lambda fc: fc[1].co_firstlineno)
    else:
        fn, code = codes.get(named) or next(iter(codes.values()))
        path, line = code.co_filename, code.co_firstlineno
        for ins in dis.get_instructions(code):
            word = ins.argval if isinstance(ins.argval, str) else None
            if word and (word == used or re.search(rf"'{re.escape(word)}'", essence)) \
                    and ins.positions.lineno is not None:
                line = ins.positions.lineno
                break
    return InputError(f"functor {fn.__name__} (line {code.co_firstlineno}) does not compile: "
                      f"{essence}", path, line)


def device_function(fn):
    """Make `fn` callable from functors on every device (compiled inline where it is called;
    a plain Python call where code runs as Python)."""
    stub = intrinsics.stub(fn)
    intrinsics.register_function(stub, fn)
    return stub


# -- lists and frontiers ------------------------------------------------------------------------

def put(part, arr, i, value):
    """arr[i] = value (i an index or a slice); on a device one launch (or memset), no copy
    from the host."""
    if part.xp is np:
        arr[i] = value
    elif not isinstance(i, slice):
        part.kernels("boxes").box_put(arr, i, value)
    else:
        part.kernels("boxes").box_fill(arr if i == slice(None) else arr[i], value)


class Frontier:
    """A queue of local vertex ids on the partition's device (`items[:length]`, length known on
    the host) and the next one, filled by the operators through an atomic counter; `swap` makes
    the next one current. Pass it as an operator's `out` to append to its next queue."""

    def __init__(self, part):
        self.part = part
        self.items = part.empty(part.n_local, np.int64)
        self.next = part.empty(part.n_local, np.int64)
        self.next_len = part.full(1, 0, np.int64)
        self.work = part.full(2, 0, np.int64)      # frontier_count's, zero between calls
        self.length = 0

    def start(self, lvid):
        """The frontier holds `lvid` alone (None: nothing)."""
        if lvid is None:
            self.length = 0
            return
        put(self.part, self.items, 0, lvid)
        self.length = 1

    def swap(self, count_edges=True):
        """Make the next queue current and empty the next one; returns the new queue's edges
        (the sum of its out-degrees), counted with its length in one kernel. With
        `count_edges` False the edges may be left uncounted (0), where counting is a pass of
        its own over the queue (host memory)."""
        part = self.part
        if not count_edges and part.xp is np:
            self.length = int(self.next_len[0])
            self.next_len[0] = 0
            self.items, self.next = self.next, self.items
            return 0
        (counts,), (out,) = part.mapped_all((2, np.int64), reuse="queue counts")
        part.kernels("frontier").frontier_count(part.out_degree, self.next, self.next_len,
                                                self.work, out)
        self.items, self.next = self.next, self.items
        part.synchronize()
        self.length, edges = int(counts[0]), int(counts[1])
        return edges

    @property
    def list(self):
        """The next queue as an output list (items, counter)."""
        return self.next, self.next_len


def _lists(out):
    """An operator's `out` as a tuple of (items, counter) lists."""
    if out is None:
        return ()
    if isinstance(out, Frontier):
        return (out.list,)
    if len(out) == 2 and not isinstance(out[0], (tuple, list, Frontier)):
        return (tuple(out),)
    return tuple(o.list if isinstance(o, Frontier) else tuple(o) for o in out)


def _view(part, view):
    return part.views[view] if isinstance(view, str) else view


def _prefetched(prefetch, args):
    """The array whose entries at upcoming targets the CPU backend prefetches: `prefetch`, or
    by default the functor's first array argument."""
    if prefetch is not None or not args:
        return None if prefetch is False else prefetch
    first = args[0]
    return first if hasattr(first, "shape") and getattr(first, "ndim", 0) == 1 else None


# -- operators ----------------------------------------------------------------------------------

@functor_errors("edge_fn", "source")
def advance(part, view, frontier, edge_fn, *args, length=None, out=None, outbox=None,
            consume=None, prefetch=None, source=None, source_args=(), rounds=None):
    """For each vertex s of `frontier` (a Frontier: its current queue; or an array of local ids,
    `length` of them) and each out-edge (s, t, w) of `view` ("out", "in", "both" or a view):
    r = edge_fn(s, t, w, *args). Where r is true, a local t is appended to the list `out`
    (default: the frontier's next queue; a second list takes targets for which r == 2) and a
    ghost slot t is recorded in `outbox` (the push mode's Outbox: its first write of the step,
    which edge_fn must signal by returning true once per slot and step).
    `consume`: the counter of the list `frontier` came from, emptied by the same launch (a list
    taken as the step's queue; nothing may append to it meanwhile). `prefetch`: the array the CPU
    backend prefetches at upcoming targets (default: the first array among args; False: none).
    `source`: a vertex functor, source(s, *source_args) for each frontier vertex s before its
    edges are walked. Streamed edges walk the queue in segments (one per transfer engine, and
    zero-copy rows in up to ASYNC_PIECES pieces), each segment's sources taken right before its
    edges: what earlier segments of the superstep wrote reaches them (HyTGraph's asynchronous
    rounds: PageRank-Delta takes the residuals pushed so far).
    `rounds` (an async path's local rounds in one launch, as SEP-Graph runs them): True, a
    one-element int64 array on the partition's device that functors may read, or (either,
    most). The vertices the walk appends to the first list (`out`'s, or the frontier's next
    queue) are then walked too, and those they select, round after round in the same launch,
    while a round is small (the backend's bound: a few thousand edges on a CPU thread, one
    block of threads on a GPU), within the superstep's ROUNDS and `most`; each round appends to
    the array the round before walked (the first list's counter counting it), and to the second
    list. An array's rounds[0] grows by one before each of these rounds. Returns how many ran
    (0 without `rounds`, with a source, or where the edges stream), which `part.rounds` counts
    too. When odd, the queue's array and the first list's have exchanged roles: a Frontier's
    are swapped back here (its next queue then holds what the last round appended); a caller
    that passed arrays swaps its own."""
    v = _view(part, view)
    if isinstance(frontier, Frontier):
        queue, qlen = frontier.items, frontier.length
        out = frontier if out is None else out
    else:
        queue, qlen = frontier, frontier.size if length is None else length
    if qlen == 0:
        if consume is not None:
            put(part, consume, 0, 0)
        return 0
    ops, lists, pf = backend(part), _lists(out), _prefetched(prefetch, args)
    pieces = 1 if source is None else ASYNC_PIECES
    for indptr, indices, weights, seg, n in v.queue_segments(queue, qlen, pieces):
        if source is not None:
            ops.map_vertices(source, n, seg, (), source_args, False, None, None)
        ops.advance(edge_fn, indptr, indices, weights, v.n_local, seg, n, lists, outbox, pf,
                    args, consume)
    if rounds is None or source is not None or getattr(v, "stream", None) is not None \
            or not lists or isinstance(out, Frontier) and out is not frontier:
        return 0
    counter, most = rounds if isinstance(rounds, tuple) else (rounds, ROUNDS)
    counter = None if counter is True else counter
    most = min(most, ROUNDS - 1 - part.rounds)     # this walk is a round of the superstep's too
    if most <= 0:
        return 0
    # the edges are resident: one segment, the whole arrays
    more = ops.advance_more(edge_fn, indptr, indices, weights, v.n_local, queue, lists, outbox,
                            args, counter, most)
    if more % 2 and isinstance(frontier, Frontier) and out is frontier:
        frontier.items, frontier.next = frontier.next, frontier.items
    part.rounds += more
    return more


@functor_errors("edge_fn", "apply", "row_fn")
def pull(part, view, edge_fn, *args, apply=None, rows=None, length=None, row_fn=None, out=None,
         reads=None, prefetch=None, span=EdgeSpan.ALL, skip=0, reduce="sum", dtype=np.float64):
    """Walk the edges (v, u, w) of rows v of `view` (for the "in" view: v's in-edges).
    With `apply`: s = the total over the row of edge_fn(v, u, w, *args), then
    apply(v, s, *args), for every row, the rows of the list `rows` (`length` of them), or the
    rows for which row_fn(v, *args) is true. The total is the `reduce` ("sum", "min" or "max")
    of the values, each cast to `dtype` (float64, float32, int64 or int32), as `dtype`; a row
    without edges (in its span) gets the reduction's identity: 0, the type's largest value
    (+inf for floats) for min, its smallest (-inf) for max.
    Without: the rows for which row_fn(v, *args) is true walk their edges until edge_fn is true
    for one; such rows are appended to `out` (a Frontier's next queue or a list).
    `span` (an EdgeSpan) says which of a row's edges are walked: ALL, LOCAL (to local vertices)
    or GHOST (to ghost slots), each a prefix or a suffix of the row; `skip`, how many of the
    row's first edges are not (GAP's neighbourhood start offset: Afforest samples a row's
    k-th edge with skip=k and an edge_fn true at once). row_fn is a predicate: it may run
    more than once per row. `reads` tells streamed edges which rows are read (see
    DeviceView.row_segments)."""
    v, ops = _view(part, view), backend(part)
    total = reduction(reduce, dtype)
    span = EdgeSpan(span)
    if span == EdgeSpan.LOCAL and not v.n_ghosts:
        span = EdgeSpan.ALL
    if rows is not None:
        if apply is None or row_fn is not None:
            raise ValueError("pull over a list of rows needs apply, and takes no row_fn")
        qlen = rows.size if length is None else length
        for indptr, indices, weights, seg, n in (v.queue_segments(rows, qlen) if qlen else ()):
            ops.pull(edge_fn, indptr, indices, weights, 0, v.n_local, args, apply_fn=apply,
                     queue=seg, qlen=n, span=span, limit=v.n_local, skip=skip, total=total)
        return
    if apply is None and row_fn is None:
        raise ValueError("pull without apply needs row_fn, the rows that search")
    lists = _lists(out)
    pf = _prefetched(prefetch, args) if apply is not None and row_fn is None else None
    # a searching row without edges finds nothing: the empty rows at the end are left out
    cap = v.n_local if apply is not None else v.rows_end
    for indptr, indices, weights, first, end in v.row_segments(reads, warps=apply is not None):
        end = min(end, cap)
        if end > first:
            ops.pull(edge_fn, indptr, indices, weights, first, end, args, row_fn=row_fn,
                     apply_fn=apply, out=lists[0] if lists else None, pf=pf, span=span,
                     limit=v.n_local, skip=skip, total=total)


@functor_errors("common_fn", "apply", "edge_fn")
def intersect(part, view, common_fn, *args, apply, edge_fn=None, rows=None, length=None,
              reduce="sum", dtype=np.float64):
    """Neighbour-list intersection (Ligra's and Gunrock's, for triangles and similarity): for
    each local vertex u (or each of the list `rows`, `length` of them), each distinct
    neighbour v of u in `view` for which edge_fn(u, v, *args) is true (default: every one),
    and each common neighbour x of u and v (x in both rows, once): r = common_fn(u, v, x,
    *args); then apply(u, total, *args), the total of u's r as pull's (`reduce`, `dtype`).
    u, v and x are the partition's node ids: local ids, and n_local + slot for ghosts; a
    ghost's neighbours that are neither local nor ghosts here cannot be common ones and are
    left out. Self-loops count as neighbours (a functor skips x == u or v == u to leave
    them out).
    The rows come from `part.sorted_rows(view)`: every local vertex's row and every ghost
    slot's, each ascending and without repeats, built once by the plan (a ghost's row read
    from the graph) and kept on the device while the engine runs the algorithm; a view
    object passed instead carries them as its `sorted_rows` (indptr, indices) and
    `n_local`."""
    if isinstance(view, str):
        indptr, indices = part.sorted_rows(view)
        n_local = part.n_local
    else:
        (indptr, indices), n_local = view.sorted_rows, view.n_local
    total = reduction(reduce, dtype)
    if rows is None:
        first, end, queue = 0, n_local, None
    else:
        first, end, queue = 0, rows.size if length is None else length, rows
    if end > first:
        backend(part).intersect(common_fn, indptr, indices, first, end, args, apply,
                                edge_fn=edge_fn, queue=queue, total=total)


@functor_errors("vertex_fn")
def vertex_map(part, vertex_fn, *args, vertices=None, length=None, n=None, out=None,
               count=False, consume=None, prefetch=None):
    """vertex_fn(v, *args) for every local vertex v < n (default part.n_local), or for the items
    of `vertices` (`length` of them). Where it returns true, v is appended to `out` (a second
    list takes those returning 2). With `count`, returns how many returned true (on a GPU this
    waits for the result), else None. `consume`: the counter of the list `vertices` came from,
    emptied by the same launch (a list taken as the step's queue). `prefetch`: as advance's, for
    the items of `vertices`, or a pair of arrays (both prefetched)."""
    if vertices is not None:
        n = vertices.size if length is None else length
    elif n is None:
        n = part.n_local
    if n == 0:
        if consume is not None:
            put(part, consume, 0, 0)
        return 0 if count else None
    pf = _prefetched(prefetch, args) if vertices is not None else None
    selected = backend(part).map_vertices(vertex_fn, n, vertices, _lists(out), args, count,
                                          consume, pf)
    return selected if count else None


@functor_errors("vertex_fn")
def vertex_values(part, vertex_fn, *args, at, out=None, dtype=None):
    """out[i] = vertex_fn(at[i], *args) for the local ids `at`; returns `out`. Without one, an
    array of `dtype` the partition keeps for `vertex_fn` (`Partition.held`): each call's
    values hold until the next call of the same functor (a gather's, until the next
    superstep's), so a run of many supersteps takes no more memory than one."""
    if out is None:
        out = part.held(("vertex_values", vertex_fn), at.size, np.dtype(dtype))
    if at.size:
        backend(part).map_values(vertex_fn, at, out, args)
    return out


@functor_errors("fn")
def receive(part, inbox, fn, *args, out=None):
    """fn(v, message, *args) for each entry of an Inbox (local id v, combined message); where it
    returns true, v is appended to `out` (a second list takes those returning 2)."""
    if inbox.values.size:
        backend(part).map_inbox(fn, inbox.values, inbox.lvid, _lists(out), args)


@functor_errors("vertex_fn")
def bitmap(part, vertex_fn, *args, out, n=None):
    """Bit v of `out` (uint8, bit v & 7 of byte v >> 3: bsp.intrinsics.test_bit's layout) =
    vertex_fn(v, *args), for local vertices v < n (default part.n_local); returns `out`."""
    n = part.n_local if n is None else n
    backend(part).map_bits(vertex_fn, n, out, args)
    return out


def bitmap_bytes(n):
    """Bytes of a bitmap of n bits."""
    return (n + 7) >> 3
