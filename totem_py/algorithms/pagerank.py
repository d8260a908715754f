"""PageRank: exactly K rounds of r(v) = (1-d)/n + d * sum_{(u,v)} r(u)/outdeg(u), r0 = 1/n,
d = 0.85, no dangling redistribution (DESIGN.md; TOTEM's form).

Pull over in-edges (TOTEM fig. 14): each round every partition publishes the contributions
r(u)/outdeg(u) of its boundary vertices, which land in the ghost slots of the partitions that read
them; no atomics anywhere. Contributions travel and are read as float32 (as GAP's scores are):
half the bytes of the random reads that dominate a round; sums and ranks stay float64 (relative
error near 1e-7).
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote, pull, vertex_map, vertex_values
from bsp.api import Option

from .. import reference as ref, verify as check
from ..errors import InputError
from .common import collect

CONTRIB = Message(np.float32, "sum", 0.0)


def contribution(u, rank, out_degree, contrib):
    d = out_degree[u]
    contrib[u] = rank[u] / d if d > 0 else 0.0
    return False


def in_contribution(v, u, w, contrib, rank, base, damping):
    return contrib[u]


def new_rank(v, total, contrib, rank, base, damping):
    rank[v] = base + damping * total


def boundary_contribution(u, contrib):
    return contrib[u]


class PageRank(Algorithm):
    name = "pagerank"
    modes = (Mode("pull", "in", "pull", CONTRIB, state="contrib"),)
    options = (Option("--iterations", dict(type=int, default=5, metavar="K",
                                           help="pagerank: rounds (default 5)")),)

    def __init__(self, iterations=5, damping=0.85):
        if iterations < 1:
            raise ValueError("PageRank needs at least one round")
        self.iterations = iterations
        self.damping = damping

    @classmethod
    def from_options(cls, graph, iterations=5, **_):
        if iterations < 1:
            raise InputError(f"--iterations must be at least 1, got {iterations}")
        return cls(iterations)

    def traversed_edges(self, graph, values, records):
        return graph.n_edges * len(records)

    def reference(self, graph):
        return ref.pagerank(graph, self.iterations, self.damping)

    def verify(self, graph, values):
        return check.verify_pagerank(graph, self.iterations, values)

    def init(self, part):
        s = part.state
        s.rank = part.full(part.n_local, 1.0 / max(part.n_vertices, 1), np.float64)
        s.contrib = part.alloc(np.float32, 0.0, ("in",))
        vertex_map(part, contribution, s.rank, part.out_degree, s.contrib)

    def gather(self, part, step, mode):
        return vertex_values(part, boundary_contribution, part.state.contrib,
                             at=part.views["in"].boundary_lvid, dtype=np.float32)

    def compute(self, part, step, mode, box):
        s = part.state
        base = (1.0 - self.damping) / max(part.n_vertices, 1)
        pull(part, "in", in_contribution, s.contrib, s.rank, base, self.damping, apply=new_rank)

    def vote(self, part, step):
        s = part.state
        vertex_map(part, contribution, s.rank, part.out_degree, s.contrib)
        return Vote(part.n_local if step + 1 < self.iterations else 0)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "rank", np.float64, 0.0)
