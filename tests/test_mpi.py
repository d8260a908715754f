"""The engine across MPI processes, every rank loading and partitioning only its share: the
configuration matrix at 1, 2 and 4 ranks (4 oversubscribed on a small machine) against the serial
references and the one-process plans, what `experiments.mpi_check` checks (every algorithm on
generated and real graphs against one process), the command under mpirun against one process,
and what a user sees when a rank fails, stops or was started differently. `pip install -e
.[test]` brings mpi4py and Open MPI's mpirun; these tests fail (not skip) without them.

Each mpirun launch costs seconds (MPI start-up, every rank loading the Numba kernels), so one
launch per rank count runs a whole matrix (tests/mpi_driver.py) and writes a report. The tests
of this file run one after the other in one pytest-xdist worker (its `xdist_group`, with
`--dist loadgroup` from pyproject.toml), one rank first: on an empty Numba cache one process
compiles the kernels and the later launches' ranks load them.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.support import ROOT, SHARED_DATA as SHARED
from tests.support.cli import run_here
from tests.support.mpi import launch, mpi_env, mpirun, one_error_line

WIKI = SHARED / "wiki-Vote.txt.gz"
needs_wiki = pytest.mark.skipif(not WIKI.exists(),
                                reason="../shared/data is not beside the checkout")
pytestmark = pytest.mark.xdist_group("mpi")


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [pytest.param(r, marks=pytest.mark.extended)
                                   for r in (1, 2)] + [4])
def test_matrix_matches_the_references_and_one_process_plans(ranks, tmp_path):
    report = tmp_path / "report.json"
    proc = launch(ranks, "tests/mpi_driver.py", report, "matrix")
    assert proc.returncode == 0, proc.stderr[-4000:]
    r = json.loads(report.read_text())
    assert r["ranks"] == ranks and r["runs"] > {1: 800, 2: 800, 4: 200}[ranks]
    assert r["plans"] == 200
    assert not r["failures"], "\n".join(r["failures"])
    if ranks == 4:     # the matrix did include ranks holding no edges at all
        assert r["rank_plans_without_edges"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [pytest.param(r, marks=pytest.mark.extended)
                                   for r in (1, 2)] + [4])
def test_every_algorithm_matches_one_process_on_generated_and_real_graphs(ranks, tmp_path):
    """`python -m experiments.mpi_check` in one launch per rank count (tests/mpi_driver.py
    acceptance): 3 generated graphs and 4 of ../shared/data converted to .tcsr (3 at 4 ranks;
    those of them that are there), every built-in algorithm of the registry."""
    from totem_py.algorithms import ALGORITHMS
    algorithms = [c for c in ALGORITHMS.values() if c.__module__.startswith("totem_py.algorithms.")]
    report = tmp_path / "report.json"
    proc = launch(ranks, "tests/mpi_driver.py", report, "acceptance")
    assert proc.returncode == 0, proc.stderr[-4000:]
    r = json.loads(report.read_text())
    real = ["facebook_combined.txt.gz", "wiki-Vote.txt.gz", "rome99.gr.gz", "road-usroads.mtx.gz"]
    want = ["rmat:12", "rmat:11", "uniform:11"] + [
        f for f in real[:4 if ranks <= 2 else 3] if (SHARED / f).exists()]
    assert r["ranks"] == ranks and r["graphs"] == want
    assert r["runs"] == len(algorithms) * len(want) >= 6 * len(want)
    assert not r["failures"], "\n".join(r["failures"])


@pytest.mark.slow
@pytest.mark.gpu
def test_two_ranks_sharing_the_gpu_match_the_references(tmp_path):
    """On the GPU machine (`pytest -m gpu`): the matrix with real GPU partitions, two ranks on
    one device."""
    from totem_py.backend import cuda_device_count
    if cuda_device_count() == 0:
        pytest.skip("no CUDA device")
    report = tmp_path / "report.json"
    proc = launch(2, "tests/mpi_driver.py", report, "matrix", "--devices", "gpu", timeout=600)
    assert proc.returncode == 0, proc.stderr[-4000:]
    r = json.loads(report.read_text())
    assert r["runs"] > 500 and not r["failures"], "\n".join(r["failures"])


@pytest.mark.slow
def test_command_on_two_ranks_matches_one_process(tmp_path):
    common = ["--graph", "rmat:11", "--undirected", "--algorithm", "sssp", "--partition", "RAND",
              "--cpu-share", "0.4", "--gpus", "2", "--device", "emulated", "--trials", "2",
              "--hub-sort", "hytgraph"]
    one = run_here(*common, "--output", tmp_path / "one.npy", "--quiet")
    assert one.returncode == 0, one.stderr
    proc = launch(2, "-m", "totem_py.run", *common, "--verify", "--output", tmp_path / "two.npy",
                  "--json", tmp_path / "two.json")
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.load(tmp_path / "one.npy"), np.load(tmp_path / "two.npy"))
    assert proc.stdout.count("graph rmat:11") == 1          # only rank 0 prints
    m = json.loads((tmp_path / "two.json").read_text())
    assert m["ranks"] == 2 and m["verified"] is True and m["hub_sort"] == "hytgraph"
    assert [p["rank"] for p in m["partitions"]] == [0, 0, 0, 1, 1, 1]
    assert [p["kind"] for p in m["partitions"]] == ["cpu", "gpu", "gpu"] * 2
    assert len(m["per_rank"]) == 2 and all(r["bytes_sent"] > 0 for r in m["per_rank"])
    step = m["per_superstep"][0]
    assert len(step["compute_s"]) == 6 and len(step["ranks"]) == 2
    for r in step["ranks"]:
        assert {"compute_s", "exchange_s", "vote_s", "bytes_sent"} <= set(r)
    assert sum(s["bytes_sent"] for s in m["per_superstep"]) == \
        sum(r["bytes_sent"] for r in m["per_rank"])
    assert all(10 << 20 < r["peak_rss_bytes"] < 10 << 30 for r in m["per_rank"])
    assert m["peak_rss_bytes"] == max(r["peak_rss_bytes"] for r in m["per_rank"])


@pytest.mark.slow
def test_a_deep_bfs_on_ranks_goes_async_on_every_block_at_once(tmp_path):
    """BLOCK over two ranks on a road grid: the ranks agree to take BFS's async path after
    HIGH_DIAMETER supersteps (every partition keeps its edges inside), the levels verified and
    equal to one process's, in fewer supersteps than a sync run."""
    common = ["--graph", "road:10", "--algorithm", "bfs", "--partition", "BLOCK", "--cpu-share",
              "0.5", "--device", "emulated", "--trials", "1"]
    one = run_here(*common, "--path", "sync-push-dd", "--output", tmp_path / "one.npy",
                   "--json", tmp_path / "one.json", "--quiet")
    assert one.returncode == 0, one.stderr
    proc = launch(2, "-m", "totem_py.run", *common, "--verify", "--output", tmp_path / "two.npy",
                  "--json", tmp_path / "two.json")
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.load(tmp_path / "one.npy"), np.load(tmp_path / "two.npy"))
    m = json.loads((tmp_path / "two.json").read_text())
    assert m["verified"] is True and m["ranks"] == 2
    assert "async-push-dd" in {r["path"] for r in m["per_superstep"]}
    assert m["supersteps"] < json.loads((tmp_path / "one.json").read_text())["supersteps"]


@pytest.mark.slow
@needs_wiki
def test_a_tcsr_file_on_two_ranks_matches_one_process_and_writes_per_rank(tmp_path):
    """A text graph converted once, read by byte range by each rank with --undirected; --output
    with {rank}: each rank writes its own vertices' (vertex, value) records, nothing gathered."""
    text = WIKI
    graph = tmp_path / "wiki.tcsr"
    conv = subprocess.run([sys.executable, "-m", "totem_py.convert", text, graph], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert conv.returncode == 0, conv.stderr
    common = ["--undirected", "--algorithm", "cc", "--device", "emulated", "--quiet"]
    one = run_here("--graph", text, *common, "--output", tmp_path / "one.npy")
    assert one.returncode == 0, one.stderr
    proc = launch(2, "-m", "totem_py.run", "--graph", graph, *common,
                  "--output", tmp_path / "part{rank}.npy")
    assert proc.returncode == 0, proc.stderr
    want = np.load(tmp_path / "one.npy")
    parts = [np.load(tmp_path / f"part{r}.npy") for r in range(2)]
    assert all(p.size > 0 and np.all(np.diff(p["vertex"]) > 0) for p in parts)
    got = np.full(want.size, -2, dtype=want.dtype)
    for p in parts:
        got[p["vertex"]] = p["value"]
    assert sum(p.size for p in parts) == want.size and np.array_equal(got, want)


@pytest.mark.slow
@needs_wiki
def test_converged_pagerank_on_two_ranks_equals_networkx(tmp_path):
    """PageRank in networkx's form (--tol): every rank takes the same finish from the summed
    votes (the ranks' sum and L1 change), and the result is networkx's on wiki-Vote."""
    import networkx as nx
    import totem_py
    text = WIKI
    graph = tmp_path / "wiki.tcsr"
    conv = subprocess.run([sys.executable, "-m", "totem_py.convert", text, graph], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert conv.returncode == 0, conv.stderr
    proc = launch(2, "-m", "totem_py.run", "--graph", graph, "--algorithm", "pagerank", "--tol",
                  "1e-9", "--partition", "RAND", "--device", "emulated", "--verify",
                  "--output", tmp_path / "two.npy", "--json", tmp_path / "two.json")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "two.json").read_text())
    assert m["ranks"] == 2 and m["verified"] is True and m["converged"] is True
    assert m["supersteps"] == m["rounds"] + 1 and m["rounds"] > 10
    g = totem_py.load(text)
    G = g.to_networkx()
    assert G.number_of_edges() == g.n_edges        # no parallel edges: a DiGraph is the graph
    r = nx.pagerank(G, tol=1e-9)
    got = np.load(tmp_path / "two.npy")
    assert np.abs(got - np.array([r[v] for v in range(got.size)])).max() <= 1e-12


@pytest.mark.slow
def test_weighted_pagerank_on_two_ranks_equals_networkx(tmp_path):
    """PageRank on a weighted stored graph across two ranks shares each rank by the out-edges'
    weights (their sums from each rank's own out-rows): networkx's weighted ranks with --tol,
    the weighted reference's after K rounds without."""
    import networkx as nx
    import totem_py
    from totem_py.algorithms import pagerank
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, 300, 2000), rng.integers(0, 300, 2000)
    text = tmp_path / "w.wel"
    text.write_text("".join(f"{u} {v} {w!r}\n" for u, v, w in
                            zip(src.tolist(), dst.tolist(), (rng.random(2000) * 5).tolist())))
    graph = tmp_path / "w.tcsr"
    conv = subprocess.run([sys.executable, "-m", "totem_py.convert", text, graph], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert conv.returncode == 0, conv.stderr
    g = totem_py.load(text)
    nx_ranks = nx.pagerank(g.to_networkx(multigraph=True), tol=1e-9)
    wants = {("--tol", "1e-9"): np.array([nx_ranks[v] for v in range(g.n_vertices)]),
             ("--iterations", "7"): pagerank.rounds(g, 7, weighted=True)}
    for options, want in wants.items():
        proc = launch(2, "-m", "totem_py.run", "--graph", graph, "--algorithm", "pagerank",
                      *options, "--partition", "RAND", "--device", "emulated", "--verify",
                      "--quiet", "--output", tmp_path / "two.npy")
        assert proc.returncode == 0, proc.stderr
        got = np.load(tmp_path / "two.npy")
        assert np.abs(got - want).max() <= 1e-6 * want.min(), options


@pytest.mark.slow
@pytest.mark.parametrize("ranks", [2, 3])
def test_normalized_bc_from_drawn_sources_on_ranks_equals_one_process(ranks, tmp_path):
    """bc --sources K --normalized: the ranks draw the same K sources from the whole graph's
    vertices and divide by the whole graph's pairs (each rank's share of the vertices is
    smaller, and holds some of the sources only), as one process does; under --verify too."""
    common = ["--graph", "rmat:10", "--algorithm", "bc", "--sources", "5", "--normalized",
              "--partition", "RAND", "--device", "emulated", "--quiet"]
    one = run_here(*common, "--output", tmp_path / "one.npy", "--json", tmp_path / "one.json")
    assert one.returncode == 0, one.stderr
    proc = launch(ranks, "-m", "totem_py.run", *common, "--verify", "--output",
                  tmp_path / "many.npy", "--json", tmp_path / "many.json")
    assert proc.returncode == 0, proc.stderr
    m1, m = (json.loads((tmp_path / f"{k}.json").read_text()) for k in ("one", "many"))
    assert m["ranks"] == ranks and m["verified"] is True and m["normalized"] is True
    assert m["sources"] == m1["sources"] and len(m["sources"]) == 5
    want, got = np.load(tmp_path / "one.npy"), np.load(tmp_path / "many.npy")
    assert want.size == got.size == 1024 and (want > 0).sum() > 50
    assert np.allclose(got, want, rtol=1e-9, atol=0)


@pytest.mark.slow
def test_auto_cpu_share_takes_the_share_every_rank_needs(tmp_path):
    """--cpu-share auto: each rank finds the share its GPU partitions' budget fits (from its own
    vertices' degrees) and the ranks take the largest, so every GPU partition fits."""
    budget = 60 << 10
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:11", "--undirected", "--algorithm",
                  "bfs", "--device", "emulated", "--cpu-share", "auto", "--gpu-memory",
                  str(budget), "--transfer", "resident", "--verify", "--json", tmp_path / "m.json",
                  "--quiet")
    assert proc.returncode == 0, proc.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["cpu_share_auto"] is True and 0 < m["cpu_share"] < 1 and m["verified"]
    gpu = [p for p in m["partitions"] if p["kind"] == "gpu"]
    assert {p["rank"] for p in gpu} == {0, 1}
    assert all(p["on_gpu_bytes"] <= budget for p in gpu)
    assert max(p["on_gpu_bytes"] for p in gpu) > budget // 2      # not far below: it filled


@pytest.mark.slow
def test_text_graphs_under_mpirun_ask_for_a_conversion():
    proc = launch(2, "-m", "totem_py.run", "--graph", "tests/data/tiny.txt", "--quiet")
    assert proc.returncode == 2, proc.stderr
    one_error_line(proc, "tests/data/tiny.txt", "python -m totem_py.convert")


@pytest.mark.slow
def test_a_bad_row_in_one_ranks_share_stops_every_rank_with_one_line(tmp_path):
    """Each rank checks the rows it reads: a bad id in rank 1's byte range is exit 2 on every
    rank, one line naming rank 1, the file and the edge."""
    from totem_py import generate, store
    path = tmp_path / "g.tcsr"
    store.write(generate("rmat:8", seed=1), path)
    s = store.Store(path)
    dtype, offset = s.arrays["ids"]
    raw = bytearray(path.read_bytes())
    last = s.n_edges - 1
    raw[offset + last * dtype.itemsize:offset + (last + 1) * dtype.itemsize] = \
        np.array([10 ** 6], dtype).tobytes()
    path.write_bytes(bytes(raw))
    proc = launch(2, "-m", "totem_py.run", "--graph", path, "--quiet")
    assert proc.returncode == 2, proc.stderr
    one_error_line(proc, "rank 1", str(path), f"edge {last}", "not a vertex id")


@pytest.mark.slow
def test_too_little_memory_on_the_ranks_is_exit_2_before_loading():
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:36", "--quiet", timeout=120)
    assert proc.returncode == 2, proc.stderr
    one_error_line(proc, "rank 0: its share", "rmat:36", "needs about", "GiB")
    assert proc.seconds < 60


@pytest.mark.slow
def test_ranks_started_with_different_arguments_exit_2():
    cmd = [mpirun(), "-n", "1", sys.executable, "-m", "totem_py.run", "--graph", "rmat:8",
           "--quiet", ":", "-n", "1", sys.executable, "-m", "totem_py.run", "--graph",
           "rmat:9", "--quiet"]
    proc = subprocess.run(cmd, cwd=ROOT, env=mpi_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stderr
    one_error_line(proc, "different arguments", "rmat:8", "rmat:9")


@pytest.mark.slow
@pytest.mark.parametrize("when", ["load", "partition"])
def test_a_stopped_rank_during_setup_is_bounded_by_the_timeout(when):
    """Rank 1 stops itself (SIGSTOP) while loading or partitioning: rank 0, waiting in a
    collective, gives up after --mpi-timeout and stops every rank (the stopped one included)."""
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:10", "--device", "emulated",
                  "--quiet", "--mpi-timeout", "3", env={"TOTEM_MPI_FAULT": f"1:{when}:stop"},
                  timeout=120)
    assert proc.returncode != 0
    one_error_line(proc, "rank 0", "--mpi-timeout 3", "loading" if when == "load"
                    else "partitioning")
    assert proc.seconds < 60


@pytest.mark.slow
@pytest.mark.parametrize("transfer", ["auto"] + [pytest.param(t, marks=pytest.mark.extended)
                                                 for t in ("filter", "compaction")])
def test_streamed_edges_on_two_ranks_match_one_process(transfer, tmp_path):
    """GPU partitions over their --gpu-memory stream the rest on every rank, by each engine: the
    same distances as one process, each rank's chunks in the superstep records, the transfer
    record summed over the ranks; a budget too small to stream on some rank is exit 2, one line.
    (At 96K a rank's edges do not fit even with auto's staging room holding resident chunks.)"""
    common = ["--graph", "rmat:11", "--undirected", "--algorithm", "sssp", "--partition", "HIGH",
              "--cpu-share", "0.3", "--device", "emulated", "--gpu-memory", "96K",
              "--chunk-bytes", "2K", "--trials", "1", "--quiet"]
    one = run_here(*common, "--output", tmp_path / "one.npy")
    assert one.returncode == 0, one.stderr
    proc = launch(2, "-m", "totem_py.run", *common, "--transfer", transfer, "--verify",
                  "--output", tmp_path / "two.npy", "--json", tmp_path / "two.json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("warning: no transfer profile") <= 1
    assert np.array_equal(np.load(tmp_path / "one.npy"), np.load(tmp_path / "two.npy"))
    m = json.loads((tmp_path / "two.json").read_text())
    assert m["verified"] is True and m["transfer_mode"] == transfer
    t = m["transfer"]
    assert t["streamed_edge_bytes"] > 0 and t["chunks"] > t["resident_chunks"] > 0
    streamed = {k: v for k, v in t["engine_share"].items() if k != "resident" and v > 0}
    assert streamed if transfer == "auto" else set(streamed) == {transfer}
    if transfer != "auto":
        assert t[f"{transfer}_bytes"] == sum(s.get(f"{transfer}_bytes", 0)
                                             for s in m["per_superstep"]) > 0
    gpus = {str(p) for p, part in enumerate(m["partitions"]) if part["kind"] == "gpu"}
    assert {p["rank"] for p in m["partitions"] if p["kind"] == "gpu"} == {0, 1}
    assert gpus == {pid for s in m["per_superstep"] for pid in s.get("chunks", {})}
    if transfer == "auto":
        proc = launch(2, "-m", "totem_py.run", *common[:-5], "--chunk-bytes", "8K",
                      "--trials", "1")
        assert proc.returncode == 2, proc.stderr
        one_error_line(proc, "too small to stream", "--chunk-bytes 8192")


@pytest.mark.slow
def test_bad_input_on_rank_0_exits_2_on_every_rank():
    proc = launch(2, "-m", "totem_py.run", "--graph", "tests/data/missing.txt")
    assert proc.returncode == 2, proc.stderr
    one_error_line(proc, "missing.txt")
    assert proc.stdout.strip() == ""


@pytest.mark.slow
def test_a_failing_rank_stops_every_rank_promptly():
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:10", "--device", "emulated",
                  "--quiet", env={"TOTEM_MPI_FAULT": "1:1:oom"}, timeout=120)
    assert proc.returncode != 0
    one_error_line(proc, "rank 1", "MemoryError")
    assert proc.seconds < 60


@pytest.mark.slow
def test_timeout_bounds_a_stuck_exchange():
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:10", "--device", "emulated",
                  "--quiet", "--mpi-timeout", "3", env={"TOTEM_MPI_FAULT": "1:1:stall"},
                  timeout=120)
    assert proc.returncode != 0
    one_error_line(proc, "rank 0: superstep 1", "--mpi-timeout 3")
    assert proc.seconds < 60


@pytest.mark.slow
def test_timeout_bounds_mpi_start_up():
    """Rank 1 stops before it imports mpi4py: rank 0 waits in MPI's start-up, which holds the
    GIL, and still gives up after --mpi-timeout with one line and a nonzero exit."""
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:8", "--device", "emulated",
                  "--quiet", "--mpi-timeout", "2", env={"TOTEM_MPI_FAULT": "1:start:stop"},
                  timeout=120)
    assert proc.returncode != 0
    one_error_line(proc, "rank 0", "starting MPI", "--mpi-timeout 2")
    assert proc.seconds < 60


STUCK = """
import os, signal, sys
from bsp.mpi import guarded, world
comm = guarded(world(), 1)
comm.phase = "testing"
if comm.rank == 1:
    os.kill(os.getpid(), signal.SIGSTOP)
{call}
"""


@pytest.mark.slow
@pytest.mark.parametrize("call", ["comm.allreduce(1)", "comm.gather(1)", "comm.alltoall([1, 2])"])
def test_timeout_bounds_a_blocking_collective_holding_the_gil(call):
    """Rank 1 stops; rank 0 waits in a pickle-based collective, which holds the GIL while it
    waits: its watchdog process still stops it after the timeout, with one line."""
    proc = launch(2, "-c", STUCK.format(call=call), timeout=120)
    assert proc.returncode != 0
    one_error_line(proc, "rank 0", "testing: " + call[5:call.index("(")], "--mpi-timeout 1")
    assert proc.seconds < 60


@pytest.mark.slow
def test_rank_0_verifying_longer_than_the_timeout_is_not_a_stuck_peer(tmp_path):
    """Rank 0's serial --verify takes 8 s (injected) with --mpi-timeout 3: the other rank waits
    for it and the run passes."""
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:8", "--device", "emulated",
                  "--quiet", "--verify", "--mpi-timeout", "3", "--json", tmp_path / "m.json",
                  env={"TOTEM_MPI_FAULT": "0:verify:slow"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["verified"] is True


@pytest.mark.slow
def test_importing_never_imports_mpi4py():
    code = ("import sys, totem_py, totem_py.run, totem_py.harness, totem_py.store, bsp, "
            "partitioners, partitioners.ranks; "
            "assert 'mpi4py' not in sys.modules, 'mpi4py imported'")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_launcher_environment_is_read_without_mpi():
    from totem_py.run import launched_ranks
    assert launched_ranks({}) == 1
    assert launched_ranks({"OMPI_COMM_WORLD_SIZE": "4"}) == 4
    assert launched_ranks({"OMPI_COMM_WORLD_SIZE": "1"}) == 1
    assert launched_ranks({"PMI_SIZE": "2"}) == 2
    assert launched_ranks({"PMIX_RANK": "0"}) == 0          # a launcher that does not say


def test_ranks_get_balanced_shares():
    import totem_py
    from partitioners import partition
    g = totem_py.generate("rmat:12")
    plan = partition(g, "HIGH", 0.5, 1, ranks=4)
    edges = np.zeros(4)
    for pid, r in enumerate(plan.rank_of):
        edges[r] += g.out_degree[plan.gvids[pid]].sum()
    assert edges.sum() == g.n_edges
    assert edges.max() - edges.min() <= g.out_degree.max()
    assert plan.kinds == ["cpu", "gpu"] * 4 and plan.rank_of == [0, 0, 1, 1, 2, 2, 3, 3]


@pytest.mark.slow
def test_mpi_check_converts_files_and_mpi_memory_tabulates_the_peaks(tmp_path):
    """The two scripts at a tiny size: mpi_check on a text file (converted to .tcsr for the
    ranks), mpi_memory's table and JSON rows with every rank's peak."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               NUMBA_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "experiments.mpi_check", "--ranks", "2",
                           "--graph", "tests/data/tiny.txt", "--device", "emulated",
                           "--algorithms", "cc", "--trials", "1"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "results MATCH" in proc.stdout and "peak_MB" in proc.stdout
    out = tmp_path / "memory"
    proc = subprocess.run([sys.executable, "-m", "experiments.mpi_memory", "--graph", "rmat:9",
                           "--ranks", "1,2", "--algorithms", "bfs", "--out", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(out.with_suffix(".json").read_text())["rows"]
    assert [(r["ranks"], len(r["peak_mb"])) for r in rows] == [(1, 1), (2, 2)]
    assert rows[0]["rank0_over_one"] == 1.0 and rows[1]["rank0_over_one"] > 0.5
    assert "| bfs | 2 |" in out.with_suffix(".txt").read_text()


@pytest.mark.slow
def test_csv_output_under_mpirun_matches_one_process(tmp_path):
    """--output FILE.csv is CSV under mpirun too: gathered on rank 0, or each rank its own
    vertices' lines with {rank}."""
    common = ["--graph", "rmat:9", "--undirected", "--algorithm", "cc", "--device", "emulated",
              "--quiet"]
    one = run_here(*common, "--output", tmp_path / "one.csv")
    assert one.returncode == 0, one.stderr
    want = (tmp_path / "one.csv").read_text()
    proc = launch(2, "-m", "totem_py.run", *common, "--output", tmp_path / "all.csv")
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "all.csv").read_text() == want
    proc = launch(2, "-m", "totem_py.run", *common, "--output", tmp_path / "part{rank}.csv")
    assert proc.returncode == 0, proc.stderr
    lines = [line for r in range(2)
             for line in (tmp_path / f"part{r}.csv").read_text().splitlines()[1:]]
    assert sorted(lines) == sorted(want.splitlines()[1:])


@pytest.mark.slow
def test_per_rank_outputs_naming_one_file_are_refused(tmp_path):
    """--output with {rank} whose paths lead every rank to one file: exit 2, one line, before
    the run, nothing written."""
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:8", "--device", "emulated",
                  "--quiet", "--output", f"{tmp_path}/r{{rank}}/../same.npy", timeout=120)
    assert proc.returncode == 2, proc.stderr
    one_error_line(proc, "same file", "ranks 0 and 1", str(tmp_path / "same.npy"))
    assert not list(tmp_path.iterdir())
