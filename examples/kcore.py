"""A user algorithm, written outside the package: the K-core of an undirected graph.

The K-core is what is left after repeatedly deleting every vertex of degree below K (Batagelj and
Zaversnik's peeling). Each superstep the vertices deleted in the last one take one off the degree
of each neighbour; a neighbour whose degree falls below K is deleted in turn. Decrements to remote
vertices are summed per vertex at the source and travel as one message each. A degree counts the
vertex's entries in the (symmetric) adjacency, self-loops included.

    python examples/kcore.py --graph rmat:14 --undirected --k 8 --partition HIGH --cpu-share 0.5
    python -m totem_py.run --algorithm examples/kcore.py --graph rmat:14 --undirected --k 8
    mpirun -n 2 python examples/kcore.py --graph rmat:14 --undirected --k 8

It takes every option of `python -m totem_py.run`; `--verify` compares with the NumPy peeling
below. The result is True for the vertices of the K-core.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsp import (Frontier, Message, Mode, Vote, advance, atomic_add, atomic_cas,  # noqa: E402
                 receive, vertex_map)
from totem_py import Algorithm  # noqa: E402
from totem_py.algorithms import Option, register  # noqa: E402
from totem_py.algorithms.common import collect  # noqa: E402
from totem_py.errors import InputError  # noqa: E402

DROPS = Message(np.int64, "sum", 0)


def start(v, degree, alive, out_degree, k):
    """Every vertex starts alive with its degree; those below K are deleted at once."""
    degree[v] = out_degree[v]
    alive[v] = 1 if out_degree[v] >= k else 0
    return alive[v] == 0


def drop(s, t, w, degree, alive, k, n_local):
    """Deleted s takes one off t's degree. A remote t: true at its slot's first decrement this
    superstep. A local t: true for the one thread that deletes it (its degree fell below K)."""
    old = atomic_add(degree, t, -1)
    if t >= n_local:
        return old == 0
    return old == k and atomic_cas(alive, t, 1, 0) == 1


def drop_message(v, m, degree, alive, k):
    """Remote deletions took -m off v's degree (one entry per vertex: no race)."""
    degree[v] += m
    if degree[v] < k and alive[v] == 1:
        alive[v] = 0
        return True
    return False


@register
class KCore(Algorithm):
    name = "kcore"
    # `degree` carries one slot per remote vertex after the local ones: the outbox of decrements
    modes = (Mode("push", "out", "push", DROPS, state="degree", records=True),)
    options = (Option("--k", dict(type=int, default=2, help="kcore: the core's K (default 2)")),)

    def __init__(self, k):
        self.k = k

    @classmethod
    def from_options(cls, graph, k=2, **_):
        if graph.directed:
            raise InputError("kcore needs an undirected graph (add --undirected)")
        return cls(k)

    @property
    def isolated(self):
        """A vertex in no edge (left out by --relabel) has degree 0: in the core for K <= 0."""
        return self.k <= 0

    def init(self, part):
        s = part.state
        s.degree = part.alloc(np.int64, 0, ("out",))
        s.alive = part.empty(part.n_local, np.int32)
        s.frontier = Frontier(part)
        vertex_map(part, start, s.degree, s.alive, part.out_degree, self.k, out=s.frontier)
        s.frontier.swap()

    def compute(self, part, step, mode, box):
        s = part.state
        advance(part, "out", s.frontier, drop, s.degree, s.alive, self.k, part.n_local,
                outbox=box)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, drop_message, s.degree, s.alive, self.k, out=s.frontier)

    def vote(self, part, step):
        f = part.state.frontier
        edges = f.swap()
        return Vote(f.length, edges)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "alive", np.int32, 0) != 0

    def reference(self, graph):
        """Peeling by NumPy, a wave of deletions at a time."""
        degree = graph.out_degree.astype(np.int64)
        alive = np.ones(graph.n_vertices, dtype=bool)
        wave = np.flatnonzero(degree < self.k)
        while wave.size:
            alive[wave] = False
            rows = [graph.indices[graph.indptr[v]:graph.indptr[v + 1]] for v in wave]
            np.subtract.at(degree, np.concatenate(rows), 1)
            wave = np.flatnonzero(alive & (degree < self.k))
        return alive


if __name__ == "__main__":
    from totem_py.run import cli
    sys.exit(cli(["--algorithm", "kcore", *sys.argv[1:]]))
