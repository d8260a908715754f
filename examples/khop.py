"""A user algorithm, written outside the package: which vertices lie within K hops of a source?

Each superstep the vertices reached in the last one claim their unreached out-neighbours; claims
of remote vertices travel as messages combined with "max". The whole algorithm is a few functors
and callbacks: the operators (bsp.advance, bsp.receive) compile the functors for whatever runs
each partition (Numba on the CPU, numba-cuda on a GPU), balance the work, keep the frontier
queues, record the remote vertices written and stream edges that do not fit a GPU.

    python examples/khop.py --graph rmat:14 --k 2 --source 5 --partition RAND --cpu-share 0.5
    python -m totem_py.run --algorithm examples/khop.py --graph rmat:14 --k 2 --source 5
    mpirun -n 2 python examples/khop.py --graph rmat:14 --k 2 --source 5

It takes every option of `python -m totem_py.run` (--device, --gpus, --gpu-memory, --verify,
--output, ...); `--verify` compares with the NumPy reference below.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bsp import Frontier, Message, Mode, Vote, advance, atomic_max, put, receive  # noqa: E402
from totem_py import Algorithm  # noqa: E402
from totem_py.algorithms import Option, register  # noqa: E402
from totem_py.algorithms.common import SOURCE, collect, owned_lvid, source_vertex  # noqa: E402

HOP = Message(np.int32, "max", 0)


def claim(s, t, w, reached):
    """Edge (s, t) from the frontier: t is reached; true for the one thread that reached it
    (for a remote t: the first write of its slot this superstep)."""
    return reached[t] == 0 and atomic_max(reached, t, 1) == 0


def claim_message(v, m, reached):
    """A remote partition reached v."""
    return m != 0 and atomic_max(reached, v, 1) == 0


@register
class KHop(Algorithm):
    name = "khop"
    # `reached` carries one slot per remote vertex after the local ones: the outbox
    modes = (Mode("push", "out", "push", HOP, state="reached", records=True),)
    options = (SOURCE, Option("--k", dict(type=int, default=2, help="khop: hops (default 2)")))
    isolated = False        # a vertex in no edge (left out by --relabel) is within K hops of none

    def __init__(self, source, k):
        self.source, self.k = source, k

    @classmethod
    def from_options(cls, graph, source=None, seed=0, k=2, **_):
        return cls(source_vertex(graph, source, seed, cls.name), k)

    def init(self, part):
        s = part.state
        s.reached = part.alloc(np.int32, 0, ("out",))
        s.frontier = Frontier(part)
        lv = owned_lvid(part, self.source)
        if lv is not None:
            put(part, s.reached, lv, 1)
        s.frontier.start(lv)

    def compute(self, part, step, mode, box):
        advance(part, "out", part.state.frontier, claim, part.state.reached, outbox=box)

    def scatter(self, part, step, mode, inbox):
        receive(part, inbox, claim_message, part.state.reached, out=part.state.frontier)

    def vote(self, part, step):
        f = part.state.frontier
        edges = f.swap()
        return Vote(f.length if step + 1 < self.k else 0, edges)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "reached", np.int32, 0) != 0

    def reference(self, graph):
        """Breadth-first levels by NumPy, cut at K."""
        reached = np.zeros(graph.n_vertices, dtype=bool)
        reached[self.source] = True
        frontier = np.array([self.source])
        for _ in range(self.k):
            heads = np.concatenate([graph.indices[graph.indptr[v]:graph.indptr[v + 1]]
                                    for v in frontier]) if frontier.size else frontier
            frontier = np.unique(heads[~reached[heads]])
            reached[frontier] = True
        return reached


if __name__ == "__main__":
    from totem_py.run import cli
    sys.exit(cli(["--algorithm", "khop", *sys.argv[1:]]))
