"""The performance model (totem_py/model.py) on synthetic records with known rates, the per-share
beta estimate against full plans, and --cpu-share model through the command line."""

import json
import math

import pytest

import totem_py
from partitioners import estimate_stats, partition
from totem_py import model

from tests.support.cli import run_here

W = 1e9            # edges per run
R_CPU, R_GPU, C = 1e9, 4e9, 2e9


def record(share, beta_agg, cpu_s, gpu_s, exchange_s, device="gpu", steps=2):
    """A run record whose phases follow the model exactly, split over `steps` supersteps."""
    parts = []
    if share > 0:
        parts.append(dict(kind="cpu", edges=int(share * W)))
    if share < 1:
        parts.append(dict(kind="gpu", edges=int((1 - share) * W)))
    compute = ([cpu_s / steps] if share > 0 else []) + ([gpu_s / steps] if share < 1 else [])
    time_s = max(cpu_s, gpu_s) + exchange_s
    return dict(cpu_share=share, graph=dict(edges=int(W)), partitions=parts, device=device,
                beta=5 * beta_agg, beta_aggregated=beta_agg, time_s=time_s, trials_s=[time_s],
                teps=W / time_s,
                per_superstep=[dict(compute_s=compute, exchange_s=exchange_s / steps)] * steps)


CPU_ONLY = record(1.0, 0.0, W / R_CPU, 0.0, 0.0)
GPU_ONLY = record(0.0, 0.0, 0.0, W / R_GPU, 0.0)
HYBRID = record(0.5, 0.1, 0.5 * W / R_CPU, 0.5 * W / R_GPU, 0.1 * W / C)


def test_fit_recovers_known_rates():
    rates = model.fit([CPU_ONLY, HYBRID])
    assert rates.r_cpu == pytest.approx(R_CPU)
    assert rates.r_gpu == pytest.approx(R_GPU) and rates.r_gpu_from == "hybrid compute"
    assert rates.c == pytest.approx(C)
    assert rates.work == pytest.approx(W)
    rates = model.fit([CPU_ONLY, GPU_ONLY, HYBRID])
    assert rates.r_gpu == pytest.approx(R_GPU) and rates.r_gpu_from == "gpu-only run"


def test_prediction_is_totem_equation_4_when_the_cpu_is_the_bottleneck():
    rates = model.Rates(R_CPU, R_GPU, C, W)
    for alpha, beta in ((0.5, 0.1), (0.8, 0.3), (0.6, 0.0)):
        assert model.predict_speedup(rates, alpha, beta) == \
            pytest.approx(1 / (alpha + beta * R_CPU / C))
    # GPU-bound: 0.9 W / r_gpu = 0.225 s > 0.1 W / r_cpu, plus 0.05 W / c = 0.025 s
    assert model.predict_time(rates, 0.1, 0.05) == pytest.approx(0.25)
    assert model.predict_time(rates, 1.0, 0.0) == pytest.approx(1.0)
    assert model.predict_time(rates, 0.0, 0.0) == pytest.approx(0.25)
    assert model.predict_time(model.Rates(R_CPU, R_GPU, math.inf, W), 0.5, 0.3) == \
        pytest.approx(0.5)


def test_pick_takes_the_least_predicted_time():
    rates = model.fit([CPU_ONLY, HYBRID])
    cands = [dict(cpu_share=s, alpha=s, beta=0.0, beta_aggregated=b)
             for s, b in ((0.0, 0.0), (0.2, 0.08), (0.5, 0.1), (1.0, 0.0))]
    best, table = model.pick(rates, cands)
    assert best["cpu_share"] == 0.2 and best["predicted_s"] == pytest.approx(0.24)
    assert [round(r["predicted_s"], 6) for r in table] == [0.25, 0.24, 0.55, 1.0]


def test_phase_times_and_helpers():
    t = model.phase_times(HYBRID)
    assert t["compute_s"] == pytest.approx(0.5) and t["compute_gpu_s"] == pytest.approx(0.125)
    assert t["exchange_s"] == pytest.approx(0.05) and t["transfer_s"] == 0
    assert t["overhead_s"] == pytest.approx(0.0, abs=1e-12)
    # emulated partitions run one after another: compute is their sum
    emulated = record(0.5, 0.1, 0.5, 0.125, 0.05, device="emulated")
    assert model.phase_times(emulated)["compute_s"] == pytest.approx(0.625)
    # a push superstep's exchange first waits for the GPU's kernels (GPU 12 ms, CPU 7 ms, the
    # exchange timed as 4 + 1 ms, the superstep 13 ms): past the compute it took 1 ms
    push = dict(HYBRID, trials_s=[0.013],
                per_superstep=[dict(compute_s=[0.007, 0.012], exchange_s=0.005, wall_s=0.013)])
    t = model.phase_times(push)
    assert t["compute_s"] == pytest.approx(0.012) and t["exchange_s"] == pytest.approx(0.001)
    assert t["overhead_s"] == pytest.approx(0.0, abs=1e-12)
    assert model.alpha(HYBRID) == 0.5 and model.alpha(GPU_ONLY) == 0.0
    assert model.pearson([1, 2, 3], [2, 4, 6.5]) > 0.99
    assert model.pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1)
    assert model.pearson([1], [1]) is None
    assert model.candidate_shares(0.33)[:2] == [0.33, 0.35] and model.candidate_shares(0)[-1] == 1
    with pytest.raises(ValueError):
        model.fit([HYBRID])


@pytest.mark.parametrize("spec,undirected", [("rmat:10", True), ("rmat:9", False)])
@pytest.mark.parametrize("strategy", ["HIGH", "LOW", "RAND", "BLOCK"])
@pytest.mark.parametrize("gpus", [1, 2])
def test_estimate_stats_matches_the_plans(spec, undirected, strategy, gpus):
    g = totem_py.generate(spec, undirected=undirected)
    shares = [0.0, 0.1, 0.5, 0.77, 1.0]
    for share, est in zip(shares, estimate_stats(g, strategy, shares, gpus, seed=3)):
        st = partition(g, strategy, share, gpus, 3).stats()
        keys = ("kind", "vertices", "edges", "boundary_edges", "remote_vertices")
        assert [[r[k] for k in keys] for r in st["partitions"]] == \
            [[r[k] for k in keys] for r in est["partitions"]]
        assert (st["beta"], st["beta_aggregated"]) == (est["beta"], est["beta_aggregated"])


@pytest.mark.slow
def test_cli_cpu_share_model_records_its_choice(tmp_path):
    out = tmp_path / "m.json"
    proc = run_here("--graph", "rmat:10", "--undirected", "--algorithm", "pagerank",
                    "--cpu-share", "model", "--device", "emulated", "--gpu-memory", "48K",
                    "--json", out)
    assert proc.returncode == 0, proc.stderr
    m = json.loads(out.read_text())
    choice = m["cpu_share_model"]
    assert m["cpu_share"] == choice["chosen"]
    shares = [c["cpu_share"] for c in choice["candidates"]]
    assert min(shares) == choice["alpha_min"] > 0.3    # 48K holds about half the graph
    assert choice["chosen"] in shares and max(shares) == 1.0
    assert [c["cpu_share"] for c in choice["calibration"]] == [1.0, max(0.5, choice["alpha_min"])]
    assert choice["rates"]["r_cpu"] > 0 and choice["cost_s"] > 0
    assert "chosen by the performance model" in proc.stdout
