"""Offload-ratio sweep (TOTEM figures 9, 15, 19): every partitioning x CPU share x algorithm on
one graph, in one process, with one JSON line per run.

    python -m experiments.offload_sweep --graph rmat:24 --undirected --algorithm bfs,pagerank \\
        --partitions HIGH,LOW,RAND --cpu-shares 1,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1,0 \\
        --trials 3 --threads 16 --out out/ [--plot] [--resume OLD.jsonl]

(those are the defaults, except --threads, which defaults to every core Numba sees).

The graph is built once. Share 1 (CPU only) and share 0 (GPU only) are the same plan for every
partitioning, so they run once; every other (share, partitioning) builds one plan that all the
algorithms reuse, then frees it. Shares whose GPU partition does not fit the GPU budget
(`--gpu-memory`, else 80% of the free GPU memory, TOTEM's rule as in --cpu-share auto) are not run
and are written as missing. Hybrid shares run coarse to fine (0.5 first, then 0.9 and 0.1, ...)
so that a run stopped by `--time-limit` leaves an even grid; what it did not reach is written as
skipped, and `--resume OLD.jsonl` runs just those (and failed ones) in a later call.

Writes OUT/sweep.jsonl, one line per (algorithm, partitioning, share): the run's --json record
(DESIGN.md) plus `sweep` {algorithm, partition, cpu_share, role (cpu-only, gpu-only, hybrid),
status (ok, does not fit, failed, skipped), error, wall_s (plan + warm-up + trials)}; a missing run
has `time_s` and `teps` null. Lines are flushed as they are written, so a killed sweep leaves
what it measured. Progress goes to stderr, a table and the performance model's summary to stdout.
`--plot` then renders the figures (needs matplotlib); `python -m experiments.plot_sweep
OUT/sweep.jsonl --out DIR` renders them later, elsewhere.
"""

import argparse
import gc
import json
import sys
import time
from pathlib import Path

from experiments import offload_model
from experiments.plot_sweep import render
from experiments.sweep_records import STRATEGIES, print_table, read_jsonl

DEFAULT_SHARES = "1,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1,0"


def coarse_to_fine(shares):
    """Shares reordered so that every prefix is spread over the range: midpoints first."""
    xs = sorted(set(shares))
    out, spans = [], [(0, len(xs) - 1)]
    while spans:
        nxt = []
        for lo, hi in spans:
            if lo > hi:
                continue
            mid = (lo + hi) // 2
            out.append(xs[mid])
            nxt += [(lo, mid - 1), (mid + 1, hi)]
        spans = nxt
    return out


def read_graph(totem_py, spec, undirected, seed, weighted):
    """A generator spec (rmat:/uniform:) or a file path."""
    if spec.split(":", 1)[0].lower() in ("rmat", "uniform"):
        return totem_py.generate(spec, seed=seed, undirected=undirected, weighted=weighted)
    return totem_py.load(spec, undirected=undirected)


def key(sweep):
    """What identifies a configuration: CPU-only and GPU-only runs are one per algorithm."""
    share = sweep["cpu_share"]
    return sweep["algorithm"], sweep["partition"] if 0 < share < 1 else "*", share


def role(share):
    return "cpu-only" if share >= 1 else "gpu-only" if share <= 0 else "hybrid"


def is_out_of_memory(exc):
    text = f"{type(exc).__name__} {exc}"
    return "OutOfMemory" in text or "--gpu-memory is" in text or "out of memory" in text


class Sweep:
    def __init__(self, args, graph, out):
        self.args, self.graph, self.out = args, graph, out
        self.t0 = args.t_start
        self.records = []

    def elapsed(self):
        return time.perf_counter() - self.t0

    def write(self, record):
        self.records.append(record)
        self.out.write(json.dumps(record) + "\n")
        self.out.flush()

    def missing(self, algorithm, partition, share, status, error=None):
        g = self.graph
        self.write(dict(algorithm=algorithm, partition=partition, cpu_share=share,
                        graph=dict(spec=g.spec, vertices=g.n_vertices, edges=g.n_edges),
                        device=self.args.device, time_s=None, teps=None,
                        sweep=dict(algorithm=algorithm, partition=partition, cpu_share=share,
                                   role=role(share), status=status, error=error, wall_s=0.0)))
        print(f"[{self.elapsed():6.1f}s] {algorithm:8} {partition:4} share {share:4.2f}: "
              f"{status}{': ' + error if error else ''}", file=sys.stderr, flush=True)

    def step(self, partition, share, algorithms):
        """One plan: every algorithm that fits, the plan reused."""
        import totem_py
        a = self.args
        plan = None
        for alg in algorithms:
            t1 = time.perf_counter()
            try:
                r = totem_py.run(self.graph, alg, partition=partition, cpu_share=share,
                                 gpus=a.gpus, device=a.device, source=a.source,
                                 iterations=a.iterations, trials=a.trials, threads=a.threads,
                                 seed=a.seed, gpu_memory=a.gpu_memory, plan=plan)
            except Exception as exc:   # a configuration that fails is recorded, not fatal
                status = "does not fit" if is_out_of_memory(exc) else "failed"
                self.missing(alg, partition, share, status, f"{type(exc).__name__}: {exc}")
                gc.collect()
                continue
            plan = r.plan
            m = r.metrics
            wall = time.perf_counter() - t1
            self.write(dict(m, sweep=dict(algorithm=alg, partition=partition, cpu_share=share,
                                          role=role(share), status="ok", error=None,
                                          wall_s=wall)))
            print(f"[{self.elapsed():6.1f}s] {alg:8} {partition:4} share {share:4.2f}: "
                  f"{m['time_s'] * 1e3:10.2f} ms {m['teps'] / 1e9:8.3f} GTEPS "
                  f"beta {m['beta']:.3f}/{m['beta_aggregated']:.4f}  ({wall:.1f} s)",
                  file=sys.stderr, flush=True)
            del r
        del plan
        gc.collect()


def run_sweep(args):
    import totem_py
    from totem_py.backend import resolve_device
    from totem_py.model import min_cpu_share

    args.device = resolve_device(args.device)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "sweep.jsonl"
    t0 = time.perf_counter()
    graph = read_graph(totem_py, args.graph, args.undirected, args.seed,
                       weighted="sssp" in args.algorithms)
    print(f"{args.graph}{' undirected' if args.undirected else ''}: {graph.n_vertices:,} "
          f"vertices, {graph.n_edges:,} edges (built in {time.perf_counter() - t0:.1f} s)",
          file=sys.stderr, flush=True)
    alpha_min = {(alg, p): min_cpu_share(graph, alg, p, args.gpus, args.device,
                                         args.gpu_memory, "auto", args.seed)
                 for alg in args.algorithms for p in args.partitions}
    hybrid = [s for s in coarse_to_fine(args.cpu_shares) if 0 < s < 1]
    steps = []
    if 1.0 in args.cpu_shares:
        steps.append((args.partitions[0], 1.0))
    if 0.0 in args.cpu_shares:
        steps.append((args.partitions[0], 0.0))
    steps += [(p, s) for s in hybrid for p in args.partitions]
    kept = []
    if args.resume:     # keep what was measured (or found not to fit)
        kept = [r for r in read_jsonl(args.resume)
                if r["sweep"]["status"] in ("ok", "does not fit")]
    done = {key(r["sweep"]) for r in kept}
    with open(path, "w") as f:
        sweep = Sweep(args, graph, f)
        for r in kept:
            sweep.write(r)
        longest = 0.0    # the longest hybrid step so far: the guess for the next one
        for partition, share in steps:
            todo = [alg for alg in args.algorithms
                    if key(dict(algorithm=alg, partition=partition, cpu_share=share)) not in done]
            if not todo:
                continue
            fits = [alg for alg in todo if share >= alpha_min[alg, partition]]
            for alg in todo:
                if alg not in fits:
                    sweep.missing(alg, partition, share, "does not fit",
                                  f"GPU budget: cpu share >= {alpha_min[alg, partition]:.3f} "
                                  "needed")
            if not fits:
                continue
            if args.time_limit and sweep.elapsed() + longest > args.time_limit:
                for alg in fits:
                    sweep.missing(alg, partition, share, "skipped",
                                  f"--time-limit {args.time_limit:g} s")
                continue
            t1 = time.perf_counter()
            sweep.step(partition, share, fits)
            if 0 < share < 1:
                longest = max(longest, time.perf_counter() - t1)
    print(f"wrote {path} ({len(sweep.records)} lines, {sweep.elapsed():.0f} s)", file=sys.stderr)
    return path, sweep.records


def parse_args(argv):
    from totem_py.run import parse_bytes
    p = argparse.ArgumentParser(prog="python -m experiments.offload_sweep",
                                description=__doc__.split("\n\n")[0],
                                epilog="Writes OUT/sweep.jsonl (one --json record per run) and, "
                                       "with --plot, the figures; see the module's docstring.")
    p.add_argument("--graph", default="rmat:24", help="rmat:S[:EF], uniform:S[:EF] or a file")
    p.add_argument("--undirected", action="store_true", default=True,
                   help="add the reverse of every edge (the default)")
    p.add_argument("--directed", dest="undirected", action="store_false",
                   help="keep the graph as generated or read")
    p.add_argument("--algorithm", "--algorithms", dest="algorithms", default="bfs,pagerank",
                   help="one or more, comma-separated")
    p.add_argument("--partitions", default="HIGH,LOW,RAND", help="comma-separated strategies")
    p.add_argument("--cpu-shares", default=DEFAULT_SHARES,
                   help=f"comma-separated fractions of the edges on the CPU "
                        f"(default {DEFAULT_SHARES})")
    p.add_argument("--gpus", type=int, default=1, help="number of GPU partitions")
    p.add_argument("--device", default="auto", help="auto, gpu, emulated, cpu")
    p.add_argument("--gpu-memory", default=None, help="per-GPU budget for graph data (e.g. 4G)")
    p.add_argument("--source", type=int, default=None, help="root for bfs/sssp/bc")
    p.add_argument("--iterations", type=int, default=5, help="PageRank rounds")
    p.add_argument("--trials", type=int, default=3,
                   help="timed runs per configuration after one untimed warm-up (default 3)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads (default: every core Numba sees)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the generator, the default source and the partitioner")
    p.add_argument("--time-limit", type=float, default=540,
                   help="seconds since start: begin no plan that would likely end past this "
                        "(0: no limit)")
    p.add_argument("--out", default="out", help="directory for sweep.jsonl and the figures")
    p.add_argument("--resume", metavar="FILE", default=None,
                   help="copy the runs of an earlier sweep.jsonl that finished or did not fit "
                        "into OUT/sweep.jsonl and run only the rest (same graph and options)")
    p.add_argument("--plot", action="store_true", help="render the figures after the sweep")
    p.add_argument("--plot-only", metavar="FILE", default=None,
                   help="render the figures of an earlier sweep.jsonl into --out; run nothing")
    args = p.parse_args(argv)
    args.algorithms = [a.strip().lower() for a in args.algorithms.split(",") if a.strip()]
    args.partitions = [s.strip().upper() for s in args.partitions.split(",") if s.strip()]
    bad = [s for s in args.partitions if s not in STRATEGIES]
    if bad:
        p.error(f"--partitions: unknown {', '.join(bad)} (HIGH, LOW, RAND)")
    try:
        args.cpu_shares = [float(s) for s in args.cpu_shares.split(",") if s.strip()]
    except ValueError:
        p.error(f"--cpu-shares must be numbers in [0, 1], not {args.cpu_shares!r}")
    if not args.cpu_shares or any(not 0 <= s <= 1 for s in args.cpu_shares):
        p.error("--cpu-shares must be numbers in [0, 1]")
    args.gpu_memory = parse_bytes(args.gpu_memory) if args.gpu_memory else None
    return args


def main(argv=None):
    t_start = time.perf_counter()
    args = parse_args(argv)
    args.t_start = t_start
    from totem_py import InputError
    if args.plot_only:
        render(args.plot_only, args.out)
        return 0
    try:
        path, records = run_sweep(args)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print_table(records)
    offload_model.print_summary(offload_model.analyse(records))
    if args.plot:
        render(path, args.out, tables=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
