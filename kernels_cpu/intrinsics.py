"""What a functor may call besides plain arithmetic and array indexing: atomics and bit tests.

One name per intrinsic, whatever the device: each is a plain Python function (the definition
used where code runs as Python, e.g. numba-cuda's simulator) with a lowering per compiler target,
registered by the backends: LLVM `atomicrmw` / `cmpxchg` for the CPU (kernels_cpu/atomics.py) and
CUDA's atomics for the GPU (kernels_gpu/intrinsics.py). Every atomic returns the element's
previous value, as CUDA's do. A functor calls them through bsp, as SSSP's relaxation does:

    def relax(s, t, w, dist):
        nd = dist[s] + w
        return nd < dist[t] and nd < bsp.atomic_min(dist, t, nd)

Helpers that functors share are plain functions decorated with `bsp.device_function`.
"""

import threading

_LOCK = threading.Lock()     # the Python definitions: one thread at a time (simulated threads)


def atomic_min(array, index, value):
    """array[index] = min(array[index], value), atomically; returns the previous value."""
    with _LOCK:
        old = array[index]
        if value < old:
            array[index] = value
        return old


def atomic_max(array, index, value):
    """array[index] = max(array[index], value), atomically; returns the previous value."""
    with _LOCK:
        old = array[index]
        if value > old:
            array[index] = value
        return old


def atomic_add(array, index, value):
    """array[index] += value, atomically; returns the previous value."""
    with _LOCK:
        old = array[index]
        array[index] = old + value
        return old


def atomic_or(array, index, value):
    """array[index] |= value (integers), atomically; returns the previous value."""
    with _LOCK:
        old = array[index]
        array[index] = old | value
        return old


def atomic_cas(array, index, expected, value):
    """array[index] = value if it holds `expected`, atomically; returns the value it held."""
    with _LOCK:
        old = array[index]
        if old == expected:
            array[index] = value
        return old


def test_bit(bits, i):
    """Bit i of the bitmap `bits` (uint8: bit i & 7 of byte i >> 3), as 0 or 1; the layout of a
    pull mode's flag box (bsp/exchange.py) and of `operators.bitmap`."""
    return (bits[i >> 3] >> (i & 7)) & 1


INTRINSICS = (atomic_min, atomic_max, atomic_add, atomic_or, atomic_cas, test_bit)

# Device functions (bsp.operators.device_function): each backend registers a lowering, called for
# every device function made before and after it.
_FUNCTIONS = []
_LOWERINGS = []


def register_function(stub, fn):
    """`stub` (a plain function calling `fn`) is to compile as `fn` on every target."""
    _FUNCTIONS.append((stub, fn))
    for lower in _LOWERINGS:
        lower(stub, fn)


def device_functions():
    """(stub, function) of every device function made so far."""
    return list(_FUNCTIONS)


def add_lowering(lower):
    """A backend's `lower(stub, fn)`, applied to every device function, now and later."""
    _LOWERINGS.append(lower)
    for stub, fn in _FUNCTIONS:
        lower(stub, fn)


def _twin(fn, name, body):
    """A function named `name` with `fn`'s parameters whose body returns `body` (an expression
    of `fn` and the parameters)."""
    import functools
    import inspect
    params = ", ".join(inspect.signature(fn).parameters)
    scope = {"fn": fn}
    exec(f"def {name}({params}):\n    return {body.format(params=params)}\n", scope)
    return functools.wraps(fn)(scope[name]) if name == fn.__name__ else scope[name]


def stub(fn):
    """A plain function with `fn`'s name and parameters that calls `fn`: what a backend's
    overload attaches `fn`'s compilation to (see typer)."""
    return _twin(fn, fn.__name__, "fn({params})")


def typer(fn):
    """A function with `fn`'s parameters that returns `fn`: Numba's overload of a stub of `fn`
    (the typing and implementation signatures must match)."""
    return _twin(fn, "typer", "fn")
