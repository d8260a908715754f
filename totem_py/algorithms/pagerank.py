"""PageRank in two forms, both with d = 0.85 and r0 = 1/n:

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
"""

import math

import numpy as np

from bsp import (Algorithm, EdgeSpan, Message, Mode, Vote, advance, atomic_add, pull, receive,
                 vertex_map, vertex_values)
from bsp.api import Option

from .. import reference as ref, verify as check
from ..errors import InputError
from .common import collect

CONTRIB = Message(np.float32, "sum", 0.0)
CONTRIB64 = Message(np.float64, "sum", 0.0)     # the converged form's
PARTIAL = Message(np.float64, "sum", 0.0)       # a GPU's sum over its edges into a CPU vertex
ROUNDS = 5              # TOTEM's form: rounds by default
MAX_ROUNDS = 100        # the converged form: most rounds by default (networkx's max_iter)
SPLIT_FEWER = 4         # split rounds by default where the partials are this many times fewer


def contribution(u, rank, out_degree, contrib):
    d = out_degree[u]
    contrib[u] = rank[u] / d if d > 0 else 0.0
    return False


def in_contribution(v, u, w, contrib, rank, base, damping):
    return contrib[u]


def new_rank(v, total, contrib, rank, base, damping):
    rank[v] = base + damping * total


def local_contribution(v, u, w, contrib, own, n_local):
    """The CPU's share of a split round: its own vertices' contributions only."""
    return contrib[u] if u < n_local else 0.0


def store_own(v, total, contrib, own, n_local):
    own[v] = total


def new_rank_split(v, rank, own, partial, base, damping):
    """The CPU's rank: its own in-edges' sum and the GPUs' partial sum, then emptied."""
    rank[v] = base + damping * (own[v] + partial[v])
    partial[v] = 0.0
    return False


def push_partial(s, t, w, contrib, partial, lo, hi):
    """A GPU's edge to a CPU vertex (ghost slots lo..hi-1): its contribution added into the
    slot; true on the slot's first of the step (contributions are positive)."""
    if t >= lo and t < hi:
        return atomic_add(partial, t, contrib[s]) == 0.0
    return False


def store_partial(v, m, partial):
    partial[v] = m
    return False


def boundary_contribution(u, contrib):
    return contrib[u]


def shifted_contribution(v, rank, shift, prev, change, out_degree, contrib):
    """The converged form: x = r' + c, its change from the last round's x, its contribution."""
    x = rank[v] + shift
    change[v] = abs(x - prev[v])
    prev[v] = x
    d = out_degree[v]
    contrib[v] = x / d if d > 0 else 0.0
    return False


def boundary_shifted(u, rank, shift, out_degree):
    """The converged form: a boundary vertex's contribution, from r' + c (gather runs before
    compute forms them)."""
    d = out_degree[u]
    return (rank[u] + shift) / d if d > 0 else 0.0


class PageRank(Algorithm):
    name = "pagerank"
    modes = (Mode("pull", "in", "pull", CONTRIB, state="contrib"),
             Mode("partials", "in", "push", PARTIAL, state="partial", records=True))
    options = (Option("--iterations", dict(type=int, default=None, metavar="K",
                                           help=f"pagerank: rounds (default {ROUNDS}); with "
                                                f"--tol, the most rounds (default "
                                                f"{MAX_ROUNDS})")),
               Option("--tol", dict(type=float, default=None, metavar="TOL",
                                    help="pagerank: networkx's form instead of TOTEM's: dangling "
                                         "rank spread over every vertex, rounds until the L1 "
                                         "change is below n * TOL (networkx's default is 1e-6); "
                                         "without it, exactly --iterations rounds without "
                                         "dangling redistribution")))

    def __init__(self, iterations=None, damping=0.85, tol=None, split=None):
        if tol is not None and not 0 < tol < math.inf:
            raise ValueError("PageRank's tolerance must be a positive number")
        if iterations is None:
            iterations = ROUNDS if tol is None else MAX_ROUNDS
        if iterations < 1:
            raise ValueError("PageRank needs at least one round")
        self.iterations = iterations
        self.damping = damping
        self.tol = tol
        if tol is not None:
            self.modes = (Mode("pull", "in", "pull", CONTRIB64, state="contrib"),)
        self.split_rounds = split   # None: chosen at init (`_split_pays`)
        self.split = False
        self.converged = None       # the converged form: after a run, whether it converged
        self.rounds = None          # ... and the rounds of the result x_k (k)

    @classmethod
    def from_options(cls, graph, iterations=None, tol=None, **_):
        if iterations is not None and iterations < 1:
            raise InputError(f"--iterations must be at least 1, got {iterations}")
        if tol is not None and not 0 < tol < math.inf:
            raise InputError(f"--tol must be a positive number, got {tol}")
        return cls(iterations, tol=tol)

    def traversed_edges(self, graph, values, records):
        return graph.n_edges * sum(r["mode"] == "pull" for r in records)

    def reference(self, graph):
        if self.tol is not None:
            return ref.pagerank_converged(graph, self.tol, self.damping, self.iterations)
        return ref.pagerank(graph, self.iterations, self.damping)

    def verify(self, graph, values):
        if self.tol is not None:
            return check.verify_pagerank_converged(graph, self.tol, values, self.damping,
                                                   self.iterations)
        return check.verify_pagerank(graph, self.iterations, values)

    def init(self, part):
        s = part.state
        s.rank = part.full(part.n_local, 1.0 / max(part.n_vertices, 1), np.float64)
        s.contrib = part.alloc(self.modes[0].message.dtype, 0.0, ("in",))
        if self.tol is None:
            vertex_map(part, contribution, s.rank, part.out_degree, s.contrib)
            self._init_split(part)
            return
        s.prev = part.full(part.n_local, 1.0 / max(part.n_vertices, 1), np.float64)
        s.change = part.empty(part.n_local, np.float64)
        self.n = part.n_vertices
        self.shift = 0.0
        self.rounds, self.converged = 0, False

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
        host and their atomic adds into the hubs cost more than the CPU saves (rmat:22 HIGH 0.5, 2
        cores: the CPU partition 340 -> 211 ms, the emulated GPU partition 497 -> 1847 ms)."""
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
        in the partials (the GPUs' ghost slots of the CPU's vertices) than the CPU no longer reads
        (its ghost slots). On rmat:22 that is 69x (HIGH 0.5) and 331x (HIGH 0.25), where the CPU
        holds the hubs; 1.0x and 2.2x under RAND, 0.01x and 0.06x under LOW. On an H100 host
        (rmat:24, 16 threads) split rounds took 0.55x the time of plain ones at HIGH 0.5 and
        0.44x at HIGH 0.25, but 1.9x at RAND 0.5 and 1.4x at RAND 0.25. Off where the plan's
        other views are on other MPI ranks."""
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
        return vertex_values(part, boundary_shifted, s.rank, self.shift, part.out_degree, at=at,
                             dtype=np.float64)

    def compute(self, part, step, mode, box):
        s = part.state
        base = (1.0 - self.damping) / max(part.n_vertices, 1)
        if self.tol is not None:
            vertex_map(part, shifted_contribution, s.rank, self.shift, s.prev, s.change,
                       part.out_degree, s.contrib)
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
            vertex_map(part, contribution, s.rank, part.out_degree, s.contrib)
            rounds = step // 2 + 1 if self.split else step + 1
            return Vote(part.n_local if rounds < self.iterations else 0)
        # the L1 change of x_step from x_{step-1}: none yet after the first superstep
        change = float(s.change.sum()) if step else math.inf
        return Vote(part.n_local, sums=(float(s.rank.sum()), change))

    def finished(self, total):
        if self.tol is None:
            return super().finished(total)
        rank_sum, change = total.sums
        n = max(self.n, 1)
        self.shift = (1.0 - rank_sum) / n       # x_{k+1} = r'_{k+1} + shift
        self.converged = change < n * self.tol or self.n == 0
        done = self.converged or self.rounds >= self.iterations
        if not done:
            self.rounds += 1
        return done

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "rank" if self.tol is None else "prev", np.float64, 0.0)
