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

from bsp import Algorithm, Message, Mode, Vote, pull, vertex_map, vertex_values
from bsp.api import Option

from .. import reference as ref, verify as check
from ..errors import InputError
from .common import collect

CONTRIB = Message(np.float32, "sum", 0.0)
CONTRIB64 = Message(np.float64, "sum", 0.0)     # the converged form's
ROUNDS = 5              # TOTEM's form: rounds by default
MAX_ROUNDS = 100        # the converged form: most rounds by default (networkx's max_iter)


def contribution(u, rank, out_degree, contrib):
    d = out_degree[u]
    contrib[u] = rank[u] / d if d > 0 else 0.0
    return False


def in_contribution(v, u, w, contrib, rank, base, damping):
    return contrib[u]


def new_rank(v, total, contrib, rank, base, damping):
    rank[v] = base + damping * total


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
    modes = (Mode("pull", "in", "pull", CONTRIB, state="contrib"),)
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

    def __init__(self, iterations=None, damping=0.85, tol=None):
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
        return graph.n_edges * len(records)

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
            return
        s.prev = part.full(part.n_local, 1.0 / max(part.n_vertices, 1), np.float64)
        s.change = part.empty(part.n_local, np.float64)
        self.n = part.n_vertices
        self.shift = 0.0
        self.rounds, self.converged = 0, False

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
        pull(part, "in", in_contribution, s.contrib, s.rank, base, self.damping, apply=new_rank)

    def vote(self, part, step):
        s = part.state
        if self.tol is None:
            vertex_map(part, contribution, s.rank, part.out_degree, s.contrib)
            return Vote(part.n_local if step + 1 < self.iterations else 0)
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
