"""Host memory of each stage of a run, per vertex and per edge: the measurement behind the
constants of totem_py/errors.py (`STAGE_COSTS`).

For each graph size, algorithm and weighting, one fresh process writes a uniform random edge list
(`.txt`, or `.wel` with integer weights), then runs the stages one after the other, as
`python -m totem_py.run` does:

  load_npz   totem_py.load(the same graph saved as .npz), and of its undirected version
  load       totem_py.load(file)                                  text parse + CSR build
  undirected graph.to_undirected() (--undirected), measured and dropped
  partition  partitioners.partition(graph, HIGH, 0.5, 1 GPU)      degree order, owners, local ids
  plan       plan.views(v) for the algorithm's views               local CSRs, boundary tables
  run        totem_py.run(graph, alg, plan=plan, device=emulated)  engine state, warm-up, 1 trial

and records, per stage, its peak above what the process held when it started (the larger of the
peak RSS, reset through /proc/self/clear_refs, and tracemalloc's peak, which counts NumPy's
allocations whether touched or not) and what it keeps. A least-squares fit over the sizes gives
bytes per vertex, per edge and fixed of each stage's peak and keep; the table printed last takes,
coefficient by coefficient, the largest over the algorithms, for unweighted and weighted graphs
(per stored edge for the undirected .npz, per input edge for `undirected`).

    python -m experiments.memory_costs            # 2**16 and 2**19 vertices, 1M and 4M edges
"""

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import tracemalloc

import numpy as np

ALGORITHMS = ("bfs", "pagerank", "sssp", "cc", "bc")
# (vertices, edges): two edge counts at one vertex count and two vertex counts at one edge
# count separate the per-vertex from the per-edge cost
SIZES = ((1 << 16, 4 << 20), (1 << 19, 4 << 20), (1 << 19, 1 << 20))
STAGES = ("load_npz", "load_npz_undirected", "load", "undirected", "partition", "plan", "run")


def _status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1]) * 1024
    return 0


def _reset_peak():
    gc.collect()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    tracemalloc.reset_peak()


def measure(n, m, algorithm, weighted, folder):
    """One process's stage table for a graph of n vertices and m edges."""
    import totem_py
    from partitioners import partition
    from totem_py.harness import make_algorithm
    from totem_py.io import save_npz

    rng = np.random.default_rng(1)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    dst[0] = n - 1                       # n vertices exactly
    path = os.path.join(folder, f"g{n}_{m}.{'wel' if weighted else 'txt'}")
    cols = [src, dst] + ([rng.integers(1, 255, m)] if weighted else [])
    np.savetxt(path, np.column_stack(cols), fmt="%d")
    # compile every kernel on a toy graph first: JIT memory is not the graph's
    tiny = os.path.join(folder, "tiny.wel" if weighted else "tiny.txt")
    np.savetxt(tiny, np.array([[0, 1, 1], [1, 2, 1], [2, 0, 1]])[:, :3 if weighted else 2],
               fmt="%d")
    g = totem_py.load(tiny)
    totem_py.run(g, algorithm, device="emulated", source=0)
    del g
    graph = totem_py.load(path)
    npz, npz_sym = path + ".npz", path + ".sym.npz"
    save_npz(graph, npz)
    save_npz(graph.to_undirected(), npz_sym)
    del graph
    tracemalloc.start()
    rows = {}

    def stage(name, fn):
        _reset_peak()
        traced0, rss0 = tracemalloc.get_traced_memory()[0], _status("VmRSS")
        out = fn()
        traced1, traced_peak = tracemalloc.get_traced_memory()
        rows[name] = dict(peak=int(max(_status("VmHWM") - rss0, traced_peak - traced0)),
                          keep=int(traced1 - traced0))
        return out

    stage("load_npz", lambda: totem_py.load(npz))
    stage("load_npz_undirected", lambda: totem_py.load(npz_sym))
    graph = stage("load", lambda: totem_py.load(path))
    stage("undirected", graph.to_undirected)
    plan = stage("partition", lambda: partition(graph, "HIGH", 0.5, 1))
    alg, source = make_algorithm(algorithm, graph)
    stage("plan", lambda: [plan.views(v) for v in alg.views()])
    stage("run", lambda: totem_py.run(graph, algorithm, plan=plan, device="emulated",
                                      source=source, cpu_share=0.5).values)
    for f in (npz, npz_sym):
        os.unlink(f)
    os.unlink(path)
    return rows


def fit(samples):
    """Least squares bytes = a * n + b * m (+ constant) over (n, m, bytes) samples."""
    a = np.array([[n, m, 1.0] for n, m, _ in samples])
    y = np.array([b for _, _, b in samples], dtype=float)
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return coef


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", help="write every measurement here")
    p.add_argument("--one", nargs=4, metavar=("N", "M", "ALG", "WEIGHTED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        n, m, alg, weighted = args.one
        with tempfile.TemporaryDirectory() as folder:
            rows = measure(int(n), int(m), alg, weighted == "1", folder)
        print(json.dumps(rows))
        return 0
    table = []
    for weighted in (False, True):
        for alg in ALGORITHMS:
            for n, m in SIZES:
                out = subprocess.run([sys.executable, "-m", "experiments.memory_costs", "--one",
                                      str(n), str(m), alg, str(int(weighted))],
                                     capture_output=True, text=True, check=True)
                rows = json.loads(out.stdout.strip().splitlines()[-1])
                table.append(dict(algorithm=alg, weighted=weighted, n=n, m=m, stages=rows))
                print(f"{alg:>9} {'weighted' if weighted else '':>8} n={n:>7} m={m:>7} " +
                      " ".join(f"{s} {r['peak'] / 2**20:.1f}/{r['keep'] / 2**20:.1f}"
                               for s, r in rows.items()), flush=True)
    print("\nper stage: peak B/vertex, B/edge, fixed MiB; keep B/vertex, B/edge (largest fit "
          "over the algorithms)")
    for weighted in (False, True):
        for stage in STAGES:
            fits = {k: np.max([fit([(t["n"], 2 * t["m"] if stage == "load_npz_undirected"
                                     else t["m"], t["stages"][stage][k])
                                    for t in table if t["algorithm"] == a
                                    and t["weighted"] == weighted])
                               for a in ALGORITHMS], axis=0) for k in ("peak", "keep")}
            peak, keep = fits["peak"], fits["keep"]
            print(f"{stage:>20} {'weighted' if weighted else 'unweighted':>10}: "
                  f"({peak[0]:5.1f}, {peak[1]:5.1f}, {max(peak[2], 0) / 2**20:5.1f}), "
                  f"({keep[0]:5.1f}, {keep[1]:5.1f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
