"""`python -m totem_py.run` under `mpirun -n R` / `mpiexec -n R`: the same run across R processes.

No rank holds the whole graph. Every rank reads its block of rows of a .tcsr file (by byte range)
or generates its range of a generator's edges, and the ranks partition the graph together
(partitioners/distributed.py): vertices dealt to ranks by degree, then each rank's share split between its
CPU and GPU partitions with HIGH/LOW/RAND at --cpu-share, exactly as `partition(..., ranks=R)`
would in one process; each rank builds its own partitions and exchange plan. Other graph files
are refused with the command that converts them (convert once, run many). Every rank checks its
own memory before reading. `--cpu-share auto` lets each rank pick the share its GPUs fit, and
takes the largest.

Results: gathered to rank 0, which verifies (--verify reads the whole graph on rank 0), writes
--output and --json and is the only rank that prints; or, when --output holds `{rank}`, every
rank writes its own vertices' results there (a .npy of records (vertex, value), by vertex id),
and nothing is gathered. Each rank's GPU partitions take the devices by the rank's place on its
node (local rank k, GPU partitions per rank g: devices k*g, k*g+1, ... modulo the device count).
With no --threads, each rank uses its share of the node's cores (all the cores it may run on when
the launcher bound it to fewer). The --json record has each rank's peak resident memory.

Failures: the ranks first compare their arguments (a launch whose ranks got different ones is
exit 2, one line). An error that every rank can know about - bad options, bad input found by any
rank, too little memory on any rank, a GPU budget exceeded on any rank, a failed verification - is
agreed on collectively: rank 0 prints it once and every rank exits with the usual code (2, 3 or
1). Anything else (out of memory in a superstep, a bug) is printed once by the rank it happened
on, prefixed with its rank, and `MPI_Abort` stops every rank at once; `--mpi-timeout S` bounds
every wait on another rank, from the first collective to the last (bsp.mpi.Waiter).

Imported only when the launcher's environment says there are several ranks; it imports mpi4py.
"""

import contextlib
import io
import json
import os
import socket
import statistics
import sys
import time
import traceback
from types import SimpleNamespace

import numpy as np

from .errors import InputError, VerificationError
from .harness import MOVED, transfer_ratios


class Agreed(Exception):
    """An error every rank knows about: rank 0 prints `line`, every rank exits with `code`."""

    def __init__(self, code, line):
        super().__init__(line)
        self.code, self.line = code, line


def describe(exc):
    """(exit code, one line) as the one-process command reports `exc`."""
    if isinstance(exc, InputError):
        return 2, f"error: {exc}"
    if isinstance(exc, VerificationError):
        return 3, f"verification failed: {exc}"
    return 1, f"error: {type(exc).__name__}: {exc}"


def collective(comm, fn, root_only=False):
    """Run `fn` on every rank (or on rank 0 only); if it raised anywhere, raise the same Agreed
    error on every rank (naming the rank when it was not rank 0). Returns fn's result (None on
    the ranks that did not run it)."""
    result, failed = None, None
    if not root_only or comm.rank == 0:
        try:
            result = fn()
        except Exception as exc:
            if os.environ.get("TOTEM_DEBUG"):
                traceback.print_exc()
            code, line = describe(exc)
            if comm.rank:
                line = line.replace("error: ", f"error: rank {comm.rank}: ", 1)
            failed = (code, line)
    errors = [comm.bcast(failed)] if root_only else comm.allgather(failed)
    for e in errors:
        if e is not None:
            raise Agreed(*e)
    return result


def default_threads(node_size):
    """This rank's share of the node's cores, or every core it may use when already bound."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    if usable >= (os.cpu_count() or usable):
        return max(1, usable // max(node_size, 1))
    return usable


def parse_on_every_rank(argv, root):
    """(args, the exception parsing raised or None): only rank 0 shows --help or a usage error,
    and none stops before the ranks have compared their arguments."""
    from .run import build_parser
    try:
        if root:
            return build_parser().parse_args(argv), None
        with contextlib.redirect_stdout(io.StringIO()):
            return build_parser().parse_args(argv), None
    except (InputError, SystemExit) as exc:
        return None, exc


def compare_arguments(comm, argv):
    """An Agreed exit 2 when the ranks were started with different arguments."""
    everyone = comm.allgather(list(sys.argv[1:] if argv is None else argv))
    for r, other in enumerate(everyone):
        if other != everyone[0]:
            raise Agreed(2, f"error: the ranks were started with different arguments: rank 0 "
                            f"got {' '.join(everyone[0])!r}, rank {r} got {' '.join(other)!r}")


def default_source(engine, summary, bounds, seed=0):
    """harness.default_source on the ranks: a seeded random vertex with out-degree > 0 in the
    largest weakly connected component, found by running the registered algorithm that labels
    the weak components on `engine` (whose plan has the "both" view) and counting at the homes
    (`bounds`, partitioners.distributed.giant_source). Collective."""
    from partitioners.distributed import giant_source

    from .algorithms import ALGORITHMS
    components = next(cls for cls in ALGORITHMS.values() if cls.weak_components)
    gather, engine.gather = engine.gather, False
    engine.run(components.from_options(summary, seed=seed))
    engine.gather = gather
    labels = engine.values
    engine.release()
    plan = engine.plan
    degree = np.concatenate([plan.out_degree(p) for p in plan.local_pids])
    return giant_source(engine.comm, bounds, engine.local_gvids, labels, degree > 0, seed)


def run_ranks(argv, comm):
    """The command on every rank; returns the exit code."""
    import numba

    from bsp import EdgeOptions
    from bsp.mpi import MpiEngine, fault_point, guarded, node_place
    from partitioners.distributed import (agreed, generate_share, malloc_returns_memory,
                                          plan_ranks, read_share, weigh)
    from partitioners import check_gpus

    from .algorithms import ALGORITHMS
    from .backend import resolve_device
    from .generators import Generator, is_generator
    from .harness import (check_result, choose_share, gpu_budget, make_algorithm,
                          placed_bytes, transfer_counts)
    from .outputs import Outputs
    from .progress import Progress
    from .run import algorithm_values, check_options, peak_rss, print_report, save_values
    from .store import EXTENSION, Store, is_store

    root = comm.rank == 0
    ranks = comm.size
    malloc_returns_memory()
    args, parse_error = parse_on_every_rank(argv, root)
    timeout = getattr(args, "mpi_timeout", None)
    comm = guarded(comm, timeout if timeout and timeout > 0 else None)
    compare_arguments(comm, argv)
    if parse_error is not None:     # the same on every rank
        raise parse_error

    device = comm.bcast(collective(comm, lambda: resolve_device(args.device), root_only=True))

    def options():
        resolve_device(device)            # a rank without a GPU cannot run --device gpu
        share, budget, chunk, cache = check_options(args, device)
        if share == "model":
            raise InputError("--cpu-share model is not available under mpirun (it calibrates "
                             "on the whole graph); give a share or auto")
        if not is_generator(args.graph) and not os.path.exists(args.graph):
            raise InputError("no such file", args.graph)
        if not is_generator(args.graph) and not is_store(args.graph):
            raise InputError(f"under mpirun every rank reads its share of a {EXTENSION} file; "
                             f"convert this one once with: python -m totem_py.convert "
                             f"{args.graph} GRAPH{EXTENSION}", args.graph)
        return share, budget, chunk, cache
    share, budget, chunk, cache = collective(comm, options)
    node_size = node_place(comm)[1]
    threads = args.threads or default_threads(node_size)
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
    progress = Progress(enabled=False if (args.quiet or not root) else None)
    if not root or args.quiet:      # a missing transfer profile is said once, by rank 0
        from bsp.transfer_model import without_warning
        without_warning()
    strategy = args.partition.upper()

    # ranks sharing a device share its memory
    per_gpu = comm.bcast(collective(comm, lambda: gpu_budget(device, budget), root_only=True))
    if per_gpu is not None and device == "gpu":
        from bsp.gpu import device_count
        per_gpu //= max(1, -(-node_size * max(args.gpus, 1) // device_count()))

    per_rank_output = bool(args.output) and "{rank}" in args.output
    my_output = args.output.replace("{rank}", str(comm.rank)) if per_rank_output else None

    def output_files():     # checked before loading (totem_py/outputs.py): each rank its own
        named = []
        if per_rank_output:
            named.append(("--output", my_output))
        elif root:
            named.append(("--output", args.output))
        if root:
            named.append(("--json", args.json))
        return Outputs(named, inputs=[args.graph])
    outputs = collective(comm, output_files)
    cls = ALGORITHMS[args.algorithm]
    weighted = cls.needs_weights
    options = collective(comm, lambda: algorithm_values(args))
    # the default source needs the weak components (harness.default_source): CC runs first,
    # on the plan's "both" view; until then the algorithm stands with vertex 0 as its source
    find_source = options.get("source", 0) is None and options.get("sources") is None
    in_view = bool({m.view for m in cls.modes} & {"in", "both"}) or find_source
    comm.phase = "loading the graph"
    t_load = time.perf_counter()
    progress.phase(f"loading {args.graph}: each of {ranks} ranks its share")
    fault_point(comm.rank, "load")
    if is_generator(args.graph):
        part = collective(comm, lambda: generate_share(
            comm, Generator(args.graph, args.seed), args.undirected, weighted,
            in_view and not args.undirected))
    else:
        part = collective(comm, lambda: read_share(comm, agreed(comm, Store, args.graph),
                                                   args.undirected, weighted, in_view))
    summary = part.summary(comm)
    progress.phase(f"loaded {summary.n_vertices} vertices, {summary.n_edges} edges")

    find_source = find_source and summary.n_vertices > 0

    def algorithm():
        alg, source = make_algorithm(args.algorithm, summary, seed=args.seed,
                                     **dict(options, source=0) if find_source else options)
        check_gpus(args.gpus, summary.n_vertices)
        weigh(comm, part, alg, None if is_generator(args.graph) else args.graph)
        return alg, source
    alg, source = collective(comm, algorithm)

    def cpu_share_of(graph):        # --cpu-share auto: the share this rank's GPUs fit
        return choose_share(graph, alg, strategy, args.gpus, device, per_gpu, args.transfer,
                            args.seed)
    load_s = time.perf_counter() - t_load
    comm.phase = "partitioning"
    t_plan = time.perf_counter()
    progress.phase(f"partitioning over {ranks} ranks: {strategy} cpu-share {share} over "
                   f"{args.gpus} GPU(s) per rank, hub sort {args.hub_sort}")
    fault_point(comm.rank, "partition")
    plan = collective(comm, lambda: plan_ranks(
        comm, part, strategy, cpu_share_of if share == "auto" else share, args.gpus, args.seed,
        args.hub_sort, alg.views() + (["both"] if find_source else [])))
    bounds = part.bounds
    del part
    partition_s = time.perf_counter() - t_plan
    cpu_share = plan.cpu_share

    # auto, filter and compaction stream what exceeds the budget (as harness.run does)
    in_place = args.transfer in ("resident", "zerocopy")
    edges = EdgeOptions(args.transfer if device != "cpu" else "resident",
                        budget if in_place else per_gpu, chunk, cache=cache)
    comm.phase = "placing the partitions"
    engine = MpiEngine(plan, comm, device, progress if root else None, edges,
                       gather=bool(args.output and not per_rank_output) or args.verify)
    if find_source:
        progress.phase("the default source: in the largest weakly connected component")
        alg, source = make_algorithm(args.algorithm, summary, seed=args.seed, **dict(
            options, source=default_source(engine, summary, bounds, args.seed)))
    t0 = time.perf_counter()
    engine.prepare(alg)     # a rank's bad input raises the same InputError on every rank
    prepare_s = time.perf_counter() - t0

    def fits():
        if budget is None or device == "cpu" or args.transfer != "resident":
            return
        for p in engine.parts:
            if p.kind == "gpu" and p.graph_bytes > budget:
                raise InputError(f"GPU partition {p.pid} (rank {comm.rank}) needs "
                                 f"{p.graph_bytes} bytes of graph data but --gpu-memory is "
                                 f"{budget} bytes; raise --cpu-share or the budget")
    collective(comm, fits)

    comm.phase = "running"
    progress.phase(f"{alg.name}: untimed warm-up run on {ranks} ranks")
    values, records = engine.run(alg)
    trials = max(int(args.trials), 1)
    times, collect_s = [], []
    for trial in range(trials):
        progress.phase(f"{alg.name}: trial {trial + 1} of {trials}")
        h2d0 = sum(p.h2d_bytes for p in engine.parts)
        values, records = engine.run(alg)
        times.append(engine.timings["run_s"])
        collect_s.append(engine.timings["collect_s"])
        h2d = sum(p.h2d_bytes for p in engine.parts) - h2d0
    progress.done()
    comm.phase = "reporting"
    degree = np.concatenate([plan.out_degree(p) for p in plan.local_pids])
    counted = alg.traversed_edges(SimpleNamespace(   # each rank its vertices (Algorithm's doc)
        out_degree=degree, n_edges=summary.n_edges if root else 0,
        vertex_ids=engine.local_gvids), engine.values, records if root else [])
    counted = comm.allreduce(int(counted))

    mine = dict(rank=comm.rank, host=socket.gethostname(), threads=numba.get_num_threads(),
                times=times, collect_s=collect_s, records=records,
                transfer=transfer_counts(engine, records, h2d), stats=plan.stats(),
                peak_rss_bytes=peak_rss(), load_s=load_s, partition_s=partition_s,
                parts=[dict(pid=p.pid, kind=p.kind, graph_bytes=p.graph_bytes,
                            placed=placed_bytes(p, device), gpu=getattr(p, "device_id", None))
                       for p in engine.parts])
    everyone = comm.gather(mine, root=0)

    def check():        # rank 0 verifies (reading the whole graph) and builds the record
        verified = None
        if args.verify:
            from .generators import graph_from_spec
            from .harness import prepare_graph
            progress.phase("verifying: reading the whole graph on rank 0")
            graph = prepare_graph(graph_from_spec(args.graph, seed=args.seed,
                                                  undirected=args.undirected, weighted=weighted),
                                  alg)
            check_result(alg, graph, values)
            verified = True
        return metrics(args, summary, alg, source, strategy, cpu_share, share == "auto", device,
                       everyone, prepare_s, verified, counted)
    m = collective(comm, check, root_only=True)

    def write():        # every rank its outputs (all or nothing on each)
        writers = []
        if per_rank_output:
            order = np.argsort(engine.local_gvids)
            ids, mine = engine.local_gvids[order], engine.values[order]
            writers.append(lambda f: save_values(f, my_output, mine, ids))
        elif root and args.output:
            writers.append(lambda f: save_values(f, args.output, values))
        if root and args.json:
            writers.append(lambda f: f.write(json.dumps(m, indent=1).encode()))
        outputs.write(writers)
    collective(comm, write)
    if root and not args.quiet:
        print_report(m)
        print_ranks(m)
    return 0


def merge_transfer(per_rank, records):
    """One run's `transfer` record from every rank's counts (harness.transfer_counts) and the
    merged superstep records: the counts summed, the ratios over the sums."""
    out = {}
    for t in per_rank:
        for k, v in t.items():
            out[k] = out.get(k, 0) + v
    return transfer_ratios(out, records)


def merge_records(per_rank):
    """One list of superstep records from every rank's: partition times side by side (each
    rank filled in its own pids), exchange time the slowest rank's, counts summed, and the
    per-rank compute, exchange and vote times and bytes sent under `ranks`."""
    first = per_rank[0]
    if any(len(r) != len(first) for r in per_rank):
        raise RuntimeError("ranks ran different numbers of supersteps")
    merged = []
    for i, rec in enumerate(first):
        steps = [r[i] for r in per_rank]
        out = dict(rec)
        out["compute_s"] = [sum(s["compute_s"][pid] for s in steps)
                            for pid in range(len(rec["compute_s"]))]
        out["exchange_s"] = max(s["exchange_s"] for s in steps)
        out["messages"] = sum(s["messages"] for s in steps)
        out["h2d_bytes"] = sum(s["h2d_bytes"] for s in steps)
        out["engines"] = {k: sum(s["engines"][k] for s in steps) for k in rec["engines"]}
        for k in MOVED + ("cache",):    # streamed edges: bytes and cache use, chunk letters
            if any(k in s for s in steps):
                out[k] = sum(s.get(k, 0) for s in steps)
        chunks = {pid: c for s in steps for pid, c in s.get("chunks", {}).items()}
        if chunks:
            out["chunks"] = chunks
        out["bytes_sent"] = sum(s["bytes_sent"] for s in steps)
        out["ranks"] = [dict(compute_s=s["rank_compute_s"], exchange_s=s["exchange_s"],
                             vote_s=s["vote_s"], bytes_sent=s["bytes_sent"]) for s in steps]
        for k in ("rank_compute_s", "vote_s"):
            out.pop(k, None)
        merged.append(out)
    return merged


def metrics(args, graph, alg, source, strategy, cpu_share, auto, device, everyone, prepare_s,
            verified, edges):
    """The --json record of DESIGN.md, with `ranks`, `per_rank` (peak resident memory
    included) and per-superstep `ranks`; `graph` is the GraphSummary, `edges` the TEPS count."""
    records = merge_records([r["records"] for r in everyone])
    trials = [max(r["times"][t] for r in everyone) for t in range(len(everyone[0]["times"]))]
    time_s = statistics.median(trials)
    by_pid = {p["pid"]: (r["rank"], p) for r in everyone for p in r["parts"]}
    rows = sorted((row for r in everyone for row in r["stats"]), key=lambda row: row["pid"])
    parts = []
    for row in rows:
        rank, p = by_pid[row["pid"]]
        on_gpu, on_host = p["placed"]
        parts.append(dict(kind=p["kind"], rank=rank, gpu=p["gpu"], vertices=row["vertices"],
                          edges=row["edges"], boundary_edges=row["boundary_edges"],
                          remote_vertices=row["remote_vertices"], on_gpu_bytes=int(on_gpu),
                          on_host_bytes=int(on_host)))
    per_rank = []
    for r in everyone:
        steps = r["records"]
        per_rank.append(dict(
            rank=r["rank"], host=r["host"], threads=r["threads"],
            partitions=[p["pid"] for p in r["parts"]],
            edges=int(sum(parts[p["pid"]]["edges"] for p in r["parts"])),
            time_s=statistics.median(r["times"]),
            compute_s=sum(s["rank_compute_s"] for s in steps),
            exchange_s=sum(s["exchange_s"] for s in steps),
            vote_s=sum(s["vote_s"] for s in steps),
            bytes_sent=int(sum(s["bytes_sent"] for s in steps)),
            peak_rss_bytes=int(r["peak_rss_bytes"]), load_s=r["load_s"],
            partition_s=r["partition_s"]))
    total = max(graph.n_edges, 1)
    return dict(
        algorithm=alg.name,
        graph=dict(spec=graph.spec, vertices=graph.n_vertices, edges=graph.n_edges),
        partition=strategy, hub_sort=args.hub_sort, cpu_share=cpu_share, cpu_share_auto=auto,
        gpus=args.gpus, device=device, transfer_mode=args.transfer, source=source,
        **alg.metrics(), ranks=len(everyone), per_rank=per_rank, mpi_timeout=args.mpi_timeout,
        partitions=parts, beta=sum(p["boundary_edges"] for p in parts) / total,
        beta_aggregated=sum(p["remote_vertices"] for p in parts) / total,
        load_s=max(r["load_s"] for r in per_rank),
        partition_s=max(r["partition_s"] for r in per_rank),
        prepare_s=prepare_s, time_s=time_s, trials_s=trials,
        collect_s=statistics.median(max(r["collect_s"][t] for r in everyone)
                                    for t in range(len(trials))),
        teps=edges / time_s if time_s > 0 else 0.0,
        supersteps=len(records), per_superstep=records,
        transfer=merge_transfer([r["transfer"] for r in everyone], records),
        peak_rss_bytes=max(r["peak_rss_bytes"] for r in per_rank),
        verified=verified)


def print_ranks(m):
    print(f"{'rank':>4} {'host':>12} {'pids':>8} {'edges':>12} {'compute_s':>10} "
          f"{'exchange_s':>10} {'vote_s':>8} {'sent_MB':>9} {'peak_MB':>8}")
    for r in m["per_rank"]:
        pids = ",".join(map(str, r["partitions"]))
        print(f"{r['rank']:>4} {r['host'][:12]:>12} {pids:>8} {r['edges']:>12} "
              f"{r['compute_s']:>10.4f} {r['exchange_s']:>10.4f} {r['vote_s']:>8.4f} "
              f"{r['bytes_sent'] / 1e6:>9.3f} {r['peak_rss_bytes'] / 1e6:>8.0f}")


def cli(argv=None, single=None):
    """Entry point under an MPI launcher; `single` runs the one-process command (world size 1)."""
    try:
        from bsp.mpi import abort, world
    except ImportError as exc:
        if os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")) == "0":
            print(f"error: started by an MPI launcher but mpi4py cannot be imported ({exc}); "
                  "install it with: pip install 'totem_py[mpi]'", file=sys.stderr)
        return 1
    comm = world()
    if comm.size == 1:
        return single(argv)
    try:
        return run_ranks(argv, comm)
    except Agreed as exc:
        if comm.rank == 0:
            print(exc.line, file=sys.stderr, flush=True)
        return exc.code
    except InputError as exc:      # a usage error while parsing: the same on every rank
        if comm.rank == 0:
            print(f"error: {exc}", file=sys.stderr, flush=True)
        return 2
    except SystemExit as exc:      # --help
        return exc.code or 0
    except BaseException as exc:   # this rank alone: say so once and stop every rank
        if os.environ.get("TOTEM_DEBUG"):
            traceback.print_exc()
        code, line = describe(exc) if isinstance(exc, Exception) else (1, "error: interrupted")
        abort(comm, line.replace("error: ", f"error: rank {comm.rank}: ", 1), 1)
