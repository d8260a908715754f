"""The README's figures, drawn from the result files in docs/results/ (needs matplotlib).

    python -m experiments.figures [--results docs/results] [--out docs/results]

- totem_rmat24_h100.png: ours against the original TOTEM, one pair of bars per cell TOTEM reports
  (algorithm x configuration), from bench_gpu_rmat24_h100.json and the TOTEM times it was run
  against (its `totem` entry);
- engines_rmat26_h100.png: the share of active chunks each transfer engine served per superstep of
  every auto run (HyTGraph fig. 6), from bench_transfer_rmat26_h100.json;
- offload_rmat24_h200/: the offload sweep's figures and tables (experiments.plot_sweep), from its
  sweep.jsonl.

Each reads only the JSON a benchmark wrote, so the figures can be drawn again on any machine.
"""

import argparse
import json
import sys
from pathlib import Path

from . import plot_sweep
from .bench_transfer import plot as plot_engines

ROOT = Path(__file__).resolve().parents[1]
NAMES = {"bfs": "BFS", "pagerank": "PageRank, 5 rounds", "sssp": "SSSP", "cc": "CC"}
CONFIG_NAMES = {"cpu": "CPU only", "gpu": "GPU only", "mapped": "mapped"}


def totem_cells(records, totem_ms):
    """[(algorithm, config, ours ms, TOTEM ms)] for every measured cell TOTEM reports, in
    totem_ms's order (algorithm -> {configuration: ms})."""
    ours = {(r["algorithm"], r["config"]): 1e3 * r["time_s"] for r in records}
    return [(alg, config, ours[alg, config], totem)
            for alg, row in totem_ms.items() for config, totem in row.items()
            if (alg, config) in ours]


def plot_totem(cells, path, title):
    """One panel per algorithm, a pair of bars per configuration, log time axis: the cells span
    1.7 ms to 1.3 s. Each of our bars is labelled with its ratio to TOTEM."""
    from .plotting import plain_log_axis, pyplot, save
    plt = pyplot()
    algs = list(dict.fromkeys(c[0] for c in cells))
    fig, axes = plt.subplots(1, len(algs), figsize=(3.2 * len(algs), 3.4), squeeze=False)
    for ax, alg in zip(axes[0], algs):
        mine = [c for c in cells if c[0] == alg]
        x = range(len(mine))
        ax.bar([i - 0.2 for i in x], [c[2] for c in mine], 0.4, label="totem_py", color="tab:red")
        ax.bar([i + 0.2 for i in x], [c[3] for c in mine], 0.4, label="TOTEM", color="tab:gray")
        for i, c in zip(x, mine):
            ax.annotate(f"{c[2] / c[3]:.2f}", (i - 0.2, c[2]), ha="center", va="bottom",
                        fontsize=7)
        ax.set_yscale("log")
        plain_log_axis(ax.yaxis)
        ax.set_xticks(list(x))
        ax.set_xticklabels([CONFIG_NAMES.get(c[1], c[1]) for c in mine], rotation=40,
                           ha="right", fontsize=8)
        ax.set_title(NAMES.get(alg, alg), fontsize=9)
    axes[0, 0].set_ylabel("ms (log scale); label: ours / TOTEM")
    axes[0, 0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=str(ROOT / "docs" / "results"),
                    help="folder of the result files")
    ap.add_argument("--out", default=None, help="where the figures go (default: --results)")
    args = ap.parse_args(argv)
    res = Path(args.results)
    out = Path(args.out) if args.out else res
    out.mkdir(parents=True, exist_ok=True)

    bench = json.loads((res / "bench_gpu_rmat24_h100.json").read_text())
    cells = totem_cells(bench["records"], bench["totem"]["times_ms"])
    if not cells:
        sys.exit(f"{res / 'bench_gpu_rmat24_h100.json'}: no record of a cell TOTEM reports")
    plot_totem(cells, out / "totem_rmat24_h100.png",
               f"rmat:24 undirected, {bench.get('hardware', 'H100 host')}")

    transfer = json.loads((res / "bench_transfer_rmat26_h100.json").read_text())
    plot_engines(transfer["rows"], out / "engines_rmat26_h100.png")
    print(f"wrote {out / 'engines_rmat26_h100.png'}", file=sys.stderr)

    plot_sweep.render(res / "offload_rmat24_h200" / "sweep.jsonl", out / "offload_rmat24_h200",
                      tables=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
