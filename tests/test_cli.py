"""The run command's contract: options, outputs, exit codes and one-line errors."""

import json
import sys

import numpy as np
import pytest

from totem_py.algorithms import bfs

from tests.support import TEST_DATA as DATA
from tests.support.cli import assert_usage_error, run_cli, run_here


@pytest.mark.slow
def test_default_run_is_bfs_high_with_a_gpu_partition(tmp_path):
    out = tmp_path / "m.json"
    proc = run_here("--json", out, "--verify")
    assert proc.returncode == 0, proc.stderr
    m = json.loads(out.read_text())
    assert m["algorithm"] == "bfs" and m["partition"] == "HIGH" and m["verified"] is True
    assert [p["kind"] for p in m["partitions"]] == ["cpu", "gpu"]
    assert m["graph"]["spec"].startswith("rmat:")
    assert "MTEPS" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "pagerank", "cc", "bc", "pagerank_delta"])
def test_output_and_json(tmp_path, algorithm):
    out, js = tmp_path / "r.npy", tmp_path / "m.json"
    source = ("--source", 0) if algorithm in ("bfs", "sssp", "bc") else ()
    proc = run_here("--graph", DATA / "tiny.txt", "--algorithm", algorithm, *source,
                   "--partition", "RAND", "--cpu-share", 0.3, "--gpus", 2, "--device",
                   "emulated", "--output", out, "--json", js, "--verify", "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    values = np.load(out)
    m = json.loads(js.read_text())
    for key in ("algorithm", "graph", "partition", "cpu_share", "device", "partitions", "time_s",
                "trials_s", "teps", "supersteps", "per_superstep", "transfer", "verified"):
        assert key in m
    for key in ("kind", "vertices", "edges", "boundary_edges", "on_gpu_bytes", "on_host_bytes"):
        assert key in m["partitions"][0]
    step = m["per_superstep"][0]
    for key in ("compute_s", "exchange_s", "messages", "active_vertices", "engines", "h2d_bytes"):
        assert key in step
    assert len(step["compute_s"]) == len(m["partitions"])
    import totem_py
    g = totem_py.load(DATA / "tiny.txt")
    if algorithm == "bfs":
        assert np.array_equal(values, bfs.levels(g, 0))
    assert values.shape == (g.n_vertices,)


@pytest.mark.parametrize("args, words", [
    (["--graph", "tests/data/missing.txt"], ["missing.txt"]),
    (["--graph", "tests/data/tiny.txt", "--source", "999"], ["--source", "999"]),
    (["--graph", "tests/data/tiny.txt", "--cpu-share", "1.5"], ["--cpu-share"]),
    (["--graph", "tests/data/tiny.txt", "--cpu-share", "-0.1"], ["--cpu-share"]),
    (["--graph", "tests/data/tiny.txt", "--partition", "MIDDLE"], ["--partition"]),
    (["--graph", "tests/data/tiny.txt", "--algorithm", "nope"], ["--algorithm"]),
    (["--graph", "tests/data/tiny.txt", "--bogus"], ["--bogus"]),
    (["--graph", "rmat:40"], ["GiB"]),
    (["--graph", "tests/data/tiny.unknown"], ["tiny.unknown"]),
    (["--graph", "tests/data/tiny.txt", "--gpu-memory", "lots"], ["--gpu-memory"]),
    (["--graph", "tests/data/tiny.txt", "--gpu-memory", "16"], ["--gpu-memory", "bytes"]),
])
def test_bad_usage_exits_2_with_one_line(args, words):
    assert_usage_error(run_here(*args), *words)


@pytest.mark.slow
def test_auto_share_fits_the_gpu_budget(tmp_path):
    js = tmp_path / "m.json"
    proc = run_here("--graph", "rmat:12", "--cpu-share", "auto", "--gpu-memory", "256K",
                   "--device", "emulated", "--json", js, "--quiet", "--verify")
    assert proc.returncode == 0, proc.stderr
    m = json.loads(js.read_text())
    assert m["cpu_share_auto"] and 0 < m["cpu_share"] < 1
    gpu = [p for p in m["partitions"] if p["kind"] == "gpu"]
    assert gpu and all(0 < p["on_gpu_bytes"] <= 256 * 1024 for p in gpu)


def test_gpu_budget_counts_what_the_process_can_take_back(monkeypatch):
    """Without --gpu-memory the budget is 80% of the device's free memory plus the blocks
    CuPy's pool keeps cached, after unreferenced partitions are collected (a stand-in CuPy:
    the driver reports 1000 bytes free, the pool holds 500 spare, and a collected cycle
    would have given 200 back to the driver)."""
    import gc
    import sys
    import types

    from totem_py.harness import gpu_budget

    driver = {"free": 1000}

    class Held:                       # device memory a dropped partition still holds
        def __del__(self):
            driver["free"] += 200

    cycle = Held()
    cycle.me = cycle
    del cycle
    pool = types.SimpleNamespace(free_bytes=lambda: 500)
    fake = types.SimpleNamespace(
        cuda=types.SimpleNamespace(runtime=types.SimpleNamespace(
            memGetInfo=lambda: (driver["free"], 4000))),
        get_default_memory_pool=lambda: pool)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    gc.disable()
    try:
        assert gpu_budget("gpu", None) == int(0.8 * (1200 + 500))
    finally:
        gc.enable()
    assert gpu_budget("gpu", 123) == 123
    assert gpu_budget("emulated", None) is None


@pytest.mark.slow
def test_zerocopy_keeps_edges_on_the_host(tmp_path):
    js = tmp_path / "m.json"
    proc = run_here("--graph", "rmat:12", "--cpu-share", "0.2", "--gpu-memory", "1K",
                   "--transfer", "zerocopy", "--device", "emulated", "--json", js, "--quiet")
    assert proc.returncode == 0, proc.stderr
    gpu = [p for p in json.loads(js.read_text())["partitions"] if p["kind"] == "gpu"]
    assert all(p["on_gpu_bytes"] == 0 and p["on_host_bytes"] > 0 for p in gpu)


@pytest.mark.slow
def test_negative_weights_for_sssp(tmp_path):
    f = tmp_path / "neg.wel"
    f.write_text("0 1 2.0\n1 2 -1.5\n")
    assert_usage_error(run_cli("--graph", f, "--algorithm", "sssp", "--source", 0),
                       "neg.wel", "non-negative")


@pytest.mark.slow
def test_device_gpu_without_a_gpu_is_a_usage_error():
    from totem_py.backend import cuda_device_count
    if cuda_device_count():
        pytest.skip("this machine has a GPU")
    assert_usage_error(run_here("--graph", "tests/data/tiny.txt", "--device", "gpu"),
                       "--device gpu")


def test_failed_verification_exits_3(monkeypatch):
    import importlib
    from totem_py.algorithms import BFS
    cli = importlib.import_module("totem_py.run")
    monkeypatch.setattr(BFS, "verify",
                        lambda self, graph, values: "vertex 3: level 2 but no parent at level 1")
    code = cli.cli(["--graph", str(DATA / "tiny.txt"), "--verify", "--quiet", "--source", "0"])
    assert code == 3


def test_api_run_survives_importing_the_cli_module():
    import importlib
    import totem_py
    importlib.import_module("totem_py.run")
    r = totem_py.run(totem_py.load(DATA / "tiny.txt"), "cc", device="cpu")
    assert list(r.values) == [0, 0, 0, 0, 4, 0]


@pytest.mark.slow
def test_nothing_half_written_on_bad_input(tmp_path):
    out = tmp_path / "r.npy"
    proc = run_here("--graph", "tests/data/tiny.txt", "--source", "999", "--output", out)
    assert proc.returncode == 2 and not out.exists()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_forced_transfer_engine_streams(tmp_path):
    js = tmp_path / "m.json"
    proc = run_here("--graph", "rmat:12", "--transfer", "filter", "--gpu-memory", "64K",
                   "--chunk-bytes", "2K", "--cpu-share", "0", "--device", "emulated",
                   "--json", js, "--quiet", "--verify")
    assert proc.returncode == 0, proc.stderr
    t = json.loads(js.read_text())["transfer"]
    assert t["filter_bytes"] > 0 and t["compaction_bytes"] == t["zerocopy_bytes"] == 0
    proc = run_here("--graph", "tests/data/tiny.txt", "--transfer", "sideways", "--quiet")
    assert_usage_error(proc, "--transfer")


@pytest.mark.slow
@pytest.mark.parametrize("graph, algorithm, budget", [
    ("rmat:18", "bfs", "8M"),
    ("rmat:18", "sssp", "8M"),      # weighted: 12 bytes an edge
    # the same at the size it was reported at (the rmat:18 sssp case takes the same path)
    pytest.param("rmat:22", "sssp", "512M", marks=pytest.mark.extended),
])
def test_the_default_chunks_shrink_to_fit_a_small_budget(tmp_path, graph, algorithm, budget):
    """Without --chunk-bytes the chunks follow the budget: 32 MB chunks' staging buffers would
    not fit these budgets, smaller ones do; the edges stream and the result verifies."""
    js = tmp_path / "m.json"
    proc = run_here("--graph", graph, "--algorithm", algorithm, "--gpu-memory", budget,
                   "--cpu-share", "0", "--transfer", "filter", "--device", "emulated",
                   "--json", js, "--quiet", "--verify")
    assert proc.returncode == 0, proc.stderr
    m = json.loads(js.read_text())
    assert m["verified"] is True and m["transfer"]["filter_bytes"] > 0


@pytest.mark.slow
def test_gpu_cache_option(tmp_path):
    """--gpu-cache takes part of --gpu-memory for the cache of hot streamed rows (BC reads each
    reached row twice, forward and backward: the cache serves some of them); bad sizes are
    usage errors."""
    js = tmp_path / "m.json"
    proc = run_here("--graph", "rmat:12", "--algorithm", "bc", "--gpu-memory", "160K",
                   "--gpu-cache", "16K", "--chunk-bytes", "2K", "--cpu-share", "0",
                   "--device", "emulated", "--json", js, "--quiet", "--verify")
    assert proc.returncode == 0, proc.stderr
    m = json.loads(js.read_text())
    t = m["transfer"]
    assert m["gpu_cache"] == 16 << 10 and t["cache_capacity_bytes"] == 16 << 10
    assert t["cache"] > 0 and t["cache_bytes"] > 0
    assert all("cache" in s for s in m["per_superstep"] if "chunks" in s)
    for bad, words in (("lots", "cannot read 'lots'"), ("-1024", "at least 0")):
        proc = run_here("--graph", "tests/data/tiny.txt", "--gpu-cache", bad, "--quiet")
        assert_usage_error(proc, "--gpu-cache", words)


@pytest.mark.slow
def test_version_and_defaults_in_help():
    from totem_py import __version__
    proc = run_here("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"totem_py {__version__}", proc.stderr
    text = " ".join(run_here("--help").stdout.split())
    for shown in ("RAND or BLOCK (default HIGH)", "partitions (default 1)",
                  "small graphs only) (default auto)", "split into (default 32M, or smaller"):
        assert shown in text
