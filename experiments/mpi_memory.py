"""Time and peak resident memory per rank, one process against R ranks, through the public CLI.

    python -m experiments.mpi_memory [--graph rmat:22] [--ranks 1,2,4] [--device cpu] \\
        [--algorithms bfs,pagerank,sssp,cc,bc] [--out OUT]

For every algorithm it runs `python -m totem_py.run --json` once per rank count (1: one process,
R > 1: under mpirun, as experiments/mpi.py launches it) on the same graph
(undirected unless --directed) and prints one table: the run's time and supersteps, the slowest
rank's exchange time and the bytes sent per superstep, how long the ranks took to load and to
partition, the command's wall time (MPI start-up and the untimed warm-up included), and every
rank's peak resident memory (getrusage's ru_maxrss, from the --json record) with rank 0's peak
over the one-process peak of the same algorithm. Under `mpirun` no rank holds the whole graph:
every rank generates (or reads, for a .tcsr file) its share and partitions it with the others.

On a machine with G GPUs, `--device gpu --ranks 1,G` runs one GPU per rank (local rank k takes
device k). Writes OUT.json (the rows, with the command, code version and hardware) and OUT.txt
(the table, after the same three lines) after every run; `--resume` keeps the runs already in
OUT.json and runs only the missing ones, so a sweep longer than one sitting goes on where it
stopped.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from experiments.mpi import launch
from experiments.provenance import header, provenance


def run(ranks, args, algorithm, json_path):
    """One run; returns (its --json record, the command's wall seconds)."""
    cmd = [sys.executable, "-m", "totem_py.run", "--graph", args.graph, "--algorithm",
           algorithm, "--device", args.device, "--gpus", str(args.gpus), "--trials",
           str(args.trials), "--json", str(json_path), "--quiet"]
    cmd += [] if args.directed else ["--undirected"]
    cmd += ["--cpu-share", args.cpu_share] if args.cpu_share else []
    cmd += ["--source", str(args.source)] if args.source is not None else []
    proc = launch(cmd, ranks if ranks > 1 else None, f"{algorithm} on {ranks} rank(s)",
                  args.mpirun)
    return json.loads(Path(json_path).read_text()), proc.seconds


def row(m, ranks, wall):
    steps = max(m["supersteps"], 1)
    per_rank = m.get("per_rank") or [dict(peak_rss_bytes=m["peak_rss_bytes"],
                                          exchange_s=sum(s["exchange_s"]
                                                         for s in m["per_superstep"]))]
    sent = sum(s.get("bytes_sent", 0) for s in m["per_superstep"])
    return dict(algorithm=m["algorithm"], ranks=ranks, graph=m["graph"]["spec"],
                edges=m["graph"]["edges"], device=m["device"], cpu_share=m["cpu_share"],
                time_s=m["time_s"], supersteps=m["supersteps"],
                exchange_ms_per_superstep=1e3 * max(r["exchange_s"] for r in per_rank) / steps,
                mb_per_superstep=sent / steps / 1e6, load_s=m.get("load_s"),
                partition_s=m.get("partition_s"), wall_s=wall,
                peak_mb=[r["peak_rss_bytes"] / 1e6 for r in per_rank])


def with_ratios(rows):
    """Each row with rank 0's peak over the one-process peak of its algorithm (None without
    a one-process row)."""
    one = {r["algorithm"]: r["peak_mb"][0] for r in rows if r["ranks"] == 1}
    return [dict(r, rank0_over_one=r["peak_mb"][0] / one[r["algorithm"]]
                 if r["algorithm"] in one else None) for r in rows]


def table(rows):
    lines = ["| algorithm | ranks | time s | supersteps | exchange ms/superstep | MB/superstep "
             "| load s | partition s | wall s | peak MB per rank | rank 0 / one process |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for r in with_ratios(rows):
        opt = (lambda x: "-" if x is None else f"{x:.1f}")
        lines.append(
            f"| {r['algorithm']} | {r['ranks']} | {r['time_s']:.3f} | {r['supersteps']} | "
            f"{r['exchange_ms_per_superstep']:.2f} | {r['mb_per_superstep']:.2f} | "
            f"{opt(r['load_s'])} | {opt(r['partition_s'])} | {r['wall_s']:.0f} | "
            f"{' / '.join(f'{p:.0f}' for p in r['peak_mb'])} | "
            f"{'-' if r['rank0_over_one'] is None else format(r['rank0_over_one'], '.3f')} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="rmat:22")
    ap.add_argument("--directed", action="store_true", help="do not pass --undirected")
    ap.add_argument("--ranks", default="1,2,4", help="rank counts; 1 is one process")
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc,bc")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cpu-share", default=None,
                    help="default: 1 with --device cpu, the command's own otherwise")
    ap.add_argument("--gpus", type=int, default=1, help="GPU partitions per rank")
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--source", type=int, default=None,
                    help="root for bfs/sssp/bc (default: each command's own, a seeded vertex of "
                         "the largest weak component, which R ranks find by running CC first)")
    ap.add_argument("--mpirun", default=None)
    ap.add_argument("--out", default=None, help="OUT.json and OUT.txt (default: no files)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the runs already in OUT.json and run only the missing ones")
    args = ap.parse_args(argv)
    if args.cpu_share is None and args.device == "cpu":
        args.cpu_share = "1"
    prov = provenance("experiments.mpi_memory", argv, gpu=args.device == "gpu")
    print(header(prov), flush=True)
    rows = []
    if args.resume and args.out and Path(args.out + ".json").exists():
        rows = json.loads(Path(args.out + ".json").read_text())["rows"]
        print(f"{len(rows)} run(s) kept from {args.out}.json", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for alg in args.algorithms.split(","):
            for ranks in map(int, args.ranks.split(",")):
                if any(r["algorithm"] == alg and r["ranks"] == ranks for r in rows):
                    continue
                m, wall = run(ranks, args, alg, Path(tmp) / "m.json")
                rows.append(row(m, ranks, wall))
                r = rows[-1]
                print(f"{alg} on {ranks} rank(s): {r['time_s']:.3f} s, peak "
                      f"{' / '.join(f'{p:.0f}' for p in r['peak_mb'])} MB, "
                      f"{wall:.0f} s wall", flush=True)
                save(args.out, prov, rows)
    print(table(rows))
    most = max(map(int, args.ranks.split(",")))
    ratios = [r["rank0_over_one"] for r in with_ratios(rows)
              if r["ranks"] == most and r["rank0_over_one"]]
    if most > 1 and ratios:
        print(f"rank 0's peak over the one-process peak at {most} ranks: "
              f"{min(ratios):.3f} to {max(ratios):.3f}")


def save(out, prov, rows):
    """OUT.json and OUT.txt after every run, so that an interrupted sweep keeps what it
    measured (and --resume goes on from it)."""
    if out:
        order = {}          # algorithms in the order they first appear, any algorithm
        for r in rows:
            order.setdefault(r["algorithm"], len(order))
        rows = with_ratios(sorted(rows, key=lambda r: (order[r["algorithm"]], r["ranks"])))
        Path(out + ".json").write_text(json.dumps(dict(**prov, rows=rows), indent=1))
        Path(out + ".txt").write_text(f"{header(prov)}\n\n{table(rows)}\n")


if __name__ == "__main__":
    main()
