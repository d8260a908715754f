"""Betweenness centrality: Brandes, unnormalised, directed, accumulated from the given sources.

Per source, a forward phase (push, level by level, path counts sigma as sum-combined messages)
and a backward phase (pull, levels from the deepest up: each vertex publishes
(1 + delta) / sigma when it is on the level below the one being processed). The engine's `advance`
moves between phases and to the next source. TOTEM fig. 18.
Forward: a frontier vertex adds its sigma to every out-neighbour that is unvisited or on the next
level (claims by atomic_min on the level, sums by atomic_add; a ghost slot's first message, its
sum leaving 0, is recorded). Backward: a vertex on level d sums (1 + delta) / sigma over its
out-neighbours on level d + 1 (remote ones arrive in the ghost slots, 0 when not on d + 1), no
atomics; the forward queues, kept in level order, list each level's vertices.
"""

import numpy as np

from bsp import (Algorithm, Frontier, Message, Mode, Vote, advance, atomic_add, atomic_min, pull,
                 put, receive, vertex_values)

from .. import reference as ref, verify as check
from .bfs import UNVISITED
from .common import SOURCE, collect, owned_lvid, source_vertex

SIGMA = Message(np.float64, "sum", 0.0)
FORWARD = Mode("forward", "out", "push", SIGMA, records=True)
BACKWARD = Mode("backward", "out", "pull", SIGMA)


def count_paths(s, t, w, level, sigma, box, n_local, depth):
    """Forward: t on the next level gets s's paths; true for t's claimer, or for a ghost slot's
    first message."""
    if t >= n_local:
        return atomic_add(box, t - n_local, sigma[s]) == 0.0
    lt = level[t]
    claimed = False
    if lt == UNVISITED or lt == depth + 1:
        claimed = atomic_min(level, t, depth + 1) == UNVISITED
        atomic_add(sigma, t, sigma[s])
    return claimed


def count_message(v, m, level, sigma, depth):
    if m == 0.0:
        return False
    lv = level[v]
    claimed = False
    if lv == UNVISITED or lv == depth + 1:
        claimed = atomic_min(level, v, depth + 1) == UNVISITED
        sigma[v] += m
    return claimed


def dependency(u, level, sigma, delta, depth):
    """What u publishes in the backward step of level `depth`: (1 + delta) / sigma on the level
    below, else 0."""
    return (1.0 + delta[u]) / sigma[u] if level[u] == depth + 1 else 0.0


def successor_share(v, t, w, level, sigma, delta, ghosts, bc, n_local, source, depth):
    if t >= n_local:
        return ghosts[t - n_local]
    return (1.0 + delta[t]) / sigma[t] if level[t] == depth + 1 else 0.0


def accumulate(v, total, level, sigma, delta, ghosts, bc, n_local, source, depth):
    delta[v] = sigma[v] * total
    if v != source:
        bc[v] += delta[v]


class BC(Algorithm):
    name = "bc"
    modes = (FORWARD, BACKWARD)
    options = (SOURCE,)

    def __init__(self, sources):
        self.sources = [int(s) for s in np.atleast_1d(sources)]
        if not self.sources:
            raise ValueError("bc needs at least one source")

    @classmethod
    def from_options(cls, graph, source=None, seed=0, **_):
        return cls([source_vertex(graph, source, seed, cls.name)])

    @property
    def source(self):
        return self.sources[0]

    def traversed_edges(self, graph, values, records):
        return int(sum(r.get("frontier_edges", 0) for r in records)
                   + graph.out_degree[self.sources].sum())

    def reference(self, graph):
        return ref.betweenness(graph, self.sources)

    def verify(self, graph, values):
        return check.verify_bc(graph, self.sources, values)

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
            s.queue = Frontier(part)
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
        s = part.state
        if mode is FORWARD:
            advance(part, "out", s.queue, count_paths, s.level, s.sigma, box.values,
                    part.n_local, self.depth, outbox=box)
        else:
            ptr = s.level_ptr
            vertices = s.order[ptr[self.depth]:ptr[self.depth + 1]]
            pull(part, "out", successor_share, s.level, s.sigma, s.delta, box, s.bc,
                 part.n_local, s.source_lvid, self.depth, apply=accumulate, rows=vertices)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, count_message, s.level, s.sigma, self.depth, out=s.queue)

    def gather(self, part, step, mode):
        if part.state.round != self.round:
            self._reset(part)
        s = part.state
        return vertex_values(part, dependency, s.level, s.sigma, s.delta, self.depth,
                             at=part.views["out"].boundary_lvid, dtype=np.float64)

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
