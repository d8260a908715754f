"""When the graph does not fit the GPU: hybrid (auto share) against GPU-only with edges in mapped
host memory, and against CPU-only, under one --gpu-memory budget.

    python -m experiments.gpu_budget --scale 24 --gpu-memory 1G --threads 16 --json out/budget.json

GPU-only cannot hold the edges in device memory under the budget, so its edges stay in pinned,
mapped host memory and its kernels read them over the bus (TOTEM's mapped-memory mode,
`--transfer zerocopy`). The hybrid keeps as many edges as fit the budget on the GPU (TOTEM's rule,
`--cpu-share auto`) and the rest on the CPU. The `--zerocopy-shares` rows give the CPU a smaller
share and let the GPU partition read what does not fit from mapped host memory, as GPU only does.
Results are checked against the CPU-only run. Each configuration builds one plan, which every
algorithm reuses (experiments/harness.py).
"""

import argparse
import sys

from experiments.bench_gpu import TOTEM_MAPPED_MS
from experiments.harness import Report, Table, cells, make_graph, start
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
    prov = start("experiments.gpu_budget", argv, gpu=args.device == "gpu")
    budget = parse_bytes(args.gpu_memory)
    graph = make_graph(f"rmat:{args.scale}", weighted=True)
    print(f"--gpu-memory {budget} bytes", flush=True)
    configs = [("cpu only", dict(cpu_share=1.0, device="cpu")),
               ("gpu only, zerocopy", dict(cpu_share=0.0, transfer="zerocopy")),
               (f"hybrid {args.partition} auto", dict(cpu_share="auto", transfer="resident"))]
    configs += [(f"hybrid {args.partition} {share} zerocopy",
                 dict(cpu_share=float(share), transfer="zerocopy"))
                for share in filter(None, args.zerocopy_shares.split(","))]
    report = Report(args.json, prov, scale=args.scale, gpu_memory=budget)
    table = Table(("algorithm", -9), ("configuration", -26), ("cpu share", 9, ".3f"),
                  ("time ms", 9, ".2f"), ("TOTEM mapped ms", 15), ("check", -9))
    best = {}
    for c in cells(graph, configs, args.algorithms.split(","), trials=args.trials,
                   partition=args.partition, threads=args.threads, device=args.device,
                   gpu_memory=budget):
        m = c.metrics
        if m is None:
            sys.exit(f"{c.algorithm} {c.config}: {c.check}")
        totem = TOTEM_MAPPED_MS.get(c.algorithm) if "gpu only" in c.config else None
        table.row(c.algorithm, c.config, m["cpu_share"], m["time_s"] * 1e3, totem, c.check)
        report.add(dict(m, configuration=c.config, check=c.check))
        if c.config.startswith("hybrid"):
            best[c.algorithm] = min(best.get(c.algorithm, (m["time_s"], c.config)),
                                    (m["time_s"], c.config))
    gpu_only = {r["algorithm"]: r["time_s"] for r in report.records
                if r["configuration"].startswith("gpu")}
    print("best hybrid / gpu only: " + ", ".join(
        f"{alg} {t / gpu_only[alg]:.2f} ({label})" for alg, (t, label) in best.items()
        if alg in gpu_only), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
