"""The engine's configuration matrix across MPI ranks, against the serial references (a helper that
tests/test_mpi.py launches; not a test file itself):

    mpirun -n R python tests/mpi_driver.py REPORT.json [--devices cpu,emulated]

Rank 0 holds the graphs and the references; for every graph x HIGH/LOW/RAND x (cpu share, GPU
partitions per rank), and HIGH at two of those with each other local order (`hub_sort` hytgraph
and off), it builds the plan over R ranks and sends each rank its share; then on device
cpu and emulated every algorithm runs and rank 0 compares the gathered result with the reference
under tests/test_engine.py's tolerances. Rank 0 writes a JSON report (runs, failures) that the
test asserts on. An exception on any rank prints its traceback and aborts every rank.
"""

import json
import pathlib
import sys
import time
import traceback

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bsp.mpi import MpiEngine, scatter_plan, world  # noqa: E402
from partitioners import partition  # noqa: E402
from totem_py import generate  # noqa: E402
from totem_py.graph import Graph  # noqa: E402
from totem_py.harness import default_source  # noqa: E402

from test_engine import algorithms, expected, mismatch  # noqa: E402
from toys import toy_graphs, with_random_weights  # noqa: E402

STRATEGIES = ("HIGH", "LOW", "RAND")
CONFIGS = ((1.0, 1), (0.5, 1), (0.3, 2), (0.0, 1))     # (cpu share, GPU partitions per rank)
# (strategy, cpu share, GPU partitions per rank, hub_sort): the matrix in the default local
# order, then the other orders at two hybrid configurations
PLANS = tuple((s, share, gpus, "degree") for s in STRATEGIES for share, gpus in CONFIGS) + \
    tuple(("HIGH", share, gpus, h) for h in ("hytgraph", "off") for share, gpus in CONFIGS[1:3])
DEVICES = ("cpu", "emulated")


def graphs():
    """name -> weighted graph: the toys, a generated R-MAT graph, and a graph whose edges all
    leave three vertices, so that with 4 ranks one rank holds vertices but no edges (the toys
    `empty`, `single` and `self_loop` give ranks with no vertices at all)."""
    out = {name: with_random_weights(g, seed=3) for name, g in toy_graphs().items()}
    out["rmat9"] = generate("rmat:9", seed=2, weighted=True)
    src, dst = np.array([0, 1, 2, 2]), np.array([1, 2, 0, 5])
    out["few_edges"] = with_random_weights(Graph.from_edges(src, dst, 12, spec="few_edges"), 4)
    return out


def main(report, devices=DEVICES):
    comm = world()
    root = comm.rank == 0
    t0 = time.perf_counter()
    table = graphs() if root else None
    names = comm.bcast(sorted(table) if root else None)
    failures, runs, no_edges = [], 0, 0
    for name in names:
        graph = table[name] if root else None
        source = default_source(graph) if root and graph.n_vertices else None
        source = comm.bcast(source)
        want = expected(graph, source) if root else None
        for strategy, share, gpus, hub_sort in PLANS:
            plan = partition(graph, strategy, share, gpus, seed=1, ranks=comm.size,
                             hub_sort=hub_sort) if root else None
            rank_plan = scatter_plan(comm, plan)
            assert rank_plan.hub_sort == hub_sort
            edges = sum(int(rank_plan.out_degree(p).sum()) for p in rank_plan.local_pids)
            no_edges += comm.allreduce(int(edges == 0))
            for device in devices:
                engine = MpiEngine(rank_plan, comm, device, source_plan=plan)
                for alg in algorithms(source):
                    got, _ = engine.run(alg)
                    runs += 1
                    if root:
                        note = mismatch(alg.name, got, want[alg.name])
                        if note:
                            failures.append(f"{alg.name} {name} {strategy} share={share} "
                                            f"gpus={gpus} hub_sort={hub_sort} {device} "
                                            f"ranks={comm.size}: {note}")
    if root:
        pathlib.Path(report).write_text(json.dumps(dict(
            ranks=comm.size, runs=runs, failures=failures, rank_plans_without_edges=no_edges,
            seconds=time.perf_counter() - t0), indent=1))


if __name__ == "__main__":
    try:
        main(sys.argv[1], tuple(sys.argv[3].split(",")) if len(sys.argv) > 3 else DEVICES)
    except BaseException:
        comm = world()
        print(f"rank {comm.rank}:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        comm.Abort(1)
