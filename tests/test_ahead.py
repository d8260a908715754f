"""Compiling ahead on a first run (totem_py/ahead.py): the small graph, the partitioner's
kernels as Python, and the second process filling an empty cache."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from totem_py import ahead, run
from totem_py.algorithms import bfs, sssp

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("undirected", [False, True])
def test_small_graph_is_skewed_and_typed_as_a_generated_one(undirected):
    g = ahead.small_graph(weighted=True, undirected=undirected)
    src = np.repeat(np.arange(g.n_vertices), np.diff(g.indptr))
    assert g.n_vertices == ahead.SMALL and g.indices.dtype == np.int32
    assert g.weights.dtype == np.float64 and (g.weights >= 1).all()
    assert not (src == g.indices).any()
    keys = src * g.n_vertices + g.indices
    assert np.unique(keys).size == keys.size
    if undirected:
        reverse = g.indices.astype(np.int64) * g.n_vertices + src
        assert np.array_equal(np.sort(keys), np.sort(reverse))
    assert g.out_degree.max() > 10 * g.out_degree.mean()


def test_partitioner_kernels_as_python_give_the_same_results():
    """SSSP and BFS over plans whose views the partitioner's kernels built as Python, against the
    references and the compiled kernels' plans."""
    g = ahead.small_graph(weighted=True, undirected=True)
    source = int(np.argmax(g.out_degree))
    for alg, want in (("sssp", sssp.distances(g, source)), ("bfs", bfs.levels(g, source))):
        with ahead.python_kernels():
            from kernels_cpu import plan
            assert not hasattr(plan.plan_fill, "serial")            # Python now
            got = run(g, alg, partition="RAND", cpu_share=0.4, device="emulated", source=source)
        assert hasattr(plan.plan_fill, "serial")                    # compiled again
        again = run(g, alg, partition="RAND", cpu_share=0.4, device="emulated", source=source)
        assert np.allclose(got.values, want) and np.array_equal(got.values, again.values)


def test_start_refuses_where_nothing_is_gained(monkeypatch):
    monkeypatch.setenv("TOTEM_COMPILE_AHEAD", "0")
    assert ahead.start("bfs", "emulated") is None
    monkeypatch.setenv("TOTEM_COMPILE_AHEAD", "1")
    assert ahead.start("bfs", "gpu") is None


@pytest.mark.slow
def test_the_second_process_fills_an_empty_cache(tmp_path):
    """`python -m totem_py.ahead JOB` on an empty cache: it exits 0, and a new process then
    finds the cache warm and BFS's advance kernel, serial and parallel, in it."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), TOTEM_COMPILE_AHEAD="1")
    job = dict(algorithm="bfs", device="cpu", weighted=False, undirected=False,
               partition="HIGH", cpu_share=1.0, gpus=1, hub_sort="degree")
    subprocess.run([sys.executable, "-m", "totem_py.ahead", json.dumps(job)], cwd=ROOT, env=env,
                   check=True, timeout=600)
    probe = ("from totem_py import ahead; print(ahead._cold())")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True).stdout
    assert out.strip() == "False"
    assert len(list(tmp_path.rglob("operators.advance_queue_claim_*_p-*.nbi"))) == 1
    assert len(list(tmp_path.rglob("operators.advance_queue_claim_*_s-*.nbi"))) == 1
