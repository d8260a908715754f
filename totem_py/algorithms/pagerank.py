"""PageRank in two forms, both with d = 0.85 and r0 = 1/n, and both, on a graph with weights,
sharing a vertex's rank among its out-edges in proportion to their weights (as networkx and
cuGraph do; `--unweighted` shares it equally): below, 1/outdeg(u) stands for w(u,v) / W(u), W(u)
the weight of u's out-edges in all (a vertex whose out-edges weigh 0 in all gives nothing, as
one without out-edges; networkx's form counts both as dangling). The weights reach the
functors as `w` (1 without them), and W(u) comes from the partition's out view
(`PartitionPlan.out_weight`).

TOTEM's (the default): exactly K rounds (--iterations, default 5) of
r(v) = (1-d)/n + d * sum_{(u,v)} r(u)/outdeg(u), no dangling redistribution (DESIGN.md): the rank
of vertices without out-edges leaves the graph, so the ranks sum to less than 1.

Converged (--tol TOL): networkx's `pagerank`: x(v) = (1-d)/n + d * (sum_{(u,v)} x(u)/outdeg(u) +
D/n), D the rank of the vertices without out-edges, spread evenly; rounds until the L1 change
||x_k - x_{k-1}|| is below n * TOL, the result x_k (networkx's rule and iterate: its default tol
is 1e-6), or until --iterations rounds (default 100, networkx's max_iter), the result then
marked not converged. The ranks sum to 1. The ranks are kept unshifted, r'(v) = (1-d)/n + d *
sum of contributions: as the x_k sum to 1, x = r' + c with c = (1 - sum r') / n the same for
every vertex, so no separate reduction of D is needed. Each vote reports the partition's sum of r'
and its share of the L1 change; `finished` turns the global sums into c and the convergence test.
Each superstep first forms x_k = r'_k + c_k (its change from x_{k-1}, its contributions), then
pulls r'_{k+1}: the change of x_k is known after superstep k, so one round more is computed than
returned (its r' is dropped).

Pull over in-edges (TOTEM fig. 14): each round every partition publishes the contributions
r(u)/outdeg(u) of its boundary vertices, which land in the ghost slots of the partitions that read
them; no atomics anywhere. In TOTEM's form contributions travel and are read as float32 (as GAP's
scores are): half the bytes of the random reads that dominate a round; sums and ranks stay float64
(relative error near 1e-7). The converged form's are float64, as networkx computes: float32
rounding would leave an L1 change near 1e-8 between rounds, which a tolerance near it never gets
below (--tol 1e-9 on a 10-vertex chain: networkx stops after 50 rounds), and would make the
stopping round differ from networkx's where the change is close to n * TOL.

n counts every vertex id (`graph.n_ids`): with --relabel, the vertices in no edge that the run
leaves out have no in-edge and no out-edge, so in TOTEM's form each ends with (1-d)/n, and in the
converged one each is dangling: `finished` keeps their common rank, x = (1-d)/n + c, and adds
their share to the sums (rank, L1 change), as if they were in the run.

Serial references: K rounds of the formula over the whole CSR (NumPy); networkx's rounds by
SciPy's sparse product, one per round. Verifiers: after K rounds no cheap property pins the ranks
down, so every vertex is compared with the reference after the same rounds, within a relative
bound: contributions travel as float32 (2**-24 relative rounding) and sums are float64, so each
round adds at most 2**-24 to a rank's relative error; the bound allows four times K rounds' worth
(1.2e-6 for K = 5), so one wrong vertex fails. Converged: the ranks sum to 1, none is below the
teleport share (1-d)/n, their L1 distance to the fixed point (rounds to an L1 change of 1e-13) is
at most d/(1-d) * n * tol (what stopping at a change below n * tol guarantees), and every rank is
within 1e-9 relative of the reference's ranks at the round it stops at (or the next or previous
round where that round's change is within rounding of n * tol; the engine's float64 sums, added
in another order, differ from the reference's near 1e-15).
"""

import math
import numbers

import numpy as np

from bsp import (EdgeSpan, Message, Mode, Vote, advance, atomic_add, pull, receive,
                 vertex_map, vertex_values)

from ..errors import InputError, VerificationError, check_count
from .base import Algorithm, Option, register
from .common import as_result, collect, first, once_per_graph, positive_number

CONTRIB = Message(np.float32, "sum", 0.0)
CONTRIB64 = Message(np.float64, "sum", 0.0)     # the converged form's
PARTIAL = Message(np.float64, "sum", 0.0)       # a GPU's sum over its edges into a CPU vertex
ROUNDS = 5              # TOTEM's form: rounds by default
MAX_ROUNDS = 100        # the converged form: most rounds by default (networkx's max_iter)
SPLIT_FEWER = 4         # split rounds by default where the partials are this many times fewer


def contribution(u, rank, out_weight, contrib):
    d = out_weight[u]
    contrib[u] = rank[u] / d if d > 0 else 0.0
    return False


def in_contribution(v, u, w, contrib, rank, base, damping):
    return contrib[u] * w


def new_rank(v, total, contrib, rank, base, damping):
    rank[v] = base + damping * total


def local_contribution(v, u, w, contrib, own, n_local):
    """The CPU's share of a split round: its own vertices' contributions only."""
    return contrib[u] * w if u < n_local else 0.0


def store_own(v, total, contrib, own, n_local):
    own[v] = total


def new_rank_split(v, rank, own, partial, base, damping):
    """The CPU's rank: its own in-edges' sum and the GPUs' partial sum, then emptied."""
    rank[v] = base + damping * (own[v] + partial[v])
    partial[v] = 0.0
    return False


def push_partial(s, t, w, contrib, partial, lo, hi):
    """A GPU's edge to a CPU vertex (ghost slots lo..hi-1): its contribution added into the
    slot; true on the slot's first positive one of the step (a zero one adds nothing)."""
    c = contrib[s] * w
    if t >= lo and t < hi and c > 0:
        return atomic_add(partial, t, c) == 0.0
    return False


def store_partial(v, m, partial):
    partial[v] = m
    return False


def boundary_contribution(u, contrib):
    return contrib[u]


def shifted_contribution(v, rank, shift, prev, change, out_weight, contrib):
    """The converged form: x = r' + c, its change from the last round's x, its contribution."""
    x = rank[v] + shift
    change[v] = abs(x - prev[v])
    prev[v] = x
    d = out_weight[v]
    contrib[v] = x / d if d > 0 else 0.0
    return False


def boundary_shifted(u, rank, shift, out_weight):
    """The converged form: a boundary vertex's contribution, from r' + c (gather runs before
    compute forms them)."""
    d = out_weight[u]
    return (rank[u] + shift) / d if d > 0 else 0.0


# The out-edge weight sums W(u) a weighted run takes, by the dtype of the contributions
# rank / W(u): for ranks from 1e-10 to 1 these stay normal numbers of that dtype
WEIGHT_SUMS = {np.dtype(np.float32): (1e-20, 1e20), np.dtype(np.float64): (1e-280, 1e280)}


def check_out_weights(out_weight, dtype):
    """InputError unless every positive out-weight sum is within WEIGHT_SUMS[dtype] (an
    infinite weight, or sums past it, would make the ranks' shares overflow or vanish)."""
    low, high = WEIGHT_SUMS[np.dtype(dtype)]
    bad = (out_weight != 0) & ~((out_weight >= low) & (out_weight <= high))
    if bad.any():
        raise InputError(f"pagerank: a vertex's out-edges weigh {out_weight[bad][0]:g} in all, "
                         f"outside the {low:g} to {high:g} its {np.dtype(dtype)} rank shares "
                         f"carry; scale the weights, or --unweighted")


def edge_shares(graph, weighted=False):
    """(sources, targets, shares, out-weights) of the edges: the share of its source's rank an
    edge (u, v) carries, w(u, v) / W(u) with W(u) the sum of u's out-edge weights (1 / outdeg(u)
    unweighted, or without `weighted`); 0 where W(u) is 0. Parallel edges and self-loops count as
    often as they appear."""
    src = graph.edge_sources().astype(np.int64)
    dst = graph.indices.astype(np.int64)
    if weighted and graph.weights is not None:
        w = graph.weights
        out_weight = np.bincount(src, weights=w, minlength=graph.n_vertices)
    else:
        w = np.ones(src.size)
        out_weight = graph.out_degree.astype(np.float64)
    total = out_weight[src]
    shares = np.divide(w, total, out=np.zeros(src.size), where=total > 0)
    return src, dst, shares, out_weight


def rounds(graph, iterations, damping=0.85, weighted=False):
    """The serial reference of TOTEM's form: exactly `iterations` synchronous rounds from
    r0 = 1/n, no dangling redistribution. Each edge (u, v) carries its share of r(u)
    (`edge_shares`) to v; a vertex with no out-edges (or only weightless ones) loses its
    rank."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    src, dst, shares, _ = edge_shares(graph, weighted)
    ranks = np.full(n, 1.0 / n)
    for _ in range(int(iterations)):
        incoming = np.bincount(dst, weights=ranks[src] * shares, minlength=n)
        ranks = (1.0 - damping) / n + damping * incoming
    return ranks


def networkx_rounds(graph, damping=0.85, weighted=False):
    """networkx's PageRank rounds from x0 = 1/n (n > 0): yields (k, x_k, ||x_k - x_{k-1}||_1)
    for k = 1, 2, ... without end. x_k(v) = (1-d)/n + d * (sum over in-edges (u, v) of
    x_{k-1}(u) times the edge's share (`edge_shares`) + D/n), D the sum of x_{k-1} over the
    dangling vertices, those whose out-edges weigh 0 in all (or that have none); parallel edges
    and self-loops count as often as they appear (a CSR adds up duplicates)."""
    import scipy.sparse as sp
    n = graph.n_vertices
    src, dst, shares, out_weight = edge_shares(graph, weighted)
    P = sp.csr_array((shares, (dst, src)), shape=(n, n))     # P[v, u]: what u gives v
    dangling = np.flatnonzero(out_weight == 0)
    x = np.full(n, 1.0 / n)
    k = 0
    while True:
        new = (1.0 - damping) / n + damping * (P @ x + x[dangling].sum() / n)
        change = float(np.abs(new - x).sum())
        x = new
        k += 1
        yield k, x, change


def converged(graph, tol=1e-6, damping=0.85, max_iter=100, weighted=False):
    """The serial reference of the converged form, networkx's `pagerank`
    (nx.pagerank(G, alpha=damping, tol=tol, max_iter=max_iter, weight="weight" if weighted
    else None) on the graph as a MultiDiGraph with every vertex): `networkx_rounds` until the
    L1 change is below n * tol, that round's ranks; after max_iter rounds without, the last
    round's (where networkx raises PowerIterationFailedConvergence)."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    for k, x, change in networkx_rounds(graph, damping, weighted):
        if change < n * tol or k >= max_iter:
            return x


def verify_rounds(graph, iterations, ranks, damping=0.85, rtol=None, weighted=False):
    """TOTEM's form: each rank within `rtol` (default 4 * iterations * 2**-24, the module
    docstring) of the reference's after `iterations` rounds, relative to it (every reference
    rank is at least (1 - d) / n > 0)."""
    ranks = as_result(graph, ranks, "pagerank")
    if graph.n_vertices == 0:
        return
    if rtol is None:
        rtol = 4 * int(iterations) * 2.0 ** -24 + 1e-12
    ranks = ranks.astype(np.float64)
    expected = rounds(graph, iterations, damping, weighted)
    error = np.abs(ranks - expected) / expected
    bad = ~(error <= rtol)                      # NaN counts as bad
    if bad.any():
        w = int(np.argmax(np.where(np.isnan(error), np.inf, error)))
        raise VerificationError(
            f"pagerank: {int(bad.sum())} of {graph.n_vertices} vertices differ from "
            f"{int(iterations)} rounds by more than {rtol:.2g} relative; worst vertex {w} has "
            f"{ranks[w]:.9g}, expected {expected[w]:.9g}")


def stopping_rounds(graph, tol, damping=0.85, max_iter=100, weighted=False):
    """What verify_converged compares with: the reference's round the rule stops at, its ranks
    and its neighbours' ({k: x_k}), every round's L1 change ({k: change}), and the fixed point
    (rounds to a change below 1e-13)."""
    threshold = graph.n_vertices * tol
    stop, kept, changes = None, {}, {}
    for k, x, change in networkx_rounds(graph, damping, weighted):
        changes[k] = change
        if stop is None and (change < threshold or k >= max_iter):
            stop = k
        if stop is None or k <= stop + 1:
            kept[k] = x
            kept.pop(k - 3, None)
        if stop is not None and k > stop and (changes[stop] >= threshold or change < 1e-13
                                              or k >= 10000):
            break
    return stop, kept, changes, x


def verify_converged(graph, tol, ranks, damping=0.85, max_iter=100, weighted=False):
    """The converged form (networkx's): the module docstring's properties."""
    ranks = as_result(graph, ranks, "pagerank")
    n = graph.n_vertices
    if n == 0:
        return
    ranks = ranks.astype(np.float64)
    bad = ~np.isfinite(ranks)
    if bad.any():
        w = first(bad)
        raise VerificationError(f"pagerank: vertex {w} has {ranks[w]}")
    total = float(ranks.sum())
    if not abs(total - 1.0) <= 1e-9:
        raise VerificationError(f"pagerank: the ranks sum to {total:.9g}, not 1 (with --tol the "
                                f"rank of vertices without out-edges is spread, not lost)")
    floor = (1.0 - damping) / n
    bad = ranks < floor * (1.0 - 1e-9)
    if bad.any():
        w = first(bad)
        raise VerificationError(f"pagerank: vertex {w} has {ranks[w]:.9g}, below the teleport "
                                f"share (1-d)/n = {floor:.9g}")
    rtol = slack = 1e-9     # per vertex, relative; the L1 change's rounding (the ranks sum to 1)
    threshold = n * tol
    stop, kept, changes, fixed = once_per_graph(stopping_rounds)(graph, tol, damping, max_iter,
                                                                 weighted)
    if changes[stop] < threshold:       # converged: the distance the stopping rule guarantees
        distance = float(np.abs(ranks - fixed).sum())
        bound = damping / (1.0 - damping) * (threshold + slack) + slack
        if not distance <= bound:
            raise VerificationError(
                f"pagerank: L1 distance {distance:.3g} to the fixed point > d/(1-d) * n * tol = "
                f"{bound:.3g}")
    candidates = [stop]
    if stop > 1 and changes[stop - 1] < threshold + slack:
        candidates.append(stop - 1)
    if stop < max_iter and changes[stop] >= threshold - slack:
        candidates.append(stop + 1)
    for k in candidates:
        if (np.abs(ranks - kept[k]) <= rtol * kept[k]).all():
            return
    want = kept[stop]
    error = np.abs(ranks - want) / want
    w = int(np.argmax(error))
    raise VerificationError(
        f"pagerank: {int((error > rtol).sum())} of {n} vertices differ from the reference's "
        f"round {stop} (L1 change {changes[stop]:.3g}, n * tol = {threshold:.3g}) by more than "
        f"{rtol:.2g} relative; worst vertex {w} has {ranks[w]:.9g}, expected {want[w]:.9g}")


@register
class PageRank(Algorithm):
    name = "pagerank"
    nonnegative_weights = True      # a weighted graph's weights share out each vertex's rank
    modes = (Mode("pull", "in", "pull", CONTRIB, state="contrib"),
             Mode("partials", "in", "push", PARTIAL, state="partial", records=True))
    options = (Option("--iterations", dict(type=int, default=None, metavar="K",
                                           help=f"pagerank: rounds (default {ROUNDS}); with "
                                                f"--tol, the most rounds (default "
                                                f"{MAX_ROUNDS})")),
               Option("--tol", dict(type=positive_number, default=None, metavar="TOL",
                                    help="pagerank: networkx's form instead of TOTEM's: dangling "
                                         "rank spread over every vertex, rounds until the L1 "
                                         "change is below n * TOL (networkx's default is 1e-6); "
                                         "without it, exactly --iterations rounds without "
                                         "dangling redistribution")),
               Option("--unweighted", dict(action="store_true",
                                           help="pagerank: ignore the graph's edge weights (by "
                                                "default a vertex's rank is shared among its "
                                                "out-edges in proportion to their weights)")))
    memory = (((94, 7, 0), (66, 7)), ((94, 15, 0), (66, 15)))

    def __init__(self, iterations=None, damping=0.85, tol=None, split=None, n=None,
                 weighted=False):
        if tol is not None and not 0 < tol < math.inf:
            raise ValueError("PageRank's tolerance must be a positive number")
        if iterations is None:
            iterations = ROUNDS if tol is None else MAX_ROUNDS
        if not isinstance(iterations, numbers.Integral) or iterations < 1:
            raise ValueError(f"PageRank needs a whole number of rounds, at least one, got "
                             f"{iterations!r}")
        self.iterations = iterations
        self.damping = damping
        self.tol = tol
        self.weighted = self.needs_weights = weighted     # the views then carry the weights
        if tol is not None:
            self.modes = (Mode("pull", "in", "pull", CONTRIB64, state="contrib"),)
        self.split_rounds = split   # None: chosen at init (`_split_pays`)
        self.split = False
        self.n = n                  # vertices (graph.n_ids); None: those the partitions hold
        self.converged = None       # the converged form: after a run, whether it converged
        self.rounds = None          # ... and the rounds of the result x_k (k)

    @classmethod
    def from_options(cls, graph, iterations=None, tol=None, unweighted=False, **_):
        if iterations is not None:
            check_count(iterations, "--iterations", 1)
        if tol is not None and not 0 < tol < math.inf:
            raise InputError(f"--tol must be a positive number, got {tol}")
        return cls(iterations, tol=tol, n=graph.n_ids,
                   weighted=graph.weights is not None and not unweighted)

    def traversed_edges(self, graph, values, records):
        return graph.n_edges * sum(r.get("steps", 1) for r in records if r["mode"] == "pull")

    def reference(self, graph):
        if self.tol is not None:
            return converged(graph, self.tol, self.damping, self.iterations, self.weighted)
        return rounds(graph, self.iterations, self.damping, self.weighted)

    def verify(self, graph, values):
        if self.tol is not None:
            return verify_converged(graph, self.tol, values, self.damping, self.iterations,
                                    self.weighted)
        return verify_rounds(graph, self.iterations, values, self.damping,
                             weighted=self.weighted)

    def metrics(self):
        return dict(iterations=self.iterations, tol=self.tol, rounds=self.rounds,
                    converged=self.converged, weighted=self.weighted)

    def isolated_values(self, graph):
        """A vertex in no edge: (1-d)/n after TOTEM's rounds; the converged form's common rank
        of such vertices (`finished`)."""
        n = graph.n_ids if self.n is None else self.n
        rank = (1.0 - self.damping) / n if self.tol is None else self.isolated_rank
        return np.full(graph.n_ids - graph.n_vertices, rank)

    def start(self):
        if self.tol is not None:
            self.shift = 0.0                # c of the ranks the next superstep forms
            self.rounds, self.converged = 0, False
            self.isolated_rank = None       # x of a vertex in no edge, as the ranks' last round

    def init(self, part):
        s = part.state
        n = part.n_vertices if self.n is None else self.n
        s.rank = part.full(part.n_local, 1.0 / max(n, 1), np.float64)
        s.contrib = part.alloc(self.modes[0].message.dtype, 0.0, ("in",))
        # what a vertex's rank is divided by: its out-degree, or its out-edges' total weight
        s.out_weight = part.out_degree
        if self.weighted:
            out_weight = part.plan.out_weight(part.pid)
            check_out_weights(out_weight, self.modes[0].message.dtype)
            s.out_weight = part.to_device(out_weight, count=False)
        if self.tol is None:
            vertex_map(part, contribution, s.rank, s.out_weight, s.contrib)
            self._init_split(part)
            return
        s.prev = part.full(part.n_local, 1.0 / max(n, 1), np.float64)
        s.change = part.empty(part.n_local, np.float64)

    def _init_split(self, part):
        """TOTEM's form with one CPU partition and GPU partitions on an undirected graph: a round is
        two supersteps, and the GPUs do the work of every edge between the CPU and them. First
        ("partials"), each GPU adds the contributions of its boundary vertices over their edges into
        the CPU's vertices (its ghost slots of the CPU) and sends these sums, while the CPU sums its
        in-edges from its own vertices only; then ("pull") the CPU adds the sums it got, while the
        GPUs pull as in a plain round. Under HIGH the CPU holds the hubs, and most of their edges
        lead to GPU vertices (53% of the CPU's edges at HIGH 0.5 on rmat:22, 81% at 0.25): the CPU
        skips their reads, and the boxes carry one value per CPU vertex a GPU reaches, instead of
        one per GPU vertex the CPU reaches. The CPU's pull is `local`: its rows' edges to ghosts are
        skipped, not read. `split`: True or False forces it (where the partitions allow it), None
        chooses (`_split_pays`); not on the emulated device, where the GPU partitions run on the
        host and their atomic adds into the hubs cost more than the CPU saves."""
        plan, s = part.plan, part.state
        kinds = list(plan.kinds)
        self.split = (kinds.count("cpu") == 1 and "gpu" in kinds and not plan.graph.directed
                      and (self.split_rounds if self.split_rounds is not None
                           else self._split_pays(part)))
        if not self.split:
            return
        self.cpu_pid = kinds.index("cpu")
        s.partial = part.alloc(np.float64, 0.0, ("in",))
        if part.pid == self.cpu_pid:
            s.own = part.empty(part.n_local, np.float64)
        else:
            ghost_ptr = part.views["in"].host.ghost_ptr
            s.to_cpu = (part.n_local + int(ghost_ptr[self.cpu_pid]),
                        part.n_local + int(ghost_ptr[self.cpu_pid + 1]))

    @staticmethod
    def _split_pays(part):
        """By default: GPU partitions that run GPU code, their edges in device memory (the partials
        walk their boundary vertices' rows once more), and at least SPLIT_FEWER times fewer values
        in the partials (the GPUs' ghost slots of the CPU's vertices) than the CPU's ghost slots
        it skips: so under HIGH, where the CPU holds the hubs, and not under RAND or LOW
        (docs/results/ab/pagerank_split_rmat24_h100.txt).
        Off where the plan's other views are on other MPI ranks."""
        views = part.plan.views("in")
        if part.run_device not in ("gpu", "simulated") or not part.edges_resident \
                or any(v is None for v in views):
            return False
        cpu = list(part.plan.kinds).index("cpu")
        sent = sum(int(v.ghost_ptr[cpu + 1] - v.ghost_ptr[cpu])
                   for q, v in enumerate(views) if q != cpu)
        return SPLIT_FEWER * sent <= views[cpu].n_ghosts

    def mode(self, step):
        return self.modes[1] if self.split and step % 2 == 0 else self.modes[0]

    def reads_ghosts(self, part, step, mode):
        return not (self.split and part.pid == self.cpu_pid)

    def gather(self, part, step, mode):
        s = part.state
        at = part.views["in"].boundary_lvid
        if self.tol is None:
            return vertex_values(part, boundary_contribution, s.contrib, at=at, dtype=np.float32)
        return vertex_values(part, boundary_shifted, s.rank, self.shift, s.out_weight, at=at,
                             dtype=np.float64)

    def compute(self, part, step, mode, box):
        s = part.state
        base = (1.0 - self.damping) / max(part.n_vertices if self.n is None else self.n, 1)
        if self.tol is not None:
            vertex_map(part, shifted_contribution, s.rank, self.shift, s.prev, s.change,
                       s.out_weight, s.contrib)
        if mode.name == "partials":     # from the vertices the other partitions hold as ghosts
            if part.pid != self.cpu_pid:
                advance(part, "in", part.views["in"].boundary_lvid, push_partial, s.contrib,
                        s.partial, *s.to_cpu, outbox=box)
            else:       # the CPU's own share meanwhile (the GPUs' kernels run concurrently)
                pull(part, "in", local_contribution, s.contrib, s.own, part.n_local,
                     apply=store_own, span=EdgeSpan.LOCAL)
        elif self.split and part.pid == self.cpu_pid:
            vertex_map(part, new_rank_split, s.rank, s.own, s.partial, base, self.damping)
        else:
            pull(part, "in", in_contribution, s.contrib, s.rank, base, self.damping,
                 apply=new_rank)

    def scatter(self, part, step, mode, inbox):
        receive(part, inbox, store_partial, part.state.partial)

    def vote(self, part, step):
        s = part.state
        if self.tol is None:
            if self.split and step % 2 == 0:        # partials: the ranks are as they were
                return Vote(part.n_local)
            vertex_map(part, contribution, s.rank, s.out_weight, s.contrib)
            rounds = step // 2 + 1 if self.split else step + 1
            return Vote(part.n_local if rounds < self.iterations else 0)
        # the L1 change of x_step from x_{step-1}: none yet after the first superstep
        change = float(s.change.sum()) if step else math.inf
        return Vote(part.n_local, sums=(float(s.rank.sum()), change))

    def finished(self, total):
        if self.tol is None:
            return super().finished(total)
        rank_sum, change = total.sums
        held = total.active                     # the vertices the partitions hold
        n = held if self.n is None else self.n
        if n > held:                            # those in no edge, left out of the run
            teleport = (1.0 - self.damping) / n
            x = (teleport if self.rounds else 1.0 / n) + self.shift     # r' + c, round k
            if self.rounds:
                change += (n - held) * abs(x - self.isolated_rank)
            self.isolated_rank = x
            rank_sum += (n - held) * teleport   # their r' of the next round
        self.shift = (1.0 - rank_sum) / max(n, 1)   # x_{k+1} = r'_{k+1} + shift
        self.converged = change < n * self.tol or n == 0
        done = self.converged or self.rounds >= self.iterations
        if not done:
            self.rounds += 1
        return done

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "rank" if self.tol is None else "prev", np.float64, 0.0)
