"""Smoke tests: the experiment scripts run end to end at a tiny size and write their JSON."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _run(module, *args):
    proc = subprocess.run([sys.executable, "-m", module, *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_bench_cpu_smoke(tmp_path):
    out = tmp_path / "bench.json"
    proc = _run("experiments.bench_cpu", "--scales", "8", "--trials", "1", "--threads", "1",
                "--no-networkit", "--json", str(out))
    report = json.loads(out.read_text())
    assert report["machine"]["nproc"] >= 1
    assert len(report["scales"]) == 1
    scale = report["scales"][0]
    assert scale["vertices"] == 256
    rows = {r["algorithm"]: r for r in scale["rows"]}
    assert set(rows) == {"bfs", "sssp", "cc", "pagerank"}
    for alg, row in rows.items():
        for system in ("ours_cpu", "ours_hybrid", "scipy"):
            assert row[system]["time_s"] >= 0
        assert "networkit" not in row
        assert row["check"] == "ok", (alg, row["check"])
        assert alg in proc.stdout


def test_aggregation_smoke(tmp_path):
    out = tmp_path / "agg.json"
    proc = _run("experiments.aggregation", "--graphs", "rmat:8", "--json", str(out))
    report = json.loads(out.read_text())
    rows = report["rows"]
    assert [r["strategy"] for r in rows] == ["RAND", "HIGH", "LOW"]
    for r in rows:
        assert r["graph"] == "rmat:8"
        assert 0 <= r["remote_vertices"] <= r["boundary_edges"] <= r["edges"]
        assert r["beta_aggregated"] <= r["beta"]
        assert r["strategy"] in proc.stdout


def test_aggregation_two_gpus(tmp_path):
    out = tmp_path / "agg2.json"
    _run("experiments.aggregation", "--graphs", "uniform:7", "--gpus", "2", "--strategies", "HIGH",
         "--json", str(out))
    rows = json.loads(out.read_text())["rows"]
    assert len(rows) == 1 and len(rows[0]["partitions"]) == 3


def _mpi_env():
    import os
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                NUMBA_NUM_THREADS="1")


def test_mpi_scaling_smoke(tmp_path):
    out = tmp_path / "scaling"
    proc = subprocess.run([sys.executable, "-m", "experiments.mpi_scaling", "--ranks", "2",
                           "--scale", "8", "--algorithms", "pagerank", "--trials", "1",
                           "--model-scales", "8", "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300, env=_mpi_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(out.with_suffix(".json").read_text())
    row, = report["runs"]
    assert row["ranks"] == 2 and row["graph"] == "rmat:9" and row["supersteps"] == 5
    assert abs(row["dense_exchanges"] - 5.0) < 1e-9      # PageRank: every ghost slot every round
    # 256 vertices over up to 128 ranks is far from the model's large-graph regime; it is
    # within 1% from rmat:16 on (docs/mpi_scaling.md)
    assert all(abs(c["model"] / c["ghost_slots"] - 1) < 0.1 for c in report["model_check"]
               if c["ranks"] <= 8)


def test_mpi_check_smoke():
    proc = subprocess.run([sys.executable, "-m", "experiments.mpi_check", "--ranks", "2",
                           "--graph", "rmat:9", "--device", "emulated", "--algorithms", "bfs",
                           "--trials", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=_mpi_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "results MATCH" in proc.stdout and "all results match" in proc.stdout
