"""Edges read from a .tcsr file (--host-memory, partitioners/spill.py, bsp/stream.py's
FileStream): every algorithm gives the same values as the run on the graph in memory (and
PageRank-Delta, asynchronous within a superstep, values within its tolerance and verified), on cpu
and emulated devices, several partitionings and cpu shares, with a cap so small that every
partition reads many pages; the JSON counts the bytes read per superstep; the memory check
leaves the edges out; bad uses are exit 2."""

import json

import numpy as np
import pytest

import totem_py
from bsp.stream import FileStream
from totem_py import generate, store
from totem_py.algorithms import ALGORITHMS
from totem_py.backend import cuda_device_count
from totem_py.errors import stage_bytes
from totem_py.harness import memory_stages

from tests.support.cli import run_here
from tests.support.toys import toy_graphs, with_random_weights

CAP = 2048          # bytes of edges held: pages of a few dozen edges
ON_GPU = [pytest.mark.gpu, pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")]
CONFIGS = [("cpu", "HIGH", 1.0, 1), ("emulated", "HIGH", 0.5, 1), ("emulated", "RAND", 0.3, 2),
           ("emulated", "LOW", 0.0, 2), ("emulated", "HIGH", 0.0, 1),
           pytest.param("gpu", "HIGH", 0.3, 2, marks=ON_GPU)]


def graphs():
    return {"weighted": with_random_weights(generate("rmat:9", seed=4), 5),
            "undirected": generate("rmat:8", seed=3, undirected=True),
            "chain": toy_graphs()["chain"]}


def same(a, b):
    if np.issubdtype(np.asarray(a).dtype, np.floating):
        return np.allclose(a, b, rtol=1e-6, atol=1e-12, equal_nan=True)
    return np.array_equal(a, b)


@pytest.mark.parametrize("name", sorted(graphs()))
@pytest.mark.parametrize("device,strategy,share,gpus", CONFIGS)
def test_every_algorithm_gives_the_same_values_from_the_file(name, device, strategy, share,
                                                             gpus, tmp_path):
    g = graphs()[name]
    path = tmp_path / "g.tcsr"
    store.write(g, path)
    # the shipped ones: other tests of the same process register theirs (examples/kcore.py)
    for alg in [a for a, cls in ALGORITHMS.items() if cls.__module__.startswith("totem_py.")]:
        opts = dict(device=device, partition=strategy, cpu_share=share, gpus=gpus,
                    source=1 if alg in ("bfs", "sssp", "bc") else None)
        want = totem_py.run(g, alg, **opts).values
        got = totem_py.run(store.mapped(path), alg, host_memory=CAP, verify=True, **opts)
        if alg == "pagerank_delta":     # asynchronous: each page's pushes reach the next pages
            assert np.allclose(want, got.values, rtol=0.02), (name, device, strategy, share)
        else:
            assert same(want, got.values), (name, alg, device, strategy, share)
        views = [v for p in got.engine.parts for v in p.placed_views()]
        streams = [v.stream for v in views]
        assert streams and all(isinstance(s, FileStream) for s in streams)
        if len(views) == 1 and not g.directed:      # one partition reads the file in place
            assert views[0].host.edge_file.path == str(path), (name, alg)
            assert streams[0].wwidth == 0               # unit weights: never read
        assert "read_bytes" in got.metrics["transfer"]
        if g.n_edges > 100:
            assert min(s.starts.size - 1 for s in streams) > 1      # several pages each


@pytest.mark.parametrize("device", ["emulated", pytest.param("gpu", marks=ON_GPU)])
@pytest.mark.parametrize("alg", ["pagerank", "bfs"])
def test_a_gpu_keeps_pages_in_its_page_cache(alg, device, tmp_path):
    """With a device budget beyond the staging buffers, a GPU partition serves pages from its
    page cache: fewer bytes read from the file, the same values; more budget, fewer reads. (A
    real GPU without --gpu-memory gives the cache the free device memory, an emulated one none.)"""
    g = generate("rmat:10", seed=1)
    path = tmp_path / "g.tcsr"
    store.write(g, path)
    opts = dict(device=device, partition="HIGH", cpu_share=0.3,
                source=1 if alg == "bfs" else None)
    want = totem_py.run(g, alg, **opts).values
    read = []
    for budget in (1, 20_000, 200_000, None):
        got = totem_py.run(store.mapped(path), alg, host_memory=4096, gpu_memory=budget,
                           verify=True, **opts)
        assert same(want, got.values), (alg, budget)
        t = got.metrics["transfer"]
        cached = budget != 1 and (budget is not None or device == "gpu")
        assert (t["cached_pages"] > 0) == cached, budget
        read.append(t["read_bytes"])
    assert read[0] > read[1] > read[2]
    assert read[3] <= read[2] if device == "gpu" else read[3] == read[0]


def test_no_trials_reads_the_file_once(tmp_path):
    """--trials 0: one timed run and no warm-up, so the edges are read from the file once."""
    path = tmp_path / "g.tcsr"
    store.write(generate("rmat:9", seed=2), path)
    read = []
    for trials in (0, 1):
        graph = store.mapped(path)
        got = totem_py.run(graph, "pagerank", device="cpu", host_memory=CAP, trials=trials)
        assert len(got.metrics["trials_s"]) == 1
        read.append(got.engine.parts[0].views["in"].host.edge_file.read_bytes)
    assert 0 < read[0] and 2 * read[0] == read[1]


def test_default_source_and_a_graph_loaded_whole(tmp_path):
    """Without --source the default one comes from the engine's components; a graph loaded
    whole is opened again from its file."""
    g = generate("rmat:8", seed=2)
    path = tmp_path / "g.tcsr"
    store.write(g, path)
    want = totem_py.run(store.load(path), "bfs", device="emulated")
    got = totem_py.run(store.load(path), "bfs", device="emulated", host_memory=CAP)
    assert got.metrics["source"] == want.metrics["source"]
    assert np.array_equal(got.values, want.values)
    assert got.metrics["host_memory"] == CAP


def test_the_memory_check_leaves_the_edges_out():
    cls = ALGORITHMS["pagerank"]
    small = stage_bytes(1000, 10, False, memory_stages(cls, True, 1 << 20))
    large = stage_bytes(1000, 10 ** 12, False, memory_stages(cls, True, 1 << 20))
    assert small == large < stage_bytes(1000, 10 ** 12, False, memory_stages(cls, True))


def test_edges_over_the_available_memory_stay_in_the_file(tmp_path, monkeypatch):
    from types import SimpleNamespace
    from totem_py import errors
    from totem_py.run import edges_stay
    path = tmp_path / "g.tcsr"
    store.write(generate("rmat:8", seed=2), path)
    args = SimpleNamespace(graph=str(path), undirected=False, relabel=False)
    assert not edges_stay(args, None)
    monkeypatch.setattr(errors, "available_memory", lambda: 1000)
    assert edges_stay(args, None)


def cli(*args):
    return run_here("--quiet", *args)


def test_the_command_reads_pages_and_records_the_bytes(tmp_path):
    path = tmp_path / "g.tcsr"
    store.write(generate("rmat:9", seed=1), path)
    out = tmp_path / "m.json"
    r = cli("--graph", str(path), "--algorithm", "pagerank", "--device", "emulated",
            "--host-memory", "4K", "--json", str(out))
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    steps = m["per_superstep"]
    assert all(s["read_bytes"] > 0 and s["pages"] > 0 for s in steps)
    assert m["transfer"]["read_bytes"] == sum(s["read_bytes"] for s in steps)


@pytest.mark.parametrize("args,words", [
    (["--graph", "rmat:6", "--host-memory", "1M"], ".tcsr"),
    (["--host-memory", "0"], "--host-memory"),
    (["--host-memory", "1M", "--undirected"], "--undirected")])
def test_bad_uses_are_one_line_and_exit_2(args, words, tmp_path):
    path = tmp_path / "g.tcsr"
    store.write(generate("rmat:6", seed=1), path)
    full = args if "--graph" in args else ["--graph", str(path), *args]
    r = cli(*full)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1
