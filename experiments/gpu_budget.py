"""When the graph does not fit the GPU: hybrid (auto share) against GPU-only with edges in mapped
host memory, and against CPU-only, under one --gpu-memory budget.

    python -m experiments.gpu_budget --scale 24 --gpu-memory 1G --threads 16 --json out/budget.json

GPU-only cannot hold the edges in device memory under the budget, so its edges stay in pinned,
mapped host memory and its kernels read them over the bus (TOTEM's mapped-memory mode,
`--transfer zerocopy`). The hybrid keeps as many edges as fit the budget on the GPU (TOTEM's rule,
`--cpu-share auto`) and the rest on the CPU. Results are checked against the CPU-only run.
"""

import argparse
import json
import sys

import totem_py
from experiments.bench_gpu import same
from totem_py.run import parse_bytes

TOTEM_MAPPED_MS = {"bfs": 406, "pagerank": 498, "sssp": 250, "cc": 138}   # H100, rmat:24


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--gpu-memory", default="1G")
    ap.add_argument("--partition", default="HIGH")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--device", default="gpu", help="gpu, or emulated for a smoke test")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    budget = parse_bytes(args.gpu_memory)
    graph = totem_py.generate(f"rmat:{args.scale}", undirected=True, weighted=True)
    print(f"rmat:{args.scale} undirected: {graph.n_edges} edges; --gpu-memory {budget} bytes",
          flush=True)
    configs = (("cpu only", dict(cpu_share=1.0, device="cpu")),
               ("gpu only, zerocopy", dict(cpu_share=0.0, transfer="zerocopy")),
               (f"hybrid {args.partition} auto", dict(cpu_share="auto", transfer="resident")))
    print(f"{'algorithm':9} {'configuration':22} {'cpu share':>9} {'time ms':>9} "
          f"{'TOTEM mapped ms':>15}  check", flush=True)
    records = []
    for alg in args.algorithms.split(","):
        ref = None
        for label, options in configs:
            opts = dict(dict(device=args.device, gpu_memory=budget), **options)
            r = totem_py.run(graph, alg, partition=args.partition, trials=args.trials,
                             threads=args.threads, **opts)
            m = r.metrics
            check = "reference" if ref is None else ("same" if same(alg, r.values, ref)
                                                     else "DIFFERS")
            ref = r.values if ref is None else ref
            totem = TOTEM_MAPPED_MS.get(alg) if "zerocopy" in label else None
            print(f"{alg:9} {label:22} {m['cpu_share']:9.3f} {m['time_s'] * 1e3:9.2f} "
                  f"{totem or '-':>15}  {check}", flush=True)
            records.append(dict(m, configuration=label, check=check))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(scale=args.scale, gpu_memory=budget, records=records), f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
