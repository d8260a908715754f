"""HyTGraph on the graph bench_transfer runs, on the same host: its times measured beside ours
rather than taken from a table.

    bash experiments/build_hytgraph.sh HYTGRAPH_SRC BUILD         # once per host (about 2 min)
    python -m experiments.hytgraph_baseline --bin BUILD/build --graph rmat:22 \\
        --algorithms bfs,sssp,pagerank_delta,cc --json hytgraph_rmat22.json

HYTGRAPH_SRC is a checkout of iDC-NEU/HyTGraph. The graph is ours, undirected, written as the
edge list HyTGraph's market_big reader takes (`src<TAB>dst<TAB>weight` lines; for SSSP our
integer weights 1-255, for the others HyTGraph's own src % 64, which they do not read). BFS and
SSSP start from one source, ours by default (the one our runs pick: `--source` to set it); our
pagerank_delta is HyTGraph's PageRank (residuals pushed to a tolerance). HyTGraph keeps no edges
on the GPU. Each run is a process of its own that loads the graph again; prints the median of its
"Total time" over `--repeat` runs with its rounds and the rounds each transfer engine served,
and writes them as JSON (`times_ms`).
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from numba import njit

from experiments.provenance import header, provenance
from experiments.totem_baseline import BASELINE_ENV, written_graphs

BINARIES = {"bfs": "hybrid_bfs", "sssp": "hybrid_sssp", "pagerank_delta": "hybrid_pr",
            "cc": "hybrid_cc"}
FIELDS = {"time_ms": r"Total time: ([\d.]+)", "rounds": r"Total rounds: (\d+)",
          "filter_rounds": r"filter_num: (\d+)", "zerocopy_rounds": r"zerocopy_num: (\d+)",
          "compaction_rounds": r"compaction_num: (\d+)"}


@njit(cache=False)
def _digits(x):
    n = 1
    while x >= 10:
        x //= 10
        n += 1
    return n


@njit(cache=False)
def _edge_list(indptr, indices, weights):
    """The edge list's text as bytes: `u<TAB>v<TAB>w<LF>` per edge (u, v) with weight w."""
    n = indptr.size - 1
    size = 0
    for u in range(n):
        du = _digits(u)
        for e in range(indptr[u], indptr[u + 1]):
            size += du + _digits(indices[e]) + _digits(weights[e]) + 3
    out = np.empty(size, np.uint8)
    pos = 0
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            for x, end in ((u, 9), (indices[e], 9), (weights[e], 10)):
                k = _digits(x)
                for i in range(k):
                    out[pos + k - 1 - i] = 48 + x % 10
                    x //= 10
                out[pos + k] = end      # TAB between fields, LF after the weight
                pos += k + 1
    return out


def write_graph(graph, path):
    """`graph` as HyTGraph's market_big edge list; weights (integers) or src % 64."""
    if graph.weights is not None:
        if not np.array_equal(graph.weights, np.round(graph.weights)):
            raise ValueError("HyTGraph's weights are integers")
        weights = graph.weights.astype(np.int64)
    else:
        weights = np.repeat(np.arange(graph.n_vertices, dtype=np.int64) % 64,
                            np.diff(graph.indptr))
    _edge_list(graph.indptr, graph.indices.astype(np.int64), weights).tofile(path)


def parse(output):
    """HyTGraph's timing lines: {time_ms, rounds, filter/zerocopy/compaction rounds}."""
    found = {k: re.search(p, output) for k, p in FIELDS.items()}
    if found["time_ms"] is None:
        return None
    return {k: float(m.group(1)) if k == "time_ms" else int(m.group(1))
            for k, m in found.items() if m}


def run(binary, graph_file, algorithm, source, extra):
    cmd = [str(binary), "-graphfile", str(graph_file), "-format", "market_big",
           "-weight_num", "0" if algorithm == "sssp" else "1", *extra]
    if algorithm in ("bfs", "sssp"):
        cmd += ["-source_node", str(source)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=BASELINE_ENV)
    out = parse(proc.stdout + proc.stderr)
    if proc.returncode or out is None:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {tail[0]}")
    return cmd, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the folder of HyTGraph's hybrid_* binaries")
    ap.add_argument("--graph", default="rmat:22", help="a generator spec, made undirected")
    ap.add_argument("--algorithms", default="bfs,sssp,pagerank_delta,cc")
    ap.add_argument("--source", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--extra", default="", help="more flags for HyTGraph, space-separated")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    algorithms = args.algorithms.split(",")
    binaries = {a: Path(args.bin) / BINARIES[a] for a in algorithms if a in BINARIES}
    problems = [f"unknown algorithm {a}" for a in algorithms if a not in BINARIES]
    problems += [f"{b}: no such file" for b in binaries.values() if not b.is_file()]
    if problems:
        print(f"hytgraph_baseline: {'; '.join(problems)} (experiments/build_hytgraph.sh builds "
              f"the binaries)", file=sys.stderr)
        return 2
    prov = provenance("experiments.hytgraph_baseline", argv, gpu=True)
    print(header(prov), flush=True)
    times, runs = {}, []
    with tempfile.TemporaryDirectory() as tmp:
        for graph_file, algs, source in written_graphs(args.graph, algorithms, write_graph, tmp,
                                                       "el", True, args.source):
            for alg in algs:
                try:
                    outs = []
                    for _ in range(args.repeat):
                        cmd, out = run(binaries[alg], graph_file, alg, source, args.extra.split())
                        outs.append(out)
                except RuntimeError as exc:
                    print(f"{alg:15} failed: {exc}", flush=True)
                    continue
                ms = statistics.median(o["time_ms"] for o in outs)
                times[alg] = ms
                runs.append(dict(algorithm=alg, command=cmd, source=source, runs=outs))
                last = outs[-1]
                print(f"{alg:15} {ms:9.2f} ms  rounds {last.get('rounds')}  filter "
                      f"{last.get('filter_rounds')} zerocopy {last.get('zerocopy_rounds')} "
                      f"compaction {last.get('compaction_rounds')}", flush=True)
                if args.json:
                    Path(args.json).write_text(json.dumps(dict(
                        prov, graph=args.graph, times_ms=times, runs=runs), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
