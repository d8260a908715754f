"""The GPU backend of the operators without a GPU, with every shipped algorithm against the
references: compiled to PTX for sm_90 by numba-cuda (tests/ptxcheck, in this process: a functor
or template numba-cuda cannot compile fails here), and run under numba-cuda's simulator
(tests/sim_driver.py, in a process of its own: the simulator must be chosen before numba.cuda is
first imported, and the other tests import it without). On a real device, `pytest -m gpu`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bsp.partition import EmulatedGpuPartition
from test_engine import check_matrix
from toys import toy_graphs, with_random_weights

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ["advance_lb", "bitmap", "pull_thread", "pull_warp", "scatter", "vertex_map",
             "vertex_values"]


@pytest.mark.parametrize("name", ["rmat_small", "star", "disconnected"])
def test_algorithms_compile_for_the_gpu(name, monkeypatch):
    """GPU partitions' operator calls compiled by the GPU backend and computed by the CPU's, at
    cpu shares 0 and 0.5, with one and two GPU partitions; results against the references."""
    import kernels_gpu.operators as gpu
    monkeypatch.setattr(EmulatedGpuPartition, "operator_package", "tests.ptxcheck")
    monkeypatch.setattr(gpu, "_KERNELS", {})
    check_matrix(with_random_weights(toy_graphs()[name], seed=3), "HIGH", devices=("emulated",),
                 shares=(0.0, 0.5), gpus_list=(1, 2))
    compiled = {key[0].__name__ for key, kernel in gpu._KERNELS.items() if kernel.launches}
    if name == "rmat_small":        # BFS goes bottom-up there: every template is used
        assert sorted(compiled) == TEMPLATES
    else:
        assert compiled


def test_algorithms_run_on_the_simulated_gpu(tmp_path):
    report = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "sim_driver.py"), str(report)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    r = json.loads(report.read_text())
    assert not r["failures"], "\n".join(r["failures"])
    assert r["runs"] == 42       # 3 graphs x 2 configurations x 7 algorithms
    assert r["templates"] == TEMPLATES
    assert r["modes"]["bfs"] == ["pull", "push"]
