"""CPU baselines: our engine against scipy.sparse.csgraph and NetworKit, in one process.

For each R-MAT scale (symmetric by default, like GAP's Kronecker inputs) and each algorithm
(BFS, SSSP, CC, PageRank) this times, on the same graph and from the same source:

- ours, CPU only          `totem_py.run(g, alg, cpu_share=1.0, device="cpu")`
- ours, hybrid            `cpu_share=0.5, device="emulated"` (one GPU partition run by the CPU twins)
- scipy.sparse.csgraph    breadth_first_order / dijkstra / connected_components, and PageRank as
                          K rounds of r = (1-d)/n + d * A^T @ (r / outdeg) with A^T prebuilt as CSR
- NetworKit (optional)    distance.BFS / distance.Dijkstra / components.ConnectedComponents /
                          centrality.PageRank with maxIterations = K

Ours reports the harness's median of `--trials` after one untimed warm-up; scipy and NetworKit
report the median of `--trials` timed calls (perf_counter) on structures built outside the timer.
scipy's csgraph routines and sparse mat-vec are single-threaded; ours and NetworKit use `--threads`.
Every result is checked against scipy's (BFS reached-set size and NetworKit's levels, SSSP
distances, CC components and min-id labels, PageRank L1), and the hybrid result against ours-CPU.

    python -m experiments.bench_cpu --scales 20,22 --threads 2 --trials 3 --json out.json
"""

import argparse
import gc
import os
import platform
import resource
import statistics
import sys
import time

import numpy as np

from experiments.harness import Report, cells, make_graph, start

ALGORITHMS = ("bfs", "sssp", "cc", "pagerank")
# speedup of ours-CPU over scipy that we aim for (PageRank: per round)
TARGETS = {"bfs": 5.0, "sssp": 3.0, "cc": 10.0, "pagerank": 3.0}
DAMPING = 0.85
SSSP_RTOL = 1e-9
PAGERANK_L1 = 1e-4


_T0 = time.perf_counter()


def log(msg):
    print(f"[{time.perf_counter() - _T0:7.1f} s] {msg}", file=sys.stderr, flush=True)


def median_time(fn, trials):
    """(median seconds, all seconds, last return value) of `trials` timed calls of fn()."""
    times, out = [], None
    for _ in range(max(int(trials), 1)):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def pick_source(graph, seed):
    """A seeded random vertex with out-degree > 0, shared by every system."""
    candidates = np.flatnonzero(graph.out_degree > 0)
    if candidates.size == 0:
        return 0
    return int(np.random.default_rng(seed).choice(candidates))


def traversed_edges(alg, graph, values, iterations):
    """The harness's TEPS numerator: reached part for bfs/sssp, |E| for cc, |E| x rounds."""
    deg = graph.out_degree
    if alg == "bfs":
        return int(deg[values >= 0].sum())
    if alg == "sssp":
        return int(deg[np.isfinite(values)].sum())
    if alg == "pagerank":
        return graph.n_edges * iterations
    return graph.n_edges


def per_round(alg, seconds, iterations):
    return seconds / iterations if alg == "pagerank" and seconds is not None else seconds


# ---------------------------------------------------------------- ours

def run_ours(graph, args, source):
    """{algorithm: (CPU-only values, hybrid values)} and their rows, through the harness: each
    configuration's algorithms share its plan; the hybrid results are checked against the CPU's."""
    configs = [("ours_cpu", dict(cpu_share=1.0, device="cpu"))]
    configs += [] if args.no_hybrid else [("ours_hybrid", dict(cpu_share=0.5, device="emulated"))]
    rows = {a: dict(algorithm=a) for a in args.algorithms}
    values = {a: [None, None] for a in args.algorithms}
    for c in cells(graph, configs, args.algorithms, trials=args.trials, partition="HIGH",
                   gpus=1, source=source, iterations=args.iterations, threads=args.threads,
                   seed=args.seed,
                   # SciPy's and NetworKit's PageRank here walk the graph unweighted
                   options=lambda alg: {"unweighted": True} if alg == "pagerank" else {}):
        m = c.metrics
        if m is None:
            raise RuntimeError(f"{c.algorithm} {c.config}: {c.check}")
        log(f"[{graph.spec}] ours {c.algorithm} {c.config}: {m['time_s']:.4f} s ({c.check})")
        values[c.algorithm][c.config == "ours_hybrid"] = c.values
        rows[c.algorithm][c.config] = dict(
            time_s=m["time_s"], trials_s=m["trials_s"], teps=m["teps"],
            supersteps=m["supersteps"], prepare_s=m.get("prepare_s"), device=m["device"],
            cpu_share=m["cpu_share"], beta=m["beta"], beta_aggregated=m["beta_aggregated"],
            partitions=m["partitions"], source=m["source"], call_s=c.wall_s, check=c.check)
        gc.collect()
    return values, rows


# ---------------------------------------------------------------- scipy

def scipy_matrices(graph):
    """A (weights as data, ones if unweighted) and A^T with unit data for PageRank, built once."""
    import scipy.sparse as sp
    n = graph.n_vertices
    indptr = np.array(graph.indptr)              # writable copies: csgraph wants writable buffers
    indices = np.array(graph.indices)
    data = np.array(graph.weights) if graph.weights is not None else np.ones(indices.size)
    a = sp.csr_matrix((data, indices, indptr), shape=(n, n))
    del data
    at = sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n)).T.tocsr()
    deg = np.diff(graph.indptr)
    inv_deg = np.zeros(n)
    np.divide(1.0, deg, out=inv_deg, where=deg > 0)
    return a, at, inv_deg


def scipy_pagerank(at, inv_deg, iterations):
    n = inv_deg.size
    r = np.full(n, 1.0 / n)
    for _ in range(iterations):
        r = (1.0 - DAMPING) / n + DAMPING * (at @ (r * inv_deg))
    return r


def run_scipy(alg, a, at, inv_deg, source, args):
    from scipy.sparse import csgraph
    if alg == "bfs":
        fn = lambda: csgraph.breadth_first_order(a, source, directed=True, return_predecessors=False)  # noqa: E731
    elif alg == "sssp":
        fn = lambda: csgraph.dijkstra(a, directed=True, indices=source)  # noqa: E731
    elif alg == "cc":
        fn = lambda: csgraph.connected_components(a, directed=True, connection="weak")  # noqa: E731
    else:
        fn = lambda: scipy_pagerank(at, inv_deg, args.iterations)  # noqa: E731
    return median_time(fn, args.trials)


# ---------------------------------------------------------------- NetworKit

def networkit_graph(nk, graph, weighted):
    """The same edges as a NetworKit graph: undirected inputs once per pair (u < v)."""
    src = np.repeat(np.arange(graph.n_vertices, dtype=np.int64), graph.out_degree)
    dst = np.asarray(graph.indices)
    w = graph.weights
    if not graph.directed:
        keep = src < dst
        src, dst = src[keep], dst[keep]
        w = w[keep] if (weighted and w is not None) else None
    src = src.astype(np.uint64)
    dst = dst.astype(np.uint64)
    if weighted:
        data = (np.asarray(w, dtype=np.float64) if w is not None else np.ones(src.size))
        coo = (data, (src, dst))
    else:
        coo = (src, dst)
    g = nk.GraphFromCoo(coo, n=graph.n_vertices, weighted=weighted, directed=graph.directed)
    return g


def nk_distances(algo):
    d = np.asarray(algo.getDistances(), dtype=np.float64)
    d[d >= np.finfo(np.float64).max / 2] = np.inf        # NetworKit marks unreached with max double
    return d


def run_networkit(nk, g_nk, alg, source, directed, args):
    """(median s, trials s, result, note) for one algorithm on a prebuilt NetworKit graph."""
    note = ""
    if alg == "bfs":
        def fn():
            b = nk.distance.BFS(g_nk, source, storePaths=False)
            b.run()
            return b
    elif alg == "sssp":
        def fn():
            d = nk.distance.Dijkstra(g_nk, source, storePaths=False)
            d.run()
            return d
    elif alg == "cc":
        cls = nk.components.WeaklyConnectedComponents if directed else nk.components.ConnectedComponents

        def fn():
            c = cls(g_nk)
            c.run()
            return c
    else:
        def fn():
            p = nk.centrality.PageRank(g_nk, damp=DAMPING, tol=1e-300)
            p.maxIterations = args.iterations
            p.run()
            return p
    # the constructor is inside the timer, as the run() call would be in user code; it is O(1) here
    med, times, out = median_time(fn, args.trials)
    if alg == "pagerank":
        done = out.numberOfIterations()
        if done != args.iterations:
            note = f"networkit ran {done} PageRank rounds, not {args.iterations}"
    return med, times, out, note


# ---------------------------------------------------------------- checks

def check_bfs(ours, scipy_order, nk_dist):
    problems = []
    reached = int((ours >= 0).sum())
    if reached != scipy_order.size:
        problems.append(f"reached {reached} != scipy {scipy_order.size}")
    if nk_dist is not None:
        lev = np.where(ours >= 0, ours.astype(np.float64), np.inf)
        if not np.array_equal(lev, nk_dist):
            problems.append(f"levels differ from networkit at {int((lev != nk_dist).sum())} vertices")
    return problems, dict(reached=reached, scipy_reached=int(scipy_order.size))


def _dist_mismatch(a, b):
    same_inf = np.array_equal(np.isinf(a), np.isinf(b))
    fin = np.isfinite(a) & np.isfinite(b)
    close = np.allclose(a[fin], b[fin], rtol=SSSP_RTOL, atol=0.0)
    if same_inf and close:
        return None
    return int((np.isinf(a) != np.isinf(b)).sum() + (~np.isclose(a[fin], b[fin], rtol=SSSP_RTOL, atol=0)).sum())


def check_sssp(ours, scipy_dist, nk_dist):
    problems = []
    bad = _dist_mismatch(ours, scipy_dist)
    if bad is not None:
        problems.append(f"distances differ from scipy at {bad} vertices")
    if nk_dist is not None and (bad := _dist_mismatch(ours, nk_dist)) is not None:
        problems.append(f"distances differ from networkit at {bad} vertices")
    return problems, dict(reached=int(np.isfinite(ours).sum()),
                          scipy_reached=int(np.isfinite(scipy_dist).sum()))


def check_cc(ours, scipy_cc, nk_count):
    problems = []
    ncomp, labels = scipy_cc
    ours_count = int(np.unique(ours).size)
    if ours_count != ncomp:
        problems.append(f"{ours_count} components != scipy {ncomp}")
    # DESIGN.md: label = smallest vertex id in the component
    _, first = np.unique(labels, return_index=True)
    expected = first[labels]
    if not np.array_equal(ours, expected):
        problems.append(f"min-id labels differ at {int((ours != expected).sum())} vertices")
    if nk_count is not None and nk_count != ncomp:
        problems.append(f"networkit {nk_count} components != scipy {ncomp}")
    return problems, dict(components=ours_count, scipy_components=int(ncomp), networkit_components=nk_count)


def check_pagerank(ours, hybrid, scipy_rank, nk_rank):
    problems = []
    l1 = float(np.abs(ours - scipy_rank).sum())
    if not l1 < PAGERANK_L1:
        problems.append(f"L1 vs scipy {l1:.2e}")
    l1_h = float(np.abs(ours - hybrid).sum()) if hybrid is not None else None
    l1_nk = float(np.abs(ours - nk_rank).sum()) if nk_rank is not None else None
    if l1_nk is not None and not l1_nk < PAGERANK_L1:
        problems.append(f"L1 vs networkit {l1_nk:.2e}")
    return problems, dict(l1_scipy=l1, l1_hybrid=l1_h, l1_networkit=l1_nk)


# ---------------------------------------------------------------- one scale

def bench_scale(nk, scale, args):
    spec = f"rmat:{scale}"
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    g_w = make_graph(spec, undirected=args.undirected, weighted=True, seed=args.seed)
    gen_s = time.perf_counter() - t0
    source = pick_source(g_w, args.seed)
    log(f"[{spec}] source {source}")
    values, rows = run_ours(g_w, args, source)     # weights are ignored but by sssp: one plan

    log(f"[{spec}] building scipy matrices")
    t0 = time.perf_counter()
    a, at, inv_deg = scipy_matrices(g_w)
    build_scipy_s = time.perf_counter() - t0
    scipy_out = {}
    for alg in args.algorithms:
        log(f"[{spec}] scipy {alg}")
        med, times, out = run_scipy(alg, a, at, inv_deg, source, args)
        rows[alg]["scipy"] = dict(time_s=med, trials_s=times,
                                  teps=traversed_edges(alg, g_w, values[alg][0], args.iterations) / med
                                  if med > 0 else 0.0, threads=1)
        scipy_out[alg] = out
    del a, at, inv_deg
    gc.collect()

    nk_out, build_nk_s = {}, {}
    if nk is not None:
        # unweighted for bfs/cc/pagerank (NetworKit's PageRank follows edge weights), weighted for sssp
        for weighted, algs in ((False, ("bfs", "cc", "pagerank")), (True, ("sssp",))):
            algs = [x for x in algs if x in args.algorithms]
            if not algs:
                continue
            log(f"[{spec}] building networkit graph (weighted={weighted})")
            t0 = time.perf_counter()
            g_nk = networkit_graph(nk, g_w, weighted)
            build_nk_s["weighted" if weighted else "unweighted"] = time.perf_counter() - t0
            for alg in algs:
                log(f"[{spec}] networkit {alg}")
                med, times, out, note = run_networkit(nk, g_nk, alg, source, g_w.directed, args)
                if alg in ("bfs", "sssp"):
                    res = nk_distances(out)
                elif alg == "cc":
                    res = int(out.numberOfComponents())
                else:
                    res = np.asarray(out.scores(), dtype=np.float64)
                del out
                rows[alg]["networkit"] = dict(
                    time_s=med, trials_s=times, threads=args.threads, note=note,
                    teps=traversed_edges(alg, g_w, values[alg][0], args.iterations) / med if med > 0 else 0.0)
                nk_out[alg] = res
            del g_nk
            gc.collect()

    for alg in args.algorithms:
        v_cpu, v_hyb = values[alg]
        checker = {"bfs": check_bfs, "sssp": check_sssp, "cc": check_cc, "pagerank": check_pagerank}[alg]
        extra = (v_hyb,) if alg == "pagerank" else ()
        problems, detail = checker(v_cpu, *extra, scipy_out[alg], nk_out.get(alg))
        row = rows[alg]
        if row.get("ours_hybrid", {}).get("check") == "DIFFERS":
            problems.append("hybrid differs")
        row["check"] = "ok" if not problems else "MISMATCH: " + "; ".join(problems)
        row["check_detail"] = detail
        row["speedup_vs_scipy"] = row["scipy"]["time_s"] / row["ours_cpu"]["time_s"]
        if "networkit" in row:
            row["speedup_vs_networkit"] = row["networkit"]["time_s"] / row["ours_cpu"]["time_s"]
        row["target"] = TARGETS[alg]
        row["met"] = row["speedup_vs_scipy"] >= TARGETS[alg]
        if alg == "pagerank":
            for k in ("ours_cpu", "ours_hybrid", "scipy", "networkit"):
                if k in row:
                    row[k]["per_round_s"] = row[k]["time_s"] / args.iterations
    out = dict(spec=spec, undirected=args.undirected, vertices=g_w.n_vertices, edges=g_w.n_edges,
               generation_s=gen_s, source=source, scipy_build_s=build_scipy_s,
               networkit_build_s=build_nk_s,
               loadavg_before=load_before, loadavg_after=os.getloadavg(),
               peak_rss_gib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
               rows=[rows[a] for a in args.algorithms])
    del g_w, values, scipy_out, nk_out
    gc.collect()
    return out


# ---------------------------------------------------------------- output

def _fmt_s(x):
    if x is None:
        return "-"
    return f"{x:.4f}" if x < 10 else f"{x:.2f}"


def print_tables(res, args):
    print()
    print(f"== {res['spec']} ({'undirected' if res['undirected'] else 'directed'}): "
          f"{res['vertices']:,} vertices, {res['edges']:,} edges; generated in {res['generation_s']:.1f} s; "
          f"source {res['source']}; threads {args.threads}, trials {args.trials}; "
          f"load average {res['loadavg_before'][0]:.1f} -> {res['loadavg_after'][0]:.1f}")
    head = ["algorithm", "ours CPU s", "ours hybrid(emu 0.5) s", "scipy s", "networkit s",
            "ours-CPU vs scipy", "target", "met?", "ours-CPU vs nk", "check"]
    lines = [head]
    for row in res["rows"]:
        alg = row["algorithm"]
        t = lambda k: per_round(alg, row[k]["time_s"], args.iterations) if k in row else None  # noqa: E731
        lines.append([alg + (" /round" if alg == "pagerank" else ""),
                      _fmt_s(t("ours_cpu")), _fmt_s(t("ours_hybrid")), _fmt_s(t("scipy")),
                      _fmt_s(t("networkit")),
                      f"{row['speedup_vs_scipy']:.2f}x", f">= {row['target']:g}x",
                      "yes" if row["met"] else "NO",
                      f"{row['speedup_vs_networkit']:.2f}x" if "speedup_vs_networkit" in row else "-",
                      row["check"]])
    _print_grid(lines)
    print()
    lines = [["algorithm", "ours CPU MTEPS", "ours hybrid MTEPS", "scipy MTEPS", "networkit MTEPS",
              "ours supersteps", "ours CPU call s", "ours hybrid call s"]]
    for row in res["rows"]:
        m = lambda k: f"{row[k]['teps'] / 1e6:.1f}" if k in row else "-"  # noqa: E731
        lines.append([row["algorithm"], m("ours_cpu"), m("ours_hybrid"), m("scipy"), m("networkit"),
                      str(row["ours_cpu"]["supersteps"]), f"{row['ours_cpu']['call_s']:.1f}",
                      f"{row['ours_hybrid']['call_s']:.1f}" if "ours_hybrid" in row else "-"])
    _print_grid(lines)
    print("(call s = wall time of one totem_py.run call: partitioning, prepare, warm-up and trials)")
    notes = [row["networkit"]["note"] for row in res["rows"] if row.get("networkit", {}).get("note")]
    for n in notes:
        print("note:", n)
    sys.stdout.flush()


def _print_grid(lines):
    widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]))]
    for k, r in enumerate(lines):
        print(" | ".join(c.ljust(w) if i == 0 or i == len(r) - 1 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(r, widths))).rstrip())
        if k == 0:
            print("-+-".join("-" * w for w in widths))


def machine_info(args, numba, nk):
    import scipy
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    mem = None
    try:
        mem = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30
    except (ValueError, OSError, AttributeError):
        pass
    return dict(nproc=os.cpu_count(), affinity=len(os.sched_getaffinity(0)), cpu=cpu, memory_gib=mem,
                python=platform.python_version(), numpy=np.__version__, numba=numba.__version__,
                numba_threads=numba.get_num_threads(), scipy=scipy.__version__,
                networkit=getattr(nk, "__version__", None) if nk is not None else None,
                platform=platform.platform())


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m experiments.bench_cpu",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", default="20,22", help="comma-separated R-MAT scales (default 20,22)")
    p.add_argument("--algorithms", default=",".join(ALGORITHMS),
                   help=f"comma-separated subset of {','.join(ALGORITHMS)}")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--iterations", type=int, default=5, help="PageRank rounds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--undirected", action=argparse.BooleanOptionalAction, default=True,
                   help="symmetrise the generated graphs (default on, as GAP's Kronecker graphs)")
    p.add_argument("--no-networkit", action="store_true", help="skip NetworKit even if importable")
    p.add_argument("--no-hybrid", action="store_true", help="skip the emulated hybrid rows")
    p.add_argument("--json", help="write all measurements here")
    args = p.parse_args(argv)
    try:
        args.scales = [int(s) for s in args.scales.split(",") if s.strip()]
    except ValueError:
        p.error(f"--scales must be comma-separated integers, got {args.scales!r}")
    args.algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    bad = [a for a in args.algorithms if a not in ALGORITHMS]
    if bad:
        p.error(f"--algorithms: unknown {', '.join(bad)} (choose from {', '.join(ALGORITHMS)})")
    if args.threads < 1 or args.trials < 1 or args.iterations < 1:
        p.error("--threads, --trials and --iterations must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    prov = start("experiments.bench_cpu", argv)
    # let numba start as many threads as asked for, even beyond the core count
    os.environ.setdefault("NUMBA_NUM_THREADS", str(max(args.threads, os.cpu_count() or 1)))
    import numba
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    nk = None
    if not args.no_networkit:
        try:
            import networkit as nk
            nk.engineering.setNumberOfThreads(args.threads)
        except ImportError:
            log("networkit is not importable: skipping it")
            nk = None
    report = Report(args.json, prov, key="scales", machine=machine_info(args, numba, nk),
                    args=dict(scales=args.scales, algorithms=args.algorithms,
                              threads=args.threads, trials=args.trials,
                              iterations=args.iterations, seed=args.seed,
                              undirected=args.undirected, networkit=nk is not None,
                              hybrid=not args.no_hybrid),
                    targets=TARGETS)
    if nk is not None:
        report.data["machine"]["networkit_threads"] = nk.getMaxNumberOfThreads()
    t_all = time.perf_counter()
    for scale in args.scales:
        t0 = time.perf_counter()
        res = bench_scale(nk, scale, args)
        res["wall_s"] = time.perf_counter() - t0
        report.add(res)                 # after every scale, so a long run leaves data
        print_tables(res, args)
        print(f"(rmat:{scale} took {res['wall_s']:.0f} s wall, peak RSS so far {res['peak_rss_gib']:.1f} GiB)")
    report.data["wall_s"] = time.perf_counter() - t_all
    report.save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
