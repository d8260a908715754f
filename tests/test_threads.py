"""CPU threads on a shared machine: the threading layer and wait policy the package picks, what the
--json record says of them, and how a CPU-bound process beside is seen (kernels_cpu/__init__.py)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import kernels_cpu

ROOT = Path(__file__).resolve().parents[1]
CHOSEN = ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY")


def package_env(**chosen):
    """The environment without the test runner's threading choices, plus `chosen`."""
    env = {k: v for k, v in os.environ.items() if k not in CHOSEN}
    env.update(chosen)
    return env


def child(code, **chosen):
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=package_env(**chosen),
                          capture_output=True, text=True, timeout=300)


def test_wait_policy_spins_only_on_large_idle_machines(monkeypatch):
    assert kernels_cpu.wait_policy(cores=2, load=0) == "passive"
    assert kernels_cpu.wait_policy(cores=16, load=0) == "active"
    assert kernels_cpu.wait_policy(cores=16, load=1) == "passive"
    monkeypatch.setattr(kernels_cpu, "other_load", lambda: None)     # load not readable
    assert kernels_cpu.wait_policy(cores=16) == "passive"


@pytest.mark.slow
def test_other_load_sees_a_cpu_bound_process():
    if kernels_cpu.other_load() is None:
        pytest.skip("no /proc/loadavg")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        assert kernels_cpu.other_load(looks=5) >= 1
    finally:
        busy.kill()
        busy.wait()


@pytest.mark.slow
def test_package_picks_the_layer_and_policy_and_keeps_the_users():
    show = ("import os, kernels_cpu; t = kernels_cpu.threads(); "
            "print(t['layer'], t['wait_policy'], os.environ['NUMBA_THREADING_LAYER'])")
    proc = child(show)
    assert proc.returncode == 0, proc.stderr
    layer, policy, env_layer = proc.stdout.split()
    assert layer == env_layer == kernels_cpu.threading_layer() and layer != "tbb"
    assert policy == kernels_cpu.wait_policy()
    proc = child(show, NUMBA_THREADING_LAYER="workqueue", OMP_WAIT_POLICY="active")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["workqueue", "active", "workqueue"]


def test_json_record_names_the_threads():
    import totem_py
    m = totem_py.run(totem_py.generate("rmat:8"), "bfs").metrics
    assert m["threads"] == kernels_cpu.threads()
    assert m["threads"]["layer"] in ("omp", "workqueue", "tbb") and m["threads"]["count"] >= 1
