"""PageRank-Delta's paths, priority ones included: edges pushed and time, forced and auto.

    python -m experiments.pr_priority --graphs rmat:18,rmat:19,rmat:20 --threads 2

Each graph undirected, one plan per graph (HIGH, --cpu-share), every path and auto on every
device, repeats interleaved (each repeat runs every cell once); the table gives per cell the
median over repeats of the run's time and its `pushed_edges`, and the supersteps.
"""

import argparse
import statistics

import totem_py
from totem_py.algorithms import ALGORITHMS


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--graphs", default="rmat:18,rmat:19,rmat:20")
    ap.add_argument("--devices", default="cpu,emulated")
    ap.add_argument("--cpu-share", type=float, default=0.5)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.01)
    args = ap.parse_args(argv)
    paths = ("auto", *ALGORITHMS["pagerank_delta"].paths)
    print(f"{'graph':10} {'device':9} {'path':20} {'pushed_edges':>13} {'time_s':>8} steps")
    for spec in args.graphs.split(","):
        graph = totem_py.generate(spec, undirected=True)
        plan, cells = None, {}
        for _ in range(args.repeats):
            for device in args.devices.split(","):
                for path in paths:
                    r = totem_py.run(graph, "pagerank_delta", cpu_share=args.cpu_share,
                                     device=device, path=path, threads=args.threads, plan=plan,
                                     tolerance=args.tolerance)
                    plan = r.plan
                    m = r.metrics
                    cells.setdefault((device, path), []).append(
                        (m["time_s"], m["pushed_edges"], m["supersteps"]))
        for (device, path), runs in cells.items():
            time_s = statistics.median(t for t, _, _ in runs)
            pushed = statistics.median(e for _, e, _ in runs)
            print(f"{spec:10} {device:9} {path:20} {pushed:13,.0f} {time_s:8.3f} "
                  f"{statistics.median(s for _, _, s in runs):.0f}", flush=True)


if __name__ == "__main__":
    main()
