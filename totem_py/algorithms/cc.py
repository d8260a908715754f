"""Weakly connected components: label = smallest vertex id in the component.

Min-label propagation over both edge directions (push): every vertex whose label dropped sends it
to all neighbours; remote labels travel as messages, min-combined.
"""

import numpy as np

from bsp import Algorithm, Message, Mode, Vote

from .common import Queue, collect

LABEL = Message(np.int64, "min", np.iinfo(np.int64).max)


class CC(Algorithm):
    name = "cc"
    modes = (Mode("push", "both", "push", LABEL, state="label"),)

    def init(self, part):
        s = part.state
        s.label = part.alloc(np.int64, LABEL.identity, ("both",))
        s.label[:part.n_local] = part.to_device(part.gvids.astype(np.int64), count=False)
        s.changed = part.xp.zeros(part.n_local, dtype=np.uint8)
        s.queue = Queue(part)
        s.queue.start(part.xp.arange(part.n_local))

    def compute(self, part, step, mode, box):
        s, v, q = part.state, part.views["both"], part.state.queue
        part.kernels("cc").cc_push(v.indptr, v.indices, v.n_local, s.label, q.items, q.length,
                                   s.changed, q.next, q.next_len)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        part.kernels("cc").cc_scatter(inbox.values, inbox.lvid, s.label, s.changed, s.queue.next,
                                      s.queue.next_len)

    def vote(self, part, step):
        s, q = part.state, part.state.queue
        q.swap()
        part.kernels("cc").cc_clear(s.changed, q.items, q.length)
        return Vote(q.length)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "label", np.int64, -1)
