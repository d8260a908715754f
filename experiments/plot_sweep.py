"""Render an offload sweep's figures from its JSON lines (needs matplotlib; the sweep itself
does not, so it can run where matplotlib is missing and be drawn elsewhere).

    python -m experiments.plot_sweep out/sweep.jsonl --out docs/results/offload_rmat24_h200

Writes, per algorithm: sweep_<alg>.png (TOTEM figures 9, 15, 19: billions of TEPS against the share
of edges on the CPU, a line per partitioning, the CPU-only rate as a dashed line, runs that did
not fit the GPU marked x on the axis and left out of the line), model_<alg>.png (figure 7:
predicted and achieved speedup, experiments.offload_model) and breakdown_<alg>.png (figures 8, 10,
16: experiments.breakdown); model.json (the model analysis) and results.md (the README's result
tables, filled in). Prints the sweep table, the breakdown table, the model summary and results.md.
"""

import argparse
import json
import math
import sys
from pathlib import Path

from . import breakdown, offload_model
from .sweep_records import STRATEGIES, points, print_table, read_jsonl


def plot_teps(records, path_for):
    """One PNG per algorithm; missing runs are gaps in the lines, never zeros."""
    from .plotting import COLORS, MARKERS, plain_log_axis, pyplot, save
    plt = pyplot()
    paths = []
    for alg in dict.fromkeys(r["sweep"]["algorithm"] for r in records):
        mine = [r for r in records if r["sweep"]["algorithm"] == alg]
        parts = [p for p in STRATEGIES if any(r["sweep"]["partition"] == p and
                                              r["sweep"]["role"] == "hybrid" for r in mine)]
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        cpu = next((r for r in mine if r["sweep"]["role"] == "cpu-only"
                    and r["sweep"]["status"] == "ok"), None)
        values = []
        missing_x = set()
        for p in parts:
            pts = points(mine, alg, p)
            x = [100 * s for s in pts]
            y = [r["teps"] / 1e9 if r["sweep"]["status"] == "ok" else math.nan
                 for r in pts.values()]
            values += [v for v in y if not math.isnan(v)]
            missing_x |= {xi for xi, yi in zip(x, y) if math.isnan(yi)}
            hyb = {s: r for s, r in pts.items() if 0 < s < 1 and r["sweep"]["status"] == "ok"}
            label = p
            if hyb:
                s, r = min(hyb.items(), key=lambda kv: kv[1]["time_s"])
                label += f": best hybrid {100 * s:g}% on CPU, {r['teps'] / 1e9:.3g} GTEPS"
                if cpu:
                    label += f" = {cpu['time_s'] / r['time_s']:.2f}x CPU only"
            ax.plot(x, y, marker=MARKERS.get(p, "o"), color=COLORS.get(p, None), label=label)
        if cpu:
            ax.axhline(cpu["teps"] / 1e9, color="k", ls="--",
                       label=f"CPU only: {cpu['teps'] / 1e9:.3g} GTEPS")
        if missing_x:
            ax.plot(sorted(missing_x), [0.02] * len(missing_x), "x", color="k", ms=8,
                    transform=ax.get_xaxis_transform(), clip_on=False,
                    label="not run: GPU memory too small (or failed, skipped)")
        if values and max(values) / max(min(values), 1e-12) > 30:
            ax.set_yscale("log")
            plain_log_axis(ax.yaxis)
        ax.set_xlim(-3, 103)
        ax.set_xlabel("share of edges on the CPU (%)")
        ax.set_ylabel("billions of traversed edges per second")
        g = mine[0]["graph"]
        ax.set_title(f"{alg} on {g['spec']} ({g['vertices']:,} vertices, {g['edges']:,} edges), "
                     f"{mine[0]['device']}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14))
        paths.append(save(fig, path_for(alg)))
    return paths


def _run_cell(r):
    if r is None or r["sweep"]["status"] != "ok":
        return r["sweep"]["status"] if r else "-"
    return f"{r['teps'] / 1e9:.3g} GTEPS ({r['time_s'] * 1e3:.3g} ms)"


def markdown(records, analysis):
    """The README's two result tables, filled in."""
    names = {"bfs": "BFS", "pagerank": "PageRank", "sssp": "SSSP", "cc": "CC", "bc": "BC"}
    parts = [p for p in STRATEGIES if any(r["sweep"]["partition"] == p and
                                          r["sweep"]["role"] == "hybrid" for r in records)]
    lines = ["| algorithm | CPU only | GPU only | " +
             " | ".join(f"best {p} hybrid (share, x CPU only)" for p in parts) + " |",
             "| --- | ---: | ---: | " + " | ".join("---:" for _ in parts) + " |"]
    for alg in dict.fromkeys(r["sweep"]["algorithm"] for r in records):
        mine = [r for r in records if r["sweep"]["algorithm"] == alg]
        role = {r["sweep"]["role"]: r for r in mine if r["sweep"]["role"] != "hybrid"}
        cpu = role.get("cpu-only")
        cells = [_run_cell(cpu), _run_cell(role.get("gpu-only"))]
        for p in parts:
            hyb = [r for r in mine if r["sweep"]["partition"] == p and
                   r["sweep"]["role"] == "hybrid" and r["sweep"]["status"] == "ok"]
            if not hyb:
                cells.append("-")
                continue
            b = min(hyb, key=lambda r: r["time_s"])
            vs = f", {cpu['time_s'] / b['time_s']:.2f}x" if cpu and cpu["time_s"] else ""
            cells.append(f"{b['teps'] / 1e9:.3g} GTEPS ({b['cpu_share']:g}{vs})")
        lines.append(f"| {names.get(alg, alg)} | " + " | ".join(cells) + " |")
    lines += ["", "| algorithm | Pearson r (all partitionings) | partitioning | Pearson r | "
              "model pick / best share (lost) | hybrid only: model pick / best (lost) |",
              "| --- | ---: | --- | ---: | ---: | ---: |"]

    def pick(pk):
        return "-" if not pk else (f"{pk['model_share']:g} / {pk['best_share']:g} "
                                   f"({100 * pk['lost']:.1f}%)")
    for e in analysis:
        first = True
        for p, d in e["partitions"].items():
            head = (f"{names.get(e['algorithm'], e['algorithm'])} | "
                    f"{offload_model._r(e.get('pearson'))}") if first else " | "
            lines.append(f"| {head} | {p} | {offload_model._r(d['pearson'])} | "
                         f"{pick(d['pick'])} | {pick(d['pick_hybrid'])} |")
            first = False
    return "\n".join(lines) + "\n"


def render(src, out, tables=True):
    """Figures (and with `tables` the printed tables) of the sweep file `src` into `out`."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    records = read_jsonl(src)
    table = breakdown.rows(records)
    analysis = offload_model.analyse(records)
    if tables:
        print_table(records)
        breakdown.print_table(table)
        offload_model.print_summary(analysis)
    with open(out / "model.json", "w") as f:
        json.dump(analysis, f, indent=1)
    md = markdown(records, analysis)
    (out / "results.md").write_text(md)
    if tables:
        print("\n" + md)
    paths = plot_teps(records, lambda alg: out / f"sweep_{alg}.png")
    paths += offload_model.plot(analysis, lambda alg: out / f"model_{alg}.png")
    paths += breakdown.plot(table, lambda alg: out / f"breakdown_{alg}.png")
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.plot_sweep",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("src", help="a sweep.jsonl written by experiments.offload_sweep")
    p.add_argument("--out", default=None, help="directory for the PNGs (default: beside src)")
    args = p.parse_args(argv)
    render(args.src, args.out or Path(args.src).parent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
