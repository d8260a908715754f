"""The run harness: build the plan once, warm up, time trials, verify, and build the metrics
record (the --json contract in DESIGN.md). Kernels and the engine contain no timers of their own
beyond per-phase accounting."""

import gc
import statistics
import time
from dataclasses import dataclass

import numpy as np

import kernels_cpu
from bsp import EdgeOptions, Engine
from partitioners import auto_share, check_gpus, check_hub_sort, partition as make_plan

from .algorithms import ALGORITHMS, Algorithm
from .backend import resolve_device
from .errors import InputError, VerificationError, check_stages


TRANSFERS = ("auto", "resident", "zerocopy", "filter", "compaction")


@dataclass
class Result:
    values: np.ndarray
    metrics: dict
    plan: object = None


SCIPY_COMPONENTS_BELOW = 1 << 22     # edges


def weak_components(graph):
    """A label per vertex, equal within each weakly connected component: SciPy's traversal on
    graphs of fewer than SCIPY_COMPONENTS_BELOW edges (about 0.1 s at 4M edges, and nothing to
    compile, where a first run would compile the union-find for 2 s), else a parallel union-find
    over every out-edge (kernels_cpu/checks.py; the labels are the components' smallest ids)."""
    if graph.n_edges < SCIPY_COMPONENTS_BELOW:
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import connected_components
        n = graph.n_vertices
        m = csr_array((np.ones(graph.n_edges, np.int8), graph.indices, graph.indptr), shape=(n, n))
        return connected_components(m, directed=True, connection="weak")[1]
    from kernels_cpu.checks import weak_roots
    return weak_roots(graph.indptr, graph.indices)


def default_source(graph, seed=0):
    """A seeded random vertex with out-degree > 0 in the largest weakly connected component, so
    that a traversal from it reaches a large part of the graph (vertex 0 if there is no edge)."""
    comp = weak_components(graph)
    has_edges = graph.out_degree > 0
    if not has_edges.any():
        return 0
    giant = np.argmax(np.bincount(comp[has_edges]))
    candidates = np.flatnonzero(has_edges & (comp == giant))
    return int(np.random.default_rng(seed).choice(candidates))


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
    """Unit weights for algorithms that need weights on an unweighted graph; reject negative and
    NaN weights, naming the edge by its vertices (a file's readers name its line instead:
    `load(..., nonnegative=True)`); refuse a graph that leaves out its vertices in no edge
    (`Graph.compacted`) for an algorithm that does not say what they get."""
    if graph.n_ids > graph.n_vertices:
        algorithm.check_relabel()
    if not getattr(algorithm, "needs_weights", False):
        return graph
    if graph.weights is None:
        return graph.with_weights(np.ones(graph.n_edges))
    if not np.all(graph.weights >= 0):          # NaN fails too
        e = int(np.argmin(graph.weights >= 0))
        u = int(np.searchsorted(graph.indptr, e, side="right") - 1)
        raise InputError(f"{algorithm.name} needs non-negative weights; edge {u} -> "
                         f"{graph.indices[e]} weighs {graph.weights[e]}", graph.spec or None)
    return graph


def memory_stages(alg, directed=True):
    """The stages after loading whose host memory errors.check_stages counts for `alg` (an
    algorithm, or its class): partitioning, the local CSRs of each view it reads (one on an
    undirected graph), its run."""
    views = sorted({m.view if directed else "out" for m in alg.modes}) or ["out", "in", "both"]
    return ("partition",) + tuple(f"plan:{v}" for v in views) + (("run", alg.memory_cost()),)


def gpu_budget(device, gpu_memory):
    """Bytes of graph data one GPU partition may hold: --gpu-memory, else 80% of the free
    memory of the device (None when there is no real device and no budget). Free counts what
    this process could take back: partitions of earlier plans no longer referenced (reference
    cycles, collected first) and the blocks CuPy's memory pool keeps cached, which the driver
    counts as used (CuPy frees them and retries when an allocation fails). Counting neither,
    bench_gpu's sweep of plans in one process got 0.6 GB of an 80 GB H100 for its LOW 0.75
    SSSP run (rmat:24)."""
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


def transfer_summary(engine, records, h2d):
    """Bytes copied to the GPUs in the last trial; for streamed edges (HyTGraph table VI) the
    bytes moved by each engine and loaded into the GPU cache, their sum over the streamed edge
    bytes, each engine's share of the chunks served, and the queue vertices the cache served."""
    return transfer_ratios(transfer_counts(engine, records, h2d), records)


def transfer_counts(engine, records, h2d):
    """transfer_summary's counts, which add up over processes (its ratios do not)."""
    out = dict(h2d_bytes=int(h2d), edge_bytes=int(sum(p.graph_bytes for p in engine.parts
                                                      if p.kind == "gpu")))
    streams = [v.stream for p in engine.parts for v in p.placed_views() if v.stream is not None]
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
    """What a plan is built from; harness.run reuses a plan whose key matches the run's."""
    return plan.graph, plan.strategy, plan.cpu_share, plan.gpus, plan.seed, plan.hub_sort


def run(graph, algorithm=None, partition="HIGH", cpu_share=0.5,
        gpus=1, device="auto", source=None, iterations=None, trials=1, threads=None, seed=0,
        verify=False, progress=None, gpu_memory=None, transfer="auto", plan=None,
        chunk_bytes=32 << 20, hub_sort="degree", gpu_cache=0, tolerance=0.01, **options):
    """Partition `graph`, run `algorithm` on it and return a Result: `.values`, the per-vertex
    result by vertex id (DESIGN.md, "Results"; each algorithm's file states its own), `.metrics`,
    the --json record, and `.plan`. The keywords are the command's options (`python -m
    totem_py.run --help`):

    algorithm: a registered name (totem_py.algorithms.ALGORITHMS, which
        totem_py.algorithms.register adds to; default the command's) or an algorithm object.
        A graph from `Graph.compacted` stands for its vertices in no edge too: the values are
        then one per id of `graph.with_isolated()`.
    partition: "HIGH" (highest-degree vertices on the CPU), "LOW" or "RAND".
    cpu_share: fraction of the edges on the CPU in [0, 1], "auto" (as many edges on the GPUs as
        fit their memory) or "model" (the share TOTEM's performance model predicts fastest).
    gpus: number of GPU partitions. device: "auto", "gpu", "emulated" or "cpu".
    source: root of bfs, sssp and bc (default: a seeded random vertex of the largest weakly
        connected component). sources: bc's sources instead: K random ones, "all" or a list;
        normalized: bc divided as networkx's betweenness_centrality (reference.betweenness_scale).
    iterations: PageRank's rounds (default 5); with `tol`, its most rounds (default 100).
    tol: PageRank in networkx's form, to that tolerance (pagerank.py; the metrics' `rounds` and
        `converged` say where it stopped). tolerance: PageRank-Delta's (pagerank_delta.py).
    trials: timed runs after one untimed warm-up (the median is reported). threads: CPU threads.
    seed: of the default source and the partitioner. verify: check the result (raises
        VerificationError). progress: a totem_py.progress.Progress, or None.
    gpu_memory: bytes of graph data per GPU partition; transfer: "auto", "resident",
        "zerocopy", "filter" or "compaction"; chunk_bytes: size of streamed chunks; gpu_cache:
        bytes of each GPU partition's budget for the cache of hot streamed rows (bsp/stream.py).
    hub_sort: local order inside partitions, "degree", "hytgraph" or "off" (speed only).
    plan: the `.plan` of an earlier Result for the same graph, partitioning, cpu share, GPU
        count, seed and hub_sort, reused (with its engines) instead of partitioning again.
    options: the algorithm's own (its class's `options`), for its class's from_options: bc's
        `sources` and `normalized`, examples/khop.py's `k`.
    """
    import numba
    if algorithm is None:
        from .run import DEFAULT_ALGORITHM as algorithm
    if threads:
        numba.set_num_threads(min(int(threads), numba.config.NUMBA_NUM_THREADS))
    device = resolve_device(device)
    check_hub_sort(hub_sort)
    alg, source = make_algorithm(algorithm, graph, source, iterations, seed, tolerance,
                                 **options)
    graph = prepare_graph(graph, alg)
    check_gpus(gpus, graph.n_vertices)
    strategy = partition
    auto = cpu_share == "auto"
    if auto:
        cpu_share = choose_share(graph, alg, strategy, gpus, device, gpu_memory, transfer, seed)
    model = None
    if cpu_share == "model":    # TOTEM's performance model picks the share (totem_py/model.py)
        from .model import choose_share as model_share
        cpu_share, model, plans = model_share(graph, alg, strategy, gpus, device, gpu_memory,
                                              transfer, seed, run, progress, source=source,
                                              threads=threads, hub_sort=hub_sort)
        plan = plans.get(cpu_share, plan)
    if plan is None or plan_key(plan) != (graph, strategy, cpu_share, gpus, seed, hub_sort):
        check_stages(graph.n_vertices, graph.n_edges, graph.weights is not None,
                     memory_stages(alg, graph.directed))
        if progress:
            progress.phase(f"partitioning {strategy} cpu-share {cpu_share} over {gpus} GPU(s), "
                           f"hub sort {hub_sort}")
        plan = make_plan(graph, strategy, cpu_share, gpus, seed, hub_sort=hub_sort)
    if transfer not in TRANSFERS:
        raise InputError(f"--transfer must be one of {', '.join(TRANSFERS)}, not {transfer!r}")
    # auto, filter and compaction stream what exceeds the budget (80% of the free device memory
    # when none is given); zerocopy without a budget is TOTEM's mapped mode
    budget = gpu_memory if transfer in ("resident", "zerocopy") else gpu_budget(device, gpu_memory)
    if chunk_bytes < 64:
        raise InputError(f"--chunk-bytes must be at least 64, got {chunk_bytes}")
    if gpu_cache < 0:
        raise InputError(f"--gpu-cache must be at least 0, got {gpu_cache}")
    edges = EdgeOptions(transfer if device != "cpu" else "resident", budget, chunk_bytes,
                        cache=int(gpu_cache) if device != "cpu" else 0)
    engine = plan.engines.get((device, edges))
    if engine is None:
        # one engine per device: another one's device buffers and pinned copies go first
        old = [k for k in plan.engines if k[0] == device]
        for key in old:
            del plan.engines[key]
        if old:
            gc.collect()        # partitions and their views refer to each other
        engine = plan.engines[device, edges] = Engine(plan, device, edges=edges)
    engine.progress = progress
    t0 = time.perf_counter()
    engine.prepare(alg)
    prepare_s = time.perf_counter() - t0
    if gpu_memory is not None and device != "cpu" and transfer == "resident":
        for p in engine.parts:
            if p.kind == "gpu" and p.graph_bytes > gpu_memory:
                raise InputError(
                    f"GPU partition {p.pid} needs {p.graph_bytes} bytes of graph data but "
                    f"--gpu-memory is {gpu_memory} bytes; raise --cpu-share or the budget")
    if progress:
        progress.phase(f"{alg.name}: untimed warm-up run")
    values, records = engine.run(alg)        # untimed warm-up (JIT, caches)
    times, collect_s, step_walls = [], [], []
    for trial in range(max(int(trials), 1)):
        if progress:
            progress.phase(f"{alg.name}: trial {trial + 1} of {max(int(trials), 1)}")
        h2d0 = sum(p.h2d_bytes for p in engine.parts)
        values, records = engine.run(alg)
        times.append(engine.timings["run_s"])        # init + supersteps, as TOTEM times it
        collect_s.append(engine.timings["collect_s"])  # results back by global id
        step_walls.append([r["wall_s"] for r in records])
        h2d = sum(p.h2d_bytes for p in engine.parts) - h2d0
    if progress:
        progress.done()
    verified = None
    name = alg.name
    values, whole = alg.with_isolated(graph, values), graph.with_isolated()
    if verify:
        check_result(alg, whole, values)
        verified = True
    time_s = statistics.median(times)
    edges = alg.traversed_edges(whole, values, records)
    stats = plan.stats()
    parts = []
    for p, row in zip(engine.parts, stats["partitions"]):
        on_gpu, on_host = placed_bytes(p, device)
        parts.append(dict(kind=p.kind, vertices=row["vertices"], edges=row["edges"],
                          boundary_edges=row["boundary_edges"],
                          remote_vertices=row["remote_vertices"],
                          on_gpu_bytes=on_gpu, on_host_bytes=on_host))
    metrics = dict(
        algorithm=name,
        graph=dict(spec=graph.spec, vertices=graph.n_vertices, edges=graph.n_edges),
        partition=strategy, hub_sort=hub_sort, cpu_share=cpu_share, cpu_share_auto=auto,
        cpu_share_model=model, gpus=gpus, device=device,
        transfer_mode=transfer, gpu_cache=int(gpu_cache),
        source=source, **alg.metrics(),
        partitions=parts, beta=stats["beta"], beta_aggregated=stats["beta_aggregated"],
        prepare_s=prepare_s, time_s=time_s, trials_s=times, trials_step_wall_s=step_walls,
        collect_s=statistics.median(collect_s),
        teps=edges / time_s if time_s > 0 else 0.0,
        supersteps=len(records), per_superstep=records,
        transfer=transfer_summary(engine, records, h2d), threads=kernels_cpu.threads(),
        verified=verified)
    return Result(values, metrics, plan)
