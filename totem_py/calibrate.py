"""python -m totem_py.calibrate: measure the constants of HyTGraph's transfer cost model on this
machine and write them as the transfer profile that bsp/transfer_model.py loads.

    python -m totem_py.calibrate [--output PATH] [--device-id N] [--quick] [--cpu-only] [--quiet]

What it measures (JSON keys in parentheses; every figure is the best of 3 timed trials after a
warm-up, and a table of them goes to stdout):

  memcpy      pinned host-to-device cudaMemcpyAsync of 1 MB .. 256 MB
              (memcpy_h2d_pinned_Bps_by_bytes); the best sustained rate at >= 32 MB is
              memcpy_h2d_Bps. Pageable copies, for information (memcpy_h2d_pageable_Bps_by_bytes).
              The device time of one 4 KB copy in a stream of them, less its bytes at the full
              rate (memcpy_latency_s).
  zero-copy   a kernel reading pinned, mapped host memory (cudaHostAllocMapped | Portable; 1 GiB,
              512 MiB with --quick, well over the GPU's L2): requests of S = 32, 64, 128, 256,
              512 bytes (S/4 lanes of a warp each reading 4 bytes, a whole warp for S >= 128)
              at random S-aligned positions (zerocopy_random_Bps, by S; the cost model uses
              S = 128), the same moved off that alignment by a random nonzero multiple of 4
              bytes below min(S, 128) (zerocopy_misaligned_Bps, by S), and a coalesced
              sequential stream of 16-byte loads (zerocopy_seq_Bps). Bytes requested per second.
  kernels     the engine's own kernels reading every row of rmat:24 undirected (rmat:23 with
              --quick) from mapped host memory: PageRank's pull, a warp per row
              (zerocopy_rows_Bps: the dense rate of kernels over all rows), and PageRank-Delta's
              push over a queue of every vertex, a thread per edge (zerocopy_edges_Bps: frontier
              kernels); edge bytes per second. The same from device memory, for the record
              (device_rows_Bps, device_edges_Bps).
  compaction  the engine's gather (kernels_cpu/stream.py: stream_offsets + stream_gather) on random
              CSRs of 64M edges (16M with --quick) with average degree 2, 8, 32, 128 and a sorted
              random 10% of the vertices active, into pinned staging (ordinary memory with
              --cpu-only): bytes written (edges + an 8-byte index entry per vertex) per second, for
              int32 edges (compaction_Bps_by_degree) and int32 edges + float64 weights
              (compaction_weighted_Bps_by_degree). compaction_Bps is the int32 figure at degree
              8: compaction is chosen for many active vertices of low degree.

Without CuPy or a CUDA device it stops before measuring anything with one line and exit code 2.
`--cpu-only` measures the compaction alone and writes a profile whose transfer constants are the
paper's fallback (its "measured" is ["compaction"]): enough for the emulated device.

The profile goes to --output, else $TOTEM_PROFILE, else ~/.cache/totem_py/transfer_profile.json,
through a temporary file and a rename. --quick shortens the run; on a fresh machine most of it
goes to compiling the kernels. An example run: docs/results/calibrate_h100.txt.
"""

import argparse
import ctypes
import dataclasses
import math
import os
import sys
import time
from datetime import datetime, timezone

import numpy as np

from bsp import atomic_add
from bsp.transfer_model import (LINE_BYTES, INDEX_BYTES, Profile, profile_path, save_profile)

from .errors import InputError

MB = 1 << 20
COPY_SIZES = tuple(MB << k for k in range(9))             # 1 MB .. 256 MB
SUSTAINED = 32 * MB                                         # memcpy_h2d_Bps: best at >= this
REQUEST_SIZES = (32, 64, 128, 256, 512)
DEGREES = (2, 8, 32, 128)
# measure_kernels' graph: rmat:24 undirected, 521M edges (rmat:23 with --quick). The kernels'
# rates fall as graphs grow (their accesses to vertex state miss the caches more), so the graph
# is as large as the graphs whose edges stream, not one whose state fits the caches
KERNEL_SCALE = 24
REPRESENTATIVE_DEGREE = 8
ACTIVE = 0.1
TRIALS = 3
THREADS = 256

NO_GPU = ("the transfer measurements need CuPy and a CUDA GPU ({why}); run this on the GPU "
          "machine, or pass --cpu-only to measure only the CPU compaction")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)


def build_parser():
    p = _Parser(prog="python -m totem_py.calibrate",
                description="Measure this machine's host-to-GPU transfer rates (memcpy, "
                            "zero-copy) and CPU compaction rate for the transfer engines' cost "
                            "model, and write them as the transfer profile.")
    p.add_argument("--output", default=None,
                   help="profile to write (default: $TOTEM_PROFILE, else "
                        "~/.cache/totem_py/transfer_profile.json)")
    p.add_argument("--device-id", type=int, default=0, help="CUDA device to measure (default 0)")
    p.add_argument("--quick", action="store_true",
                   help="smaller buffers and shorter trials (about 10 s)")
    p.add_argument("--cpu-only", action="store_true",
                   help="measure only the CPU compaction (no GPU needed); the transfer constants "
                        "stay the paper's fallback")
    p.add_argument("--quiet", action="store_true", help="no tables, only errors")
    return p


# ---------------------------------------------------------------- the GPU and its timing

class _Gpu:
    """The CUDA device being measured: CuPy, a stream, and event timing of launches on it."""

    def __init__(self, device_id):
        try:
            import cupy
        except Exception as exc:    # not installed, or installed without its CUDA libraries
            raise InputError(NO_GPU.format(why=f"cannot import cupy: {exc}")) from None
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            raise InputError(NO_GPU.format(why=f"no CUDA driver or device: {exc}")) from None
        if count == 0:
            raise InputError(NO_GPU.format(why="CuPy sees no CUDA device"))
        if not 0 <= device_id < count:
            raise InputError(f"--device-id {device_id}: this machine has CUDA devices "
                             f"0..{count - 1}")
        self.cupy, self.rt = cupy, cupy.cuda.runtime
        cupy.cuda.Device(device_id).use()
        props = self.rt.getDeviceProperties(device_id)
        name = props.get("name", b"CUDA device")
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.sms = int(props.get("multiProcessorCount", 108))
        if not props.get("canMapHostMemory", 1) or not props.get("unifiedAddressing", 1):
            raise InputError(f"device {device_id} ({self.name}) cannot map host memory into "
                             "its address space (zero-copy needs unified addressing)")
        self.device_id = device_id
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self._start, self._stop = cupy.cuda.Event(), cupy.cuda.Event()

    def time(self, launch, trials=TRIALS):
        """Least device seconds of `trials` runs of launch(trial) on the stream."""
        best = math.inf
        with self.stream:
            for trial in range(trials):
                self._start.record(self.stream)
                launch(trial)
                self._stop.record(self.stream)
                self._stop.synchronize()
                best = min(best, self.cupy.cuda.get_elapsed_time(self._start, self._stop) / 1e3)
        return best

    def pinned(self, n, dtype):
        dtype = np.dtype(dtype)
        mem = self.cupy.cuda.alloc_pinned_memory(max(n * dtype.itemsize, 1))
        return np.frombuffer(mem, dtype=dtype, count=n)


def _ordinary(n, dtype):
    out = np.empty(n, dtype=dtype)
    out.fill(0)          # fault the pages in before timing
    return out


# ---------------------------------------------------------------- memcpy

def measure_memcpy(gpu, quick):
    """Pinned and pageable host-to-device copy rates by size, and the per-copy latency."""
    rt, stream = gpu.rt, gpu.stream
    h2d = getattr(rt, "memcpyHostToDevice", 1)
    top = COPY_SIZES[-1]
    host = gpu.cupy.cuda.alloc_pinned_memory(top)
    dev = gpu.cupy.cuda.alloc(top)
    pageable = np.ones(top, dtype=np.uint8)
    per_trial = (256 if quick else 1024) * MB

    def copies(src, size, reps):
        for _ in range(reps):
            rt.memcpyAsync(dev.ptr, src, size, h2d, stream.ptr)

    pinned_Bps, pageable_Bps = {}, {}
    for size in COPY_SIZES:
        reps = max(2, per_trial // size)
        copies(host.ptr, size, 1)
        pinned_Bps[size] = reps * size / gpu.time(lambda _: copies(host.ptr, size, reps))
        reps = max(1, reps // 4)          # pageable copies are slower: fewer of them
        best = math.inf
        for _ in range(TRIALS):           # wall clock: the driver stages pageable copies
            t0 = time.perf_counter()      # through its own buffers on the host's time
            copies(pageable.ctypes.data, size, reps)
            stream.synchronize()
            best = min(best, time.perf_counter() - t0)
        pageable_Bps[size] = reps * size / best
    rate = max(v for s, v in pinned_Bps.items() if s >= SUSTAINED)
    small, n = 4096, 256
    per_copy = gpu.time(lambda _: copies(host.ptr, small, n)) / n
    return dict(memcpy_h2d_Bps=rate, memcpy_latency_s=max(0.0, per_copy - small / rate),
                pinned=pinned_Bps, pageable=pageable_Bps)


# ---------------------------------------------------------------- zero-copy

ZEROCOPY_SOURCE = r"""
typedef unsigned long long u64;
__device__ __forceinline__ u64 totem_mix(u64 x) {          // splitmix64
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
// Request r reads WORDS 4-byte words from a random slot of the mapped buffer: a group of
// min(WORDS, 32) lanes (a whole warp when WORDS >= 32) reads them in coalesced loads. With
// `misalign` the start moves off the slot's alignment by 1..LANES-1 words.
template <int WORDS>
__global__ void totem_zc_random(const unsigned int* __restrict__ buf, u64 n_slots, int misalign,
                                u64 n_requests, u64 seed, unsigned int* sink) {
    constexpr int LANES = WORDS < 32 ? WORDS : 32;
    u64 tid = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    u64 groups = (u64)gridDim.x * blockDim.x / LANES;
    int lane = (int)(tid % LANES);
    unsigned int acc = 0;
    for (u64 r = tid / LANES; r < n_requests; r += groups) {
        u64 h = totem_mix(r + seed * 0x632be59bd9b4e019ULL);
        u64 word = __umul64hi(h, n_slots) * WORDS;
        if (misalign) word += 1 + (unsigned int)h % (LANES - 1);
#pragma unroll
        for (int k = 0; k < WORDS / LANES; ++k) acc ^= buf[word + lane + k * LANES];
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;                  // keeps the loads; never true
}
__global__ void totem_zc_seq(const uint4* __restrict__ buf, u64 n, unsigned int* sink) {
    u64 stride = (u64)gridDim.x * blockDim.x;
    unsigned int acc = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u) sink[0] = acc;
}
"""


def _scaled(gpu, launch, first, target_s):
    """How many units of work (first, or more) make a launch last about target_s."""
    elapsed = gpu.time(lambda _: launch(first), trials=1)
    return int(min(max(first, first * target_s / max(elapsed, 1e-6)), 1 << 31))


def measure_zerocopy(gpu, quick):
    """Zero-copy read rates of mapped pinned host memory: random requests by size, aligned and
    misaligned, and a sequential stream."""
    cupy = gpu.cupy
    nbytes = (512 if quick else 1024) * MB
    target = 0.03 if quick else 0.1
    names = [f"totem_zc_random<{s // 4}>" for s in REQUEST_SIZES]
    module = cupy.RawModule(code=ZEROCOPY_SOURCE, options=("-std=c++17",),
                            name_expressions=names + ["totem_zc_seq"])
    ptr = gpu.rt.hostAlloc(nbytes, 0x02 | 0x01)     # cudaHostAllocMapped | cudaHostAllocPortable
    try:
        ctypes.memset(ptr, 0x5A, nbytes)
        # with unified addressing the mapped allocation has the same address on the device
        mem = cupy.cuda.UnownedMemory(ptr, nbytes, gpu)
        buf = cupy.ndarray((nbytes // 4,), dtype=cupy.uint32,
                           memptr=cupy.cuda.MemoryPointer(mem, 0))
        sink = cupy.zeros(1, dtype=cupy.uint32)
        grid, block = (gpu.sms * 2048 // THREADS,), (THREADS,)

        seq = module.get_function("totem_zc_seq")
        n16 = np.uint64(nbytes // 16)
        passes = _scaled(gpu, lambda k: [seq(grid, block, (buf, n16, sink)) for _ in range(k)],
                         1, target)
        passes = min(passes, 64)
        seq_s = gpu.time(lambda _: [seq(grid, block, (buf, n16, sink)) for _ in range(passes)])
        random_Bps, misaligned_Bps = {}, {}
        for size, name in zip(REQUEST_SIZES, names):
            kernel = module.get_function(name)
            words = size // 4
            n_slots = np.uint64((nbytes // 4 - words - 32) // words)
            for misalign, table in ((0, random_Bps), (1, misaligned_Bps)):
                def launch(n, seed=0):
                    kernel(grid, block, (buf, n_slots, np.int32(misalign), np.uint64(n),
                                         np.uint64(seed), sink))
                n = _scaled(gpu, launch, (32 * MB) // size, target)
                table[size] = n * size / gpu.time(lambda trial: launch(n, trial + 1))
        gpu.stream.synchronize()
    finally:
        gpu.cupy.cuda.Device().synchronize()
        gpu.rt.freeHost(ptr)
    return dict(zerocopy_seq_Bps=passes * nbytes / seq_s, random=random_Bps,
                misaligned=misaligned_Bps, buffer_bytes=nbytes)


def in_share(v, u, w, contrib, rank, base, damping):
    """A row's edge (pull): the float32 share its source sends."""
    return contrib[u]


def store_rank(v, total, contrib, rank, base, damping):
    rank[v] = base + damping * total


def push_share(s, t, w, residual, share, n_local):
    """An edge of a queued vertex (push): its share added to the target's residual."""
    return atomic_add(residual, t, share[s]) == 0.0 and t >= n_local


def kernel_calls(ops, xp, indptr, n):
    """The two mappings measure_kernels times, as calls of an operator backend `ops`
    (kernels_gpu.operators on a GPU; arrays of the array module `xp`) over every row of a CSR
    of n rows, each taking the CSR's indices: "rows", a pull summing float32 shares into a
    float64 rank per row (a warp per row on a GPU: the PageRank rounds' functors), and "edges",
    a push over a queue of every vertex adding float64 shares with atomics (a thread per edge:
    PageRank-Delta's functor). Also returns their state: (contributions, ranks, shares,
    residuals)."""
    contrib, rank = xp.ones(n, xp.float32), xp.zeros(n, xp.float64)
    share, residual = xp.full(n, 1e-12), xp.zeros(n)
    queue = xp.arange(n, dtype=xp.int64)
    calls = {"rows": lambda ind: ops.pull(in_share, indptr, ind, None, 0, n,
                                          (contrib, rank, 0.15, 0.85), apply_fn=store_rank),
             "edges": lambda ind: ops.advance(push_share, indptr, ind, None, n, queue, n,
                                              (), None, None, (residual, share, n))}
    return calls, (contrib, rank, share, residual)


def measure_kernels(gpu, quick):
    """Edge bytes per second of the engine's own kernels reading every row of an R-MAT graph
    (rmat:KERNEL_SCALE undirected) whose indices are in mapped host memory, and, for the
    record, in device memory: PageRank's pull (a warp per row: kernels over all rows) and
    PageRank-Delta's push over a queue of every vertex (a thread per edge: frontier kernels),
    the GPU operators with the algorithms' functors."""
    import totem_py
    import kernels_gpu.operators as ops
    from bsp.gpu import mapped_copy
    cupy = gpu.cupy
    graph = totem_py.generate(f"rmat:{KERNEL_SCALE - quick}", seed=1, undirected=True)
    placed = {"device": cupy.asarray(graph.indices), "mapped": mapped_copy(graph.indices)}
    kernels, _ = kernel_calls(ops, cupy, cupy.asarray(graph.indptr), graph.n_vertices)
    rates = {}
    with gpu.stream:
        for kind, kernel in kernels.items():
            for where, indices in placed.items():
                kernel(indices)                                     # compiles
                rates[kind, where] = graph.indices.nbytes / gpu.time(lambda _: kernel(indices))
    gpu.stream.synchronize()
    return dict(rates=rates, edges=graph.n_edges, graph=f"rmat:{KERNEL_SCALE - quick}")


# ---------------------------------------------------------------- compaction

def measure_compaction(quick, empty):
    """Bytes per second of stream_offsets + stream_gather (edges and the 8-byte index) by
    average degree, without and with float64 weights; `empty(n, dtype)` gives staging."""
    import numba

    from kernels_cpu.stream import stream_gather, stream_offsets

    n_edges = (16 if quick else 64) * MB
    rng = np.random.default_rng(12345)
    indices = np.arange(n_edges, dtype=np.int32)      # the values do not matter to the gather
    weights = np.arange(n_edges, dtype=np.float64)
    room = int(n_edges * ACTIVE * 1.5) + MB
    out, wout = empty(room, np.int32), empty(room, np.float64)
    plain, weighted = {}, {}
    for degree in DEGREES:
        n = n_edges // degree
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(rng.integers(1, 2 * degree, n), out=indptr[1:])      # mean `degree`
        np.minimum(indptr, n_edges, out=indptr)
        queue = np.flatnonzero(rng.random(n) < ACTIVE)                   # sorted, int64
        edges = np.cumsum(indptr[queue + 1] - indptr[queue])
        qlen = int(np.searchsorted(edges, room, side="right"))           # fits the staging
        offsets = np.empty(qlen + 1, dtype=np.int64)
        for with_weights, table in ((False, plain), (True, weighted)):
            extra = (weights, wout) if with_weights else ()

            def gather():
                total = stream_offsets(indptr, queue, qlen, offsets)
                stream_gather(indptr, indices, queue, qlen, offsets, out, *extra)
                return total

            total = gather()
            best = math.inf
            for _ in range(TRIALS + 2):
                t0 = time.perf_counter()
                gather()
                best = min(best, time.perf_counter() - t0)
            per_edge = 4 + (8 if with_weights else 0)
            table[degree] = (total * per_edge + INDEX_BYTES * qlen) / best
    return dict(compaction_Bps=plain[REPRESENTATIVE_DEGREE], plain=plain, weighted=weighted,
                threads=numba.get_num_threads(), edges=n_edges)


# ---------------------------------------------------------------- the command

def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def _keyed(table):
    return {str(k): float(v) for k, v in table.items()}


def _size(nbytes):
    return f"{nbytes // MB} MB" if nbytes >= MB else f"{nbytes} B"


def _gbs(bps):
    return f"{bps / 1e9:8.2f}"


def _check_writable(path):
    """Fail before measuring if the profile cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InputError("is a directory, not a profile file", path)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create the profile's folder: {exc.strerror or exc}",
                         path) from None
    probe = f"{path}.probe{os.getpid()}"
    try:
        with open(probe, "w"):
            pass
        os.unlink(probe)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", path) from None


def main(argv=None):
    args = build_parser().parse_args(argv)
    path = profile_path(args.output)
    _check_writable(path)
    from .progress import Progress
    progress = Progress(enabled=False if args.quiet else None)
    say = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    gpu = None if args.cpu_only else _Gpu(args.device_id)
    started = time.perf_counter()

    if gpu is not None:
        progress.phase(f"host-to-device copies on {gpu.name}")
        copy = measure_memcpy(gpu, args.quick)
        say(f"host -> device cudaMemcpyAsync on {gpu.name} (GB/s)")
        say(f"{'size':>8} {'pinned':>8} {'pageable':>8}")
        for size in COPY_SIZES:
            say(f"{_size(size):>8} {_gbs(copy['pinned'][size])} {_gbs(copy['pageable'][size])}")
        say(f"memcpy_h2d_Bps {copy['memcpy_h2d_Bps'] / 1e9:.2f} GB/s (best at >= 32 MB), "
            f"latency {copy['memcpy_latency_s'] * 1e6:.2f} us per copy\n")

        progress.phase("zero-copy reads of mapped host memory")
        zc = measure_zerocopy(gpu, args.quick)
        say(f"zero-copy reads of mapped pinned host memory, {zc['buffer_bytes'] // MB} MB "
            "buffer (GB/s)")
        say(f"{'request':>8} {'random':>8} {'misalign':>8}")
        for size in REQUEST_SIZES:
            say(f"{_size(size):>8} {_gbs(zc['random'][size])} {_gbs(zc['misaligned'][size])}")
        say(f"{'stream':>8} {_gbs(zc['zerocopy_seq_Bps'])}  (sequential, coalesced)\n")

        progress.phase("the engine's kernels over mapped and device edges")
        kern = measure_kernels(gpu, args.quick)
        say(f"the engine's operators over every row of {kern['graph']} undirected "
            f"({kern['edges']} edges), edge bytes / s (GB/s)")
        say(f"{'kernel':>8} {'mapped':>8} {'device':>8}")
        for kind, name in (("rows", "pull"), ("edges", "push")):
            say(f"{name:>8} {_gbs(kern['rates'][kind, 'mapped'])} "
                f"{_gbs(kern['rates'][kind, 'device'])}")
        say("")

    progress.phase("CPU compaction (kernels_cpu/stream.py)")
    comp = measure_compaction(args.quick, gpu.pinned if gpu is not None else _ordinary)
    say(f"CPU compaction into {'pinned' if gpu is not None else 'ordinary'} staging, "
        f"{comp['threads']} threads, {comp['edges'] // MB}M-edge CSR, {ACTIVE:.0%} of the "
        "vertices active (GB/s written, edges + index)")
    say(f"{'degree':>8} {'int32':>8} {'+float64':>8}")
    for d in DEGREES:
        say(f"{d:>8} {_gbs(comp['plain'][d])} {_gbs(comp['weighted'][d])}")
    say(f"compaction_Bps {comp['compaction_Bps'] / 1e9:.2f} GB/s (degree "
        f"{REPRESENTATIVE_DEGREE}, int32)\n")

    tables = {"cpu": _cpu_name(), "compaction_threads": comp["threads"],
              "compaction_Bps_by_degree": _keyed(comp["plain"]),
              "compaction_weighted_Bps_by_degree": _keyed(comp["weighted"]),
              "compaction_csr_edges": comp["edges"], "compaction_active_fraction": ACTIVE,
              "quick": bool(args.quick)}
    date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if gpu is None:
        profile = dataclasses.replace(
            Profile.fallback(), compaction_Bps=comp["compaction_Bps"], date=date,
            measured=("compaction",), tables=tables,
            device="none (--cpu-only): transfer constants are HyTGraph's PCIe 3.0 fallback")
    else:
        tables.update({
            "device_id": gpu.device_id,
            "cuda_runtime_version": int(gpu.rt.runtimeGetVersion()),
            "memcpy_h2d_pinned_Bps_by_bytes": _keyed(copy["pinned"]),
            "memcpy_h2d_pageable_Bps_by_bytes": _keyed(copy["pageable"]),
            "zerocopy_random_Bps": _keyed(zc["random"]),
            "zerocopy_misaligned_Bps": _keyed(zc["misaligned"]),
            "zerocopy_buffer_bytes": zc["buffer_bytes"],
            "kernel_graph": kern["graph"],
            "device_rows_Bps": kern["rates"]["rows", "device"],
            "device_edges_Bps": kern["rates"]["edges", "device"]})
        profile = Profile(memcpy_h2d_Bps=copy["memcpy_h2d_Bps"],
                          zerocopy_seq_Bps=zc["zerocopy_seq_Bps"],
                          zerocopy_random_Bps=zc["random"][LINE_BYTES],
                          zerocopy_rows_Bps=kern["rates"]["rows", "mapped"],
                          zerocopy_edges_Bps=kern["rates"]["edges", "mapped"],
                          compaction_Bps=comp["compaction_Bps"],
                          memcpy_latency_s=copy["memcpy_latency_s"], tlp_bytes=0,
                          device=gpu.name, date=date,
                          measured=("memcpy", "zerocopy", "compaction"), tables=tables)
    save_profile(profile, path)
    progress.done()
    say(f"wrote {path} ({time.perf_counter() - started:.1f} s)")
    return 0


def cli(argv=None):
    from .run import exit_code
    return exit_code(main, argv)


if __name__ == "__main__":
    sys.exit(cli())
