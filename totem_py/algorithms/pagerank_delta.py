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
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from .common import Queue, collect

RESIDUAL = Message(np.float64, "sum", 0.0)


class PageRankDelta(Algorithm):
    name = "pagerank_delta"
    modes = (Mode("push", "out", "push", RESIDUAL, state="residual", records=True),)

    def __init__(self, tolerance=0.01, damping=0.85):
        if not tolerance > 0:
            raise ValueError("PageRank-Delta needs a positive tolerance")
        self.tolerance = tolerance
        self.damping = damping

    def init(self, part):
        s, n = part.state, part.n_local
        size = max(part.n_vertices, 1)
        self.threshold = self.tolerance / size
        k = part.kernels("pagerank")
        s.rank = part.full(n, 0.0, np.float64)
        s.residual = part.alloc(np.float64, 0.0, ("out",))
        part.kernels("boxes").box_fill(s.residual[:n], (1.0 - self.damping) / size)
        s.push = part.empty(n, np.float64)
        s.queue = Queue(part)
        k.prd_select(s.residual, n, self.threshold, s.queue.next, s.queue.next_len)
        s.queue.swap()

    def compute(self, part, step, mode, box):
        k, s, v = part.kernels("pagerank"), part.state, part.views["out"]
        q = s.queue
        k.prd_take(q.items, q.length, s.residual, s.rank, part.out_degree, s.push, self.damping)
        for indptr, indices, _, queue, qlen in v.queue_segments(q.items, q.length):
            k.prd_push(indptr, indices, v.n_local, s.push, s.residual, queue, qlen, box.touched,
                       box.count)

    def scatter(self, part, step, mode, inbox):
        part.kernels("pagerank").prd_scatter(inbox.values, inbox.lvid, part.state.residual)

    def vote(self, part, step):
        s = part.state
        part.kernels("pagerank").prd_select(s.residual, part.n_local, self.threshold,
                                            s.queue.next, s.queue.next_len)
        edges = s.queue.swap()
        return Vote(s.queue.length, edges)

    def collect(self, parts, n_vertices):
        return (collect(parts, n_vertices, "rank", np.float64, 0.0)
                + collect(parts, n_vertices, "residual", np.float64, 0.0))
