"""A GPU partition: graph, state and boxes in device memory through CuPy, kernels from
kernels_gpu/. Imported only when a plan has GPU partitions and --device resolves to gpu.

Each partition has its own CUDA stream (its kernels queue there, so the CPU partition's kernel runs
while they execute) and a pair of events that time its compute phase. Copies to and from the host
are counted like the emulated partition's; host-side staging uses pinned memory so that copies run
at the bus's full rate. The buffers the exchange keeps (`mapped_all`) are mapped pinned memory:
the partition's kernels write the messages they send there and read the ones they get in place.
"""

import cupy
import numpy as np

from kernels_cpu.chunks import chunk_copy

from .partition import Partition, _carve, _layout

SPANS = 2       # timed spans of a superstep (GpuPartition.start_timer)


def _is_pinned(host):
    """Whether `host` lies in page-locked memory (a copy from it needs no staging)."""
    try:
        attrs = cupy.cuda.runtime.pointerGetAttributes(host.ctypes.data)
    except cupy.cuda.runtime.CUDARuntimeError:
        return False
    return attrs.type == 1     # cudaMemoryTypeHost


def _pinned(*specs):
    """Host arrays of the given (shape, dtype)s in one pinned allocation."""
    layout, total = _layout(specs)
    return _carve(np.frombuffer(cupy.cuda.alloc_pinned_memory(total), np.uint8, total), layout)


class GpuPartition(Partition):
    kind = "gpu"
    device = "gpu"
    kernel_package = "kernels_gpu"
    operator_package = "kernels_gpu"
    xp = cupy

    def __init__(self, plan, pid, device_id, edges):
        self.device_id = device_id
        self.zerocopy = edges.mapped
        with cupy.cuda.Device(device_id):
            self.stream = cupy.cuda.Stream(non_blocking=True)
            # compute's timed spans of a superstep: the first round, the later rounds of an
            # async path (queued after the host partitions' work, which the stream idles through)
            self._timers = [(cupy.cuda.Event(), cupy.cuda.Event()) for _ in range(SPANS)]
            self._spans = 0
            # streamed edges: copies on their own stream; per staging slot an event for "copy
            # done" and one for "kernels reading it done"
            self.copy_stream = cupy.cuda.Stream(non_blocking=True)
            self._slot_copied = [cupy.cuda.Event(disable_timing=True) for _ in range(3)]
            self._slot_free = [cupy.cuda.Event(disable_timing=True) for _ in range(3)]
        # one context object, entered tens of times a superstep (the Device keeps a stack of
        # the devices it replaced, the stream a thread-local one: nesting is safe)
        self._context = _Context(cupy.cuda.Device(device_id), self.stream)
        with self.context():
            super().__init__(plan, pid, edges)

    def context(self):
        return self._context

    def free_device_bytes(self):
        with self.context():
            return cupy.cuda.runtime.memGetInfo()[0] + cupy.get_default_memory_pool().free_bytes()

    def to_device(self, host, count=True):
        host = np.ascontiguousarray(host)
        if count:
            self.h2d_bytes += host.nbytes
        with self.context():
            if host.nbytes < (1 << 16):
                return cupy.asarray(host)
            staged = host
            if not _is_pinned(host):
                staged, = _pinned((host.shape, host.dtype))
                chunk_copy(host.reshape(-1), 0, host.size, staged.reshape(-1))
            out = cupy.empty(host.shape, dtype=host.dtype)
            out.set(staged, stream=self.stream)
            self.stream.synchronize()
            return out

    def to_host(self, dev, count=True):
        if count:
            self.d2h_bytes += dev.nbytes
        with self.context():
            if dev.nbytes < (1 << 16):
                return dev.get(stream=self.stream)
            out, = _pinned((dev.shape, dev.dtype))
            dev.get(stream=self.stream, out=out)
            self.stream.synchronize()
            return out

    def to_device_all(self, *hosts, count=True):
        hosts = [np.ascontiguousarray(h) for h in hosts]
        if count:
            self.h2d_bytes += sum(h.nbytes for h in hosts)
        with self.context():
            outs = [cupy.empty(h.shape, dtype=h.dtype) for h in hosts]
            for host, out in zip(hosts, outs):
                out.set(host, stream=self.stream)
            self.stream.synchronize()
            return tuple(outs)

    def to_host_all(self, *devs, count=True, reuse=None):
        if count:
            self.d2h_bytes += sum(d.nbytes for d in devs)
        outs = self.pinned_all(*((d.shape, d.dtype) for d in devs), reuse=reuse)
        with cupy.cuda.Device(self.device_id):
            for dev, out in zip(devs, outs):
                if not dev.flags.c_contiguous:
                    cupy.asnumpy(dev, stream=self.stream, out=out, blocking=False)
                elif dev.nbytes:
                    cupy.cuda.runtime.memcpyAsync(out.ctypes.data, dev.data.ptr, dev.nbytes,
                                                  cupy.cuda.runtime.memcpyDeviceToHost,
                                                  self.stream.ptr)
            self.stream.synchronize()
        return tuple(outs)

    def edges_to_device(self, host):
        """Edge arrays: device memory, or (zerocopy, TOTEM's mapped-memory mode) pinned host
        memory mapped into the device's address space, read by the kernels over the bus."""
        if not self.zerocopy:
            return self.to_device(host, count=False)
        with self.context():
            return mapped_copy(host)

    def mapped(self, host):
        with self.context():
            return mapped_copy(host)

    def pinned_all(self, *specs, reuse=None):
        return _pinned(*specs) if reuse is None else super().pinned_all(*specs, reuse=reuse)

    def _new_kept(self, nbytes):
        owner = _MappedHost(nbytes)
        mem = cupy.cuda.UnownedMemory(owner.ptr, nbytes, owner, self.device_id)
        return _host_view(owner, nbytes), cupy.cuda.MemoryPointer(mem, 0)

    def _device_views(self, base, layout):
        return [cupy.ndarray(shape, dtype=dtype, memptr=base + o) for dtype, shape, _, o in layout]

    def copy_in(self, buf, host, lo, hi, slot):
        nbytes = (hi - lo) * buf.itemsize
        src = host.data.ptr if isinstance(host, cupy.ndarray) else host.ctypes.data
        with cupy.cuda.Device(self.device_id):
            self.copy_stream.wait_event(self._slot_free[slot])
            cupy.cuda.runtime.memcpyAsync(buf.data.ptr, src + lo * buf.itemsize, nbytes,
                                          cupy.cuda.runtime.memcpyDefault, self.copy_stream.ptr)
        self.h2d_bytes += nbytes

    def copied(self, slot):
        with cupy.cuda.Device(self.device_id):
            self._slot_copied[slot].record(self.copy_stream)

    def wait_copied(self, slot):
        with cupy.cuda.Device(self.device_id):
            self.stream.wait_event(self._slot_copied[slot])

    def release(self, slot):
        with cupy.cuda.Device(self.device_id):
            self._slot_free[slot].record(self.stream)

    def host_wait(self, slot):
        self._slot_copied[slot].synchronize()

    def shifted(self, buf, lo, hi):
        mem = cupy.cuda.UnownedMemory(buf.data.ptr - lo * buf.itemsize, hi * buf.itemsize, buf,
                                      self.device_id)
        return cupy.ndarray((hi,), dtype=buf.dtype, memptr=cupy.cuda.MemoryPointer(mem, 0))

    def send(self, dst, dst_array, src_array):
        n = src_array.nbytes
        if n:
            with cupy.cuda.Device(self.device_id):
                cupy.cuda.runtime.memcpyPeerAsync(dst_array.data.ptr, dst.device_id,
                                                  src_array.data.ptr, self.device_id, n,
                                                  self.stream.ptr)
        self.peer_bytes += n

    def event(self):
        with cupy.cuda.Device(self.device_id):
            event = cupy.cuda.Event(disable_timing=True)
            event.record(self.stream)
        return event

    def peek(self, array, key):
        (host,), (dev,) = self.mapped_all((array.size, array.dtype), reuse=("peek", key))
        with cupy.cuda.Device(self.device_id):
            cupy.cuda.runtime.memcpyAsync(dev.data.ptr, array.data.ptr, array.nbytes,
                                          cupy.cuda.runtime.memcpyDefault, self.stream.ptr)
        return host

    def wait(self, event):
        if event is not None:
            with cupy.cuda.Device(self.device_id):
                self.stream.wait_event(event)

    def synchronize(self):
        self.stream.synchronize()

    def start_timer(self):
        """Open the superstep's next timed span on the stream (SPANS at most)."""
        self._timers[self._spans][0].record(self.stream)

    def stop_timer(self):
        self._timers[self._spans][1].record(self.stream)
        self._spans += 1

    def elapsed(self):
        """The seconds the stream spent inside the superstep's spans, which it closes."""
        spans, self._spans = self._timers[:self._spans], 0
        if spans:
            spans[-1][1].synchronize()
        return sum(cupy.cuda.get_elapsed_time(a, b) for a, b in spans) / 1e3


class _Context:
    """The partition's device and stream made current, and the previous ones back on exit (a
    class, not a generator: the engine enters it once per callback, tens of times a
    superstep)."""

    __slots__ = ("device", "stream")

    def __init__(self, device, stream):
        self.device, self.stream = device, stream

    def __enter__(self):
        self.device.__enter__()
        self.stream.__enter__()

    def __exit__(self, *exc):
        self.stream.__exit__(*exc)
        self.device.__exit__(*exc)


class _MappedHost:
    """Owner of a cudaHostAlloc'd, device-mapped buffer; freed with the arrays that view it."""

    def __init__(self, nbytes):
        flags = 0x02 | 0x01    # cudaHostAllocMapped | cudaHostAllocPortable
        self.ptr = cupy.cuda.runtime.hostAlloc(max(nbytes, 1), flags)

    def __del__(self):
        cupy.cuda.runtime.freeHost(self.ptr)


class _HostBytes:
    """Array interface of a mapped buffer's bytes, keeping its owner alive."""

    def __init__(self, owner, nbytes):
        self.owner = owner
        self.__array_interface__ = dict(shape=(nbytes,), typestr="|u1", version=3,
                                        data=(owner.ptr, False))


def _host_view(owner, nbytes):
    """The host's uint8 view of `nbytes` bytes of a mapped buffer."""
    return np.asarray(_HostBytes(owner, nbytes))


def mapped_copy(host):
    """A CuPy array whose data is mapped pinned host memory holding a copy of `host`."""
    host = np.ascontiguousarray(host)
    owner = _MappedHost(host.nbytes)
    staged = _host_view(owner, max(host.nbytes, 1))
    staged[:host.nbytes] = host.view(np.uint8).ravel()
    # with unified addressing (every 64-bit CUDA platform) a mapped allocation has the same
    # address on the device as on the host
    mem = cupy.cuda.UnownedMemory(owner.ptr, max(host.nbytes, 1), owner)
    return cupy.ndarray(host.shape, dtype=host.dtype, memptr=cupy.cuda.MemoryPointer(mem, 0))


def device_count():
    return cupy.cuda.runtime.getDeviceCount()


_PEERS = set()


def enable_peer_access(device_ids):
    """Let every pair of these devices read and write each other's memory (so copies between
    them go over NVLink or PCIe directly, not through host memory), where the hardware can."""
    for a in device_ids:
        for b in device_ids:
            if a == b or (a, b) in _PEERS:
                continue
            _PEERS.add((a, b))
            if cupy.cuda.runtime.deviceCanAccessPeer(a, b):
                with cupy.cuda.Device(a):
                    try:
                        cupy.cuda.runtime.deviceEnablePeerAccess(b)
                    except cupy.cuda.runtime.CUDARuntimeError:
                        pass        # already enabled
