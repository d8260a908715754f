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
sys.path.insert(0, str(ROOT / "examples"))
from kcore import KCore  # noqa: E402
from khop import KHop  # noqa: E402

GRAPH = totem_py.generate("rmat:10", seed=2, undirected=True)


def cases(graph):
    hub = int(np.argmax(graph.out_degree))
    return [KHop(hub, 1), KHop(hub, 3), KCore(3), KCore(8)]


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


MATRIX = [(s, share, gpus) for s in ("HIGH", "LOW", "RAND")
          for share, gpus in ((1.0, 1), (0.5, 1), (0.3, 2), (0.0, 2))]


def test_examples_match_their_references():
    check(GRAPH, ("cpu", "emulated"), MATRIX)


@pytest.mark.parametrize("spec", ["rmat:3", "uniform:4:2", "rmat:6:1"])
def test_examples_on_small_graphs(spec):
    g = totem_py.generate(spec, seed=5, undirected=True)
    check(g, ("emulated",), [("RAND", 0.3, 2), ("HIGH", 0.0, 1), ("LOW", 0.5, 2)])


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
            "from khop import KHop; from kcore import KCore;"
            "g = totem_py.generate('rmat:7', seed=2, undirected=True);"
            "bad = [a.name for a in (KHop(3, 2), KCore(3)) if not np.array_equal("
            "totem_py.run(g, a, partition='RAND', cpu_share=0.3, gpus=2, device='simulated')"
            ".values, a.reference(g))]; print('differ:', bad); sys.exit(1 if bad else 0)")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
