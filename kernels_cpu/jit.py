"""`kernel`: compile a prange loop twice, parallel and serial, and pick per call by its size.

A parallel launch wakes a team of threads: cheap on an idle machine, slow when other work competes
for the cores, and more than a superstep with a handful of active vertices needs. Calls whose
work is below `serial_below` items run on the calling thread (prange then runs as range). The
serial copy gets its own name so Numba's on-disk cache keeps the two compilations apart.
"""

import functools
import inspect
import types

import numpy as np
from numba import njit, prange

from .atomics import PREFETCH, atomic_add, prefetch


def _renamed(fn, suffix):
    copy = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__ + suffix,
                              fn.__defaults__, fn.__closure__)
    copy.__qualname__ = fn.__qualname__ + suffix
    copy.__module__ = fn.__module__
    return copy


def kernel(size, serial_below=4096, counter=False, frontier=None, rows=None, first=None,
           end=None):
    """Decorate a kernel; `size` names the argument that measures its work: an int or an array
    whose length counts, or with `counter` a one-element array whose value counts; `serial_below`
    may be a function that returns the bound when called. `frontier` names the (indptr, queue)
    arguments of a kernel that walks the edges of a queue of `size` vertices, `rows` the indptr of
    one that walks rows 0..size-1: a few vertices then still run in parallel when their edges are
    many (hubs).

    `first` and `end` name optional arguments of a kernel that walks only rows [first, end) (a
    chunk of the rows): `rows` kernels count rows and edges of that range only, `frontier`
    kernels the edges of the queue's vertices in it. `end` < 0, or no `end`, means the `size`
    argument (`rows`) or no bound (`frontier`). Neither reads indptr outside rows [first, end].
    Omitted trailing arguments take the kernel's defaults before the call goes to Numba."""
    def wrap(fn):
        sig = inspect.signature(fn)
        names = list(sig.parameters)
        index = names.index(size)
        walk = None if frontier is None else [names.index(a) for a in frontier]
        row = None if rows is None else names.index(rows)
        lo_arg = None if first is None else names.index(first)
        hi_arg = None if end is None else names.index(end)
        parallel = njit(parallel=True, nogil=True, cache=True)(fn)
        serial = njit(nogil=True, cache=True)(_renamed(fn, "_serial"))

        @functools.wraps(fn)
        def call(*args, **kwargs):
            if kwargs or len(args) < len(names):
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                args = bound.args
            n = args[index]
            n = int(n[0]) if counter else n if isinstance(n, int) else len(n)
            lo = 0 if lo_arg is None else int(args[lo_arg])
            hi = -1 if hi_arg is None else int(args[hi_arg])
            if row is not None:
                hi = n if hi < 0 else hi
                n = hi - lo
            many = n >= (serial_below() if callable(serial_below) else serial_below) or (
                walk is not None and queue_edges(args[walk[0]], args[walk[1]], n, lo, hi)
                >= SERIAL_EDGES
            ) or (row is not None and n > 0 and args[row][hi] - args[row][lo] >= SERIAL_EDGES)
            return (parallel if many else serial)(*args)
        call.parallel, call.serial = parallel, serial
        return call
    return wrap


BLOCKS = 256
SERIAL_EDGES = 4096     # a short frontier with more edges than this runs in parallel
# edges: a graph of at most this many (Graph500 scale 18, the command line's default) is
# generated and partitioned on one thread
SMALL_GRAPH = 1 << 22


def graph_kernel(size):
    """A generator's or partitioner's kernel, compiled parallel and serial like `kernel`: graphs of
    at most SMALL_GRAPH edges (`size`: the argument whose length counts them) take the serial
    form. One thread generates and partitions such a graph nearly as fast as many, while a
    parallel form takes several times as long as the serial one to compile, which a first run
    pays."""
    return kernel(size, serial_below=lambda: SMALL_GRAPH + 1)


@njit(nogil=True, cache=True)
def queue_edges(indptr, queue, qlen, first=0, end=-1):
    """Edges of the vertices of queue[:qlen] in rows [first, end) (end < 0: no bound; called
    for short queues only)."""
    edges = 0
    for i in range(qlen):
        v = queue[i]
        if v >= first and (end < 0 or v < end):
            edges += indptr[v + 1] - indptr[v]
    return edges


@njit(nogil=True, cache=True)
def row_blocks(indptr, n, nblocks, first=0):
    """Boundaries of `nblocks` runs of rows first..n-1 with about equal rows + edges each (reads
    indptr[first..n] only).

    prange hands each thread an equal count of iterations; with hubs first (the partitioner's
    local order unless `hub_sort` is "off") equal row counts would give one thread most of the
    edges, so vertex loops over a CSR iterate over these blocks instead. They balance any order;
    which thread runs a row never changes what it computes."""
    nblocks = max(1, min(nblocks, n - first))
    bounds = np.empty(nblocks + 1, dtype=np.int64)
    base = indptr[first]
    total = indptr[n] - base + n - first
    for b in range(nblocks + 1):
        target = total * b // nblocks
        lo, hi = first, n        # first row v with (indptr[v] - base) + (v - first) >= target
        while lo < hi:
            mid = (lo + hi) // 2
            if indptr[mid] - base + mid - first < target:
                lo = mid + 1
            else:
                hi = mid
        bounds[b] = lo
    bounds[nblocks] = n
    return bounds


APPEND = 512


@njit(nogil=True, cache=True)
def flush(buf, count, queue, length):
    """Append buf[:count] to queue with one atomic reservation; returns 0 (the new count).

    Kernels that produce a queue collect their items in a block-local buffer and flush it when
    full: one atomic add per APPEND items instead of one per item, which a single counter shared
    by many threads cannot sustain (its cache line moves between the cores on every add)."""
    if count:
        base = atomic_add(length, 0, count)
        for i in range(count):
            queue[base + i] = buf[i]
    return 0


EDGES_PER_BLOCK = 2048
PARALLEL_QUEUE = 16384      # frontier_blocks sums longer queues in parallel


@njit(inline="always")
def frontier_blocks(indptr, queue, qlen):
    """Split the edges of queue[:qlen] into blocks of about equal edges, hubs cut across blocks.

    Returns (offsets, nblocks): offsets[i] is where vertex queue[i]'s edges start in the
    concatenation of the frontier's edge lists. A frontier of a few thousand vertices can hold
    the hubs and most of the edges (SSSP re-relaxes hubs); blocks of equal vertex counts would
    leave one thread with all of them.
    Inlined into the kernels: queues of PARALLEL_QUEUE items or more are summed in parallel in
    a kernel's parallel copy (two passes over runs of the queue: each run's degree sum, then the
    offsets from the run's start), shorter ones serially. Each item is a random read of indptr,
    so a long queue's serial sum waits on memory
    (docs/results/ab/frontier_degree_sum_rmat24_h100.txt).
    """
    offsets = np.empty(qlen + 1, dtype=np.int64)
    offsets[0] = 0
    if qlen < PARALLEL_QUEUE:
        for i in range(qlen):
            if i + PREFETCH < qlen:
                prefetch(indptr, queue[i + PREFETCH])
            v = queue[i]
            offsets[i + 1] = offsets[i] + indptr[v + 1] - indptr[v]
    else:
        nruns = BLOCKS
        sums = np.zeros(nruns + 1, dtype=np.int64)
        for r in prange(nruns):
            end = (r + 1) * qlen // nruns
            total = 0
            for i in range(r * qlen // nruns, end):
                if i + PREFETCH < end:
                    prefetch(indptr, queue[i + PREFETCH])
                v = queue[i]
                total += indptr[v + 1] - indptr[v]
                offsets[i + 1] = total
            sums[r + 1] = total
        for r in range(nruns):
            sums[r + 1] += sums[r]
        for r in prange(nruns):
            base = sums[r]
            for i in range(r * qlen // nruns, (r + 1) * qlen // nruns):
                offsets[i + 1] += base
    nblocks = max(1, min(BLOCKS * 4, offsets[qlen] // EDGES_PER_BLOCK))
    return offsets, nblocks


@njit(nogil=True, cache=True)
def block_edges(offsets, nblocks, b):
    """(first frontier item, first edge, end edge) of block b, edges counted in the
    concatenation of the frontier's edge lists."""
    total = offsets[offsets.size - 1]
    lo = total * b // nblocks
    hi = total * (b + 1) // nblocks
    i = np.searchsorted(offsets, lo, side="right") - 1
    return i, lo, hi


@njit(nogil=True, cache=True)
def queue_item(offsets, qlen, nblocks, b):
    """The first queue item of block b of `nblocks` blocks of about equal items + edges
    (`offsets`: frontier_blocks's edge offsets of the queue's items); qlen for b = nblocks."""
    target = (offsets[qlen] + qlen) * b // nblocks
    lo, hi = 0, qlen
    while lo < hi:          # the first item i with offsets[i] + i >= target
        mid = (lo + hi) // 2
        if offsets[mid] + mid < target:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(nogil=True, cache=True, inline="always")
def prefetch_rows(indptr, indices, queue, qlen, i, state):
    """Called by an edge loop over a queue before it walks queue[i]'s row: starts the reads of
    the rows a few items ahead, in stages, each one's address known by the time it is needed:
    queue[i + 16]'s bounds, queue[i + 8]'s state and first edges, queue[i + 4]'s first PREFETCH
    targets' state. Short rows (most of a power-law graph's) are then not one cache miss after
    another; a loop prefetches within long rows itself (`state[indices[e + PREFETCH]]`)."""
    prefetch_rows_every(indptr, indices, queue, qlen, i, 1, state)


@njit(nogil=True, cache=True, inline="always")
def prefetch_rows_every(indptr, indices, queue, qlen, i, step, state):
    """prefetch_rows for a loop that takes every `step`-th item of the queue (queue[i], then
    queue[i + step], ...)."""
    if i + 16 * step < qlen:
        prefetch(indptr, queue[i + 16 * step])
    if i + 8 * step < qlen:
        u = queue[i + 8 * step]
        prefetch(state, u)
        prefetch(indices, indptr[u])
    if i + 4 * step < qlen:
        u = queue[i + 4 * step]
        for e in range(indptr[u], min(indptr[u + 1], indptr[u] + PREFETCH)):
            prefetch(state, indices[e])


@njit(nogil=True, cache=True, inline="always")
def append(buf, count, item, queue, length):
    """Add `item` to a block-local buffer of `count` items, flushing it to `queue` when full;
    returns the new count."""
    buf[count] = item
    count += 1
    if count == APPEND:
        count = flush(buf, count, queue, length)
    return count


@njit(nogil=True, cache=True, inline="always")
def append_item(buf, count, item, queue, length, direct):
    """`append`, or with `direct` (a loop on one thread) straight into `queue`."""
    if direct:
        queue[length[0]] = item
        length[0] += 1
        return 0
    return append(buf, count, item, queue, length)
