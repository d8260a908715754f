"""TOTEM's performance model (Gharaibeh et al., section 3), fitted on this machine, and
`--cpu-share model`, which uses it to pick the CPU share.

The paper's equations, with W the edges one run processes (|E| in the paper; here the TEPS
numerator: the reached part's edges for bfs/sssp/bc, |E| x rounds for pagerank):

    (1) t(G_p) = |E_p^b| / c + |E_p| / r_p          boundary edges over the bus, then the own edges
    (2) makespan = max over processors p of t(G_p)
    (3) speedup = t(G on the host only) / makespan
    (4) speedup = 1 / (alpha + beta * r_cpu / c)    alpha = |E_cpu| / |E|, beta = |E^b| / |E|

With one GPU both partitions' boundary sets are the cut edges (beta W of them), so (1)-(2) read

    t(alpha, beta) = beta W / c + max(alpha W / r_cpu, (1 - alpha) W / (gpus r_gpu))

and (4) is this under the paper's assumption (ii) that the CPU partition is the slower one. We keep
(2)'s max, so the model also covers shares where the GPUs are the bottleneck (alpha near 0).

Parameters, measured rather than taken from bus bandwidth as the paper does (`fit`):
  r_cpu  W / time_s of a CPU-only run (so the model reproduces that run exactly);
  r_gpu  W / (gpus time_s) of a GPU-only run if one is given, else from hybrid runs: each GPU's
         edges W (1 - alpha) / gpus over the slowest GPU's compute seconds (summed over supersteps);
  c      from hybrid runs: least squares through the origin of exchange seconds (summed over
         supersteps) against beta W. beta is `beta_aggregated` (messages after aggregation, one
         per remote vertex: what our exchange sends) unless told `beta_key="beta"` (boundary edges,
         the paper's beta before aggregation).
The model knows a partitioning only through beta: HIGH and LOW differ in how fast each processor
runs its part (TOTEM section 6), which it does not see.

`--cpu-share model` (`choose_share`): two calibration runs of the algorithm on the actual graph
(CPU only, and the chosen partitioning at share max(0.5, smallest share that fits the GPUs), one
trial each after the warm-up, each building its own plan), beta for every candidate share
(0, 0.05, ..., 1 plus the smallest that fits; shares whose GPU partitions do not fit the budget
are left out) from `partitioners.estimate_stats` (one pass over the edges per share, no plan), and
the candidate with the least predicted time. Its cost (two plans and four runs) is recorded.
"""

import math
import statistics
import time
from dataclasses import asdict, dataclass

CALIBRATION_SHARE = 0.5
GRID_STEP = 0.05


@dataclass
class Rates:
    r_cpu: float          # edges/s of the host alone
    r_gpu: float          # edges/s of one GPU partition
    c: float              # boundary edges (or messages) per second of exchange; inf: free
    work: float           # W, edges processed per run
    gpus: int = 1
    beta_key: str = "beta_aggregated"
    r_gpu_from: str = ""  # "gpu-only run" or "hybrid compute"

    def as_dict(self):
        return {k: (None if isinstance(v, float) and math.isinf(v) else v)
                for k, v in asdict(self).items()}


def work(record):
    """W: the edges one run processed (the TEPS numerator)."""
    return record["teps"] * record["time_s"]


def alpha(record):
    """The CPU partition's actual share of the edges (partitions are cut at vertex boundaries)."""
    if record["cpu_share"] <= 0 or not record["partitions"]:
        return 0.0
    return record["partitions"][0]["edges"] / max(record["graph"]["edges"], 1)


def phase_times(record):
    """Seconds of the last trial (the one per_superstep describes) by phase: compute (the time
    the compute phases took: per superstep the slower of the host partitions, which run one after
    another, and the real GPUs, which run concurrently with them, summed over supersteps),
    compute_cpu (the CPU partition's), compute_gpu (per superstep the slowest GPU partition's),
    exchange (past the compute: a push superstep's exchange starts by waiting for the GPUs'
    kernels, which the compute already counts), transfer (0: host-to-GPU copies are not timed
    apart; box copies are inside exchange and zerocopy edge reads inside compute) and overhead
    (the rest: init, placing boxes, votes). On the emulated device (and --device cpu) every
    partition runs on the host, one at a time."""
    steps = record["per_superstep"]
    n = len(record["partitions"])
    cpu = [0] if record["cpu_share"] > 0 else []
    gpu = [p for p in range(n) if p not in cpu]
    real = gpu if record.get("device") == "gpu" else []
    host = [p for p in range(n) if p not in real]
    total = record["trials_s"][-1] if record.get("trials_s") else record["time_s"]
    compute = exchange = 0.0
    for s in steps:
        c = max(sum(s["compute_s"][p] for p in host),
                max((s["compute_s"][p] for p in real), default=0.0))
        compute += c
        exchange += min(s["exchange_s"], max(s.get("wall_s", math.inf) - c, 0.0))
    return dict(time_s=total, compute_s=compute,
                compute_cpu_s=sum(s["compute_s"][p] for s in steps for p in cpu),
                compute_gpu_s=sum(max((s["compute_s"][p] for p in gpu), default=0.0)
                                  for s in steps),
                exchange_s=exchange, transfer_s=0.0,
                overhead_s=total - compute - exchange)


def kind(record):
    """'cpu-only', 'gpu-only' or 'hybrid'."""
    a = alpha(record)
    if a >= 1.0:
        return "cpu-only"
    if a <= 0.0:
        return "gpu-only"
    return "hybrid"


def fit(records, beta_key="beta_aggregated"):
    """Rates from run records (the --json metrics) of one algorithm on one graph: at least one
    CPU-only run, and a GPU-only or a hybrid run."""
    by_kind = {"cpu-only": [], "gpu-only": [], "hybrid": []}
    for r in records:
        by_kind[kind(r)].append(r)
    if not by_kind["cpu-only"]:
        raise ValueError("the model needs a CPU-only run (cpu share 1)")
    if not by_kind["gpu-only"] and not by_kind["hybrid"]:
        raise ValueError("the model needs a GPU-only or a hybrid run")
    r_cpu = statistics.median(work(r) / r["time_s"] for r in by_kind["cpu-only"])
    w = statistics.median(work(r) for r in by_kind["cpu-only"])
    gpus = max(len(r["partitions"]) - (r["cpu_share"] > 0) for r in records) or 1
    if by_kind["gpu-only"]:
        r_gpu = statistics.median(work(r) / (len(r["partitions"]) * r["time_s"])
                                  for r in by_kind["gpu-only"])
        r_gpu_from = "gpu-only run"
    else:
        rates = []
        for r in by_kind["hybrid"]:
            g = len(r["partitions"]) - 1
            t = phase_times(r)["compute_gpu_s"]
            rates.append(math.inf if t <= 0 else work(r) * (1 - alpha(r)) / g / t)
        r_gpu = statistics.median(rates)
        r_gpu_from = "hybrid compute"
    sxx = sxy = 0.0
    for r in by_kind["hybrid"]:
        x = r[beta_key] * work(r)
        sxx += x * x
        sxy += x * phase_times(r)["exchange_s"]
    c = sxx / sxy if sxy > 0 else math.inf
    return Rates(r_cpu, r_gpu, c, w, gpus, beta_key, r_gpu_from)


def predict_time(rates, alpha, beta, work=None):
    """Equations 1-2: seconds for a run with `alpha` of the edges on the CPU and `beta` (of the
    kind rates.beta_key names) crossing."""
    w = rates.work if work is None else work
    t_cpu = alpha * w / rates.r_cpu
    t_gpu = (1 - alpha) * w / (rates.gpus * rates.r_gpu) if alpha < 1 else 0.0
    t_comm = beta * w / rates.c if beta > 0 else 0.0
    return t_comm + max(t_cpu, t_gpu)


def predict_speedup(rates, alpha, beta):
    """Equation 3 (equation 4 where the CPU is the bottleneck): over the host alone."""
    return (rates.work / rates.r_cpu) / predict_time(rates, alpha, beta)


def predict_record(rates, record):
    """Predicted seconds and speedup for the configuration of a run record."""
    t = predict_time(rates, alpha(record), record[rates.beta_key], work(record))
    return t, (work(record) / rates.r_cpu) / t


def pearson(xs, ys):
    """Pearson's correlation coefficient (None with fewer than two points or no spread)."""
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None
             and math.isfinite(x) and math.isfinite(y)]
    if len(pairs) < 2:
        return None
    mx = sum(x for x, _ in pairs) / len(pairs)
    my = sum(y for _, y in pairs) / len(pairs)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else None


def pick(rates, candidates):
    """The candidate (a dict with alpha and rates.beta_key) of least predicted time; returns
    (best, table) where each table row adds predicted_s and predicted_speedup."""
    table = []
    for cand in candidates:
        t = predict_time(rates, cand["alpha"], cand[rates.beta_key])
        table.append(dict(cand, predicted_s=t, predicted_speedup=rates.work / rates.r_cpu / t))
    best = min(table, key=lambda row: row["predicted_s"])
    return best, table


def min_cpu_share(graph, algorithm, partition="HIGH", gpus=1, device="auto",
                  gpu_memory=None, transfer="auto", seed=0):
    """The smallest CPU share whose GPU partitions fit the GPU budget (what --cpu-share auto
    picks): shares below it do not fit."""
    from .backend import resolve_device
    from .harness import choose_share as auto, make_algorithm, prepare_graph
    device = resolve_device(device)
    alg, _ = make_algorithm(algorithm, graph, source=0 if graph.n_vertices else None)
    graph = prepare_graph(graph, alg)
    if gpus < 1:
        return 1.0
    return auto(graph, alg, partition.upper(), gpus, device, gpu_memory, transfer, seed)


def candidate_shares(alpha_min, step=GRID_STEP):
    """0, step, ..., 1 at or above alpha_min, plus alpha_min itself."""
    k = round(1 / step)
    grid = {round(i / k, 6) for i in range(k + 1)} | {float(alpha_min)}
    return sorted(s for s in grid if s >= alpha_min)


def choose_share(graph, algorithm, partition, gpus, device, gpu_memory, transfer, seed,
                 run, progress=None, step=GRID_STEP, **options):
    """--cpu-share model: see the module docstring. `run` is harness.run; `options` (source,
    iterations, threads) go to the calibration runs. Returns (share, record, plans by share)."""
    from partitioners import estimate_stats
    t0 = time.perf_counter()
    a_min = min_cpu_share(graph, algorithm, partition, gpus, device, gpu_memory, transfer, seed)
    info = dict(method="TOTEM eq. 1-4, rates from calibration runs", alpha_min=a_min,
                beta_key="beta_aggregated")
    if graph.n_edges == 0:
        info.update(chosen=1.0, note="no edges to share: CPU only", cost_s=0.0)
        return 1.0, info, {}
    if gpus < 1 or a_min >= 1.0:
        info.update(chosen=1.0, note="no GPU partition fits: CPU only", cost_s=0.0)
        return 1.0, info, {}
    runs = {}
    for share in (1.0, max(CALIBRATION_SHARE, a_min)):
        if progress:
            progress.phase(f"cpu-share model: calibration run at cpu share {share}")
        runs[share] = run(graph, algorithm, partition=partition, cpu_share=share, gpus=gpus,
                          device=device, gpu_memory=gpu_memory, transfer=transfer, seed=seed,
                          trials=1, progress=progress, **options)
    if work(runs[1.0].metrics) == 0:
        info.update(chosen=1.0, note="the calibration run walked no edge: CPU only",
                    cost_s=time.perf_counter() - t0)
        return 1.0, info, {1.0: runs[1.0].plan}
    rates = fit([r.metrics for r in runs.values()])
    shares = candidate_shares(a_min, step)
    if progress:
        progress.phase(f"cpu-share model: beta for {len(shares)} candidate shares")
    stats = estimate_stats(graph, partition, shares, gpus, seed)
    cands = [dict(cpu_share=s["cpu_share"], alpha=s["alpha"], beta=s["beta"],
                  beta_aggregated=s["beta_aggregated"]) for s in stats]
    best, table = pick(rates, cands)
    info.update(rates=rates.as_dict(),
                calibration=[dict(cpu_share=s, time_s=r.metrics["time_s"],
                                  exchange_s=phase_times(r.metrics)["exchange_s"])
                             for s, r in runs.items()],
                candidates=table, chosen=best["cpu_share"], predicted_s=best["predicted_s"],
                predicted_speedup=best["predicted_speedup"],
                cost_s=time.perf_counter() - t0)
    return best["cpu_share"], info, {s: r.plan for s, r in runs.items()}
