"""The run pipeline, the same for one process and for MPI ranks (a process is a world of one
rank): the algorithm from its options, the plan, the engine, the default source, an untimed
warm-up and the timed trials, the result gathered to rank 0, verification and the metrics
record (the --json contract in DESIGN.md), whose keys are the same whatever the rank count.
Kernels and the engine contain no timers of their own beyond per-phase accounting.

Under `mpirun` every rank calls `run` with its share of the graph (a
partitioners.distributed.Share: its home block of rows) and the communicator; the plan is then
built by the ranks together (partitioners.distributed.plan_ranks, the same partitions
`partitioners.partition` makes of the whole graph), each rank runs its own partitions, and rank 0
gets the result and the record. Whatever the algorithm computes from the whole graph (its
vertex count, its sources, its sums) it takes from the graph's summary and the votes, so it is the
same at any rank count.
"""

import gc
import os
import socket
import statistics
import time
import traceback
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

import kernels_cpu
from bsp import EdgeOptions, Engine
from bsp.comm import SOLO
from bsp.engine import supersteps
from bsp.paths import Paths, offer_note
from bsp.stream import EdgeStream, FileStream
from partitioners import (STRATEGIES, auto_share, check_gpus, check_hub_sort,
                          partition as make_plan)

from .algorithms import ALGORITHMS, Algorithm
from .backend import resolve_device
from .errors import InputError, VerificationError, check_count, check_stages


TRANSFERS = ("auto", "resident", "zerocopy", "filter", "compaction")


@dataclass
class Result:
    """`values`: the per-vertex result by vertex id (on rank 0 of several ranks; None on the
    others, or each rank's own values in `engine.local_gvids` order when not gathered);
    `metrics`: the --json record (rank 0); `plan` and `engine`, reusable."""
    values: np.ndarray
    metrics: dict
    plan: object = None
    engine: object = None


class Agreed(Exception):
    """An error every rank knows about: rank 0 prints `line`, every rank exits with `code`."""

    def __init__(self, code, line):
        super().__init__(line)
        self.code, self.line = code, line


def describe(exc):
    """(exit code, one line) as the command reports `exc`."""
    if isinstance(exc, InputError):
        return 2, f"error: {exc}"
    if isinstance(exc, VerificationError):
        return 3, f"verification failed: {exc}"
    return 1, f"error: {type(exc).__name__}: {exc}"


def agree(comm, fn, root_only=False, slow=False):
    """Run `fn` on every rank (or on rank 0 only) and return its result (None on the ranks that
    did not run it). In one process its exceptions pass as they are; over ranks, an exception on
    any rank raises the same Agreed error on every rank (naming the rank when it was not rank 0),
    so that no rank goes on to wait in a collective the others never reach. `slow` (with
    `root_only`): rank 0's `fn` may outlast --mpi-timeout, and the other ranks wait for it
    without that bound (bsp.mpi.Waiter.wait_for_root)."""
    if comm.size == 1:
        return fn()
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
    if root_only and slow:
        from bsp.mpi import guarded
        guarded(comm).waiter.wait_for_root()
    errors = [comm.bcast(failed)] if root_only else comm.allgather(failed)
    for e in errors:
        if e is not None:
            raise Agreed(*e)
    return result


def make_algorithm(name, graph, source=None, iterations=None, seed=0, tolerance=0.01,
                   **options):
    """An algorithm object from its registered name (totem_py.algorithms.ALGORITHMS) and the
    run's options, which its class's `from_options` takes what it needs from; returns
    (algorithm, its source vertex or None). An algorithm object passes through."""
    if isinstance(name, Algorithm):
        return name, getattr(name, "source", source)
    cls = ALGORITHMS.get(name)
    if cls is None:
        raise InputError(f"--algorithm must be one of {', '.join(ALGORITHMS)}, not {name!r}")
    alg = cls.from_options(graph, source=source, iterations=iterations, seed=seed,
                           tolerance=tolerance, **options)
    return alg, getattr(alg, "source", None)


def check_result(alg, graph, values):
    """The algorithm's verifier: VerificationError with its message if the result is wrong."""
    problem = alg.verify(graph, values)
    if problem:
        raise VerificationError(problem)


def prepare_graph(graph, algorithm):
    """Unit weights for algorithms that need weights on an unweighted graph; reject NaN weights,
    and negative ones for an algorithm that declares `nonnegative_weights`, naming the edge by
    its vertices (a file's readers name its line instead: `load(..., nonnegative=NAME)`); refuse a graph that leaves out its vertices in no edge
    (`Graph.compacted`) for an algorithm that does not say what they get."""
    if graph.n_ids > graph.n_vertices:
        algorithm.check_relabel()
    if not getattr(algorithm, "needs_weights", False):
        return graph
    if graph.weights is None:
        return graph.with_weights(np.ones(graph.n_edges))
    fine = graph.weights >= 0 if algorithm.nonnegative_weights else ~np.isnan(graph.weights)
    if not np.all(fine):          # NaN fails both
        e = int(np.argmin(fine))
        u = int(np.searchsorted(graph.indptr, e, side="right") - 1)
        needs = "non-negative weights" if algorithm.nonnegative_weights else "numbers as weights"
        raise InputError(f"{algorithm.name} needs {needs}; edge {u} -> "
                         f"{graph.indices[e]} weighs {graph.weights[e]}", graph.spec or None)
    return graph


def memory_stages(alg, directed=True, host_memory=None):
    """The stages after loading whose host memory errors.check_stages counts for `alg` (an
    algorithm, or its class): partitioning, the local CSRs of each view it reads (one on an
    undirected graph), its run. With `host_memory` (the edges stay in a file) the stages' costs
    per edge are left out and the run holds `host_memory` bytes of edges instead."""
    views = sorted({m.view if directed else "out" for m in alg.modes}) or ["out", "in", "both"]
    stages = (("partition",) + tuple(f"plan:{v}" for v in views)
              + (("run", alg.memory_cost()),))
    if host_memory is None:
        return stages
    from .errors import stage_figures
    out = []
    for stage in stages:
        name, figures = (stage, stage_figures(stage)) if isinstance(stage, str) else stage
        out.append((name, tuple(((pv, 0, fixed + (host_memory if name == "run" else 0)),
                                 (kv, 0)) for (pv, _, fixed), (kv, _) in figures)))
    return tuple(out)


def edges_in_file(graph, host_memory, ranks=False):
    """(graph, host_memory) for a run whose edges stay in the graph's .tcsr file, else
    (graph, None): with `host_memory`, a graph loaded whole is opened again from its file
    (store.mapped); a graph opened so without it holds half of the available memory."""
    from . import store
    from .errors import available_memory
    if host_memory is not None:
        host_memory = check_count(host_memory, "--host-memory", 1)
    if getattr(graph, "edge_file", None) is None:
        if host_memory is None:
            return graph, None
        spec = str(getattr(graph, "spec", ""))
        if not (store.is_store(spec) and os.path.isfile(spec)) or graph.ids is not None:
            raise InputError("--host-memory reads the edges from a .tcsr graph file (python -m "
                             "totem_py.convert IN OUT.tcsr)")
        graph = store.mapped(spec)
    if ranks:
        raise InputError("--host-memory runs in one process")
    if host_memory is None:
        host_memory = max((available_memory() or 1 << 30) // 2, 1)
    return graph, host_memory


def gpu_budget(device, gpu_memory):
    """Bytes of graph data one GPU partition may hold: --gpu-memory, else 80% of the free
    memory of the device (None when there is no real device and no budget). Free counts what
    this process could take back: partitions of earlier plans that nothing references (reference
    cycles, collected first) and the blocks CuPy's memory pool keeps cached, which the driver
    counts as used (CuPy frees them and retries when an allocation fails). Counting neither, a
    process that runs plan after plan (a benchmark sweep) would find almost none of the device
    free."""
    if gpu_memory is not None:
        return gpu_memory
    if device != "gpu":
        return None
    import cupy
    gc.collect()
    free, _ = cupy.cuda.runtime.memGetInfo()
    return int(0.8 * (free + cupy.get_default_memory_pool().free_bytes()))


def choose_share(graph, alg, strategy, gpus, device, gpu_memory, transfer, seed):
    """--cpu-share auto: as many edges on the GPUs as fit their budget (TOTEM); with edges in
    host memory (zerocopy) or no budget at all, everything goes to the GPUs."""
    budget = gpu_budget(device, gpu_memory)
    if budget is None or transfer == "zerocopy" or device == "cpu":
        return 0.0 if device != "cpu" else 1.0
    views = sum(2 if v == "both" else 1 for v in alg.views()) if graph.directed else 1
    per_edge = graph.indices.itemsize + (8 if alg.needs_weights else 0)
    # the estimate counts out-edges; in-edge views can hold a few percent more: keep 10% spare
    return auto_share(graph, strategy, gpus, 0.9 * budget / views, per_edge, seed)


def placed_bytes(part, device):
    """(bytes on the GPU, bytes of graph data read from host memory) of a partition: a GPU
    partition's device buffers (edges, and the staging buffers and cache of streamed ones) and
    its streamed or mapped edges; a CPU partition's graph data is all on the host."""
    if part.kind != "gpu" or device == "cpu":
        return 0, int(part.graph_bytes)
    views = part.placed_views()
    return (int(sum(v.device_bytes for v in views)), int(sum(v.host_bytes for v in views)))


MOVED = ("filter_bytes", "compaction_bytes", "zerocopy_bytes", "cache_bytes")


def transfer_counts(engine, records, h2d):
    """Bytes copied to the GPUs in the last trial; for streamed edges (HyTGraph table VI) the
    bytes moved by each engine and loaded into the GPU cache and the queue vertices the cache
    served: counts, which add up over ranks (`transfer_ratios` makes the ratios)."""
    out = dict(h2d_bytes=int(h2d), edge_bytes=int(sum(p.graph_bytes for p in engine.parts
                                                      if p.kind == "gpu")))
    if any(isinstance(v.stream, FileStream) for p in engine.parts for v in p.placed_views()):
        for key in ("read_bytes", "cached_pages"):      # --host-memory
            out[key] = int(sum(r.get(key, 0) for r in records))
    streams = [v.stream for p in engine.parts for v in p.placed_views()
               if isinstance(v.stream, EdgeStream)]
    if not streams:
        return out
    out.update({k: sum(r.get(k, 0) for r in records) for k in MOVED},
               streamed_edge_bytes=int(sum(s.edge_bytes for s in streams)),
               chunks=sum(s.nchunks for s in streams),
               resident_chunks=sum(s.n_resident for s in streams),
               cache=int(sum(r.get("cache", 0) for r in records)),
               cache_capacity_bytes=int(sum(s.cache_capacity * (s.width + s.wwidth)
                                            for s in streams)))
    return out


def transfer_ratios(counts, records):
    """`counts` with, for streamed edges, the bytes moved over the streamed edge bytes and each
    engine's share of the chunks served (from the superstep records)."""
    if "streamed_edge_bytes" not in counts:
        return counts
    served = {k: sum(r["engines"][k] for r in records)
              for k in ("resident", "filter", "compaction", "zerocopy")}
    total = max(sum(served.values()), 1)
    return dict(counts, volume_ratio=sum(counts[k] for k in MOVED)
                / max(counts["streamed_edge_bytes"], 1),
                engine_share={k: v / total for k, v in served.items()})


def plan_key(plan):
    """What a plan is built from; `run` reuses a plan whose key matches the run's."""
    return plan.graph, plan.strategy, plan.cpu_share, plan.gpus, plan.seed, plan.hub_sort


# ---- the default source -----------------------------------------------------------------------

SCIPY_COMPONENTS_BELOW = 1 << 22     # edges


def takes_source(algorithm):
    """Whether a registered algorithm (by name) has a --source option."""
    cls = ALGORITHMS.get(algorithm) if isinstance(algorithm, str) else None
    return cls is not None and any(o.flag == "--source" for o in cls.options)


def components_algorithm():
    """The registered algorithm whose result labels the weak components by their smallest
    vertex id (its class says `weak_components = True`)."""
    return next(cls for cls in ALGORITHMS.values() if getattr(cls, "weak_components", False))


def weak_components(graph):
    """A label per vertex of a graph in memory, equal within each weakly connected component:
    SciPy's traversal on graphs of fewer than SCIPY_COMPONENTS_BELOW edges (quick at that size,
    and nothing to compile), else a parallel union-find over every out-edge
    (kernels_cpu/checks.py; the labels are the components' smallest ids)."""
    if graph.n_edges < SCIPY_COMPONENTS_BELOW:
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import connected_components
        n = graph.n_vertices
        m = csr_array((np.ones(graph.n_edges, np.int8), graph.indices, graph.indptr), shape=(n, n))
        return connected_components(m, directed=True, connection="weak")[1]
    from kernels_cpu.checks import weak_roots
    return weak_roots(graph.indptr, graph.indices)


def giant_vertex(labels, has_edges, seed=0):
    """A seeded random vertex with out-edges in the component with most such vertices (ties:
    the smallest label), 0 if no vertex has out-edges; `labels` and `has_edges` by vertex id."""
    if not has_edges.any():
        return 0
    giant = np.argmax(np.bincount(labels[has_edges]))
    candidates = np.flatnonzero(has_edges & (labels == giant))
    return int(np.random.default_rng(seed).choice(candidates))


def default_source(graph, seed=0):
    """The default root of a traversal of a graph in memory: a seeded random vertex with
    out-degree > 0 in the largest weakly connected component, so that a traversal from it
    reaches a large part of the graph (vertex 0 if there is no edge)."""
    return giant_vertex(weak_components(graph), graph.out_degree > 0, seed)


def engine_source(engine, seed=0, bounds=None):
    """`default_source` found on an engine's partitions, where no rank holds the whole graph:
    the components algorithm runs there, then the giant component's vertices are counted (over
    ranks at their homes, `bounds`: partitioners.distributed.giant_source). Collective."""
    gather, engine.gather = engine.gather, False
    engine.run(components_algorithm()())
    engine.gather = gather
    labels = engine.values
    engine.release()
    plan = engine.plan
    degree = np.concatenate([plan.out_degree(p) for p in plan.local_pids])
    if engine.ranks is None:
        by_gvid = np.empty(labels.size, labels.dtype)
        by_gvid[engine.local_gvids] = labels
        has_edges = np.empty(labels.size, bool)
        has_edges[engine.local_gvids] = degree > 0
        return giant_vertex(by_gvid, has_edges, seed)
    from partitioners.distributed import giant_source
    return giant_source(engine.comm, bounds, engine.local_gvids, labels, degree > 0, seed)


# ---- one run ----------------------------------------------------------------------------------

def run(graph, algorithm=None, partition="HIGH", cpu_share=0.5,
        gpus=1, device="auto", source=None, iterations=None, trials=1, threads=None, seed=0,
        verify=False, progress=None, gpu_memory=None, transfer="auto", plan=None,
        chunk_bytes=None, hub_sort="degree", gpu_cache=0, tolerance=0.01, comm=None,
        gather=True, load_s=None, path="auto", host_memory=None, **options):
    """Partition `graph`, run `algorithm` on it and return a Result: `.values`, the per-vertex
    result by vertex id (DESIGN.md, "Results"; each algorithm's file states its own), `.metrics`,
    the --json record, and `.plan`. The keywords are the command's options (`python -m
    totem_py.run --help`):

    algorithm: a registered name (totem_py.algorithms.ALGORITHMS, which
        totem_py.algorithms.register adds to; default the command's) or an algorithm object.
        A graph from `Graph.compacted` stands for its vertices in no edge too: the values are
        then one per id of `graph.with_isolated()`.
    partition: "HIGH" (highest-degree vertices on the CPU), "LOW", "RAND" or "BLOCK" (runs of
        consecutive ids: few boundary edges where ids follow geometry, as in road networks).
    cpu_share: fraction of the edges on the CPU in [0, 1], "auto" (as many edges on the GPUs as
        fit their memory) or "model" (the share TOTEM's performance model predicts fastest).
    gpus: number of GPU partitions. device: "auto", "gpu", "emulated" or "cpu".
    source: root of bfs, sssp and bc (default: a seeded random vertex of the largest weakly
        connected component). sources: bc's sources instead: K random ones, "all" or a list;
        normalized: bc divided as networkx's betweenness_centrality.
    iterations: PageRank's rounds (default 5); with `tol`, its most rounds (default 100).
    tol: PageRank in networkx's form, to that tolerance (the metrics' `rounds` and `converged`
        say where it stopped). tolerance: PageRank-Delta's.
    trials: timed runs after one untimed warm-up (the median is reported); 0: one timed run,
    no warm-up (it then includes compiling what Numba's cache lacks). threads: CPU threads.
    seed: of the default source and the partitioner. verify: check the result (raises
        VerificationError); over ranks, a function giving rank 0 the whole graph to check it on.
    progress: a totem_py.progress.Progress, or None.
    gpu_memory: bytes of graph data per GPU partition; transfer: "auto", "resident",
        "zerocopy", "filter" or "compaction"; chunk_bytes: size of streamed chunks (None: 32 MB or
        less, as the budget needs); gpu_cache:
        bytes of each GPU partition's budget for the cache of hot streamed rows (bsp/stream.py).
    hub_sort: local order inside partitions, "degree", "hytgraph" or "off" (speed only).
    host_memory: bytes of edges the run holds in host memory: the edges of a `.tcsr` graph stay
        in the file and stream from it page by page (docs/guide/streaming.md); `graph` is then
        one opened by totem_py.store.mapped (a graph loaded whole is opened again from its file).
        Such a graph without `host_memory` holds half of the available memory.
    path: "auto" (the engine's controllers choose each superstep's execution path) or a path
        the algorithm offers, "{sync,async}-{push,pull}-{dd,td}" (docs/guide/engine.md).
    plan: the `.plan` of an earlier Result for the same graph, partitioning, cpu share, GPU
        count, seed and hub_sort, reused (with its engines) instead of partitioning again.
    comm: an mpi4py communicator of several ranks: every rank calls `run` with its share of the
        graph as `graph` (partitioners.distributed.read_share / generate_share; it is consumed)
        and the same options. gather: rank 0 gets the whole result (else each rank its own
        vertices'). load_s: the seconds the caller spent loading, for the record.
    options: the algorithm's own (its class's `options`, for its `from_options`): bc's
        `sources` and `normalized`, examples/khop.py's `k`.
    """
    import numba
    if algorithm is None:
        from .run import DEFAULT_ALGORITHM as algorithm
    ranks = comm is not None and comm.size > 1
    comm = comm if ranks else SOLO
    root = comm.rank == 0
    trials, gpus, seed = (check_count(trials, "--trials"), check_count(gpus, "--gpus"),
                          check_count(seed, "--seed"))
    if threads is not None:
        numba.set_num_threads(min(check_count(threads, "--threads", 1),
                                  numba.config.NUMBA_NUM_THREADS))
    device = resolve_device(device)
    check_hub_sort(hub_sort)
    if transfer not in TRANSFERS:
        raise InputError(f"--transfer must be one of {', '.join(TRANSFERS)}, not {transfer!r}")
    if gpu_memory is not None:
        gpu_memory = check_count(gpu_memory, "--gpu-memory")
    if chunk_bytes is not None:
        chunk_bytes = check_count(chunk_bytes, "--chunk-bytes", 64)
    gpu_cache = check_count(gpu_cache, "--gpu-cache")
    strategy = partition
    graph, host_memory = edges_in_file(graph, host_memory, ranks)
    in_file = host_memory is not None
    if in_file:
        hub_sort = "off"      # blocks of rows in id order: partitioners/spill.py
    summary = graph.summary(comm) if ranks else graph
    # the default source needs the weak components: found once the engine stands (or, for a
    # small graph in memory, by SciPy); until then the algorithm stands with vertex 0
    find = (source is None and options.get("sources") is None and takes_source(algorithm)
            and summary.n_vertices > 0)
    if find and not ranks and not in_file:
        source, find = default_source(graph, seed), False

    def algorithm_for(src):
        return make_algorithm(algorithm, summary, src, iterations, seed, tolerance, **options)

    def checked():
        alg, _ = algorithm_for(0 if find else source)
        check_gpus(gpus, summary.n_vertices)
        check_path(alg, path)
        return alg
    alg = agree(comm, checked)
    t_plan = time.perf_counter()
    auto = cpu_share == "auto"
    model = None
    if ranks:
        from bsp.watchdog import fault_point
        from partitioners.distributed import plan_ranks, weigh
        weigh(comm, graph, alg, summary.spec if os.path.exists(str(summary.spec)) else None)
        per_gpu = rank_gpu_budget(comm, device, gpu_memory, gpus)
        share = ((lambda g: choose_share(g, alg, strategy, gpus, device, per_gpu, transfer, seed))
                 if auto else cpu_share)
        if progress:
            progress.phase(f"partitioning over {comm.size} ranks: {strategy} cpu-share "
                           f"{cpu_share} over {gpus} GPU(s) per rank, hub sort {hub_sort}")
        views = alg.views() + (["both"] if find else [])
        bounds = graph.bounds
        comm.phase = "partitioning"
        fault_point(comm.rank, "partition")
        plan = agree(comm, lambda: plan_ranks(comm, graph, strategy, share, gpus, seed,
                                              hub_sort, views))
        cpu_share = plan.cpu_share
    else:
        if in_file:       # unit weights come from the file's reader; no pass over the edges
            graph.edge_file.unit_weights = alg.needs_weights and graph.weights is None
        else:
            graph = prepare_graph(graph, alg)
        per_gpu = gpu_budget(device, gpu_memory)
        if auto:
            cpu_share = choose_share(graph, alg, strategy, gpus, device, gpu_memory, transfer,
                                     seed)
        if cpu_share == "model":    # TOTEM's performance model picks it (totem_py/model.py)
            if str(strategy).upper() not in STRATEGIES or not isinstance(strategy, str):
                raise InputError(f"--partition must be one of {', '.join(STRATEGIES)}, "
                                 f"not {strategy!r}")
            from .model import choose_share as model_share
            cpu_share, model, plans = model_share(graph, algorithm, strategy, gpus, device,
                                                  gpu_memory, transfer, seed, run, progress,
                                                  source=source, threads=threads,
                                                  hub_sort=hub_sort, **options)
            plan = plans.get(cpu_share, plan)
        if plan is None or plan_key(plan) != (graph, strategy, cpu_share, gpus, seed, hub_sort):
            check_stages(graph.n_vertices, graph.n_edges, graph.weights is not None,
                         memory_stages(alg, graph.directed, host_memory))
            if progress:
                progress.phase(f"partitioning {strategy} cpu-share {cpu_share} over {gpus} "
                               f"GPU(s), hub sort {hub_sort}")
            plan = make_plan(graph, strategy, cpu_share, gpus, seed, hub_sort=hub_sort)
            if in_file:
                from partitioners.spill import Spill
                bpe = graph.indices.itemsize + (8 if graph.edge_file.weighted else 0)
                plan.spill = Spill(graph.indptr, graph.edge_file, host_memory // (2 * bpe),
                                   near=graph.spec)
    partition_s = time.perf_counter() - t_plan
    # auto, filter and compaction stream what exceeds the budget (80% of the free device memory
    # when none is given); zerocopy without a budget is TOTEM's mapped mode; edges in a file
    # keep pages in the budget (FileStream's page cache)
    budget = gpu_memory if transfer in ("resident", "zerocopy") and not in_file else per_gpu
    edges = EdgeOptions(transfer if device != "cpu" else "resident", budget, chunk_bytes,
                        cache=int(gpu_cache) if device != "cpu" else 0, host_memory=host_memory)
    comm.phase = "placing the partitions"
    engine = engine_for(plan, device, edges, comm, gather or bool(verify))
    engine.progress = progress
    if find:
        if progress:
            progress.phase("the default source: in the largest weakly connected component")
        source = engine_source(engine, seed, bounds if ranks else None)
        alg, _ = algorithm_for(source)
    t0 = time.perf_counter()
    engine.prepare(alg)
    prepare_s = time.perf_counter() - t0

    def fits():
        if gpu_memory is None or device == "cpu" or transfer != "resident":
            return
        for p in engine.parts:
            if p.kind == "gpu" and p.graph_bytes > gpu_memory:
                where = f" (rank {comm.rank})" if ranks else ""
                raise InputError(
                    f"GPU partition {p.pid}{where} needs {p.graph_bytes} bytes of graph data but "
                    f"--gpu-memory is {gpu_memory} bytes; raise --cpu-share or the budget")
    agree(comm, fits)
    comm.phase = "running"
    if progress and trials:
        progress.phase(f"{alg.name}: untimed warm-up run" + (f" on {comm.size} ranks" if ranks
                                                              else ""))
    if trials:
        values, records = engine.run(alg, path)        # untimed warm-up (JIT, caches)
    times, collect_s, step_walls = [], [], []
    timed = max(trials, 1)
    for trial in range(timed):
        if progress:
            progress.phase(f"{alg.name}: trial {trial + 1} of {timed}")
        h2d0 = sum(p.h2d_bytes for p in engine.parts)
        values, records = engine.run(alg, path)
        times.append(engine.timings["run_s"])        # init + supersteps, as TOTEM times it
        collect_s.append(engine.timings["collect_s"])  # results back by global id
        step_walls.append([r["wall_s"] for r in records])
        h2d = sum(p.h2d_bytes for p in engine.parts) - h2d0
    if progress:
        progress.done()
    degree = np.concatenate([plan.out_degree(p) for p in plan.local_pids])
    counted = comm.allreduce(int(alg.traversed_edges(SimpleNamespace(
        out_degree=degree, n_edges=summary.n_edges if root else 0,
        vertex_ids=engine.local_gvids), engine.values, records if root else [])))
    mine = dict(rank=comm.rank, host=socket.gethostname(), threads=kernels_cpu.threads(),
                times=times, collect_s=collect_s, step_walls=step_walls, records=records,
                transfer=transfer_counts(engine, records, h2d), stats=plan.rows(),
                peak_rss_bytes=peak_rss(), load_s=load_s, partition_s=partition_s,
                parts=[dict(pid=p.pid, kind=p.kind, graph_bytes=p.graph_bytes,
                            placed=placed_bytes(p, device), gpu=getattr(p, "device_id", None))
                       for p in engine.parts])
    comm.phase = "reporting"
    everyone = comm.gather(mine, root=0)

    def check():        # rank 0 verifies and builds the record
        nonlocal values
        verified = None
        if not ranks:       # with the vertices a compacted graph leaves out
            values = alg.with_isolated(graph, values)
        if verify:
            if ranks:
                from bsp.watchdog import fault_point
                fault_point(comm.rank, "verify")
            whole = verify() if callable(verify) else graph.with_isolated()
            check_result(alg, prepare_graph(whole, alg), values)
            verified = True
        return metrics(alg, summary, source, dict(
            partition=strategy, hub_sort=hub_sort, cpu_share=cpu_share, cpu_share_auto=auto,
            cpu_share_model=model, gpus=gpus, device=device, transfer_mode=transfer,
            host_memory=host_memory,
            gpu_cache=int(gpu_cache), path=path), everyone, prepare_s, verified, counted)
    if verify:
        comm.phase = "verifying on rank 0"
    record = agree(comm, check, root_only=True, slow=bool(verify))
    return Result(values, record, plan, engine)


def check_path(alg, path):
    """InputError unless `path` is "auto" or a path `alg` offers (one line naming them)."""
    if path in (None, "auto"):
        return
    try:
        Paths(alg, [], path)
    except ValueError as exc:
        raise InputError(str(exc)) from None
    if not alg.paths:
        raise InputError(offer_note(alg, path))


def engine_for(plan, device, edges, comm, gather):
    """The Engine of `plan` for this device and edge placement: a one-process plan keeps the
    engine of its last run on each device (another one's device buffers and pinned copies go
    first); over ranks a plan serves one run."""
    if comm.size > 1:
        return Engine(plan, device, edges=edges, comm=comm, gather=gather)
    engine = plan.engines.get((device, edges))
    if engine is None:
        old = [k for k in plan.engines if k[0] == device]
        for key in old:
            del plan.engines[key]
        if old:
            gc.collect()        # partitions and their views refer to each other
        engine = plan.engines[device, edges] = Engine(plan, device, edges=edges)
    engine.gather = True
    return engine


def rank_gpu_budget(comm, device, gpu_memory, gpus):
    """Bytes of graph data one GPU partition of this rank may hold (`gpu_budget`), the ranks
    sharing a device sharing its memory."""
    per_gpu = comm.bcast(agree(comm, lambda: gpu_budget(device, gpu_memory), root_only=True))
    if per_gpu is not None and device == "gpu":
        from bsp.gpu import device_count
        from bsp.mpi import node_place
        node_size = node_place(comm)[1]
        per_gpu //= max(1, -(-node_size * max(gpus, 1) // device_count()))
    return per_gpu


def peak_rss():
    """This process's peak resident memory in bytes (getrusage's ru_maxrss, KiB on Linux)."""
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


# ---- the record -------------------------------------------------------------------------------

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
        if "rounds" in rec:     # execution paths' local rounds, each rank's partitions'
            out["rounds"] = [sum(s["rounds"][pid] for s in steps)
                             for pid in range(len(rec["rounds"]))]
        out["messages"] = sum(s["messages"] for s in steps)
        out["h2d_bytes"] = sum(s["h2d_bytes"] for s in steps)
        out["peer_bytes"] = sum(s["peer_bytes"] for s in steps)
        out["engines"] = {k: sum(s["engines"][k] for s in steps) for k in rec["engines"]}
        for k in MOVED + ("cache",):    # streamed edges: bytes and cache use, chunk letters
            if any(k in s for s in steps):
                out[k] = sum(s.get(k, 0) for s in steps)
        chunks = {pid: c for s in steps for pid, c in s.get("chunks", {}).items()}
        if chunks:
            out["chunks"] = chunks
        out["bytes_sent"] = sum(s.get("bytes_sent", 0) for s in steps)
        out["ranks"] = [dict(compute_s=s.get("rank_compute_s", max(s["compute_s"], default=0)),
                             exchange_s=s["exchange_s"], vote_s=s.get("vote_s", 0.0),
                             bytes_sent=s.get("bytes_sent", 0)) for s in steps]
        for k in ("rank_compute_s", "vote_s"):
            out.pop(k, None)
        merged.append(out)
    return merged


def merge_transfer(per_rank, records):
    """One run's `transfer` record from every rank's counts (`transfer_counts`) and the merged
    superstep records: the counts summed, the ratios over the sums."""
    out = {}
    for t in per_rank:
        for k, v in t.items():
            out[k] = out.get(k, 0) + v
    return transfer_ratios(out, records)


def metrics(alg, graph, source, settings, everyone, prepare_s, verified, edges):
    """The --json record of DESIGN.md from every rank's own record (`everyone`): the run's
    `settings`, the partitions, the times (a trial's time the slowest rank's), the merged
    superstep records, the transfer counts, `ranks` and `per_rank`; `graph` is the whole
    graph or its summary, `edges` the TEPS count."""
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
            rank=r["rank"], host=r["host"], threads=r["threads"]["count"],
            partitions=[p["pid"] for p in r["parts"]],
            edges=int(sum(parts[p["pid"]]["edges"] for p in r["parts"])),
            time_s=statistics.median(r["times"]),
            compute_s=sum(s.get("rank_compute_s", max(s["compute_s"], default=0))
                          for s in steps),
            exchange_s=sum(s["exchange_s"] for s in steps),
            vote_s=sum(s.get("vote_s", 0.0) for s in steps),
            bytes_sent=int(sum(s.get("bytes_sent", 0) for s in steps)),
            peak_rss_bytes=int(r["peak_rss_bytes"]), load_s=r["load_s"],
            partition_s=r["partition_s"]))
    total = max(graph.n_edges, 1)
    loads = [r["load_s"] for r in per_rank if r["load_s"] is not None]
    return dict(
        algorithm=alg.name,
        graph=dict(spec=graph.spec, vertices=graph.n_vertices, edges=graph.n_edges),
        **settings, source=source, **alg.metrics(),
        ranks=len(everyone), per_rank=per_rank,
        partitions=parts, beta=sum(p["boundary_edges"] for p in parts) / total,
        beta_aggregated=sum(p["remote_vertices"] for p in parts) / total,
        load_s=max(loads) if loads else None,
        partition_s=max(r["partition_s"] for r in per_rank),
        prepare_s=prepare_s, time_s=time_s, trials_s=trials,
        trials_step_wall_s=everyone[0]["step_walls"],
        collect_s=statistics.median(max(r["collect_s"][t] for r in everyone)
                                    for t in range(len(trials))),
        teps=edges / time_s if time_s > 0 else 0.0,
        supersteps=supersteps(records), per_superstep=records,
        transfer=merge_transfer([r["transfer"] for r in everyone], records),
        threads=everyone[0]["threads"],
        peak_rss_bytes=max(r["peak_rss_bytes"] for r in per_rank),
        verified=verified)
