"""A user-defined algorithm, written outside the package: k-hop reach.

Which vertices lie within K hops of a source? Each superstep, the vertices reached in the last
step mark their out-neighbours; marks for remote vertices travel as messages combined with "or".
Everything below uses only the public callback API (bsp.Algorithm, Message, Mode, Vote) and a
Numba kernel of its own, and runs on every partitioning and device like the shipped algorithms.

    python examples/khop.py --graph rmat:14 --k 2 --source 5 --partition RAND --cpu-share 0.5
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from numba import njit, prange

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import totem_py                                  # noqa: E402
from bsp import Algorithm, Message, Mode, Vote   # noqa: E402

HOP = Message(np.uint8, "or", 0)


@njit(parallel=True, nogil=True, cache=True)
def khop_push(indptr, indices, n_local, frontier, reached, mark):
    """Benign races: every writer stores 1. `mark` has the ghost slots (the outbox) in its tail."""
    for v in prange(n_local):
        if frontier[v]:
            for e in range(indptr[v], indptr[v + 1]):
                t = indices[e]
                if t >= n_local or not reached[t]:
                    mark[t] = 1


@njit(parallel=True, nogil=True, cache=True)
def khop_scatter(inbox, lvids, mark):
    for i in prange(inbox.size):
        if inbox[i]:
            mark[lvids[i]] = 1


@njit(parallel=True, nogil=True, cache=True)
def khop_advance(n_local, reached, frontier, mark):
    """Newly marked vertices become the frontier; returns their number."""
    count = 0
    for v in prange(n_local):
        new = mark[v] != 0 and not reached[v]
        frontier[v] = new
        reached[v] |= new
        mark[v] = 0
        count += new
    return count


class KHopReach(Algorithm):
    name = "khop"
    modes = (Mode("push", "out", "push", HOP, state="mark"),)

    def __init__(self, source, k):
        self.source, self.k = source, k

    def init(self, part):
        s = part.state
        s.reached = part.xp.zeros(part.n_local, dtype=np.uint8)
        s.frontier = part.xp.zeros(part.n_local, dtype=np.uint8)
        s.mark = part.alloc(np.uint8, 0, ("out",))
        if part.plan.owner[self.source] == part.pid:
            lv = part.plan.lvid_of[self.source]
            s.reached[lv] = s.frontier[lv] = 1

    def compute(self, part, step, mode, box):
        s, v = part.state, part.views["out"]
        khop_push(v.indptr, v.indices, v.n_local, s.frontier, s.reached, s.mark)

    def scatter(self, part, step, mode, inbox):
        khop_scatter(inbox.values, inbox.lvid, part.state.mark)

    def vote(self, part, step):
        s = part.state
        new = khop_advance(part.n_local, s.reached, s.frontier, s.mark)
        return Vote(int(new) if step + 1 < self.k else 0)

    def collect(self, parts, n_vertices):
        out = np.zeros(n_vertices, dtype=bool)
        for p in parts:
            out[p.gvids] = p.to_host(p.state.reached, count=False) != 0
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", default="rmat:14")
    ap.add_argument("--k", type=int, default=2)
    ap.add_argument("--source", type=int, default=0)
    ap.add_argument("--partition", default="HIGH")
    ap.add_argument("--cpu-share", type=float, default=0.5)
    ap.add_argument("--device", default="emulated")
    args = ap.parse_args()
    from totem_py.generators import graph_from_spec
    graph = graph_from_spec(args.graph)
    result = totem_py.run(graph, KHopReach(args.source, args.k), partition=args.partition,
                          cpu_share=args.cpu_share, device=args.device)
    print(f"{int(result.values.sum())} vertices within {args.k} hops of {args.source} "
          f"({result.metrics['time_s'] * 1e3:.2f} ms, {result.metrics['supersteps']} supersteps)")


if __name__ == "__main__":
    main()
