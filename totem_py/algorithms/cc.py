"""Weakly connected components: label = smallest vertex id in the component.

Each partition first joins its vertices and ghost slots with a local union-find over both edge
directions (Afforest: Sutton, Ben-Nun, Barak, IPDPS'18, as GAP's cc.cc; a hand-tuned kernel pair,
kernels_cpu/cc.py and kernels_gpu/cc.py, called by `afforest`); then min-label propagation
runs between partitions: a set whose label dropped sends it to the owners of its ghosts,
min-combined, until no label changes. With one partition this is plain Afforest and finishes in
one superstep.
Races: labels drop through atomic_min; the writer that lowers a set's label claims its flag with
atomic_max. Every node (vertex or ghost slot) of a set writes the set's root only through atomics.
Result: each vertex's label (int64), the smallest vertex id in its component; a vertex in no edge
is its own. Serial reference: union-find over the edge list. Verifier: labels are constant along
every edge, each label is the smallest id carrying it, and there are as many labels as weakly
connected components (a parallel union-find counts them, kernels_cpu/checks.py).
"""

import numpy as np

from bsp import Message, Mode, Vote, atomic_max, atomic_min, receive, vertex_map
from kernels_cpu import checks

from ..errors import VerificationError
from .base import Algorithm, register
from .common import as_result, collect, edge_ends, first

LABEL = Message(np.int64, "min", np.iinfo(np.int64).max)


def afforest(part, view, comp, seed):
    """The local phase over the rows of `view` (its segments, when the edges stream): the sampled
    links, then the rest; comp holds each node's root afterwards."""
    k = part.kernels("cc")
    for r in range(k.SAMPLE):
        for indptr, indices, _, first, end in view.row_segments("heads", warps=False):
            k.cc_link_sample(indptr, indices, end, comp, r, first)
        k.cc_compress(comp)
    giant = k.cc_frequent(comp[:view.n_local], 1024, seed)
    # the giant component's rows read their ghost edges (about a line, a prefix or a suffix of
    # the row), none without ghosts; the others whole
    ghosts = int(view.n_ghosts > 0)
    reads = lambda: (comp[:view.n_local] != giant).view(np.uint8) * (2 - ghosts) + ghosts  # noqa
    for indptr, indices, _, first, end in view.row_segments(reads):
        k.cc_link_rest(indptr, indices, view.n_local, comp, giant, first, end)
    k.cc_compress(comp)


def smallest_id(x, comp, gvid, label):
    """label[root] = the smallest global id among the nodes of the root's set."""
    r = comp[x]
    if gvid[x] < label[r]:      # read first: most nodes share one root, and an atomic on one
        atomic_min(label, r, gvid[x])   # address from every thread would serialise them
    return False


def publish(g, comp, label, changed, box, n_local, everything):
    """Ghost slot g carries its set's label when the label changed (or in the first step);
    true records the slot."""
    r = comp[n_local + g]
    if everything or changed[r]:
        box[g] = label[r]
        return True
    return False


def lower_label(v, m, comp, label, changed):
    r = comp[v]
    if m < label[r] and m < atomic_min(label, r, m):
        atomic_max(changed, r, 1)
    return False


def is_changed(x, changed):
    return changed[x] != 0


def reset(x, changed):
    changed[x] = 0
    return False


def final_label(v, comp, label, out):
    out[v] = label[comp[v]]
    return False


def components(graph):
    """The serial reference: weakly connected components by union-find; label = smallest
    vertex id in the component. A union always hangs the larger root under the smaller one, so
    every root is the smallest id of its set, and the label of v is simply find(v)."""
    n = graph.n_vertices
    parent = list(range(n))

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]  # path halving
            v = parent[v]
        return v

    for u, v in zip(graph.edge_sources().tolist(), graph.indices.tolist()):
        ru, rv = find(u), find(v)
        if ru < rv:
            parent[rv] = ru
        elif rv < ru:
            parent[ru] = rv
    return np.array([find(v) for v in range(n)], dtype=np.int64)


def verify_components(graph, labels):
    """The verifier (the module docstring): None, or VerificationError."""
    labels = as_result(graph, labels, "cc")
    n = graph.n_vertices
    if n == 0:
        return
    if not np.issubdtype(labels.dtype, np.integer):
        raise VerificationError(f"cc: labels must be integers, got {labels.dtype}")
    labels = labels.astype(np.int64)
    ids = np.arange(n)
    bad = (labels < 0) | (labels > ids)
    if bad.any():
        w = first(bad)
        raise VerificationError(f"cc: vertex {w} has label {labels[w]}, which is not a smaller id")
    bad = labels[labels] != labels
    if bad.any():
        w = first(bad)
        raise VerificationError(f"cc: vertex {w} has label {labels[w]} but vertex {labels[w]} "
                                f"has label {labels[labels[w]]}")
    e = checks.label_edges(graph.indptr, graph.indices, labels)
    if e >= 0:
        u, v = edge_ends(graph, e)
        raise VerificationError(f"cc: edge {u} -> {v} joins labels {labels[u]} and "
                                f"{labels[v]}")
    roots = checks.weak_roots(graph.indptr, graph.indices)
    n_components = int(np.count_nonzero(roots == ids))
    n_labels = np.unique(labels).size
    if n_labels != n_components:
        # labels are constant on components, so some label covers two components: name one
        raise VerificationError(f"cc: {n_labels} labels for {n_components} weak components "
                                f"(some label spans more than one component)")


@register
class CC(Algorithm):
    name = "cc"
    modes = (Mode("push", "both", "push", LABEL, records=True),)
    values_are_ids = True
    weak_components = True
    memory = (((197, 10, 0), (169, 10)), ((197, 18, 0), (169, 18)))

    def __init__(self, seed=0):
        self.seed = seed

    @classmethod
    def from_options(cls, graph, seed=0, **_):
        return cls(seed)

    def reference(self, graph):
        return components(graph)

    def verify(self, graph, values):
        return verify_components(graph, values)

    def isolated_values(self, graph):
        """A vertex in no edge is its own component."""
        return np.arange(graph.n_vertices, graph.n_ids)

    def init(self, part):
        s, v = part.state, part.view("both")
        n = v.n_local + v.n_ghosts
        s.comp = part.arange(n)
        s.label = part.full(n, LABEL.identity, np.int64)
        s.changed = part.full(n, 0, np.int32)
        s.gvid = v.node_gvid     # global id of every node, ghosts included
        s.active = 0

    def compute(self, part, step, mode, box):
        s, v = part.state, part.views["both"]
        if step == 0:
            afforest(part, v, s.comp, self.seed)
            vertex_map(part, smallest_id, s.comp, s.gvid, s.label, n=s.comp.size)
        vertex_map(part, publish, s.comp, s.label, s.changed, box.values, part.n_local, step == 0,
                   n=v.n_ghosts, out=(box.touched, box.count))
        vertex_map(part, reset, s.changed, n=s.changed.size)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, lower_label, s.comp, s.label, s.changed)

    def vote(self, part, step):
        s = part.state
        return Vote(vertex_map(part, is_changed, s.changed, n=s.changed.size, count=True))

    def collect(self, parts, n_vertices):
        for p in parts:
            with p.context():
                p.state.result = p.empty(p.n_local, np.int64)
                vertex_map(p, final_label, p.state.comp, p.state.label, p.state.result)
        return collect(parts, n_vertices, "result", np.int64, -1)
