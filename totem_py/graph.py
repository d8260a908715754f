"""The immutable CSR graph every other part reads.

`indptr` is int64 (n_vertices + 1), `indices` is int32 while vertex ids fit and int64 beyond,
`weights` (optional) is float64 aligned with `indices`. Self-loops and parallel edges are kept: every
edge line of a file is an edge (DESIGN.md). The reverse (in-edge) CSR for pull algorithms is built on
first use and cached.
"""

import numpy as np

from kernels_cpu import csr as _csr

INT32_MAX = np.iinfo(np.int32).max


def index_dtype(n_vertices):
    """int32 while ids fit, int64 beyond."""
    return np.dtype(np.int32) if n_vertices <= INT32_MAX else np.dtype(np.int64)


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

    def __init__(self, indptr, indices, weights=None, spec="", directed=True):
        indptr = np.asarray(indptr, dtype=np.int64)
        n_vertices = indptr.size - 1
        if n_vertices < 0 or indptr[0] != 0 or indptr[-1] != len(indices):
            raise ValueError("indptr does not describe indices")
        self.indptr = _frozen(indptr)
        self.indices = _frozen(np.asarray(indices, dtype=index_dtype(n_vertices)))
        self.weights = None if weights is None else _frozen(np.asarray(weights, dtype=np.float64))
        self.spec = spec
        self.directed = directed
        self._reverse = None

    @property
    def n_vertices(self):
        return self.indptr.size - 1

    @property
    def n_edges(self):
        return int(self.indptr[-1])

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

    def with_weights(self, weights):
        return Graph(self.indptr, self.indices, weights, self.spec, self.directed)

    def __repr__(self):
        w = ", weighted" if self.weights is not None else ""
        return f"Graph({self.spec or 'unnamed'}: {self.n_vertices} vertices, {self.n_edges} edges{w})"
