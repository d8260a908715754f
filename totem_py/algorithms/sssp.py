"""Single-source shortest paths: distances from one source (+inf unreachable).

Push relaxation of a frontier in delta-stepping buckets: a step relaxes the pending vertices with
distance below the bucket's bound (the near list); when no partition has any, the bound moves to
the bucket of the smallest pending distance (the engine's `advance`) and each partition moves that
bucket's vertices off its far list (kernels_cpu/sssp.py). delta=inf is plain frontier Bellman-Ford.
Messages are tentative distances, min-combined.
"""

import math

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from kernels_cpu.sssp import NEAR

from .common import collect, owned_lvid, put

DIST = Message(np.float64, "min", np.inf)


GPU_WIDER = 16


def default_delta(graph, gpus=False):
    """Bucket width: the mean weight x 2 / mean degree (Meyer and Sanders' Theta(1/d) for uniform
    weights, scaled to the weights; factors 1/64..64 measured on rmat:20 and rmat:22 undirected:
    2 to 4 were fastest on rmat:20 within the noise, 2 on rmat:22 by about 1.3x, 2 on rmat:24 with
    16 threads). GPUs want more work per superstep: GPU_WIDER times wider buckets were fastest for
    GPU-only SSSP on rmat:24 on the H100 (84 ms against 116 ms at the CPU's width; 43 ms against
    44 at x8 and 64 at x32 later). `gpus`: every partition is a GPU. A hybrid run keeps the CPU's
    width: its CPU partition holds the hubs (HIGH), and wide buckets relax each hub's row again
    each time a bucket lowers it (2.4x its edges per run against 1.15x, emulated rmat:20). On the
    H100 machine, rmat:24 HIGH 0.5 / 0.25, median of 5: 409 / 280 ms at x1 against 447-459 /
    267-291 at x16 on one host, 324 / 210 against 340 / 214 on another."""
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
            self.delta = default_delta(part.plan.graph, part.gpus_only)
        self.bound = self.delta
        s, n = part.state, part.n_local
        s.dist = part.alloc(np.float64, np.inf, ("out",))
        s.pending = part.full(n, 0, np.int32)
        s.queue = part.empty(n, np.int64)
        s.near = part.empty(n, np.int64)
        s.near_len = part.full(1, 0, np.int64)
        # a vertex enters the far list once at most (once near, its distance stays below every
        # later bound), so n entries are room enough, stale ones included
        s.far = part.empty(n, np.int64)
        s.far_len = part.full(1, 0, np.int64)
        s.keep = part.empty(n, np.int64)
        s.keep_len = part.full(1, 0, np.int64)
        s.far_min = part.full(1, np.inf, np.float64)
        s.split_bound = self.bound
        s.near_count = -1       # the near list's length when the last vote read it, else -1
        lv = owned_lvid(part, self.source)
        if lv is not None:
            put(part, s.dist, lv, 0.0)
            put(part, s.pending, lv, NEAR)
            put(part, s.near, 0, lv)
            put(part, s.near_len, 0, 1)

    def compute(self, part, step, mode, box):
        k, s, v = part.kernels("sssp"), part.state, part.views["out"]
        if s.split_bound != self.bound:     # a new bucket: its vertices come off the far list
            k.sssp_split(s.dist, s.pending, s.far, s.far_len, self.bound, s.near, s.near_len,
                         s.keep, s.keep_len, s.far_min)
            s.far, s.keep, s.far_len, s.keep_len = s.keep, s.far, s.keep_len, s.far_len
            s.split_bound = self.bound
            s.near_count = -1
        qlen = int(k.sssp_take(s.pending, s.near, s.near_len, s.near_count))
        s.queue, s.near = s.near, s.queue
        for indptr, indices, weights, queue, length in v.queue_segments(s.queue, qlen):
            k.sssp_relax(indptr, indices, weights, v.n_local, s.dist, queue, length, s.pending,
                         self.bound, s.near, s.near_len, s.far, s.far_len, s.far_min,
                         box.touched, box.count)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("sssp").sssp_scatter(inbox.values, inbox.lvid, s.dist, s.pending,
                                          self.bound, s.near, s.near_len, s.far, s.far_len,
                                          s.far_min)

    def vote(self, part, step):
        """Active: the near list (the next step's queue); the key, once it is empty: far_min,
        the smallest far distance or below it (then the next bucket may be empty, and its split
        gives the exact value)."""
        s = part.state
        near_len, far_min = part.to_host_all(s.near_len, s.far_min, count=False, reuse="vote")
        active = s.near_count = int(near_len[0])
        return Vote(active, 0, float(far_min[0]) if active == 0 else np.inf)

    def advance(self, key):
        if not math.isfinite(key):
            return False
        self.bound = (math.floor(key / self.delta) + 1) * self.delta
        return True

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "dist", np.float64, np.inf)
