"""Breadth-first search: hop levels from one source (-1 unreachable).

Level-synchronous with a frontier queue; the engine switches between the top-down "push" mode
(frontier vertices mark their out-neighbours, boundary marks travel as messages, min-combined) and
the bottom-up "pull" mode (unvisited vertices look for a parent among their in-neighbours). A
bottom-up step needs of a remote in-neighbour only whether it is in the frontier, so each owner
publishes one flag per boundary vertex (level == the step's depth) and the flags travel packed to
bits (bsp/exchange.py), as TOTEM's bitmaps do, into a bitmap box of one bit per ghost slot,
separate from `level` (whose tail is the push mode's outbox). A partition none of whose rows with
in-edges is unvisited (under HIGH, the CPU's hubs after the first steps) neither gets the flags nor
computes.
TOTEM fig. 11; Beamer et al., SC'12.
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote
from kernels_cpu.bfs import UNVISITED

from .common import Queue, collect, owned_lvid, put

LEVEL = Message(np.int32, "min", UNVISITED)
FRONTIER = Message(np.bool_, "or", False)     # pull: is this ghost in the current frontier?


class BFS(Algorithm):
    name = "bfs"
    modes = (Mode("push", "out", "push", LEVEL, state="level", records=True),
             Mode("pull", "in", "pull", FRONTIER))
    direction_optimizing = True

    def __init__(self, source):
        self.source = source

    def init(self, part):
        s = part.state
        s.level = part.alloc(np.int32, UNVISITED, ("out", "in"))
        s.queue = Queue(part)
        # unvisited rows with in-edges: a bottom-up step finds parents there only. Every vertex
        # visited after the source has one, so each vote takes its new frontier off the count.
        rows = part.views["in"]
        s.unreached = rows.nonempty_rows
        lv = owned_lvid(part, self.source)
        if lv is not None:
            put(part, s.level, lv, 0)
            s.queue.start(lv)
            s.unreached -= int(rows.host.indptr[lv + 1] > rows.host.indptr[lv])

    def compute(self, part, step, mode, box):
        k, s, v = part.kernels("bfs"), part.state, part.views[mode.view]
        q = s.queue
        if mode.name == "push":
            for indptr, indices, _, queue, qlen in v.queue_segments(q.items, q.length):
                k.bfs_push(indptr, indices, v.n_local, s.level, queue, qlen, step,
                           q.next, q.next_len, box.touched, box.count)
        elif s.unreached:
            # bottom-up reads only unvisited rows, and stops at the first parent found: about
            # one line per row (`box`: the ghosts' frontier bits; the kernel reads level over
            # the locals only)
            level = s.level[:part.n_local]
            unvisited = lambda: level == UNVISITED     # noqa: E731
            for indptr, indices, _, first, end in v.row_segments(unvisited, warps=False):
                k.bfs_pull(indptr, indices, end, level, box, step, q.next, q.next_len, first)

    def gather(self, part, step, mode):
        """Pull: the frontier flags of the boundary vertices (the vertices reached in the last
        step have level == step, what bfs_pull's depth test reads)."""
        lvids = part.views[mode.view].boundary_lvid
        flags = part.empty(lvids.size, np.bool_)
        part.kernels("bfs").bfs_flags(part.state.level, lvids, step, flags)
        return flags

    def reads_ghosts(self, part, step, mode):
        return part.state.unreached > 0

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("bfs").bfs_scatter(inbox.values, inbox.lvid, s.level, s.queue.next,
                                        s.queue.next_len)

    def vote(self, part, step):
        q = part.state.queue
        edges = q.swap()
        part.state.unreached -= q.length
        return Vote(q.length, edges)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "level", np.int64, -1, UNVISITED)
