"""Every shipped algorithm on the GPU operators under numba-cuda's simulator, checked by its
verifier (a helper that tests/test_gpu_backend.py runs in a process of its own; not a test
file itself):

    python tests/sim_driver.py REPORT.json

The simulator (NUMBA_ENABLE_CUDASIM=1, set here before numba.cuda is imported) runs the GPU
backend's kernels and the algorithms' functors as Python, thread by thread, on NumPy arrays:
about a thousand times slower than a CPU kernel, so only toy graphs, under HIGH, with every
partition a simulated GPU (two of them, exchanging through ghosts) and hybrid (a CPU partition
and one simulated GPU); rmat6 is undirected (PageRank's split rounds need it). PageRank-Delta and
converged PageRank run at a tolerance of 1e-3 (their step counts grow with the tolerance's log:
32 rounds instead of 75 for converged PageRank on star; the check uses the tolerance they ran
at). Writes a JSON report:
the runs, the failures, the templates of kernels_gpu/operators.py that were compiled, and the
modes each algorithm ran in.
"""

import json
import os
import pathlib
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bsp import Engine  # noqa: E402
from partitioners import partition  # noqa: E402
from totem_py.harness import default_source  # noqa: E402

from tests.support.matrix import algorithms, mismatch  # noqa: E402
from tests.support.toys import rmat_small, toy_graphs, with_random_weights  # noqa: E402

CONFIGS = ((0.0, 2), (0.5, 1))      # (cpu share, GPU partitions)
TOLERANCE = 1e-3


def graphs():
    toys = toy_graphs()
    return {"star": toys["star"], "disconnected": toys["disconnected"],
            "rmat6": rmat_small(seed=7, scale=6, n_edges=300).to_undirected()}


def main(report):
    import kernels_gpu.operators as gpu
    assert gpu.SIMULATED, "numba.cuda was loaded without its simulator"
    started = time.perf_counter()
    runs, failures, modes = 0, [], {}
    for name, graph in graphs().items():
        graph = with_random_weights(graph, seed=3)
        source = default_source(graph)
        for share, gpus in CONFIGS:
            engine = Engine(partition(graph, "HIGH", share, gpus, seed=1), "simulated")
            for label, alg in algorithms(graph, source, tolerance=TOLERANCE, tol=TOLERANCE):
                got, records = engine.run(alg)
                runs += 1
                modes.setdefault(alg.name, set()).update(r["mode"] for r in records)
                note = mismatch(alg, graph, got)
                if note:
                    failures.append(f"{label} {name} share={share} gpus={gpus}: {note}")
    pathlib.Path(report).write_text(json.dumps(dict(
        runs=runs, failures=failures, seconds=time.perf_counter() - started,
        templates=sorted({key[0].__name__ for key in gpu._KERNELS}),
        modes={k: sorted(v) for k, v in modes.items()})))


if __name__ == "__main__":
    main(sys.argv[1])
