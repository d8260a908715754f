"""The graph format MPI ranks read in parallel (`.tcsr`): the CSR as raw little-endian arrays
after a small header, so that a rank reads the rows of its own vertices by byte range and never
the rest. The layout is in docs/guide/graph_format.md:

    bytes 0-7      b"TOTEMCSR"
    bytes 8-15     L, the header's length in bytes (uint64, little-endian)
    bytes 16-16+L  the header, UTF-8 JSON: {"format": "totem_py-tcsr", "version": 1,
                   "directed": bool, "vertices": n, "edges": m,
                   "arrays": {NAME: {"dtype": "<i8", "offset": BYTES, "count": ITEMS}, ...}}
    the arrays     each at its offset (a multiple of 4096 from the file's start)

Arrays: `offsets` (<i8, n + 1: row v is ids[offsets[v]:offsets[v + 1]]), `ids` (the targets,
<i4 while ids fit in int32, else <i8; m), `in_degrees` (<i8, n), and `weights` (<f8, m) for a
weighted graph. An undirected graph stores both directions of every edge.

`python -m totem_py.convert IN OUT.tcsr` writes one; `--graph FILE.tcsr` reads one (whole in one
process, by rows under mpirun). Bad files raise InputError naming the file and what is wrong.
"""

import json
import os

import numpy as np

from kernels_cpu.csr import target_counts

from .errors import InputError, check_stages
from .graph import Graph, index_dtype

EXTENSION = ".tcsr"
MAGIC = b"TOTEMCSR"
FORMAT = "totem_py-tcsr"
VERSION = 1
ALIGN = 4096
MAX_HEADER = 1 << 20
DTYPES = {"offsets": ("<i8",), "ids": ("<i4", "<i8"), "in_degrees": ("<i8",),
          "weights": ("<f8",)}


def is_store(path):
    """Whether `path` names a .tcsr file (by its extension)."""
    return os.fspath(path).lower().endswith(EXTENSION)


def writer(graph):
    """A function writing `graph` as a .tcsr file to a binary file, front to back (for
    totem_py/outputs.py, which writes every output of a command)."""
    n, m = graph.n_vertices, graph.n_edges
    arrays = {"offsets": graph.indptr.astype("<i8", copy=False),
              "ids": graph.indices.astype("<i4" if index_dtype(n).itemsize == 4 else "<i8",
                                          copy=False),
              "in_degrees": target_counts(graph.indices, n)[1:].astype("<i8", copy=False)}
    if graph.weights is not None:
        arrays["weights"] = graph.weights.astype("<f8", copy=False)
    table, offset = {}, ALIGN            # the header fits in the first ALIGN bytes
    for name, a in arrays.items():
        table[name] = {"dtype": a.dtype.str, "offset": offset, "count": int(a.size)}
        offset = _aligned(offset + a.nbytes)
    header = json.dumps({"format": FORMAT, "version": VERSION, "directed": bool(graph.directed),
                         "vertices": n, "edges": m, "arrays": table}).encode()
    head = MAGIC + np.uint64(len(header)).astype("<u8").tobytes() + header
    assert len(head) <= ALIGN

    def write(f):
        f.write(head + bytes(ALIGN - len(head)))
        for a in arrays.values():
            f.write(memoryview(np.ascontiguousarray(a)).cast("B"))
            f.write(bytes(_aligned(a.nbytes) - a.nbytes))
    return write


def write(graph, path):
    """Write `graph` as a .tcsr file, all or nothing (totem_py/outputs.py)."""
    from .outputs import Outputs
    Outputs([("the .tcsr file", path)]).write([writer(graph)])


def _aligned(x):
    return -(-x // ALIGN) * ALIGN


class Store:
    """An open .tcsr file: its header, and reads of parts of its arrays."""

    def __init__(self, path):
        self.path = path = os.fspath(path)
        if not os.path.exists(path):
            raise InputError("no such file", path)
        if os.path.isdir(path):
            raise InputError("is a directory, not a graph file", path)
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                head = f.read(16)
                if len(head) < 16 or head[:8] != MAGIC:
                    raise self.bad("it does not start with TOTEMCSR")
                length = int(np.frombuffer(head[8:], "<u8")[0])
                if length > MAX_HEADER:
                    raise self.bad(f"a header of {length} bytes")
                text = f.read(length)
        except OSError as e:
            raise InputError(f"cannot read the file: {e.strerror or e}", path) from None
        try:
            h = json.loads(text)
        except (ValueError, UnicodeDecodeError):
            raise self.bad("the header is not JSON") from None
        except RecursionError:
            raise self.bad("the header is not JSON (brackets nested too deep)") from None
        if not isinstance(h, dict) or h.get("format") != FORMAT:
            raise self.bad(f"the header's format is not '{FORMAT}'")
        if h.get("version") != VERSION:
            raise InputError(f"unsupported {FORMAT} version {h.get('version')!r} (this reader "
                             f"knows {VERSION})", path)
        n, m, directed = h.get("vertices"), h.get("edges"), h.get("directed")
        if not (_count(n) and _count(m) and isinstance(directed, bool)):
            raise self.bad("'vertices' and 'edges' must be counts and 'directed' a boolean")
        self.n_vertices, self.n_edges, self.directed = n, m, directed
        arrays = h.get("arrays")
        if not isinstance(arrays, dict) or not {"offsets", "ids"} <= set(arrays):
            raise self.bad("the header lacks the 'offsets' or 'ids' array")
        expect = {"offsets": n + 1, "ids": m, "in_degrees": n, "weights": m}
        self.arrays = {}
        for name, a in arrays.items():
            if name not in DTYPES:
                raise self.bad(f"unknown array '{name}'")
            if (not isinstance(a, dict) or a.get("dtype") not in DTYPES[name]
                    or not _count(a.get("offset")) or a.get("count") != expect[name]):
                raise self.bad(f"array '{name}' must have a dtype of {', '.join(DTYPES[name])} "
                               f"and {expect[name]} items at an offset")
            dtype = np.dtype(a["dtype"])
            if a["offset"] < 16 + length or a["offset"] + dtype.itemsize * a["count"] > size:
                raise self.bad(f"array '{name}' lies outside the file ({size} bytes)")
            self.arrays[name] = (dtype, a["offset"])
        spans = sorted((offset, offset + dtype.itemsize * expect[name], name)
                       for name, (dtype, offset) in self.arrays.items() if expect[name])
        for (_, end, first), (start, _, second) in zip(spans, spans[1:]):
            if start < end:
                raise self.bad(f"arrays '{first}' and '{second}' overlap")
        self.weighted = "weights" in self.arrays
        if self.arrays["ids"][0].itemsize < index_dtype(n).itemsize:
            raise self.bad(f"'ids' are {self.arrays['ids'][0]} but {n} vertices need int64")
        dtype, offset = self.arrays["offsets"]
        # the offsets stay mapped: bounds of a range of rows are two reads (`edge_range`)
        self.offsets = np.memmap(path, dtype=dtype, mode="r", offset=offset, shape=(n + 1,))
        if self.offsets[0] != 0 or self.offsets[n] != m:
            raise self.bad(f"'offsets' must run from 0 to the {m} edges")

    def bad(self, what):
        return InputError(f"not a valid {FORMAT} file: {what}", self.path)

    def read(self, name, start, stop):
        """Items start:stop of array `name`, read from the file (nothing else is read)."""
        dtype, offset = self.arrays[name]
        try:
            out = np.fromfile(self.path, dtype=dtype, count=stop - start,
                              offset=offset + start * dtype.itemsize)
        except OSError as e:
            raise InputError(f"cannot read the file: {e.strerror or e}", self.path) from None
        if out.size != stop - start:
            raise self.bad(f"'{name}' is cut short")
        return out.astype(dtype.newbyteorder("="), copy=False)

    def rows(self, lo, hi):
        """Rows lo:hi: (indptr from 0, ids, weights or None), checked: offsets that do not
        decrease, ids of vertices, finite weights."""
        indptr = self.read("offsets", lo, hi + 1)
        steps = np.diff(indptr)
        if steps.size and steps.min() < 0:
            v = lo + int(np.argmax(steps < 0))
            raise self.bad(f"'offsets' decrease at vertex {v}")
        first = int(indptr[0])
        indptr -= first
        ids = self.read("ids", first, first + int(indptr[-1]))
        bad = np.flatnonzero((ids < 0) | (ids >= self.n_vertices)) if ids.size else ids[:0]
        if bad.size:
            raise self.bad(f"edge {first + bad[0]} (a row of vertex "
                           f"{self._row_of(indptr, lo, bad[0])}) points at {ids[bad[0]]}, not a "
                           f"vertex id (0..{self.n_vertices - 1})")
        weights = None
        if self.weighted:
            weights = self.read("weights", first, first + ids.size)
            bad = np.flatnonzero(~np.isfinite(weights))
            if bad.size:
                raise self.bad(f"edge {first + bad[0]} (a row of vertex "
                               f"{self._row_of(indptr, lo, bad[0])}) weighs {weights[bad[0]]}")
        return indptr, ids.astype(index_dtype(self.n_vertices), copy=False), weights

    @staticmethod
    def _row_of(indptr, lo, e):
        return lo + int(np.searchsorted(indptr, e, side="right")) - 1

    def in_degrees(self, lo, hi):
        """In-degrees of vertices lo:hi (None when the file has none)."""
        if "in_degrees" not in self.arrays:
            return None
        d = self.read("in_degrees", lo, hi)
        if d.size and d.min() < 0:
            raise self.bad(f"negative 'in_degrees' at vertex {lo + int(np.argmax(d < 0))}")
        return d

    def edge_range(self, lo, hi):
        return int(self.offsets[lo]), int(self.offsets[hi])


def _count(x):
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2 ** 62


def load(path, undirected=False, nonnegative=False, then=()):
    """The whole graph of a .tcsr file (one process); `undirected` adds the reverse of every
    edge of a directed graph; `nonnegative` refuses a negative weight; `then`: the stages after
    loading (errors.STAGE_COSTS) whose host memory is checked with the loading's, first."""
    store = Store(path)
    n, m = store.n_vertices, store.n_edges
    mirror = undirected and store.directed
    check_stages(n, m, store.weighted, ("load_npz",) + (("undirected",) if mirror else ())
                 + tuple(then), store.path)
    indptr, ids, weights = store.rows(0, n)
    degrees = store.in_degrees(0, n)
    if degrees is not None and not np.array_equal(degrees, target_counts(ids, n)[1:]):
        raise store.bad("'in_degrees' do not count the ids")
    graph = Graph(indptr, ids, weights, spec=store.path, directed=store.directed, checked=False)
    if not graph.directed:
        from .io import _check_symmetric
        _check_symmetric(graph, store.bad)
    if nonnegative and weights is not None and weights.size and weights.min() < 0:
        e = int(np.argmin(weights))
        u = int(np.searchsorted(indptr, e, side="right")) - 1
        from .io import needs_nonnegative
        raise InputError(f"the weight of edge {u} -> {ids[e]} ({weights[e]}) is negative "
                         f"({needs_nonnegative(nonnegative)})", store.path)
    return graph.to_undirected() if mirror else graph


def mapped(path, then=()):
    """The graph of a .tcsr file with its edges left in the file (--host-memory): the row
    index read, `indices` and `weights` read-only maps of the file (nothing read until used),
    and `edge_file` (bsp.stream.EdgeFile) reading them by range, which the partitions' views
    are built from and stream from (partitioners/spill.py). `then`: the stages after loading,
    whose host memory is checked without the edges (errors.check_stages)."""
    from bsp.stream import EdgeFile
    store = Store(path)
    n, m = store.n_vertices, store.n_edges
    check_stages(n, 0, store.weighted, ("load_npz",) + tuple(then), store.path)
    indptr = store.read("offsets", 0, n + 1)
    if n and np.diff(indptr).min() < 0:
        v = int(np.argmax(np.diff(indptr) < 0))
        raise store.bad(f"'offsets' decrease at vertex {v}")
    if store.arrays["ids"][0].itemsize != index_dtype(n).itemsize:
        raise store.bad(f"'ids' are {store.arrays['ids'][0]} for {n} vertices (convert it "
                        f"again to read its edges from the file)")
    specs = {}
    for name in ("ids", "weights"):
        if name in store.arrays:
            dtype, offset = store.arrays[name]
            specs[name] = (dtype.str, offset, m)
    arrays = [np.memmap(store.path, dtype=s[0], mode="r", offset=s[1], shape=(m,)) if m else
              np.empty(0, s[0]) for s in (specs.get("ids"), specs.get("weights")) if s]
    graph = Graph(indptr, arrays[0], arrays[1] if len(arrays) > 1 else None, spec=store.path,
                  directed=store.directed, checked=False)
    graph.edge_file = EdgeFile(store.path, specs["ids"], specs.get("weights"))
    return graph
