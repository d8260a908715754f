"""Cold and cached start of the command line, per algorithm: how long a first run takes while it
compiles its kernels, and a run that loads them from the cache.

    python -m experiments.cold_start [--device gpu] [--algorithms bfs,pagerank] [--repeat 2]
        [--json cold_start.json] [-- more options of totem_py.run]

Each algorithm runs `python -m totem_py.run --algorithm A --device D --quiet ...` in a new
process: first with an empty Numba cache (NUMBA_CACHE_DIR set to a new folder: the CPU kernels
and numba-cuda's GPU kernels both compile), then again with the cache that run filled. `--repeat
N` does this N times, each time with a new empty cache. Prints, per algorithm, the wall time of
each cold and cached process, and the run's own time (its --json `time_s`), and writes them as
JSON. Python's bytecode caches (__pycache__) stay as they are.
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

ALGORITHMS = "bfs,pagerank,sssp,cc,bc"


def start(args, cache, out):
    """(wall seconds, the run's metrics) of one process of the command line."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "totem_py.run", *args, "--quiet", "--json", out],
                          env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"cold_start: {' '.join(args)}: exit {proc.returncode}: "
                 f"{proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else ''}")
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
    print(f"{'algorithm':10} {'cold s':>8} {'cached s':>9} {'run ms':>9}  (each process)",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run.json")
        for alg in args.algorithms.split(","):
            run = ["--algorithm", alg, "--device", args.device, *args.run_options]
            cold, cached, run_ms = [], [], []
            for i in range(args.repeat):
                cache = tempfile.mkdtemp(dir=tmp)     # empty: everything compiles
                for walls in (cold, cached):
                    wall, metrics = start(run, cache, out)
                    walls.append(wall)
                    run_ms.append(1e3 * metrics["time_s"])
            rows.append(dict(algorithm=alg, cold_s=cold, cached_s=cached, run_ms=run_ms,
                             device=metrics.get("device"), graph=metrics["graph"]["spec"]))
            print(f"{alg:10} {median(cold):8.2f} {median(cached):9.2f} {median(run_ms):9.2f}  "
                  f"cold {', '.join(f'{w:.2f}' for w in cold)}; "
                  f"cached {', '.join(f'{w:.2f}' for w in cached)}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(**prov, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
