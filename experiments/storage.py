"""Edges streamed from storage (GTS): each algorithm on a `.tcsr` graph whose edges stay in the
file (--host-memory), GPU only, its time and the bytes it read per superstep, beside the file's
sequential read rate measured by `dd` with direct I/O on the same disk. Each run is a child
process (`python -m totem_py.run --trials 0`: one timed run, no warm-up) that starts with the
file out of the OS page cache. Prints a table and writes JSON.

    python -m experiments.storage --graph rmat:27 --folder DIR [--host-memory 4G]
        [--gpu-memory "",2G] [--algorithms bfs,sssp,cc,bc,pagerank,pagerank_delta]
        [--device gpu] [--json out.json]

`--gpu-memory` lists the budgets to run each algorithm with ("" is the default: the GPU page
cache may hold every page after the first pass; a small one leaves no cache, so every pass
reads the file). The "vs dd" column is the bytes read in the supersteps that read, over their
time, against dd's rate; "bound" is GTS's ratio (its section 7.5): the time the bytes read
would take at dd's rate over the time the run took (GTS, PageRank on RMAT30, 10 rounds:
228 / 196 s = 1.16 from two SSDs, 190 / 153 s = 1.24 from memory).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

from experiments.harness import Report, Table, start
from experiments.host_memory_rss import child

ALGORITHMS = "bfs,sssp,cc,bc,pagerank,pagerank_delta"
GTS_PAPER = dict(graph="RMAT30, 114 GB of slotted pages", algorithm="pagerank, 10 rounds",
                 two_ssds=dict(seconds=196, bound_seconds=228, ratio=228 / 196),
                 memory=dict(seconds=153, bound_seconds=190, ratio=190 / 153),
                 two_hdds=dict(seconds=2843, bound_seconds=3454, ratio=3454 / 2843))


def uncache(path):
    """Drop the file's pages from the OS page cache (written back first)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def dd_rate(path, limit):
    """(bytes per second, whether direct I/O) of `dd` reading up to `limit` bytes of the file
    in 64 MiB blocks with iflag=direct (without it, from a file out of the page cache, where the
    file system refuses direct I/O)."""
    count = str(max(1, min(os.path.getsize(path), limit) >> 26))
    for flags in (["iflag=direct"], []):
        uncache(path)
        out = subprocess.run(["dd", f"if={path}", "of=/dev/null", "bs=64M", f"count={count}",
                              *flags], capture_output=True, text=True)
        m = re.search(r"^(\d+) bytes.* copied, ([\d.e+-]+) s", out.stderr, re.M)
        if out.returncode == 0 and m:
            return int(m.group(1)) / float(m.group(2)), bool(flags)
    raise SystemExit(f"dd could not read {path}: {out.stderr.strip()}")


def steps_of(metrics):
    return [dict(step=s["step"], wall_s=s["wall_s"], pages=s.get("pages", 0),
                 read_bytes=s.get("read_bytes", 0), cached_pages=s.get("cached_pages", 0))
            for s in metrics.get("per_superstep", [])]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", default="rmat:22", help="a generator spec (converted undirected "
                                                      "into FOLDER) or a .tcsr file")
    p.add_argument("--folder", default=".", help="where the .tcsr file is written")
    p.add_argument("--host-memory", default="4G")
    p.add_argument("--gpu-memory", default=",2G", help="comma-separated budgets, '' the default")
    p.add_argument("--algorithms", default=ALGORITHMS)
    p.add_argument("--device", default="gpu")
    p.add_argument("--dd-bytes", type=float, default=16e9, help="bytes dd reads")
    p.add_argument("--timeout", type=float, default=600, help="seconds a run may take")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    prov = start("experiments.storage", argv, gpu=args.device == "gpu")
    path = args.graph
    convert_s = None
    if not path.endswith(".tcsr"):
        path = os.path.join(args.folder, args.graph.replace(":", "_") + ".tcsr")
        if not os.path.exists(path):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "totem_py.convert", "--undirected", args.graph,
                            path], check=True)
            convert_s = time.perf_counter() - t0
    size = os.path.getsize(path)
    rate, direct = dd_rate(path, int(args.dd_bytes))
    written = "" if convert_s is None else f", written in {convert_s:.1f} s"
    print(f"{path}: {size / 1e9:.2f} GB{written}; dd {'iflag=direct' if direct else '(buffered)'} "
          f"{rate / 1e9:.2f} GB/s", flush=True)
    report = Report(args.json, prov, graph=args.graph, file=path, file_bytes=size,
                    convert_s=convert_s, dd_Bps=rate, dd_direct=direct,
                    host_memory=args.host_memory, gts_paper=GTS_PAPER)
    table = Table(("algorithm", -15), ("gpu-memory", -10), ("exit", 4), ("time s", 8, ".2f"),
                  ("steps", 5), ("read GB", 8, ".2f"), ("cached", 6), ("read GB/s", 9, ".2f"),
                  ("vs dd", 6, ".2f"), ("bound", 6, ".2f"), ("peak RSS GB", 11, ".2f"))
    out = os.path.join(args.folder, "storage_run.json")
    for alg in args.algorithms.split(","):
        for budget in args.gpu_memory.split(","):
            uncache(path)
            run = ["--graph", path, "--algorithm", alg, "--device", args.device,
                   "--cpu-share", "0", "--host-memory", args.host_memory, "--trials", "0",
                   "--json", out]
            run += ["--gpu-memory", budget] if budget else []
            if os.path.exists(out):
                os.remove(out)
            seconds, rss, code = child(run, timeout=args.timeout)
            m = json.load(open(out)) if code == 0 and os.path.exists(out) else {}
            steps = steps_of(m)
            reading = [s for s in steps if s["read_bytes"]]
            read = sum(s["read_bytes"] for s in steps)
            read_s = sum(s["wall_s"] for s in reading)
            total = sum(s["wall_s"] for s in steps)
            rec = dict(algorithm=alg, gpu_memory=budget or None, exit=code, wall_s=seconds,
                       peak_rss_bytes=rss, time_s=m.get("time_s"), supersteps=len(steps),
                       read_bytes=read, cached_pages=sum(s["cached_pages"] for s in steps),
                       read_Bps=read / read_s if read_s else None,
                       bound=read / rate / total if total else None, per_superstep=steps)
            report.add(rec)
            rb = rec["read_Bps"]
            table.row(alg, budget or "(free)", code, rec["time_s"], len(steps), read / 1e9,
                      rec["cached_pages"], None if rb is None else rb / 1e9,
                      None if rb is None else rb / rate, rec["bound"], rss / 1e9)
            print("    per superstep ms (GB read): " + " ".join(
                f"{1e3 * s['wall_s']:.0f}({s['read_bytes'] / 1e9:.2f})" for s in steps[:40]),
                flush=True)


if __name__ == "__main__":
    main()
