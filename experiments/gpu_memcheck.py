"""Every GPU kernel on a small graph, for `compute-sanitizer --tool memcheck`.

    compute-sanitizer --tool memcheck python3 -m experiments.gpu_memcheck
    python -m experiments.gpu_memcheck emulated      (the same runs on the emulated device)

Runs each registered algorithm GPU-only and hybrid (two GPU partitions, resident and zerocopy edges), and
GPU-only with its edges streamed from the host (each transfer engine, and auto with a cache of hot
rows), on a small R-MAT graph with CuPy's memory pool off (every array its own allocation, so an
out-of-bounds access cannot land inside a neighbouring array), and checks the results with each
algorithm's verifier.
"""

import sys

import numpy as np

import totem_py
from totem_py.algorithms import ALGORITHMS

DEVICE = sys.argv[1] if len(sys.argv) > 1 else "gpu"


def main():
    if DEVICE == "gpu":
        import cupy
        cupy.cuda.set_allocator(None)
        cupy.cuda.set_pinned_memory_allocator(None)
    g = totem_py.generate("rmat:10", seed=3, weighted=True)
    # streamed: 16-edge chunks, the budget for staging buffers and 30% of the edges, a cache for
    # 10% of them (BC from this graph's source fills it: tests/test_stream.py)
    s = totem_py.generate("rmat:11", seed=2, weighted=True, undirected=True)
    window = 4 * (16 + int(s.out_degree.max()))
    streamed = dict(gpu_memory=int(0.3 * s.n_edges * 4) + 3 * window * 12, chunk_bytes=64)
    cached = dict(streamed, gpu_cache=int(0.1 * s.n_edges * 4))
    configs = [(g, 0.0, 1, "resident", {}), (g, 0.5, 2, "resident", {}),
               (g, 0.3, 2, "zerocopy", {})]
    configs += [(s, 0.0, 1, t, streamed) for t in ("filter", "compaction", "zerocopy")]
    configs += [(s, 0.0, 1, "auto", cached)]
    bad = 0
    for graph, share, gpus, transfer, more in configs:
        source = int(np.argmax(graph.out_degree))
        for alg in ALGORITHMS:
            r = totem_py.run(graph, alg, partition="RAND", cpu_share=share, gpus=gpus,
                             device=DEVICE, source=source, iterations=3, transfer=transfer,
                             **more)
            ok = r.metrics["algorithm"] == alg
            try:
                ok = ok and ALGORITHMS[alg].from_options(
                    graph, source=source, iterations=3).verify(graph, r.values) is None
            except totem_py.VerificationError:
                ok = False
            bad += not ok
            cache = r.metrics["transfer"].get("cache_bytes", 0) if more else 0
            print(f"{alg:9} share {share} gpus {gpus} {transfer:10} "
                  f"{'streamed' if more else '':8} {'cache %d B ' % cache if cache else ''}"
                  f"{'ok' if ok else 'WRONG'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
