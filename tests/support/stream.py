"""Options under which GPU partitions stream their edges (bsp/stream.py), with and without the
GPU cache of hot rows, and the checks that streamed rows come to the kernels in ascending order
(run on the emulated GPU by test_stream.py, on a real one by test_gpu.py). The fixture `often`
(conftest.py) makes the cache select and refresh many times."""

import numpy as np

import bsp.stream
from bsp import EdgeOptions
from bsp.partition import DeviceView
from totem_py import generate

from tests.support.matrix import check_matrix
from tests.support.toys import with_random_weights

TRANSFERS = ("filter", "compaction", "zerocopy", "auto")


def streaming(graph, chunk_bytes=64, fraction=0.3):
    """Options under which a GPU partition holding most of `graph` streams its edges: chunks of
    16 edges, a budget for the staging buffers plus `fraction` of the edges as 4-byte ids."""
    window = 4 * (chunk_bytes // 4 + int(graph.out_degree.max(initial=0)))
    budget = int(fraction * graph.n_edges * 4) + 3 * window * 12
    return dict(budget=budget, chunk_bytes=chunk_bytes)


def cache_bytes(graph, fraction=0.1):
    """A GPU cache for `fraction` of the edges as 4-byte ids (taken out of streaming()'s budget,
    which keeps 0.3 of them)."""
    return int(fraction * graph.n_edges * 4)


def cached_streaming(graph, chunk_bytes=64):
    """Options under which every algorithm's views stream in (almost) every configuration and
    have a cache: one chunk per copy (so that the staging buffers hold the longest row, not four
    rows of hubs), a cache for 5% of the edges as ids and 2% more for resident chunks. A
    directed graph's BFS splits the budget between two views, and CC reads rows of in- plus
    out-edges: hence 24 bytes per edge of the longest such row (3 buffers of ids and float32
    weights, or of ids in half the budget)."""
    deg = graph.out_degree if not graph.directed else \
        graph.out_degree + np.bincount(graph.indices, minlength=graph.n_vertices)
    window = max(int(deg.max(initial=0)), chunk_bytes // 4)
    cache = cache_bytes(graph, 0.05)
    return dict(budget=24 * window + cache + cache_bytes(graph, 0.02), chunk_bytes=chunk_bytes,
                merge=1, cache=cache)


def check_sorted_mapped(monkeypatch, device):
    """Edges in mapped host memory (zerocopy, no budget): the kernels get every queue
    ascending (SORT_ZEROCOPY 1), and the references' answers."""
    monkeypatch.setattr(bsp.stream, "SORT_ZEROCOPY", 1)
    seen = []
    segments = DeviceView.queue_segments

    def spy(self, queue, qlen, pieces=1):
        out = segments(self, queue, qlen, pieces)
        if self.host_bytes and qlen > 1:
            rows = out[0][3][:qlen]
            rows = rows.get() if device == "gpu" else rows
            seen.append(bool(np.all(np.diff(rows) >= 0)))
        return out
    monkeypatch.setattr(DeviceView, "queue_segments", spy)
    g = with_random_weights(generate("rmat:10", seed=4, undirected=True), 5)
    check_matrix(g, "HIGH", devices=(device,), shares=(0.0, 0.5), gpus_list=(1, 2),
                 edges=EdgeOptions("zerocopy"))
    assert len(seen) > 10 and all(seen)


def check_sorted_segments(transfer, monkeypatch, device):
    """Every zero-copy segment sorted (SORT_ZEROCOPY 1: also a queue that is one segment
    whole, copied first), and every compaction segment: the references' answers, and the
    kernels (or the gather) got ascending rows."""
    monkeypatch.setattr(bsp.stream, "SORT_ZEROCOPY", 1)
    seen = []
    ascending = bsp.stream.EdgeStream._ascending

    def spy(self, sub, length, shared, least=0):
        out = ascending(self, sub, length, shared, least)
        rows = out[:length].get() if device == "gpu" else out[:length]
        seen.append(bool(np.all(np.diff(rows) >= 0)))   # a GPU queue may repeat a vertex
        return out
    monkeypatch.setattr(bsp.stream.EdgeStream, "_ascending", spy)
    for name in ("rmat10u", "rmat10"):
        g = with_random_weights(generate("rmat:10", seed=4, undirected=name.endswith("u")), 5)
        check_matrix(g, "HIGH", devices=(device,), shares=(0.0, 0.5), gpus_list=(1,),
                     edges=EdgeOptions(transfer, **streaming(g)))
    assert len(seen) > 10 and all(seen)


def one_of_each(firsts, seconds):
    """Parameters (first, second) of every pair of `firsts` x `seconds`: the pairs that take each
    of `firsts` once and each of `seconds` at least once (first i with second i, round the
    seconds) in the default run, the others in the extended tier (pytest -m extended)."""
    import pytest
    return [(a, b) if j == i % len(seconds) else pytest.param(a, b, marks=pytest.mark.extended)
            for i, a in enumerate(firsts) for j, b in enumerate(seconds)]
