"""Execution paths (bsp/paths.py): every shipped algorithm on every path it offers, forced, and
`auto`, on cpu and emulated partitions over several partitionings and cpu shares (and, small,
under numba-cuda's simulator), each result checked by its algorithm's verifier and compared
with the serial reference where results do not depend on the plan; the path trace of the
JSON; a forced path that the algorithm does not offer; SSSP's supersteps on a road network; BC's
forward steps pushed, pulled or chosen."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import totem_py
from bsp import Engine
from partitioners import partition
from totem_py.algorithms import ALGORITHMS
from totem_py.harness import default_source

from tests.support.cli import run_here
from tests.support.toys import rmat_small, toy_graphs, with_random_weights

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("TOTEM_DATA", ROOT.parent / "shared" / "data"))
ROAD = DATA / "road-usroads.mtx.gz"
ROME = DATA / "rome99.gr.gz"
OFFERING = sorted(name for name, cls in ALGORITHMS.items() if cls.paths)
CONFIGS = (("HIGH", 1.0, 1), ("HIGH", 0.5, 1), ("RAND", 0.3, 2), ("LOW", 0.0, 2))


def make(name, graph, source):
    return ALGORITHMS[name].from_options(graph, source=source, tolerance=1e-4, seed=0)


def check(alg, graph, got, path):
    note = alg.verify(graph, got)
    assert note is None, f"{alg.name} {path}: {note}"
    if alg.same_on_every_plan:
        assert alg.compare(got, alg.reference(graph)) is None, f"{alg.name} {path}"


def graphs():
    toys = toy_graphs()
    return {"rmat_small": rmat_small(), "disconnected": toys["disconnected"],
            "star": toys["star"], "road": totem_py.generate("road:6", seed=1)}


def test_the_shipped_algorithms_offer_paths():
    assert {"bfs", "sssp", "cc", "pagerank_delta"} <= set(OFFERING)
    assert ALGORITHMS["sssp"].paths[0] == "async-push-dd"
    assert "async-push-dd" in ALGORITHMS["bfs"].paths


@pytest.mark.parametrize("name", OFFERING)
@pytest.mark.parametrize("gname", sorted(graphs()))
def test_every_path_on_every_platform(name, gname):
    graph = with_random_weights(graphs()[gname], seed=3)
    source = default_source(graph)
    alg = make(name, graph, source)
    for strategy, share, gpus in CONFIGS:
        plan = partition(graph, strategy, share, gpus, seed=1)
        for device in ("cpu", "emulated") if "gpu" in plan.kinds else ("cpu",):
            engine = Engine(plan, device)
            for path in ("auto", *alg.paths):
                got, records = engine.run(alg, path)
                check(alg, graph, got, f"{path} {strategy} {share} {gpus} {device}")
                chosen = {r["path"] for r in records}
                if path != "auto":
                    assert chosen == {path}


@pytest.mark.parametrize("gname", ["rmat_small", "star", "disconnected"])
def test_bc_forward_steps_pushed_or_pulled_on_every_platform(gname, monkeypatch):
    """BC's forward steps pushed, pulled, or chosen by their cost: the reference's values on cpu
    and emulated partitions; the rule pulls some level of an R-MAT graph."""
    import totem_py.algorithms.bc as bc
    graph = graphs()[gname]
    alg = make("bc", graph, default_source(graph))
    for cost in (bc.PUSH_COST, 0, 1e18):
        monkeypatch.setattr(bc, "PUSH_COST", cost)
        for strategy, share, gpus in CONFIGS:
            plan = partition(graph, strategy, share, gpus, seed=1)
            for device in ("cpu", "emulated") if "gpu" in plan.kinds else ("cpu",):
                got, records = Engine(plan, device).run(alg)
                check(alg, graph, got, f"push cost {cost} {strategy} {share} {gpus} {device}")
                steps = [r for r in records if r["mode"].startswith("forward")]
                forward = [r["mode"] for r in steps]
                assert forward[0] == "forward"
                if cost == 0:
                    assert set(forward) == {"forward"}
                elif cost > 1e9:    # each step after the first with a frontier holding edges
                    assert forward[1:] == ["forward_pull" if r["frontier_edges"] else "forward"
                                           for r in steps[:-1]]
                elif gname == "rmat_small":
                    assert "forward_pull" in forward, forward


def test_a_traversal_on_one_partition_goes_async_on_a_high_diameter_graph():
    """BFS on a road grid: a single partition (CPU only, or one emulated GPU) takes sync steps
    for HIGH_DIAMETER supersteps, then finishes in one async superstep of many local rounds (run
    in one launch); the levels are the reference's. Two partitions stay sync."""
    from bsp.paths import HIGH_DIAMETER
    graph = totem_py.generate("road:10", seed=1)
    source = default_source(graph)
    alg = make("bfs", graph, source)
    for share, device in ((1.0, "cpu"), (0.0, "emulated"), (0.5, "emulated")):
        got, records = Engine(partition(graph, "HIGH", share, 1, seed=1), device).run(alg)
        check(alg, graph, got, f"auto {share} {device}")
        paths = [r["path"] for r in records]
        if share == 0.5:
            assert "async" not in ",".join(paths)
            continue
        assert len(paths) == HIGH_DIAMETER + 1 and paths[-1] == "async-push-dd"
        assert all(p.startswith("sync-") for p in paths[:-1])
        assert sum(records[-1]["rounds"]) > 1


def test_a_deep_traversal_goes_async_on_every_block_of_a_road_grid(monkeypatch):
    """Under BLOCK a road grid's partitions keep most edges inside: a BFS still going after
    HIGH_DIAMETER supersteps takes the async path on every partition at once (and stays top-down),
    its rounds a level at a time where messages lowered vertices of several levels; SSSP's auto
    takes async from the first superstep, in under a quarter of sync's supersteps. Both give the
    reference's values."""
    from bsp.paths import HIGH_DIAMETER
    from totem_py.algorithms import bfs
    from totem_py.algorithms.bfs import BFS
    monkeypatch.setattr(bfs, "SEED_VERTICES", 64)     # groups of seed levels on a small grid
    ordered = []
    order_seeds = BFS._order_seeds

    def recorded(part):
        order_seeds(part)
        ordered.append(part.state.later is not None)
    monkeypatch.setattr(BFS, "_order_seeds", staticmethod(recorded))
    graph = with_random_weights(totem_py.generate("road:12", seed=1), seed=1)
    source = default_source(graph)
    for name in ("bfs", "sssp"):
        alg = make(name, graph, source)
        for share, gpus in ((0.5, 1), (0.3, 2)):
            plan = partition(graph, "BLOCK", share, gpus, seed=1)
            _, sync = Engine(plan, "emulated").run(alg, path="sync-push-dd")
            got, records = Engine(plan, "emulated").run(alg)
            check(alg, graph, got, f"{name} BLOCK {share} x{gpus}")
            paths = [r["path"] for r in records]
            assert len(records) < len(sync) / (1 if name == "bfs" else 4), \
                (name, len(records), len(sync))
            if name == "bfs":
                assert all(p.startswith("sync-") for p in paths[:HIGH_DIAMETER])
                assert set(paths[HIGH_DIAMETER:]) == {"async-push-dd"}
                assert all(r["mode"] == "push" for r in records[HIGH_DIAMETER:])
            else:
                assert set(paths) == {"async-push-dd"}
    assert any(ordered), "no superstep's seeds spanned several levels"


@pytest.mark.parametrize("name", [n for n in OFFERING if "async-push-dd" in ALGORITHMS[n].paths])
def test_async_rounds_in_parallel_inside_the_kernel(name, monkeypatch):
    """Where idle threads spin, an async path's rounds of more than FUSE_SPINNING edges run on
    every thread inside the kernel (here on 2 threads, every round of more than 8 edges): the
    results are the verified ones, in the same one superstep."""
    import kernels_cpu.operators as ops
    monkeypatch.setenv("OMP_WAIT_POLICY", "active")
    monkeypatch.setenv("NUMBA_THREADING_LAYER", "omp")      # as where the OpenMP layer loads
    monkeypatch.setattr(ops, "FUSE_SPINNING", 4)
    graph = with_random_weights(totem_py.generate("road:12", seed=3), seed=3)
    source = default_source(graph)
    alg = make(name, graph, source)
    r = totem_py.run(graph, alg, cpu_share=1.0, device="cpu", threads=2, path="async-push-dd")
    check(alg, graph, r.values, "async-push-dd, rounds in parallel")
    assert r.metrics["supersteps"] == 1


def test_sssp_on_a_road_grid_takes_fewer_supersteps_async():
    """One partition: async relaxes the whole graph in one superstep; several: fewer than
    sync's, same distances."""
    graph = totem_py.generate("road:7", seed=2)
    source = default_source(graph)
    for share in (1.0, 0.5):
        steps = {}
        for path in ("sync-push-dd", "async-push-dd"):
            r = totem_py.run(graph, "sssp", source=source, cpu_share=share, device="emulated",
                             path=path, verify=True)
            steps[path] = r.metrics["supersteps"]
            assert r.metrics["path"] == path
        assert steps["async-push-dd"] < steps["sync-push-dd"]
        if share == 1.0:
            assert steps["async-push-dd"] == 1


@pytest.mark.slow
@pytest.mark.skipif(not ROAD.exists(), reason="needs ../shared/data/road-usroads.mtx.gz")
def test_sssp_on_road_usroads_auto_takes_a_quarter_of_the_supersteps():
    graph = totem_py.load(ROAD)
    source = default_source(graph)
    runs = {p: totem_py.run(graph, "sssp", source=source, cpu_share=1.0, device="cpu", path=p)
            for p in ("sync-push-dd", "auto")}
    sync, auto = (runs[p].metrics["supersteps"] for p in ("sync-push-dd", "auto"))
    assert auto <= 0.25 * sync, (auto, sync)
    assert np.array_equal(runs["auto"].values, runs["sync-push-dd"].values)


@pytest.mark.slow
def test_pagerank_delta_auto_uses_several_paths_and_the_trace_shows_them(tmp_path):
    out = tmp_path / "run.json"
    proc = run_here("--graph", "rmat:12", "--algorithm", "pagerank_delta", "--device",
                    "emulated", "--cpu-share", "0.5", "--verify", "--quiet", "--json", out)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(out.read_text())
    trace = [r["path"] for r in m["per_superstep"]]
    names = {n.split(":")[-1] for t in trace for n in t.split(",")}
    assert len(names) >= 2, trace
    assert m["path"] == "auto" and m["verified"]
    assert all(len(r["rounds"]) == len(r["compute_s"]) for r in m["per_superstep"])


@pytest.mark.slow
def test_a_forced_path_not_offered_is_one_line_exit_2():
    for algorithm, path, words in (("sssp", "sync-pull-td", "sssp offers async-push-dd"),
                                   ("pagerank", "sync-push-dd", "pagerank offers no path"),
                                   ("bfs", "fast", "auto or {sync,async}")):
        proc = run_here("--graph", "rmat:8", "--algorithm", algorithm, "--path", path,
                        "--quiet")
        err = proc.stderr.strip()
        assert proc.returncode == 2 and "\n" not in err and words in err, err
    with pytest.raises(Exception, match="offers"):
        totem_py.run(totem_py.generate("rmat:6"), "cc", path="sync-push-td")


def test_summed_records_keep_their_path(monkeypatch):
    import bsp.engine
    monkeypatch.setattr(bsp.engine, "KEPT", 3)
    graph = totem_py.generate("road:6", seed=1)
    src = default_source(graph)
    r = totem_py.run(graph, "bfs", source=src, device="cpu", cpu_share=1.0, path="sync-push-dd")
    last = r.metrics["per_superstep"][-1]
    assert last["path"] == "sync-push-dd" and last["steps"] == r.metrics["supersteps"] - 3


SIM = """
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, {root!r}); sys.path.insert(0, {tests!r})
from bsp import Engine
from partitioners import partition
from totem_py.algorithms import ALGORITHMS
from totem_py.harness import default_source
from tests.support.toys import toy_graphs, with_random_weights
bad = []
for gname in ("star", "disconnected"):
    g = with_random_weights(toy_graphs()[gname], seed=3)
    src = default_source(g)
    for share, gpus in ((0.0, 2), (0.5, 1)):
        engine = Engine(partition(g, "HIGH", share, gpus, seed=1), "simulated")
        for name in {names!r}:
            alg = ALGORITHMS[name].from_options(g, source=src, tolerance=1e-3, seed=0)
            for path in alg.paths:
                got, _ = engine.run(alg, path)
                note = alg.verify(g, got)
                if note:
                    bad.append(f"{{name}} {{path}} {{gname}} {{share}}: {{note}}")
        import totem_py.algorithms.bc as bc
        bc.PUSH_COST = 1e18         # every forward step after the first pulled
        alg = ALGORITHMS["bc"].from_options(g, source=src, seed=0)
        got, _ = engine.run(alg)
        note = alg.verify(g, got)
        if note:
            bad.append(f"bc pulled {{gname}} {{share}}: {{note}}")
# BFS's async rounds with seeds of several levels, in groups (bfs._order_seeds), on the GPU code
import totem_py, totem_py.algorithms.bfs as bfs
bfs.SEED_VERTICES = 4
split, order_seeds = [], bfs.BFS._order_seeds
def recorded(part):
    order_seeds(part)
    split.append(part.state.later is not None)
bfs.BFS._order_seeds = staticmethod(recorded)
g = totem_py.generate("road:9", seed=1)
engine = Engine(partition(g, "BLOCK", 0.5, 1), "simulated")
alg = ALGORITHMS["bfs"].from_options(g, source=0)
got, _ = engine.run(alg, "async-push-dd")
note = alg.verify(g, got)
if note or not any(split):
    bad.append(f"bfs ordered seeds: {{note}}, split {{split}}")
print("\\n".join(bad))
sys.exit(1 if bad else 0)
"""


@pytest.mark.slow
def test_every_path_on_the_simulated_gpu():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    code = SIM.format(root=str(ROOT), tests=str(ROOT / "tests"), names=OFFERING)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_priority_path_parses_and_keeps_its_name():
    from bsp.api import Path as ExecutionPath
    prio = ExecutionPath.parse("async-push-dd-prio")
    assert prio.priority and prio.asynchronous and prio.worklist == "dd"
    assert prio.name == "async-push-dd-prio" and not ExecutionPath.parse("async-push-dd").priority
    for bad in ("sync-push-dd-x", "sync-push-prio", "prio-sync-push-dd", "sync-push-dd-prio-x"):
        with pytest.raises(ValueError, match="optionally -prio"):
            ExecutionPath.parse(bad)


def pushed(graph, device, share, path):
    r = totem_py.run(graph, "pagerank_delta", cpu_share=share, device=device, path=path,
                     tolerance=1e-3, verify=True)
    m = r.metrics
    assert m["verified"], (device, share, path)
    trace = {n.split(":")[-1] for s in m["per_superstep"] for n in s["path"].split(",")}
    assert trace == {path} if path != "auto" else "sync-push-dd-prio" not in trace, trace
    return m


@pytest.mark.slow
@pytest.mark.skipif(not ROME.exists(), reason="needs ../shared/data/rome99.gr.gz")
def test_pagerank_delta_priority_on_a_real_graph_forced_and_auto():
    """rome99: the priority paths verify on cpu and emulated partitions, take a part of the
    active set per round (more supersteps or rounds than without), and the run counts its
    pushes (sync-push-dd: every active vertex's out-edges in every superstep)."""
    graph = totem_py.load(ROME)
    for device, share in (("cpu", 1.0), ("cpu", 0.5), ("emulated", 0.5)):
        runs = {p: pushed(graph, device, share, p) for p in
                ("auto", "sync-push-dd", "async-push-dd", "sync-push-dd-prio",
                 "async-push-dd-prio")}
        sync, prio = runs["sync-push-dd"], runs["sync-push-dd-prio"]
        assert sync["pushed_edges"] == graph.n_edges + sum(
            r["frontier_edges"] for r in sync["per_superstep"])
        assert prio["supersteps"] > sync["supersteps"]
        rounds = [sum(sum(r["rounds"]) for r in runs[p]["per_superstep"])
                  for p in ("async-push-dd", "async-push-dd-prio")]
        assert rounds[1] > rounds[0], rounds


PRIO_SIM = """
import os, sys
os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
sys.path.insert(0, {root!r})
import totem_py
from totem_py.graph import Graph
g = totem_py.load({graph!r})
src, dst = g.edge_sources(), g.indices
keep = (src < 300) & (dst < 300)
g = Graph.from_edges(src[keep], dst[keep], 300)
for path in ("sync-push-dd-prio", "async-push-dd-prio", "auto"):
    m = totem_py.run(g, "pagerank_delta", cpu_share=0.5, device="simulated", path=path,
                     tolerance=0.1, verify=True).metrics
    assert m["verified"] and m["pushed_edges"] > 0, path
"""


@pytest.mark.extended
@pytest.mark.skipif(not ROME.exists(), reason="needs ../shared/data/rome99.gr.gz")
def test_pagerank_delta_priority_on_a_real_graph_on_the_simulated_gpu():
    """rome99's first 300 vertices: the simulator runs each kernel thread in Python (about two
    minutes; the default run has the priority paths on the simulator on toy graphs,
    `test_every_path_on_the_simulated_gpu`, and on rome99 on cpu and emulated partitions)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    code = PRIO_SIM.format(root=str(ROOT), graph=str(ROME))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
