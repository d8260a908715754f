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
