"""The configuration matrix on a real GPU (`python -m pytest -m gpu` on the GPU machine): every
algorithm x HIGH/LOW/RAND x cpu shares x 1 to 4 GPU partitions (several may share a device) against
the serial references, on the toy graphs, on ../shared/data (or $TOTEM_DATA) and on generated
graphs of a few million edges; streamed edges under every local order (`hub_sort`). Skips where CuPy sees no CUDA device."""

import pytest

from totem_py.backend import cuda_device_count

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")]

from bsp import EdgeOptions  # noqa: E402
from tests.support.matrix import REAL, STRATEGIES, TOYS, check_matrix, real_graph  # noqa: E402
from tests.support.stream import (cached_streaming, check_sorted_mapped,  # noqa: E402
                                  check_sorted_segments, streaming)
from tests.support.toys import with_random_weights  # noqa: E402

GPU = ("gpu",)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(TOYS))
def test_toy_graphs_on_gpu(name, strategy):
    check_matrix(with_random_weights(TOYS[name], seed=3), strategy, devices=GPU)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", REAL)
def test_real_graphs_on_gpu(name, strategy):
    check_matrix(real_graph(name), strategy, devices=GPU)


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", ["rmat_small", "disconnected", "star"])
def test_zerocopy_edges_on_gpu(name, strategy):
    check_matrix(with_random_weights(TOYS[name], seed=3), strategy, devices=GPU,
                 edges=EdgeOptions("zerocopy"))


@pytest.mark.parametrize("transfer", ("filter", "compaction", "zerocopy", "auto"))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_streamed_edges_on_gpu(transfer, strategy):
    """Edges over the budget stream from host memory: every engine, forced or chosen."""
    import totem_py
    for undirected in (True, False):
        g = with_random_weights(totem_py.generate("rmat:10", seed=4, undirected=undirected), 5)
        check_matrix(g, strategy, devices=GPU, shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=EdgeOptions(transfer, **streaming(g)))
    for name in ("rmat_small", "star", "disconnected"):
        g = with_random_weights(TOYS[name], seed=3)
        check_matrix(g, strategy, devices=GPU, shares=(0.0,), gpus_list=(1,),
                     edges=EdgeOptions(transfer, **streaming(g, chunk_bytes=8, fraction=0.0)))


@pytest.mark.usefixtures("often")
@pytest.mark.parametrize("transfer", ("filter", "compaction", "zerocopy", "auto"))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_streamed_edges_with_the_cache_on_gpu(transfer, strategy):
    """The GPU cache of hot rows (selected every 5% of n queue vertices here, so that it is
    refreshed and read many times) changes no result."""
    import totem_py
    for undirected in (True, False):
        g = with_random_weights(totem_py.generate("rmat:10", seed=4, undirected=undirected), 5)
        check_matrix(g, strategy, devices=GPU, shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=EdgeOptions(transfer, **cached_streaming(g)))


@pytest.mark.parametrize("transfer", ("zerocopy", "auto"))
def test_streamed_generated_graph_with_the_cache_on_gpu(transfer):
    """rmat:18 with a cache for a tenth of the edges, at the default selection period."""
    import totem_py
    g = totem_py.generate("rmat:18", seed=2, undirected=True, weighted=True)
    opts = streaming(g, chunk_bytes=1 << 20)
    check_matrix(g, "HIGH", devices=GPU, shares=(0.0,), gpus_list=(1,),
                 edges=EdgeOptions(transfer, cache=g.n_edges * 4 // 10, **opts))


@pytest.mark.parametrize("transfer", ("filter", "compaction", "zerocopy", "auto"))
@pytest.mark.parametrize("hub_sort", ("hytgraph", "off"))
def test_streamed_edges_on_gpu_under_other_orders(hub_sort, transfer):
    """The local orders besides the default ("degree", above): same answers, resident and
    streamed."""
    import totem_py
    for undirected in (True, False):
        g = with_random_weights(totem_py.generate("rmat:10", seed=4, undirected=undirected), 5)
        if transfer == "auto":      # resident edges once per order
            check_matrix(g, "HIGH", devices=GPU, shares=(0.5, 0.0), gpus_list=(1, 2),
                         hub_sort=hub_sort)
        check_matrix(g, "HIGH", devices=GPU, shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=EdgeOptions(transfer, **streaming(g)), hub_sort=hub_sort)


@pytest.mark.parametrize("transfer", ("zerocopy", "compaction", "auto"))
def test_streamed_segments_sorted_on_gpu(transfer, monkeypatch):
    check_sorted_segments(transfer, monkeypatch, "gpu")


def test_mapped_queues_sorted_on_gpu(monkeypatch):
    check_sorted_mapped(monkeypatch, "gpu")


@pytest.mark.parametrize("transfer", ("filter", "compaction", "zerocopy", "auto"))
def test_streamed_generated_graph_on_gpu(transfer):
    import totem_py
    g = totem_py.generate("rmat:18", seed=2, undirected=True, weighted=True)
    check_matrix(g, "HIGH", devices=GPU, shares=(0.0,), gpus_list=(1,),
                 edges=EdgeOptions(transfer, **streaming(g, chunk_bytes=1 << 20)))


@pytest.mark.parametrize("spec", ["rmat:18", "uniform:18"])
def test_generated_graphs_on_gpu(spec):
    import totem_py
    g = totem_py.generate(spec, seed=2, undirected=True, weighted=True)
    check_matrix(g, "HIGH", devices=GPU, shares=(0.7, 0.3, 0.0))
    check_matrix(g, "RAND", devices=GPU, shares=(0.5, 0.0), edges=EdgeOptions("zerocopy"))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_several_gpu_partitions_on_gpu(strategy):
    """2, 3 and 4 GPU partitions, with and without a CPU partition: their boxes, pulled values
    and flags move device to device (between the host's devices in turn, or within one)."""
    import totem_py
    for undirected in (True, False):
        g = with_random_weights(totem_py.generate("rmat:14", seed=6, undirected=undirected), 7)
        check_matrix(g, strategy, devices=GPU, shares=(0.0, 0.3), gpus_list=(2, 3, 4))
    check_matrix(real_graph("ca-GrQc.txt.gz"), strategy, devices=GPU, shares=(0.0, 0.3),
                 gpus_list=(3, 4))


def test_chunk_kernels_on_gpu_match_the_cpu_twins():
    """The per-chunk statistics the cost model reads, CUDA against Numba, on rows of mixed
    degrees (a tail of empty rows in one chunk, as generated graphs have)."""
    import cupy
    import numpy as np
    from bsp.stream import chunk_starts
    from kernels_cpu import chunks as kc
    from kernels_gpu import chunks as kg
    rng = np.random.default_rng(5)
    deg = np.concatenate([rng.integers(1, 300, 2000), rng.integers(0, 3, 50000),
                          np.zeros(200000, np.int64)])
    n = deg.size
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    starts = chunk_starts(indptr, n, 4, 4096)
    queue = rng.permutation(n)[:30000].astype(np.int64)
    reads = rng.integers(0, 3, n).astype(np.uint8)
    for weights in (0, 4, 8):
        want = np.zeros((3, starts.size - 1), np.int64)
        cid = np.empty(n, np.int64)
        cached = (rng.random(n) < 0.2).astype(np.uint8)      # cached rows count nowhere
        kc.chunk_stats(indptr, queue, queue.size, starts, 4, weights, cached, cid, *want)
        got = cupy.zeros_like(cupy.asarray(want))
        gcid = cupy.empty(n, np.int64)
        kg.chunk_stats(cupy.asarray(indptr), cupy.asarray(queue), queue.size,
                       cupy.asarray(starts), 4, weights, cupy.asarray(cached), gcid, *got)
        assert np.array_equal(got.get(), want)
        assert np.array_equal(gcid[:queue.size].get(), cid[:queue.size])
        kc.chunk_row_stats(indptr, reads, starts, 4, weights, *want)
        got.fill(0)
        kg.chunk_row_stats(cupy.asarray(indptr), cupy.asarray(reads), cupy.asarray(starts), 4,
                           weights, *got)
        assert np.array_equal(got.get(), want)
