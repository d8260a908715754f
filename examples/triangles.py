"""A user algorithm, written outside the package: the triangles through each vertex of an
undirected graph.

A vertex's count is the number of triangles {u, v, x} it is in, on the simple graph (as
networkx's `triangles`: self-loops are left out, an edge listed twice counts once). For each
vertex u and each neighbour v the `intersect` operator merges their neighbour lists and counts
the neighbours they share; a triangle is found at u twice, through v and through x, so u's
count is half its total. The rows of a neighbour on another partition (a ghost) are brought to
the partition once, before the run, so no message travels and the count takes one superstep.
The graph's triangles are a third of the vertices' counts summed (`--json` key `triangles`).

    python examples/triangles.py --graph rmat:14 --undirected --partition HIGH --cpu-share 0.5
    python -m totem_py.run --algorithm examples/triangles.py --graph ca-GrQc.txt.gz --undirected

It takes every option of `python -m totem_py.run`; `--verify` compares with the sparse matrix
product below. Several MPI ranks are refused (the ranks do not exchange the rows of their
ghosts); GPUs and emulated GPUs run it.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsp import Message, Mode, Vote, intersect  # noqa: E402
from totem_py import Algorithm  # noqa: E402
from totem_py.algorithms import register  # noqa: E402
from totem_py.algorithms.common import collect  # noqa: E402
from totem_py.errors import InputError  # noqa: E402


def other(u, v, count):
    """The neighbours whose rows are merged with u's: all but u itself (a self-loop)."""
    return v != u


def shared(u, v, x, count):
    """x is a neighbour of both u and v: a triangle, unless x is one of them (a self-loop)."""
    return 1 if x != u and x != v else 0


def store(u, total, count):
    count[u] = total // 2


@register
class Triangles(Algorithm):
    name = "triangles"
    # nothing is sent: a push mode whose compute records no message
    modes = (Mode("count", "out", "push", Message(np.int64, "sum", 0), records=True),)
    isolated = 0

    @classmethod
    def from_options(cls, graph, **_):
        if graph.directed:
            raise InputError("triangles needs an undirected graph (add --undirected)")
        return cls()

    def start(self):
        self.triangles = 0

    def init(self, part):
        part.state.count = part.empty(part.n_local, np.int64)
        part.sorted_rows("out")         # the rows the count merges, ghosts' included

    def compute(self, part, step, mode, box):
        intersect(part, "out", shared, part.state.count, apply=store, edge_fn=other,
                  dtype=np.int64)

    def scatter(self, part, step, mode, inbox):
        pass

    def vote(self, part, step):
        return Vote(0, sums=(float(part.to_host(part.state.count).sum()),))

    def finished(self, total):
        self.triangles = int(round(total.sums[0])) // 3
        return True

    def metrics(self):
        return {"triangles": self.triangles}

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "count", np.int64, 0)

    def reference(self, graph):
        """diag(A^3) / 2 by SciPy, A the simple graph's adjacency (0/1, no diagonal)."""
        a = graph.to_scipy()
        a.sum_duplicates()
        a.setdiag(0)
        a.eliminate_zeros()
        a.data[:] = 1
        return np.asarray((a @ a).multiply(a).sum(axis=1)).ravel().astype(np.int64) // 2


if __name__ == "__main__":
    from totem_py.run import cli
    sys.exit(cli(["--algorithm", "triangles", *sys.argv[1:]]))
