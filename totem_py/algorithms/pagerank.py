"""PageRank: exactly K rounds of r(v) = (1-d)/n + d * sum_{(u,v)} r(u)/outdeg(u), r0 = 1/n,
d = 0.85, no dangling redistribution (DESIGN.md).

Pull over in-edges (TOTEM fig. 14): each round every partition publishes the contributions
r(u)/outdeg(u) of its boundary vertices, which land in the ghost slots of the partitions that read
them; no atomics anywhere.
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from .common import collect

# Contributions travel and are read as float32 (as GAP's scores are): half the bytes of the random
# reads that dominate a round. Sums and ranks stay float64; the error stays near 1e-7 relative.
CONTRIB = Message(np.float32, "sum", 0.0)


class PageRank(Algorithm):
    name = "pagerank"
    modes = (Mode("pull", "in", "pull", CONTRIB, state="contrib"),)

    def __init__(self, iterations=5, damping=0.85):
        if iterations < 1:
            raise ValueError("PageRank needs at least one round")
        self.iterations = iterations
        self.damping = damping

    def init(self, part):
        s = part.state
        n = max(part.n_vertices, 1)
        s.rank = part.full(part.n_local, 1.0 / n, np.float64)
        s.contrib = part.alloc(np.float32, 0.0, ("in",))
        part.kernels("pagerank").pr_contrib(s.rank, part.out_degree, s.contrib)

    def gather(self, part, step, mode):
        return part.state.contrib[part.views["in"].boundary_lvid]

    def compute(self, part, step, mode, box):
        k, s, v = part.kernels("pagerank"), part.state, part.views["in"]
        base = (1.0 - self.damping) / max(part.n_vertices, 1)
        for indptr, indices, _, first, end in v.row_segments():
            k.pr_pull(indptr[first:end + 1], indices, s.contrib, s.rank[first:end], base,
                      self.damping)

    def vote(self, part, step):
        part.kernels("pagerank").pr_contrib(part.state.rank, part.out_degree, part.state.contrib)
        return Vote(part.n_local if step + 1 < self.iterations else 0)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "rank", np.float64, 0.0)
