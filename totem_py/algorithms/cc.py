"""Weakly connected components: label = smallest vertex id in the component.

Each partition first joins its vertices and ghost slots with a local union-find over both edge
directions (Afforest: Sutton, Ben-Nun, Barak, IPDPS'18, as GAP's cc.cc), written with the
operators (`afforest`): every local vertex and every ghost slot is a union-find node (ghost slot
s is node n_local + s). Each row links its first, then its second edge (pull with skip, the
edge functor true at once), each round followed by a compression; the component most frequent
among 1024 seeded random vertices is the giant one. Then every row links its edges to ghost
slots (a ghost has no row here to link it from its side), and the rows outside the giant
component their edges to local vertices: a local edge of a row of the giant component is the
reversed edge of its target's row, which links it unless the target is in the giant component
too. Trees hang the higher node under the lower, so a root is its set's smallest node.
Then min-label propagation runs between partitions: a set whose label dropped sends it to the
owners of its ghosts, min-combined, until no label changes. With one partition this is plain
Afforest and finishes in one superstep. Its one path is async-push-dd: the union-find exhausts a
partition's local work in the first superstep's one round, and a label that arrives later
reaches the whole local set at once through its root; only the sets whose label dropped send.
Races: links through compare-and-swap on a root's parent (atomic_cas); labels drop through
atomic_min; the writer that lowers a set's label claims its flag with atomic_max and counts the
set (the vote), so no pass over the nodes counts the flags or, in the first superstep, clears
them. Every node (vertex or ghost slot) of a set writes the set's root only through atomics.
Result: each vertex's label (int64), the smallest vertex id in its component; a vertex in no edge
is its own. Serial reference: union-find over the edge list. Verifier: labels are constant along
every edge, each label is the smallest id carrying it, and there are as many labels as weakly
connected components (a parallel union-find counts them, kernels_cpu/checks.py).
"""

import numpy as np

from bsp import (EdgeSpan, Message, Mode, Vote, atomic_add, atomic_cas, atomic_max, atomic_min,
                 device_function, pull, put, receive, vertex_map, vertex_values)
from kernels_cpu import checks

from ..errors import VerificationError
from .base import Algorithm, register
from .common import as_result, collect, edge_ends, first

LABEL = Message(np.int64, "min", np.iinfo(np.int64).max)
SAMPLE = 2          # Afforest's sampled edges per row
SAMPLES = 1024      # random vertices that tell the giant component


@device_function
def link(u, v, comp):
    """Join the sets of nodes u and v: the higher of their roots hangs under the lower."""
    p1 = comp[u]
    p2 = comp[v]
    while p1 != p2:
        high = max(p1, p2)
        low = min(p1, p2)
        p_high = comp[high]
        if p_high == low:
            break
        if p_high == high and atomic_cas(comp, high, high, low) == high:
            break
        p1 = comp[comp[high]]
        p2 = comp[low]


def every_row(u, comp, giant):
    return True


def outside_giant(u, comp, giant):
    return comp[u] != giant


def link_first(u, t, w, comp, giant):
    """A sampled link: the first edge walked, then the row stops."""
    link(u, t, comp)
    return True


def link_edge(u, t, w, comp, giant):
    link(u, t, comp)
    return 0.0


def linked(u, total, comp, giant):
    return False


def compress(x, comp):
    while comp[x] != comp[comp[x]]:
        comp[x] = comp[comp[x]]
    return False


def root(x, comp):
    return comp[x]


def most_frequent(part, comp, n, seed):
    """The root most frequent among SAMPLES seeded random nodes below n (-1 when n is 0); the
    smallest such root where several are."""
    if n == 0:
        return -1
    picks = np.random.default_rng(seed).integers(0, n, SAMPLES)
    roots = vertex_values(part, root, comp, at=part.to_device(picks, count=False),
                          dtype=np.int64)
    values, counts = np.unique(part.to_host(roots, count=False), return_counts=True)
    return int(values[np.argmax(counts)])


def linked_nodes(view, comp):
    """How many of the first nodes links can reach: all, or without ghost slots up to the last
    vertex with edges (those after it, in no edge, stay sets of their own)."""
    return comp.size if view.n_ghosts else view.rows_end


def afforest(part, view, comp, seed):
    """The local phase over the rows of `view` (its segments, when the edges stream): the
    sampled links, then the rest; comp holds each node's root afterwards."""
    giant = -1      # not known while sampling
    nodes = linked_nodes(view, comp)
    for r in range(SAMPLE):
        pull(part, view, link_first, comp, giant, row_fn=every_row, skip=r, reads="heads")
        vertex_map(part, compress, comp, n=nodes)
    giant = most_frequent(part, comp, view.n_local, seed)
    if view.n_ghosts:
        pull(part, view, link_edge, comp, giant, apply=linked, row_fn=every_row,
             span=EdgeSpan.GHOST, skip=SAMPLE, reads="heads")
    # streamed edges: the rows outside the giant component are read whole, the others not
    reads = lambda: (comp[:view.n_local] != giant).view(np.uint8) * 2  # noqa: E731
    pull(part, view, link_edge, comp, giant, apply=linked, row_fn=outside_giant,
         span=EdgeSpan.LOCAL, skip=SAMPLE, reads=reads)
    vertex_map(part, compress, comp, n=nodes)


def own_id(x, gvid, label):
    label[x] = gvid[x]
    return False


def smallest_id(x, comp, gvid, label):
    """label[root] = the smallest global id among the nodes of the root's set (label[x] starts
    at x's own id)."""
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


def lower_label(v, m, comp, label, changed, dropped):
    """m lowers the label of v's set; the set's first drop this superstep flags its root and
    counts it in dropped[0]."""
    r = comp[v]
    if m < label[r] and m < atomic_min(label, r, m):
        if atomic_max(changed, r, 1) == 0:
            atomic_add(dropped, 0, 1)
    return False


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
    paths = ("async-push-dd",)
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
        s.changed = part.full(n, 0, np.int32)
        s.dropped = part.full(1, 0, np.int64)      # the sets whose label dropped this superstep
        s.gvid = v.node_gvid     # global id of every node, ghosts included
        s.label = part.empty(n, np.int64)
        vertex_map(part, own_id, s.gvid, s.label, n=n)
        s.active = 0

    def compute(self, part, step, mode, box):
        s, v = part.state, part.views["both"]
        if step == 0:
            afforest(part, v, s.comp, self.seed)
            vertex_map(part, smallest_id, s.comp, s.gvid, s.label, n=linked_nodes(v, s.comp))
        vertex_map(part, publish, s.comp, s.label, s.changed, box.values, part.n_local, step == 0,
                   n=v.n_ghosts, out=(box.touched, box.count))
        if step > 0:        # only a scatter flags a root
            vertex_map(part, reset, s.changed, n=s.changed.size)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, lower_label, s.comp, s.label, s.changed, s.dropped)

    def vote(self, part, step):
        s = part.state
        dropped = int(part.to_host(s.dropped, count=False)[0])
        put(part, s.dropped, 0, 0)
        return Vote(dropped)

    def collect(self, parts, n_vertices):
        for p in parts:
            with p.context():
                p.state.result = p.empty(p.n_local, np.int64)
                vertex_map(p, final_label, p.state.comp, p.state.label, p.state.result)
        return collect(parts, n_vertices, "result", np.int64, -1)
