"""Where the time goes (TOTEM figures 8, 10, 16): per run, compute, exchange, transfer and
overhead, as stacked bars in percent of the run's time, with the CPU partition's and the slowest
GPU partition's compute beside them (they run concurrently; the stacked "compute" is, per
superstep, the slower of the two, summed).

    python -m experiments.breakdown --from out/sweep.jsonl [--algorithm bfs] [--partition HIGH]
        [--shares 0.8,0.5] [--absolute] [--png out/breakdown.png]

From each record's per_superstep list (the last trial; totem_py.model.phase_times): compute =
sum over supersteps of the compute phase's time (the slower of the CPU and the real GPUs, which
run concurrently; on the emulated device partitions run one after another, so their sum);
exchange = sum of exchange_s (box copies between devices, the
exchange itself and folding inboxes); transfer = 0, because host-to-GPU copies are not timed
apart (edges are resident on the GPU, box copies are inside exchange, zerocopy edge reads inside
compute); overhead = the run's time minus the rest (init, placing boxes, votes). Prints the table;
draws it with --png (needs matplotlib).
"""

import argparse
import sys

from totem_py.model import phase_times

from .sweep_records import STRATEGIES, ok, points, read_jsonl

PHASES = (("compute_s", "compute (the bottleneck)", "tab:orange"),
          ("exchange_s", "exchange", "tab:blue"),
          ("transfer_s", "transfer (not timed apart: 0)", "tab:purple"),
          ("overhead_s", "overhead", "0.7"))


def rows(records, algorithm=None, partitions=None, shares=None):
    """One row per selected run: algorithm, partition, cpu share and phase_times()."""
    records = ok(records)
    algs = [algorithm] if algorithm else list(dict.fromkeys(r["sweep"]["algorithm"]
                                                            for r in records))
    out = []
    for alg in algs:
        parts = partitions or [p for p in STRATEGIES if any(
            r["sweep"]["partition"] == p and r["sweep"]["role"] == "hybrid" for r in records)]
        for p in parts:
            for s, r in points(records, alg, p).items():
                if r["sweep"]["status"] != "ok" or (shares and s not in shares):
                    continue
                out.append(dict(algorithm=alg, partition=p, cpu_share=s,
                                graph=r["graph"]["spec"], device=r["device"], **phase_times(r)))
    return out


def print_table(table, file=sys.stdout):
    print(f"\n{'algorithm':9} {'part':4} {'share':>5} {'time ms':>9} {'compute':>8} "
          f"{'cpu':>8} {'gpu':>8} {'exchange':>8} {'transfer':>8} {'overhead':>8}  (ms)", file=file)
    for r in table:
        ms = {k: 1e3 * v for k, v in r.items() if k.endswith("_s")}
        print(f"{r['algorithm']:9} {r['partition']:4} {r['cpu_share']:5.2f} {ms['time_s']:9.2f} "
              f"{ms['compute_s']:8.2f} {ms['compute_cpu_s']:8.2f} {ms['compute_gpu_s']:8.2f} "
              f"{ms['exchange_s']:8.2f} {ms['transfer_s']:8.2f} {ms['overhead_s']:8.2f}",
              file=file)
    file.flush()


def plot(table, path_for, absolute=False):
    """One PNG per algorithm: a panel per partitioning, a group of bars per share."""
    from .plotting import pyplot, save
    plt = pyplot()
    paths = []
    for alg in dict.fromkeys(r["algorithm"] for r in table):
        mine = [r for r in table if r["algorithm"] == alg]
        parts = list(dict.fromkeys(r["partition"] for r in mine))
        bars = max(sum(1 for r in mine if r["partition"] == p) for p in parts)
        fig, axes = plt.subplots(1, len(parts), figsize=((1 + 0.5 * bars) * len(parts), 4.0),
                                 squeeze=False, sharey=not absolute)
        for ax, p in zip(axes[0], parts):
            runs = sorted((r for r in mine if r["partition"] == p),
                          key=lambda r: r["cpu_share"])
            x = list(range(len(runs)))
            scale = [1e3 if absolute else 100 / max(r["time_s"], 1e-12) for r in runs]
            bottom = [0.0] * len(runs)
            for key, label, color in PHASES:
                h = [max(r[key], 0.0) * k for r, k in zip(runs, scale)]
                ax.bar(x, h, 0.5, bottom=bottom, color=color, label=label)
                bottom = [b + v for b, v in zip(bottom, h)]
            ax.bar([i + 0.36 for i in x], [r["compute_cpu_s"] * k for r, k in zip(runs, scale)],
                   0.12, color="none", edgecolor="tab:red", hatch="////", label="CPU compute")
            ax.bar([i + 0.5 for i in x], [r["compute_gpu_s"] * k for r, k in zip(runs, scale)],
                   0.12, color="none", edgecolor="tab:green", hatch="\\\\\\\\",
                   label="GPU compute (slowest)")
            for i, r in enumerate(runs):
                ax.annotate(f"{r['time_s'] * 1e3:.3g} ms", (i, bottom[i]), ha="center",
                            va="bottom", fontsize=7, rotation=90)
            ax.set_xticks([i + 0.15 for i in x], [f"{100 * r['cpu_share']:g}" for r in runs])
            ax.set_xlabel("share of edges on the CPU (%)")
            ax.set_title(p)
            if not absolute:
                ax.set_ylim(0, 125)
        axes[0][0].set_ylabel("ms" if absolute else "% of the run's time")
        axes[0][-1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
        fig.suptitle(f"{alg} on {mine[0]['graph']} ({mine[0]['device']}): execution time "
                     "breakdown", fontsize=10)
        paths.append(save(fig, path_for(alg)))
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.breakdown",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="src", required=True, help="a sweep.jsonl")
    p.add_argument("--algorithm", default=None)
    p.add_argument("--partition", default=None, help="one or more, comma-separated")
    p.add_argument("--shares", default=None, help="only these cpu shares, comma-separated")
    p.add_argument("--absolute", action="store_true", help="milliseconds instead of percent")
    p.add_argument("--png", default=None, help="figure path; {algorithm} is replaced, else the "
                                               "algorithm is added before .png")
    args = p.parse_args(argv)
    parts = [s.strip().upper() for s in args.partition.split(",")] if args.partition else None
    shares = [float(s) for s in args.shares.split(",")] if args.shares else None
    table = rows(read_jsonl(args.src), args.algorithm, parts, shares)
    print_table(table)
    if args.png:
        plot(table, lambda alg: args.png.format(algorithm=alg) if "{algorithm}" in args.png
             else args.png.replace(".png", f"_{alg}.png"), args.absolute)
    return 0


if __name__ == "__main__":
    sys.exit(main())
