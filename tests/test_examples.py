"""The user algorithms of examples/ (functors and callbacks only) give their NumPy references'
answers on every partitioning, cpu share and device, with streamed edges, through their scripts
and under MPI."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import totem_py
from bsp import EdgeOptions
from totem_py.backend import cuda_device_count

from tests.support.mpi import launch
from tests.support.stream import streaming

ROOT = Path(__file__).resolve().parents[1]
# the real graphs (../shared/data beside the checkout, or beside the folder of worktrees)
DATA = next((p for p in (Path(os.environ.get("TOTEM_DATA", ROOT.parent / "shared" / "data")),
                         ROOT.parents[1] / "shared" / "data") if p.exists()), None)
sys.path.insert(0, str(ROOT / "examples"))
from kcore import KCore  # noqa: E402
from khop import KHop  # noqa: E402
from triangles import Triangles  # noqa: E402

GRAPH = totem_py.generate("rmat:10", seed=2, undirected=True)


def cases(graph):
    hub = int(np.argmax(graph.out_degree))
    return [KHop(hub, 1), KHop(hub, 3), KCore(3), KCore(8), Triangles()]


def check(graph, devices, configs, edges=None):
    failures = []
    for alg in cases(graph):
        want = alg.reference(graph)
        for device in devices:
            for strategy, share, gpus in configs:
                options = {} if edges is None else dict(gpu_memory=edges["budget"],
                                                        chunk_bytes=edges["chunk_bytes"],
                                                        transfer=edges["transfer"])
                got = totem_py.run(graph, alg, partition=strategy, cpu_share=share, gpus=gpus,
                                   device=device, **options).values
                if not np.array_equal(got, want):
                    failures.append(f"{alg.name} {device} {strategy} {share} x{gpus}: "
                                    f"{int(np.count_nonzero(got != want))} vertices differ")
    assert not failures, "\n".join(failures)


MATRIX = [(s, share, gpus) for s in ("HIGH", "LOW", "RAND", "BLOCK")
          for share, gpus in ((1.0, 1), (0.5, 1), (0.3, 2), (0.0, 2))]


def test_examples_match_their_references():
    check(GRAPH, ("cpu", "emulated"), MATRIX)


@pytest.mark.parametrize("spec", ["rmat:3", "uniform:4:2", "rmat:6:1"])
def test_examples_on_small_graphs(spec):
    g = totem_py.generate(spec, seed=5, undirected=True)
    check(g, ("emulated",), [("RAND", 0.3, 2), ("HIGH", 0.0, 1), ("LOW", 0.5, 2),
                             ("BLOCK", 0.3, 2)])


@pytest.mark.parametrize("transfer", ["filter", "compaction", "zerocopy", "auto"])
def test_examples_with_streamed_edges(transfer):
    check(GRAPH, ("emulated",), [("HIGH", 0.3, 1), ("RAND", 0.0, 2)],
          edges=dict(streaming(GRAPH), transfer=transfer))


def run_script(name, *args):
    return subprocess.run([sys.executable, f"examples/{name}.py", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.parametrize("name, extra", [("khop", ["--k", "2", "--source", "5"]),
                                         ("kcore", ["--k", "4", "--undirected"])])
def test_example_scripts_verify(name, extra):
    proc = run_script(name, "--graph", "rmat:10", "--partition", "RAND", "--cpu-share", "0.5",
                      "--device", "emulated", "--verify", *extra)
    assert proc.returncode == 0, proc.stderr
    assert "verified" in proc.stdout


def networkx_triangles(graph):
    import networkx as nx
    g = nx.Graph()
    g.add_nodes_from(range(graph.n_vertices))
    g.add_edges_from(zip(graph.edge_sources().tolist(), graph.indices.tolist()))
    counts = nx.triangles(g)
    return np.array([counts[v] for v in range(graph.n_vertices)])


def toy_graphs():
    """Empty, a triangle with a self-loop and a repeated edge, a 5-clique, a star, a chain, two
    components (a square with a diagonal and a triangle)."""
    def undirected(n, edges):
        src, dst = np.array(edges, dtype=np.int64).reshape(-1, 2).T
        return totem_py.Graph.from_edges(np.concatenate([src, dst]), np.concatenate([dst, src]),
                                         n, directed=False)
    clique = [(u, v) for u in range(5) for v in range(u + 1, 5)]
    return {"empty": undirected(3, []),
            "triangle": undirected(4, [(0, 1), (1, 2), (2, 0), (1, 1), (0, 1), (2, 3)]),
            "clique": undirected(5, clique), "star": undirected(6, [(0, v) for v in range(1, 6)]),
            "chain": undirected(5, [(0, 1), (1, 2), (2, 3), (3, 4)]),
            "components": undirected(7, [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (4, 5), (5, 6),
                                         (6, 4)])}


@pytest.mark.slow
def test_triangles_match_networkx():
    """Triangles through each vertex as networkx counts them, on toy graphs and on ca-GrQc
    (48,260 triangles), partitioned HIGH, LOW, RAND with cpu shares 0.3 and 0.5, on CPU and
    emulated GPU partitions; the --json total is a third of the sum."""
    graphs = toy_graphs()
    if DATA is not None:
        graphs["ca-GrQc"] = totem_py.load(DATA / "ca-GrQc.txt.gz", undirected=True)
    failures = []
    for name, graph in graphs.items():
        want = networkx_triangles(graph)
        assert np.array_equal(Triangles().reference(graph), want), name
        for device in ("cpu", "emulated"):
            for strategy in ("HIGH", "LOW", "RAND", "BLOCK"):
                for share, gpus in ((0.3, 2), (0.5, 1)):
                    got = totem_py.run(graph, Triangles(), partition=strategy, cpu_share=share,
                                       gpus=gpus, device=device)
                    if not np.array_equal(got.values, want) or \
                            got.metrics["triangles"] != want.sum() // 3:
                        failures.append(f"{name} {device} {strategy} {share} x{gpus}")
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_triangles_refuse_several_mpi_ranks():
    """The ranks do not exchange their ghosts' rows: two ranks stop with one line saying so."""
    proc = launch(2, "examples/triangles.py", "--graph", "rmat:8", "--undirected", "--device",
                  "emulated", "--quiet")
    assert proc.returncode == 2
    assert "error: intersect needs the rows of other partitions' vertices, which MPI ranks do " \
           "not exchange" in proc.stderr


@pytest.mark.slow
def test_kcore_refuses_a_directed_graph():
    proc = run_script("kcore", "--graph", "rmat:8", "--k", "3", "--device", "cpu")
    assert proc.returncode == 2
    assert "undirected" in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name, extra", [
    ("khop", ["--k", "3", "--source", "5"]),
    pytest.param("kcore", ["--k", "4", "--undirected"], marks=pytest.mark.extended)])
def test_examples_under_mpi(name, extra, tmp_path):
    """mpirun -n 2 runs the script on two ranks: the registry finds the example's class there;
    the result equals one process's."""
    args = ["--graph", "rmat:9", "--device", "emulated", "--quiet", *extra]
    one, two = tmp_path / f"{name}1.npy", tmp_path / f"{name}2.npy"
    proc = run_script(name, *args, "--output", str(one))
    assert proc.returncode == 0, proc.stderr
    proc = launch(2, f"examples/{name}.py", *args, "--output", two)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert np.array_equal(np.load(one), np.load(two)), name


@pytest.mark.gpu
@pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")
def test_examples_on_gpu():
    check(GRAPH, ("gpu",), MATRIX)
    for transfer in ("filter", "compaction", "zerocopy", "auto"):
        check(GRAPH, ("gpu",), [("HIGH", 0.3, 1), ("RAND", 0.0, 2)],
              edges=dict(streaming(GRAPH), transfer=transfer))


@pytest.mark.slow
def test_examples_under_the_cuda_simulator():
    """The GPU operators run both examples' functors under numba-cuda's simulator."""
    pytest.importorskip("numba_cuda")
    code = ("import sys, numpy as np, totem_py; sys.path.insert(0, 'examples');"
            "from khop import KHop; from kcore import KCore; from triangles import Triangles;"
            "g = totem_py.generate('rmat:7', seed=2, undirected=True);"
            "bad = [a.name for a in (KHop(3, 2), KCore(3), Triangles()) if not np.array_equal("
            "totem_py.run(g, a, partition='RAND', cpu_share=0.3, gpus=2, device='simulated')"
            ".values, a.reference(g))]; print('differ:', bad); sys.exit(1 if bad else 0)")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
