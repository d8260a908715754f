"""Local views built from edges that stay in a file (GTS: graphs larger than host memory).

A run with --host-memory on a `.tcsr` graph keeps the row index in memory and the edges in the
file (bsp/stream.py's EdgeFile). Each partition's local CSR (partitioners/plan.py's LocalView:
targets renamed to local ids and ghost slots, rows ordered) is then built block by block: a
block of the partition's rows, as many as `block_edges` of the file's edges span, is read,
renamed by the same kernels as in memory (kernels_cpu/plan.py) and written to a spill file,
which the partition reads page by page while it runs (bsp/stream.py's FileStream). The in-edge
view of a directed graph is first transposed into a spill file of its own, one range of targets
at a time (each range one pass over the file's pages, kernels_cpu/pages.py), and the view of
both directions merges a row of each. So at no time does the process hold more of the edges
than a few blocks. The local order is the global-id order (`hub_sort` "off"): a block of rows
read front to back is then a block of the local CSR written front to back. Spill files live in
a folder next to the graph file (else the temporary folder) and go when the plan goes.
"""

import os
import shutil
import tempfile
import weakref

import numpy as np

from bsp.stream import EdgeFile, page_starts, shifted
from kernels_cpu import pages as _kp
from kernels_cpu import plan as _k
from kernels_cpu.csr import index_dtype


class Spill:
    """The spill files of one plan: the file's edges (`source`, an EdgeFile over the graph's
    own CSR, row index `indptr`) and the transposed and merged CSRs made from them."""

    def __init__(self, indptr, source, block_edges, near=None):
        self.indptr = indptr
        self.source = source
        self.block = max(int(block_edges), 1)
        where = os.path.dirname(os.path.abspath(near)) if near else None
        try:
            self.folder = tempfile.mkdtemp(prefix=".totem-spill-", dir=where)
        except OSError:
            self.folder = tempfile.mkdtemp(prefix="totem-spill-")
        self._done = weakref.finalize(self, shutil.rmtree, self.folder, True)
        self._made = {}
        self.count = 0

    def csr(self, name, directed):
        """(row index, EdgeFile) of CSR view `name` of the graph."""
        if name == "out" or not directed:
            return self.indptr, self.source
        if name not in self._made:
            self._made[name] = (self._transpose() if name == "in" else self._merge())
        return self._made[name]

    def new_file(self, m, dtype, weighted):
        """(path, ids spec, weights spec or None) of a new spill file of m edges."""
        self.count += 1
        path = os.path.join(self.folder, f"{self.count}.edges")
        ids = (np.dtype(dtype).str, 0, m)
        start = -(-m * np.dtype(dtype).itemsize // 4096) * 4096
        return path, ids, ("<f8", start, m) if weighted else None

    def _transpose(self):
        """The in-edge CSR: per range of targets whose in-edges fit a block, one pass over
        the file's pages adding their edges to it in file order."""
        src, indptr = self.source, self.indptr
        n = indptr.size - 1
        pages = page_starts(indptr, n, self.block)
        ids, w = _buffers(src, int(np.diff(indptr[pages]).max(initial=1)))
        counts = np.zeros(n, np.int64)
        for r0, r1 in zip(pages[:-1], pages[1:]):
            lo, hi = int(indptr[r0]), int(indptr[r1])
            src.read(lo, hi, ids)
            _kp.page_count(ids[:hi - lo], counts)
        rptr = np.zeros(n + 1, np.int64)
        np.cumsum(counts, out=rptr[1:])
        del counts
        with _Writer(self, int(rptr[n]), src.dtype, src.weighted) as out:
            for a, b in _ranges(rptr, np.arange(n), self.block):
                base, top = int(rptr[a]), int(rptr[b])
                fill = rptr[a:b].copy()
                oi, ow = _buffers(src, top - base)
                for r0, r1 in zip(pages[:-1], pages[1:]):
                    lo, hi = int(indptr[r0]), int(indptr[r1])
                    src.read(lo, hi, ids, w)
                    _kp.page_transpose(indptr, r0, r1, lo, ids, _w(w), w is not None, a, b,
                                       fill, oi, _w(ow), base)
                out.write(base, top, oi, ow)
        return rptr, out.edge_file

    def _merge(self):
        """Both directions: row v is v's out-row, then its in-row."""
        p1, f1 = self.indptr, self.source
        p2, f2 = self.csr("in", True)
        n = p1.size - 1
        both = np.zeros(n + 1, np.int64)
        np.add(p1, p2, out=both)
        with _Writer(self, int(both[n]), f1.dtype, f1.weighted) as out:
            for a, b in _ranges(both, np.arange(n), self.block):
                lo1, hi1, lo2, hi2 = int(p1[a]), int(p1[b]), int(p2[a]), int(p2[b])
                i1, w1 = _buffers(f1, hi1 - lo1)
                i2, w2 = _buffers(f2, hi2 - lo2)
                f1.read(lo1, hi1, i1, w1)
                f2.read(lo2, hi2, i2, w2)
                oi, ow = _buffers(f1, int(both[b] - both[a]))
                _kp.page_merge(a, b, p1, lo1, i1, _w(w1), p2, lo2, i2, _w(w2), w1 is not None,
                               oi, _w(ow))
                out.write(int(both[a]), int(both[b]), oi, ow)
        return both, out.edge_file


def _w(w):
    return np.empty(0, np.float64) if w is None else w


def _buffers(edge_file, k):
    """Read buffers of k edges for `edge_file`: (ids, weights or None)."""
    k = max(int(k), 1)
    return (np.empty(k, edge_file.dtype),
            np.empty(k, np.float64) if edge_file.weighted else None)


def _ranges(indptr, rows, block):
    """(first, end) positions in `rows` (ascending vertex ids) of runs whose edges, from the
    first row's start to the last row's end, span at most `block` (a longer row alone)."""
    if rows.size == 0:
        return []
    begin, end = indptr[rows], indptr[rows + 1]
    out, i = [], 0
    while i < rows.size:
        j = max(i + 1, int(np.searchsorted(end, begin[i] + block, side="right")))
        out.append((i, j))
        i = j
    return out


class _Writer:
    """A spill file written block by block (ids, then the weights at their offset)."""

    def __init__(self, spill, m, dtype, weighted):
        self.path, ids, weights = spill.new_file(m, dtype, weighted)
        self.fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        self.width = np.dtype(dtype).itemsize
        self.wstart = weights[1] if weights else None
        self.edge_file = EdgeFile(self.path, ids, weights)

    def write(self, lo, hi, ids, weights=None):
        _pwrite(self.fd, ids[:hi - lo], lo * self.width)
        if weights is not None and self.wstart is not None:
            _pwrite(self.fd, weights[:hi - lo], self.wstart + lo * 8)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        os.fdatasync(self.fd)
        if hasattr(os, "posix_fadvise"):
            os.posix_fadvise(self.fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(self.fd)


def _pwrite(fd, array, offset):
    view = memoryview(np.ascontiguousarray(array)).cast("B")
    done = 0
    while done < view.nbytes:
        done += os.pwrite(fd, view[done:], offset + done)


def spill_views(plan, name, LocalView):
    """The LocalView of every partition for CSR view `name`, built block by block from the
    spill's files (the module's docstring); each view's `indices` and `weights` are read-only
    maps of its spill file (what the run reads goes through `edge_file`, page by page)."""
    from .plan import check_codes, view_tables
    spill = plan.spill
    g = plan.graph
    indptr, src = spill.csr(name, g.directed)
    n = g.n_vertices
    mark, table, order, part_ptr, owner = view_tables(plan, indptr)
    has_w = src.weighted
    views = []
    for pid, gvids in enumerate(plan.gvids):
        if gvids.size > 1 and np.any(np.diff(gvids) < 0):
            raise ValueError("edges read from a file need the local order 'off' (id order)")
        if gvids.size == n and src.dtype == index_dtype(n):   # the file's own CSR, in place
            views.append(_whole_graph(plan, indptr, src, LocalView))
            continue
        blocks = [(i, j, int(indptr[gvids[i]]), int(indptr[gvids[j - 1] + 1]))
                  for i, j in _ranges(indptr, gvids, spill.block)]
        ids, w = _buffers(src, max([hi - lo for _, _, lo, hi in blocks], default=1))
        boundary = 0
        for i, j, lo, hi in blocks:
            src.read(lo, hi, ids)
            boundary += _k.plan_mark_remote(indptr, shifted(ids, lo, hi), gvids[i:j], owner,
                                            pid, mark, _k.ID_ORDER_RUN)
        _k.plan_codes(table, gvids, 0)
        ghost_ptr = np.empty(len(plan.gvids) + 1, dtype=np.int64)
        ghosts = _k.plan_ghosts(mark, order, part_ptr, table, gvids.size, ghost_ptr)
        check_codes(gvids.size + ghosts.size)
        local = np.zeros(gvids.size + 1, dtype=np.int64)
        _k.plan_row_degrees(indptr, gvids, local)
        np.cumsum(local, out=local)
        local_dtype = np.int32 if gvids.size + ghosts.size <= np.iinfo(np.int32).max else np.int64
        m = int(local[-1])
        with _Writer(spill, m, local_dtype, has_w) as out:
            oi, ow = _buffers(out.edge_file, max([hi - lo for _, _, lo, hi in blocks],
                                                 default=1))
            for i, j, lo, hi in blocks:
                src.read(lo, hi, ids, w)
                a, b = int(local[i]), int(local[j])
                w_in, w_out = ((shifted(w, lo, hi), shifted(ow, a, b)) if has_w
                               else (_w(None), _w(None)))
                _k.plan_fill(indptr, shifted(ids, lo, hi), w_in, has_w, gvids[i:j], local[i:j],
                             table, gvids.size, shifted(oi, a, b), w_out, _k.ID_ORDER_RUN)
                out.write(a, b, oi, ow)
        edge_file = out.edge_file
        views.append(LocalView(local, _mapped(edge_file, edge_file.ids),
                               _mapped(edge_file, edge_file.weights), gvids.size,
                               ghosts.astype(index_dtype(n)), ghost_ptr, int(boundary),
                               edge_file=edge_file))
    return views


def _whole_graph(plan, indptr, src, LocalView):
    """The view of a partition holding every vertex (in id order): the file's own CSR, read in
    place."""
    n, m = indptr.size - 1, int(indptr[-1])
    weights = (_mapped(src, src.weights) if src.weights is not None
               else np.broadcast_to(np.float64(1), (m,)) if src.unit_weights else None)
    return LocalView(np.asarray(indptr, np.int64), _mapped(src, src.ids), weights, n,
                     np.empty(0, index_dtype(n)), np.zeros(len(plan.gvids) + 1, np.int64), 0,
                     edge_file=src)


def _mapped(edge_file, spec):
    """The array `spec` of the file, mapped read-only (nothing is read until used)."""
    if spec is None:
        return None
    dtype, offset, count = spec
    if count == 0:
        return np.empty(0, dtype)
    return np.memmap(edge_file.path, dtype=dtype, mode="r", offset=offset, shape=(count,))
