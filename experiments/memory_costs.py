"""Host memory of each stage of a run, per vertex and per edge: the measurement behind
totem_py/errors.py's `STAGE_COSTS`, which the readers and the harness use to refuse, before
allocating, a run that would not fit.

For each graph size, algorithm and weighting, one fresh process writes a uniform random edge list
(`.txt`, or `.wel` with integer weights), compiles every kernel on a toy graph, then runs the
stages one after the other, as `python -m totem_py.run` does:

  load_npz             totem_py.load(the graph saved as .npz)              arrays read in place
  load_npz_undirected  totem_py.load(its undirected version)               and the symmetry check
  load                 totem_py.load(the text file)                        parse + CSR build
  undirected           graph.to_undirected() (--undirected), measured and dropped
  partition            partitioners.partition(graph, HIGH, 0.5, 1 GPU)     order, owners, local ids
  plan:VIEW            plan.views(VIEW) for each CSR view the algorithm reads (out, in, both)
  run:ALG              totem_py.run(graph, ALG, plan=plan, device=emulated): state, warm-up, trial

and records, per stage, its peak above what the process held when the stage started (the larger
of the peak RSS, reset through /proc/self/clear_refs, and tracemalloc's peak, which counts NumPy's
allocations touched or not) and what it keeps. A least-squares fit over the sizes gives bytes per
vertex, per edge and fixed (not negative) of each stage's peak and keep; the table printed last
takes, coefficient by coefficient, the largest over the algorithms that ran the stage, for
unweighted and weighted graphs, in the form of `STAGE_COSTS`, and each algorithm's run:ALG
figures in the form of its class's `memory`. Edges are those of the stage's input (the stored
edges for the undirected .npz).

    python -m experiments.memory_costs --json memory_costs.json
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

from experiments.provenance import header, provenance
from totem_py.algorithms import ALGORITHMS
# (vertices, edges): two edge counts at one vertex count and two vertex counts at one edge count
SIZES = ((1 << 16, 4 << 20), (1 << 19, 4 << 20), (1 << 19, 1 << 20))
LOAD_STAGES = ("load_npz", "load_npz_undirected", "load", "undirected", "partition")


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
    """One process's stages for a graph of n vertices and m edges: {stage: {peak, keep}}."""
    import totem_py
    from partitioners import partition
    from totem_py.harness import make_algorithm
    from totem_py.io import save_npz

    rng = np.random.default_rng(1)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    dst[0] = n - 1                       # n vertices exactly
    path = os.path.join(folder, f"g.{'wel' if weighted else 'txt'}")
    cols = [src, dst] + ([rng.integers(1, 255, m)] if weighted else [])
    np.savetxt(path, np.column_stack(cols), fmt="%d")
    # compile every kernel on a toy graph first: the JIT's memory is not the graph's
    tiny = os.path.join(folder, "tiny.wel" if weighted else "tiny.txt")
    np.savetxt(tiny, np.array([[0, 1, 1], [1, 2, 1], [2, 0, 1]])[:, :3 if weighted else 2],
               fmt="%d")
    totem_py.run(totem_py.load(tiny), algorithm, device="emulated", source=0)
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
    for view in alg.views():
        stage(f"plan:{view}", lambda: plan.views(view))
    stage(f"run:{algorithm}", lambda: totem_py.run(graph, algorithm, plan=plan,
                                                   device="emulated", source=source,
                                                   cpu_share=0.5).values)     # the class's
    return rows


def fit(samples):
    """(bytes per vertex, per edge, fixed) fitting bytes = a n + b m + c over (n, m, bytes)
    samples by least squares; through the origin when the fixed part comes out negative."""
    a = np.array([[n, m, 1.0] for n, m, _ in samples])
    y = np.array([b for _, _, b in samples], dtype=float)
    coef = np.linalg.lstsq(a, y, rcond=None)[0]
    if coef[2] < 0:
        coef = np.append(np.linalg.lstsq(a[:, :2], y, rcond=None)[0], 0.0)
    return np.maximum(coef, 0.0)


def stage_costs(table):
    """{stage: {weighted: ((peak/vertex, /edge, fixed), (keep/vertex, /edge))}}, each figure
    the largest over the algorithms that ran the stage."""
    out = {}
    for stage in dict.fromkeys(s for t in table for s in t["stages"]):
        out[stage] = {}
        for weighted in (False, True):
            runs = [t for t in table if t["weighted"] == weighted and stage in t["stages"]]
            fits = {}
            for k in ("peak", "keep"):
                per_alg = [fit([(t["n"], 2 * t["m"] if stage == "load_npz_undirected" else t["m"],
                                 t["stages"][stage][k]) for t in runs if t["algorithm"] == a])
                           for a in dict.fromkeys(t["algorithm"] for t in runs)]
                fits[k] = np.max(per_alg, axis=0)
            out[stage][weighted] = (tuple(int(np.ceil(x)) for x in fits["peak"]),
                                    tuple(int(np.ceil(x)) for x in fits["keep"][:2]))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", help="write every measurement and the fitted costs here")
    p.add_argument("--algorithms", default=",".join(ALGORITHMS))
    p.add_argument("--sizes", default=",".join(f"{n}:{m}" for n, m in SIZES),
                   help="VERTICES:EDGES,... (three or more)")
    p.add_argument("--one", nargs=4, metavar=("N", "M", "ALG", "WEIGHTED"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        n, m, alg, weighted = args.one
        with tempfile.TemporaryDirectory() as folder:
            rows = measure(int(n), int(m), alg, weighted == "1", folder)
        print(json.dumps(rows))
        return 0
    prov = provenance("experiments.memory_costs", argv)
    print(header(prov), flush=True)
    sizes = [tuple(int(x) for x in s.split(":")) for s in args.sizes.split(",")]
    table = []
    for weighted in (False, True):
        for alg in args.algorithms.split(","):
            for n, m in sizes:
                out = subprocess.run([sys.executable, "-m", "experiments.memory_costs", "--one",
                                      str(n), str(m), alg, str(int(weighted))],
                                     capture_output=True, text=True, check=True)
                rows = json.loads(out.stdout.strip().splitlines()[-1])
                table.append(dict(algorithm=alg, weighted=weighted, n=n, m=m, stages=rows))
                print(f"{alg:>9} {'weighted' if weighted else '':>8} n={n:>7} m={m:>7} " +
                      " ".join(f"{s} {r['peak'] / 2**20:.1f}/{r['keep'] / 2**20:.1f}"
                               for s, r in rows.items()) + " (MiB peak/keep)", flush=True)
    costs = stage_costs(table)
    print("\nSTAGE_COSTS: stage: unweighted, weighted; each ((peak B/vertex, B/edge, fixed B), "
          "(keep B/vertex, B/edge))")
    for stage, c in costs.items():
        if not stage.startswith("run:"):
            print(f"    {chr(34) + stage + chr(34) + ':':<22} ({c[False]}, {c[True]}),")
    print("\neach algorithm's `memory` (its class's), as measured:")
    for stage, c in costs.items():
        if stage.startswith("run:"):
            print(f"    {stage[4:]}: memory = ({c[False]}, {c[True]})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(prov, measurements=table,
                           stage_costs={s: [c[False], c[True]] for s, c in costs.items()}),
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
