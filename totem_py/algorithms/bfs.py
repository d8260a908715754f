"""Breadth-first search: hop levels from one source (-1 unreachable).

Level-synchronous; the engine switches between the top-down "push" mode (frontier vertices claim
their unvisited out-neighbours, boundary claims travel as min-combined messages) and the bottom-up
"pull" mode (each unvisited vertex looks for a parent in the frontier among its in-neighbours and
stops at the first). A bottom-up step needs of a remote in-neighbour only whether it is in the
frontier: each owner publishes one flag per boundary vertex and the flags travel packed to bits
(bsp/exchange.py), as TOTEM's bitmaps do, into a bitmap box of one bit per ghost slot; the local
frontier is read from a bitmap too (n/8 bytes stay in cache where the level array would miss).
A partition none of whose rows with in-edges is unvisited (under HIGH, the CPU's hubs after the
first steps) neither gets the flags nor computes.
Paths: sync-push-dd (top-down), sync-pull-td (bottom-up: every unvisited row) and
async-push-dd. The async path is label-correcting, as SSSP with unit weights: a round lowers a
target's level to its source's plus one wherever that is smaller (atomic_min) and queues it
again, and a partition goes on round after round until its queue empties; levels then drop to
the hop distances, exactly, however the rounds and exchanges interleave. `--path auto` switches
between the two sync paths (Alg. 2's rule, the engine's direction switch), and takes the async
one only where the run is still going after bsp/paths.py's HIGH_DIAMETER supersteps and every
partition keeps most of its edges inside (one partition, or BLOCK's on a road network: its
thousands of levels then run in a few launches), every partition at once and top-down from then
on: a bottom-up step assigns its frontier's level plus one to every vertex it finds a parent
for, which is exact only while the frontier is one level, as sync steps keep it, and a sync
top-down step claims a vertex once.
Races: a vertex is claimed by atomic_min on its level; only the claimer returns true, so a vertex
joins the next queue (or a ghost the outbox's touched list) once. Bottom-up rows are written only
by their own walk.
Result: the hop level of every vertex from the source (int64), -1 where it cannot be reached.
Serial reference: a FIFO queue over the CSR as lists. Verifier (GAP's): the source at level 0; no
edge from a reached vertex skips a level or leaves the reached set; every other reached vertex
has an in-neighbour one level up; the rest at -1 (one parallel pass, kernels_cpu/checks.py).
TOTEM fig. 11; Beamer et al., SC'12.
"""

import numpy as np

from bsp import (Frontier, Message, Mode, Vote, advance, atomic_max, atomic_min, bitmap, bitmap_bytes, pull,
                 put, receive, test_bit, vertex_values)
from kernels_cpu import checks

from ..errors import VerificationError
from .base import Algorithm, register
from .common import (SOURCE, UNVISITED, as_result, checked_source, collect, edge_ends, first,
                     owned_lvid, source_vertex)

UNREACHED = -1      # the result's level of a vertex the source cannot reach
SEED_VERTICES = 8192     # async rounds: a partition's vertices per group of seed levels
LEVEL = Message(np.int32, "min", UNVISITED)
FRONTIER = Message(np.bool_, "or", False)     # pull: is this ghost in the current frontier?


def claim(s, t, w, level, depth):
    """Top-down: t, unvisited, gets level depth + 1 (true for the one claimer)."""
    return level[t] == UNVISITED and atomic_min(level, t, depth + 1) == UNVISITED


def claim_message(v, m, level):
    """An inbox entry: the remote claim m of local vertex v."""
    return m != UNVISITED and atomic_min(level, v, m) == UNVISITED


def lower(s, t, w, level, n_local):
    """Async: t's level drops to s's plus one; true for the writer that lowers it (a ghost slot:
    for its first message of the superstep). A vertex lowered twice in a round is queued twice
    and walked twice, the second time for nothing."""
    nd = level[s] + 1
    if nd < level[t]:
        old = atomic_min(level, t, nd)
        if nd < old:
            return old == UNVISITED if t >= n_local else True
    return False


def lower_message(v, m, level):
    return m < level[v] and m < atomic_min(level, v, m)


def level_of(v, level):
    return level[v]


def unvisited(v, level, bits, ghosts, n_local, depth):
    return level[v] == UNVISITED


def find_parent(v, u, w, level, bits, ghosts, n_local, depth):
    """Bottom-up: is in-neighbour u in the frontier? (local: `bits`, ghost slot: `ghosts`)."""
    hit = test_bit(bits, u) if u < n_local else test_bit(ghosts, u - n_local)
    if hit:
        level[v] = depth + 1
    return hit


def in_frontier(v, level, depth):
    return level[v] == depth


def levels(graph, source):
    """The serial reference: hop level of every vertex from `source` (int64, -1 unreachable),
    by a FIFO queue."""
    if graph.n_vertices == 0:
        return np.empty(0, dtype=np.int64)
    source = checked_source(graph, source, "bfs", ValueError)
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    level = [UNREACHED] * graph.n_vertices
    level[source] = 0
    queue = [source]
    head = 0  # queue[head:] is still to be expanded
    while head < len(queue):
        u = queue[head]
        head += 1
        for v in indices[indptr[u]:indptr[u + 1]]:
            if level[v] == UNREACHED:
                level[v] = level[u] + 1
                queue.append(v)
    return np.array(level, dtype=np.int64)


def verify_levels(graph, source, level):
    """The verifier (the module docstring): None, or VerificationError naming the first bad
    vertex or edge."""
    level = as_result(graph, level, "bfs")
    if graph.n_vertices == 0:
        return
    if not np.issubdtype(level.dtype, np.integer):
        raise VerificationError(f"bfs: levels must be integers, got {level.dtype}")
    source = checked_source(graph, source, "bfs")
    level = level.astype(np.int64)
    if level[source] != 0:
        raise VerificationError(f"bfs: source {source} has level {level[source]}, expected 0")
    if (level < -1).any():
        v = first(level < -1)
        raise VerificationError(f"bfs: vertex {v} has level {level[v]} (unreached must be -1)")
    has_parent = np.zeros(graph.n_vertices, dtype=np.uint8)
    escape, skip = checks.level_edges(graph.indptr, graph.indices, level, has_parent)
    if escape >= 0:
        u, v = edge_ends(graph, escape)
        raise VerificationError(f"bfs: vertex {v} is unreached but has an in-edge from "
                                f"reached vertex {u}")
    if skip >= 0:
        u, v = edge_ends(graph, skip)
        raise VerificationError(f"bfs: vertex {v} has level {level[v]} but in-neighbour "
                                f"{u} has level {level[u]}")
    has_parent[source] = 1
    bad = (level >= 0) & (has_parent == 0)
    if bad.any():
        w = first(bad)
        raise VerificationError(f"bfs: vertex {w} has level {level[w]} but no in-neighbour "
                                f"at level {level[w] - 1}")


@register
class BFS(Algorithm):
    name = "bfs"
    modes = (Mode("push", "out", "push", LEVEL, state="level", records=True),
             Mode("pull", "in", "pull", FRONTIER))
    direction_optimizing = True
    paths = ("sync-push-dd", "sync-pull-td", "async-push-dd")
    auto_paths = ("sync-push-dd", "sync-pull-td")
    options = (SOURCE,)
    isolated = UNREACHED
    memory = (((96, 6, 0), (83, 6)), ((96, 6, 0), (83, 6)))

    def __init__(self, source):
        self.source = source

    @classmethod
    def from_options(cls, graph, source=None, seed=0, **_):
        return cls(source_vertex(graph, source, seed, cls.name))

    def traversed_edges(self, graph, values, records):
        return int(graph.out_degree[values >= 0].sum())

    def reference(self, graph):
        return levels(graph, self.source)

    def verify(self, graph, values):
        return verify_levels(graph, self.source, values)

    def init(self, part):
        s = part.state
        s.level = part.alloc(np.int32, UNVISITED, ("out", "in"))
        s.frontier = Frontier(part)
        s.bits = part.empty(bitmap_bytes(part.n_local), np.uint8)
        # unvisited rows with in-edges: a bottom-up step finds parents there only. Every vertex
        # visited after the source has one, so each vote takes its new frontier off the count.
        rows = part.views["in"]
        s.unreached = rows.nonempty_rows
        lv = owned_lvid(part, self.source)
        if lv is not None:
            put(part, s.level, lv, 0)
            s.unreached -= int(rows.host.indptr[lv + 1] > rows.host.indptr[lv])
        s.frontier.start(lv)
        s.seeded, s.later, s.depth = -1, None, 0    # async rounds' seeds (`_order_seeds`)

    def compute(self, part, step, mode, box):
        s = part.state
        s.pulled = mode.name == "pull"      # after bottom-up, the engine reads no edge count
        if part.path is not None and part.path.asynchronous:
            if s.seeded != step:
                s.seeded = step
                self._order_seeds(part)
            # small rounds go on in the same launch, up to the level of the next seeds
            most = True if s.later is None else (True, int(s.later_levels[0]) - s.depth - 1)
            s.depth += 1 + advance(part, "out", s.frontier, lower, s.level, part.n_local,
                                   outbox=box, rounds=most)
        elif mode.name == "push":
            advance(part, "out", s.frontier, claim, s.level, step, outbox=box)
        elif s.unreached:
            # bottom-up reads only unvisited rows, and stops at the first parent found: about
            # one line per row
            level = s.level[:part.n_local]
            # an in-neighbour has an out-edge: its row of "out" comes before the empty ones
            bitmap(part, in_frontier, level, step, out=s.bits, n=part.views["out"].rows_end)
            pull(part, "in", find_parent, s.level, s.bits, box, part.n_local, step,
                 row_fn=unvisited, out=s.frontier, reads=lambda: level == UNVISITED)

    def gather(self, part, step, mode):
        """Pull: the frontier flags of the boundary vertices (level == step)."""
        return vertex_values(part, in_frontier, part.state.level, step,
                             at=part.views[mode.view].boundary_lvid, dtype=np.bool_)

    def reads_ghosts(self, part, step, mode):
        return part.state.unreached > 0

    @staticmethod
    def _order_seeds(part):
        """Async, a superstep's first round: the queue (the vertices messages lowered) is walked
        in order of level, its vertices of the lowest levels first and the others (`later`)
        joining the round of their level (`next_round`). Where a partition's boundary is reached
        at many levels at once (a road network under BLOCK), a round of every level at once
        would let each higher wave run ahead and relax vertices that a lower one then lowers
        again; but each seed level joined costs a round through the host. So the seeds' levels
        go in at most n_local / SEED_VERTICES groups, a group joining at its lowest level
        (docs/results/bfs_crossings_road_2core.txt)."""
        s = part.state
        f = s.frontier
        s.later = None
        groups = part.n_local // SEED_VERTICES
        if f.length < 2 or groups < 2:      # one group: the queue as it is
            return
        queue = f.items[:f.length]
        levels = part.to_host(vertex_values(part, level_of, s.level, at=queue, dtype=np.int32),
                              count=False)
        if levels.min() == levels.max():
            return
        order = np.argsort(levels, kind="stable")
        items, levels = part.to_host(queue, count=False)[order], levels[order]
        distinct = np.unique(levels)
        starts = distinct[::-(-distinct.size // groups)]
        levels = starts[np.searchsorted(starts, levels, side="right") - 1]
        first = int(np.searchsorted(levels, levels[0], side="right"))
        if first == levels.size:
            return
        f.items[:first] = part.to_device(items[:first], count=False)
        f.length = first
        s.later, s.later_levels, s.depth = items[first:], levels[first:], int(levels[0])

    def next_round(self, part, step, mode):
        """Async: the vertices the last round lowered are the next round's, with the seeds of
        their level (`_order_seeds`; those of the next level where none are left). A seed
        lowered meanwhile is walked again for nothing; one that finds no room waits for a
        later round (the rounds are exact in any order)."""
        s = part.state
        f = s.frontier
        f.swap()
        if s.later is not None:
            if f.length == 0:
                s.depth = int(s.later_levels[0])
            k = min(int(np.searchsorted(s.later_levels, s.depth, side="right")),
                    f.items.size - f.length)
            f.items[f.length:f.length + k] = part.to_device(s.later[:k], count=False)
            f.length += k
            s.later, s.later_levels = s.later[k:], s.later_levels[k:]
            if s.later.size == 0:
                s.later = None
        return f.length > 0

    def scatter(self, part, step, mode, inbox):
        fn = lower_message if part.path is not None and part.path.asynchronous else claim_message
        receive(part, inbox, fn, part.state.level, out=part.state.frontier)

    def vote(self, part, step):
        s = part.state
        f = s.frontier
        edges = f.swap(count_edges=not s.pulled)
        s.unreached -= f.length
        return Vote(f.length, edges)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "level", np.int64, UNREACHED, UNVISITED)
