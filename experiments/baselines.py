"""Other systems on the graph our benchmarks run, on the same host: their times measured beside
ours rather than taken from a table. One entry of SYSTEMS per system: its build script, its
binaries, how our graph is written for it, its flags per configuration and how its times are
read from its output.

    bash experiments/build_totem.sh TOTEM_SRC BUILD [TBB]         # once per host (about 2 min)
    python -m experiments.baselines totem --bin BUILD/src/build/bin --graph rmat:24 \\
        --threads 16 --json totem_rmat24.json
    python -m experiments.bench_gpu --scale 24 --totem totem_rmat24.json ...
    bash experiments/build_hytgraph.sh HYTGRAPH_SRC BUILD
    python -m experiments.baselines hytgraph --bin BUILD/build --graph rmat:22 \\
        --algorithms bfs,sssp,pagerank_delta,cc --json hytgraph_rmat22.json
    bash experiments/build_sepgraph.sh SEP_SRC BUILD
    python -m experiments.baselines sepgraph --bin BUILD/build --graph rmat:22 \\
        --algorithms bfs,sssp,pagerank_delta,bc --json sepgraph_rmat22.json
    bash experiments/build_gap.sh GAPBS_SRC BUILD
    python -m experiments.baselines gap --bin BUILD --graph rmat:22 --threads 16 --json gap.json

The graph is ours, made undirected (weighted for SSSP: our integer weights 1-255, which every
system's integer weights hold exactly). BFS, SSSP and BC start from one source, ours by default
(the one our runs pick; `--source` sets it), where the system takes one (TOTEM picks its own).

- totem (netsyslab/Totem): TOTEM's binary format; the configurations are bench_gpu's labels (cpu,
  gpu, mapped, STRATEGY SHARE), mapped to TOTEM's platform, partitioning, CPU edge percentage
  (alpha) and GPU memory flags; BFS is its direction-optimising "stepwise" BFS, PageRank its 5
  rounds. Times: `total` of each of its `-r` runs, with its compute and communication times.
- hytgraph (iDC-NEU/HyTGraph): the edge list its market_big reader takes (`src dst weight`; for
  all but SSSP HyTGraph's own src % 64, which they do not read); our pagerank_delta is its
  PageRank (residuals pushed to a tolerance); it keeps no edges on the GPU. Each run is a process
  of its own that loads the graph again; times: its "Total time" and the rounds each transfer
  engine served.
- sepgraph (SEP-Graph/sep-graph, PPoPP'19): Galois' binary .gr, held on the GPU as CSR and CSC;
  SEP-Graph picks each round's path itself (PageRank: each of sync-pull-td, async-push-td and
  async-push-dd once, then the one of least predicted time; BFS, SSSP, BC: async-push-dd or
  async-pull-dd by its -alpha and -beta), except on graphs of average degree below 5, which its
  paper treats as high-diameter: there, as in its artifact's runs, `-sparse` (traversals: one
  fused async-push-dd kernel). Its other flags are its artifact's too, with a round cap out of
  reach. Our pagerank_delta is its PageRank: a vertex is active while its residual exceeds its
  `-error` (default 0.01, ranks summing to n), as under our default --tolerance 0.01 (ranks
  summing to 1, residuals above 0.01 / n); its artifact tuned -error, -alpha and -beta per data
  set (kron21: -error 0.12 -alpha 8 -beta 5), which --extra passes. BC is from one source,
  halved as for an undirected graph. Each run is a process of its own; times: its "Total time"
  (BC: "Time total", both stages), its kernel time and rounds, and with `--extra -trace` (a copy
  back per round: not for timing) each round's path, e.g. `sync-pull-td x3 async-push-dd x20`.
- gap (sbeamer/gapbs): its serialized graph (`.sg`, `.wsg` with weights), our edges as they
  are; PageRank runs exactly --iterations rounds (`-t 0`); threads through OMP_NUM_THREADS.
  Times: each of its `-n` trials' "Trial Time".

Prints the median time per cell and writes the JSON (`times_ms`: algorithm -> {configuration:
ms}, read by bench_gpu's --totem; `runs`: every run's fields and command).

`--ours` times our engine beside the system, CPU only (one CPU partition, `--threads`, the same
source and PageRank rounds; `python -m totem_py.run` on the graph as a .tcsr file, in a process
of its own), alternating with the system's process `--rounds` times (each time --repeat trials
of either), so that both see the same load; each cell then gives both medians over every
round's trials and ours / theirs (`ours_ms`, `ratio`):

    python -m experiments.baselines gap --bin BUILD --graph rmat:24 --threads 16 --ours \
        --rounds 3 --repeat 3 --json gap_vs_ours.json
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

# The baselines run with the caller's environment, while this process's own threads (Numba's
# OpenMP pool, which generated the graph) sleep beside them: with OMP_WAIT_POLICY=active, which
# totem_py picks on an idle machine of 16 cores or more, they would spin on the cores the baseline
# computes on (TOTEM's CPU-only BFS on rmat:24, an H100 host's 16 cores: 272 ms so, 85 ms with
# them asleep).
BASELINE_ENV = dict(os.environ)
os.environ["OMP_WAIT_POLICY"] = "passive"

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import totem_py  # noqa: E402
from experiments.harness import Table, start  # noqa: E402
from totem_py import store  # noqa: E402
from totem_py.algorithms import ALGORITHMS  # noqa: E402
from totem_py.algorithms.common import source_vertex  # noqa: E402

# ---------------------------------------------------------------- graph files

TOTEM_MAGIC = 0x10102048

def write_totem(graph, path):
    """`graph` in TOTEM's binary format (EID=64): magic, id sizes, vertex and edge counts, the
    valued, weighted and directed flags, the row offsets (64-bit), the column ids (32-bit) and
    the weights (32-bit integers) if any."""
    if graph.n_vertices >= 2**32 - 1:
        raise ValueError("TOTEM's vertex ids are 32-bit")
    weights = integer_weights(graph, "TOTEM")
    with open(path, "wb") as f:
        np.array([TOTEM_MAGIC, 4, 8, graph.n_vertices], np.uint32).tofile(f)
        np.array([graph.n_edges], np.uint64).tofile(f)
        np.array([0, weights is not None, graph.directed], np.uint8).tofile(f)
        graph.indptr.astype(np.uint64).tofile(f)
        graph.indices.astype(np.uint32).tofile(f)
        if weights is not None:
            weights.astype(np.uint32).tofile(f)


def integer_weights(graph, system):
    if graph.weights is not None and not np.array_equal(graph.weights, np.round(graph.weights)):
        raise ValueError(f"{system}'s weights are integers")
    return None if graph.weights is None else graph.weights.astype(np.int64)


@njit(cache=False)
def _digits(x):
    n = 1
    while x >= 10:
        x //= 10
        n += 1
    return n


@njit(cache=False)
def _edge_list(indptr, indices, weights):
    """The edge list's text as bytes: `u<TAB>v<LF>` per edge (u, v), or `u<TAB>v<TAB>w<LF>`
    where `weights` is not empty."""
    n = indptr.size - 1
    fields = 3 if weights.size else 2
    size = 0
    for u in range(n):
        du = _digits(u)
        for e in range(indptr[u], indptr[u + 1]):
            size += du + _digits(indices[e]) + fields
            if fields == 3:
                size += _digits(weights[e])
    out = np.empty(size, np.uint8)
    pos = 0
    row = np.empty(3, np.int64)
    for u in range(n):
        for e in range(indptr[u], indptr[u + 1]):
            row[0], row[1] = u, indices[e]
            if fields == 3:
                row[2] = weights[e]
            for f in range(fields):
                x = row[f]
                k = _digits(x)
                for i in range(k):
                    out[pos + k - 1 - i] = 48 + x % 10
                    x //= 10
                out[pos + k] = 10 if f == fields - 1 else 9     # TAB between fields, LF last
                pos += k + 1
    return out


def write_edge_list(graph, path, weights=None):
    """`graph` as a text edge list: `src dst` lines, or `src dst weight` with `weights`."""
    w = np.empty(0, np.int64) if weights is None else weights
    _edge_list(graph.indptr, graph.indices.astype(np.int64), w).tofile(path)


def write_hytgraph(graph, path):
    """HyTGraph's market_big edge list: weights (integers), or src % 64 where there are none."""
    weights = integer_weights(graph, "HyTGraph")
    if weights is None:
        weights = np.repeat(np.arange(graph.n_vertices, dtype=np.int64) % 64,
                            np.diff(graph.indptr))
    write_edge_list(graph, path, weights)


def write_sepgraph(graph, path):
    """Galois' binary .gr (version 1), which SEP-Graph reads with `-format gr`: four 64-bit words
    (1, the bytes of an edge's weight: 4 or 0, the vertex and edge counts), the rows' ends
    (64-bit), the column ids (32-bit) and, where there are weights, 4 bytes of padding if the
    edge count is odd and the weights (32-bit integers)."""
    if graph.n_edges >= 2**32:
        raise ValueError("SEP-Graph's edge ids are 32-bit")
    weights = integer_weights(graph, "SEP-Graph")
    with open(path, "wb") as f:
        np.array([1, 0 if weights is None else 4, graph.n_vertices, graph.n_edges],
                 np.uint64).tofile(f)
        graph.indptr[1:].astype(np.uint64).tofile(f)
        graph.indices.astype(np.uint32).tofile(f)
        if weights is not None:
            f.write(bytes(4 * (graph.n_edges % 2)))
            weights.astype(np.uint32).tofile(f)


def write_gap(graph, path):
    """GAP's serialized graph (`.sg`, `.wsg` with 32-bit weights), which it reads at disk speed
    where its text reader takes minutes on a large graph: a byte (directed), the edge and vertex
    counts (64-bit), the rows' ends (64-bit) and the column ids (32-bit), each paired with its
    weight in `.wsg`; a directed graph then gives its reverse the same way. The edges are ours
    as they are (GAP's own builder would also drop self loops and repeated edges)."""
    views = [graph] + ([graph.reverse()] if graph.directed else [])
    with open(path, "wb") as f:
        f.write(bytes([graph.directed]))
        np.array([graph.n_edges, graph.n_vertices], np.int64).tofile(f)
        for view in views:
            view.indptr.astype(np.int64).tofile(f)
            ids = view.indices.astype(np.int32)
            weights = integer_weights(view, "GAP")
            if weights is not None:
                pair = np.empty((view.n_edges, 2), np.int32)
                pair[:, 0], pair[:, 1] = ids, weights
                ids = pair
            ids.tofile(f)


# ---------------------------------------------------------------- flags and outputs

TOTEM_COLUMNS = ("total", "exec", "init", "comp", "comm", "finalize", "cpu_comp", "gpu_comp",
                 "gpu_total_comp", "scatter", "gather", "aggr", "trv_edges", "exec_rate")


def totem_flags(args, alg, config, source, graph_file=None):
    """TOTEM's benchmark flags for one of bench_gpu's configuration labels."""
    flags = {"bfs": "-b6", "pagerank": "-b1", "sssp": "-b2", "cc": "-b8"}[alg]
    platform = {"cpu": ["-p0"], "gpu": ["-p1"], "mapped": ["-p1", "-m1"]}.get(config)
    if platform is None:
        strategy, share = config.split()
        platform = ["-p2", f"-i{('RAND', 'HIGH', 'LOW').index(strategy)}",
                    f"-a{round(float(share) * 100)}"]
    return [flags, f"-t{args.threads}", f"-r{args.repeat}", *platform]


def totem_runs(output):
    """TOTEM's timing rows (after its header line `total exec ...`), `total` as time_ms."""
    rows, table = [], False
    for line in output.splitlines():
        fields = line.split("\t")
        if fields[:2] == ["total", "exec"]:
            table = True
        elif table and len(fields) == len(TOTEM_COLUMNS):
            try:
                row = dict(zip(TOTEM_COLUMNS, map(float, fields)))
            except ValueError:
                table = False
                continue
            rows.append(dict(row, time_ms=row["total"]))
    return rows


def hytgraph_flags(args, alg, config, source, graph_file=None):
    flags = ["-format", "market_big", "-weight_num", "0" if alg == "sssp" else "1"]
    return flags + (["-source_node", str(source)] if alg in ("bfs", "sssp") else [])


HYTGRAPH_FIELDS = {"time_ms": r"Total time: ([\d.]+)", "rounds": r"Total rounds: (\d+)",
                   "filter_rounds": r"filter_num: (\d+)", "zerocopy_rounds": r"zerocopy_num: (\d+)",
                   "compaction_rounds": r"compaction_num: (\d+)"}


def hytgraph_runs(output):
    """HyTGraph's one run: {time_ms, rounds, filter/zerocopy/compaction rounds}."""
    found = {k: re.search(p, output) for k, p in HYTGRAPH_FIELDS.items()}
    if found["time_ms"] is None:
        return []
    return [{k: float(m.group(1)) if k == "time_ms" else int(m.group(1))
             for k, m in found.items() if m}]


SEP_SPARSE_DEGREE = 5     # its paper's bound on a high-diameter graph's average degree


def sepgraph_flags(args, alg, config, source, graph_file=None):
    """SEP-Graph's flags: the .gr format, a round cap (its default, 200) out of reach, `-sparse`
    where the graph's average degree (from the file's header) is below 5, and as its artifact's
    runs: PageRank's worklists 0.4 of the edges, the traversals' 512-thread blocks and source."""
    flags = ["-format", "gr", "-max_iteration", "1000000"]
    n, m = np.fromfile(graph_file, np.uint64, 4)[2:]
    if m < SEP_SPARSE_DEGREE * n:
        flags.append("-sparse")
    if alg == "pagerank_delta":
        return flags + ["-wl_alloc_factor", "0.4"]
    return flags + ["-block_size", "512", "-source_node", str(source)]


def sepgraph_runs(output):
    """SEP-Graph's one run: {time_ms, kernel_ms, rounds, capped (its round cap reached), paths
    (with -trace each round's path, run-length coded; else a forced path, if any)}."""
    total = re.search(r"Time total: ([\d.]+)", output) or re.search(r"Total time: ([\d.]+)", output)
    if total is None:
        return []
    run = dict(time_ms=float(total.group(1)),
               capped=int("Max iteration reached: YES" in output))
    for key, pattern, kind in (("kernel_ms", r"Kernel time: ([\d.]+)", float),
                               ("rounds", r"Total rounds: (\d+)", int)):
        found = re.search(pattern, output)
        if found:
            run[key] = kind(found.group(1))
    name = lambda path: path.lower().replace("_", "-")     # noqa: E731 (our --path's names)
    steps = []
    for path in re.findall(r"Round: \d+ Policy to execute: (\w+)", output):
        if not steps or steps[-1][0] != path:
            steps.append([path, 0])
        steps[-1][1] += 1
    forced = re.search(r"Force variant: (\w+)", output)
    if steps:
        run["paths"] = " ".join(f"{name(path)} x{k}" for path, k in steps)
    elif forced:
        run["paths"] = name(forced.group(1))
    return [run]


def gap_flags(args, alg, config, source, graph_file=None):
    flags = ["-n", str(args.repeat)]
    if alg in ("bfs", "sssp", "bc"):
        flags += ["-r", str(source)]
    if alg == "pagerank":
        flags += ["-i", str(args.iterations), "-t", "0"]
    return flags


def gap_runs(output):
    """GAP's "Trial Time: SECONDS" lines, one a trial."""
    return [dict(time_ms=1e3 * float(t)) for t in re.findall(r"Trial Time:\s+([\d.]+)", output)]


@dataclass
class System:
    build: str              # the script that builds the binaries
    binaries: dict          # algorithm -> binary (in --bin)
    extension: Callable     # weighted -> the graph file's extension
    write: Callable         # (graph, path): the graph in the system's format
    flags: Callable         # (args, algorithm, configuration, source, graph file) -> flags
    runs: Callable          # output -> [{time_ms, ...}] of its runs
    configs: str            # the configurations run by default
    graph_flag: str = ""    # the flag before the graph file
    shown: tuple = ()       # the fields of a run printed beside its time
    repeats_inside: bool = True     # one process runs --repeat times (else one process a run)
    env: Callable = lambda args: {}     # args -> variables to set for it


SYSTEMS = {
    "totem": System("build_totem.sh", dict.fromkeys(("bfs", "pagerank", "sssp", "cc"), "benchmark"),
                    lambda weighted: "tbin", write_totem, totem_flags, totem_runs,
                    "cpu,gpu,HIGH 0.5,HIGH 0.25", shown=("comp", "comm")),
    "hytgraph": System("build_hytgraph.sh",
                       {"bfs": "hybrid_bfs", "sssp": "hybrid_sssp", "pagerank_delta": "hybrid_pr",
                        "cc": "hybrid_cc"},
                       lambda weighted: "el", write_hytgraph, hytgraph_flags, hytgraph_runs,
                       "gpu", graph_flag="-graphfile", repeats_inside=False,
                       shown=("rounds", "filter_rounds", "zerocopy_rounds", "compaction_rounds")),
    "sepgraph": System("build_sepgraph.sh",
                       {"bfs": "hybrid_bfs", "sssp": "hybrid_sssp", "pagerank_delta": "hybrid_pr",
                        "bc": "hybrid_bc"},
                       lambda weighted: "bgr", write_sepgraph, sepgraph_flags, sepgraph_runs,
                       "gpu", graph_flag="-graphfile", repeats_inside=False,
                       shown=("rounds", "kernel_ms", "capped", "paths")),
    "gap": System("build_gap.sh",
                  {"bfs": "bfs", "sssp": "sssp", "pagerank": "pr", "cc": "cc", "bc": "bc"},
                  lambda weighted: "wsg" if weighted else "sg", write_gap, gap_flags, gap_runs,
                  "cpu", graph_flag="-f",
                  env=lambda args: {"OMP_NUM_THREADS": str(args.threads)}),
}


# ---------------------------------------------------------------- runs

def written_graphs(spec, algorithms, system, folder, undirected=True, source=None, ours=False):
    """For the graph and the weighted graph the algorithms need (weights for SSSP alone): (the
    path where `spec` is written in the system's format, the algorithms to run on it, the
    traversal source: `source` checked or else the one our runs pick, found once since both
    graphs have the same edges, and with `ours` the path of the same graph as a .tcsr file,
    else None)."""
    root = None
    for weighted in sorted({a == "sssp" for a in algorithms}):
        t0 = time.perf_counter()
        graph = totem_py.generate(spec, undirected=undirected, weighted=weighted)
        if root is None:
            root = source_vertex(graph, source, 0, "bfs")
        stem = Path(folder) / f"graph{'_w' if weighted else ''}"
        path = stem.with_suffix(f".{system.extension(weighted)}")
        system.write(graph, path)
        mine = stem.with_suffix(".tcsr") if ours else None
        if mine:
            store.write(graph, mine)
        graph = None
        print(f"# {spec}{' undirected' if undirected else ''}{' weighted' if weighted else ''} "
              f"written as {path.name} in {time.perf_counter() - t0:.1f} s; source {root}",
              flush=True)
        yield path, [a for a in algorithms if (a == "sssp") == weighted], root, mine


def ours_runs(graph_file, alg, source, args):
    """Our engine's timed trials (ms) of `alg` on the .tcsr `graph_file`, CPU only, as the
    system runs it: `python -m totem_py.run` in a process of its own with the caller's
    environment (the wait policy a user gets: this process's threads sleep) and --verify."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run.json"
        cmd = [sys.executable, "-m", "totem_py.run", "--graph", str(graph_file),
               "--algorithm", alg, "--device", "cpu", "--cpu-share", "1",
               "--threads", str(args.threads), "--trials", str(args.repeat), "--verify",
               "--quiet", "--json", str(out)]
        flags = {o.flag for o in ALGORITHMS[alg].options}
        cmd += ["--source", str(source)] if "--source" in flags else []
        cmd += ["--iterations", str(args.iterations)] if "--iterations" in flags else []
        proc = subprocess.run(cmd, capture_output=True, text=True, env=BASELINE_ENV)
        if proc.returncode or not out.is_file():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"ours: exit {proc.returncode}: {tail[0]}")
        return [1e3 * t for t in json.loads(out.read_text())["trials_s"]]


def run(system, binary, graph_file, alg, config, source, args):
    """One cell's runs: (the command, [{time_ms, ...}]); RuntimeError if the binary fails."""
    cmd = [str(binary), *system.flags(args, alg, config, source, graph_file),
           *args.extra.split(),
           *([system.graph_flag] if system.graph_flag else []), str(graph_file)]
    env = dict(BASELINE_ENV, **system.env(args))
    runs = []
    for _ in range(1 if system.repeats_inside else args.repeat):
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        found = system.runs(proc.stdout + proc.stderr)
        if proc.returncode or not found:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}: {tail[0]}")
        runs += found
    return cmd, runs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("system", choices=SYSTEMS)
    ap.add_argument("--bin", required=True, help="the folder of the system's binaries")
    ap.add_argument("--graph", default="rmat:24", help="a generator spec")
    ap.add_argument("--directed", action="store_true", help="keep the generated graph directed")
    ap.add_argument("--algorithms", default=None,
                    help="default: every algorithm the system has a binary for")
    ap.add_argument("--configs", default=None,
                    help="comma-separated configurations (totem: bench_gpu's labels)")
    ap.add_argument("--source", type=int, default=None)
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--iterations", type=int, default=5, help="PageRank rounds (gap)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per cell")
    ap.add_argument("--extra", default="", help="more flags for the system, space-separated")
    ap.add_argument("--json", default=None)
    ap.add_argument("--ours", action="store_true",
                    help="time our engine too, CPU only, alternating with the system")
    ap.add_argument("--rounds", type=int, default=1,
                    help="with --ours: alternations of the system's runs and ours per cell")
    args = ap.parse_args(argv)
    system = SYSTEMS[args.system]
    algorithms = (args.algorithms or ",".join(system.binaries)).split(",")
    binaries = {a: Path(args.bin) / system.binaries[a] for a in algorithms
                if a in system.binaries}
    problems = [f"unknown algorithm {a}" for a in algorithms if a not in system.binaries]
    problems += [f"{b}: no such file" for b in set(binaries.values()) if not b.is_file()]
    if problems:
        print(f"baselines {args.system}: {'; '.join(problems)} (experiments/{system.build} "
              f"builds the binaries)", file=sys.stderr)
        return 2
    prov = start("experiments.baselines", argv, gpu=args.system != "gap")
    configs = (args.configs or system.configs).split(",")
    report = dict(prov, system=args.system, graph=args.graph, times_ms={}, runs=[])
    ours = (("ours ms", 9, ".2f"), ("ours/them", 9, ".3f")) if args.ours else ()
    table = Table(("algorithm", -15), ("config", -10), ("time ms", 9, ".2f"), ("runs", 4), *ours,
                  ("fields of its last run", -30))
    with tempfile.TemporaryDirectory() as tmp:
        for graph_file, algs, source, mine_file in written_graphs(
                args.graph, algorithms, system, tmp, not args.directed, args.source, args.ours):
            for alg in algs:
                for config in configs:
                    runs, mine = [], []
                    try:
                        for _ in range(max(1, args.rounds if args.ours else 1)):
                            cmd, found = run(system, binaries[alg], graph_file, alg, config,
                                             source, args)
                            runs += found
                            if args.ours:
                                mine += ours_runs(mine_file, alg, source, args)
                    except RuntimeError as exc:
                        print(f"{alg:15} {config:10} failed: {exc}", flush=True)
                        continue
                    ms = statistics.median(r["time_ms"] for r in runs)
                    report["times_ms"].setdefault(alg, {})[config] = ms
                    cell = dict(algorithm=alg, config=config, command=cmd, source=source,
                                runs=runs)
                    both = ()
                    if args.ours:
                        cell.update(ours_ms=statistics.median(mine), ours_runs_ms=mine,
                                    ratio=statistics.median(mine) / ms)
                        both = (cell["ours_ms"], cell["ratio"])
                    report["runs"].append(cell)
                    table.row(alg, config, ms, len(runs), *both, " ".join(
                        f"{k} {format(v, 'g' if isinstance(v, (int, float)) else '')}"
                        for k, v in runs[-1].items() if k in system.shown))
                    if args.json:
                        Path(args.json).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
