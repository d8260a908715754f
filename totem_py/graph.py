"""The immutable CSR graph every other part reads.

`indptr` is int64 (n_vertices + 1), `indices` is int32 while vertex ids fit and int64 beyond,
`weights` (optional) is float64 aligned with `indices`. Self-loops and parallel edges are kept: every
edge line of a file is an edge (DESIGN.md). The reverse (in-edge) CSR for pull algorithms is built on
first use and cached.
"""

import numpy as np

from bsp.errors import check_memory
from kernels_cpu import csr as _csr
from kernels_cpu.csr import index_dtype


def csr_bytes(n_vertices, n_edges, weighted=False):
    """Bytes of a CSR of this size (used to check memory before allocating)."""
    return (8 * (n_vertices + 1) + index_dtype(n_vertices).itemsize * n_edges
            + (8 * n_edges if weighted else 0))


def _frozen(a, dtype, copy):
    """`a` as a read-only contiguous array of `dtype`. With `copy`, an array the caller can still
    write is copied first (a read-only one is shared); without, `a` is the graph's own."""
    out = np.ascontiguousarray(a, dtype=dtype)
    if copy and out.flags.writeable and isinstance(a, np.ndarray) and \
            (out is a or np.may_share_memory(out, a)):      # an empty one shares no memory
        out = out.copy()
    out.flags.writeable = False
    return out


def _integers(a, what):
    """`a` as a 1-d integer array (ValueError naming `what` otherwise)."""
    a = np.asarray(a)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise ValueError(f"{what} must be a 1-d array of integers, got {a.dtype} of shape "
                         f"{a.shape}")
    return a


def _vertex_ids(a, n_vertices, what):
    """`a` as a 1-d integer array of vertex ids 0..n_vertices - 1 (ValueError naming `what` and
    the first id outside otherwise), checked before any conversion can wrap or truncate it."""
    a = _integers(a, what)
    if a.size and (a.min() < 0 or a.max() >= n_vertices):
        e = int(np.argmax((a < 0) | (a >= n_vertices)))
        raise ValueError(f"{what}[{e}] is {a[e]}, not a vertex id (0..{n_vertices - 1})")
    return a


def _weights(weights, n_edges):
    """`weights` as a 1-d array of numbers, one per edge (ValueError otherwise)."""
    w = np.asarray(weights)
    if w.ndim != 1 or w.dtype.kind not in "biuf":
        raise ValueError(f"weights must be a 1-d array of numbers, got {w.dtype} of shape "
                         f"{w.shape}")
    if w.size != n_edges:
        raise ValueError(f"{w.size} weights for {n_edges} edges")
    return w


def _check_csr(indptr, indices, weights):
    """The arrays of Graph(...) checked as a CSR (ValueError naming what is wrong)."""
    indptr = _integers(indptr, "indptr")
    if indptr.size == 0:
        raise ValueError("indptr is empty: it needs n_vertices + 1 entries")
    n_vertices = indptr.size - 1
    indices = _vertex_ids(indices, n_vertices, "indices")
    if weights is not None:
        weights = _weights(weights, indices.size)
    if indptr[0] != 0 or indptr[-1] != indices.size:
        raise ValueError(f"indptr must run from 0 to the {indices.size} edges, got "
                         f"{indptr[0]} to {indptr[-1]}")
    steps = np.diff(indptr.astype(np.int64, copy=False))
    if steps.size and steps.min() < 0:
        v = int(np.argmax(steps < 0))
        raise ValueError(f"indptr decreases at vertex {v} ({indptr[v]} then {indptr[v + 1]})")
    return indptr, indices, weights


class Graph:
    """A directed graph in CSR form. Undirected graphs store both directions of each edge.

    `Graph(indptr, indices, weights)` checks its arrays (ValueError naming what is wrong: ids
    outside the graph, a decreasing `indptr`, weights not one per edge, ids not integers, and
    with `directed=False` an edge without its reverse) and copies those the caller can still
    write. `checked=False` is for arrays built for the graph and known to be a valid CSR: they
    are taken as they are (and become read-only).
    """

    def __init__(self, indptr, indices, weights=None, spec="", directed=True, ids=None,
                 n_ids=None, checked=True):
        if checked:
            indptr, indices, weights = _check_csr(indptr, indices, weights)
        indptr = np.asarray(indptr)
        n_vertices = indptr.size - 1
        if n_vertices < 0 or indptr[0] != 0 or indptr[-1] != len(indices):
            raise ValueError("indptr does not describe indices")
        self.indptr = _frozen(indptr, np.int64, checked)
        self.indices = _frozen(indices, index_dtype(n_vertices), checked)
        self.weights = None if weights is None else _frozen(weights, np.float64, checked)
        self.spec = spec
        self.directed = directed
        # a compacted graph's (`compacted`): the original id of each vertex, and how many ids
        # the original had (its vertices in no edge too)
        self.ids = ids
        self._n_ids = n_ids
        self._reverse = None
        if checked and not directed:
            problem = self.asymmetry()
            if problem:
                raise ValueError(f"directed=False, but {problem}")

    @property
    def n_vertices(self):
        return self.indptr.size - 1

    @property
    def n_edges(self):
        return int(self.indptr[-1])

    @property
    def n_ids(self):
        """The vertex ids the graph's results cover: n_vertices, and for a compacted graph the
        vertices in no edge it leaves out too (ids n_vertices .. n_ids - 1, after its own)."""
        return self.n_vertices if self._n_ids is None else self._n_ids

    @property
    def out_degree(self):
        return np.diff(self.indptr)

    @property
    def in_degree(self):
        return np.diff(self.reverse().indptr)

    @property
    def nbytes(self):
        return self.indptr.nbytes + self.indices.nbytes + (0 if self.weights is None else self.weights.nbytes)

    @classmethod
    def from_edges(cls, src, dst, n_vertices, weights=None, spec="", directed=True,
                   checked=True):
        """CSR from an edge list, keeping the given order within each row (counting sort,
        O(V + E)). The edges are checked (ValueError naming what is wrong), and with
        `directed=False` that every edge has its reverse; `checked=False`: they are known to be
        valid."""
        if checked:
            if not isinstance(n_vertices, (int, np.integer)) or isinstance(n_vertices, bool) \
                    or n_vertices < 0:
                raise ValueError(f"n_vertices must be a non-negative integer, got {n_vertices!r}")
            check_memory(8 * (int(n_vertices) + 1), f"a graph of {n_vertices} vertices")
            src = _vertex_ids(src, n_vertices, "src")
            dst = _vertex_ids(dst, n_vertices, "dst")
            if src.size != dst.size:
                raise ValueError(f"{src.size} sources for {dst.size} targets")
            if weights is not None:
                weights = _weights(weights, src.size)
        src = np.asarray(src)
        dst = np.asarray(dst, dtype=index_dtype(n_vertices))
        indptr = np.cumsum(_csr.csr_degrees(src, n_vertices))
        indices = np.empty(src.size, dtype=dst.dtype)
        out_w = np.empty(src.size if weights is not None else 0, dtype=np.float64)
        w_in = np.asarray(weights, dtype=np.float64) if weights is not None else out_w
        _csr.place_rows(src, dst, w_in, weights is not None, False,
                        _csr.row_blocks(src.size, n_vertices, indptr), indptr[:-1].copy(),
                        indices, out_w)
        graph = cls(indptr, indices, out_w if weights is not None else None, spec, directed,
                    checked=False)
        if checked and not directed:
            problem = graph.asymmetry()
            if problem:
                raise ValueError(f"directed=False, but {problem}")
        return graph

    def edge_sources(self):
        """The COO row array (source of every edge), in CSR order."""
        out = np.empty(self.n_edges, dtype=self.indices.dtype)
        _csr.csr_expand_rows(self.indptr, out)
        return out

    def reverse(self):
        """The transposed graph (in-edges as a CSR); built once, then cached."""
        if self._reverse is None:
            if not self.directed:
                self._reverse = self
            else:
                rev = Graph(*_csr.transpose(self.indptr, self.indices, self.weights),
                            spec=self.spec + " (reverse)", checked=False)
                rev._reverse = self
                self._reverse = rev
        return self._reverse

    def asymmetry(self):
        """None if every edge (u, v) is stored as often as (v, u), with the same weights (as an
        undirected graph must be), else an edge whose reverse is missing, in words. Two
        counting-sort transposes (O(V + E)) decide; only where they differ (an asymmetric
        graph, or parallel edges of different weights stored in different orders) does a sort
        of the edges find the answer and the edge. The transpose's rows are sorted by id: it
        is compared with the graph itself if the graph's rows are sorted, else with its own
        transpose (the graph, rows sorted)."""
        t = Graph(*_csr.transpose(self.indptr, self.indices, self.weights), checked=False)
        rows = self if self._sorted_rows() else Graph(
            *_csr.transpose(t.indptr, t.indices, t.weights), checked=False)
        if (np.array_equal(t.indptr, rows.indptr) and np.array_equal(t.indices, rows.indices)
                and (self.weights is None or np.array_equal(t.weights, rows.weights))):
            return None
        src, dst, w = self.edge_sources(), self.indices, self.weights
        keys = (dst, src) if w is None else (w, dst, src)
        forward = np.lexsort(keys)                          # edges by (u, v[, w])
        backward = np.lexsort(keys[:-2] + (src, dst))       # reversed edges by (v, u[, w])
        same = (src[forward] == dst[backward]) & (dst[forward] == src[backward])
        if w is not None:
            same &= w[forward] == w[backward]
        if same.all():
            return None
        # at the first difference of the two sorted lists, the smaller entry has too few partners
        i = int(np.argmin(same))
        f, b = forward[i], backward[i]
        edge = (src[f], dst[f]) + (() if w is None else (w[f],))
        reverse = (dst[b], src[b]) + (() if w is None else (w[b],))
        e = f if edge < reverse else b        # an edge whose reverse is missing
        u, v = int(src[e]), int(dst[e])
        weight = "" if w is None else f" of weight {w[e]}"
        return f"edge {u} -> {v}{weight} has no reverse {v} -> {u}{weight}"

    def _sorted_rows(self):
        """Whether every row lists its targets in increasing order (ties allowed)."""
        down = np.diff(self.indices) < 0
        starts = self.indptr[1:-1]
        down[starts[(starts > 0) & (starts < self.n_edges)] - 1] = False
        return not down.any()

    def to_undirected(self):
        """Add the reverse of every edge (`--undirected`): each edge (u, v) also becomes (v, u)."""
        src = np.concatenate([self.edge_sources(), self.indices])
        dst = np.concatenate([self.indices, self.edge_sources()])
        w = None if self.weights is None else np.concatenate([self.weights, self.weights])
        return Graph.from_edges(src, dst, self.n_vertices, w, self.spec, directed=False,
                                checked=False)

    def compacted(self):
        """(graph, ids): this graph without the vertices that are in no edge, the others renumbered
        in increasing id order; `ids[new_id]` is the old id (`--relabel`). The graph keeps `ids`
        and the old vertex count (`n_ids`): it stands for every old vertex, those in no edge
        numbered after its own (`with_isolated`, `original_order`)."""
        present = np.zeros(self.n_vertices, dtype=bool)
        present[self.indices] = True
        present[self.out_degree > 0] = True
        ids = np.flatnonzero(present)
        new_id = np.zeros(self.n_vertices, dtype=index_dtype(ids.size))
        new_id[ids] = np.arange(ids.size)
        # the rows dropped are empty, so the kept rows' edges stay where they are
        graph = Graph(np.append(self.indptr[ids], self.n_edges), new_id[self.indices],
                      self.weights, self.spec, self.directed, ids=ids, n_ids=self.n_ids,
                      checked=False)
        return graph, ids

    def with_isolated(self):
        """The graph with the vertices in no edge that it leaves out, numbered after its own
        (the whole graph up to the order of ids; itself when it leaves none out)."""
        if self.n_ids == self.n_vertices:
            return self
        indptr = np.concatenate([self.indptr, np.full(self.n_ids - self.n_vertices,
                                                      self.n_edges)])
        return Graph(indptr, self.indices, self.weights, self.spec, self.directed, checked=False)

    def original_order(self):
        """The original id of every id of `with_isolated()` (the stored vertices', then those of
        the vertices in no edge, each in increasing order); arange(n_ids) for a graph that was
        not compacted."""
        if self.ids is None:
            return np.arange(self.n_ids)
        left_out = np.ones(self.n_ids, dtype=bool)
        left_out[self.ids] = False
        return np.concatenate([self.ids, np.flatnonzero(left_out)])

    @classmethod
    def from_scipy(cls, matrix, directed=True, spec="scipy"):
        """A graph from a square scipy.sparse matrix or array: entry (u, v) is the edge u -> v,
        every stored entry one edge (duplicates are parallel edges, explicit zeros edges of weight
        0). The values become the weights unless every one is 1. `directed=False` says the matrix
        is symmetric (ValueError if it is not)."""
        import scipy.sparse as sp
        if not sp.issparse(matrix) or matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise ValueError(f"from_scipy needs a square scipy.sparse matrix, got "
                             f"{type(matrix).__name__} of shape {getattr(matrix, 'shape', None)}")
        coo = sp.coo_array(matrix)      # a CSR would add up duplicate COO entries
        data = np.asarray(coo.data, dtype=np.float64)
        weights = None if data.size == 0 or (data == 1).all() else data
        return cls.from_edges(coo.row, coo.col, matrix.shape[0], weights, spec, directed)

    def to_scipy(self):
        """A scipy.sparse.csr_array of shape (n, n): entry (u, v) per edge u -> v, its weight or 1
        (parallel edges stay separate entries; scipy adds them up when it converts or computes)."""
        import scipy.sparse as sp
        data = self.weights.copy() if self.weights is not None else np.ones(self.n_edges)
        return sp.csr_array((data, self.indices.copy(), self.indptr.copy()),
                            shape=(self.n_vertices, self.n_vertices))

    @classmethod
    def from_networkx(cls, graph, nodelist=None, weight="weight"):
        """A graph from a networkx graph: vertex i is `nodelist[i]` (default `list(graph)`, the
        order networkx's own matrix conversions use). Undirected graphs store both directions of
        each edge (a self-loop once); multigraphs keep parallel edges. The `weight` attribute
        becomes the weights (1 where an edge lacks it) if any edge has it."""
        nodes = list(graph) if nodelist is None else list(nodelist)
        index = {v: i for i, v in enumerate(nodes)}
        if len(index) != len(nodes):
            raise ValueError("from_networkx: nodelist has repeated nodes")
        if len(index) != graph.number_of_nodes() or any(v not in graph for v in nodes):
            raise ValueError("from_networkx: nodelist must hold every node of the graph once")
        edges = list(graph.edges(data=weight, default=None))
        src = np.array([index[u] for u, _, _ in edges], dtype=np.int64)
        dst = np.array([index[v] for _, v, _ in edges], dtype=np.int64)
        weighted = any(w is not None for _, _, w in edges)
        w = np.array([1.0 if w is None else w for _, _, w in edges]) if weighted else None
        directed = graph.is_directed()
        if not directed:
            back = src != dst
            src, dst = np.concatenate([src, dst[back]]), np.concatenate([dst, src[back]])
            w = None if w is None else np.concatenate([w, w[back]])
        return cls.from_edges(src, dst, len(nodes), w, "networkx", directed)

    def to_networkx(self, multigraph=False):
        """A networkx DiGraph (nx.Graph for an undirected graph) on nodes 0..n-1, the weights as
        the `weight` attribute. Parallel edges become one edge (the last one's weight) unless
        `multigraph`, which keeps them (MultiDiGraph / MultiGraph)."""
        import networkx as nx
        kinds = {(True, False): nx.DiGraph, (False, False): nx.Graph,
                 (True, True): nx.MultiDiGraph, (False, True): nx.MultiGraph}
        out = kinds[self.directed, bool(multigraph)]()
        out.add_nodes_from(range(self.n_vertices))
        src, dst = self.edge_sources().tolist(), self.indices.tolist()
        if self.weights is None:
            edges = zip(src, dst)
        else:
            edges = ((u, v, {"weight": w}) for u, v, w in zip(src, dst, self.weights.tolist()))
        if not self.directed and multigraph:     # each undirected edge is stored both ways
            edges = (e for e in edges if e[0] <= e[1])
        out.add_edges_from(edges)
        return out

    def with_weights(self, weights):
        """The graph with these weights (one per edge, in CSR order; copied if writeable)."""
        weights = _frozen(_weights(weights, self.n_edges), np.float64, True)
        return Graph(self.indptr, self.indices, weights, self.spec, self.directed, self.ids,
                     self._n_ids, checked=False)

    def __repr__(self):
        w = ", weighted" if self.weights is not None else ""
        return f"Graph({self.spec or 'unnamed'}: {self.n_vertices} vertices, {self.n_edges} edges{w})"
