"""The engine across MPI ranks, every rank loading and partitioning only its share (a helper that
tests/test_mpi.py launches; not a test file itself):

    mpirun -n R python tests/mpi_driver.py REPORT.json matrix [--devices cpu,emulated]
    mpirun -n R python tests/mpi_driver.py REPORT.json acceptance

`matrix`: the toy graphs (written as .tcsr files by rank 0, each rank reading its rows) and a
generated R-MAT graph (each rank generating its edges), for every HIGH/LOW/RAND x (cpu share, GPU
partitions per rank), and HIGH at two of those with each other local order (`hub_sort` hytgraph
and off): each rank checks that the plan it built with the others equals its part of the
one-process `partition(graph, ..., ranks=R)`, array for array and view for view; then every
algorithm of the matrix (tests/support/matrix.py) runs and rank 0 checks the gathered result
with the algorithm's verifier: at one and two ranks on one of the devices (cpu, emulated) per
(graph, plan), taking turns; at four ranks on every fourth (graph, plan), taking turns
(the exchange between ranks is the same for both devices, and every plan is still compared;
four ranks share a small machine's cores).

`acceptance` (what `python -m experiments.mpi_check` checks, in one launch): generated graphs and
real graphs from ../shared/data converted to .tcsr, every registered built-in algorithm on a
hybrid plan, the result against the one-process run's under the algorithm's `compare` (integers
exactly), or its verifier where results depend on the plan, from the same default source (found
by the ranks in the largest weak component).

Rank 0 writes a JSON report (runs, failures) that the test asserts on. An exception on any rank
prints its traceback and aborts every rank.
"""

import json
import os
import pathlib
import shutil
import sys
import tempfile
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bsp import Engine  # noqa: E402
from bsp.mpi import guarded, world  # noqa: E402
from partitioners.distributed import agreed, generate_share, plan_ranks, read_share, weigh  # noqa: E402
from partitioners import partition  # noqa: E402
from totem_py import generate, io, store  # noqa: E402
from totem_py.generators import Generator  # noqa: E402
from totem_py.harness import default_source as one_source, engine_source, make_algorithm, run  # noqa: E402
from totem_py.graph import Graph  # noqa: E402

from tests.support.matrix import BUILT_IN, algorithms, mismatch  # noqa: E402
from tests.support.toys import toy_graphs, with_random_weights  # noqa: E402

STRATEGIES = ("HIGH", "LOW", "RAND", "BLOCK")
CONFIGS = ((1.0, 1), (0.5, 1), (0.3, 2), (0.0, 1))     # (cpu share, GPU partitions per rank)
# (strategy, cpu share, GPU partitions per rank, hub_sort): the matrix in the default local
# order, then the other orders at two hybrid configurations
PLANS = tuple((s, share, gpus, "degree") for s in STRATEGIES for share, gpus in CONFIGS) + \
    tuple(("HIGH", share, gpus, h) for h in ("hytgraph", "off") for share, gpus in CONFIGS[1:3])
DEVICES = ("cpu", "emulated")
VIEWS = ("out", "in", "both")
GENERATED = "rmat:9"            # the matrix's generated graph (seed 2, weighted)
# acceptance: (spec, undirected); files are converted to .tcsr first
DATA = pathlib.Path(os.environ.get("TOTEM_DATA", HERE.parent.parent / "shared" / "data"))
ROAD = DATA / "road-usroads.mtx.gz"     # thousands of supersteps: not at more than two ranks
ACCEPTANCE = (("rmat:12", True), ("rmat:11", False), ("uniform:11", True),
              (DATA / "facebook_combined.txt.gz", True), (DATA / "wiki-Vote.txt.gz", False),
              (DATA / "rome99.gr.gz", False), (ROAD, False))
MANY = 25       # supersteps: algorithms that take more on a toy take turns (a third of the runs)


def toys():
    """name -> weighted graph: the toys, and a graph whose edges all leave three vertices, so
    that with 4 ranks one rank holds vertices but no edges (the toys `empty`, `single` and
    `self_loop` give ranks with no vertices at all)."""
    out = {name: with_random_weights(g, seed=3) for name, g in toy_graphs().items()}
    src, dst = np.array([0, 1, 2, 2]), np.array([1, 2, 0, 5])
    out["few_edges"] = with_random_weights(Graph.from_edges(src, dst, 12, spec="few_edges"), 4)
    return out


def plan_difference(mine, plan):
    """None if RankPlan `mine` is its rank's part of the one-process `plan`, else a note."""
    if mine.kinds != plan.kinds or mine.rank_of != plan.rank_of:
        return f"kinds / ranks {mine.kinds} {mine.rank_of} != {plan.kinds} {plan.rank_of}"
    for p in mine.local_pids:
        if not np.array_equal(mine.gvids[p], plan.gvids[p]):
            return f"partition {p}: other vertices or order"
        if not np.array_equal(mine.out_degree(p), plan.out_degree(p)):
            return f"partition {p}: other out-degrees"
        for view in VIEWS:
            a, b = mine.views(view)[p], plan.views(view)[p]
            for f in ("indptr", "indices", "ghost_gvid", "ghost_ptr", "boundary_lvid"):
                x, y = getattr(a, f), getattr(b, f)
                if x.dtype != y.dtype or not np.array_equal(x, y):
                    return f"partition {p}, view {view}: {f} differs"
            if (a.weights is None) != (b.weights is None) or (
                    a.weights is not None and not np.array_equal(a.weights, b.weights)):
                return f"partition {p}, view {view}: weights differ"
            if (a.n_local, a.boundary_edges) != (b.n_local, b.boundary_edges):
                return f"partition {p}, view {view}: n_local or boundary_edges differ"
            if len(a.peer_pos) != len(b.peer_pos) or not all(
                    np.array_equal(x, y) for x, y in zip(a.peer_pos, b.peer_pos)):
                return f"partition {p}, view {view}: peer_pos differs"
    return None


def settle(comm):
    """Wait for every rank with the engine's sleeping waits, not in MPI's spinning collectives:
    after work that rank 0 does alone (the references, one-process runs), so that the waiting
    ranks leave the cores to it (4 ranks on 2 cores with another CPU-bound process beside spent
    most of the matrix spinning)."""
    comm.waiter.wait([comm.Ibarrier()], "settle")


def matrix(comm, folder, devices):
    root = comm.rank == 0
    names = sorted(toys()) + [GENERATED]
    failures, runs, no_edges, plans = [], 0, 0, 0
    table = toys() if root else {}
    for g, name in enumerate(names):
        if name == GENERATED:
            graph = generate(GENERATED, seed=2, weighted=True)

            def share():
                return generate_share(comm, Generator(GENERATED, 2), weighted=True)
        else:
            path = f"{folder}/{name}.tcsr"
            if root:
                store.write(table[name], path)
            settle(comm)
            graph = store.load(path)

            def share():
                return read_share(comm, agreed(comm, store.Store, path))
        source = one_source(graph) if graph.n_vertices else None
        matrix, steps = algorithms(graph, source), {}
        settle(comm)
        for k, (strategy, cpu_share, gpus, hub_sort) in enumerate(PLANS):
            mine = plan_ranks(comm, share(), strategy, cpu_share, gpus, 1, hub_sort, VIEWS)
            plans += 1
            note = plan_difference(mine, partition(graph, strategy, cpu_share, gpus, seed=1,
                                                   ranks=comm.size, hub_sort=hub_sort))
            if note:
                failures.append(f"plan of {name} {strategy} share={cpu_share} gpus={gpus} "
                                f"hub_sort={hub_sort} rank {comm.rank}: {note}")
            edges = sum(int(mine.out_degree(p).sum()) for p in mine.local_pids)
            no_edges += comm.allreduce(int(edges == 0))
            turn = g + k
            if comm.size <= 2:
                run_on = (devices[turn % len(devices)],)
            else:       # every fourth (graph, plan), the devices taking turns
                run_on = () if turn % 4 else (devices[turn // 4 % len(devices)],)
            # the algorithms of many supersteps (PageRank-Delta's and converged PageRank's are
            # three quarters of them, which dominate under mpirun) take turns: the i-th of them
            # on a third of the (graph, plan) runs
            for device in run_on:
                engine = Engine(mine, device, comm=comm)
                heavy = 0
                for label, alg in matrix:
                    if steps.get(label, 0) >= MANY:
                        heavy += 1
                        if (turn - heavy) % 3:
                            continue
                    got, records = engine.run(alg)
                    steps.setdefault(label, len(records))
                    runs += 1
                    if root:
                        note = mismatch(alg, graph, got)
                        if note:
                            failures.append(f"{label} {name} {strategy} share={cpu_share} "
                                            f"gpus={gpus} hub_sort={hub_sort} {device} "
                                            f"ranks={comm.size}: {note}")
    failures = [f for fs in comm.allgather(failures) for f in fs]
    return dict(runs=runs, plans=plans, failures=failures, rank_plans_without_edges=no_edges)


def acceptance(comm, folder):
    """mpi_check's comparison for every algorithm on every graph of ACCEPTANCE that is there
    (but the road graph's thousands of supersteps at more than two ranks: 8 of 18 s at four);
    `graphs` names those it ran."""
    root = comm.rank == 0
    failures, runs, graphs = [], 0, []
    for k, (spec, undirected) in enumerate(ACCEPTANCE):
        generated = isinstance(spec, str)
        if comm.size > 2 and spec == ROAD or not generated and not spec.exists():
            continue
        graphs.append(pathlib.Path(str(spec)).name)
        if not generated:
            path = f"{folder}/{k}.tcsr"
            if root:
                store.write(io.load(spec), path)
            settle(comm)
        for cls in BUILT_IN:
            name, weighted = cls.name, cls.needs_weights
            share = (generate_share(comm, Generator(spec, 0), undirected, weighted) if generated
                     else read_share(comm, agreed(comm, store.Store, path), undirected))
            summary, bounds = share.summary(comm), share.bounds
            find = "source" in cls.vertex_options()    # the default source, as the CLI finds it
            alg, _ = make_algorithm(name, summary, 0 if find else None)
            weigh(comm, share, alg)
            mine = plan_ranks(comm, share, "HIGH", 0.5, 1, 0, "degree",
                              alg.views() + ["both"] * find)
            engine = Engine(mine, "emulated", comm=comm)
            source = engine_source(engine, 0, bounds) if find else None
            alg, source = make_algorithm(name, summary, source)
            got, _ = engine.run(alg)
            runs += 1
            if root:
                graph = (generate(spec, 0, undirected, weighted) if generated
                         else io.load(spec, undirected))
                one = run(graph, name, "HIGH", 0.5, 1, "emulated")
                note = (cls.compare(one.values, got) if cls.same_on_every_plan
                        else mismatch(alg, graph, got))
                if one.metrics["source"] != source:
                    note = f"source {source}, one process's {one.metrics['source']}"
                if note:
                    failures.append(f"{name} on {pathlib.Path(str(spec)).name} "
                                    f"{'undirected' if undirected else 'directed'} at "
                                    f"{comm.size} ranks: {note}")
            settle(comm)
    return dict(runs=runs, failures=failures, graphs=graphs)


def main(report, part, devices=DEVICES):
    comm = guarded(world(), 300)
    t0 = time.perf_counter()
    folder = comm.bcast(tempfile.mkdtemp(prefix="mpi_driver.") if comm.rank == 0 else None)
    out = matrix(comm, folder, devices) if part == "matrix" else acceptance(comm, folder)
    comm.Barrier()
    if comm.rank == 0:
        shutil.rmtree(folder)
        pathlib.Path(report).write_text(json.dumps(dict(
            ranks=comm.size, seconds=time.perf_counter() - t0, **out), indent=1))


if __name__ == "__main__":
    try:
        main(sys.argv[1], sys.argv[2],
             tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 else DEVICES)
    except BaseException:
        comm = world()
        print(f"rank {comm.rank}:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        comm.Abort(1)
