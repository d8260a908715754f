"""Time the same cells in two source trees (a change's before and after) on the same work.

    python -m experiments.tree_ab OLD_TREE NEW_TREE --scale 24 --source 14270045 --json ab.json

Each tree runs in its own process (its packages first on sys.path) through its public
`totem_py.run`, one after the other on the same host: BFS, PageRank, SSSP and CC on rmat:SCALE
(or another generator's graph of that scale, `--family road`)
undirected, CPU only, GPU only, HIGH 0.5, HIGH 0.25 and GPU only with a quarter of the edge bytes
as --gpu-memory (streamed), with one fixed source for BFS and SSSP (a tree's default source may
differ, and SSSP's work depends on it); the algorithms of a configuration share its partitioning
(as in experiments.bench_gpu). `--repeat N` runs old then new N times, a cell's time being the
median of its rounds'. Prints each cell as it finishes and, at the end, both times, their ratio
and whether the results agree; the JSON also has each tree's last round by mode (supersteps,
compute seconds per partition, exchange seconds: where a difference comes from); the JSON is rewritten after each cell, so a run cut short keeps
what it finished.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

from experiments.provenance import header, provenance

CONFIGS = {"cpu": dict(cpu_share=1.0, device="cpu"), "gpu": dict(cpu_share=0.0),
           "HIGH 0.5": dict(cpu_share=0.5), "HIGH 0.25": dict(cpu_share=0.25),
           "streamed 1/4": dict(cpu_share=0.0, streamed=True)}

# one tree's cells, run in a child process: argv = tree, scale, source, device, algorithms,
# threads, configs, the folder keeping generated graphs ("": none), trials per cell (0: 15 for BFS
# and CC with a GPU, else 3), the generator
CHILD = r"""
import json, os, sys
tree, scale, source, device, algorithms, threads = sys.argv[1:7]
sys.path.insert(0, tree)
import numpy as np, totem_py
from totem_py.graph import Graph
configs, keep, n_trials, family = json.loads(sys.argv[7]), sys.argv[8], int(sys.argv[9]), \
    sys.argv[10]


def graph(weighted):
    # generated once and kept in `keep` (a folder) for the other processes, when one is given
    path = os.path.join(keep, f"{family}{scale}{'w' if weighted else ''}.npz") if keep else ""
    if path and os.path.exists(path):
        z = np.load(path)
        return Graph(z["indptr"], z["indices"], z["weights"] if weighted else None,
                     f"{family}:{scale}", directed=False)
    g = totem_py.generate(f"{family}:{scale}", undirected=True, weighted=weighted)
    if path:
        os.makedirs(keep, exist_ok=True)
        np.savez(path + ".part.npz", indptr=g.indptr, indices=g.indices,
                 **({"weights": g.weights} if weighted else {}))
        os.replace(path + ".part.npz", path)
    return g


names = algorithms.split(",")
for weighted in sorted({a == "sssp" for a in names}):     # SSSP's graph has weights
    g = graph(weighted)
    for name, kw in configs.items():
        kw = dict(kw)
        if kw.pop("streamed", False):
            edge_bytes = g.indices.nbytes + (g.weights.nbytes if weighted else 0)
            kw["gpu_memory"] = edge_bytes // 4
            if device != "gpu":
                kw["chunk_bytes"] = 1 << 12
        kw.setdefault("device", device)
        plan = None         # one partitioning a configuration, for each of its algorithms
        for alg in [a for a in names if (a == "sssp") == weighted]:
            extra = {"source": int(source)} if alg in ("bfs", "sssp") else {}
            trials = n_trials or (15 if alg in ("bfs", "cc") and name != "cpu" else 3)
            r = totem_py.run(g, alg, partition="HIGH", trials=trials, threads=int(threads),
                             plan=plan, **extra, **kw)
            plan = r.plan
            v = np.asarray(r.values, dtype=np.float64)
            modes = {}      # per mode: supersteps, compute s per partition, exchange s
            for x in r.metrics["per_superstep"]:
                m = modes.setdefault(x["mode"], [0, [0.0] * len(x["compute_s"]), 0.0])
                m[0] += x.get("steps", 1)
                m[1] = [a + b for a, b in zip(m[1], x["compute_s"])]
                m[2] += x["exchange_s"]
            print(json.dumps(dict(algorithm=alg, config=name, time_s=r.metrics["time_s"],
                                  supersteps=r.metrics["supersteps"], modes=modes,
                                  check=float(np.where(np.isfinite(v), v, 0).sum()))), flush=True)
        plan = r = None     # its device arrays go before the next configuration's
"""


def run_tree(tree, args):
    """Yield the tree's cells as its child process finishes them (its stderr into a file: a
    pipe nobody reads while the child runs could fill and stop it)."""
    configs = {name: CONFIGS[name] for name in args.configs.split(",")}
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(Path(tree).resolve()),
                                 str(args.scale), str(args.source), args.device,
                                 args.algorithms, str(args.threads), json.dumps(configs),
                                 args.keep_graphs or "", str(args.trials), args.family],
                                stdout=subprocess.PIPE, stderr=err, text=True)
        for line in proc.stdout:
            if line.startswith("{"):
                yield json.loads(line)
        if proc.wait():
            err.seek(0)
            sys.exit(f"{tree}: {(err.read().strip().splitlines() or ['no output'])[-1]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--family", default="rmat", help="the generator: rmat, road or uniform")
    ap.add_argument("--source", type=int, required=True)
    ap.add_argument("--device", default="gpu", help="gpu, or emulated for a smoke test")
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help=f"cells per algorithm, of {', '.join(CONFIGS)} (default: all)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds of old then new; a cell's time is the median of its rounds' "
                         "(for hosts whose speed drifts between runs)")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--trials", type=int, default=0,
                    help="trials per cell and round (default: 15 for BFS and CC with a GPU "
                         "partition, else 3)")
    ap.add_argument("--keep-graphs", metavar="DIR", default=None,
                    help="keep the generated graphs in DIR (.npz) for the other processes and "
                         "later runs (rmat:24 takes about 25 s to generate on the H100 host)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    unknown = set(args.configs.split(",")) - set(CONFIGS)
    if unknown:
        ap.error(f"--configs: unknown {', '.join(sorted(unknown))}")
    prov = provenance("experiments.tree_ab", argv, gpu=args.device == "gpu")
    print(header(prov), flush=True)
    times = {}      # (tree, algorithm, config) -> each round's time (s)
    checks = {}     # (tree, algorithm, config) -> the result's checksum
    modes = {}      # (tree, algorithm, config) -> the last round's time by mode (see CHILD)
    cells = []      # (algorithm, config), in the order they first ran

    def row(key):
        old_ms, new_ms = (1e3 * median(times[tree, *key]) for tree in ("old", "new"))
        x, y = checks["old", *key], checks["new", *key]
        return dict(algorithm=key[0], config=key[1], old_ms=old_ms, new_ms=new_ms,
                    ratio=new_ms / old_ms, same=abs(x - y) <= 1e-9 * max(1.0, abs(x)),
                    old_modes=modes.get(("old", *key)), new_modes=modes.get(("new", *key)),
                    old_rounds_ms=[1e3 * t for t in times["old", *key]],
                    new_rounds_ms=[1e3 * t for t in times["new", *key]])

    def rows():
        """The cells both trees have run, over the rounds so far, by algorithm as asked."""
        order = args.algorithms.split(",")
        return [row(key) for key in sorted(cells, key=lambda k: order.index(k[0]))
                if ("new", *key) in times]

    for k in range(args.repeat):
        for tree, path in (("old", args.old), ("new", args.new)):
            for c in run_tree(path, args):
                key = c["algorithm"], c["config"]
                if key not in cells:
                    cells.append(key)
                times.setdefault((tree, *key), []).append(c["time_s"])
                checks[tree, *key] = c["check"]
                modes[tree, *key] = c.get("modes")
                print(f"{tree} round {k + 1}/{args.repeat} {key[0]:9s} {key[1]:13s} "
                      f"{c['time_s'] * 1e3:9.2f} ms", flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps(dict(
                        prov, scale=args.scale, source=args.source, repeat=args.repeat,
                        rounds_done=k + (tree == "new"), rows=rows()), indent=1))
    print(f"{'algorithm':9s} {'config':13s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}  results",
          flush=True)
    final = rows()
    for r in final:
        print(f"{r['algorithm']:9s} {r['config']:13s} {r['old_ms']:9.2f} {r['new_ms']:9.2f} "
              f"{r['ratio']:8.2f}  {'same' if r['same'] else 'DIFFER'}", flush=True)
    return 0 if all(r["same"] for r in final) else 1


if __name__ == "__main__":
    sys.exit(main())
