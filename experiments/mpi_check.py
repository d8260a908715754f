"""Do R MPI ranks give the same results as one process? One command, through the public CLI.

    python -m experiments.mpi_check [--ranks 1,2,4] [--graph rmat:20 [FILE ...]] [--device auto] ...

For every graph and algorithm it runs `python -m totem_py.run` once in one process and once per
rank count under `mpirun -n R --bind-to none` with the same options, compares the `--output`
arrays with the algorithm's `compare` (integers exactly, floats to a relative 1e-5: sums add up
in another order; where results depend on the plan, each run is verified instead), and prints both times and the per-rank compute,
exchange, bytes sent and peak resident memory of the MPI run (`mpirun -n 1` runs the one-process
command, on the .tcsr file). A graph file is converted to .tcsr
first (`python -m totem_py.convert`): the ranks read that, the one process the original. Exit
code 0 when every result matches. Ranks on one machine share its GPUs (local rank k takes device
k modulo the device count). experiments/mpi.py launches the ranks; pass --mpirun to pick a
launcher other than the one beside this Python or on PATH.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from experiments.mpi import launch
from experiments.provenance import header, provenance
from totem_py.algorithms import ALGORITHMS


def compare(name, one, two):
    """None if the results agree, else a note (the algorithm's `compare`; none where its results
    depend on the plan: those runs are verified)."""
    cls = ALGORITHMS[name]
    return cls.compare(one, two) if cls.same_on_every_plan else None


def check(args, common, graph, parallel, alg, tmp):
    """One algorithm on one graph: one process, then every rank count; returns the failures."""
    verify = [] if ALGORITHMS[alg].same_on_every_plan else ["--verify"]

    def run(ranks, spec, label, extra=()):
        launch([sys.executable, "-m", "totem_py.run", "--graph", spec, *common, "--algorithm",
                alg, "--output", tmp / f"{label}.npy", "--json", tmp / f"{label}.json",
                *verify, *extra], ranks, f"{alg} on {graph}: the {label} run", args.mpirun)
        return np.load(tmp / f"{label}.npy"), json.loads((tmp / f"{label}.json").read_text())
    one, m1 = run(None, graph, "one")
    failures = []
    for ranks in map(int, args.ranks.split(",")):
        two, m2 = run(ranks, parallel, f"mpi{ranks}", ["--mpi-timeout", args.mpi_timeout])
        note = compare(alg, one, two)
        if note:
            failures.append(f"{alg} on {graph} at {ranks} ranks: {note}")
        print(f"\n{alg} on {m1['graph']['spec']} ({m1['graph']['edges']:,} edges), source "
              f"{m1['source']}, {args.partition} cpu-share {m1['cpu_share']}, device "
              f"{m1['device']}: one process {m1['time_s'] * 1e3:.1f} ms, "
              f"{m1['peak_rss_bytes'] / 1e6:.0f} MB; {ranks} ranks {m2['time_s'] * 1e3:.1f} ms "
              f"({m2['supersteps']} supersteps); results "
              f"{'MATCH' if note is None else 'DIFFER: ' + note}")
        if "per_rank" not in m2:        # mpirun -n 1 runs the one-process command
            print(f"  (1 rank: the one-process command; peak "
                  f"{m2['peak_rss_bytes'] / 1e6:.0f} MB)")
            continue
        print(f"  {'rank':>4} {'host':>10} {'pids':>8} {'gpu':>5} {'edges':>12} "
              f"{'compute_ms':>10} {'exchange_ms':>11} {'vote_ms':>8} {'sent_MB':>8} "
              f"{'peak_MB':>8}")
        for r in m2["per_rank"]:
            gpus = sorted({m2["partitions"][p]["gpu"] for p in r["partitions"]
                           if m2["partitions"][p]["gpu"] is not None})
            print(f"  {r['rank']:>4} {r['host'][:10]:>10} "
                  f"{','.join(map(str, r['partitions'])):>8} "
                  f"{','.join(map(str, gpus)) or '-':>5} {r['edges']:>12,} "
                  f"{r['compute_s'] * 1e3:>10.2f} {r['exchange_s'] * 1e3:>11.2f} "
                  f"{r['vote_s'] * 1e3:>8.2f} {r['bytes_sent'] / 1e6:>8.3f} "
                  f"{r['peak_rss_bytes'] / 1e6:>8.0f}", flush=True)
    return failures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="2", help="rank counts, e.g. 1,2,4")
    ap.add_argument("--graph", nargs="+", default=["rmat:20"],
                    help="generator specs or graph files (files are converted to .tcsr)")
    ap.add_argument("--directed", action="store_true", help="do not pass --undirected")
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--device", default="auto", help="auto, gpu, emulated, cpu")
    ap.add_argument("--partition", default="HIGH")
    ap.add_argument("--cpu-share", default="0.5")
    ap.add_argument("--gpus", default="1", help="GPU partitions per process (per rank)")
    ap.add_argument("--trials", default="3")
    ap.add_argument("--mpirun", default=None)
    ap.add_argument("--mpi-timeout", default="300")
    args = ap.parse_args(argv)
    print(header(provenance("experiments.mpi_check", argv, gpu=args.device == "gpu")),
          flush=True)
    common = ["--device", args.device, "--partition", args.partition,
              "--cpu-share", args.cpu_share, "--gpus", args.gpus, "--trials", args.trials,
              "--quiet"] + ([] if args.directed else ["--undirected"])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for k, graph in enumerate(args.graph):
            if Path(graph).exists():
                graph = str(Path(graph).resolve())
            parallel = graph
            if Path(graph).exists() and not graph.endswith(".tcsr"):
                parallel = str(tmp / f"graph{k}.tcsr")
                launch([sys.executable, "-m", "totem_py.convert", graph, parallel], None,
                       f"converting {graph}")
            for alg in args.algorithms.split(","):
                failures += check(args, common, graph, parallel, alg, tmp)
    print("\nall results match" if not failures else "\nMISMATCH:\n" + "\n".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
