"""Partitions: where a part of the graph, its state and its boxes live.

`CpuPartition` keeps everything in host memory and runs `kernels_cpu/`. `EmulatedGpuPartition`
stands in for a GPU on machines without one: its arrays are NumPy and it runs the CPU twins, but it
owns its own copies of graph, state and boxes, and every transfer to or from it goes through
`to_device` / `to_host`, exactly where a real GPU partition copies over PCIe, and is counted.
"""

import contextlib
import functools
from dataclasses import dataclass
import importlib
import math
import time
from types import SimpleNamespace

import numpy as np

from . import stream as _stream

_MODULES = {}


@dataclass(frozen=True)
class EdgeOptions:
    """Where a GPU partition's edges live. `transfer`: resident (device memory), zerocopy
    (mapped host memory, TOTEM's mode; with a budget, what fits stays resident), or filter,
    compaction, auto: edges over `budget` (bytes of graph data per GPU partition) stream from
    host memory in chunks of `chunk_bytes` (None: bsp/stream.py's default, which follows the
    budget), `merge` adjacent filter chunks per copy (bsp/stream.py). `cache`: bytes of the budget for the cache of hot streamed rows that
    frontier kernels read (bsp/stream.py; nothing without streamed edges); the resident chunks
    get what the staging buffers and the cache leave. `host_memory`: for views whose edges stay
    in a file (LocalView.edge_file), the bytes of edges all partitions hold at once (their
    read buffers, bsp/stream.py's FileStream), shared by the views of the running algorithm and
    among the partitions by their edges."""
    transfer: str = "resident"
    budget: int = None
    chunk_bytes: int = None
    merge: int = 4
    cache: int = 0
    host_memory: int = None     # bytes of edges the run holds of edges read from a file

    @property
    def mapped(self):
        """TOTEM's mapped-memory mode: every edge read over the bus, nothing streamed."""
        return self.transfer == "zerocopy" and self.budget is None


class DeviceView:
    """A LocalView's arrays as the partition's device holds them: the edge arrays in device
    memory, in mapped host memory (TOTEM's zerocopy mode) or streamed (`stream`, when they
    exceed the partition's budget). Weights are placed only for algorithms that read them.
    Kernels that walk edges take them per segment: `queue_segments`, `row_segments`."""

    def __init__(self, part, view, weights=False, name="out"):
        self.name = name
        self.indptr = part.to_device(view.indptr, count=False)
        self.boundary_lvid = part.to_device(view.boundary_lvid, count=False)
        self.n_local = view.n_local
        self.n_ghosts = view.n_ghosts
        self.host = view
        self._part = part
        self.indices = self._weights = self.stream = None
        part.graph_bytes += view.indptr.nbytes + view.indices.nbytes
        self.prepare(weights)

    def prepare(self, weights):
        """Place the edges, and the weights when `weights`, for the next algorithm (weights
        placed for an earlier one stay on the device, but its kernels are not given them)."""
        part, view = self._part, self.host
        weights = self.weighted = weights and view.weights is not None
        opts, budget = part.edges, part.view_budget
        if view.edge_file is not None:          # edges read from a file, page by page
            host = part.view_host or opts.host_memory
            if self.stream is None or (self.stream.weighted, self.stream.budget) != (
                    weights, host):
                self.stream = None
                with part.context():
                    self.stream = _stream.FileStream(part, view, self.indptr, view.edge_file,
                                                     host, weights, budget)
            self.stream.reset()         # every run starts with an empty page cache
            self.device_bytes = self.stream.device_bytes
            self.host_bytes = self.stream.host_bytes
            return
        need = (view.indptr.nbytes + view.indices.nbytes
                + (self.host_weights.nbytes if weights else 0))
        if part.kind == "gpu" and opts.transfer != "resident" and budget is not None \
                and need > budget:
            with part.context():
                if self.stream is None or bool(self.stream.wwidth) != weights:
                    self.indices = self._weights = self.stream = None
                    self.stream = _stream.EdgeStream(part, view, self.indptr, budget, opts.transfer,
                                             opts.chunk_bytes, opts.merge,
                                             self.host_weights if weights else None,
                                             part.view_cache)
                self.stream.reset()         # every run starts with an empty cache
            self.device_bytes = self.stream.device_bytes
            self.host_bytes = self.stream.edge_bytes
            return
        self.stream = None
        if self.indices is None:
            self.indices = part.edges_to_device(view.indices)
        if weights:
            self.weights
        self.device_bytes = 0 if opts.mapped else need
        self.host_bytes = need if opts.mapped else 0    # edge data read from host memory

    @property
    def weights(self):
        if self._weights is None and self.host.weights is not None:
            self._weights = self._part.edges_to_device(self.host_weights)
            self._part.graph_bytes += self.host_weights.nbytes
        return self._weights

    @functools.cached_property
    def host_weights(self):
        """The weights a GPU partition places or streams: float32 when every weight is a
        float32 exactly (the generators' integer weights are; the plan's views hold them so
        already, kernels_cpu.csr.weights_dtype; a .tcsr file's pages are float64), half the
        bytes of float64; the kernels add them to float64 distances, so results do not change."""
        w = self.host.weights
        if w is None or self._part.kind != "gpu" or w.dtype == np.float32:
            return w
        with np.errstate(over="ignore"):        # a weight past float32's range stays float64
            narrow = w.astype(np.float32)
        return narrow if np.array_equal(narrow, w) else w

    def queue_segments(self, queue, qlen, pieces=1):
        """(indptr, indices, weights, queue, length) tuples that together cover the rows of
        queue[:qlen]: one, unless the edges stream (then one per transfer engine and group, the
        zero-copy rows in up to `pieces` segments by chunk).
        Edges in mapped host memory: a queue of SORT_ZEROCOPY vertices or more is first sorted
        in place (its order is no algorithm's concern), as streamed zero-copy segments are
        (EdgeStream._ascending): in row order a warp's reads over the bus coalesce
        (docs/results/ab/mapped_queue_sort_rmat24_h100.txt)."""
        if self.stream is None:
            if self.host_bytes and qlen >= _stream.SORT_ZEROCOPY:
                queue[:qlen].sort()
            return ((self.indptr, self.indices, self._weights if self.weighted else None, queue,
                     qlen),)
        return self.stream.queue_segments(queue, qlen, pieces)

    def row_segments(self, reads=None, warps=True):
        """(indptr, indices, weights, first row, end row) tuples covering the rows 0..n_local-1
        that the kernel reads; `reads` says which and how much, `warps` whether the kernel maps
        a warp or a thread per row (EdgeStream.row_segments): hints for streamed edges, ignored
        otherwise."""
        if self.stream is None:
            return ((self.indptr, self.indices, self._weights if self.weighted else None, 0,
                     self.n_local),)
        return self.stream.row_segments(reads, warps)

    @functools.cached_property
    def nonempty_rows(self):
        """Rows with at least one entry (counted once, on the host)."""
        ip = self.host.indptr
        return int(np.count_nonzero(ip[1:] != ip[:-1]))

    @functools.cached_property
    def rows_end(self):
        """1 + the last row with an entry (0 for none): rows from here on are empty, as the
        degree-ordered local order puts a graph's vertices without edges last."""
        nonempty = self.host.indptr[1:] != self.host.indptr[:-1]
        return int(nonempty.size - np.argmax(nonempty[::-1])) if nonempty.any() else 0

    @functools.cached_property
    def peer_pos(self):
        """The LocalView's `peer_pos` on the device, copied once and kept: for each reader q,
        the positions in boundary_lvid of the ghosts q holds of this partition, in q's slot
        order (what a pull exchange of flags packs on the owner's device)."""
        return [self._part.to_device(pos, count=False) for pos in self.host.peer_pos]

    @functools.cached_property
    def peer_lvid(self):
        """The LocalView's `peer_lvid(q)` for every peer q on the device, copied once and kept:
        the local ids of q's ghost slots of this partition, in q's slot order (where a peer's
        whole box lands)."""
        return [self._part.to_device(self.host.peer_lvid(q), count=False)
                for q in range(len(self.host.peer_pos))]

    def reader_positions(self, readers):
        """(positions, offsets): `peer_pos` of each reader pid in `readers` one after the other
        on the device (reader k's from offsets[k]), kept per set of readers."""
        kept = self.__dict__.setdefault("_reader_positions", {})
        if readers not in kept:
            pos = [self.host.peer_pos[q] for q in readers]
            offsets = np.concatenate([[0], np.cumsum([p.size for p in pos])]).astype(np.int64)
            kept[readers] = (self._part.to_device(np.concatenate(pos).astype(np.int64),
                                                  count=False), offsets[:-1].tolist())
        return kept[readers]

    @functools.cached_property
    def ghost_ptr(self):
        """The LocalView's `ghost_ptr` on the device (its ghost slots by owner)."""
        return self._part.to_device(self.host.ghost_ptr.astype(np.int64), count=False)

    @functools.cached_property
    def iota(self):
        """0, 1, ... over the boundary vertices, on the device (a whole inbox's positions)."""
        return self._part.to_device(np.arange(self.host.boundary_lvid.size), count=False)

    @functools.cached_property
    def node_gvid(self):
        """Global id of every local vertex, then of every ghost slot (int64, on the device)."""
        gvid = np.concatenate([self._part.gvids, self.host.ghost_gvid]).astype(np.int64)
        return self._part.to_device(gvid, count=False)

    @functools.cached_property
    def sorted_rows(self):
        """(indptr, indices) on the device: every local vertex's and every ghost slot's row of
        this view, ascending and without repeats, in node ids (the plan's `sorted_rows`: what
        the intersect operator merges). In device memory whatever the edges' budget."""
        part = self._part
        rows = part.plan.sorted_rows(self.name, part.pid)
        part.graph_bytes += rows[0].nbytes + rows[1].nbytes
        return part.to_device_all(*rows, count=False)


class Partition:
    kind = "cpu"
    device = "cpu"
    kernel_package = "kernels_cpu"      # the engine's own kernels (boxes, frontier, chunks)
    operator_package = "kernels_cpu"    # the operators' backend (bsp/operators.py)
    xp = np

    def __init__(self, plan, pid, edges=EdgeOptions()):
        self.pid = pid
        self.edges = edges
        self.view_budget = edges.budget    # per view of the running algorithm (Engine.prepare)
        self.view_cache = edges.cache      # the same for the cache of hot streamed rows
        self.view_host = edges.host_memory  # this partition's share per view (Engine.prepare)
        self.plan = plan
        self.gvids = plan.gvids[pid]
        self.n_local = int(self.gvids.size)
        self.n_vertices = plan.graph.n_vertices     # the whole graph's, for PageRank's (1-d)/n
        self.out_degree = self.to_device(plan.out_degree(pid), count=False)
        self.views = {}
        self.state = SimpleNamespace()
        self.boxes, self.inboxes, self.outboxes = {}, {}, {}
        self.clean_box = None       # the push mode whose box holds only the identity
        self.rounds = 0             # local rounds of the superstep so far (bsp/engine.py)
        self.h2d_bytes = 0
        self.d2h_bytes = 0
        self.peer_bytes = 0           # sent device to device (bsp/exchange.py's direct pairs)
        self._held = {}               # held(): buffers kept for the exchange, by key
        self.graph_bytes = 0
        self._free, self._lent = {}, []   # state arrays kept from run to run
        self._kept = {}                   # mapped_all's buffers by key
        self._carved = {}                 # key -> (specs, mapped_all's arrays) of its last call
        self.filled = {}                  # id of each array `alloc` made this run -> its fill
        # (state array, value, end): the last run ended with the array's slots n_local..end-1 at
        # the value (a push box the exchange had reset), so `alloc` need not fill them again
        self.clean_tail = None

    def view(self, name, weights=False):
        if name not in self.views:
            key = self.plan.canonical_view(name)
            if key not in self.views:
                self.views[key] = DeviceView(self, self.plan.views(key)[self.pid], weights, key)
            self.views[name] = self.views[key]
        return self.views[name]

    def sorted_rows(self, name):
        """The view's `sorted_rows` (DeviceView), placed on first use."""
        return self.view(name).sorted_rows

    def placed_views(self):
        """The DeviceViews placed so far, each once (view names that share a CSR share one)."""
        return list({id(v): v for v in self.views.values()}.values())

    def alloc(self, dtype, fill, views=()):
        """A state array for the local vertices plus room for the ghost slots of `views` (the
        largest of them), so that it can carry a Mode's box in its tail; filled with `fill`
        except where `clean_tail` says the last run left it so."""
        ghosts = max((self.plan.views(v)[self.pid].n_ghosts for v in views), default=0)
        arr = self.empty(self.n_local + ghosts, dtype)
        fill_all = self.kernels("boxes").box_fill
        kept = self.clean_tail
        if kept is not None and kept[0] is arr and kept[1] == fill:
            # the last run left this array's push box (ghosts n_local..end) at `fill`
            fill_all(arr[:self.n_local], fill)
            fill_all(arr[kept[2]:], fill)
        else:
            fill_all(arr, fill)
        self.filled[id(arr)] = fill
        return arr

    def empty(self, n, dtype):
        """An uninitialised array, reused from the previous run when one of the same size and
        type was used there (Gunrock's reset instead of reallocation: fresh host memory costs a
        page fault per 4 KiB at first touch, which adds up on large graphs)."""
        key = (int(n), np.dtype(dtype).str)
        free = self._free.get(key)
        arr = free.pop() if free else self.xp.empty(key[0], dtype=dtype)
        self._lent.append((key, arr))
        return arr

    def full(self, n, value, dtype):
        arr = self.empty(n, dtype)
        self.kernels("boxes").box_fill(arr, value)
        return arr

    def flags(self, n, value=0):
        """Per-vertex flags that functors test and set with atomics (bsp.intrinsics): a byte
        each where the operators run on the CPU, a 32-bit word on a GPU (CUDA's atomics take
        no smaller). As bytes, the flags take a quarter of the cache that words would, which
        helps random tests and sets such as those of SSSP's far-list split."""
        cpu = self.operator_package == "kernels_cpu"
        return self.full(n, value, np.uint8 if cpu else np.int32)

    def arange(self, n):
        arr = self.empty(n, np.int64)
        self.kernels("boxes").box_iota(arr)
        return arr

    def recycle(self):
        """Make the arrays of the last run available to the next; arrays it did not use go."""
        self._free, self.filled = {}, {}
        for key, arr in self._lent:
            self._free.setdefault(key, []).append(arr)
        self._lent = []

    def kernels(self, name):
        """The kernel module `name` for this partition's device (kernels_cpu or its twin)."""
        module = _MODULES.get((self.kernel_package, name))
        if module is None:
            module = _MODULES[self.kernel_package, name] = importlib.import_module(
                f"{self.kernel_package}.{name}")
        return module

    def free_device_bytes(self):
        """Device memory this partition could still take (None: no device of its own)."""
        return None

    def to_device(self, host, count=True):
        return host

    def to_host(self, dev, count=True):
        return dev

    def to_device_all(self, *hosts, count=True):
        """Several arrays on the device (a GPU copies them all, then waits once)."""
        return tuple(self.to_device(h, count) for h in hosts)

    def to_host_all(self, *devs, count=True, reuse=None):
        """Several arrays on the host (a GPU copies them all, then waits once); with a `reuse`
        key, into the host buffers of pinned_all(reuse=)."""
        return tuple(self.to_host(d, count) for d in devs)

    def edges_to_device(self, host):
        return self.to_device(host, count=False)

    # Streamed edges (bsp/stream.py): host arrays the device reads, staging copies and the
    # events that order them (no-ops in host memory).

    def mapped(self, host):
        """`host` where the device can read it in place (mapped pinned memory on a GPU)."""
        return host

    def pinned(self, n, dtype):
        return self.pinned_all((n, dtype))[0]

    def pinned_all(self, *specs, reuse=None):
        """Host arrays of the given (shape, dtype)s that the device copies from without staging
        (on a GPU: page-locked, in one allocation). With a `reuse` key they lie in a buffer kept
        for that key, and hold until the next call with the key (a fresh pinned allocation is a
        driver call too slow to make every superstep)."""
        if reuse is None:
            return [np.empty(shape, dtype) for shape, dtype in specs]
        return self.mapped_all(*specs, reuse=reuse)[0]

    def mapped_all(self, *specs, reuse):
        """Arrays of the given (shape, dtype)s that the host and this partition's kernels both
        read and write in place: (host arrays, the device's views of them), in a buffer kept for
        the `reuse` key (they hold until the next call with the key). On a GPU: mapped pinned
        memory, which a kernel reads or writes over the bus in its one pass (no copy, no wait
        for one); here, one set of arrays. A call with the same specs as the key's last call
        gets that call's arrays again (making CuPy's views costs host time every call:
        docs/results/ab/superstep_overhead_rmat22_h100.txt)."""
        last = self._carved.get(reuse)
        if last is not None and last[0] == specs:
            return last[1]
        layout, total = _layout(specs)
        host, dev = self._kept_buffer(reuse, total)
        arrays = _carve(host, layout)
        out = arrays, arrays if dev is host else self._device_views(dev, layout)
        self._carved[reuse] = (specs, out)
        return out

    def _kept_buffer(self, reuse, nbytes):
        kept = self._kept.get(reuse)
        if kept is None or kept[0].size < nbytes:      # grown by powers of two
            kept = self._kept[reuse] = self._new_kept(1 << (nbytes - 1).bit_length())
            self._carved.pop(reuse, None)
        return kept

    def _new_kept(self, nbytes):
        """(host bytes, the device's view of them) for mapped_all."""
        buf = np.empty(nbytes, dtype=np.uint8)
        return buf, buf

    def copy_in(self, buf, host, lo, hi, slot):
        """buf[:hi - lo] = host[lo:hi], once staging buffer `slot` is free (asynchronous)."""
        buf[:hi - lo] = host[lo:hi]
        self.h2d_bytes += (hi - lo) * buf.itemsize

    def copied(self, slot):
        """Mark the copies into `slot` queued so far (right after queueing them)."""

    def wait_copied(self, slot):
        """Kernels queued from now on wait for the copies into `slot` that `copied` marked last
        (so that copies queued since, into the other slots, run beside those kernels)."""

    def release(self, slot):
        """Copies into `slot` queued from now on wait for the kernels queued so far."""

    def host_wait(self, slot):
        """Return once the copies out of `slot`'s pinned host buffer are done."""

    def shifted(self, buf, lo, hi):
        """An array of `hi` entries whose entry e is buf[e - lo], for e in [lo, hi): what a
        kernel that reads edges lo..hi-1 by their place in the partition takes."""
        return np.asarray(_Shifted(buf, lo, hi))

    def held(self, key, n, dtype):
        """A device array of `n` entries of `dtype` kept for `key` from superstep to superstep
        (what another partition's `send` writes into, the exchange's inboxes); its contents
        are the caller's."""
        buf = self._held.get(key)
        if buf is None or buf.size != n or buf.dtype != dtype:
            buf = self._held[key] = self.xp.empty(int(n), dtype=dtype)
        return buf

    def send(self, dst, dst_array, src_array):
        """dst_array[:] = src_array, from this partition's device to partition `dst`'s (a copy
        between two GPUs, queued after this partition's work); counted in `peer_bytes`. The
        receiver waits for it with `dst.wait(self.event())`."""
        dst_array[...] = src_array
        self.peer_bytes += src_array.nbytes

    def event(self):
        """A mark of the work queued on this partition so far (None where work runs at once)."""
        return None

    def peek(self, array, key):
        """`array` (a few entries on this partition's device) as the host reads it once the work
        queued so far is done (after `synchronize`): a copy queued now, kept under `key` until
        the next peek with it."""
        return np.array(array, copy=True)

    def wait(self, event):
        """Work queued from now on waits for `event` (another partition's mark)."""

    def synchronize(self):
        pass

    def context(self):
        """Where this partition's callbacks run (a GPU partition's device and stream)."""
        return _NO_CONTEXT

    def timed(self, fn, *args):
        t0 = time.perf_counter()
        out = fn(*args)
        self.synchronize()
        return out, time.perf_counter() - t0


_NO_CONTEXT = contextlib.nullcontext()     # reusable: it holds no state


def _layout(specs):
    """[(dtype, shape, entries, byte offset)] of arrays of the given (shape, dtype)s laid out
    back to back (8-byte aligned each), and the bytes they take."""
    layout, total = [], 0
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        shape = tuple(shape) if isinstance(shape, (tuple, list)) else (int(shape),)
        n = math.prod(shape)
        layout.append((dtype, shape, n, total))
        total += -(-n * dtype.itemsize // 8) * 8
    return layout, max(total, 1)


def _carve(buf, layout):
    """The arrays of `layout` over the bytes `buf` (a uint8 array)."""
    return [buf[o:o + n * dtype.itemsize].view(dtype).reshape(shape)
            for dtype, shape, n, o in layout]


class _Shifted:
    """Array interface of `buf` moved back by `lo` entries (the buffer stays referenced)."""

    def __init__(self, buf, lo, hi):
        self.buf = buf
        self.__array_interface__ = dict(shape=(hi,), typestr=buf.dtype.str, version=3,
                                        data=(buf.ctypes.data - lo * buf.itemsize, False))


class CpuPartition(Partition):
    """Host memory, Numba kernels; no copies."""


class EmulatedGpuPartition(Partition):
    """A GPU partition emulated in host memory: separate arrays, explicit counted copies."""
    kind = "gpu"
    device = "emulated"

    def to_device(self, host, count=True):
        out = np.array(host, copy=True)
        if count:
            self.h2d_bytes += out.nbytes
        return out

    def to_host(self, dev, count=True):
        out = np.array(dev, copy=True)
        if count:
            self.d2h_bytes += out.nbytes
        return out


class SimulatedGpuPartition(EmulatedGpuPartition):
    """An emulated GPU partition whose operators run the GPU backend under numba-cuda's
    simulator (NUMBA_ENABLE_CUDASIM=1, set before numba.cuda is first imported): the GPU
    functors and operator kernels execute as Python, thread by thread, on NumPy arrays. For
    testing on toy graphs without a GPU; very slow."""
    device = "simulated"
    operator_package = "kernels_gpu"


def make_partition(plan, pid, device, edges=EdgeOptions(), gpu_index=None):
    """The partition object for plan partition `pid` on `device` ("cpu", "emulated", "gpu",
    "simulated").
    With device "cpu" every partition is a CPU partition; GPU partitions take the devices in turn
    (the k-th GPU partition gets device k modulo the device count, unless `gpu_index` says)."""
    if plan.kinds[pid] == "cpu" or device == "cpu":
        part = CpuPartition(plan, pid, EdgeOptions(host_memory=edges.host_memory))
    elif device == "gpu":
        from .gpu import GpuPartition, device_count
        if gpu_index is None:
            gpu_index = pid - plan.kinds.count("cpu")
        part = GpuPartition(plan, pid, gpu_index % device_count(), edges)
    elif device == "simulated":
        part = SimulatedGpuPartition(plan, pid, edges)
    else:
        part = EmulatedGpuPartition(plan, pid, edges)
    part.run_device = device        # the run's, which every partition of it shares
    # does this run use real GPUs and no CPU partition?
    part.gpus_only = device == "gpu" and "cpu" not in plan.kinds
    return part
