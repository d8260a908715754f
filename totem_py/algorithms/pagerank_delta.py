"""PageRank-Delta: PageRank to a tolerance by pushing residuals (Maiter's accumulative iteration,
the PageRank that Groute, SEP-Graph, Gunrock and HyTGraph run), instead of a fixed number of
rounds over every vertex.

Each vertex holds a rank r (0 at first) and a residual (1 - d) / n. A superstep takes the
active vertices, those whose residual exceeds tolerance / n: each adds its residual to its rank
and pushes d * residual / outdeg(v) to the residual of every out-neighbour (sum-combined messages
across partitions). The rest keep their residuals, which grow until they pass the threshold.
It stops when no residual exceeds it; the result is r + residual.

The result converges to the same PageRank as pagerank's rounds (r = (1-d)/n + d A r, no dangling
redistribution): at every step the exact ranks are r + sum_k (d P)^k residual, so the result is
below them everywhere and its L1 distance to them is at most d / (1 - d) times the residuals
left, i.e. at most tolerance * d / (1 - d) (the verifier checks both). The default tolerance,
0.01 (a residual of 1% of the mean rank), is Groute's and SEP-Graph's epsilon for ranks that
sum to n. The active set shrinks from every vertex to a few as the run converges, which is what
HyTGraph's engine choice per chunk is for (its figure 6a).
Races: residuals grow through atomic_add; a ghost slot's first message (its sum leaves 0: shares
are positive) records it.
"""

import numpy as np

from bsp import (Algorithm, Frontier, Message, Mode, Vote, advance, atomic_add, receive,
                 vertex_map)

from bsp.api import Option

from .. import reference as ref, verify as check
from ..errors import InputError
from .common import collect

RESIDUAL = Message(np.float64, "sum", 0.0)


def take(v, residual, rank, out_degree, share, damping):
    """An active vertex: its residual moves into its rank; its share to each out-neighbour."""
    r = residual[v]
    residual[v] = 0.0
    rank[v] += r
    d = out_degree[v]
    share[v] = damping * r / d if d > 0 else 0.0
    return False


def push(s, t, w, residual, share, n_local):
    return atomic_add(residual, t, share[s]) == 0.0 and t >= n_local


def add_message(v, m, residual):
    residual[v] += m
    return False


def above(v, residual, threshold):
    return residual[v] > threshold


class PageRankDelta(Algorithm):
    name = "pagerank_delta"
    modes = (Mode("push", "out", "push", RESIDUAL, state="residual", records=True),)
    options = (Option("--tolerance", dict(type=float, default=0.01, metavar="X",
                                          help="pagerank_delta: a vertex is active while its "
                                               "residual exceeds X / n (default 0.01)")),)

    def __init__(self, tolerance=0.01, damping=0.85):
        if not tolerance > 0:
            raise ValueError("PageRank-Delta needs a positive tolerance")
        self.tolerance = tolerance
        self.damping = damping

    @classmethod
    def from_options(cls, graph, tolerance=0.01, **_):
        if not tolerance > 0:
            raise InputError(f"--tolerance must be positive, got {tolerance}")
        return cls(tolerance)

    def traversed_edges(self, graph, values, records):
        # the first step pushes from every vertex (tolerance < 1 - d)
        return graph.n_edges + sum(r["frontier_edges"] for r in records)

    def reference(self, graph):
        return ref.pagerank_delta(graph, self.tolerance, self.damping)

    def verify(self, graph, values):
        return check.verify_pagerank_delta(graph, self.tolerance, values)

    def init(self, part):
        s, n = part.state, part.n_local
        size = max(part.n_vertices, 1)
        self.threshold = self.tolerance / size
        s.rank = part.full(n, 0.0, np.float64)
        s.residual = part.alloc(np.float64, 0.0, ("out",))
        part.kernels("boxes").box_fill(s.residual[:n], (1.0 - self.damping) / size)
        s.share = part.empty(n, np.float64)
        s.frontier = Frontier(part)
        vertex_map(part, above, s.residual, self.threshold, out=s.frontier)
        s.frontier.swap()

    def compute(self, part, step, mode, box):
        s = part.state
        f = s.frontier
        advance(part, "out", f, push, s.residual, s.share, part.n_local, outbox=box,
                source=take, source_args=(s.residual, s.rank, part.out_degree, s.share,
                                          self.damping))

    def scatter(self, part, step, mode, inbox):
        receive(part, inbox, add_message, part.state.residual)

    def vote(self, part, step):
        s = part.state
        vertex_map(part, above, s.residual, self.threshold, out=s.frontier)
        edges = s.frontier.swap()
        return Vote(s.frontier.length, edges)

    def collect(self, parts, n_vertices):
        return (collect(parts, n_vertices, "rank", np.float64, 0.0)
                + collect(parts, n_vertices, "residual", np.float64, 0.0))
