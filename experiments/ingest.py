"""Getting a graph in, stage by stage: generating rmat:SCALE, building its CSR, partitioning it
and building the partitions' views, and reading files (a text edge list, .npz, .tcsr), beside
GAP's converter generating and building the same scale.

    python -m experiments.ingest [--scale 24] [--threads 16] [--repeat 3] [--text-mb 1024]
        [--gap /path/to/gapbs/converter] [--algorithm bfs] [--dir /tmp] [--json ingest.json]

One process, Numba's kernels compiled by a small warm-up first. Each repeat times, for rmat:SCALE
(seed 0, directed as `totem_py.run --graph rmat:SCALE` has it):
  generate   the raw edges (`totem_py.generators.raw_edges`)
  csr        the clean CSR of them (bucketed, rows sorted, no duplicates or self-loops)
  plan       `--partition HIGH --cpu-share 0.5`, one GPU partition (partitioners.partition)
  transpose  the in-edges' CSR, where the algorithm needs the "in" view (`Graph.reverse`)
  views      the partitions' CSR views the algorithm needs (`bfs`: out and in)
then reads a text edge list of about --text-mb MB (rmat edges, `u<TAB>v` lines, written once
into --dir) with `totem_py.io.load`, and the same graph as .npz and as .tcsr. With --gap, GAP's
converter `-g SCALE -k 16` runs as many times, with OMP_NUM_THREADS=--threads; its "Generate
Time" and "Build Time" (a symmetrised graph: GAP's -g always makes one) are its stages.
Prints each stage's median wall time and CPU time (all threads; on a busy host the wall time
also counts the waits for a core), the peak resident memory after the first repeat's stage, and
writes every repeat's times as JSON.
"""

import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time
from statistics import median

from experiments.provenance import header, provenance

STAGES = ("generate", "csr", "plan", "transpose", "views")
FILES = ("text", "npz", "tcsr")


def peak_rss_gb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def rmat_stages(scale, views, seed=0):
    """{stage: seconds}, {stage: CPU seconds (all threads)} of getting rmat:scale in,
    {stage: peak RSS GB after it}, and the edges."""
    from kernels_cpu import buckets
    from partitioners import partition
    from totem_py.generators import raw_edges
    from totem_py.graph import Graph
    times, cpu, peaks = {}, {}, {}
    t, c = time.perf_counter(), time.process_time()

    def lap(stage):
        nonlocal t, c
        now, now_cpu = time.perf_counter(), time.process_time()
        times[stage], cpu[stage], peaks[stage] = now - t, now_cpu - c, peak_rss_gb()
        t, c = now, now_cpu
    src, dst = raw_edges("rmat", scale, 16, seed)
    lap("generate")
    bucketed = buckets.bucketed(src, dst, 1 << scale, scale)
    del src, dst
    graph = Graph(*buckets.sorted_csr(bucketed), spec=f"rmat:{scale}", checked=False)
    del bucketed
    lap("csr")
    plan = partition(graph, "HIGH", 0.5, 1, seed)
    lap("plan")
    if "in" in views:
        graph.reverse()
    lap("transpose")
    for name in views:
        plan.views(name)
    lap("views")
    return times, cpu, peaks, graph.n_edges


def write_text(scale, mb, path):
    """A text edge list of the raw edges of rmat:scale, cut after about `mb` MB (whole lines)."""
    from experiments.baselines import write_edge_list
    from totem_py import generate
    write_edge_list(generate(f"rmat:{scale}"), path)
    size = os.path.getsize(path)
    if size > mb * 2**20:
        with open(path, "r+b") as f:
            f.seek(int(mb * 2**20))
            f.truncate(f.tell() + f.readline().__len__())
    return os.path.getsize(path)


def text_scale(mb):
    """The smallest rmat scale whose edge list (about 15 bytes a line) exceeds `mb` MB."""
    scale = 10
    while 16 * 2**scale * 15 < mb * 2**20:
        scale += 1
    return scale


def file_reads(folder, mb):
    """{format: seconds} of loading the text edge list and the same graph as .npz and .tcsr,
    and the text file's size; files written on the first call."""
    from totem_py import io, store
    paths = {f: os.path.join(folder, f"ingest.{'txt' if f == 'text' else f}") for f in FILES}
    if not os.path.exists(paths["text"]):
        write_text(text_scale(mb), mb, paths["text"])
        graph = io.load(paths["text"])
        io.save_npz(graph, paths["npz"])
        store.write(graph, paths["tcsr"])
        del graph
    times = {}
    for f, path in paths.items():
        t0 = time.perf_counter()
        (store.load if f == "tcsr" else io.load)(path)
        times[f] = time.perf_counter() - t0
    return times, os.path.getsize(paths["text"])


def gap_converter(binary, scale, threads):
    """GAP's converter generating and building kron SCALE: {generate, build} seconds."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([binary, "-g", str(scale), "-k", "16", "-b", os.devnull], env=env,
                         capture_output=True, text=True, check=True).stdout
    found = {k: float(re.search(rf"{k} Time:\s+([0-9.]+)", out).group(1))
             for k in ("Generate", "Build")}
    return {"generate": found["Generate"], "build": found["Build"]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", type=int, default=24)
    ap.add_argument("--threads", type=int, default=None, help="Numba threads (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--text-mb", type=float, default=1024,
                    help="size of the text edge list read (0: none)")
    ap.add_argument("--dir", default=None, help="where the files go (default: a temporary one)")
    ap.add_argument("--gap", default=None, help="GAP's converter binary, run beside")
    ap.add_argument("--algorithm", default="bfs", help="whose views are built (default bfs)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    import numba
    if args.threads:
        numba.set_num_threads(args.threads)
    threads = numba.get_num_threads()
    prov = provenance("experiments.ingest", argv)
    print(header(prov), flush=True)
    from totem_py import generate
    from totem_py.harness import make_algorithm
    views = make_algorithm(args.algorithm, generate("rmat:8"), source=0)[0].views()
    rmat_stages(min(args.scale, 19), views)     # compiles the kernels (parallel forms too)
    runs, cpus, reads, gaps, peaks = [], [], [], [], None
    folder = args.dir or tempfile.mkdtemp(prefix="ingest_")
    os.makedirs(folder, exist_ok=True)
    text_bytes = 0
    for r in range(args.repeat):        # interleaved: ours, the files, GAP's
        times, cpu, stage_peaks, n_edges = rmat_stages(args.scale, views)
        runs.append(times)
        cpus.append(cpu)
        peaks = peaks or stage_peaks
        if args.text_mb > 0:
            if r == 0:
                with tempfile.TemporaryDirectory() as warm:
                    file_reads(warm, min(args.text_mb, 8))    # compiles the readers
            t, text_bytes = file_reads(folder, args.text_mb)
            reads.append(t)
        if args.gap:
            gaps.append(gap_converter(args.gap, args.scale, threads))
    print(f"rmat:{args.scale} ({n_edges} edges after cleanup), {threads} threads, "
          f"median of {args.repeat}; views {','.join(views)}")
    print(f"{'stage':12} {'s':>8} {'cpu s':>8} {'peak GB':>8}")
    for stage in STAGES:
        print(f"{stage:12} {median(r[stage] for r in runs):8.3f} "
              f"{median(c[stage] for c in cpus):8.3f} {peaks[stage]:8.2f}")
    print(f"{'total':12} {median(sum(r.values()) for r in runs):8.3f} "
          f"{median(sum(c.values()) for c in cpus):8.3f}")
    if gaps:
        for stage in ("generate", "build"):
            print(f"{'GAP ' + stage:12} {median(g[stage] for g in gaps):8.3f}")
        print(f"{'GAP total':12} {median(sum(g.values()) for g in gaps):8.3f}")
    if reads:
        for f in FILES:
            s = median(r[f] for r in reads)
            rate = f"{text_bytes / 1e6 / s:8.1f} MB/s" if f == "text" else ""
            print(f"{'read ' + f:12} {s:8.3f} {rate}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(prov, scale=args.scale, threads=threads, views=views,
                           n_edges=int(n_edges), stages=runs, cpu_s=cpus, peak_rss_gb=peaks, gap=gaps,
                           text_bytes=text_bytes, reads=reads), f, indent=1)


if __name__ == "__main__":
    main()
