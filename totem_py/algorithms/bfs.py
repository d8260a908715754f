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
Races: a vertex is claimed by atomic_min on its level; only the claimer returns true, so a vertex
joins the next queue (or a ghost the outbox's touched list) once. Bottom-up rows are written only
by their own walk.
TOTEM fig. 11; Beamer et al., SC'12.
"""

import numpy as np

from bsp import (Algorithm, Frontier, Message, Mode, Vote, advance, atomic_min, bitmap,
                 bitmap_bytes, pull, put, receive, test_bit, vertex_values)

from .. import reference as ref, verify as check
from .common import SOURCE, collect, owned_lvid, source_vertex

UNVISITED = np.iinfo(np.int32).max
LEVEL = Message(np.int32, "min", UNVISITED)
FRONTIER = Message(np.bool_, "or", False)     # pull: is this ghost in the current frontier?


def claim(s, t, w, level, depth):
    """Top-down: t, unvisited, gets level depth + 1 (true for the one claimer)."""
    return level[t] == UNVISITED and atomic_min(level, t, depth + 1) == UNVISITED


def claim_message(v, m, level):
    """An inbox entry: the remote claim m of local vertex v."""
    return m != UNVISITED and atomic_min(level, v, m) == UNVISITED


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


class BFS(Algorithm):
    name = "bfs"
    modes = (Mode("push", "out", "push", LEVEL, state="level", records=True),
             Mode("pull", "in", "pull", FRONTIER))
    direction_optimizing = True
    options = (SOURCE,)

    def __init__(self, source):
        self.source = source

    @classmethod
    def from_options(cls, graph, source=None, seed=0, **_):
        return cls(source_vertex(graph, source, seed, cls.name))

    def traversed_edges(self, graph, values, records):
        return int(graph.out_degree[values >= 0].sum())

    def reference(self, graph):
        return ref.bfs_levels(graph, self.source)

    def verify(self, graph, values):
        return check.verify_bfs(graph, self.source, values)

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

    def compute(self, part, step, mode, box):
        s = part.state
        if mode.name == "push":
            advance(part, "out", s.frontier, claim, s.level, step, outbox=box)
        elif s.unreached:
            # bottom-up reads only unvisited rows, and stops at the first parent found: about
            # one line per row
            level = s.level[:part.n_local]
            bitmap(part, in_frontier, level, step, out=s.bits)
            pull(part, "in", find_parent, s.level, s.bits, box, part.n_local, step,
                 row_fn=unvisited, out=s.frontier, reads=lambda: level == UNVISITED)

    def gather(self, part, step, mode):
        """Pull: the frontier flags of the boundary vertices (level == step)."""
        return vertex_values(part, in_frontier, part.state.level, step,
                             at=part.views[mode.view].boundary_lvid, dtype=np.bool_)

    def reads_ghosts(self, part, step, mode):
        return part.state.unreached > 0

    def scatter(self, part, step, mode, inbox):
        receive(part, inbox, claim_message, part.state.level, out=part.state.frontier)

    def vote(self, part, step):
        f = part.state.frontier
        edges = f.swap()
        part.state.unreached -= f.length
        return Vote(f.length, edges)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "level", np.int64, -1, UNVISITED)
