"""The CPU backend of the operators (bsp/operators.py): Numba kernels with the functor compiled in.

Each operator is a template, a `prange` loop written once here, whose functor calls name the
globals `functor`, `row_fn` and `apply_fn`. `compiled` makes one kernel per functor: a copy of the
template whose globals hold the functor (compiled by Numba, inlined by LLVM) and the template's
switches (WEIGHTED, RECORD, OUTPUTS, PREFETCHING, constants Numba folds), compiled twice, in
parallel and serially (small supersteps run on the calling thread: a parallel launch costs tens of
microseconds, milliseconds when other work competes for the cores). The kernels are cached on
disk under a name that carries a hash of the functor's code and of everything it calls, so an
edited functor compiles anew.

Mappings, as the hand-written kernels had them:
* advance over a queue: blocks of equal edge counts over the concatenated edge lists of the queue's
  vertices (hubs split across blocks), the rows a few items ahead and the targets PREFETCH edges
  ahead prefetched; selected targets are appended through block-local buffers flushed with one
  atomic reservation per APPEND items.
* pull, reducing: blocks of equal edge counts over the rows, rows cut across blocks; the parts of a
  cut row are added in block order afterwards, so sums are deterministic and need no atomics.
* pull, searching: blocks of rows with equal rows + edges (row_blocks), spread over the threads
  (spread: visited rows cost nothing and cluster among the hubs); a row stops at its first hit.
* vertex maps: equal runs of vertices (or items of a list).
Races are the functors' to handle, through bsp.intrinsics (LLVM atomicrmw / cmpxchg here).
"""

import hashlib
import inspect
import types
from pathlib import Path

import numpy as np
from numba import njit, prange
from numba.core.registry import CPUDispatcher

from . import intrinsics

from .atomics import PREFETCH, prefetch
from .jit import (APPEND, BLOCKS, EDGES_PER_BLOCK, SERIAL_EDGES, append, block_edges, flush,
                  frontier_blocks, local_span, prefetch_rows, queue_edges, row_blocks, spread)

SERIAL_ITEMS = 4096     # vertex maps over fewer items run serially
SERIAL_QUEUE = 64       # advances over fewer vertices (and SERIAL_EDGES edges) run serially


def functor(*args):
    raise NotImplementedError("a template's functor: compiled by `compiled`")


row_fn = apply_fn = functor
WEIGHTED = RECORD = PREFETCHING = PREFETCHING2 = QUEUE = LOCAL = False
OUTPUTS = 0


# -- templates ----------------------------------------------------------------------------------

def advance_queue(indptr, indices, weights, n_local, queue, qlen, out0, len0, out1, len1,
                  touched, touched_len, pf, args):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    for b in prange(nblocks):
        buf0 = np.empty(APPEND, dtype=np.int64)
        buf1 = np.empty(APPEND, dtype=np.int64)
        sent = np.empty(APPEND, dtype=np.int64)
        n0 = 0
        n1 = 0
        n_sent = 0
        i, lo, hi = block_edges(offsets, nblocks, b)
        while lo < hi:
            if PREFETCHING:
                prefetch_rows(indptr, indices, queue, qlen, i, pf)
            v = queue[i]
            stop = min(hi, offsets[i + 1])
            first = indptr[v] - offsets[i]
            end = first + stop
            for e in range(first + lo, end):
                if PREFETCHING and e + PREFETCH < end:
                    prefetch(pf, indices[e + PREFETCH])
                t = indices[e]
                if WEIGHTED:
                    r = functor(v, t, weights[e], *args)
                else:
                    r = functor(v, t, 1.0, *args)
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
        flush(buf0, n0, out0, len0)
        flush(buf1, n1, out1, len1)
        flush(sent, n_sent, touched, touched_len)


def pull_reduce(indptr, indices, weights, first, end, limit, pf, args):
    start = indptr[first]
    total = indptr[end] - start
    nblocks = max(1, min(BLOCKS * 4, total // EDGES_PER_BLOCK))
    # per block, the partial sums of the rows it shares with its neighbours (at most two)
    split_v = np.full((nblocks, 2), -1, dtype=np.int64)
    split_s = np.zeros((nblocks, 2), dtype=np.float64)
    for b in prange(nblocks):
        lo = start + total * b // nblocks
        hi = start + total * (b + 1) // nblocks
        # the first row starting at lo (rows without edges there included), or the row that
        # holds edge lo: a row without edges at position x belongs to the block holding edge x
        v = np.searchsorted(indptr, lo)
        if indptr[v] > lo:
            v -= 1
        v = max(v, first)
        while lo < hi and v < end:
            stop = min(hi, indptr[v + 1])
            s = 0.0
            e0, e1 = lo, stop
            if LOCAL:       # the row's edges to local vertices only (targets below limit)
                e0, e1 = local_span(indices, indptr[v], indptr[v + 1], limit, lo, stop)
            for e in range(e0, e1):
                if PREFETCHING and e + PREFETCH < (e1 if LOCAL else hi):    # a block's rows
                    prefetch(pf, indices[e + PREFETCH])                     # are contiguous
                if WEIGHTED:
                    s += functor(v, indices[e], weights[e], *args)
                else:
                    s += functor(v, indices[e], 1.0, *args)
            if lo == stop:              # a row without edges
                apply_fn(v, 0.0, *args)
            elif lo == indptr[v] and stop == indptr[v + 1]:
                apply_fn(v, s, *args)
            else:
                k = 0 if split_v[b, 0] < 0 else 1
                split_v[b, k] = v
                split_s[b, k] = s
            lo = stop
            v += 1
        if b == nblocks - 1:            # rows without edges after the last edge
            while v < end:
                apply_fn(v, 0.0, *args)
                v += 1
    # rows cut across blocks: their parts added in block order, then applied (in a prange: an
    # inlined functor called outside one after a prange was miscompiled by Numba 0.68)
    cut_v = np.empty(2 * nblocks, dtype=np.int64)
    cut_s = np.zeros(2 * nblocks, dtype=np.float64)
    ncut = 0
    for c in range(nblocks):
        for j in range(2):
            row = split_v[c, j]
            if row >= 0:
                if ncut == 0 or cut_v[ncut - 1] != row:
                    cut_v[ncut] = row
                    ncut += 1
                cut_s[ncut - 1] += split_s[c, j]
    for i in prange(ncut):
        apply_fn(cut_v[i], cut_s[i], *args)


def pull_reduce_queue(indptr, indices, weights, queue, qlen, args):
    for i in prange(qlen):
        v = queue[i]
        s = 0.0
        for e in range(indptr[v], indptr[v + 1]):
            if WEIGHTED:
                s += functor(v, indices[e], weights[e], *args)
            else:
                s += functor(v, indices[e], 1.0, *args)
        apply_fn(v, s, *args)


def pull_search(indptr, indices, weights, first, end, out0, len0, args):
    blocks = row_blocks(indptr, end, BLOCKS, first)
    nblocks = blocks.size - 1
    stride = spread(nblocks)
    for i in prange(nblocks):
        b = i * stride % nblocks
        buf = np.empty(APPEND, dtype=np.int64)
        count = 0
        for v in range(blocks[b], blocks[b + 1]):
            if not row_fn(v, *args):
                continue
            for e in range(indptr[v], indptr[v + 1]):
                if WEIGHTED:
                    hit = functor(v, indices[e], weights[e], *args)
                else:
                    hit = functor(v, indices[e], 1.0, *args)
                if hit:
                    if OUTPUTS > 0:
                        count = append(buf, count, v, out0, len0)
                    break
        flush(buf, count, out0, len0)


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
                prefetch(pf, queue[i + PREFETCH])
                if PREFETCHING2:
                    prefetch(pf2, queue[i + PREFETCH])
            v = queue[i] if QUEUE else i
            r = functor(v, *args)
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
    vectorises where it can (a PageRank contribution pass over 1M vertices, 2 threads: 0.2 ms,
    against 1.3-1.7 ms as vertex_map's loops over blocks). `flat`: the functor's arguments are
    the kernel's own parameters (unpacked from `args`, their writes in a loop body that is
    only the functor were dropped as dead by Numba's parfor pass; read as args[i] in the loop,
    each read cost reference counting: 7.1 ms against 2.3 for CC's smallest-id pass)."""
    for i in prange(n):
        if PREFETCHING and QUEUE and i + PREFETCH < n:
            prefetch(pf, queue[i + PREFETCH])
            if PREFETCHING2:
                prefetch(pf2, queue[i + PREFETCH])
        functor(queue[i] if QUEUE else i, *args)


vertex_apply.flat = True


def vertex_values(vertices, out, args):
    for i in prange(vertices.size):
        out[i] = functor(vertices[i], *args)


def scatter(values, lvids, out0, len0, out1, len1, args):
    n = values.size
    nblocks = max(1, min(BLOCKS, n // 4096))
    for b in prange(nblocks):
        buf0 = np.empty(APPEND, dtype=np.int64)
        buf1 = np.empty(APPEND, dtype=np.int64)
        n0 = 0
        n1 = 0
        for i in range(b * n // nblocks, (b + 1) * n // nblocks):
            v = lvids[i]
            r = functor(v, values[i], *args)
            if r:
                if OUTPUTS > 1 and r == 2:
                    n1 = append(buf1, n1, v, out1, len1)
                elif OUTPUTS > 0:
                    n0 = append(buf0, n0, v, out0, len0)
        flush(buf0, n0, out0, len0)
        flush(buf1, n1, out1, len1)


def bitmap(n, out, args):
    for j in prange(out.size):
        byte = 0
        for k in range(8):
            v = (j << 3) + k
            if v < n and functor(v, *args):
                byte |= 1 << k
        out[j] = byte


# -- compilation --------------------------------------------------------------------------------

_SOURCE_KEY = hashlib.sha1(b"".join(
    (Path(__file__).parent / f).read_bytes() for f in ("operators.py", "jit.py", "atomics.py")
)).hexdigest()


def code_key(fn, seen=None):
    """A hash of `fn`'s code and of every function it calls through its globals (recursively):
    what a compiled kernel's cache entry must change with."""
    seen = set() if seen is None else seen
    fn = getattr(fn, "py_func", fn)
    fn = getattr(fn, "__wrapped__", fn)
    h = hashlib.sha1()
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return h.hexdigest()
    seen.add(id(code))

    def walk(c):
        h.update(c.co_code)
        h.update(repr(c.co_names).encode())
        for const in c.co_consts:
            if isinstance(const, types.CodeType):
                walk(const)
            else:
                h.update(repr(const).encode())
    walk(code)
    for value in [c.cell_contents for c in fn.__closure__ or ()] + list(fn.__defaults__ or ()):
        if inspect.isfunction(value) or hasattr(value, "py_func"):
            h.update(code_key(value, seen).encode())
        else:
            h.update(repr(value).encode())      # a factory's k, a default's value
    for name in code.co_names:
        value = fn.__globals__.get(name)
        if callable(value) and (inspect.isfunction(value) or hasattr(value, "py_func")):
            h.update(code_key(value, seen).encode())
        elif isinstance(value, (int, float, bool, str, np.number)):
            h.update(f"{name}={value!r}".encode())
    return h.hexdigest()


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
        glob = None
        for name in fn.__code__.co_names:
            value = fn.__globals__.get(name)
            if value is not None and id(value) in helpers:
                glob = dict(fn.__globals__) if glob is None else glob
                glob[name] = _jitted(helpers[id(value)])
        source = fn if glob is None else types.FunctionType(
            fn.__code__, glob, fn.__name__, fn.__defaults__, fn.__closure__)
        twin = _TWINS[fn] = njit(nogil=True, inline="always")(source)
    return twin


def specialized(template, glob, name, arity):
    """`template` with its `*args` spelled out as `arity` named arguments, unpacked on entry
    (or, for templates marked `flat`, taken as parameters in place of `args`; Numba inlines a
    functor only when it is called with explicit arguments; a call through a tuple costs
    reference counting per call, 10x on a bottom-up BFS step), as a new function named `name`
    whose globals are `glob`. The code keeps the template's file, so Numba's cache, keyed by
    file and name, can store it."""
    flat = getattr(template, "flat", False)     # a0, ... as parameters rather than unpacked
    names = [f"a{i}" for i in range(arity)]
    lines = inspect.getsource(template).splitlines()
    k = next(i for i, line in enumerate(lines) if line.rstrip().endswith("):"))
    head = "\n".join(lines[:k + 1]).replace(f"def {template.__name__}(", f"def {name}(", 1)
    if flat:
        head = head.replace(", args):", "".join(f", {a}" for a in names) + "):")
    body = "\n".join(lines[k + 1:]).replace("*args", ", ".join(names))
    unpack = f"    {', '.join(names)}, = args\n" if arity and not flat else ""
    source = f"{head}\n{unpack}{body}\n"
    scope = {}
    exec(compile(source, inspect.getsourcefile(template), "exec"), glob, scope)
    fn = scope[name]
    fn.__module__ = template.__module__
    return fn


def kernel_name(template, fns, switches, arity, salt=""):
    """A name per template, functors (their code, recursively) and switches."""
    names = "_".join(getattr(f, "__name__", "f") for f in fns.values())
    digest = hashlib.sha1(repr((salt, sorted(switches.items()), arity,
                                [code_key(f) for f in fns.values()])).encode())
    return f"{template.__name__}_{names}_{digest.hexdigest()[:16]}"


_COMPILED = {}


def compiled(template, fns, arity, **switches):
    """(parallel, serial) kernels of `template` with its functors `fns` (a dict: functor,
    row_fn, apply_fn) compiled in for `arity` functor arguments and its switches set;
    memoised."""
    key = (template, *fns.values(), arity, *switches.values())    # call sites keep the order
    kernels = _COMPILED.get(key)
    if kernels is None:
        name = kernel_name(template, fns, switches, arity, _SOURCE_KEY)
        glob = dict(template.__globals__)
        glob.update({k: _jitted(f) for k, f in fns.items()})
        glob.update(switches)
        kernels = _COMPILED[key] = (
            njit(parallel=True, nogil=True, cache=True)(
                specialized(template, glob, name + "_p", arity)),
            njit(nogil=True, cache=True)(specialized(template, glob, name + "_s", arity)))
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
    many = qlen >= SERIAL_QUEUE or queue_edges(indptr, queue, qlen, 0, -1) >= SERIAL_EDGES
    (par if many else ser)(indptr, indices, _dummy(np.float64) if weights is None else weights,
                           n_local, queue, qlen, *_outs(outs), touched, count,
                           _dummy(np.float64) if pf is None else pf, args)


def pull(fn, indptr, indices, weights, first, end, args, row_fn=None, apply_fn=None, out=None,
         queue=None, qlen=0, pf=None, local=-1):
    """`local` >= 0: a reducing pull over all rows walks only the edges to targets below it
    (fn gives 0 for the others)."""
    w = _dummy(np.float64) if weights is None else weights
    many = end - first >= SERIAL_ITEMS or indptr[end] - indptr[first] >= SERIAL_EDGES
    if apply_fn is not None and queue is not None:
        par, ser = compiled(pull_reduce_queue, {"functor": fn, "apply_fn": apply_fn}, len(args),
                            WEIGHTED=weights is not None)
        many = qlen >= SERIAL_QUEUE or queue_edges(indptr, queue, qlen, 0, -1) >= SERIAL_EDGES
        (par if many else ser)(indptr, indices, w, queue, qlen, args)
    elif apply_fn is not None:
        par, ser = compiled(pull_reduce, {"functor": fn, "apply_fn": apply_fn}, len(args),
                            WEIGHTED=weights is not None, PREFETCHING=pf is not None,
                            LOCAL=local >= 0)
        (par if many else ser)(indptr, indices, w, first, end, local,
                               _dummy(np.float64) if pf is None else pf, args)
    else:
        par, ser = compiled(pull_search, {"functor": fn, "row_fn": row_fn}, len(args),
                            WEIGHTED=weights is not None, OUTPUTS=int(out is not None))
        out0, len0 = out if out is not None else (_dummy(), _dummy())
        (par if many else ser)(indptr, indices, w, first, end, out0, len0, args)


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
        (par if n >= SERIAL_ITEMS else ser)(n, queue, pf, pf2, *args)
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
