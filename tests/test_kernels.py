"""Kernels on shapes the engine tests rarely produce: rows much longer than a block, queues on
either side of the GPU scan's one-block limit."""

import numba
import numpy as np
import pytest
from numba import njit, prange

from bsp import pull
from kernels_cpu.jit import BLOCKS, EDGES_PER_BLOCK, frontier_blocks
from totem_py.algorithms import pagerank
from totem_py.backend import cuda_device_count


def test_pull_splits_long_rows(backend):
    """PageRank's pull over rows of 100K and 30K edges, cut across blocks (CPU) or lanes (GPU),
    empty rows between them: the ranks of a plain per-row sum, and the same bits run after run
    and whatever the number of threads (a cut row's parts are added in block order)."""
    rng = np.random.default_rng(1)
    degrees = np.array([100_000, 0, 30_000, 5, 0, 1] + list(rng.integers(0, 50, 3000)))
    indptr = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    # magnitudes 1e-30..1e30: sums inexact, so their order shows in the bits
    contrib = (rng.random(4000) * 10.0 ** rng.integers(-30, 30, 4000)).astype(np.float32)
    indices = rng.integers(0, contrib.size, indptr[-1]).astype(np.int32)
    assert degrees[0] > 4 * EDGES_PER_BLOCK
    part, view = backend.part(degrees.size), backend.view(indptr, indices, degrees.size)

    def ranks(threads):
        rank = backend.put(np.full(degrees.size, -1.0))
        numba.set_num_threads(threads)
        try:
            pull(part, view, pagerank.in_contribution, backend.put(contrib), rank, 0.01, 0.85,
                 apply=pagerank.new_rank)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        return backend.get(rank)

    rank = ranks(numba.config.NUMBA_NUM_THREADS)
    sums = np.add.reduceat(contrib[indices].astype(np.float64), indptr[:-1].clip(max=indptr[-1] - 1))
    want = 0.01 + 0.85 * np.where(degrees > 0, sums, 0.0)
    assert np.allclose(rank, want, rtol=1e-9)
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        assert np.array_equal(ranks(threads), rank)


@pytest.mark.parametrize("n", [0, 1, 5, 3000, 40_000])
def test_frontier_count(twins, n):
    """frontier_count: the next queue's length and out-degree sum from a single call, its counter
    emptied; the GPU twin reads the length on the device (a grid-stride kernel) and leaves its
    work array at zero for the next call."""
    rng = np.random.default_rng(n)
    degree = rng.integers(0, 50, 100_000).astype(np.int64)
    queue = rng.integers(0, degree.size, max(n, 1) + 7).astype(np.int64)
    work = twins.put(np.zeros(2, np.int64))
    for _ in range(2):
        out = twins.put(np.full(2, -1, np.int64))
        next_len = twins.put(np.array([n], np.int64))
        twins.frontier.frontier_count(twins.put(degree), twins.put(queue), next_len, work, out)
        assert twins.get(out).tolist() == [n, int(degree[queue[:n]].sum())]
        assert twins.get(next_len).tolist() == [0]
        assert twins.get(work).tolist() == [0, 0]


@pytest.mark.gpu
@pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")
@pytest.mark.parametrize("qlen", [0, 1, 1023, 1025, 1 << 15, (1 << 15) + 1, 200_000])
def test_frontier_offsets_on_gpu(qlen):
    """The exclusive scan of a queue's degrees, by one block (short queues) or CuPy's cumsum."""
    import cupy
    from kernels_gpu.frontier import frontier_offsets
    rng = np.random.default_rng(qlen)
    degree = rng.integers(0, 40, 300_000)
    indptr = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    queue = rng.integers(0, degree.size, qlen + 3).astype(np.int64)
    offs = frontier_offsets(cupy.asarray(indptr), cupy.asarray(queue), qlen)
    want = np.concatenate([[0], np.cumsum(degree[queue[:qlen]])])
    if qlen:
        assert np.array_equal(offs.get()[:qlen + 1], want)
    else:
        assert offs is None


@njit(parallel=True)
def _blocks_parallel(indptr, queue, qlen):
    offsets, nblocks = frontier_blocks(indptr, queue, qlen)
    for _ in prange(1):     # a caller with a parfor of its own, as the kernels are
        pass
    return offsets, nblocks


@njit
def _blocks_serial(indptr, queue, qlen):
    return frontier_blocks(indptr, queue, qlen)


@pytest.mark.parametrize("qlen", [0, 1, 1023, 16_383, 16_384, 200_001])
def test_frontier_blocks(qlen):
    """The CPU kernels' scan of a queue's degrees, inlined: serial below PARALLEL_QUEUE items,
    two parallel passes above it in a kernel's parallel copy, a plain loop in its serial one."""
    rng = np.random.default_rng(qlen)
    degree = rng.integers(0, 40, 300_000)
    indptr = np.concatenate([[0], np.cumsum(degree)]).astype(np.int64)
    queue = rng.integers(0, degree.size, qlen + 3).astype(np.int64)
    want = np.concatenate([[0], np.cumsum(degree[queue[:qlen]])])
    for caller in (_blocks_parallel, _blocks_serial):
        offsets, nblocks = caller(indptr, queue, qlen)
        assert np.array_equal(offsets, want)
        assert nblocks == max(1, min(BLOCKS * 4, want[-1] // EDGES_PER_BLOCK))


def test_prefetch_is_only_a_hint():
    """kernels_cpu.atomics.prefetch compiles, changes nothing and never faults, whatever the
    index (the edge loops prefetch up to PREFETCH items past what they read)."""
    from kernels_cpu.atomics import prefetch

    @njit
    def total(a, ahead):
        s = 0.0
        for i in range(a.size):
            prefetch(a, i + ahead)
            s += a[i]
        return s

    a = np.arange(1000, dtype=np.float64)
    for ahead in (0, 16, 1 << 20, -(1 << 20)):
        assert total(a, ahead) == a.sum()


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("kind", ["random", "sorted", "reversed", "few values"])
def test_sort_range(dtype, kind):
    """sort_range sorts exactly the range it is given, as np.sort does, on every input shape
    that sends quicksort down a different path (short ranges, runs, many equal keys)."""
    from kernels_cpu.sorting import sort_range
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 16, 17, 40, 1000, 50000):
        a = rng.integers(0, 1 << 30, n).astype(dtype)
        if kind == "sorted":
            a.sort()
        elif kind == "reversed":
            a = np.sort(a)[::-1].copy()
        elif kind == "few values":
            a = rng.integers(0, 3, n).astype(dtype)
        lo, hi = n // 4, n - n // 5
        b = a.copy()
        sort_range(b, lo, hi)
        expected = a.copy()
        expected[lo:hi] = np.sort(a[lo:hi])
        assert (b == expected).all(), n


def test_progress_reports_compiling():
    """On a terminal a run says which kernel Numba is compiling and, at the end, how many it
    compiled and how long that took; a disabled Progress writes nothing."""
    import io
    from numba import njit
    from totem_py.progress import Progress

    def fresh(x):
        return x + 1

    quiet, loud = io.StringIO(), io.StringIO()
    Progress(enabled=False, stream=quiet)
    p = Progress(enabled=True, stream=loud)
    njit(fresh)(1)
    p.compile_summary()
    assert "compiling fresh" in loud.getvalue()
    assert "compiled 1 kernel in" in loud.getvalue()
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("mirror", [False, True])
def test_group_edges_is_a_stable_counting_sort_by_block(mirror):
    """The loader's grouping of generated edges by destination rank (parallel runs): the same
    entries, in the same order, as a plain stable sort of the entries by block."""
    from kernels_cpu.ranks import GROUP_PIECES, group_edges
    rng = np.random.default_rng(3)
    n, m = 1000, 10 * GROUP_PIECES + 7
    src, dst = rng.integers(0, n, m).astype(np.int32), rng.integers(0, n, m).astype(np.int32)
    dst[:20] = src[:20]                                         # loops are not mirrored
    bounds = np.array([0, 10, 400, 401, 1000], dtype=np.int64)  # one block of a single vertex
    rows, targets = src, dst
    if mirror:
        keep = src != dst
        rows = np.stack([src, np.where(keep, dst, -1)], axis=1).ravel()
        targets = np.stack([dst, src], axis=1).ravel()[rows >= 0]
        rows = rows[rows >= 0]
    order = np.argsort(np.searchsorted(bounds, rows, side="right"), kind="stable")
    counts = np.zeros(bounds.size - 1, np.int64)
    out_rows, out_targets = np.empty(rows.size, np.int32), np.empty(rows.size, np.int32)
    group_edges(src, dst, bounds, mirror, counts, out_rows, out_targets)
    assert np.array_equal(out_rows, rows[order]) and np.array_equal(out_targets, targets[order])
    assert np.array_equal(counts, np.diff(np.searchsorted(rows[order], bounds)))


@pytest.mark.parametrize("mirror", [False, True])
def test_csr_builds_are_stable_counting_sorts_by_row(mirror):
    """The CSR builds of kernels_cpu/csr.py with rows in several blocks (one of a single row, one
    empty): each row's entries in the entries' order, as a stable sort by row gives them; the
    transpose's rows list their sources in ascending order."""
    from kernels_cpu import csr
    rng = np.random.default_rng(4)
    n, m = 1000, 5000
    src, dst = rng.integers(0, n, m).astype(np.int32), rng.integers(0, n, m).astype(np.int32)
    dst[:20] = src[:20]                                         # loops are not mirrored
    w = rng.random(m)
    bounds = np.array([0, 10, 400, 401, 401, 1000], dtype=np.int64)
    keep = (src != dst) | (not mirror)
    rows = np.concatenate([src, dst[keep] if mirror else dst[:0]]).astype(np.int64)
    targets = np.concatenate([dst, src[keep] if mirror else src[:0]])
    weights = np.concatenate([w, w[keep] if mirror else w[:0]])
    order = np.argsort(rows, kind="stable")
    if mirror:      # entry e's mirror comes right after it in the entries' order
        at = np.concatenate([2 * np.arange(m), 2 * np.flatnonzero(keep) + 1])
        order = np.lexsort((at, rows))
    indptr = np.zeros(n + 1, np.int64)
    csr.count_rows(src, dst, mirror, bounds, indptr)
    assert np.array_equal(indptr[1:], np.bincount(rows, minlength=n))
    np.cumsum(indptr, out=indptr)
    indices, out_w = np.empty(rows.size, np.int32), np.empty(rows.size)
    csr.place_rows(src, dst, w, True, mirror, bounds, indptr, indices, out_w)
    csr.restore_indptr(indptr)
    assert np.array_equal(indices, targets[order]) and np.array_equal(out_w, weights[order])
    t_indptr = np.zeros(n + 1, np.int64)
    csr.count_rows(indices, indices, False, bounds, t_indptr)
    np.cumsum(t_indptr, out=t_indptr)
    t_indices, t_w = np.empty_like(indices), np.empty(rows.size)
    csr.place_transposed(indptr, indices, out_w, True, bounds, t_indptr, t_indices, t_w)
    csr.restore_indptr(t_indptr)
    back = np.lexsort((rows[order], targets[order]))
    assert np.array_equal(t_indptr[1:], np.cumsum(np.bincount(targets, minlength=n)))
    assert np.array_equal(t_indices, rows[order][back]) and np.array_equal(t_w, out_w[back])
    assert all(np.array_equal(a, b) for a, b in zip(csr.transpose(indptr, indices, out_w),
                                                    (t_indptr, t_indices, t_w)))


def test_sort_by_high_word_equals_a_sort_of_key_and_position():
    """plan_fill's sort of (key, position) pairs: NumPy's order of the packed values, for
    ranges below and above RADIX, negative and positive keys, many ties or none, in place
    between untouched neighbours."""
    from kernels_cpu.sorting import RADIX, sort_by_high_word
    rng = np.random.default_rng(1)
    for n in (1, 2, 17, RADIX - 1, RADIX, 100, 1000, 50000):
        for spread in (3, 1000, 1 << 31):
            key = rng.integers(-spread, spread, n).astype(np.int64)
            a = np.full(n + 5, -7, dtype=np.int64)
            a[2:2 + n] = (key << 32) | np.arange(n)
            want = a.copy()
            want[2:2 + n].sort()
            sort_by_high_word(a, 2, 2 + n)
            assert np.array_equal(a, want), (n, spread)


def test_threaded_searchsorted_equals_numpy():
    """The plans' lookups cut over threads: NumPy's answer for sorted and unsorted keys, present
    or not, below the first and past the last entry, on one thread and on two."""
    from kernels_cpu.ranks import THREADED_SEARCH, searchsorted
    rng = np.random.default_rng(5)
    a = np.unique(rng.integers(0, 1 << 30, THREADED_SEARCH))
    keys = np.concatenate([rng.choice(a, THREADED_SEARCH), rng.integers(-5, (1 << 30) + 5, 999)])
    before = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
            for v in (keys, np.sort(keys), keys[:100]):
                assert np.array_equal(searchsorted(a, v), np.searchsorted(a, v))
    finally:
        numba.set_num_threads(before)


def test_partition_orders_against_numpy():
    """kernels_cpu/order.py, both forms: the serpentine deal against its definition, sorted_ids
    against np.sort, prefix_reaching against np.searchsorted of the cumulative sums, take."""
    from kernels_cpu import order
    from partitioners.plan import serpentine
    rng = np.random.default_rng(3)
    for n in (0, 1, 5, 1000):
        items = rng.permutation(3 * n + 1)[:n]
        for form in ("serial", "parallel"):
            for parts in (1, 2, 3, 7):
                dealt, ptr = getattr(order.serpentine_deal, form)(items, parts)
                part = serpentine(n, parts)
                for k in range(parts):
                    assert np.array_equal(dealt[ptr[k]:ptr[k + 1]], items[part == k])
            values = rng.integers(0, 9, n)
            for target in (0.5, 1, values.sum() / 3, values.sum(), values.sum() + 1):
                want = int(np.searchsorted(np.cumsum(values), target)) + 1
                assert getattr(order.prefix_reaching, form)(values, target) == want
            idx = rng.integers(0, max(n, 1), n)
            assert np.array_equal(getattr(order.take, form)(items, idx), items[idx])
        for ids in (items, items[:n // 20]):
            assert np.array_equal(order.sorted_ids(ids), np.sort(ids))


def test_block_partitions_are_consecutive_ranges_of_equal_weight():
    """BLOCK: the CPU partition is the shortest prefix of ids holding cpu_share of the edges;
    GPU partitions and ranks are consecutive ranges, none heavier than an equal share of
    vertices + edges by more than its heaviest vertex; the ranks' ranges are the ones
    `distributed.deal` computes piece by piece."""
    import totem_py
    from partitioners import partition
    from partitioners.plan import block_parts, deal_to_ranks
    g = totem_py.generate("rmat:10", undirected=True)
    weight = g.out_degree + 1
    for share, gpus in ((0.5, 1), (0.3, 3), (0.0, 2), (1.0, 1)):
        plan = partition(g, "BLOCK", share, gpus)
        ranges = [np.sort(p) for p in plan.gvids]     # gvids: in local order
        assert np.array_equal(np.concatenate(ranges), np.arange(g.n_vertices))
        cpu = ranges[0].size if plan.kinds[0] == "cpu" else 0
        edges = np.cumsum(g.out_degree)
        assert cpu == min(int(np.searchsorted(edges, share * g.n_edges)) + 1, g.n_vertices) \
            or share in (0.0, 1.0)
        gpu = [r for r, k in zip(ranges, plan.kinds) if k == "gpu"]
        if gpu:
            total = sum(int(weight[r].sum()) for r in gpu)
            assert max(int(weight[r].sum()) for r in gpu) <= total / len(gpu) + weight.max()
    for ranks in (2, 3):
        shares = deal_to_ranks(g, ranks, "BLOCK")
        assert np.array_equal(np.concatenate(shares), np.arange(g.n_vertices))
        pieces = np.array_split(np.arange(g.n_vertices), 4)     # as ranks' home blocks
        before = np.cumsum([0] + [int(weight[b].sum()) for b in pieces])
        by_piece = np.concatenate([block_parts(g.out_degree[b], ranks, before[k], before[-1])
                                   for k, b in enumerate(pieces)])
        assert np.array_equal(by_piece, np.repeat(np.arange(ranks), [s.size for s in shares]))


def test_partition_weights_float32_only_where_exact():
    """A plan's views hold the weights as float32 when every one is a float32 exactly, else
    as float64; SSSP's distances are the reference's either way."""
    import totem_py
    from totem_py.graph import Graph
    for weights, dtype in (([1.0, 2.5, 255.0, 3.0], np.float32),
                           ([1.0, 0.1, 2.0, 3.0], np.float64)):
        g = Graph.from_edges([0, 0, 1, 2], [1, 2, 3, 3], n_vertices=4, weights=weights)
        res = totem_py.run(g, "sssp", cpu_share=1.0, device="cpu", source=0, verify=True)
        assert all(v.weights.dtype == dtype for v in res.plan.views("out"))
        assert res.metrics["verified"]
