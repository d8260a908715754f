"""Weakly connected components: label = smallest vertex id in the component.

Min-label propagation over both edge directions (push): every vertex whose label dropped sends it
to all neighbours; remote labels travel as messages, min-combined.
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from .common import collect

LABEL = Message(np.int64, "min", np.iinfo(np.int64).max)


class CC(Algorithm):
    name = "cc"
    modes = (Mode("push", "both", "push", LABEL, state="label"),)

    def init(self, part):
        s, xp = part.state, part.xp
        s.label = part.alloc(np.int64, LABEL.identity, ("both",))
        s.label[:part.n_local] = part.to_device(part.gvids.astype(np.int64), count=False)
        s.changed = part.alloc(np.uint8, 0, ("both",))
        s.queue = xp.arange(part.n_local, dtype=np.int64)
        s.qlen = part.n_local

    def compute(self, part, step, mode, box):
        s, v = part.state, part.views["both"]
        part.kernels("cc").cc_push(v.indptr, v.indices, s.label, s.queue, s.qlen, s.changed)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("cc").cc_scatter(inbox, part.views["both"].boundary_lvid, s.label, s.changed)

    def vote(self, part, step):
        s = part.state
        s.qlen = int(part.kernels("frontier").frontier_from_flags(s.changed[:part.n_local],
                                                                 s.queue))
        return Vote(s.qlen)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "label", np.int64, -1)
