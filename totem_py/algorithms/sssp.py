"""Single-source shortest paths: distances from one source (+inf unreachable).

Push relaxation of a frontier in delta-stepping buckets: a step relaxes the pending vertices with
distance below the bucket's bound; when no partition has any, the bound moves to the bucket of the
smallest pending distance (the engine's `advance`). delta=inf is plain frontier Bellman-Ford.
Messages are tentative distances, min-combined.
"""

import math

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from .common import collect, owned_lvid

DIST = Message(np.float64, "min", np.inf)


GPU_WIDER = 16


def default_delta(graph, gpus=False):
    """Bucket width: the mean weight x 2 / mean degree (Meyer and Sanders' Theta(1/d) for uniform
    weights, scaled to the weights; factors 1/64..64 measured on rmat:20 and rmat:22 undirected:
    2 to 4 were fastest on rmat:20 within the noise, 2 on rmat:22 by about 1.3x, 2 on rmat:24 with
    16 threads). GPUs want more work per superstep: GPU_WIDER times wider buckets were fastest for
    GPU-only SSSP on rmat:24 on the H100 (84 ms against 116 ms at the CPU's width)."""
    if graph.n_edges == 0:
        return 1.0
    mean_w = float(graph.weights.mean()) if graph.weights is not None else 1.0
    mean_deg = graph.n_edges / max(graph.n_vertices, 1)
    width = mean_w * 2.0 / mean_deg * (GPU_WIDER if gpus else 1)
    return max(width, 1e-9)


class SSSP(Algorithm):
    name = "sssp"
    modes = (Mode("push", "out", "push", DIST, state="dist", records=True),)
    needs_weights = True

    def __init__(self, source, delta=None):
        self.source = source
        self.delta = delta

    def init(self, part):
        if self.delta is None:
            self.delta = default_delta(part.plan.graph, part.run_on_gpus)
        self.bound = self.delta
        s, n = part.state, part.n_local
        s.dist = part.alloc(np.float64, np.inf, ("out",))
        s.pending = part.full(n, 0, np.int32)
        s.queue = part.empty(n, np.int64)
        s.work = part.empty(n, np.int64)
        s.work_len = part.full(1, 0, np.int64)
        s.keep = part.empty(n, np.int64)
        s.keep_len = part.full(1, 0, np.int64)
        s.queue_len = part.full(1, 0, np.int64)
        lv = owned_lvid(part, self.source)
        if lv is not None:
            s.dist[lv] = 0.0
            s.pending[lv] = 1
            s.work[0], s.work_len[0] = lv, 1

    def compute(self, part, step, mode, box):
        k, s, v = part.kernels("sssp"), part.state, part.views["out"]
        k.sssp_split(s.dist, s.pending, s.work, s.work_len, self.bound, s.queue, s.queue_len,
                     s.keep, s.keep_len)
        qlen = int(s.queue_len[0])
        s.work, s.keep, s.work_len, s.keep_len = s.keep, s.work, s.keep_len, s.work_len
        for indptr, indices, weights, queue, length in v.queue_segments(s.queue, qlen):
            k.sssp_relax(indptr, indices, weights, v.n_local, s.dist, queue, length, s.pending,
                         s.work, s.work_len, box.touched, box.count)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("sssp").sssp_scatter(inbox.values, inbox.lvid, s.dist, s.pending, s.work,
                                          s.work_len)

    def vote(self, part, step):
        s = part.state
        active, smallest = part.kernels("sssp").sssp_vote(s.dist, s.work, s.work_len, self.bound)
        return Vote(int(active), 0, float(smallest))

    def advance(self, key):
        if not math.isfinite(key):
            return False
        self.bound = (math.floor(key / self.delta) + 1) * self.delta
        return True

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "dist", np.float64, np.inf)
