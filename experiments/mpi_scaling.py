"""Weak scaling across MPI ranks on one machine, and what it predicts for rmat:30 on many nodes.

    python -m experiments.mpi_scaling [--ranks 1,2,4] [--scale 16] [--algorithms bfs,pagerank,sssp,cc]

Rank count R runs `mpirun -n R python -m totem_py.run` on rmat:(SCALE + log2 R) undirected, so the
graph grows with the ranks (one CPU partition per rank, `--cpu-share 1 --device cpu`: the bytes
between ranks do not depend on how a rank splits its share between its CPU and GPUs). Reported per
run: time, supersteps, bytes sent between ranks per superstep (all ranks together), the slowest
rank's compute and exchange time, and the ghost slots of the plan (G: for every rank, the distinct
vertices of other ranks its edges reach). Ranks beyond the machine's cores are oversubscribed:
their times are not a scaling result, their bytes are exact.

The model (`ghost_slots`): with vertices dealt to R ranks regardless of their neighbours, a vertex
of expected degree d is a ghost on each other rank that holds one of its neighbours, (R - 1) x
(1 - exp(-d / R)) ranks on average; R-MAT's expected degrees follow from the bits of a vertex id.
The tables compare the model's G with the measured one (also at up to 128 ranks, from the plans
alone); docs/results/mpi_scaling_2core.md uses it for rmat:30.

Writes OUT.json and OUT.txt (the table); OUT defaults to docs/results/mpi_scaling_<N>core for a
machine of N cores.
"""

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

from experiments.mpi import ROOT, launch
from experiments.provenance import header, provenance

RMAT_AB = 0.57 + 0.19          # probability a generated edge's source bit is 0 (= a + c)
EDGE_FACTOR = 16


def ghost_slots(scale, ranks, edge_factor=EDGE_FACTOR, p=RMAT_AB):
    """Expected ghost slots over all ranks of undirected rmat:SCALE dealt to `ranks` ranks."""
    if ranks == 1:
        return 0.0
    m = edge_factor * 2 ** scale           # generated edges; undirected doubles every degree
    total = 0.0
    for j in range(scale + 1):             # vertices whose id has j one-bits
        degree = 2 * m * p ** (scale - j) * (1 - p) ** j
        total += math.comb(scale, j) * (ranks - 1) * -math.expm1(-degree / ranks)
    return total


def run(ranks, scale, algorithm, trials, json_path):
    launch([sys.executable, "-m", "totem_py.run", "--graph", f"rmat:{scale}", "--undirected",
            "--algorithm", algorithm, "--cpu-share", "1", "--device", "cpu", "--trials",
            str(trials), "--json", json_path, "--quiet"], ranks,
           f"{algorithm} on rmat:{scale}, {ranks} ranks", timeout=600)
    return json.loads(Path(json_path).read_text())


def row(m, ranks, scale):
    steps = m["per_superstep"]
    sent = [s.get("bytes_sent", 0) for s in steps]
    per_rank = m.get("per_rank") or [dict(compute_s=sum(sum(s["compute_s"]) for s in steps),
                                          exchange_s=sum(s["exchange_s"] for s in steps))]
    ghosts = sum(p["remote_vertices"] for p in m["partitions"])
    return dict(ranks=ranks, graph=f"rmat:{scale}", edges=m["graph"]["edges"],
                algorithm=m["algorithm"], time_s=m["time_s"], supersteps=m["supersteps"],
                mb_per_superstep=sum(sent) / len(steps) / 1e6, mb_max_superstep=max(sent) / 1e6,
                mb_total=sum(sent) / 1e6,
                compute_s=max(r["compute_s"] for r in per_rank),
                exchange_s=max(r["exchange_s"] for r in per_rank),
                ghost_slots=ghosts, model_ghost_slots=round(ghost_slots(scale, ranks)),
                dense_exchanges=sum(sent) / (4 * ghosts) if ghosts else 0.0)


def table(rows):
    head = ("| ranks | graph | edges | algorithm | time s | supersteps | MB/superstep | max MB | "
            "total MB | compute s | exchange s | ghost slots G | model G | total / 4G |")
    lines = [head, "|" + " --- |" * 14]
    for r in rows:
        lines.append(f"| {r['ranks']} | {r['graph']} | {r['edges']:,} | {r['algorithm']} | "
                     f"{r['time_s']:.3f} | {r['supersteps']} | {r['mb_per_superstep']:.2f} | "
                     f"{r['mb_max_superstep']:.2f} | {r['mb_total']:.2f} | {r['compute_s']:.3f} | "
                     f"{r['exchange_s']:.3f} | {r['ghost_slots']:,} | {r['model_ghost_slots']:,} | "
                     f"{r['dense_exchanges']:.2f} |")
    return "\n".join(lines)


def model_check(scales=(16, 18, 20), ranks=(2, 8, 32, 128)):
    """The model's G against the plans' (no run needed: `partition(..., ranks=R)` on one process)."""
    import totem_py
    from partitioners import partition
    rows = []
    for scale in scales:
        g = totem_py.generate(f"rmat:{scale}", undirected=True)
        for r in ranks:
            plan = partition(g, "HIGH", 1.0, 1, ranks=r)
            measured = sum(p["remote_vertices"] for p in plan.stats()["partitions"])
            rows.append(dict(graph=f"rmat:{scale}", ranks=r, ghost_slots=measured,
                             model=round(ghost_slots(scale, r))))
    lines = ["| graph | ranks | ghost slots G (plan) | model G | model / plan |",
             "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['graph']} | {r['ranks']} | {r['ghost_slots']:,} | {r['model']:,} | "
              f"{r['model'] / r['ghost_slots']:.3f} |" for r in rows]
    return rows, "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--scale", type=int, default=16, help="R-MAT scale at one rank")
    ap.add_argument("--algorithms", default="bfs,pagerank,sssp,cc")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--model-scales", default="16,18,20",
                    help="R-MAT scales at which the ghost-slot model is checked against plans")
    ap.add_argument("--out", default=str(ROOT / "docs" / "results" /
                                         f"mpi_scaling_{os.cpu_count()}core"))
    args = ap.parse_args(argv)
    prov = provenance("experiments.mpi_scaling", argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for ranks in map(int, args.ranks.split(",")):
            scale = args.scale + int(round(math.log2(ranks)))
            for alg in args.algorithms.split(","):
                m = run(ranks, scale, alg, args.trials, Path(tmp) / "m.json")
                rows.append(row(m, ranks, scale))
                print(f"ranks {ranks} rmat:{scale} {alg}: {rows[-1]['time_s']:.3f} s, "
                      f"{rows[-1]['mb_per_superstep']:.2f} MB per superstep", flush=True)
    text = table(rows)
    print(text)
    checks, check_text = model_check(tuple(map(int, args.model_scales.split(","))))
    print(check_text)
    Path(args.out + ".json").write_text(json.dumps(dict(**prov, runs=rows, model_check=checks),
                                                   indent=1))
    Path(args.out + ".txt").write_text(
        f"{header(prov)}\n({os.cpu_count()} cores; ranks beyond them oversubscribed)\n\n{text}\n\n"
        f"The ghost-slot model against the plans (undirected R-MAT, one partition per rank):\n\n"
        f"{check_text}\n")


if __name__ == "__main__":
    main()
