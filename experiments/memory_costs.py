"""Host memory of each stage of a run, per vertex and per edge: the measurement behind the
constants of totem_py/errors.py (`STAGE_COSTS`).

For each graph size and algorithm, one fresh process writes a uniform random edge list (`.wel`
with weights for sssp, else `.txt`), then runs the stages one after the other, as
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
bytes per vertex and per edge of each stage's peak and keep (the largest over the algorithms).

    python -m experiments.memory_costs            # sizes 2**16..2**19 vertices, 2M..8M edges
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
SIZES = ((1 << 16, 4 << 20), (1 << 19, 4 << 20), (1 << 19, 1 << 20), (1 << 18, 8 << 20))


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


def measure(n, m, algorithm, folder):
    """One process's stage table for a graph of n vertices and m edges."""
    import totem_py
    from partitioners import partition
    from totem_py.harness import make_algorithm
    from totem_py.io import save_npz

    rng = np.random.default_rng(1)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    dst[0] = n - 1                       # n vertices exactly
    weighted = algorithm == "sssp"
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
    p.add_argument("--one", nargs=3, metavar=("N", "M", "ALG"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        with tempfile.TemporaryDirectory() as folder:
            rows = measure(int(args.one[0]), int(args.one[1]), args.one[2], folder)
        print(json.dumps(rows))
        return 0
    table = []
    for alg in ALGORITHMS:
        for n, m in SIZES:
            out = subprocess.run([sys.executable, "-m", "experiments.memory_costs", "--one",
                                  str(n), str(m), alg], capture_output=True, text=True,
                                 check=True)
            rows = json.loads(out.stdout.strip().splitlines()[-1])
            table.append(dict(algorithm=alg, n=n, m=m, stages=rows))
            print(f"{alg:>9} n={n:>8} m={m:>8} " + "  ".join(
                f"{s} {r['peak'] / 2**20:7.1f}/{r['keep'] / 2**20:6.1f} MiB"
                for s, r in rows.items()), flush=True)
    print("\nbytes per vertex, per edge (peak / keep), fit over the sizes; unweighted is the "
          "largest over bfs, pagerank, cc, bc")
    for stage in table[0]["stages"]:
        for label, algs in (("unweighted", ("bfs", "pagerank", "cc", "bc")),
                            ("weighted", ("sssp",))):
            fits = {k: [fit([(t["n"], t["m"], t["stages"][stage][k]) for t in table
                             if t["algorithm"] == a]) for a in algs] for k in ("peak", "keep")}
            peak = np.max(fits["peak"], axis=0)
            keep = np.max(fits["keep"], axis=0)
            print(f"{stage:>9} {label:>10}: peak {peak[0]:6.1f} B/vertex {peak[1]:6.1f} B/edge"
                  f" (+{peak[2] / 2**20:5.1f} MiB), keep {keep[0]:6.1f} B/vertex "
                  f"{keep[1]:6.1f} B/edge")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
