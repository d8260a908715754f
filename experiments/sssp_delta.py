"""SSSP bucket-width sweep: time per multiplier of the default CPU bucket width, on one device.

    python -m experiments.sssp_delta --graph rmat:24 --device gpu --cpu-share 0

The default width (totem_py.algorithms.sssp.default_delta) was chosen from sweeps like this one.
"""

import argparse
import sys

import totem_py
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
    args = ap.parse_args(argv)
    graph = totem_py.generate(args.graph, undirected=True, weighted=True)
    source = totem_py.run(graph, "bfs", cpu_share=1.0, device="cpu").metrics["source"]
    base = default_delta(graph)
    plan = None
    print(f"{args.graph}: default delta {base:.2f}")
    for mult in (float(m) for m in args.multipliers.split(",")):
        r = totem_py.run(graph, SSSP(source, delta=base * mult), cpu_share=args.cpu_share,
                         device=args.device, trials=args.trials, threads=args.threads, plan=plan)
        plan = r.plan
        print(f"x{mult:<6} delta {base * mult:9.2f}  {r.metrics['time_s'] * 1e3:9.2f} ms  "
              f"{r.metrics['supersteps']:4d} supersteps", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
