"""The fewest supersteps an exact bulk-synchronous SSSP (or BFS) can take on a partitioned graph,
beside what each execution path takes.

    python -m experiments.crossings --graph ../shared/data/road-usroads.mtx.gz
    python -m experiments.crossings --graph road:18 --configs "HIGH 0.5,RAND 0.5" --json c.json
    python -m experiments.crossings --algorithm bfs --graph road:20

BFS is SSSP with unit weights: its levels are the distances the bound is computed from, and
the graph's weights are left out.

Messages cross partitions only at exchanges, one edge per exchange, so a vertex whose every
shortest path from the source crosses between partitions k times cannot have its distance before
superstep k + 1, however many local rounds the partitions run in between (async paths). The
bound is the largest such k over the vertices, plus one: with one partition it is 1. Each row
gives it for one partitioning (the CLI's source, an emulated GPU partition or with `--device
cpu` a second CPU partition), beside the supersteps and times of `--path sync-push-dd`,
`async-push-dd` and `auto`, whose distances must agree.
"""

import argparse
import json
import sys

import numpy as np
from numba import njit

import totem_py
from experiments.provenance import header, provenance


@njit(cache=True)
def fewest_crossings(indptr, indices, weights, dist, owner, order):
    """Per vertex, the fewest partition crossings along a shortest path from the source (the
    vertex at order[0]; -1 where unreachable): over the tight edges (dist[u] + w == dist[v]),
    vertices taken in `order`, by increasing distance."""
    n = dist.size
    most = np.int64(1) << 62
    c = np.full(n, most, np.int64)
    c[order[0]] = 0
    for u in order:
        if not np.isfinite(dist[u]):
            break
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            w = weights[e] if weights.size else 1.0
            if c[u] < most and dist[u] + w == dist[v]:
                cv = c[u] + (owner[u] != owner[v])
                if cv < c[v]:
                    c[v] = cv
    for v in range(n):
        if c[v] == most:
            c[v] = -1
    return c


def superstep_bound(graph, dist, owner):
    """1 + the most crossings any reached vertex's shortest paths need (see the module text)."""
    order = np.argsort(dist, kind="stable")
    weights = graph.weights if graph.weights is not None else np.empty(0)
    c = fewest_crossings(graph.indptr, graph.indices, weights, dist, np.asarray(owner), order)
    return int(c.max()) + 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="../shared/data/road-usroads.mtx.gz",
                    help="a file or a generator spec (weighted and undirected when generated)")
    ap.add_argument("--configs", default="CPU 1,HIGH 0.25,HIGH 0.5,HIGH 0.75,LOW 0.5,RAND 0.5,"
                    "BLOCK 0.25,BLOCK 0.5,BLOCK 0.75",
                    help="partitioning and CPU share per row; CPU 1 is one partition")
    ap.add_argument("--algorithm", choices=("sssp", "bfs"), default="sssp")
    ap.add_argument("--device", choices=("emulated", "cpu"), default="emulated",
                    help="where the GPU partition runs (cpu: as a CPU partition)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    weighted = args.algorithm == "sssp"
    if ":" in args.graph:
        graph = totem_py.generate(args.graph, undirected=True, weighted=weighted)
    else:
        graph = totem_py.load(args.graph)
        if not weighted and graph.weights is not None:
            graph = totem_py.Graph(graph.indptr, graph.indices, None, graph.spec,
                                   graph.directed, checked=False)
    source = totem_py.run(graph, "bfs", cpu_share=1.0, device="cpu").metrics["source"]
    record = dict(provenance("experiments.crossings", argv), graph=args.graph, source=source,
                  algorithm=args.algorithm, rows=[])
    print(header(record))
    print(f"{'config':<11} {'parts':>5} {'bound':>6} {'sync':>6} {'async':>6} {'auto':>6}"
          f" {'bound/sync':>10} {'sync ms':>9} {'async ms':>9} {'auto ms':>9}")
    for config in args.configs.split(","):
        strategy, share = config.split()
        kw = dict(partition="HIGH" if strategy == "CPU" else strategy, cpu_share=float(share),
                  device=args.device, source=source, trials=args.trials, threads=args.threads)
        runs, plan = {}, None
        for path in ("sync-push-dd", "async-push-dd", "auto"):
            r = totem_py.run(graph, args.algorithm, path=path, plan=plan, **kw)
            plan, runs[path] = r.plan, r
        dist = runs["sync-push-dd"].values
        if not all(np.array_equal(dist, r.values) for r in runs.values()):
            raise SystemExit(f"{config}: the paths' values differ")
        if not weighted:        # levels: distances of unit weights
            dist = np.where(dist < 0, np.inf, dist.astype(np.float64))
        bound = superstep_bound(graph, dist, plan.owner)
        steps = {p: r.metrics["supersteps"] for p, r in runs.items()}
        ms = {p: 1e3 * r.metrics["time_s"] for p, r in runs.items()}
        row = dict(config=config, partitions=plan.n_partitions, bound=bound, supersteps=steps,
                   time_ms=ms)
        record["rows"].append(row)
        print(f"{config:<11} {plan.n_partitions:5d} {bound:6d} {steps['sync-push-dd']:6d}"
              f" {steps['async-push-dd']:6d} {steps['auto']:6d}"
              f" {bound / steps['sync-push-dd']:10.3f} {ms['sync-push-dd']:9.2f}"
              f" {ms['async-push-dd']:9.2f} {ms['auto']:9.2f}", flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(record, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
