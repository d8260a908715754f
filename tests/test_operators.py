"""The operators (bsp/operators.py) against NumPy statements of what they do, on every backend of
the `backend` fixture (conftest.py): the CPU's, tests/ptxcheck (compiled by the GPU backend for
sm_90, computed by the CPU's) and, where CuPy sees a device, the GPU's. Then the intrinsics the
functors call (bsp/intrinsics.py): the values they leave and the old values they return, one
operation per element and many racing on a few; helpers made with `device_function`; and the
compiled kernels' cache key, which follows the functor's code.

Functors here count their own calls (atomic_add on a `calls` or `hits` array), so a call made
twice or skipped shows, not only a wrong value."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bsp import (EdgeSpan, Frontier, Message, Mode, Program, Vote, advance, atomic_add,
                 atomic_cas, atomic_max, atomic_min, atomic_or, bitmap, bitmap_bytes,
                 device_function, intersect, pull, receive, vertex_map, vertex_values)
from kernels_cpu.intrinsics import test_bit as read_bit
from kernels_cpu.templates import code_key
from tests.support.csr import random_csr as graph
from totem_py.backend import cuda_device_count
from tests.support.twins import SIMULATED

ROOT = Path(__file__).resolve().parents[1]


def lists_for(backend, outputs, size):
    """`outputs` empty output lists (items filled with -1, counter) on the backend's device, and
    the `out` an operator takes for them."""
    lists = [(backend.put(np.full(max(size, 1), -1, np.int64)), backend.put(np.zeros(1, np.int64)))
             for _ in range(outputs)]
    out = None if outputs == 0 else lists[0] if outputs == 1 else tuple(lists)
    return lists, out


def contents(backend, items, count):
    """A list's items, sorted; everything past them must be untouched."""
    n, items = int(backend.get(count)[0]), backend.get(items)
    assert np.all(items[n:] == -1)
    return sorted(items[:n].tolist())


def selected(values, codes, outputs):
    """What operators that fill `outputs` lists append for `values` whose functor returned
    `codes`: (list 0, list 1), sorted; 2 goes to the second list when there is one."""
    values, codes = np.asarray(values), np.asarray(codes)
    if outputs == 0:
        return [], []
    first = codes != 0 if outputs == 1 else codes == 1
    return sorted(values[first].tolist()), sorted(values[codes == 2].tolist())


# -- advance ------------------------------------------------------------------------------------

def visit(s, t, w, hits, pick):
    atomic_add(hits, t, w)
    return pick[t]


@pytest.mark.parametrize("outputs,record,weighted",
                         [(0, False, False), (1, True, True), (2, True, False), (2, False, True)])
def test_advance(backend, outputs, record, weighted):
    """Every out-edge (s, t, w) of the queue's vertices (a vertex listed twice: twice) calls the
    functor once; local targets it returns true for go to the list (2: to the second list when
    there are two), ghost slots (t >= n_local) to the outbox's touched list when recording.
    A short queue (serial on the CPU) and a long one holding a hub."""
    n_local, n_ghosts = 300, 20
    indptr, indices = graph(n_local, n_ghosts, seed=1, hub=6000)
    rng = np.random.default_rng(2)
    weights = rng.integers(1, 9, indices.size).astype(np.float64)
    pick = rng.integers(0, 3, n_local + n_ghosts)
    part = backend.part(n_local)
    view = backend.view(indptr, indices, n_local, weights if weighted else None)
    for queue in (np.array([0, 1, 2, 0, 5]), rng.permutation(np.repeat(np.arange(n_local), 2))):
        edges = np.concatenate([np.arange(indptr[v], indptr[v + 1]) for v in queue])
        t = indices[edges]
        lists, out = lists_for(backend, outputs, edges.size)
        hits = backend.put(np.zeros(n_local + n_ghosts))
        outbox = SimpleNamespace(touched=backend.put(np.full(edges.size, -1, np.int64)),
                                 count=backend.put(np.zeros(1, np.int64))) if record else None
        advance(part, view, backend.put(queue.astype(np.int64)), visit, hits, backend.put(pick),
                out=out, outbox=outbox)
        want = np.bincount(t, weights=weights[edges] if weighted else None,
                           minlength=n_local + n_ghosts)
        assert np.array_equal(backend.get(hits), want)
        local = t < n_local
        for got, want in zip(lists, selected(t[local], pick[t[local]], outputs)):
            assert contents(backend, *got) == want
        if record:
            ghost = t[~local & (pick[t] != 0)] - n_local
            assert contents(backend, outbox.touched, outbox.count) == sorted(ghost.tolist())


def test_advance_over_an_empty_queue_calls_nothing(backend):
    indptr, indices = graph(30, 2, seed=3)
    hits = backend.put(np.zeros(32))
    advance(backend.part(30), backend.view(indptr, indices, 30), backend.put(np.arange(30)),
            visit, hits, backend.put(np.ones(32, np.int64)), length=0)
    assert not backend.get(hits).any()


def take(v, acc, share, calls):
    share[v] = acc[v] + 1.0
    acc[v] = 0.0
    atomic_add(calls, v, 1)
    return False


def give(s, t, w, acc, share):
    atomic_add(acc, t, share[s])
    return False


def test_advance_takes_sources_segment_by_segment(backend):
    """`source` runs once per queue vertex, each segment's right before its edges: a segment
    sees what the segments walked before it wrote. Rows 0-1 and 2-3 are two segments (a cycle
    0 -> 2 -> 1 -> 3 -> 0): the first takes 0 and 1 and gives 1 to 2 and 3; the second takes
    2 and 3 with it (shares 2) and gives 2 to 1 and 0, which keep it."""
    indptr, indices = np.array([0, 1, 2, 3, 4]), np.array([2, 3, 1, 0])
    view = backend.view(indptr, indices, 4, bounds=[0, 2, 4])
    acc, share = backend.put(np.zeros(4)), backend.put(np.zeros(4))
    calls = backend.put(np.zeros(4, np.int64))
    advance(backend.part(4), view, backend.put(np.array([3, 0, 2, 1])), give, acc, share,
            source=take, source_args=(acc, share, calls))
    assert backend.get(share).tolist() == [1, 1, 2, 2]
    assert backend.get(acc).tolist() == [2, 2, 0, 0]
    assert backend.get(calls).tolist() == [1, 1, 1, 1]


def test_frontier_queues(backend):
    """A Frontier on a real partition: advance appends to its next queue, swap makes that the
    current one and returns its length and edges. Breadth-first from one vertex of rmat_small:
    each level's vertices, with the out-degrees summed."""
    from bsp.partition import make_partition
    from partitioners import partition
    from tests.support.toys import toy_graphs
    from totem_py.algorithms import bfs
    from totem_py.algorithms.bfs import UNVISITED, claim

    g = toy_graphs()["rmat_small"]
    plan = partition(g, "HIGH", 0.0, 1, seed=1)
    part = make_partition(plan, 0, "gpu" if backend.device == "gpu" else "emulated")
    part.operator_package = backend.operators
    part.view("out")
    source = int(np.argmax(g.out_degree))
    want = bfs.levels(g, source)
    gvid = plan.gvids[0]
    with part.context():
        level = part.to_device(np.full(part.n_local, UNVISITED, np.int32))
        lv = int(np.flatnonzero(gvid == source)[0])
        level[lv] = 0
        f = Frontier(part)
        f.start(lv)
        depth = 0
        while f.length:
            advance(part, "out", f, claim, level, depth)
            edges = f.swap()
            depth += 1
            reached = np.flatnonzero(want == depth)
            assert f.length == reached.size
            assert edges == int(g.out_degree[reached].sum())
            items = part.to_host(f.items)[:f.length]
            assert sorted(gvid[items].tolist()) == reached.tolist()
        got = part.to_host(level)
    assert np.array_equal(np.where(got == UNVISITED, -1, got), want[gvid])


# -- pull ---------------------------------------------------------------------------------------

def product(v, u, w, x, out, calls):
    return x[u] * w


def store(v, total, x, out, calls):
    out[v] = total
    atomic_add(calls, v, 1)


SIZES = [(7, 2, 4, 0), (300, 20, 6, 6000), (5000, 40, 7, 0)]


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", SIZES)
@pytest.mark.parametrize("weighted", [False, True])
def test_pull_reduce(backend, n_local, n_ghosts, seed, hub, weighted):
    """apply(v, sum over v's row of edge_fn) once for every row (rows without edges: 0, those
    between rows with edges too), or once for each row of a list; rows long enough to be cut
    across blocks included."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, n_local + n_ghosts).astype(np.float64)   # sums exact in any order
    weights = rng.integers(1, 4, indices.size).astype(np.float64)
    w = weights if weighted else np.ones(indices.size)
    sums = np.array([(x[indices[a:b]] * w[a:b]).sum() for a, b in zip(indptr[:-1], indptr[1:])])
    part = backend.part(n_local)
    view = backend.view(indptr, indices, n_local, weights if weighted else None)
    rows = rng.permutation(n_local)[:n_local // 3].astype(np.int64)
    for listed in (None, rows):
        out, calls = backend.put(np.full(n_local, np.nan)), backend.put(np.zeros(n_local))
        pull(part, view, product, backend.put(x), out, calls, apply=store,
             rows=None if listed is None else backend.put(listed))
        mask = np.ones(n_local, bool) if listed is None else np.isin(np.arange(n_local), listed)
        assert np.array_equal(backend.get(calls), mask.astype(float))
        got = backend.get(out)
        assert np.array_equal(got[mask], sums[mask])
        assert np.isnan(got[~mask]).all()


def local_product(v, u, w, x, out, calls, n_local, ghost_reads):
    if u >= n_local:
        atomic_add(ghost_reads, 0, 1)
        return 0.0
    return x[u] * w


def store_local(v, total, x, out, calls, n_local, ghost_reads):
    out[v] = total
    atomic_add(calls, v, 1)


@pytest.mark.parametrize("seed", [1, 2])
def test_pull_reduce_local(backend, seed):
    """span=EdgeSpan.LOCAL: the sums over each row's edges to local vertices, which are a prefix
    or a suffix of the row (hub rows cut across blocks included); edge_fn sees none of the
    others."""
    rng = np.random.default_rng(seed)
    n_local, n_ghosts = 3000, 500
    deg = rng.integers(0, 12, n_local)
    deg[rng.integers(0, n_local, 4)] = 40_000
    rows = []
    for d in deg:
        k = int(rng.integers(0, d + 1))
        loc = rng.integers(0, n_local, k)
        gho = rng.integers(n_local, n_local + n_ghosts, d - k)
        rows.append(np.concatenate([loc, gho] if rng.random() < 0.5 else [gho, loc]))
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    indices = np.concatenate(rows).astype(np.int32)
    x = rng.integers(-50, 50, n_local + n_ghosts).astype(np.float64)
    want = [x[r[r < n_local]].sum() for r in rows]
    part = backend.part(n_local)
    out, calls = backend.put(np.full(n_local, np.nan)), backend.put(np.zeros(n_local))
    ghost_reads = backend.put(np.zeros(1, np.int64))
    pull(part, backend.view(indptr, indices, n_local), local_product, backend.put(x), out, calls,
         n_local, ghost_reads, apply=store_local, span=EdgeSpan.LOCAL)
    assert np.array_equal(backend.get(calls), np.ones(n_local))
    assert np.array_equal(backend.get(out), want)
    assert int(backend.get(ghost_reads)[0]) == 0


def count_edge(v, u, w, counts, n_local, rowsel):
    """counts[v, 0]: v's edges to local vertices walked, counts[v, 1]: to ghost slots; walks
    on (a searching pull never stops)."""
    atomic_add(counts, 2 * v + (1 if u >= n_local else 0), 1)
    return 0.0


def counted(v, total, counts, n_local, rowsel):
    atomic_add(counts, 2 * v, 1000)      # once per row: a thousand more


def picked(v, counts, n_local, rowsel):
    return rowsel[v] != 0


FORMS = ["reduce", "reduce_rows", "reduce_list", "search"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("span", list(EdgeSpan))
@pytest.mark.parametrize("ghosts_first", [False, True])
def test_pull_edge_span(backend, form, span, ghosts_first):
    """Each pull form walks, of every row it takes, the edges of `span` (ALL, LOCAL: targets
    below n_local, GHOST: the others) from the row's `skip`-th on, each once: counted per row
    and kind against NumPy, on rows whose ghost edges come last or (odd rows) first, hub rows
    cut across the CPU's blocks included (smaller under the simulator)."""
    big = (60, 10, 6, 300) if backend.simulated else (300, 40, 6, 6000)
    for n_local, n_ghosts, seed, hub in ((7, 3, 4, 0), big):
        indptr, indices = graph(n_local, n_ghosts, seed, hub, ghosts_first=ghosts_first)
        rng = np.random.default_rng(seed)
        rowsel = (rng.random(n_local) < 0.6).astype(np.int32)
        listed = np.flatnonzero(rowsel).astype(np.int64)
        part, view = backend.part(n_local), backend.view(indptr, indices, n_local)
        for skip in (0, 1, 3):
            want = np.zeros((n_local, 2), np.int64)
            for v in range(n_local) if form == "reduce" else listed:
                row = indices[indptr[v]:indptr[v + 1]]
                ghost = row >= n_local
                walked = (np.arange(row.size) >= skip) & {
                    EdgeSpan.ALL: True, EdgeSpan.LOCAL: ~ghost, EdgeSpan.GHOST: ghost}[span]
                want[v] = [(walked & ~ghost).sum(), (walked & ghost).sum()]
                want[v, 0] += 1000 * (form != "search")
            counts = backend.put(np.zeros(2 * n_local, np.int64))
            args = (counts, n_local, backend.put(rowsel))
            extra = dict(reduce={"apply": counted}, search={"row_fn": picked},
                         reduce_rows={"apply": counted, "row_fn": picked},
                         reduce_list={"apply": counted, "rows": backend.put(listed)})[form]
            pull(part, view, count_edge, *args, span=span, skip=skip, **extra)
            got = backend.get(counts).reshape(n_local, 2)
            assert np.array_equal(got, want), (n_local, skip)



@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32, np.float64])
def test_gather_rows(backend, dtype):
    """A streamed partition's cache load: the listed rows' entries back to back, in list order
    (kernels_gpu: advance's load-balanced walk; kernels_cpu.chunks.chunk_cache_load on the
    CPU), rows without edges and a hub among them (fewer under the simulator)."""
    import importlib
    n, hub, listed = (60, 100, 20) if backend.simulated else (300, 3000, 120)
    indptr, indices = graph(n, 20, seed=5, hub=hub)
    src = (indices * 3 + 1).astype(dtype)
    rows = np.random.default_rng(5).permutation(n)[:listed].astype(np.int64)
    rows[7] = 3         # the hub
    deg = indptr[rows + 1] - indptr[rows]
    offsets = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    want = np.concatenate([src[indptr[v]:indptr[v + 1]] for v in rows])
    if backend.operators == "kernels_cpu":
        gather = importlib.import_module("kernels_cpu.chunks").chunk_cache_load
    else:
        gather = importlib.import_module(backend.operators + ".operators").gather_rows
    out = backend.put(np.zeros(want.size + 5, dtype))
    gather(backend.put(indptr), backend.put(src), backend.put(rows), rows.size,
           backend.put(offsets), out)
    got = backend.get(out)
    assert np.array_equal(got[:want.size], want) and not got[want.size:].any()

def test_pull_reduce_rows_without_edges_at_block_edges():
    """Runs of rows without edges before, between and after the edge blocks of a row range (and
    ranges of such rows alone) are each applied once, by the block that holds their position."""
    from kernels_cpu import operators as cpu
    rng = np.random.default_rng(3)
    for trial in range(40):
        n = int(rng.integers(1, 3000))
        deg = rng.integers(0, 40, n) * (rng.random(n) < rng.random())
        deg[: n // 2] *= trial % 3 != 0         # a long run of empty rows first, every third
        indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
        indices = rng.integers(0, n, indptr[-1]).astype(np.int32)
        x = rng.integers(-50, 50, n).astype(np.float64)
        first = int(rng.integers(0, n))
        end = int(rng.integers(first, n + 1))
        out, calls = np.full(n, np.nan), np.zeros(n)
        cpu.pull(product, indptr, indices, None, first, end, (x, out, calls), apply_fn=store)
        rows = np.arange(n)
        inside = (rows >= first) & (rows < end)
        assert np.array_equal(calls, inside.astype(float)), trial
        want = [x[indices[a:b]].sum() for a, b in zip(indptr[first:end], indptr[first + 1:end + 1])]
        assert np.array_equal(out[first:end], want) and np.isnan(out[~inside]).all()


def value_of(v, u, w, x, out, calls, rowsel):
    return x[u] * w


def keep_total(v, total, x, out, calls, rowsel):
    out[v] = total
    atomic_add(calls, v, 1)


def in_rowsel(v, x, out, calls, rowsel):
    return rowsel[v] != 0


REDUCE = {"sum": np.add, "min": np.minimum, "max": np.maximum}
TOTALS = [np.float64, np.float32, np.int64, np.int32]


def row_totals(indptr, values, reduce, dtype):
    """NumPy's reduction of each row's values, each cast to `dtype` first; rows without edges
    get the identity (0, the type's largest or smallest, +-inf for floats)."""
    kind = np.dtype(dtype)
    big = np.inf if kind.kind == "f" else np.iinfo(kind).max
    small = -np.inf if kind.kind == "f" else np.iinfo(kind).min
    identity = {"sum": 0, "min": big, "max": small}[reduce]
    return np.array([REDUCE[reduce].reduce(values[a:b].astype(dtype), dtype=dtype) if b > a
                     else identity for a, b in zip(indptr[:-1], indptr[1:])], dtype=dtype)


# every reduction and every dtype in the default run, the other pairs in the extended one (each
# pair compiles its own kernels)
PAIRS = [(r, d) for r in REDUCE for d in TOTALS]
DEFAULT_PAIRS = [("sum", np.float32), ("max", np.float64), ("min", np.int32), ("sum", np.int64)]


@pytest.mark.parametrize("reduce, dtype", [
    pair if pair in DEFAULT_PAIRS else pytest.param(*pair, marks=pytest.mark.extended)
    for pair in PAIRS])
def test_pull_reductions(backend, reduce, dtype):
    """A reducing pull's row total by sum, min or max into the dtype asked, against NumPy: over
    every row (hub rows cut across the CPU's blocks: their parts reduced in block order), over a
    list of rows and over the rows a row_fn selects; rows without edges get the identity;
    integer values (sums exact in any order), weights."""
    n_local, n_ghosts, hub = (40, 5, 100) if backend.simulated else (3000, 40, 60_000)
    indptr, indices = graph(n_local, n_ghosts, seed=9, hub=hub)
    rng = np.random.default_rng(9)
    x = rng.integers(-60, 60, n_local + n_ghosts).astype(dtype)
    weights = rng.integers(1, 4, indices.size).astype(np.float64)
    want = row_totals(indptr, x[indices] * weights, reduce, dtype)
    rowsel = (rng.random(n_local) < 0.5).astype(np.int32)
    listed = np.flatnonzero(rowsel).astype(np.int64)
    part, view = backend.part(n_local), backend.view(indptr, indices, n_local, weights)
    forms = {"every row": {}, "listed": {"rows": backend.put(listed)},
             "selected": {"row_fn": in_rowsel}}
    for form, extra in forms.items():
        out = backend.put(np.zeros(n_local, dtype))
        calls = backend.put(np.zeros(n_local))
        pull(part, view, value_of, backend.put(x), out, calls, backend.put(rowsel),
             apply=keep_total, reduce=reduce, dtype=dtype, **extra)
        taken = np.ones(n_local, bool) if form == "every row" else rowsel != 0
        got = backend.get(out)
        assert got.dtype == dtype
        assert np.array_equal(backend.get(calls), taken.astype(float)), form
        assert np.array_equal(got[taken], want[taken]), form
        assert not got[~taken].any(), form


def test_pull_refuses_an_unknown_reduction():
    part = SimpleNamespace(operator_package="kernels_cpu", xp=np, n_local=1)
    view = SimpleNamespace(n_local=1, n_ghosts=0)
    for reduce, dtype in (("prod", np.float64), ("min", np.int8)):
        with pytest.raises(ValueError, match="reduces by sum, min, max"):
            pull(part, view, value_of, apply=keep_total, reduce=reduce, dtype=dtype)


# -- intersect ----------------------------------------------------------------------------------

def ascending_rows(n_nodes, seed, hub=0):
    """A random symmetric graph over n_nodes nodes as ascending rows without repeats, self-loops
    included, node 2 joined to `hub` others."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n_nodes, 4 * n_nodes)
    dst = rng.integers(0, n_nodes, src.size)
    star = rng.choice(n_nodes, min(hub, n_nodes), replace=False)
    src, dst = np.concatenate([src, np.full(star.size, 2)]), np.concatenate([dst, star])
    pairs = np.unique(np.stack([np.concatenate([src, dst]), np.concatenate([dst, src])]), axis=1)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(pairs[0], minlength=n_nodes))])
    return indptr.astype(np.int64), pairs[1].astype(np.int32)


def weigh_common(u, v, x, value, out, calls, skip):
    return value[x] + v


def keep_row(u, total, value, out, calls, skip):
    out[u] = total
    atomic_add(calls, u, 1)


def not_skipped(u, v, value, out, calls, skip):
    return skip[v] == 0


@pytest.mark.parametrize("reduce,dtype", [("sum", np.int64), ("min", np.float64),
                                          ("max", np.int32), ("sum", np.float32)])
@pytest.mark.parametrize("filtered", [False, True])
def test_intersect(backend, reduce, dtype, filtered):
    """For each row u (every local row, or a list's) and each entry v of its row (those edge_fn
    passes): common_fn(u, v, x) for each x in both rows, reduced per row into `dtype`; against
    NumPy's set intersections. Rows of ghost nodes (>= n_local) are merged but never reduced;
    a hub row (fewer under the simulator) and self-loops included."""
    n_nodes, n_local, hub = (30, 24, 20) if backend.simulated else (700, 600, 500)
    indptr, indices = ascending_rows(n_nodes, seed=4, hub=hub)
    rng = np.random.default_rng(4)
    value = rng.integers(-20, 20, n_nodes).astype(np.int64)
    skip = (rng.random(n_nodes) < 0.3).astype(np.int32) if filtered else np.zeros(n_nodes, np.int32)
    rows = [set(indices[indptr[u]:indptr[u + 1]].tolist()) for u in range(n_nodes)]
    values, ptr = [], [0]
    for u in range(n_local):
        values += [value[x] + v for v in sorted(rows[u]) if not skip[v]
                   for x in sorted(rows[u] & rows[v])]
        ptr.append(len(values))
    want = row_totals(np.array(ptr), np.array(values, np.int64), reduce, dtype)
    view = SimpleNamespace(sorted_rows=(backend.put(indptr), backend.put(indices)),
                           n_local=n_local)
    listed = rng.permutation(n_local)[:n_local // 3].astype(np.int64)
    for rows_given in (None, listed):
        out, calls = backend.put(np.zeros(n_local, dtype)), backend.put(np.zeros(n_local))
        intersect(backend.part(n_local), view, weigh_common, backend.put(value), out, calls,
                  backend.put(skip), apply=keep_row, edge_fn=not_skipped if filtered else None,
                  rows=None if rows_given is None else backend.put(rows_given),
                  reduce=reduce, dtype=dtype)
        taken = np.isin(np.arange(n_local), listed) if rows_given is not None else \
            np.ones(n_local, bool)
        got = backend.get(out)
        assert np.array_equal(backend.get(calls), taken.astype(float))
        assert np.array_equal(got[taken], want[taken])
        assert not got[~taken].any()


def test_sorted_rows_of_a_plan():
    """A partition's rows for intersect: local rows and ghost rows, in node ids, ascending
    without repeats, each the graph's row of that vertex restricted to the partition's nodes
    (a graph with parallel edges and self-loops, three partitions)."""
    from partitioners import partition
    import totem_py
    g = totem_py.generate("rmat:7", seed=3, undirected=True)
    src = np.concatenate([g.edge_sources(), [5, 5, 9]])
    dst = np.concatenate([g.indices, [5, 5, 2]])
    g = totem_py.Graph.from_edges(np.concatenate([src, dst[-3:]]), np.concatenate([dst, src[-3:]]),
                                  g.n_vertices, directed=False)
    plan = partition(g, "RAND", 0.3, 2, seed=1)
    for pid in range(plan.n_partitions):
        view = plan.views("out")[pid]
        gvid = np.concatenate([plan.gvids[pid], view.ghost_gvid]).astype(np.int64)
        indptr, indices = plan.sorted_rows("out", pid)
        assert indptr.size == gvid.size + 1
        present = set(gvid.tolist())
        for node, g_id in enumerate(gvid):
            row = indices[indptr[node]:indptr[node + 1]]
            assert np.all(np.diff(row) > 0)
            graph_row = set(g.indices[g.indptr[g_id]:g.indptr[g_id + 1]].tolist())
            assert set(gvid[row].tolist()) == graph_row & present, (pid, node)


# -- a min reduction run end to end -------------------------------------------------------------

LABEL = Message(np.int32, "min", np.iinfo(np.int32).max)
ROUNDS = 3


def seed_label(v, label, gvid, n):
    label[v] = (gvid[v] * 7919) % n


def neighbour_label(v, u, w, label, low):
    return label[u]


def lower(v, total, label, low):
    low[v] = min(label[v], total)


def take_lower(v, label, low):
    label[v] = low[v]


def label_of(v, label):
    return label[v]


class MinLabel(Program):
    """ROUNDS rounds of label[v] = min(label[v], labels of v's in-neighbours), labels seeded
    from global ids (node_gvid): a pull mode's min reduction into int32, with ghosts' labels
    brought by the exchange."""
    name = "min_label"
    modes = (Mode("pull", "in", "pull", LABEL, state="label"),)

    def init(self, part):
        s = part.state
        s.label = part.alloc(np.int32, LABEL.identity, ("in",))
        s.low = part.empty(part.n_local, np.int32)
        vertex_map(part, seed_label, s.label, part.view("in").node_gvid, part.n_vertices)

    def gather(self, part, step, mode):
        return vertex_values(part, label_of, part.state.label,
                             at=part.views["in"].boundary_lvid, dtype=np.int32)

    def compute(self, part, step, mode, box):
        s = part.state
        pull(part, "in", neighbour_label, s.label, s.low, apply=lower, reduce="min",
             dtype=np.int32)
        vertex_map(part, take_lower, s.label, s.low)

    def vote(self, part, step):
        return Vote(part.n_local if step + 1 < ROUNDS else 0)

    def collect(self, parts, n_vertices):
        from totem_py.algorithms.common import collect
        return collect(parts, n_vertices, "label", np.int32, 0)


def min_labels(g):
    label = (np.arange(g.n_vertices, dtype=np.int64) * 7919 % g.n_vertices).astype(np.int32)
    for _ in range(ROUNDS):
        low = label.copy()
        np.minimum.at(low, g.indices, label[g.edge_sources()])
        label = low
    return label


@pytest.mark.parametrize("device", [
    "cpu", "emulated", pytest.param("ptxcheck", marks=pytest.mark.slow)] + ["simulated"] * SIMULATED)
def test_min_reduction_end_to_end(device, monkeypatch):
    """MinLabel on a directed graph (its in-edges) under HIGH, LOW and RAND, on a CPU partition
    alone, hybrid and GPU partitions only, against NumPy; small, hybrid, with the GPU partitions'
    operator calls compiled to PTX (tests/ptxcheck) and under numba-cuda's simulator."""
    from bsp import Engine
    from partitioners import partition
    import totem_py
    small = device in ("ptxcheck", "simulated")
    if device == "ptxcheck":
        from bsp.partition import EmulatedGpuPartition
        monkeypatch.setattr(EmulatedGpuPartition, "operator_package", "tests.ptxcheck")
        device = "emulated"
    g = totem_py.generate("rmat:5" if small else "rmat:10", seed=4)
    want = min_labels(g)
    configs = [("RAND", 0.3, 2)] if small else \
        [(s, share, gpus) for s in ("HIGH", "LOW", "RAND")
         for share, gpus in ((1.0, 1), (0.5, 1), (0.0, 2))]
    for strategy, share, gpus in configs:
        got, _ = Engine(partition(g, strategy, share, gpus, seed=1), device).run(MinLabel())
        assert np.array_equal(got, want), (strategy, share, gpus)


def chosen(v, x, threshold, visits, rowsel):
    return rowsel[v] != 0


def above(v, u, w, x, threshold, visits, rowsel):
    atomic_add(visits, v, 1)
    return x[u] * w > threshold


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", SIZES)
@pytest.mark.parametrize("weighted,listing", [(False, True), (True, False)])
def test_pull_search(backend, n_local, n_ghosts, seed, hub, weighted, listing):
    """The rows row_fn selects walk their edges in order up to the first for which edge_fn is
    true, and only those rows with a hit are listed; the other rows read nothing."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    rng = np.random.default_rng(seed + 1)
    x = rng.random(n_local + n_ghosts)
    weights = rng.integers(1, 3, indices.size).astype(np.float64)
    w = weights if weighted else np.ones(indices.size)
    rowsel = (rng.random(n_local) < 0.7).astype(np.int32)
    threshold = 0.9
    visits, found = np.zeros(n_local), []
    for v in np.flatnonzero(rowsel):
        hit = x[indices[indptr[v]:indptr[v + 1]]] * w[indptr[v]:indptr[v + 1]] > threshold
        visits[v] = np.argmax(hit) + 1 if hit.any() else hit.size
        found += [int(v)] if hit.any() else []
    part = backend.part(n_local)
    view = backend.view(indptr, indices, n_local, weights if weighted else None)
    lists, out = lists_for(backend, int(listing), n_local)
    got = backend.put(np.zeros(n_local))
    pull(part, view, above, backend.put(x), threshold, got, backend.put(rowsel), row_fn=chosen,
         out=out)
    assert np.array_equal(backend.get(got), visits)
    if listing:
        assert contents(backend, *lists[0]) == found


def test_pull_needs_apply_or_row_fn(backend):
    indptr, indices = graph(7, 0, seed=4)
    part, view = backend.part(7), backend.view(indptr, indices, 7)
    with pytest.raises(ValueError, match="row_fn"):
        pull(part, view, product, backend.put(np.ones(7)), None, None)
    with pytest.raises(ValueError, match="apply"):
        pull(part, view, above, backend.put(np.ones(7)), row_fn=chosen,
             rows=backend.put(np.arange(3)))


# -- vertex maps --------------------------------------------------------------------------------

def classify(v, cls, seen):
    atomic_add(seen, v, 1)
    return cls[v]


@pytest.mark.parametrize("outputs", [0, 1, 2])
@pytest.mark.parametrize("n", [100, 10_000])
def test_vertex_map(backend, outputs, n):
    """vertex_fn once for every vertex v < n (or each item of a list, `length` of them, with
    the default prefetch or a pair of arrays); the count of those it returned true for; lists as
    advance fills them."""
    rng = np.random.default_rng(n + outputs)
    cls = rng.integers(0, 3, n + 5)
    part = backend.part(n + 5)
    listed = rng.permutation(n + 5)[:n // 2].astype(np.int64)
    for vertices, pair in ((None, False), (listed, False), (listed, True)):
        lists, out = lists_for(backend, outputs, n)
        seen = backend.put(np.zeros(n + 5, np.int64))
        cls_in = backend.put(cls)
        if vertices is None:
            count = vertex_map(part, classify, cls_in, seen, n=n, out=out, count=True)
            done = np.arange(n)
        else:
            padded = backend.put(np.concatenate([vertices, [0, 1, 2]]))    # past `length`
            count = vertex_map(part, classify, cls_in, seen, vertices=padded,
                               length=vertices.size, out=out, count=True,
                               prefetch=(seen, cls_in) if pair else None)
            done = vertices
        assert np.array_equal(backend.get(seen), np.isin(np.arange(n + 5), done))
        assert count == np.count_nonzero(cls[done])
        for got, want in zip(lists, selected(done, cls[done], outputs)):
            assert contents(backend, *got) == want


def square_into(v, x, out):
    out[v] = x[v] * x[v]


@pytest.mark.parametrize("n", [10, 5000, 70_000])
def test_vertex_map_without_lists_or_count(backend, n):
    """A functor that only writes (PageRank's contributions): every vertex v < n, or every item
    of a list, written, in the serial loop and the parallel one (whose writes Numba's parfor
    pass once dropped as dead); `consume` empties the list's counter."""
    x = np.random.default_rng(n).random(n + 3)
    part = backend.part(n + 3)
    out = backend.put(np.full(n + 3, -1.0))
    assert vertex_map(part, square_into, backend.put(x), out, n=n) is None
    want = np.r_[x[:n] ** 2, [-1.0] * 3]
    assert np.array_equal(backend.get(out), want)
    items = np.arange(n + 3)[::-2].astype(np.int64)
    counter, out = backend.put(np.array([items.size])), backend.put(np.full(n + 3, -1.0))
    vertex_map(part, square_into, backend.put(x), out, vertices=backend.put(items),
               consume=counter)
    want = np.full(n + 3, -1.0)
    want[items] = x[items] ** 2
    assert np.array_equal(backend.get(out), want) and backend.get(counter)[0] == 0


def test_vertex_map_defaults_to_the_local_vertices(backend):
    cls = np.array([1, 0, 2, 1, 0])
    seen = backend.put(np.zeros(7, np.int64))
    assert vertex_map(backend.part(5), classify, backend.put(cls), seen, count=True) == 3
    assert backend.get(seen).tolist() == [1, 1, 1, 1, 1, 0, 0]
    assert vertex_map(backend.part(0), classify, backend.put(cls), seen, count=True) == 0


def affine(v, x, a, b):
    return a * x[v] + b


def test_vertex_values(backend):
    """out[i] = vertex_fn(at[i]), into a given array or a new one of the given type."""
    rng = np.random.default_rng(5)
    x = rng.random(50)
    at = rng.integers(0, 50, 9000)
    part = backend.part(50)
    part.empty = lambda n, dtype: backend.xp.empty(n, dtype)
    out = backend.put(np.zeros(at.size))
    assert vertex_values(part, affine, backend.put(x), 3.0, -1.0, at=backend.put(at), out=out) \
        is out
    # NVVM contracts a * x + b into a fused multiply-add: one rounding fewer than NumPy's
    assert np.abs(backend.get(out) - (3.0 * x[at] - 1.0)).max() <= 4 * np.finfo(float).eps
    made = vertex_values(part, affine, backend.put(x), 3.0, -1.0, at=backend.put(at[:7]),
                         dtype=np.float32)
    assert made.dtype == np.float32
    assert np.array_equal(backend.get(made), (3.0 * x[at[:7]] - 1.0).astype(np.float32))


def deliver(v, m, acc, cls):
    atomic_add(acc, v, m)
    return cls[v]


@pytest.mark.parametrize("outputs", [0, 1, 2])
def test_receive(backend, outputs):
    """fn(v, message) for each inbox entry; the vertices it returned true for listed."""
    rng = np.random.default_rng(6 + outputs)
    n = 40
    cls = rng.integers(0, 3, n)
    for size in (0, 17, 9000):
        lvid = rng.integers(0, n, size)
        values = rng.integers(1, 100, size).astype(np.float64)
        inbox = SimpleNamespace(values=backend.put(values), lvid=backend.put(lvid))
        lists, out = lists_for(backend, outputs, size)
        acc = backend.put(np.zeros(n))
        receive(backend.part(n), inbox, deliver, acc, backend.put(cls), out=out)
        assert np.array_equal(backend.get(acc), np.bincount(lvid, values, minlength=n))
        for got, want in zip(lists, selected(lvid, cls[lvid], outputs)):
            assert contents(backend, *got) == want


def positive(v, x):
    return x[v] > 0


def bit_of(v, bits):
    return read_bit(bits, v)


@pytest.mark.parametrize("n", [0, 1, 13, 10_003])
def test_bitmap_and_test_bit(backend, n):
    """Bit v (bit v & 7 of byte v >> 3) of the bitmap is vertex_fn(v), for v < n, and the
    rest of a longer bitmap is zero; test_bit reads it back."""
    rng = np.random.default_rng(n)
    x = rng.random(n + 9) - 0.5
    part = backend.part(n + 9)
    bits = backend.put(np.full(bitmap_bytes(n) + 3, 0xAA, np.uint8))
    assert bitmap(part, positive, backend.put(x), out=bits, n=n) is bits
    assert np.array_equal(backend.get(bits), np.concatenate(
        [np.packbits(x[:n] > 0, bitorder="little"), np.zeros(3, np.uint8)]))
    if n:
        back = vertex_values(part, bit_of, bits, at=backend.put(np.arange(n)),
                             out=backend.put(np.zeros(n, np.int64)))
        assert np.array_equal(backend.get(back), x[:n] > 0)


# -- intrinsics ---------------------------------------------------------------------------------

def do_min(i, arr, vals, olds, slots):
    olds[i] = atomic_min(arr, i % slots, vals[i])
    return False


def do_max(i, arr, vals, olds, slots):
    olds[i] = atomic_max(arr, i % slots, vals[i])
    return False


def do_add(i, arr, vals, olds, slots):
    olds[i] = atomic_add(arr, i % slots, vals[i])
    return False


def do_or(i, arr, vals, olds, slots):
    olds[i] = atomic_or(arr, i % slots, vals[i])
    return False


def do_cas(i, arr, vals, olds, slots):
    olds[i] = atomic_cas(arr, i % slots, -1, vals[i])
    return False


def run_ops(backend, fn, arr, vals, slots):
    """fn for ops 0..len(vals)-1, op i on element i % slots; (array after, old values)."""
    arr, olds = backend.put(arr), backend.put(np.zeros(len(vals), arr.dtype))
    vertex_map(backend.part(len(vals)), fn, arr, backend.put(vals), olds, slots)
    return backend.get(arr), backend.get(olds)


def pairs(dtype):
    """(elements, values): every sign combination, the type's extremes, equal values."""
    if np.dtype(dtype).kind == "f":
        f = np.finfo(dtype)
        table = [(5, 3), (3, 5), (5, -3), (-3, 5), (-3, -5), (-5, -3), (2.5, 2.5), (-2.5, -2.5),
                 (np.inf, -2.5), (-np.inf, 7), (np.inf, -np.inf), (f.max, -f.tiny),
                 (-f.tiny, f.tiny), (f.tiny, 2 * f.tiny), (-f.tiny, -2 * f.tiny), (-f.max, f.max)]
    else:
        i = np.iinfo(dtype)
        table = [(5, 3), (3, 5), (-7, 2), (2, -7), (-7, -9), (-9, -7), (4, 4), (i.min, i.max),
                 (i.max, i.min), (i.min, -1), (i.max, 0)]
    return tuple(np.array(column, dtype) for column in zip(*table))


DTYPES = [np.float64, np.float32, np.int64, np.int32]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,fn,ref", [("min", do_min, np.minimum), ("max", do_max, np.maximum)])
def test_atomic_min_max_values(backend, dtype, op, fn, ref):
    """One operation per element: the element becomes min/max(element, value) and the call
    returns what the element held, whatever the signs (the GPU's float lowering works on the
    bits: signed for values >= 0, unsigned and reversed for negative ones)."""
    arr, vals = pairs(dtype)
    got, olds = run_ops(backend, fn, arr, vals, arr.size)
    assert np.array_equal(got, ref(arr, vals)), op
    assert np.array_equal(olds, arr)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])
@pytest.mark.parametrize("op,fn,ref", [("min", do_min, np.minimum), ("max", do_max, np.maximum)])
def test_atomic_min_max_unsigned(backend, dtype, op, fn, ref):
    """Unsigned elements compare as unsigned: a value with the top bit set (200 in a byte, the
    flags' type on a CPU) is the larger, not a negative one. (CUDA has no byte atomics: flags
    are 32-bit words on a GPU.)"""
    if dtype == np.uint8 and backend.operators != "kernels_cpu":
        pytest.skip("no byte atomics on a GPU")
    top = np.iinfo(dtype).max
    arr = np.array([5, 3, 200, 100, top, 0, 128, 127, 4], dtype)
    vals = np.array([3, 5, 100, 200, 0, top, 127, 128, 4], dtype)
    got, olds = run_ops(backend, fn, arr, vals, arr.size)
    assert np.array_equal(got, ref(arr, vals)), op
    assert np.array_equal(olds, arr)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,fn,ref", [("min", do_min, np.minimum), ("max", do_max, np.maximum)])
def test_atomic_min_max_race(backend, dtype, op, fn, ref):
    """20000 operations on 7 elements at once: each element ends at the extreme of its values,
    and exactly one operation per element saw its initial value (the first: an atomic that
    returned a stale value would let two writers both think they were first)."""
    slots, n = 7, 20_000
    rng = np.random.default_rng(11)
    vals = rng.integers(-1000, 1000, n).astype(dtype)
    if np.dtype(dtype).kind == "f":
        vals += rng.random(n).astype(dtype) - 0.5
        start = np.inf if op == "min" else -np.inf
    else:
        start = getattr(np.iinfo(dtype), "max" if op == "min" else "min")
    arr = np.full(slots, start, dtype)
    got, olds = run_ops(backend, fn, arr, vals, slots)
    slot = np.arange(n) % slots
    for k in range(slots):
        mine = vals[slot == k]
        assert got[k] == ref.reduce(mine)
        assert np.count_nonzero(olds[slot == k] == start) == 1
        assert np.isin(olds[slot == k], np.concatenate([[start], mine])).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_atomic_add_race(backend, dtype):
    """Adding 1 from 20000 operations on 7 elements: each element's old values are 0, 1, ...,
    its count - 1, each once."""
    slots, n = 7, 20_000
    got, olds = run_ops(backend, do_add, np.zeros(slots, dtype), np.ones(n, dtype), slots)
    slot = np.arange(n) % slots
    for k in range(slots):
        count = np.count_nonzero(slot == k)
        assert got[k] == count
        assert np.array_equal(np.sort(olds[slot == k]), np.arange(count))


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32])
def test_atomic_or_race(backend, dtype):
    """Each operation sets one bit: the element ends with the union, exactly one operation per
    element saw 0, and every old value is within the union."""
    slots, n = 7, 20_000
    bits = np.dtype(dtype).itemsize * 8 - 1
    vals = (np.ones(n, np.int64) << (np.arange(n) // slots % bits)).astype(dtype)
    got, olds = run_ops(backend, do_or, np.zeros(slots, dtype), vals, slots)
    slot = np.arange(n) % slots
    for k in range(slots):
        assert got[k] == np.bitwise_or.reduce(vals[slot == k])
        assert np.count_nonzero(olds[slot == k] == 0) == 1
        assert np.all(olds[slot == k] | got[k] == got[k])


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_atomic_cas_race(backend, dtype):
    """compare-and-swap from -1 by 20000 operations on 7 elements: one wins each element, the
    others see the winner's value."""
    slots, n = 7, 20_000
    vals = np.arange(n, dtype=dtype)
    got, olds = run_ops(backend, do_cas, np.full(slots, -1, dtype), vals, slots)
    slot = np.arange(n) % slots
    for k in range(slots):
        won = vals[(slot == k) & (olds == -1)]
        assert won.tolist() == [got[k]]
        assert np.all((olds[slot == k] == -1) | (olds[slot == k] == got[k]))


# -- device functions and the cache key ---------------------------------------------------------

@device_function
def scaled(x, k):
    return x * k


@device_function
def scaled_plus(x, k):
    return scaled(x, k) + 1.0


def uses_helpers(v, x, k):
    return scaled_plus(x[v], k) - scaled(x[v], 1.0)


def test_device_functions(backend):
    """Helpers decorated with device_function, one calling the other, from a functor on every
    backend, and as plain Python."""
    x = np.arange(10, dtype=np.float64)
    out = vertex_values(backend.part(10), uses_helpers, backend.put(x), 3.0,
                        at=backend.put(np.arange(10)), out=backend.put(np.zeros(10)))
    assert np.array_equal(backend.get(out), 2.0 * x + 1.0)
    assert uses_helpers(4, x, 3.0) == 9.0


_BOTH = """
import sys
import numpy as np
from types import SimpleNamespace
from bsp import vertex_values
from test_operators import uses_helpers
for package in sys.argv[1:]:
    part = SimpleNamespace(operator_package=package, xp=np, n_local=4)
    print(vertex_values(part, uses_helpers, np.arange(4.0), 3.0, at=np.arange(4),
                        out=np.zeros(4)).tolist())
"""


@pytest.mark.slow
def test_device_functions_compile_for_the_cpu_then_the_gpu(tmp_path):
    """One process compiling a functor with device functions for the CPU first (nothing cached:
    a hybrid engine whose CPU partition computes first, a CPU run before a GPU run), then for
    the GPU."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
               NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", _BOTH, "kernels_cpu", "tests.ptxcheck"],
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:2] == ["[1.0, 3.0, 5.0, 7.0]"] * 2


def define(source, **scope):
    """The functions of `source`, made in one module-like namespace (file "functors.py")."""
    exec(compile(textwrap.dedent(source), "functors.py", "exec"), scope)
    return scope


def test_code_key_follows_the_code():
    """Same code, same key; another body, a helper's body (through device_function too) or a
    global constant it reads changed: another key."""
    base = """
        LIMIT = 3
        def helper(x):
            return x + 1
        def fn(v, x):
            return helper(x[v]) < LIMIT
    """
    key = code_key(define(base)["fn"])
    assert code_key(define(base)["fn"]) == key
    assert code_key(define(base.replace("< LIMIT", "<= LIMIT"))["fn"]) != key
    assert code_key(define(base.replace("x + 1", "x + 2"))["fn"]) != key
    assert code_key(define(base.replace("LIMIT = 3", "LIMIT = 4"))["fn"]) != key
    device = base.replace("def helper", "@device_function\n        def helper")
    dkey = code_key(define(device, device_function=device_function)["fn"])
    assert code_key(define(device.replace("x + 1", "x + 2"),
                           device_function=device_function)["fn"]) != dkey


def scaled_by(k):
    def scaled(v, x):
        return x[v] * k
    return scaled


def test_functors_from_a_factory_keep_their_values():
    """Functors made by a factory, differing only in the value they captured, each compute with
    their own value."""
    part, x = SimpleNamespace(operator_package="kernels_cpu", xp=np, n_local=3), np.arange(3.0)
    for k in (2.0, 10.0):
        out = vertex_values(part, scaled_by(k), x, at=np.arange(3), out=np.zeros(3))
        assert out.tolist() == (k * x).tolist(), k


_CACHED_RUN = """
import sys
import numpy as np
from types import SimpleNamespace
from bsp import vertex_values
sys.path.insert(0, sys.argv[1])
from functors import value
part = SimpleNamespace(operator_package="kernels_cpu", xp=np, n_local=3)
print(vertex_values(part, value, np.arange(3.0), at=np.arange(3), out=np.zeros(3)).tolist())
"""


@pytest.mark.slow
def test_an_edited_functor_compiles_anew(tmp_path):
    """The CPU kernels are cached on disk: after the functor's file changes, the next process
    runs the new code, not the cached kernel of the old."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    functors = tmp_path / "functors.py"

    def run(body):
        functors.write_text(f"def value(v, x):\n    return {body}\n")
        out = subprocess.run([sys.executable, "-c", _CACHED_RUN, str(tmp_path)], env=env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        return out.stdout.strip()

    assert run("x[v] + 1.0") == "[1.0, 2.0, 3.0]"
    assert any((tmp_path / "cache").rglob("*.nbi"))      # the kernel went to the disk cache
    assert run("x[v] * 10.0") == "[0.0, 10.0, 20.0]"


@pytest.mark.gpu
@pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")
def test_compile_only_then_launch_in_one_process(monkeypatch):
    """The GPU backend compiled to PTX only (COMPILE_ONLY, as tests/ptxcheck runs it), then
    launched on the device in the same process: what the compile-only calls set up (their
    array type, their stand-ins for absent arguments) must not reach a launch."""
    import cupy

    import kernels_gpu.operators as gpu
    x = np.arange(10.0) - 4.5
    with monkeypatch.context() as m:
        m.setattr(gpu, "COMPILE_ONLY", True)
        gpu.map_vertices(positive, 10, None, (), (x,))
    assert gpu.map_vertices(positive, 10, None, (), (cupy.asarray(x),), count=True) == 5
