"""Weakly connected components: label = smallest vertex id in the component.

Each partition first joins its vertices and ghost slots with a local union-find over both edge
directions (Afforest); then min-label propagation runs between partitions: a set whose label
dropped sends it to the owners of its ghosts, min-combined, until no label changes. With one
partition this is plain Afforest and finishes in one superstep.
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from .common import collect

LABEL = Message(np.int64, "min", np.iinfo(np.int64).max)


class CC(Algorithm):
    name = "cc"
    modes = (Mode("push", "both", "push", LABEL, records=True),)

    def __init__(self, seed=0):
        self.seed = seed

    def init(self, part):
        s, v = part.state, part.view("both")
        n = v.n_local + v.n_ghosts
        s.comp = part.arange(n)
        s.label = part.full(n, LABEL.identity, np.int64)
        s.changed = part.full(n, 0, np.int32)
        s.gvid = v.node_gvid     # global id of every node, ghosts included

    def compute(self, part, step, mode, box):
        k, s, v = part.kernels("cc"), part.state, part.views["both"]
        if step == 0:
            for r in range(k.SAMPLE):
                for indptr, indices, _, first, end in v.row_segments("heads", warps=False):
                    k.cc_link_sample(indptr, indices, end, s.comp, r, first)
                k.cc_compress(s.comp)
            giant = k.cc_frequent(s.comp[:v.n_local], 1024, self.seed)
            # the giant component's rows read one line (their ghost edges, stored last); the
            # others whole
            reads = lambda: (s.comp[:v.n_local] != giant).view(np.uint8) + 1   # noqa: E731
            for indptr, indices, _, first, end in v.row_segments(reads):
                k.cc_link_rest(indptr, indices, v.n_local, s.comp, giant, first, end)
            k.cc_compress(s.comp)
            k.cc_labels(s.comp, s.gvid, s.label)
        k.cc_publish(s.comp, s.label, v.n_local, s.changed, box.values, step == 0, box.touched,
                     box.count)
        s.changed.fill(0)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("cc").cc_scatter(inbox.values, inbox.lvid, s.comp, s.label, s.changed)

    def vote(self, part, step):
        return Vote(int(part.state.changed.sum()))

    def collect(self, parts, n_vertices):
        for p in parts:
            with p.context():
                p.state.result = p.xp.empty(p.n_local, dtype=np.int64)
                p.kernels("cc").cc_finish(p.state.comp, p.state.label, p.n_local, p.state.result)
        return collect(parts, n_vertices, "result", np.int64, -1)
