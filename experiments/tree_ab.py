"""Time the same cells in two source trees (a change's before and after) on the same work.

    python -m experiments.tree_ab OLD_TREE NEW_TREE --scale 24 --source 14270045 --json ab.json

Each tree runs in its own process (its packages first on sys.path) through its public
`totem_py.run`, one after the other on the same host: BFS, PageRank, SSSP and CC on rmat:SCALE
undirected, CPU only, GPU only, HIGH 0.5, HIGH 0.25 and GPU only with a quarter of the edge bytes
as --gpu-memory (streamed), with one fixed source for BFS and SSSP (a tree's default source may
differ, and SSSP's work depends on it). Prints each cell of the old tree as it finishes, then
each of the new tree beside it (both times, their ratio, whether the results agree), rewriting
the JSON after each, so a run cut short keeps what it finished.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from experiments.provenance import header, provenance

CONFIGS = {"cpu": dict(cpu_share=1.0, device="cpu"), "gpu": dict(cpu_share=0.0),
           "HIGH 0.5": dict(cpu_share=0.5), "HIGH 0.25": dict(cpu_share=0.25),
           "streamed 1/4": dict(cpu_share=0.0, streamed=True)}

# one tree's cells, run in a child process: argv = tree, scale, source, device, algorithms,
# threads, configs
CHILD = r"""
import json, sys
tree, scale, source, device, algorithms, threads = sys.argv[1:7]
sys.path.insert(0, tree)
import numpy as np, totem_py
configs = json.loads(sys.argv[7])
graphs = {}
for alg in algorithms.split(","):
    weighted = alg == "sssp"
    if weighted not in graphs:
        graphs[weighted] = totem_py.generate(f"rmat:{scale}", undirected=True, weighted=weighted)
    g = graphs[weighted]
    for name, kw in configs.items():
        kw = dict(kw)
        if kw.pop("streamed", False):
            edge_bytes = g.indices.nbytes + (g.weights.nbytes if weighted else 0)
            kw["gpu_memory"] = edge_bytes // 4
            if device != "gpu":
                kw["chunk_bytes"] = 1 << 12
        kw.setdefault("device", device)
        extra = {"source": int(source)} if alg in ("bfs", "sssp") else {}
        trials = 15 if alg in ("bfs", "cc") and name != "cpu" else 3
        r = totem_py.run(g, alg, partition="HIGH", trials=trials, threads=int(threads), **extra,
                         **kw)
        v = np.asarray(r.values, dtype=np.float64)
        print(json.dumps(dict(algorithm=alg, config=name, time_s=r.metrics["time_s"],
                              supersteps=r.metrics["supersteps"],
                              check=float(np.where(np.isfinite(v), v, 0).sum()))), flush=True)
"""


def run_tree(tree, args):
    """Yield the tree's cells as its child process finishes them (its stderr into a file: a
    pipe nobody reads while the child runs could fill and stop it)."""
    with tempfile.TemporaryFile(mode="w+") as err:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(Path(tree).resolve()),
                                 str(args.scale), str(args.source), args.device,
                                 args.algorithms, str(args.threads), json.dumps(CONFIGS)],
                                stdout=subprocess.PIPE, stderr=err, text=True)
        for line in proc.stdout:
            if line.startswith("{"):
                yield json.loads(line)
        if proc.wait():
            err.seek(0)
            sys.exit(f"{tree}: {(err.read().strip().splitlines() or ['no output'])[-1]}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--source", type=int, required=True)
    ap.add_argument("--device", default="gpu", help="gpu, or emulated for a smoke test")
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    prov = provenance("experiments.tree_ab", argv, gpu=args.device == "gpu")
    print(header(prov), flush=True)
    old, rows = {}, []

    def save():
        if args.json:
            done = {(r["algorithm"], r["config"]) for r in rows}
            Path(args.json).write_text(json.dumps(dict(
                prov, scale=args.scale, source=args.source, rows=rows,
                old_only=[dict(algorithm=k[0], config=k[1], old_ms=a["time_s"] * 1e3)
                          for k, a in old.items() if k not in done]), indent=1))

    for a in run_tree(args.old, args):
        old[a["algorithm"], a["config"]] = a
        print(f"old {a['algorithm']:9s} {a['config']:13s} {a['time_s'] * 1e3:9.2f} ms",
              flush=True)
        save()
    print(f"{'algorithm':9s} {'config':13s} {'old ms':>9s} {'new ms':>9s} {'new/old':>8s}  results",
          flush=True)
    for b in run_tree(args.new, args):
        key = b["algorithm"], b["config"]
        a = old[key]
        same = abs(a["check"] - b["check"]) <= 1e-9 * max(1.0, abs(a["check"]))
        rows.append(dict(algorithm=key[0], config=key[1], old_ms=a["time_s"] * 1e3,
                         new_ms=b["time_s"] * 1e3, ratio=b["time_s"] / a["time_s"], same=same))
        r = rows[-1]
        print(f"{key[0]:9s} {key[1]:13s} {r['old_ms']:9.2f} {r['new_ms']:9.2f} "
              f"{r['ratio']:8.2f}  {'same' if same else 'DIFFER'}", flush=True)
        save()
    return 0 if all(r["same"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
