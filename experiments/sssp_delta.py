"""SSSP bucket-width sweep: time per multiplier of the default CPU bucket width, on one device.

    python -m experiments.sssp_delta --graph rmat:24 --device gpu --cpu-share 0
    python -m experiments.sssp_delta --graph rmat:22 --device gpu --cpu-share 0 \
        --budget-fraction 0.06 --multipliers 1,2,4,8,16

With `--budget-fraction`, the GPU's edges stream (transfer auto) beside a budget of that share of
the edge bytes (ids and weights), as experiments/bench_transfer.py runs them; each line
then also gives the bytes moved over the edge bytes. The default width
(totem_py.algorithms.sssp.default_delta) was chosen from sweeps like this one.
"""

import argparse
import sys

import totem_py
from experiments.bench_transfer import default_chunk_bytes, fraction_budget
from totem_py.algorithms import SSSP
from totem_py.algorithms.sssp import default_delta


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graph", default="rmat:20")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--cpu-share", type=float, default=1.0)
    ap.add_argument("--multipliers", default="0.5,1,2,4,8,16,64")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--budget-fraction", type=float, default=None)
    args = ap.parse_args(argv)
    graph = totem_py.generate(args.graph, undirected=True, weighted=True)
    source = totem_py.run(graph, "bfs", cpu_share=1.0, device="cpu").metrics["source"]
    base = default_delta(graph)
    plan = None
    stream = {}
    if args.budget_fraction is not None:
        stream = dict(gpu_memory=fraction_budget(graph, "sssp", args.budget_fraction),
                      transfer="auto", chunk_bytes=default_chunk_bytes(graph))
    print(f"{args.graph}: default delta {base:.2f}")
    for mult in (float(m) for m in args.multipliers.split(",")):
        r = totem_py.run(graph, SSSP(source, delta=base * mult), cpu_share=args.cpu_share,
                         device=args.device, trials=args.trials, threads=args.threads, plan=plan,
                         **stream)
        plan, m = r.plan, r.metrics
        moved = f"  moved {m['transfer']['volume_ratio']:5.2f}x the edge bytes" \
            if "volume_ratio" in m.get("transfer", {}) else ""
        print(f"x{mult:<6} delta {base * mult:9.2f}  {m['time_s'] * 1e3:9.2f} ms  "
              f"{m['supersteps']:4d} supersteps{moved}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
