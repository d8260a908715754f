"""When the graph does not fit the GPU: hybrid (auto share) against GPU-only with edges in mapped
host memory, and against CPU-only, under one --gpu-memory budget.

    python -m experiments.gpu_budget --scale 24 --gpu-memory 1G --threads 16 --json out/budget.json

GPU-only cannot hold the edges in device memory under the budget, so its edges stay in pinned,
mapped host memory and its kernels read them over the bus (TOTEM's mapped-memory mode,
`--transfer zerocopy`). The hybrid keeps as many edges as fit the budget on the GPU (TOTEM's rule,
`--cpu-share auto`) and the rest on the CPU. The `--zerocopy-shares` rows give the CPU a smaller
share and let the GPU partition read what does not fit from mapped host memory, as GPU only does.
Results are checked against the CPU-only run. Each configuration builds one plan, which every
algorithm reuses.
"""

import argparse
import json
import sys

import totem_py
from experiments.bench_gpu import TOTEM_MAPPED_MS, same
from experiments.provenance import header, provenance
from totem_py.run import parse_bytes


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--gpu-memory", default="1G")
    ap.add_argument("--partition", default="HIGH")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--zerocopy-shares", default="0.1",
                    help="cpu shares of extra hybrid rows whose GPU partition keeps what fits the "
                         "budget in device memory and reads the rest from mapped host memory")
    ap.add_argument("--device", default="gpu", help="gpu, or emulated for a smoke test")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    prov = provenance("experiments.gpu_budget", argv, gpu=args.device == "gpu")
    print(header(prov), flush=True)
    budget = parse_bytes(args.gpu_memory)
    graph = totem_py.generate(f"rmat:{args.scale}", undirected=True, weighted=True)
    print(f"rmat:{args.scale} undirected: {graph.n_edges} edges; --gpu-memory {budget} bytes",
          flush=True)
    configs = [("cpu only", dict(cpu_share=1.0, device="cpu")),
               ("gpu only, zerocopy", dict(cpu_share=0.0, transfer="zerocopy")),
               (f"hybrid {args.partition} auto", dict(cpu_share="auto", transfer="resident"))]
    configs += [(f"hybrid {args.partition} {share} zerocopy",
                 dict(cpu_share=float(share), transfer="zerocopy"))
                for share in filter(None, args.zerocopy_shares.split(","))]
    algorithms = args.algorithms.split(",")
    records, refs, best = [], {}, {}
    print(f"{'algorithm':9} {'configuration':26} {'cpu share':>9} {'time ms':>9} "
          f"{'TOTEM mapped ms':>15}  check", flush=True)
    for label, options in configs:
        plan = None     # one plan per configuration, shared by the algorithms
        for alg in algorithms:
            opts = dict(dict(device=args.device, gpu_memory=budget), **options)
            r = totem_py.run(graph, alg, partition=args.partition, trials=args.trials,
                             threads=args.threads, plan=plan, **opts)
            plan = r.plan
            m = r.metrics
            check = ("reference" if alg not in refs
                     else "same" if same(alg, r.values, refs[alg]) else "DIFFERS")
            refs.setdefault(alg, r.values)
            totem = TOTEM_MAPPED_MS.get(alg) if "gpu only" in label else None
            print(f"{alg:9} {label:26} {m['cpu_share']:9.3f} {m['time_s'] * 1e3:9.2f} "
                  f"{totem or '-':>15}  {check}", flush=True)
            records.append(dict(m, configuration=label, check=check))
            if label.startswith("hybrid"):
                best[alg] = min(best.get(alg, (m["time_s"], label)), (m["time_s"], label))
    gpu_only = {r["algorithm"]: r["time_s"] for r in records
                if r["configuration"].startswith("gpu")}
    print("best hybrid / gpu only: " + ", ".join(
        f"{alg} {t / gpu_only[alg]:.2f} ({label})" for alg, (t, label) in best.items()
        if alg in gpu_only), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(**prov, scale=args.scale, gpu_memory=budget, records=records), f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
