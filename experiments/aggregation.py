"""Message aggregation (TOTEM, fig. 4): how many messages cross partitions with and without it.

Without aggregation every boundary edge (an edge whose destination lives in another partition)
carries one message per superstep; with aggregation a partition sends one pre-reduced message per
remote vertex it has edges to. For each graph and each partitioning (RAND, HIGH, LOW, BLOCK at the
given CPU share) this prints the edges, boundary edges, remote vertices, TOTEM's beta without
aggregation (boundary edges / edges), beta with aggregation (remote vertices / edges) and the
reduction factor (boundary edges / remote vertices), from `partitioners.partition(...).stats()`.

    python -m experiments.aggregation --graphs rmat:20,web-NotreDame.txt.gz --cpu-share 0.5 --json agg.json
"""

import argparse
import gc
import json
import sys
import time
from pathlib import Path

from experiments.provenance import header, provenance

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_GRAPHS = ",".join(["rmat:20"] + [str(DATA / f) for f in (
    "soc-Slashdot0902.txt.gz", "web-NotreDame.txt.gz", "road-usroads.mtx.gz")])
STRATEGIES = ("RAND", "HIGH", "LOW", "BLOCK")


def read_graph(totem_py, spec, undirected, seed):
    """A generator spec (rmat:/uniform:) or a file path."""
    if spec.split(":", 1)[0].lower() in ("rmat", "uniform"):
        return totem_py.generate(spec, seed=seed, undirected=undirected)
    return totem_py.load(spec, undirected=undirected)


def aggregation_row(plan, view):
    stats = plan.stats(view=view)
    edges = plan.graph.n_edges
    boundary = sum(p["boundary_edges"] for p in stats["partitions"])
    remote = sum(p["remote_vertices"] for p in stats["partitions"])
    return dict(edges=edges, boundary_edges=boundary, remote_vertices=remote,
                beta=stats["beta"], beta_aggregated=stats["beta_aggregated"],
                reduction=boundary / remote if remote else None,
                partitions=stats["partitions"])


def _fmt_reduction(x):
    return "-" if x is None else f"{x:.2f}x"


def print_table(rows):
    head = ["graph", "vertices", "partition", "edges", "boundary edges", "remote vertices",
            "beta (no aggr.)", "beta (aggr.)", "reduction"]
    lines = [head]
    for r in rows:
        lines.append([r["graph"], f"{r['vertices']:,}", r["strategy"], f"{r['edges']:,}",
                      f"{r['boundary_edges']:,}", f"{r['remote_vertices']:,}",
                      f"{r['beta']:.4f}", f"{r['beta_aggregated']:.4f}", _fmt_reduction(r["reduction"])])
    widths = [max(len(x[i]) for x in lines) for i in range(len(head))]
    for k, line in enumerate(lines):
        print(" | ".join(c.ljust(w) if i in (0, 2) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(line, widths))).rstrip())
        if k == 0:
            print("-+-".join("-" * w for w in widths))
    sys.stdout.flush()


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m experiments.aggregation",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", default=DEFAULT_GRAPHS,
                   help="comma-separated graph specs: rmat:S[:EF], uniform:S[:EF] or files")
    p.add_argument("--strategies", default=",".join(STRATEGIES))
    p.add_argument("--cpu-share", type=float, default=0.5)
    p.add_argument("--gpus", type=int, default=1)
    p.add_argument("--undirected", action="store_true", help="add the reverse of every edge")
    p.add_argument("--view", default="out", help="which edges the plan counts (plan.stats view)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write the table here")
    args = p.parse_args(argv)
    args.graphs = [g.strip() for g in args.graphs.split(",") if g.strip()]
    args.strategies = [s.strip().upper() for s in args.strategies.split(",") if s.strip()]
    if not 0.0 <= args.cpu_share <= 1.0:
        p.error(f"--cpu-share must be in [0, 1], got {args.cpu_share}")
    if args.gpus < 1:
        p.error("--gpus must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    prov = provenance("experiments.aggregation", argv)
    print(header(prov), flush=True)
    import totem_py
    from partitioners import partition
    from totem_py import InputError

    rows = []
    try:
        for spec in args.graphs:
            t0 = time.perf_counter()
            graph = read_graph(totem_py, spec, args.undirected, args.seed)
            load_s = time.perf_counter() - t0
            print(f"{spec}: {graph.n_vertices:,} vertices, {graph.n_edges:,} edges "
                  f"(read in {load_s:.1f} s)", file=sys.stderr, flush=True)
            for strategy in args.strategies:
                plan = partition(graph, strategy, args.cpu_share, args.gpus, args.seed)
                row = aggregation_row(plan, args.view)
                rows.append(dict(graph=spec, vertices=graph.n_vertices, strategy=strategy,
                                 cpu_share=args.cpu_share, gpus=args.gpus, load_s=load_s, **row))
                del plan
            del graph
            gc.collect()
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"message aggregation at cpu-share {args.cpu_share} with {args.gpus} GPU partition(s)"
          f"{' (undirected)' if args.undirected else ''}")
    print_table(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(**prov, cpu_share=args.cpu_share, gpus=args.gpus, undirected=args.undirected,
                           view=args.view, rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
