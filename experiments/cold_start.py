"""Cold and cached start of the command line, per algorithm: how long a first run takes while it
compiles its kernels, and a run that loads them from the cache.

    python -m experiments.cold_start [--device gpu] [--algorithms bfs,pagerank] [--repeat 2]
        [--json cold_start.json] [-- more options of totem_py.run]

Each algorithm runs `python -m totem_py.run --algorithm A --device D --quiet ...` in a new
process three times: first with an empty Numba cache (NUMBA_CACHE_DIR set to a new folder: the
CPU kernels and numba-cuda's GPU kernels compile), then twice with the cache the runs before
filled (a first run's small supersteps use kernels whose serial twins the second run compiles,
so the third is what later runs take). `--repeat N` does this N times, each time with a new empty
cache. Prints, per algorithm, the median wall time of each of the three processes, and the run's
own time (its --json `time_s`), and writes every process's as JSON. Python's bytecode caches
(__pycache__) stay as they are.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from statistics import median

from experiments.provenance import ROOT, header, provenance
from totem_py.algorithms import ALGORITHMS as REGISTRY

ALGORITHMS = ",".join(REGISTRY)


def start(args, cache, out):
    """(wall seconds, the run's metrics) of one process of the command line."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "totem_py.run", *args, "--quiet", "--json", out],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:        # its one-line error, and its exit status
        last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ""
        print(f"cold_start: totem_py.run {' '.join(args)}: {last}", file=sys.stderr)
        sys.exit(proc.returncode)
    with open(out) as f:
        return wall, json.load(f)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algorithms", default=ALGORITHMS,
                    help=f"comma-separated (default {ALGORITHMS})")
    ap.add_argument("--device", default="auto", help="the command line's --device (default auto)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="cold-then-cached pairs per algorithm (default 1)")
    ap.add_argument("--json", default=None, help="write the rows as JSON")
    ap.add_argument("run_options", nargs="*",
                    help="after --: more options of totem_py.run (e.g. --graph rmat:20)")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    prov = provenance("experiments.cold_start", argv, gpu=args.device == "gpu")
    print(header(prov), flush=True)
    print(f"{'algorithm':10} {'cold s':>8} {'second s':>9} {'third s':>8} {'run ms':>9}",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        for alg in args.algorithms.split(","):
            run = ["--algorithm", alg, "--device", args.device, *args.run_options]
            walls, run_ms = ([], [], []), []        # cold, second, third processes
            for i in range(args.repeat):
                cache = tempfile.mkdtemp(dir=tmp)     # empty: everything compiles
                for w in walls:
                    wall, metrics = start(run, cache, out)
                    w.append(wall)
                    run_ms.append(1e3 * metrics["time_s"])
            rows.append(dict(algorithm=alg, cold_s=walls[0], second_s=walls[1],
                             third_s=walls[2], run_ms=run_ms, device=metrics.get("device"),
                             graph=metrics["graph"]["spec"]))
            print(f"{alg:10} {median(walls[0]):8.2f} {median(walls[1]):9.2f} "
                  f"{median(walls[2]):8.2f} {median(run_ms):9.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(**prov, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
