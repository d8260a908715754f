"""Do R MPI ranks give the same results as one process? One command, through the public CLI:

    python -m experiments.mpi_check [--ranks 2] [--graph rmat:20] [--device auto] ...

For every algorithm it runs `python -m totem_py.run` once in one process and once under
`mpirun -n R --bind-to none` with the same options, compares the two `--output` arrays (bfs, cc
and sssp exactly; pagerank to an L1 distance of 1e-4 and bc to a relative 1e-5, as the tests do:
sums add up in another order), and prints both times and the per-rank compute, exchange and bytes
sent of the MPI run. Exit code 0 when every result matches. Ranks on one machine share its GPUs
(local rank k takes device k modulo the device count). As root it sets Open MPI's
OMPI_ALLOW_RUN_AS_ROOT variables; it turns off Open MPI 4's ptrace-based shared-memory copies,
which containers often forbid; pass --mpirun to pick a launcher other than the one on PATH or
beside this Python.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def find_mpirun():
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


def compare(name, one, two):
    """None if the results agree, else a note."""
    if one.shape != two.shape:
        return f"shape {one.shape} != {two.shape}"
    if name in ("bfs", "cc", "sssp"):
        bad = np.flatnonzero(~((one == two) | (np.isinf(one) & np.isinf(two))))
    elif name == "pagerank":
        err = float(np.abs(one - two).sum())
        return None if err <= 1e-4 else f"L1 distance {err:.3g}"
    else:
        bad = np.flatnonzero(~np.isclose(one, two, rtol=1e-5, atol=1e-9))
    return None if bad.size == 0 else (f"{bad.size} vertices differ, first {bad[0]}: "
                                       f"{one[bad[0]]} != {two[bad[0]]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--graph", default="rmat:20")
    ap.add_argument("--directed", action="store_true", help="do not pass --undirected")
    ap.add_argument("--algorithms", default="bfs,sssp,cc,pagerank,bc")
    ap.add_argument("--device", default="auto", help="auto, gpu, emulated, cpu")
    ap.add_argument("--partition", default="HIGH")
    ap.add_argument("--cpu-share", default="0.5")
    ap.add_argument("--gpus", default="1", help="GPU partitions per process (per rank)")
    ap.add_argument("--trials", default="3")
    ap.add_argument("--mpirun", default=None)
    ap.add_argument("--mpi-timeout", default="300")
    args = ap.parse_args(argv)
    launcher = args.mpirun or find_mpirun()
    if not launcher:
        sys.exit("mpirun not found: install Open MPI (or pip install 'totem_py[mpi]')")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    # Open MPI 4's shared-memory transport copies through ptrace (CMA), which containers often
    # forbid; plain copies work everywhere (Open MPI 5 does not read this variable)
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    common = ["--graph", args.graph, "--device", args.device, "--partition", args.partition,
              "--cpu-share", args.cpu_share, "--gpus", args.gpus, "--trials", args.trials,
              "--quiet"] + ([] if args.directed else ["--undirected"])
    mpi = [launcher, "-n", str(args.ranks), "--bind-to", "none", "-x", "PYTHONPATH"]
    if args.ranks > (os.cpu_count() or 1):
        mpi.append("--oversubscribe")
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for alg in args.algorithms.split(","):
            runs = {}
            for label, prefix, extra in (
                    ("one", [], []),
                    ("mpi", mpi, ["--mpi-timeout", args.mpi_timeout])):
                cmd = prefix + [sys.executable, "-m", "totem_py.run", *common, "--algorithm",
                                alg, "--output", tmp / f"{label}.npy", "--json",
                                tmp / f"{label}.json", *extra]
                proc = subprocess.run(list(map(str, cmd)), cwd=ROOT, env=env,
                                      capture_output=True, text=True)
                if proc.returncode != 0:
                    print(f"{alg}: the {label} run failed (exit {proc.returncode}):\n"
                          f"{proc.stderr[-3000:]}", file=sys.stderr)
                    sys.exit(1)
                runs[label] = (np.load(tmp / f"{label}.npy"),
                               json.loads((tmp / f"{label}.json").read_text()))
            (one, m1), (two, m2) = runs["one"], runs["mpi"]
            note = compare(alg, one, two)
            if note:
                failures.append(f"{alg}: {note}")
            print(f"\n{alg} on {m1['graph']['spec']} ({m1['graph']['edges']:,} edges), source "
                  f"{m1['source']}, {args.partition} cpu-share {m1['cpu_share']}, device "
                  f"{m1['device']}: one process {m1['time_s'] * 1e3:.1f} ms, {m2['ranks']} ranks "
                  f"{m2['time_s'] * 1e3:.1f} ms ({m2['supersteps']} supersteps); results "
                  f"{'MATCH' if note is None else 'DIFFER: ' + note}")
            print(f"  {'rank':>4} {'host':>10} {'pids':>8} {'gpu':>5} {'edges':>12} "
                  f"{'compute_ms':>10} {'exchange_ms':>11} {'vote_ms':>8} {'sent_MB':>8}")
            for r in m2["per_rank"]:
                gpus = sorted({m2["partitions"][p]["gpu"] for p in r["partitions"]
                               if m2["partitions"][p]["gpu"] is not None})
                print(f"  {r['rank']:>4} {r['host'][:10]:>10} "
                      f"{','.join(map(str, r['partitions'])):>8} "
                      f"{','.join(map(str, gpus)) or '-':>5} {r['edges']:>12,} "
                      f"{r['compute_s'] * 1e3:>10.2f} {r['exchange_s'] * 1e3:>11.2f} "
                      f"{r['vote_s'] * 1e3:>8.2f} {r['bytes_sent'] / 1e6:>8.3f}")
    print("\nall results match" if not failures else "\nMISMATCH:\n" + "\n".join(failures))
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
