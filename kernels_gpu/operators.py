"""The GPU backend of the operators (bsp/operators.py): numba-cuda kernels with the functor
compiled in as a device function, launched on the partition's CuPy stream.

The templates below are the operators' loops, written once; `Kernel` compiles one per functor
with numba-cuda through the machinery of kernels_cpu/templates.py, each functor called through
an adapter (`tupled`) that spells its arguments out of the tuple the template passes.
Mappings:
* advance: one thread per frontier edge (Gunrock's load-balanced advance): the frontier's edges
  are numbered in queue order by the exclusive scan of the frontier's degrees (`offs`, scanned on
  the device, kernels_gpu/frontier.py), a grid-stride loop runs over block-sized runs of them,
  thread 0 of a block finds the frontier items its run spans and each thread searches that short
  range for its edge; a hub's edges spread over as many threads as it has edges.
* pull, reducing: a warp per row, lanes striding over the row's span, a shuffle reduction of
  the lanes' totals (REDUCTION, in the TOTAL type); rows a row_fn passes over leave at once
  (lane 0's verdict, so the warp stays whole).
* intersect: the reducing pull's warp per row (INTERSECT), each lane merging the row with the
  row of one of its entries at a time.
* pull, searching: a thread per row, stopping at the first hit.
* a row's span of edges (templates.EdgeSpan): its bounds by binary search, in every lane.
* vertex maps, values, inbox entries: a thread per item; bitmaps a thread per byte.
Lists are appended through atomic counters (the order within a list is no one's concern).

Launching through numba-cuda's dispatcher types every argument through
__cuda_array_interface__ each launch, which with a dozen CuPy arrays costs more than a near-empty
superstep may take. `launch` is the one way a kernel starts on a device: it compiles once per
argument types through the dispatcher and then launches the cubin itself: the parameters are
packed into a kept buffer in numba's layout (an array is 7 words: meminfo, parent, size,
itemsize, data, shape, stride) and handed to cuLaunchKernel, with no typing. That reads
the compiled code from numba-cuda's private code library (`_codelibrary`, `_entry_name`, as
numba-cuda 0.30 has them); a numba-cuda without them launches through its public dispatcher on
CuPy's current stream instead. Under numba-cuda's simulator the dispatcher runs the kernels as
Python on NumPy arrays.
"""

import struct
from itertools import compress
from operator import is_not

import numpy as np

from pathlib import Path

from kernels_cpu import intrinsics, templates
from kernels_cpu.templates import (SUM, EdgeSpan, files_key, functors, kernel_name, leading,
                                   next_common, reduced, span_bounds, specialize)

from .intrinsics import SIMULATED, cuda, nonneg

THREADS = 256
WARP = 32
FULL_MASK = 0xFFFFFFFF
EDGE_BLOCKS_PER_SM = 8      # advance: enough resident threads per SM to hide latency
FUSE_THREADS = 1024         # advance's local rounds in one launch: one block of this many
FUSE_EDGES = 16384          # ... while a round holds at most this many edges
ROW_THREADS = 1 if SIMULATED else WARP     # pull_warp: threads per row
# threads per block under the simulator, which starts a Python thread per thread of a block:
# small blocks keep the simulated tests (tests/sim_driver.py) quick
SIMULATED_BLOCK = 4
# Compile only (tests without a GPU): kernels are compiled to PTX for COMPILE_CC, not launched;
# the arrays are NumPy ones. tests/ptxcheck pairs this with the CPU backend, which computes.
COMPILE_ONLY = False
COMPILE_CC = (9, 0)


def functor(*args):
    raise NotImplementedError("a template's functor: compiled by `Kernel`")


row_fn = apply_fn = edge_fn = edge_span = reduce_into = merge_step = functor
WEIGHTED = RECORD = QUEUE = COUNT = CONSUME = ROWS = GATHER = INTERSECT = FILTER = False
OUTPUTS = 0
SPAN = EdgeSpan.ALL
REDUCTION, TOTAL, IDENTITY = SUM.values()      # a row's total: templates.reduction


def lb_find(offs, lo, hi, k):
    """The last i in [lo, hi) with offs[i] <= k."""
    while hi - lo > 1:
        mid = nonneg((lo + hi) >> 1)
        if offs[mid] <= k:
            lo = mid
        else:
            hi = mid
    return lo


_DEVICE = {}


def device(fn):
    """`fn` callable from kernels: a stub compiled as `fn` by numba-cuda (an overload, which
    needs no device to compile: COMPILE_ONLY); under the simulator `fn` itself."""
    if SIMULATED:
        return fn
    stub = _DEVICE.get(fn)
    if stub is None:
        from numba.cuda.extending import overload
        stub = _DEVICE[fn] = intrinsics.stub(fn)
        overload(stub, target="cuda")(intrinsics.typer(fn))
    return stub


_TUPLED = {}


def tupled(fn, lead):
    """`fn` as a device callable of its `lead` leading arguments (vertex, edge, message) and the
    tuple of its others, as templates call functors: fn(a, ..., *args)."""
    adapter = _TUPLED.get((fn, lead))
    if adapter is None:
        inner = device(fn)
        if lead == 1:
            def call(a, args):
                return inner(a, *args)
        elif lead == 2:
            def call(a, b, args):
                return inner(a, b, *args)
        else:
            def call(a, b, c, args):
                return inner(a, b, c, *args)
        adapter = _TUPLED[fn, lead] = call if SIMULATED else device(call)
    return adapter


# -- templates ----------------------------------------------------------------------------------

def advance_lb(indptr, indices, weights, n_local, queue, offs, qlen, out0, len0, out1, len1,
               touched, touched_len, consumed, args):
    span = cuda.shared.array(2, dtype=np.int64)
    if CONSUME and cuda.grid(1) == 0:   # nothing in this launch appends to the consumed list
        consumed[0] = 0
    total = offs[qlen]
    lo = 0
    k0 = cuda.blockIdx.x * cuda.blockDim.x
    stride = cuda.gridDim.x * cuda.blockDim.x
    while k0 < total:
        if cuda.threadIdx.x == 0:
            lo = lb_find(offs, lo, qlen, k0)
            span[0] = lo
            span[1] = lb_find(offs, lo, qlen, min(k0 + cuda.blockDim.x, total) - 1) + 1
        cuda.syncthreads()
        k = k0 + cuda.threadIdx.x
        if k < total:
            if SIMULATED:   # the simulator allocates a block's shared array without a lock: a
                # thread racing another there got an array of its own, never written
                i = nonneg(lb_find(offs, 0, qlen, k))
            else:
                i = nonneg(lb_find(offs, span[0], span[1], k))
            v = nonneg(queue[i])
            e = nonneg(indptr[v] + (k - offs[i]))
            if GATHER:      # the edge's entry to its place in the concatenation (no functor)
                out0[k] = indices[e]
            else:
                t = nonneg(indices[e])
                if WEIGHTED:
                    r = functor(v, t, weights[e], args)
                else:
                    r = functor(v, t, 1.0, args)
                if r:
                    if t < n_local:
                        if OUTPUTS > 1 and r == 2:
                            out1[cuda.atomic.add(len1, 0, 1)] = t
                        elif OUTPUTS > 0:
                            out0[cuda.atomic.add(len0, 0, 1)] = t
                    elif RECORD:
                        touched[cuda.atomic.add(touched_len, 0, 1)] = t - n_local
        cuda.syncthreads()          # the next run rewrites span
        k0 += stride


def advance_rounds(indptr, indices, weights, n_local, queue, nxt, len0, out1, len1, touched,
                   touched_len, counter, most_edges, most_rounds, scratch, args):
    """Rounds after a walk, in one block (its barriers between the rounds, no host between
    them): while the vertices appended to `nxt` (len0[0] of them) are at least one and hold at
    most most_edges edges, and fewer than most_rounds rounds ran, counter[0] grows by one and
    they are walked, a thread per vertex, the vertices they select appended to the other array
    (counted by len0 again; with OUTPUTS 2, those for which the functor gives 2 to out1).
    scratch[2] = the rounds walked: the arrays `queue` and `nxt` have exchanged roles when that
    count is odd. scratch[0:2]: the round's length and edges, read by every thread."""
    tid = cuda.threadIdx.x
    rounds = 0
    walked, appended = queue, nxt
    while rounds < most_rounds:
        if tid == 0:
            scratch[0] = len0[0]
            scratch[1] = 0
        cuda.syncthreads()
        qlen = scratch[0]
        edges = 0
        i = tid
        while i < qlen:
            v = nonneg(appended[i])
            edges += indptr[v + 1] - indptr[v]
            i += cuda.blockDim.x
        cuda.atomic.add(scratch, 1, edges)
        cuda.syncthreads()
        if qlen == 0 or scratch[1] > most_edges:
            break
        walked, appended = appended, walked
        cuda.syncthreads()          # every thread has read len0 before it restarts
        if tid == 0:
            len0[0] = 0
            counter[0] += 1
        cuda.syncthreads()
        rounds += 1
        i = tid
        while i < qlen:
            v = nonneg(walked[i])
            for e in range(nonneg(indptr[v]), indptr[v + 1]):
                t = nonneg(indices[e])
                if WEIGHTED:
                    r = functor(v, t, weights[e], args)
                else:
                    r = functor(v, t, 1.0, args)
                if r:
                    if t < n_local:
                        if OUTPUTS > 1 and r == 2:
                            out1[cuda.atomic.add(len1, 0, 1)] = t
                        else:
                            appended[cuda.atomic.add(len0, 0, 1)] = t
                    elif RECORD:
                        touched[cuda.atomic.add(touched_len, 0, 1)] = t - n_local
            i += cuda.blockDim.x
        cuda.syncthreads()
    if tid == 0:
        scratch[2] = rounds


def pull_warp(indptr, indices, weights, queue, first, end, limit, skip, args):
    """A warp per row (a thread simulated: no shuffles there): rows first..end-1, or (QUEUE) the
    rows queue[first..end-1], or (ROWS) those of them row_fn selects; each its span's edges.
    With INTERSECT (intersect's rows, ascending; span ALL), each edge (v, t) (with FILTER,
    those edge_fn passes) merges rows v and t: functor(v, t, x) for each entry x of both."""
    w = cuda.grid(1) // ROW_THREADS
    lane = cuda.threadIdx.x & (ROW_THREADS - 1)
    if w >= end - first:
        return
    v = nonneg(queue[first + w] if QUEUE else first + w)
    if ROWS:
        keep = 1 if row_fn(v, args) else 0
        if not SIMULATED:   # lane 0's verdict: what row_fn reads may change meanwhile
            keep = cuda.shfl_sync(FULL_MASK, keep, 0)
        if keep == 0:
            return
    e, stop = edge_span(indices, nonneg(indptr[v]), indptr[v + 1], limit, SPAN, skip)
    s = TOTAL(IDENTITY)
    if e < stop:        # the same in every lane: an empty span leaves the shuffles out
        e = nonneg(e + lane)
        while e < stop:
            t = nonneg(indices[e])
            if INTERSECT:
                if not FILTER or edge_fn(v, t, args):
                    a0, a1, b1 = nonneg(indptr[v]), indptr[v + 1], indptr[t + 1]
                    i, j = merge_step(indices, a0, a1, nonneg(indptr[t]), b1)
                    while i < a1:
                        x = functor(v, t, nonneg(indices[nonneg(i)]), args)
                        s = TOTAL(reduce_into(REDUCTION, s, TOTAL(x)))
                        i, j = merge_step(indices, i + 1, a1, j + 1, b1)
            else:
                if WEIGHTED:
                    x = functor(v, t, weights[e], args)
                else:
                    x = functor(v, t, 1.0, args)
                s = TOTAL(reduce_into(REDUCTION, s, TOTAL(x)))
            e += ROW_THREADS
        if not SIMULATED:
            o = 16
            while o > 0:
                s = TOTAL(reduce_into(REDUCTION, s, cuda.shfl_down_sync(FULL_MASK, s, o)))
                o >>= 1
    if lane == 0:
        apply_fn(v, s, args)


def pull_thread(indptr, indices, weights, first, end, limit, skip, out0, len0, args):
    v = first + cuda.grid(1)
    if v >= end or not row_fn(v, args):
        return
    e0, e1 = edge_span(indices, nonneg(indptr[v]), indptr[v + 1], limit, SPAN, skip)
    for e in range(nonneg(e0), e1):
        if WEIGHTED:
            hit = functor(v, nonneg(indices[e]), weights[e], args)
        else:
            hit = functor(v, nonneg(indices[e]), 1.0, args)
        if hit:
            if OUTPUTS > 0:
                out0[cuda.atomic.add(len0, 0, 1)] = v
            return


def vertex_map(n, queue, out0, len0, out1, len1, counter, consumed, args):
    i = cuda.grid(1)
    if CONSUME and i == 0:      # nothing in this launch appends to the consumed list
        consumed[0] = 0
    r = 0
    if i < n:
        v = nonneg(queue[i] if QUEUE else i)
        r = functor(v, args)
        if r:
            if OUTPUTS > 1 and r == 2:
                out1[cuda.atomic.add(len1, 0, 1)] = v
            elif OUTPUTS > 0:
                out0[cuda.atomic.add(len0, 0, 1)] = v
    if COUNT and SIMULATED:     # no warp votes in the simulator
        if r:
            cuda.atomic.add(counter, 0, 1)
    elif COUNT:
        mask = cuda.ballot_sync(FULL_MASK, r != 0)
        if (cuda.threadIdx.x & (WARP - 1)) == 0 and mask:
            cuda.atomic.add(counter, 0, cuda.popc(mask))


def vertex_values(vertices, out, args):
    i = cuda.grid(1)
    if i < vertices.size:
        out[i] = functor(nonneg(vertices[i]), args)


def scatter(values, lvids, out0, len0, out1, len1, args):
    i = cuda.grid(1)
    if i < values.size:
        v = nonneg(lvids[i])
        r = functor(v, values[i], args)
        if r:
            if OUTPUTS > 1 and r == 2:
                out1[cuda.atomic.add(len1, 0, 1)] = v
            elif OUTPUTS > 0:
                out0[cuda.atomic.add(len0, 0, 1)] = v


def bitmap(n, out, args):
    j = cuda.grid(1)
    if j < out.size:
        byte = 0
        for k in range(8):
            v = (j << 3) + k
            if v < n and functor(v, args):
                byte |= 1 << k
        out[j] = byte


# -- compiling and launching --------------------------------------------------------------------

def _numba_type(a):
    return _type_of(_key((a,))[0])


def _type_of(kind):
    """The numba type of arguments of `kind` (`_key`'s: a dtype's char for an array, a
    scalar's Python type, a tuple of them)."""
    from numba.cuda import types
    from numba.cuda.np.numpy_support import from_dtype
    if isinstance(kind, tuple):
        return types.Tuple([_type_of(k) for k in kind])
    if isinstance(kind, str):
        return types.Array(from_dtype(np.dtype(kind)), 1, "C")
    if issubclass(kind, (bool, np.bool_, int)):
        return types.int64
    if issubclass(kind, float):
        return types.float64
    return from_dtype(np.dtype(kind))


_SLOT = {"int64": "q", "uint64": "Q", "int32": "i4x", "uint32": "I4x", "float64": "d",
         "float32": "f4x", "int16": "h6x", "uint16": "H6x", "int8": "b7x", "uint8": "B7x"}


def _layout(ty, fmt):
    """Append the parameter slots of numba type `ty` to the struct format list `fmt` (each
    parameter in a word of its own)."""
    from numba.cuda import types
    if isinstance(ty, types.BaseTuple):
        for t in ty:
            _layout(t, fmt)
    elif isinstance(ty, types.Array):
        fmt.append("qqqqqqq")
    else:
        fmt.append(_SLOT[str(ty)])


def _leaves(args, out):
    """The arguments with the tuples among them (the functor's) spelled out."""
    for a in args:
        if type(a) is tuple:
            _leaves(a, out)
        else:
            out.append(a)
    return out


def _is_array(a):
    """Whether `a` is an array argument: a CuPy array when launching, a NumPy one under the
    simulator or COMPILE_ONLY (an isinstance check: reading CuPy's __cuda_array_interface__
    builds a dict, several microseconds)."""
    if SIMULATED or COMPILE_ONLY:
        return isinstance(a, np.ndarray)
    return isinstance(a, _cupy_array())


def _cupy_array():
    global _CUPY_ARRAY
    if _CUPY_ARRAY is None:
        import cupy
        _CUPY_ARRAY = cupy.ndarray
    return _CUPY_ARRAY


_CUPY_ARRAY = None


def _kind(a):
    """What a compiled instance depends on: an array's dtype, a scalar's Python type."""
    return a.dtype.char if _is_array(a) else type(a)


def _key(args):
    return tuple(_key(a) if type(a) is tuple else _kind(a) for a in args)


_CURRENT_STREAM = _LAUNCH_KERNEL = _GET_DEVICE = None


def _driver():
    """cupy.cuda.get_current_stream, cupy's cuLaunchKernel and cupy.cuda.runtime.getDevice, as
    module globals (a launch is tens of Python operations: each one counts)."""
    global _CURRENT_STREAM, _LAUNCH_KERNEL, _GET_DEVICE
    if _GET_DEVICE is None:
        from cupy.cuda import get_current_stream, runtime
        from cupy_backends.cuda.api.driver import launchKernel
        _CURRENT_STREAM, _LAUNCH_KERNEL, _GET_DEVICE = (get_current_stream, launchKernel,
                                                         runtime.getDevice)


_ARRAY_WORDS = struct.Struct("<5q").pack_into     # size, itemsize, data, shape, stride


def _compiled_code(dispatcher, sig):
    """(cubin, entry name) of `dispatcher` compiled for `sig`, read from numba-cuda's private code
    library (numba-cuda 0.30); None where it is not there."""
    compiled = dispatcher.compile(sig)
    library = getattr(compiled, "_codelibrary", None)
    entry = getattr(library, "_entry_name", None)
    if entry is None or not hasattr(library, "get_cubin"):
        return None
    cubin = library.get_cubin()
    return bytes(getattr(cubin, "code", cubin)), entry


class _Launch:
    """One compiled instance of a kernel on one device: its function and its parameters in
    numba's layout, one word each (an array is 7: meminfo and parent, left 0, then size,
    itemsize, data, shape, stride), kept in a buffer that cuLaunchKernel reads from. A launch
    rewrites only the words of arguments that are not the objects of the last launch (most are
    the same state arrays superstep after superstep), and keeps those objects referenced."""

    def __init__(self, code, sig, args):
        import cupy
        cubin, entry = code
        self.module = cupy.cuda.function.Module()
        self.module.load(cubin)
        self.function = self.module.get_function(entry).ptr
        fmt = []
        for ty in sig:
            _layout(ty, fmt)
        self.slots, offset = [], 0
        for code in fmt:
            if code == "qqqqqqq":
                self.slots.append((offset + 16, None))
                offset += 56
            else:
                self.slots.append((offset, struct.Struct("<" + code).pack_into))
                offset += 8
        self.kinds = [_kind(a) for a in _leaves(args, [])]
        self.last = [None] * len(self.slots)
        self.positions = range(len(self.slots))
        self.buffer = np.zeros(offset // 8, dtype=np.int64)
        base = self.buffer.ctypes.data
        self.words = np.arange(base, base + offset, 8, dtype=np.uint64)   # kernelParams
        self.pointers = self.words.ctypes.data

    def pack(self, leaves):
        """Write the words of the arguments that are not the last launch's objects; False (and
        nothing launchable) if one of them has another type than this instance's."""
        last = self.last
        if len(leaves) != len(last):
            return False
        buf, kinds, slots, array = self.buffer, self.kinds, self.slots, _cupy_array()
        for i in compress(self.positions, map(is_not, leaves, last)):     # the changed ones
            a = leaves[i]
            if (a.dtype.char if isinstance(a, array) else type(a)) != kinds[i]:     # _kind(a)
                return False
            offset, pack = slots[i]
            if pack is None:
                size, item = a.size, a.itemsize
                _ARRAY_WORDS(buf, offset, size, item, a.data.ptr, size, item)
            else:
                pack(buf, offset, a)
            last[i] = a
        return True

    def __call__(self, grid, block, args):
        _LAUNCH_KERNEL(self.function, grid, 1, 1, block, 1, 1, 0, _CURRENT_STREAM().ptr,
                       self.pointers, 0)


class _Dispatched:
    """A kernel launched through numba-cuda's public dispatcher, on CuPy's current stream."""

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def pack(self, leaves):
        return True

    def __call__(self, grid, block, args):
        self.dispatcher[grid, block, _stream()](*args)


_STREAMS = {}


def _stream():
    """CuPy's current stream on the current device, as numba-cuda's external stream."""
    key = (_GET_DEVICE(), _CURRENT_STREAM().ptr)
    stream = _STREAMS.get(key)
    if stream is None:
        stream = _STREAMS[key] = cuda.external_stream(key[1])
    return stream


def launch(kernel, grid, block, args):
    """Start `kernel` (a Kernel) with `args` (the functor's tuple last) on CuPy's current device
    and stream: the instance for the arguments' types and the device (made at first use,
    reused while the types stay), through its kept parameter buffer where numba-cuda hands out
    its compiled code (`_compiled_code`), else through numba-cuda's dispatcher."""
    leaves = [*args[:-1], *args[-1]]
    device = _GET_DEVICE()
    run = kernel.current.get(device)
    if run is None or not run.pack(leaves):
        key = (_key(args), device)
        run = kernel.launches.get(key)
        if run is None:
            sig = tuple(_numba_type(a) for a in args)
            code = _compiled_code(kernel.dispatcher, sig)
            run = _Launch(code, sig, args) if code else _Dispatched(kernel.dispatcher)
            kernel.launches[key] = run
        kernel.current[device] = run
        run.pack(_leaves(args, []))     # tuples among the functor's arguments spelled out
    run(grid, block, args)


_SOURCE_KEY = files_key(*(Path(__file__).parent / f for f in ("operators.py", "intrinsics.py")),
                        templates.__file__)


class Kernel:
    """A template compiled for its functors; launched with kernel(grid, block, *args)."""

    def __init__(self, template, fns, arity, switches):
        name = kernel_name(template, fns, switches, arity, _SOURCE_KEY)
        bindings = dict(switches, lb_find=device(lb_find), edge_span=device(span_bounds),
                        reduce_into=device(reduced), merge_step=device(next_common))
        bindings.update({k: tupled(f, leading(f, arity)) for k, f in fns.items()})
        self.dispatcher = cuda.jit(cache=not SIMULATED)(specialize(template, name, bindings))
        self.spec = template, fns, arity, switches
        self.launches = {}      # (argument kinds, device) -> _Launch or _Dispatched
        self.current = {}       # device -> the last one used there

    def __call__(self, grid, block, *args):
        grid = max(int(grid), 1)
        if SIMULATED:   # compiled for a GPU too, once per argument kinds (kernels_gpu/ptx.py)
            key = _key(args)
            if key in self.launches:
                self.dispatcher[grid, block](*args)
                return
            from .ptx import checked
            with checked(*self.spec, key):
                self.dispatcher[grid, block](*args)
            self.launches[key] = None
        elif COMPILE_ONLY:
            self.compile_ptx(_key(args))
        else:
            launch(self, grid, block, args)

    def compile_ptx(self, kinds):
        """The PTX for COMPILE_CC of this kernel for arguments of `kinds` (`_key`), memoised."""
        if kinds not in self.launches:
            self.launches[kinds] = cuda.compile_ptx(
                self.dispatcher.py_func, tuple(_type_of(k) for k in kinds), cc=COMPILE_CC)
        return self.launches[kinds]


_KERNELS = {}


def compiled(template, fns, arity, **switches):
    """The Kernel of `template` with its functors `fns` for `arity` functor arguments and its
    switches; memoised (the key is positional: each call site passes the same names in the
    same order)."""
    key = (template, *fns.values(), arity, *switches.values())
    kernel = _KERNELS.get(key)
    if kernel is None:
        kernel = _KERNELS[key] = Kernel(template, fns, arity, switches)
    return kernel


def _blocks(n, threads=THREADS):
    return (int(n) + threads - 1) // threads


# -- device plumbing: the partition's arrays are CuPy arrays on a GPU, NumPy ones simulated ------

class _Place:
    """What the launches on one device share: stand-ins for absent arguments (one-element
    arrays, never written), the launch shapes. On NumPy arrays (simulator, COMPILE_ONLY) small
    blocks, which the simulator runs thread by thread."""

    def __init__(self, xp, edge_grid, block):
        self.xp, self.edge_grid, self.block = xp, edge_grid, block
        self.ints = xp.zeros(1, dtype=np.int64)
        self.floats = xp.zeros(1, dtype=np.float64)
        self.lists = (self.ints,) * 4

    def outs(self, outs):
        """(out0, len0, out1, len1) from up to two (items, counter) lists."""
        if not outs:
            return self.lists
        if len(outs) == 1:
            return (*outs[0], self.ints, self.ints)
        return (*outs[0], *outs[1])


_PLACES = {}


def _place():
    if SIMULATED or COMPILE_ONLY:
        place = _PLACES.get(None)
        if place is None:
            place = _PLACES[None] = _Place(np, 2, SIMULATED_BLOCK)
        return place
    if _GET_DEVICE is None:
        _driver()
    device = _GET_DEVICE()
    place = _PLACES.get(device)
    if place is None:
        import cupy
        from ._cuda import _sm_count
        place = _PLACES[device] = _Place(cupy, _sm_count(device) * EDGE_BLOCKS_PER_SM, THREADS)
    return place


def _offsets(indptr, queue, qlen):
    if SIMULATED or COMPILE_ONLY:
        deg = indptr[queue[:qlen] + 1] - indptr[queue[:qlen]]
        return np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    return _frontier().frontier_offsets(indptr, queue, qlen)


_FRONTIER = None


def _frontier():
    global _FRONTIER
    if _FRONTIER is None:
        from . import frontier
        _FRONTIER = frontier
    return _FRONTIER


# -- what bsp/operators.py calls ----------------------------------------------------------------

def advance(fn, indptr, indices, weights, n_local, queue, qlen, outs, outbox, pf, args,
            consume=None):
    k = compiled(advance_lb, {"functor": fn}, len(args), WEIGHTED=weights is not None,
                 RECORD=outbox is not None, OUTPUTS=len(outs), CONSUME=consume is not None)
    p = _place()
    touched, count = (outbox.touched, outbox.count) if outbox is not None else (p.ints, p.ints)
    k(p.edge_grid, p.block, indptr, indices, p.floats if weights is None else weights,
      n_local, queue, _offsets(indptr, queue, qlen), qlen, *p.outs(outs), touched, count,
      p.ints if consume is None else consume, args)


def advance_more(fn, indptr, indices, weights, n_local, queue, outs, outbox, args, counter,
                 most_rounds):
    """advance_rounds in one block of FUSE_THREADS while a round holds at most FUSE_EDGES
    edges; returns the rounds it ran (a copy to the host, which waits for it). `outs`: the next
    queue's (array, counter) pair, and a second list's."""
    k = compiled(advance_rounds, {"functor": fn}, len(args), WEIGHTED=weights is not None,
                 RECORD=outbox is not None, OUTPUTS=len(outs))
    p = _place()
    touched, count = (outbox.touched, outbox.count) if outbox is not None else (p.ints, p.ints)
    scratch = p.xp.zeros(4, dtype=np.int64)     # [3]: the counter where none is given
    block = p.block if SIMULATED or COMPILE_ONLY else FUSE_THREADS
    k(1, block, indptr, indices, p.floats if weights is None else weights, n_local, queue,
      *p.outs(outs), touched, count, scratch[3:] if counter is None else counter, FUSE_EDGES,
      most_rounds, scratch, args)
    return int(scratch[2])


def pull(fn, indptr, indices, weights, first, end, args, row_fn=None, apply_fn=None, out=None,
         queue=None, qlen=0, pf=None, span=EdgeSpan.ALL, limit=0, skip=0, total=SUM):
    """`span` of each row's edges (targets below `limit` are local) from its `skip`-th on;
    `total`: the switches of a reducing form's row totals (templates.reduction)."""
    p = _place()
    w = p.floats if weights is None else weights
    if apply_fn is not None:
        fns = functors(functor=fn, apply_fn=apply_fn, row_fn=row_fn)
        k = compiled(pull_warp, fns, len(args), WEIGHTED=weights is not None,
                     QUEUE=queue is not None, ROWS=row_fn is not None, SPAN=span,
                     INTERSECT=False, FILTER=False, **total)
        if queue is not None:
            first, end = 0, qlen
        k(_blocks((end - first) * ROW_THREADS, p.block), p.block, indptr, indices, w,
          p.ints if queue is None else queue, first, end, limit, skip, args)
    else:
        k = compiled(pull_thread, {"functor": fn, "row_fn": row_fn}, len(args),
                     WEIGHTED=weights is not None, OUTPUTS=int(out is not None), SPAN=span)
        out0, len0 = out if out is not None else (p.ints, p.ints)
        k(_blocks(end - first, p.block), p.block, indptr, indices, w, first, end, limit, skip,
          out0, len0, args)


def intersect(fn, indptr, indices, first, end, args, apply_fn, edge_fn=None, queue=None,
              total=SUM):
    """Rows first..end-1 (or queue[first..end-1]) of the ascending rows (indptr, indices)."""
    fns = functors(functor=fn, apply_fn=apply_fn, edge_fn=edge_fn)
    k = compiled(pull_warp, fns, len(args), WEIGHTED=False, QUEUE=queue is not None,
                 ROWS=False, SPAN=EdgeSpan.ALL, INTERSECT=True, FILTER=edge_fn is not None,
                 **total)
    p = _place()
    k(_blocks((end - first) * ROW_THREADS, p.block), p.block, indptr, indices, p.floats,
      p.ints if queue is None else queue, first, end, 0, 0, args)


def gather_rows(indptr, src, rows, nrows, offsets, out):
    """out[offsets[i]:offsets[i + 1]] = src's entries of row rows[i], for i < nrows (offsets:
    the exclusive scan of the rows' degrees, its total last): advance's load-balanced walk over
    the rows' edges, each edge's entry copied to its place (a streamed partition's cache of hot
    rows, kernels_gpu/chunks.py)."""
    if nrows == 0:
        return
    k = compiled(advance_lb, {}, 0, GATHER=True)
    p = _place()
    k(p.edge_grid, p.block, indptr, src, p.floats, 0, rows, offsets, nrows, out, p.ints,
      p.ints, p.ints, p.ints, p.ints, p.ints, ())


def map_vertices(fn, n, queue, outs, args, count=False, consume=None, pf=None):
    k = compiled(vertex_map, {"functor": fn}, len(args), OUTPUTS=len(outs),
                 QUEUE=queue is not None, COUNT=bool(count), CONSUME=consume is not None)
    p = _place()
    counter = p.xp.zeros(1, dtype=np.int64) if count else p.ints
    k(_blocks(n, p.block), p.block, n, p.ints if queue is None else queue, *p.outs(outs),
      counter, p.ints if consume is None else consume, args)
    return int(counter[0]) if count else None


def map_values(fn, vertices, out, args):
    k = compiled(vertex_values, {"functor": fn}, len(args))
    p = _place()
    k(_blocks(vertices.size, p.block), p.block, vertices, out, args)


def map_inbox(fn, values, lvids, outs, args):
    k = compiled(scatter, {"functor": fn}, len(args), OUTPUTS=len(outs))
    p = _place()
    k(_blocks(values.size, p.block), p.block, values, lvids, *p.outs(outs), args)


def map_bits(fn, n, out, args):
    k = compiled(bitmap, {"functor": fn}, len(args))
    p = _place()
    k(_blocks(out.size, p.block), p.block, n, out, args)
