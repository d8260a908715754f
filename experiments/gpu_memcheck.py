"""Every GPU kernel on a small graph, for `compute-sanitizer --tool memcheck`.

    compute-sanitizer --tool memcheck python3 -m experiments.gpu_memcheck

Runs each algorithm GPU-only and hybrid (two GPU partitions, resident and zerocopy edges) on a
small R-MAT graph with CuPy's memory pool off (every array its own allocation, so an
out-of-bounds access cannot land inside a neighbouring array), and checks the results against the
serial references.
"""

import sys

import cupy
import numpy as np

import totem_py
from totem_py import reference as ref


def main():
    cupy.cuda.set_allocator(None)
    cupy.cuda.set_pinned_memory_allocator(None)
    g = totem_py.generate("rmat:10", seed=3, weighted=True)
    source = int(np.argmax(g.out_degree))
    want = dict(bfs=ref.bfs_levels(g, source), sssp=ref.sssp_distances(g, source),
                pagerank=ref.pagerank(g, 3), cc=ref.components(g),
                bc=ref.betweenness(g, [source]))
    bad = 0
    for share, gpus, transfer in ((0.0, 1, "resident"), (0.5, 2, "resident"),
                                  (0.3, 2, "zerocopy")):
        for alg in want:
            r = totem_py.run(g, alg, partition="RAND", cpu_share=share, gpus=gpus, device="gpu",
                             source=source, iterations=3, transfer=transfer)
            got, exp = r.values, want[alg]
            ok = (np.abs(got - exp).sum() < 1e-4 if alg == "pagerank" else
                  np.allclose(got, exp, rtol=1e-5) if alg in ("sssp", "bc") else
                  np.array_equal(got, exp))
            bad += not ok
            print(f"{alg:9} share {share} gpus {gpus} {transfer:9} {'ok' if ok else 'WRONG'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
