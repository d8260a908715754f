"""The immutable CSR graph every other part reads.

`indptr` is int64 (n_vertices + 1), `indices` is int32 while vertex ids fit and int64 beyond,
`weights` (optional) is float64 aligned with `indices`. Self-loops and parallel edges are kept: every
edge line of a file is an edge (DESIGN.md). The reverse (in-edge) CSR for pull algorithms is built on
first use and cached.
"""

import numpy as np

from kernels_cpu import csr as _csr
from kernels_cpu.csr import index_dtype

def csr_bytes(n_vertices, n_edges, weighted=False):
    """Bytes of a CSR of this size (used to check memory before allocating)."""
    return (8 * (n_vertices + 1) + index_dtype(n_vertices).itemsize * n_edges
            + (8 * n_edges if weighted else 0))


def _frozen(a):
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


class Graph:
    """A directed graph in CSR form. Undirected graphs store both directions of each edge."""

    def __init__(self, indptr, indices, weights=None, spec="", directed=True, ids=None,
                 n_ids=None):
        indptr = np.asarray(indptr, dtype=np.int64)
        n_vertices = indptr.size - 1
        if n_vertices < 0 or indptr[0] != 0 or indptr[-1] != len(indices):
            raise ValueError("indptr does not describe indices")
        self.indptr = _frozen(indptr)
        self.indices = _frozen(np.asarray(indices, dtype=index_dtype(n_vertices)))
        self.weights = None if weights is None else _frozen(np.asarray(weights, dtype=np.float64))
        self.spec = spec
        self.directed = directed
        # a compacted graph's (`compacted`): the original id of each vertex, and how many ids
        # the original had (its vertices in no edge too)
        self.ids = ids
        self._n_ids = n_ids
        self._reverse = None

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
    def from_edges(cls, src, dst, n_vertices, weights=None, spec="", directed=True):
        """CSR from an edge list, keeping the given order within each row (counting sort, O(V + E))."""
        src = np.asarray(src)
        dst = np.asarray(dst, dtype=index_dtype(n_vertices))
        indptr = np.cumsum(_csr.csr_degrees(src, n_vertices))
        indices = np.empty(src.size, dtype=dst.dtype)
        out_w = np.empty(src.size if weights is not None else 0, dtype=np.float64)
        w_in = np.asarray(weights, dtype=np.float64) if weights is not None else out_w
        _csr.csr_scatter(src, dst, w_in, indptr, indices, out_w, weights is not None)
        return cls(indptr, indices, out_w if weights is not None else None, spec, directed)

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
                rev = Graph.from_edges(self.indices, self.edge_sources(), self.n_vertices,
                                       self.weights, self.spec + " (reverse)")
                rev._reverse = self
                self._reverse = rev
        return self._reverse

    def to_undirected(self):
        """Add the reverse of every edge (`--undirected`): each edge (u, v) also becomes (v, u)."""
        src = np.concatenate([self.edge_sources(), self.indices])
        dst = np.concatenate([self.indices, self.edge_sources()])
        w = None if self.weights is None else np.concatenate([self.weights, self.weights])
        return Graph.from_edges(src, dst, self.n_vertices, w, self.spec, directed=False)

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
                      self.weights, self.spec, self.directed, ids=ids, n_ids=self.n_ids)
        return graph, ids

    def with_isolated(self):
        """The graph with the vertices in no edge that it leaves out, numbered after its own
        (the whole graph up to the order of ids; itself when it leaves none out)."""
        if self.n_ids == self.n_vertices:
            return self
        indptr = np.concatenate([self.indptr, np.full(self.n_ids - self.n_vertices,
                                                      self.n_edges)])
        return Graph(indptr, self.indices, self.weights, self.spec, self.directed)

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
        is symmetric (it is not checked)."""
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
        data = self.weights if self.weights is not None else np.ones(self.n_edges)
        return sp.csr_array((data, self.indices, self.indptr),
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
        return Graph(self.indptr, self.indices, weights, self.spec, self.directed, self.ids,
                     self._n_ids)

    def __repr__(self):
        w = ", weighted" if self.weights is not None else ""
        return f"Graph({self.spec or 'unnamed'}: {self.n_vertices} vertices, {self.n_edges} edges{w})"
