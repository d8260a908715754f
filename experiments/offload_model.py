"""The performance model against the sweep (TOTEM figure 7): predicted and achieved speedup over
the CPU alone for every measured share, Pearson's correlation, and how close the share the model
picks comes to the best measured one.

    python -m experiments.offload_model --from out/sweep.jsonl [--png out/model.png] [--fit all]

Per algorithm and partitioning the model is fitted as `--cpu-share model` fits it (totem_py/model.py):
from the CPU-only run and one hybrid run, the partitioning's run at the smallest measured share
>= 0.5 (the calibration point), so every other point is a prediction. `--fit all` instead fits one
set of rates per algorithm to all its runs (r_gpu from the GPU-only run, c by least squares over
every hybrid run): in-sample, closer to the paper's validation.

The pick: among the measured shares of the partitioning (CPU only and GPU only included), the one
of least predicted time; "lost" is its measured time over the best measured time, minus one. The
hybrid-only pick does the same among 0 < share < 1, as if the graph did not fit the GPU.
"""

import argparse
import json
import sys

from totem_py import model

from .sweep_records import STRATEGIES, ok, points, read_jsonl


def calibration_record(pts):
    """The hybrid run the CLI would calibrate on: smallest share >= 0.5, else the largest."""
    hyb = {s: r for s, r in pts.items() if 0 < s < 1}
    if not hyb:
        return None
    above = [s for s in hyb if s >= model.CALIBRATION_SHARE]
    return hyb[min(above)] if above else hyb[max(hyb)]


def _pick(rows, hybrid_only=False):
    rows = [r for r in rows if not hybrid_only or 0 < r["cpu_share"] < 1]
    if not rows:
        return None
    chosen = min(rows, key=lambda r: r["predicted_s"])
    best = min(rows, key=lambda r: r["achieved_s"])
    return dict(model_share=chosen["cpu_share"], model_time_s=chosen["achieved_s"],
                best_share=best["cpu_share"], best_time_s=best["achieved_s"],
                lost=chosen["achieved_s"] / best["achieved_s"] - 1)


def analyse(records, fit_on="calibration", beta_key="beta_aggregated"):
    """Per algorithm: the fitted rates, a row per measured point, Pearson's r, the picks."""
    records = ok(records)
    out = []
    for alg in dict.fromkeys(r["sweep"]["algorithm"] for r in records):
        mine = [r for r in records if r["sweep"]["algorithm"] == alg]
        cpu = [r for r in mine if r["sweep"]["role"] == "cpu-only"]
        entry = dict(algorithm=alg, graph=mine[0]["graph"], device=mine[0]["device"],
                     fit=fit_on, beta_key=beta_key, partitions={})
        out.append(entry)
        if not cpu:
            entry["note"] = "no CPU-only run: the model needs one"
            continue
        t_cpu = cpu[0]["time_s"]
        if fit_on == "all":
            try:
                shared = model.fit(mine, beta_key)
            except ValueError as exc:
                entry["note"] = str(exc)
                continue
        partitions = [p for p in STRATEGIES
                      if any(r["sweep"]["partition"] == p and r["sweep"]["role"] == "hybrid"
                             for r in mine)]
        all_pred, all_ach = [], []
        for p in partitions:
            pts = {s: r for s, r in points(mine, alg, p).items()}
            cal = calibration_record(pts)
            if fit_on == "all":
                rates = shared
            elif cal is None:
                continue
            else:
                rates = model.fit([cpu[0], cal], beta_key)
            rows = []
            for s, r in pts.items():
                t, speedup = model.predict_record(rates, r)
                rows.append(dict(cpu_share=s, alpha=model.alpha(r), beta=r[beta_key],
                                 achieved_s=r["time_s"], achieved_speedup=t_cpu / r["time_s"],
                                 predicted_s=t, predicted_speedup=speedup,
                                 calibration=r is cal and fit_on != "all"))
            pred = [row["predicted_speedup"] for row in rows]
            ach = [row["achieved_speedup"] for row in rows]
            all_pred += pred
            all_ach += ach
            entry["partitions"][p] = dict(rates=rates.as_dict(), rows=rows,
                                          pearson=model.pearson(pred, ach),
                                          pick=_pick(rows), pick_hybrid=_pick(rows, True))
        entry["pearson"] = model.pearson(all_pred, all_ach)
    return out


def _pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def _r(x):
    return "-" if x is None else f"{x:.3f}"


def print_summary(analysis, file=sys.stdout):
    print("\nperformance model (TOTEM eq. 1-4) against the sweep", file=file)
    for e in analysis:
        g = e["graph"]
        print(f"\n{e['algorithm']} on {g['spec']} ({e['device']}): Pearson r of predicted vs "
              f"achieved speedup over all partitionings {_r(e.get('pearson'))} (fit: {e['fit']}, "
              f"beta = {e['beta_key']})", file=file)
        if "note" in e:
            print(f"  {e['note']}", file=file)
        for p, d in e["partitions"].items():
            rt = d["rates"]
            c = "inf" if rt["c"] is None else f"{rt['c'] / 1e9:.3g}"
            print(f"  {p:4} r = {_r(d['pearson'])}; r_cpu {rt['r_cpu'] / 1e9:.3g}, r_gpu "
                  f"{rt['r_gpu'] / 1e9:.3g} ({rt['r_gpu_from']}), c {c} billion edges/s", file=file)
            for label, pk in (("all shares", d["pick"]), ("hybrid only", d["pick_hybrid"])):
                if pk:
                    print(f"       model pick ({label}): share {pk['model_share']:g} "
                          f"{pk['model_time_s'] * 1e3:.2f} ms; best measured: share "
                          f"{pk['best_share']:g} {pk['best_time_s'] * 1e3:.2f} ms; lost "
                          f"{_pct(pk['lost'])}", file=file)
    file.flush()


def plot(analysis, path_for):
    """One PNG per algorithm (path_for(algorithm) names it): a panel per partitioning, predicted
    (circles) and achieved (triangles) speedup over the CPU alone against the share on the CPU."""
    from .plotting import COLORS, plain_log_axis, pyplot, save
    plt = pyplot()
    paths = []
    for e in analysis:
        parts = e["partitions"]
        if not parts:
            continue
        fig, axes = plt.subplots(1, len(parts), figsize=(4.2 * len(parts), 3.6), squeeze=False,
                                 sharey=True)
        for ax, (p, d) in zip(axes[0], parts.items()):
            rows = d["rows"]
            x = [100 * r["cpu_share"] for r in rows]
            color = COLORS.get(p, "k")
            ax.plot(x, [r["predicted_speedup"] for r in rows], "o--", mfc="none", color=color,
                    label="predicted")
            ax.plot(x, [r["achieved_speedup"] for r in rows], "^-", color=color,
                    label="achieved")
            cal = [r for r in rows if r["calibration"]]
            if cal:
                ax.plot([100 * cal[0]["cpu_share"]], [cal[0]["achieved_speedup"]], "k^", ms=9,
                        mfc="none", label="calibration run")
            pk = d["pick"]
            if pk:
                ax.axvline(100 * pk["model_share"], color="0.4", ls=":",
                           label=f"model pick {100 * pk['model_share']:g}% "
                                 f"(lost {_pct(pk['lost'])})")
            ax.axhline(1.0, color="k", lw=0.8)
            ax.set_yscale("log")
            plain_log_axis(ax.yaxis)
            ax.set_title(f"{p}: Pearson r = {_r(d['pearson'])}")
            ax.set_xlabel("share of edges on the CPU (%)")
            ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
        axes[0][0].set_ylabel("speedup over CPU only")
        g = e["graph"]
        fig.suptitle(f"{e['algorithm']} on {g['spec']} ({g['edges']:,} edges, {e['device']}): "
                     f"model vs achieved, r = {_r(e.get('pearson'))}", fontsize=10)
        paths.append(save(fig, path_for(e["algorithm"])))
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.offload_model",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--from", dest="src", required=True, help="a sweep.jsonl")
    p.add_argument("--fit", default="calibration", choices=("calibration", "all"))
    p.add_argument("--beta", default="beta_aggregated", choices=("beta_aggregated", "beta"))
    p.add_argument("--png", default=None, help="figure path; {algorithm} is replaced, else the "
                                               "algorithm is added before .png")
    p.add_argument("--json", default=None, help="write the analysis here")
    args = p.parse_args(argv)
    analysis = analyse(read_jsonl(args.src), args.fit, args.beta)
    print_summary(analysis)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(analysis, f, indent=1)
    if args.png:
        plot(analysis, lambda alg: args.png.format(algorithm=alg) if "{algorithm}" in args.png
             else args.png.replace(".png", f"_{alg}.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
