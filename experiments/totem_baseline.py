"""The original TOTEM on the graph bench_gpu runs, on the same host: the TOTEM column measured
beside ours rather than taken from a table.

    bash experiments/build_totem.sh TOTEM_SRC BUILD            # once per host (about 2 min)
    python -m experiments.totem_baseline --totem BUILD/src/build/bin/benchmark --scale 24 \\
        --threads 16 --json totem_rmat24.json
    python -m experiments.bench_gpu --scale 24 --totem totem_rmat24.json ...

TOTEM_SRC is a checkout of netsyslab/Totem (its `src` folder inside). The graph is ours,
rmat:SCALE undirected, written in TOTEM's binary format (weighted for SSSP: our integer weights
1-255, which TOTEM's 32-bit integer weights hold exactly). Each configuration of bench_gpu's
(cpu, gpu, mapped, and STRATEGY SHARE for HIGH, LOW and RAND) maps to TOTEM's platform,
partitioning, CPU edge percentage (alpha) and GPU memory flags; each algorithm to TOTEM's
benchmark: BFS to its direction-optimising "stepwise" BFS, PageRank (TOTEM's 5 rounds), SSSP
and CC. TOTEM picks its own random sources for BFS and SSSP (ours are fixed per run). Prints
TOTEM's median total time per cell, with the medians of its compute and communication times,
and writes them as JSON (`times_ms`, read by bench_gpu's --totem).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The baselines run with the caller's environment, while this process's own threads (Numba's
# OpenMP pool, which generated the graph) sleep beside them: with OMP_WAIT_POLICY=active, which
# totem_py picks on an idle machine of 16 cores or more, they would spin on the cores the baseline
# computes on (TOTEM's CPU-only BFS on rmat:24, an H100 host's 16 cores: 272 ms so, 85 ms with
# them asleep).
BASELINE_ENV = dict(os.environ)
os.environ["OMP_WAIT_POLICY"] = "passive"

import numpy as np  # noqa: E402

import totem_py  # noqa: E402
from experiments.provenance import header, provenance  # noqa: E402
from totem_py.algorithms.common import source_vertex  # noqa: E402

MAGIC, VID_BYTES, EID_BYTES = 0x10102048, 4, 8      # a TOTEM built with EID=64
BENCHMARKS = {"bfs": 6, "pagerank": 1, "sssp": 2, "cc": 8}
PLATFORM = {"cpu": 0, "gpu": 1, "hybrid": 2}
PARTITIONING = {"RAND": 0, "HIGH": 1, "LOW": 2}      # HIGH: the high-degree vertices on the CPU
COLUMNS = ("total", "exec", "init", "comp", "comm", "finalize", "cpu_comp", "gpu_comp",
           "gpu_total_comp", "scatter", "gather", "aggr", "trv_edges", "exec_rate")


def write_graph(graph, path):
    """`graph` in TOTEM's binary format: magic, id sizes, vertex and edge counts, the valued,
    weighted and directed flags, the row offsets (64-bit), the column ids (32-bit) and the
    weights (32-bit integers) if any."""
    if graph.n_vertices >= 2**32 - 1:
        raise ValueError("TOTEM's vertex ids are 32-bit")
    weights = graph.weights
    if weights is not None and not np.array_equal(weights, np.round(weights)):
        raise ValueError("TOTEM's weights are integers")
    with open(path, "wb") as f:
        np.array([MAGIC, VID_BYTES, EID_BYTES, graph.n_vertices], np.uint32).tofile(f)
        np.array([graph.n_edges], np.uint64).tofile(f)
        np.array([0, weights is not None, graph.directed], np.uint8).tofile(f)
        graph.indptr.astype(np.uint64).tofile(f)
        graph.indices.astype(np.uint32).tofile(f)
        if weights is not None:
            weights.astype(np.uint32).tofile(f)


def written_graphs(spec, algorithms, write, folder, extension, pick_source=False, source=None):
    """For the graph and the weighted graph the algorithms need (weights for SSSP alone): (the
    path where `write` put `spec` made undirected, the algorithms to run on it, the traversal
    source: with `pick_source`, `source` checked or else the one our runs pick, found once since
    both graphs have the same edges; None without); the graph is dropped before the runs."""
    root = None
    for weighted in sorted({a == "sssp" for a in algorithms}):
        t0 = time.perf_counter()
        graph = totem_py.generate(spec, undirected=True, weighted=weighted)
        if pick_source and root is None:
            root = source_vertex(graph, source, 0, "bfs")
        path = Path(folder) / f"graph{'_w' if weighted else ''}.{extension}"
        write(graph, path)
        del graph
        print(f"# {spec} undirected{' weighted' if weighted else ''} written as {path.name} in "
              f"{time.perf_counter() - t0:.1f} s" + (f"; source {root}" if pick_source else ""),
              flush=True)
        yield path, [a for a in algorithms if (a == "sssp") == weighted], root


def flags(label):
    """TOTEM's benchmark flags of one of bench_gpu's configuration labels."""
    if label == "cpu":
        return ["-p0"]
    if label == "gpu":
        return ["-p1"]
    if label == "mapped":       # the whole graph in mapped host memory
        return ["-p1", "-m1"]
    strategy, share = label.split()
    return ["-p2", f"-i{PARTITIONING[strategy]}", f"-a{round(float(share) * 100)}"]


def parse(output):
    """TOTEM's timing rows (after its header line `total exec ...`) as dicts of floats."""
    rows, table = [], False
    for line in output.splitlines():
        fields = line.split("\t")
        if fields[:2] == ["total", "exec"]:
            table = True
        elif table and len(fields) == len(COLUMNS):
            try:
                rows.append(dict(zip(COLUMNS, map(float, fields))))
            except ValueError:
                table = False
    return rows


def run(totem, graph_file, algorithm, label, threads, repeat):
    cmd = [str(totem), f"-b{BENCHMARKS[algorithm]}", f"-t{threads}", f"-r{repeat}",
           *flags(label), str(graph_file)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=BASELINE_ENV)
    rows = parse(proc.stdout)
    if proc.returncode or not rows:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {tail[0]}")
    return cmd, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--totem", required=True, help="TOTEM's benchmark binary")
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--configs", default="cpu,gpu,HIGH 0.5,HIGH 0.25",
                    help="bench_gpu's configuration labels, comma-separated")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5, help="TOTEM's runs per cell (-r)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if not Path(args.totem).is_file():
        print(f"totem_baseline: {args.totem}: no such file (experiments/build_totem.sh builds "
              f"it)", file=sys.stderr)
        return 2
    prov = provenance("experiments.totem_baseline", argv, gpu=True)
    print(header(prov), flush=True)
    algorithms, labels = args.algorithms.split(","), args.configs.split(",")
    times, runs = {}, []
    print(f"{'algorithm':9} {'config':10} {'total ms':>9} {'comp ms':>8} {'comm ms':>8} "
          f"{'runs':>4}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        for graph_file, algs, _ in written_graphs(f"rmat:{args.scale}", algorithms, write_graph,
                                                  tmp, "tbin"):
            for alg in algs:
                for label in labels:
                    try:
                        cmd, rows = run(args.totem, graph_file, alg, label, args.threads,
                                        args.repeat)
                    except RuntimeError as exc:
                        print(f"{alg:9} {label:10} failed: {exc}", flush=True)
                        continue
                    med = {k: statistics.median(r[k] for r in rows)
                           for k in ("total", "comp", "comm")}
                    times.setdefault(alg, {})[label] = med["total"]
                    runs.append(dict(algorithm=alg, config=label, command=cmd, rows=rows))
                    print(f"{alg:9} {label:10} {med['total']:9.2f} {med['comp']:8.2f} "
                          f"{med['comm']:8.2f} {len(rows):4d}", flush=True)
                    if args.json:
                        Path(args.json).write_text(json.dumps(dict(
                            prov, scale=args.scale, times_ms=times, runs=runs), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
