"""Betweenness centrality: Brandes, unnormalised, directed, accumulated from the given sources.

Per source, a forward phase (push, level by level, path counts sigma as sum-combined messages)
and a backward phase (pull, levels from the deepest up: each vertex publishes
(1 + delta) / sigma when it is on the level below the one being processed). The engine's `advance`
moves between phases and to the next source. TOTEM fig. 18.
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote
from kernels_cpu.bfs import UNVISITED

from .common import Queue, collect, owned_lvid, put

SIGMA = Message(np.float64, "sum", 0.0)
FORWARD = Mode("forward", "out", "push", SIGMA, records=True)
BACKWARD = Mode("backward", "out", "pull", SIGMA)


class BC(Algorithm):
    name = "bc"
    modes = (FORWARD, BACKWARD)

    def __init__(self, sources):
        self.sources = [int(s) for s in np.atleast_1d(sources)]
        if not self.sources:
            raise ValueError("bc needs at least one source")

    def init(self, part):
        part.state.bc = part.full(part.n_local, 0.0, np.float64)
        part.state.round = -1
        self.round, self.phase, self.start, self.depth = 0, FORWARD, 0, 0

    def _reset(self, part):
        """Fresh per-source state, done lazily by each partition at the first step of a round."""
        s, n, fill = part.state, part.n_local, part.kernels("boxes").box_fill
        if not hasattr(s, "level"):         # the first round allocates, later ones refill
            s.level = part.empty(n, np.int32)
            s.sigma = part.empty(n, np.float64)
            s.delta = part.empty(n, np.float64)
            s.queue = Queue(part)
            s.order = part.empty(n, np.int64)   # vertices in level order
        fill(s.level, UNVISITED)
        fill(s.sigma, 0.0)
        fill(s.delta, 0.0)
        s.queue.length = 0
        s.level_ptr = [0]                                   # level d: order[ptr[d]:ptr[d+1]]
        s.source_lvid = -1
        lv = owned_lvid(part, self.sources[self.round])
        if lv is not None:
            put(part, s.level, lv, 0)
            put(part, s.sigma, lv, 1.0)
            s.source_lvid = lv
            s.queue.start(lv)
        self._keep_level(s)
        s.round = self.round

    def mode(self, step):
        self._step = step
        if self.phase is FORWARD:
            self.depth = step - self.start
        return self.phase

    def compute(self, part, step, mode, box):
        if part.state.round != self.round:
            self._reset(part)
        k, s, v = part.kernels("bc"), part.state, part.views["out"]
        if mode is FORWARD:
            q = s.queue
            for indptr, indices, _, queue, qlen in v.queue_segments(q.items, q.length):
                k.bc_forward(indptr, indices, v.n_local, s.level, s.sigma, box.values, queue,
                             qlen, self.depth, q.next, q.next_len, box.touched, box.count)
        else:
            ptr = s.level_ptr
            vertices = s.order[ptr[self.depth]:ptr[self.depth + 1]]
            for indptr, indices, _, queue, qlen in v.queue_segments(vertices, vertices.size):
                k.bc_backward(indptr, indices, v.n_local, s.level, s.sigma, s.delta, box,
                              self.depth, s.bc, s.source_lvid, queue[:qlen])

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("bc").bc_forward_scatter(inbox.values, inbox.lvid, s.level, s.sigma,
                                              self.depth, s.queue.next, s.queue.next_len)

    def gather(self, part, step, mode):
        if part.state.round != self.round:
            self._reset(part)
        s, lvids = part.state, part.views["out"].boundary_lvid
        out = part.xp.empty(lvids.size, dtype=np.float64)
        part.kernels("bc").bc_publish(s.level, s.sigma, s.delta, lvids, self.depth, out)
        return out

    def vote(self, part, step):
        if self.phase is FORWARD:
            q = part.state.queue
            edges = q.swap()
            self._keep_level(part.state)
            return Vote(q.length, edges)
        return Vote(0)

    @staticmethod
    def _keep_level(s):
        """Append the current queue (one level) to the level order."""
        start = s.level_ptr[-1]
        s.order[start:start + s.queue.length] = s.queue.items[:s.queue.length]
        s.level_ptr.append(start + s.queue.length)

    def advance(self, key):
        if self.phase is FORWARD:
            # the last forward step found no vertex beyond level self.depth
            self.phase, self.depth = BACKWARD, self.depth - 1
        else:
            self.depth -= 1
        if self.depth >= 0:
            return True
        self.round += 1
        if self.round == len(self.sources):
            return False
        self.phase, self.start = FORWARD, self._step + 1
        return True

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "bc", np.float64, 0.0)
