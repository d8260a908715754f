"""A user algorithm written outside the package runs like the shipped ones."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import totem_py
from totem_py import reference as ref

from toys import toy_graphs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from khop import KHopReach  # noqa: E402


@pytest.mark.parametrize("strategy", ["HIGH", "LOW", "RAND"])
@pytest.mark.parametrize("share, gpus", [(1.0, 1), (0.5, 1), (0.3, 2), (0.0, 2)])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_khop_reach_matches_bfs_levels(strategy, share, gpus, k):
    g = toy_graphs()["rmat_small"]
    source = int(np.argmax(g.out_degree))
    levels = ref.bfs_levels(g, source)
    r = totem_py.run(g, KHopReach(source, k), partition=strategy, cpu_share=share, gpus=gpus,
                     device="emulated")
    assert np.array_equal(r.values, (levels >= 0) & (levels <= k))


def test_khop_script_runs():
    proc = subprocess.run([sys.executable, "examples/khop.py", "--graph", "rmat:10", "--k", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "within 2 hops" in proc.stdout
