"""Peak resident memory of a run whose edges stay in a .tcsr file (--host-memory) against the same
run with the graph in memory: each run is a child process of the command, and its peak resident
set (ru_maxrss from wait4, which counts the resident pages of mapped files) is read when it
exits. Prints a table and writes JSON.

    python -m experiments.host_memory_rss [--graph rmat:22] [--host-memory 128M]
        [--algorithm pagerank] [--device emulated] [--json out.json]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time


def child(argv, timeout=None):
    """(seconds, peak RSS bytes, exit code) of `python -m totem_py.run argv` in a child, killed
    after `timeout` seconds."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "totem_py.run", "--quiet", *argv])
    timer = threading.Timer(timeout, proc.kill) if timeout else None
    if timer:
        timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    if timer:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - t0, usage.ru_maxrss * 1024, proc.returncode


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", default="rmat:22")
    p.add_argument("--host-memory", default="128M")
    p.add_argument("--algorithm", default="pagerank")
    p.add_argument("--device", default="emulated")
    p.add_argument("--folder", default=None, help="where the .tcsr file goes (default: a "
                                                  "temporary folder)")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    folder = args.folder or tempfile.mkdtemp(prefix="host-memory-")
    path = os.path.join(folder, args.graph.replace(":", "_") + ".tcsr")
    if not os.path.exists(path):
        subprocess.run([sys.executable, "-m", "totem_py.convert", args.graph, path], check=True)
    rows = []
    for cap in (None, args.host_memory):
        out = os.path.join(folder, f"run_{cap or 'whole'}.json")
        run = ["--graph", path, "--algorithm", args.algorithm, "--device", args.device,
               "--json", out] + (["--host-memory", cap] if cap else [])
        seconds, rss, code = child(run)
        m = json.load(open(out)) if code == 0 else {}
        steps = m.get("per_superstep", [])
        rows.append(dict(host_memory=cap, exit=code, wall_s=seconds, peak_rss_bytes=rss,
                         time_s=m.get("time_s"),
                         read_bytes_per_superstep=[s.get("read_bytes", 0) for s in steps],
                         read_Bps=[s.get("read_bytes", 0) / max(s["compute_s"] if isinstance(
                             s["compute_s"], float) else max(s["compute_s"]), 1e-9)
                                   for s in steps]))
    ratio = rows[1]["peak_rss_bytes"] / rows[0]["peak_rss_bytes"]
    print(f"{args.algorithm} on {args.graph}, {args.device}, file {os.path.getsize(path)} bytes")
    print(f"{'host memory':>12} {'exit':>4} {'wall s':>8} {'time s':>8} {'peak RSS MiB':>13} "
          f"{'read MiB/step':>14}")
    for r in rows:
        steps = r["read_bytes_per_superstep"]
        mean = sum(steps) / len(steps) / 2 ** 20 if steps else 0
        print(f"{r['host_memory'] or 'whole':>12} {r['exit']:>4} {r['wall_s']:>8.1f} "
              f"{r['time_s'] or 0:>8.3f} {r['peak_rss_bytes'] / 2 ** 20:>13.1f} {mean:>14.1f}")
    print(f"peak RSS with the cap / without: {ratio:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(graph=args.graph, algorithm=args.algorithm, device=args.device,
                           runs=rows, ratio=ratio), f, indent=1)


if __name__ == "__main__":
    main()
