"""PageRank-Delta: PageRank to a tolerance by pushing residuals (Maiter's accumulative iteration,
the PageRank that Groute, SEP-Graph, Gunrock and HyTGraph run), instead of a fixed number of
rounds over every vertex.

Each vertex holds a rank r (0 at first) and a residual (1 - d) / n. A superstep takes the
active vertices, those whose residual exceeds tolerance / n: each adds its residual to its rank
and pushes d * residual / outdeg(v) to the residual of every out-neighbour (sum-combined messages
across partitions). The rest keep their residuals, which grow until they pass the threshold.
It stops when no residual exceeds it; the result is r + residual.

The result converges to the same PageRank as pagerank's rounds (r = (1-d)/n + d A r, no dangling
redistribution): at every step the exact ranks L are r + sum_k (d P)^k residual, so the result is
below them everywhere and its L1 distance to them is at most d / (1 - d) times the residuals
left, i.e. at most tolerance * d / (1 - d). Per vertex, as every residual left is at most
tolerance / n and sum_{k>=0} (d P)^k 1 = n L / (1 - d), the result is at most
tolerance * (L(v) / (1 - d) - 1 / n) below L(v) (the verifier checks all three). The default
tolerance, 0.01 (a residual of 1% of the mean rank), is Groute's and SEP-Graph's epsilon for
ranks that sum to n. The active set shrinks from every vertex to a few as the run converges,
which is what HyTGraph's engine choice per chunk is for (its figure 6a).
Paths. The direction: pull while the active vertices' out-edges are more than PULL_SHARE of
the graph's edges (every vertex is active at first), else push; where a GPU partition reads
edges from host memory (streamed or mapped), only the first step pulls, as a pull reads every
edge and a push only the active vertices' rows. A pull step (sync-pull-dd) does
the same round without atomics: every active vertex takes its residual into its rank and
publishes its share d * residual / outdeg (0 for the others; the boundary vertices' shares go to
the ghost slots that read them), then every vertex adds the shares of its in-neighbours to its
residual: one read of every in-edge, where a push writes each active out-edge's head with an
atomic add (on R-MAT, where the hubs stay active, the active vertices hold most of the edges
for most of the run). sync-pull-td publishes every residual, above the threshold or not.
The push paths (chosen by SEP-Graph's Alg. 1 under `--path auto`: each once, then the one of
least predicted work): sync-push-dd (the above), sync-push-td (every vertex with a residual
pushes it, above the threshold or not) and async-push-dd (a partition pushes round after round
until none of its residuals exceeds the threshold, the ghosts' shares adding up in the box, then
exchanges), and each of the dd two with SEP-Graph's sampled priority (sync-push-dd-prio,
async-push-dd-prio: a round samples PRIORITY_SAMPLE active vertices at a fixed stride of its
queue, takes the PRIORITY_TOP-th largest residual of the sample as a cut, and pushes only the
active vertices whose residual reaches it; the others stay active and wait, so that large
residuals move first; SEP-Graph's aim is fewer pushes to the tolerance, though on R-MAT these
push more: docs/results/pr_priority_2core.txt). Each only moves residual into ranks
along the same equations, so each stops within the same bounds of the limit (the verifier's),
though not at the same values. `pushed_edges` (metrics) counts the edges pushed along, and
every edge of a pull step.
Races: residuals grow through atomic_add; a ghost slot's first message (its sum leaves 0: shares
are positive) records it.
n counts every vertex id (`graph.n_ids`): a vertex in no edge, left out of a --relabel run, keeps
its (1 - d) / n.
Serial reference: the same pushes, a round of every active vertex at a time, over the CSR as
lists. Verifier: below the limit everywhere, each vertex within its bound of it, and within
tolerance * d / (1 - d) of it in L1; the limit by power iteration (`limit`).
"""

import math

import numpy as np

from bsp import (Frontier, Message, Mode, Vote, advance, atomic_add, pull, receive, vertex_map,
                 vertex_values)
from bsp.api import PRIORITY_SAMPLE, PRIORITY_TOP

from ..errors import InputError, VerificationError
from .base import Algorithm, Option, register
from .common import as_result, collect, first, once_per_graph, positive_number

RESIDUAL = Message(np.float64, "sum", 0.0)
SHARE = Message(np.float64, "sum", 0.0)        # a pull step's share of a boundary vertex
PULL_SHARE = 1 / 15     # pull while the active out-edges are more than this share of the edges
                        # (SEP-Graph's alpha)


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


def take_above(v, residual, rank, out_degree, share, damping, threshold):
    """A pull round's taking: every vertex's share, 0 unless it is active (its residual above
    `threshold`) and then as `take`."""
    r = residual[v]
    d = out_degree[v]
    if r > threshold:
        residual[v] = 0.0
        rank[v] += r
        share[v] = damping * r / d if d > 0 else 0.0
    else:
        share[v] = 0.0
    return False


def in_share(v, u, w, share, residual):
    return share[u]


def add_shares(v, total, share, residual):
    residual[v] += total


def boundary_share(u, share):
    return share[u]


def add_message(v, m, residual):
    residual[v] += m
    return False


def above(v, residual, threshold):
    return residual[v] > threshold


def holding(v, residual):
    return residual[v] > 0.0


def at_least(v, residual, cut):
    return residual[v] >= cut


def sampled(i, items, stride, residual):
    """The residual of the queue's (i * stride)-th vertex."""
    return residual[items[i * stride]]


def priority_cut(part, frontier, residual, at):
    """SEP-Graph's sampled priority: the PRIORITY_TOP-th largest residual of PRIORITY_SAMPLE
    vertices of `frontier` taken at a fixed stride (all of a shorter one, whose top share it
    keeps); `at` holds 0..PRIORITY_SAMPLE-1 on the partition's device. One copy of the sample
    to the host and a partial sort there."""
    k = min(PRIORITY_SAMPLE, frontier.length)
    values = vertex_values(part, sampled, frontier.items, frontier.length // k, residual,
                           at=at[:k], dtype=np.float64)
    host = np.asarray(part.to_host(values))
    top = max(k * PRIORITY_TOP // PRIORITY_SAMPLE, 1)
    return float(np.partition(host, k - top)[k - top])


def pushes(graph, tolerance=0.01, damping=0.85):
    """The serial reference: rank 0 and residual (1-d)/n everywhere; each round every vertex
    whose residual exceeds tolerance / n adds it to its rank and passes d * residual / outdeg to
    each out-edge's head; until no residual exceeds it. Returns rank + residual."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    indptr, indices = graph.indptr.tolist(), graph.indices.tolist()
    rank = [0.0] * n
    residual = [(1.0 - damping) / n] * n
    threshold = tolerance / n
    active = [v for v in range(n) if residual[v] > threshold]
    while active:
        taken = [residual[v] for v in active]
        for v, r in zip(active, taken):
            residual[v] = 0.0
            rank[v] += r
        for v, r in zip(active, taken):
            deg = indptr[v + 1] - indptr[v]
            for e in range(indptr[v], indptr[v + 1]):
                residual[indices[e]] += damping * r / deg
        active = [v for v in range(n) if residual[v] > threshold]
    return np.array(rank) + np.array(residual)


def limit(graph, damping=0.85, tol=1e-14):
    """The ranks' limit, r = (1-d)/n + d A r without dangling redistribution, by rounds until
    the L1 change is below tol (the error left is then below tol * d / (1 - d)); at most 10000
    rounds."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    src = graph.edge_sources().astype(np.int64)
    dst = graph.indices.astype(np.int64)
    share = damping / graph.out_degree.astype(np.float64)[src]
    ranks = np.full(n, (1.0 - damping) / n)
    for _ in range(10000):
        new = (1.0 - damping) / n + np.bincount(dst, weights=ranks[src] * share, minlength=n)
        change = np.abs(new - ranks).sum()
        ranks = new
        if change < tol:
            break
    return ranks


def verify_pushes(graph, tolerance, ranks, damping=0.85):
    """The verifier (the module docstring): None, or VerificationError."""
    ranks = as_result(graph, ranks, "pagerank_delta")
    if graph.n_vertices == 0:
        return
    ranks = ranks.astype(np.float64)
    exact = once_per_graph(limit)(graph, damping)
    below = exact - ranks
    slack = 1e-9 * exact + 1e-15                  # rounding in sums of up to n terms
    bad = ~(below >= -slack)                        # NaN counts as bad
    if bad.any():
        w = first(bad)
        raise VerificationError(f"pagerank_delta: vertex {w} has {ranks[w]:.9g}, above the "
                                f"limit {exact[w]:.9g}")
    bound = tolerance * damping / (1.0 - damping)
    if below.sum() > bound + slack.sum():
        w = int(np.argmax(below))
        raise VerificationError(f"pagerank_delta: L1 distance {below.sum():.3g} to the limit > "
                                f"tolerance * d / (1 - d) = {bound:.3g}; worst vertex {w} has "
                                f"{ranks[w]:.6g}, limit {exact[w]:.6g}")
    n = graph.n_vertices
    most = tolerance * (exact / (1.0 - damping) - 1.0 / n) + slack
    bad = below > most
    if bad.any():
        w = first(bad)
        raise VerificationError(f"pagerank_delta: vertex {w} has {ranks[w]:.9g}, more than "
                                f"{most[w]:.3g} below the limit {exact[w]:.9g} (tolerance "
                                f"* (limit / (1 - d) - 1 / n))")


@register
class PageRankDelta(Algorithm):
    name = "pagerank_delta"
    modes = (Mode("push", "out", "push", RESIDUAL, state="residual", records=True),
             Mode("pull", "in", "pull", SHARE, state="share"))
    paths = ("sync-push-dd", "sync-push-td", "async-push-dd", "sync-push-dd-prio",
             "async-push-dd-prio", "sync-pull-dd", "sync-pull-td")
    # priority pushes the high-degree vertices first (their residuals are the largest), which on
    # undirected R-MAT pushes more edges than sync-push-dd (docs/results/pr_priority_2core.txt)
    auto_paths = ("sync-push-dd", "async-push-dd", "sync-pull-dd")
    iterative = True
    options = (Option("--tolerance", dict(type=positive_number, default=0.01, metavar="X",
                                          help="pagerank_delta: a vertex is active while its "
                                               "residual exceeds X / n (default 0.01)")),)
    same_on_every_plan = False      # which residuals a step pushes depends on the partitions

    def __init__(self, tolerance=0.01, damping=0.85, n=None):
        if not 0 < tolerance < math.inf:
            raise ValueError("PageRank-Delta needs a finite positive tolerance")
        self.tolerance = tolerance
        self.damping = damping
        self.n = n          # vertices (graph.n_ids); None: those the partitions hold
        self.pushed = 0     # edges pushed along in the run (the votes' sums)
        self.pulls = True   # whether the next superstep pulls (`mode`)

    @classmethod
    def from_options(cls, graph, tolerance=0.01, **_):
        if not 0 < tolerance < math.inf:
            raise InputError(f"--tolerance must be a finite positive number, got {tolerance}")
        return cls(tolerance, n=graph.n_ids)

    def traversed_edges(self, graph, values, records):
        # the first step pushes from every vertex (tolerance < 1 - d)
        return graph.n_edges + sum(r["frontier_edges"] for r in records)

    def reference(self, graph):
        return pushes(graph, self.tolerance, self.damping)

    def verify(self, graph, values):
        return verify_pushes(graph, self.tolerance, values, self.damping)

    def metrics(self):
        """`pushed_edges`: the edges the last run pushed residuals along, every path's rounds
        included."""
        return dict(tolerance=self.tolerance, pushed_edges=self.pushed)

    def isolated_values(self, graph):
        """A vertex in no edge keeps its first residual, (1 - d) / n."""
        n = graph.n_ids if self.n is None else self.n
        return np.full(graph.n_ids - graph.n_vertices, (1.0 - self.damping) / n)

    def init(self, part):
        s, n = part.state, part.n_local
        size = max(part.n_vertices if self.n is None else self.n, 1)
        s.threshold = self.tolerance / size
        s.rank = part.full(n, 0.0, np.float64)
        s.residual = part.alloc(np.float64, 0.0, ("out",))
        part.kernels("boxes").box_fill(s.residual[:n], (1.0 - self.damping) / size)
        s.share = part.alloc(np.float64, 0.0, ("in",))
        s.taken = -1                       # the last pull step whose shares are taken
        s.frontier = Frontier(part)
        vertex_map(part, above, s.residual, s.threshold, out=s.frontier)
        s.edges = s.frontier.swap()        # the out-edges of the queue compute takes
        s.pushed = 0                       # the edges pushed since the last vote
        s.sample = part.arange(PRIORITY_SAMPLE)

    def start(self):
        self.pushed = 0
        self.pulls = True

    def mode(self, step):
        """Pull while the active vertices' out-edges are more than PULL_SHARE of the graph's
        (every vertex at first): a pull round reads every in-edge once without atomics, where a
        push writes each active out-edge's head with an atomic add."""
        return self.modes[1] if self.pulls else self.modes[0]

    def finished(self, total):
        pushed, edges, streamed = total.sums
        self.pushed += int(pushed)
        # edges read from host memory cost by the byte: a pull reads them all, a push only
        # the active vertices' rows
        self.pulls = not streamed and total.edges > PULL_SHARE * edges
        return super().finished(total)

    def _take(self, part, step):
        """A pull step's shares, once: the active vertices' (every vertex with a residual on a
        topology-driven path), 0 for the others."""
        s = part.state
        if s.taken == step:
            return
        s.taken = step
        td = part.path is not None and part.path.worklist == "td"
        vertex_map(part, take_above, s.residual, s.rank, part.out_degree, s.share, self.damping,
                   0.0 if td else s.threshold)

    def reads_ghosts(self, part, step, mode):
        return True

    def gather(self, part, step, mode):
        self._take(part, step)
        return vertex_values(part, boundary_share, part.state.share,
                             at=part.views["in"].boundary_lvid, dtype=np.float64)

    def compute(self, part, step, mode, box):
        s = part.state
        f = s.frontier
        if mode.name == "pull":
            self._take(part, step)
            s.pushed += part.views["in"].host.indices.size
            pull(part, "in", in_share, s.share, s.residual, apply=add_shares)
            return
        if part.path is not None and part.path.worklist == "td":
            vertex_map(part, holding, s.residual, out=f)
            s.edges = f.swap()
        if part.path is not None and part.path.priority and f.length:
            cut = priority_cut(part, f, s.residual, s.sample)
            vertex_map(part, at_least, s.residual, cut, vertices=f.items, length=f.length,
                       out=f)
            s.edges = f.swap()      # the others wait: vote and next_round find them again
        s.pushed += s.edges
        advance(part, "out", f, push, s.residual, s.share, part.n_local, outbox=box,
                source=take, source_args=(s.residual, s.rank, part.out_degree, s.share,
                                          self.damping))

    def next_round(self, part, step, mode):
        """Async: the vertices whose residual the last round raised above the threshold."""
        s = part.state
        vertex_map(part, above, s.residual, s.threshold, out=s.frontier)
        s.edges = s.frontier.swap()
        return s.frontier.length > 0

    def scatter(self, part, step, mode, inbox):
        receive(part, inbox, add_message, part.state.residual)

    def vote(self, part, step):
        s = part.state
        vertex_map(part, above, s.residual, s.threshold, out=s.frontier)
        s.edges = s.frontier.swap()
        pushed, s.pushed = s.pushed, 0
        return Vote(s.frontier.length, s.edges,
                    sums=(float(pushed), float(part.views["out"].host.indices.size),
                          float(not part.edges_resident)))

    def collect(self, parts, n_vertices):
        return (collect(parts, n_vertices, "rank", np.float64, 0.0)
                + collect(parts, n_vertices, "residual", np.float64, 0.0))
