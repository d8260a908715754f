"""Strong scaling over GPUs: one graph, each algorithm on 1, 2, ... GPU partitions (GPU only, or
with a CPU partition of `--cpu-share` of the edges), in one process; the GPU partitions are dealt
to the host's devices in turn (several share a device when there are fewer).

    python -m experiments.scaling --graph rmat:25 --undirected --gpus 1,2,3,4 --trials 5 \\
        --json out/scaling_rmat25.json --plot out/scaling_rmat25.png

Prints a table per run: the median time, the time against the first GPU count's, the exchange
time (summed over supersteps), the bytes moved device to device per superstep and their rate
(bytes / exchange time), and the median superstep's wall time outside the slowest partition's
compute and the exchange (`rest ms`: launches, synchronisation and Python work). With `--check`
every run's result is verified against the algorithm's reference or verifier, else checked against
the first run's. The algorithms of one GPU count share its plan (experiments/harness.py); the
records go to the JSON after each run.
"""

import argparse
import sys

from experiments.harness import Report, Table, cells, make_graph, start


def exchange(m):
    """(exchange seconds, device-to-device bytes per superstep) of a run's records."""
    steps = m["per_superstep"]
    return (sum(s["exchange_s"] for s in steps),
            sum(s.get("peer_bytes", 0) for s in steps) / max(len(steps), 1))


def rest_ms(m):
    """The median superstep's wall time outside its slowest partition's compute and the
    exchange, in ms."""
    rest = sorted(s["wall_s"] - max(s["compute_s"], default=0.0) - s["exchange_s"]
                  for s in m["per_superstep"])
    return 1e3 * rest[len(rest) // 2] if rest else 0.0


def plot(records, path, title):
    from experiments.plotting import pyplot, save
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for alg in dict.fromkeys(r["algorithm"] for r in records):
        rows = [r for r in records if r["algorithm"] == alg]
        base = rows[0]["time_s"]
        ax.plot([r["gpus"] for r in rows], [base / r["time_s"] for r in rows], marker="o",
                label=alg)
    top = max(r["gpus"] for r in records)
    ax.plot([1, top], [1, top], color="grey", linestyle=":", label="linear")
    ax.set_xlabel("GPU partitions")
    ax.set_ylabel("speedup over one")
    ax.set_xticks(range(1, top + 1))
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    return save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="rmat:22")
    ap.add_argument("--undirected", action="store_true")
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--gpus", default="1,2,3,4")
    ap.add_argument("--cpu-share", type=float, default=0.0)
    ap.add_argument("--partition", default="HIGH")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--device", default="gpu", help="gpu, or emulated for a smoke test")
    ap.add_argument("--check", action="store_true", help="verify every run's result")
    ap.add_argument("--json", default=None)
    ap.add_argument("--plot", default=None, help="a PNG of the speedup over one GPU partition")
    args = ap.parse_args(argv)
    prov = start("experiments.scaling", argv, gpu=args.device == "gpu")
    algorithms = args.algorithms.split(",")
    graph = make_graph(args.graph, undirected=args.undirected, weighted="sssp" in algorithms)
    print(f"cpu share {args.cpu_share}", flush=True)
    report = Report(args.json, prov)
    table = Table(("algorithm", -9), ("gpus", 4), ("time ms", 9, ".2f"), ("x one", 6, ".2f"),
                  ("exch ms", 8, ".2f"), ("MB/step", 8, ".2f"), ("GB/s", 6, ".1f"),
                  ("steps", 5), ("rest ms", 7, ".3f"), ("check", -8))
    base = {}
    configs = [(str(g), dict(gpus=int(g))) for g in args.gpus.split(",")]
    for c in cells(graph, configs, algorithms, trials=args.trials, verify=args.check,
                   partition=args.partition, cpu_share=args.cpu_share, device=args.device,
                   threads=args.threads):
        m = c.metrics
        if m is None:
            sys.exit(f"{c.algorithm} on {c.config} GPU partitions: {c.check}")
        ex_s, per_step = exchange(m)
        base.setdefault(c.algorithm, m["time_s"])
        rate = per_step * m["supersteps"] / ex_s / 1e9 if ex_s > 0 else 0.0
        table.row(c.algorithm, m["gpus"], m["time_s"] * 1e3, m["time_s"] / base[c.algorithm],
                  ex_s * 1e3, per_step / 1e6, rate, m["supersteps"], rest_ms(m), c.check)
        report.add(dict(m, gpus=int(c.config), exchange_s=ex_s, peer_bytes_per_step=per_step,
                        rest_ms=rest_ms(m), per_superstep=None))
    if args.plot:
        plot(report.records, args.plot, f"{args.graph}, cpu share {args.cpu_share}: {prov['hardware']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
