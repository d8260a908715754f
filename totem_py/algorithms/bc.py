"""Betweenness centrality: Brandes, unnormalised, directed, accumulated from the given sources.

Per source, a forward phase (push, level by level, path counts sigma as sum-combined messages)
and a backward phase (pull, levels from the deepest up: each vertex publishes
(1 + delta) / sigma when it is on the level below the one being processed). The engine's `advance`
moves between phases and to the next source. TOTEM fig. 18.
Forward: a frontier vertex adds its sigma to every out-neighbour that is unvisited or on the next
level (claims by atomic_min on the level, sums by atomic_add; a ghost slot's first message, its
sum leaving 0, is recorded). Backward: a vertex on level d sums (1 + delta) / sigma over its
out-neighbours on level d + 1 (remote ones arrive in the ghost slots, 0 when not on d + 1), no
atomics; the forward queues, kept in level order, list each level's vertices. A vertex's share
(1 + delta) / sigma, computed when its level is done (1 / sigma on the deepest level), goes into
one of two arrays by the level's parity: the step of level d reads the other one, where every
vertex an edge from level d can reach (levels up to d + 1) holds its share on level d + 1 and 0
on the levels still to come (both arrays start each source at 0), so an edge costs one read and
no test of its level.
A forward step is pulled where that reads less (`_pulls`): every vertex not yet reached sums
the paths of its in-neighbours on level d (remote ones published into the ghost slots, 0 off
that level) and joins level d + 1 if they bring any; no atomics, where a pushed step adds along
each frontier out-edge atomically. On R-MAT the level after the hubs' holds most edges, and
pulling it reads the few rows still unreached.
Paths are sequences of edges: k parallel edges u->v make k shortest paths through them, where
networkx's betweenness_centrality on a MultiDiGraph counts one (with edges 0->1 twice, 1->2, 0->3
and 3->2, vertex 1 gets 2/3 here and 1/2 in networkx); on a graph without parallel edges the
two agree.
--normalized divides as networkx's betweenness_centrality does for a directed graph (`scale`),
by the whole graph's vertex count and sources, under MPI too; with --relabel a drawn source
may be a vertex in no edge, which counts among the sources but has no path to walk.
Serial reference: textbook Brandes per source over the CSR as lists (`betweenness`). Verifier:
equal to it within 1e-5 relative and 1e-6 absolute.
"""

import numpy as np

from bsp import (Frontier, Message, Mode, Vote, advance, atomic_add, atomic_min, pull, put,
                 receive, vertex_map, vertex_values)

from ..errors import InputError, VerificationError, check_count
from .base import Algorithm, Option, register
from .common import (SOURCE, UNVISITED, as_result, checked_source, collect, draw_vertices, first,
                     once_per_graph, owned_lvid, source_vertex)

UNREACHED = -1      # the reference's level of a vertex the source cannot reach
SIGMA = Message(np.float64, "sum", 0.0)
PUSH_COST = 2       # a forward edge pushed (an atomic add) costs about two pulled (a read)


def parse_sources(text):
    """--sources as given on the command line: "all", K, or a list (which has a comma)."""
    if text is None or text == "all" or not isinstance(text, str):
        return text
    try:
        return [int(t) for t in text.split(",")] if "," in text else int(text)
    except ValueError:
        raise InputError(f"--sources must be K, all or comma-separated vertices, "
                         f"not {text!r}") from None


SOURCES = Option("--sources", dict(type=parse_sources, default=None, metavar="K|all|LIST",
                                   help="bc: K distinct random sources (seeded), all, or a "
                                        "comma-separated list of vertices, e.g. 3,17 (default: "
                                        "one source, --source)"), vertices="list")
NORMALIZED = Option("--normalized", dict(action="store_true",
                                         help="bc: divide by the number of source-target pairs "
                                              "a path through the vertex could join, as "
                                              "networkx's betweenness_centrality for directed "
                                              "graphs"))


def bc_sources(graph, sources, seed=0):
    """The sources from `sources`: K (K distinct vertices drawn at random with `seed`, as
    networkx's k; every vertex when K >= n), "all", or a list of distinct vertices."""
    n = graph.n_vertices
    if isinstance(sources, str):
        if sources != "all":
            raise InputError(f"--sources must be K, all or a list of vertices, not {sources!r}")
        return draw_vertices(graph, graph.n_ids)      # every vertex, in id order
    if np.ndim(sources) == 0:
        return draw_vertices(graph, check_count(sources, "--sources", 1), seed)
    sources = [check_count(s, "--sources") for s in sources]
    for s in sources:
        if not 0 <= s < n:
            raise InputError(f"--sources: vertex {s} is outside the graph (vertices 0..{n - 1})")
    if len(set(sources)) != len(sources):
        raise InputError("--sources lists a vertex twice")
    if not sources:
        raise InputError("--sources lists no vertex")
    return sources


def betweenness(graph, sources):
    """The serial reference: Brandes betweenness centrality accumulated from `sources` only
    (float64).

    Semantics:
      - unnormalised and directed: bc(v) = sum over s in sources, t != s, v not in {s, t}, of
        sigma_st(v) / sigma_st, where sigma counts shortest (fewest-hop) paths from s to t; edge
        weights are ignored;
      - multigraph counting: a path is a sequence of edges, so k parallel edges u->v give k distinct
        paths (sigma counts edge-distinct shortest paths);
      - self-loops never lie on a shortest path and are ignored;
      - each entry of `sources` is one traversal; a source listed twice is counted twice.

    Textbook Brandes per source: a breadth-first walk counts sigma(w) += sigma(v) over every edge
    (v, w) with level(w) = level(v) + 1 (once per parallel edge); then, in reverse walk order,
    delta(v) = sigma(v) * sum over those edges of (1 + delta(w)) / sigma(w), and bc(v) += delta(v)
    for v != source.
    """
    n = graph.n_vertices
    bc = np.zeros(n, dtype=np.float64)
    if n == 0:
        return bc
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    for source in sources:
        source = checked_source(graph, source, "bc", ValueError)
        levels = [UNREACHED] * n
        sigma = [0.0] * n
        levels[source] = 0
        sigma[source] = 1.0
        order = [source]
        head = 0
        while head < len(order):
            v = order[head]
            head += 1
            for w in indices[indptr[v]:indptr[v + 1]]:
                if levels[w] == UNREACHED:
                    levels[w] = levels[v] + 1
                    order.append(w)
                if levels[w] == levels[v] + 1:
                    sigma[w] += sigma[v]

        delta = [0.0] * n
        for v in reversed(order):
            share = 0.0
            for w in indices[indptr[v]:indptr[v + 1]]:
                if levels[w] == levels[v] + 1:
                    share += (1.0 + delta[w]) / sigma[w]
            delta[v] = sigma[v] * share
        delta[source] = 0.0  # the source is an endpoint of all its paths
        bc += np.array(delta)
    return bc


def scale(n_vertices, sources, at=None):
    """Per-vertex factor of normalised betweenness (float64) for the vertices `at` (default
    every vertex), networkx's for a directed graph (`betweenness_centrality(G,
    normalized=True)`, and with `k` sampled sources): bc(v) counts the pairs (s, t), s a
    source, t != s, v not in {s, t}, and is divided by how many such pairs there are: k (n - 2)
    for a vertex that is not a source, (k - 1)(n - 2) for one that is (NaN for it when k = 1:
    no pair). With every vertex a source: 1 / ((n - 1)(n - 2)) everywhere. Graphs of fewer than
    3 vertices keep their (zero) values."""
    n, k = int(n_vertices), len(sources)
    at = np.arange(n) if at is None else np.asarray(at)
    if n < 3:
        return np.ones(at.size)
    pairs = k - np.isin(at, np.asarray(sources, dtype=np.int64)).astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.where(pairs > 0, 1.0 / (pairs * (n - 2)), np.nan)


def verify_betweenness(graph, sources, scores, rtol=1e-5, atol=1e-6):
    """Equal to the reference from `sources` within `rtol` relative plus `atol`: None, or
    VerificationError naming the first vertex that is not."""
    scores = as_result(graph, scores, "bc")
    if graph.n_vertices == 0:
        return
    scores = scores.astype(np.float64)
    for s in sources:
        checked_source(graph, s, "bc")
    expected = once_per_graph(betweenness)(graph, tuple(sources))
    bad = ~(np.abs(scores - expected) <= rtol * np.abs(expected) + atol)  # NaN counts as bad
    if bad.any():
        w = first(bad)
        raise VerificationError(f"bc: vertex {w} has {scores[w]:.6g}, expected {expected[w]:.6g}")


FORWARD = Mode("forward", "out", "push", SIGMA, records=True)
FORWARD_PULL = Mode("forward_pull", "in", "pull", SIGMA)
BACKWARD = Mode("backward", "out", "pull", SIGMA)


def count_paths(s, t, w, level, sigma, box, n_local, depth):
    """Forward: t on the next level gets s's paths; true for t's claimer, or for a ghost slot's
    first message."""
    if t >= n_local:
        return atomic_add(box, t - n_local, sigma[s]) == 0.0
    lt = level[t]
    claimed = False
    if lt == UNVISITED:     # a step writes only depth + 1: whoever loses the claim sees that
        claimed = atomic_min(level, t, depth + 1) == UNVISITED
        lt = depth + 1
    if lt == depth + 1:
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


def unreached(v, level, sigma, ghosts, n_local, depth):
    return level[v] == UNVISITED


def parent_paths(v, u, w, level, sigma, ghosts, n_local, depth):
    """Forward, pulled: the paths in-neighbour u brings when it is on level `depth` (a ghost's
    come published, 0 off that level)."""
    if u >= n_local:
        return ghosts[u - n_local]
    return sigma[u] if level[u] == depth else 0.0


def join_level(v, total, level, sigma, ghosts, n_local, depth):
    if total > 0.0:
        level[v] = depth + 1
        sigma[v] = total


def on_level(v, level, depth):
    return level[v] == depth


def level_paths(u, level, sigma, depth):
    """What u publishes for a pulled forward step: its paths when on level `depth`, else 0."""
    return sigma[u] if level[u] == depth else 0.0


def dependency(u, level, sigma, delta, depth):
    """What u publishes in the backward step of level `depth`: (1 + delta) / sigma on the level
    below, else 0."""
    return (1.0 + delta[u]) / sigma[u] if level[u] == depth + 1 else 0.0


def successor_share(v, t, w, below, sigma, delta, ghosts, bc, n_local, source, mine):
    if t >= n_local:
        return ghosts[t - n_local]
    return below[t]


def leaf_share(v, sigma, mine):
    mine[v] = 1.0 / sigma[v]


def accumulate(v, total, below, sigma, delta, ghosts, bc, n_local, source, mine):
    d = sigma[v] * total
    delta[v] = d
    mine[v] = (1.0 + d) / sigma[v]
    if v != source:
        bc[v] += d


@register
class BC(Algorithm):
    name = "bc"
    modes = (FORWARD, FORWARD_PULL, BACKWARD)
    options = (SOURCE, SOURCES, NORMALIZED)
    isolated = 0.0
    memory = (((154, 5, 0), (140, 5)), ((154, 5, 0), (140, 5)))

    def __init__(self, sources, normalized=False, n=None, walks=None):
        """`n`: the vertices normalisation counts (graph.n_ids; None: the engine's count);
        `walks`: the sources walked from (default all: a source in no edge, left out of the
        run, has no path)."""
        self.sources = [int(s) for s in np.atleast_1d(sources)]
        if not self.sources:
            raise ValueError("bc needs at least one source")
        self.normalized = normalized
        self.n = n
        self.walks = self.sources if walks is None else [int(s) for s in walks]

    @classmethod
    def from_options(cls, graph, source=None, sources=None, normalized=False, seed=0, **_):
        if sources is None:
            sources = [source_vertex(graph, source, seed, cls.name)]
        elif source is not None:
            raise InputError("bc takes --source or --sources, not both")
        elif graph.n_vertices == 0:
            raise InputError("bc needs a source vertex but the graph has no vertices")
        else:
            sources = bc_sources(graph, parse_sources(sources), seed)
        return cls(sources, normalized, graph.n_ids,
                   [s for s in sources if s < graph.n_vertices])

    @property
    def source(self):
        """The source, when there is one (else None: --sources)."""
        return self.sources[0] if len(self.sources) == 1 else None

    def traversed_edges(self, graph, values, records):
        ids = getattr(graph, "vertex_ids", None)     # a rank's own vertices, under MPI
        here = self.walks if ids is None else np.flatnonzero(np.isin(ids, self.walks))
        return int(sum(r.get("frontier_edges", 0) for r in records)
                   + graph.out_degree[here].sum())

    def reference(self, graph):
        raw = betweenness(graph, self.sources)
        return raw * scale(graph.n_vertices, self.sources) if self.normalized else raw

    def verify(self, graph, values):
        if self.normalized:     # the sources' own pairs: none when k = 1 (NaN), whose bc is 0
            factor = scale(graph.n_vertices, self.sources)
            values = np.where(np.isnan(factor) & np.isnan(values), 0.0, values / factor)
        return verify_betweenness(graph, self.sources, values)

    def metrics(self):
        return dict(sources=self.sources, normalized=bool(self.normalized))

    def isolated_values(self, graph):
        """No path passes through a vertex in no edge: 0 (NaN, normalised, for the only source)."""
        rest = np.full(graph.n_ids - graph.n_vertices, 0.0)
        if self.normalized:
            rest *= scale(graph.n_ids, self.sources, np.arange(graph.n_vertices, graph.n_ids))
        return rest

    def start(self):
        self.round, self.phase, self.first_step, self.depth, self.deepest = 0, FORWARD, 0, 0, 0
        self.reached = 0        # out-edges of the vertices the source's levels reached so far
        self.last = None        # the last superstep's tally

    def _pulls(self):
        """Whether a forward step is pulled: when its frontier's out-edges F, each pushed with an
        atomic add, cost more than reading the in-edges U of every vertex not yet reached and
        testing each vertex once: PUSH_COST * F > U + n; never where a GPU partition reads
        edges from host memory, whose bytes a pull would multiply."""
        total = self.last
        if self.depth == 0 or total is None:
            self.reached = 0
            return False
        n, m, streamed = total.sums
        return not streamed and PUSH_COST * total.edges > (m - self.reached) + n

    def init(self, part):
        part.state.bc = part.full(part.n_local, 0.0, np.float64)
        part.state.round = -1

    def _reset(self, part):
        """Fresh per-source state, done lazily by each partition at the first step of a round."""
        s, n, fill = part.state, part.n_local, part.kernels("boxes").box_fill
        if not hasattr(s, "level"):         # the first round allocates, later ones refill
            s.level = part.empty(n, np.int32)
            s.sigma = part.empty(n, np.float64)
            s.delta = part.empty(n, np.float64)
            s.queue = Frontier(part)
            s.order = part.empty(n, np.int64)   # vertices in level order
            s.share = (part.empty(n, np.float64), part.empty(n, np.float64))
        fill(s.level, UNVISITED)
        fill(s.sigma, 0.0)
        fill(s.delta, 0.0)
        for share in s.share:
            fill(share, 0.0)
        s.queue.length = 0
        s.level_ptr = [0]                                   # level d: order[ptr[d]:ptr[d+1]]
        s.source_lvid = -1
        lv = owned_lvid(part, self.walks[self.round]) if self.walks else None
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
            self.depth = step - self.first_step
            return FORWARD_PULL if self._pulls() else FORWARD
        return self.phase

    def finished(self, total):
        self.last = total
        if self.phase is FORWARD:
            self.reached += total.edges
        return super().finished(total)

    def compute(self, part, step, mode, box):
        if part.state.round != self.round:
            self._reset(part)
        s = part.state
        if mode is FORWARD:
            advance(part, "out", s.queue, count_paths, s.level, s.sigma, box.values,
                    part.n_local, self.depth, outbox=box)
        elif mode is FORWARD_PULL:
            level = s.level
            pull(part, "in", parent_paths, s.level, s.sigma, box, part.n_local, self.depth,
                 row_fn=unreached, apply=join_level, reads=lambda: level == UNVISITED)
            vertex_map(part, on_level, s.level, self.depth + 1, out=s.queue)
        else:
            ptr = s.level_ptr
            vertices = s.order[ptr[self.depth]:ptr[self.depth + 1]]
            d = self.depth
            if d + 1 == self.deepest and d + 2 < len(ptr):     # the deepest level's shares
                vertex_map(part, leaf_share, s.sigma, s.share[(d + 1) % 2],
                           vertices=s.order[ptr[d + 1]:ptr[d + 2]])
            pull(part, "out", successor_share, s.share[(d + 1) % 2], s.sigma, s.delta, box, s.bc,
                 part.n_local, s.source_lvid, s.share[d % 2], apply=accumulate, rows=vertices)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, count_message, s.level, s.sigma, self.depth, out=s.queue)

    def gather(self, part, step, mode):
        if part.state.round != self.round:
            self._reset(part)
        s = part.state
        if mode is FORWARD_PULL:
            return vertex_values(part, level_paths, s.level, s.sigma, self.depth,
                                 at=part.views["in"].boundary_lvid, dtype=np.float64)
        return vertex_values(part, dependency, s.level, s.sigma, s.delta, self.depth,
                             at=part.views["out"].boundary_lvid, dtype=np.float64)

    def vote(self, part, step):
        if self.phase is FORWARD:
            q = part.state.queue
            edges = q.swap()
            self._keep_level(part.state)
            return Vote(q.length, edges, sums=self._sizes(part))
        return Vote(0, sums=self._sizes(part))

    @staticmethod
    def _sizes(part):
        """The partition's vertices and out-edges (summed, the graph's) and whether it reads
        edges from host memory: the direction rule's."""
        return (float(part.n_local), float(part.views["out"].host.indices.size),
                float(not part.edges_resident))

    @staticmethod
    def _keep_level(s):
        """Append the current queue (one level) to the level order."""
        start = s.level_ptr[-1]
        s.order[start:start + s.queue.length] = s.queue.items[:s.queue.length]
        s.level_ptr.append(start + s.queue.length)

    def advance(self, key):
        if self.phase is FORWARD:
            # the last forward step found no vertex beyond level self.depth
            self.phase, self.deepest, self.depth = BACKWARD, self.depth, self.depth - 1
        else:
            self.depth -= 1
        if self.depth >= 0:
            return True
        self.round += 1
        if self.round >= len(self.walks):
            return False
        self.phase, self.first_step = FORWARD, self._step + 1
        return True

    def collect(self, parts, n_vertices):
        """The sums by vertex; normalised by the whole graph's vertex count and sources, each
        partition's vertices by their global ids (`p.gvids` says where they go: under MPI,
        their place in the rank's values)."""
        out = collect(parts, n_vertices, "bc", np.float64, 0.0)
        if self.normalized and parts:
            n = parts[0].n_vertices if self.n is None else self.n
            for p in parts:
                out[p.gvids] *= scale(n, self.sources, p.plan.gvids[p.pid])
        return out
