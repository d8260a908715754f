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
from bsp.api import Option

from .. import reference as ref, verify as check
from ..errors import InputError
from .bfs import UNVISITED
from .common import SOURCE, collect, owned_lvid, source_vertex

SIGMA = Message(np.float64, "sum", 0.0)
SOURCES = Option("--sources", dict(default=None, metavar="K|all|LIST",
                                   help="bc: K distinct random sources (seeded), all, or a "
                                        "comma-separated list of vertices, e.g. 3,17 (default: "
                                        "one source, --source)"))
NORMALIZED = Option("--normalized", dict(action="store_true",
                                         help="bc: divide by the number of source-target pairs "
                                              "a path through the vertex could join, as "
                                              "networkx's betweenness_centrality for directed "
                                              "graphs"))


def parse_sources(text):
    """--sources as given on the command line: "all", K, or a list (which has a comma)."""
    if text is None or text == "all" or not isinstance(text, str):
        return text
    try:
        return [int(t) for t in text.split(",")] if "," in text else int(text)
    except ValueError:
        raise InputError(f"--sources must be K, all or comma-separated vertices, "
                         f"not {text!r}") from None


def bc_sources(graph, sources, seed=0):
    """The sources from `sources`: K (K distinct vertices drawn at random with `seed`, as
    networkx's k; every vertex when K >= n), "all", or a list of distinct vertices."""
    n = graph.n_vertices
    if isinstance(sources, str):
        if sources != "all":
            raise InputError(f"--sources must be K, all or a list of vertices, not {sources!r}")
        return list(range(n))
    if np.ndim(sources) == 0:
        k = int(sources)
        if k < 1:
            raise InputError(f"--sources must be at least 1, got {k}")
        if k >= n:
            return list(range(n))
        return sorted(np.random.default_rng(seed).choice(n, k, replace=False).tolist())
    sources = [int(s) for s in sources]
    for s in sources:
        if not 0 <= s < n:
            raise InputError(f"--sources: vertex {s} is outside the graph (vertices 0..{n - 1})")
    if len(set(sources)) != len(sources):
        raise InputError("--sources lists a vertex twice")
    if not sources:
        raise InputError("--sources lists no vertex")
    return sources
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
    options = (SOURCE, SOURCES, NORMALIZED)

    def __init__(self, sources, normalized=False):
        self.sources = [int(s) for s in np.atleast_1d(sources)]
        if not self.sources:
            raise ValueError("bc needs at least one source")
        self.normalized = normalized

    @classmethod
    def from_options(cls, graph, source=None, sources=None, normalized=False, seed=0, **_):
        if sources is None:
            return cls([source_vertex(graph, source, seed, cls.name)], normalized)
        if source is not None:
            raise InputError("bc takes --source or --sources, not both")
        if graph.n_vertices == 0:
            raise InputError("bc needs a source vertex but the graph has no vertices")
        return cls(bc_sources(graph, parse_sources(sources), seed), normalized)

    @property
    def source(self):
        """The source, when there is one (else None: --sources)."""
        return self.sources[0] if len(self.sources) == 1 else None

    def scale(self, graph):
        """What `normalized` multiplies the sums by (reference.betweenness_scale)."""
        return ref.betweenness_scale(graph.n_vertices, self.sources)

    def traversed_edges(self, graph, values, records):
        ids = getattr(graph, "vertex_ids", None)     # a rank's own vertices, under MPI
        here = self.sources if ids is None else np.flatnonzero(np.isin(ids, self.sources))
        return int(sum(r.get("frontier_edges", 0) for r in records)
                   + graph.out_degree[here].sum())

    def reference(self, graph):
        raw = ref.betweenness(graph, self.sources)
        return raw * self.scale(graph) if self.normalized else raw

    def verify(self, graph, values):
        raw = values / self.scale(graph) if self.normalized else values
        return check.verify_bc(graph, self.sources, raw)

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
        out = collect(parts, n_vertices, "bc", np.float64, 0.0)
        return out * ref.betweenness_scale(n_vertices, self.sources) if self.normalized else out
