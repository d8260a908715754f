"""The records of an offload sweep (experiments.offload_sweep writes them, one JSON line per
run): reading them, selecting a figure's line and printing the TEPS table. The bottom module of
the sweep's scripts (offload_sweep, offload_model, plot_sweep, breakdown), which import it and
not each other's helpers."""

import json
import sys

STRATEGIES = ("HIGH", "LOW", "RAND")


def read_jsonl(path):
    """The records of a sweep file (blank lines skipped)."""
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def ok(records):
    return [r for r in records if r["sweep"]["status"] == "ok"]


def points(records, algorithm, partition):
    """{share: record} of one line of a figure: the partitioning's hybrid runs plus the CPU-only
    and GPU-only runs (the same configuration for every partitioning). Missing runs too."""
    out = {}
    for r in records:
        s = r["sweep"]
        if s["algorithm"] == algorithm and (s["partition"] == partition or s["role"] != "hybrid"):
            out[s["cpu_share"]] = r
    return dict(sorted(out.items()))


def fmt_gteps(r):
    if r is None:
        return "."
    status = r["sweep"]["status"]
    if status != "ok":
        return {"does not fit": "nofit", "skipped": "skip"}.get(status, "fail")
    return f"{r['teps'] / 1e9:.3g}"


def print_table(records, file=sys.stdout):
    """Billions of TEPS per algorithm x partitioning x share, then each partitioning's best."""
    algorithms = list(dict.fromkeys(r["sweep"]["algorithm"] for r in records))
    partitions = [p for p in STRATEGIES if any(r["sweep"]["partition"] == p and
                                               r["sweep"]["role"] == "hybrid" for r in records)]
    shares = sorted({r["sweep"]["cpu_share"] for r in records}, reverse=True)
    if records:
        g = records[0]["graph"]
        print(f"\n{g['spec']}: {g['vertices']:,} vertices, {g['edges']:,} edges; billions of "
              f"TEPS by share of edges on the CPU (nofit: GPU memory too small)", file=file)
    for alg in algorithms:
        print(f"\n{alg:10}" + "".join(f"{s:>8g}" for s in shares), file=file)
        best_lines = []
        cpu = None
        for p in partitions or ["-"]:
            pts = points(records, alg, p)
            print(f"{p:10}" + "".join(f"{fmt_gteps(pts.get(s)):>8}" for s in shares), file=file)
            good = {s: r for s, r in pts.items() if r["sweep"]["status"] == "ok"}
            cpu = good.get(1.0, cpu)
            hyb = {s: r for s, r in good.items() if 0 < s < 1}
            if hyb:
                s, r = min(hyb.items(), key=lambda kv: kv[1]["time_s"])
                vs = f", {cpu['time_s'] / r['time_s']:.2f}x CPU only" if cpu else ""
                best_lines.append(f"  best {p} hybrid: share {s:g}, {r['time_s'] * 1e3:.2f} ms, "
                                  f"{r['teps'] / 1e9:.3g} GTEPS{vs}")
        for line in best_lines:
            print(line, file=file)
