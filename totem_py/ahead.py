"""Compiling ahead on a first run.

Numba compiles a process's kernels one after another, which is most of a first run's time on a
machine of few cores. When the kernel cache holds none of the engine's kernels yet and a second
core is free, `start` runs the same algorithm in a second process on a small graph
built with NumPy, partitioned with the partitioner's kernels run as plain Python: that process
compiles the engine's kernels (exchange boxes, frontier counts, the operators with the algorithm's
functors, their parallel forms first) while this one generates or reads its graph and partitions it
(a graph of at most kernels_cpu.jit.SMALL_GRAPH edges with the serial forms of the generator's and
partitioner's kernels, which compile several times faster). This one then loads them from the
cache, or waits for the one being compiled (kernels_cpu.compile_once_per_machine); it runs its
small supersteps with the parallel forms too (`parallel_forms`), whose serial twins the next run
compiles. First, second and third runs: docs/results/cold_start_2core.txt.
TOTEM_COMPILE_AHEAD=0 turns this off.

    python -m totem_py.ahead JOB      (JOB: the run's settings as JSON; what `start` runs)
"""

import contextlib
import importlib
import json
import os
import subprocess
import sys
import types

import numpy as np

# the partitioner's kernels, run as Python in the second process
PYTHON_MODULES = ("kernels_cpu.plan", "kernels_cpu.plan_stats", "kernels_cpu.csr",
                  "kernels_cpu.order")
SMALL = 2048            # vertices of the small graph


def start(algorithm, device, **settings):
    """The compiling process for a run of `algorithm` (a registered name, or a file's:
    algorithms.base.find) on `device` with the
    harness keywords `settings` (partition, cpu_share, gpus, hub_sort, algorithm options), or
    None where there is nothing to gain: the cache holds the engine's kernels, the device is a
    GPU (its kernels compile elsewhere), no second core is free, or TOTEM_COMPILE_AHEAD=0.
    `stop` it when done."""
    import kernels_cpu
    if device not in ("cpu", "emulated") or os.environ.get("TOTEM_COMPILE_AHEAD") == "0" or \
            kernels_cpu._cores() < 2 or not _cold() or kernels_cpu.other_load():
        return None
    env = dict(os.environ, NUMBA_NUM_THREADS="1")     # it computes next to nothing
    job = json.dumps(dict(settings, algorithm=algorithm, device=device))
    try:
        return subprocess.Popen([sys.executable, "-m", "totem_py.ahead", job], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def stop(proc):
    """End the compiling process if it is still at work (what it has cached stays)."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        proc.wait()


def parallel_forms():
    """The operators run every superstep with their parallel kernels (none compiled twice)."""
    from kernels_cpu import operators
    operators.SERIAL_ITEMS = 0


def _cold():
    """Whether the cache holds no entry of one of the engine's first kernels (an exchange box
    fill)."""
    from kernels_cpu import boxes
    entry = getattr(getattr(boxes.box_fill.parallel, "_cache", None), "_cache_file", None)
    folder, name = getattr(entry, "_cache_path", None), getattr(entry, "_index_name", None)
    return bool(folder and name) and not os.path.exists(os.path.join(folder, name))


def small_graph(weighted, undirected, seed=0):
    """An R-MAT graph of SMALL vertices (Graph500's quadrant odds; hubs both ways, so that a
    traversal takes the same turns as on a large one, bottom-up steps included) in NumPy, with
    the id and weight types a generated graph has."""
    from .graph import Graph, index_dtype
    rng = np.random.default_rng(seed)
    n, m = SMALL, 16 * SMALL
    src, dst = np.zeros(m, np.int64), np.zeros(m, np.int64)
    for _ in range(SMALL.bit_length() - 1):
        quadrant = np.searchsorted([0.57, 0.76, 0.95], rng.random(m))
        src, dst = 2 * src + (quadrant >= 2), 2 * dst + (quadrant % 2)
    if undirected:
        src, dst = np.r_[src, dst], np.r_[dst, src]
    key = np.unique(src[src != dst] * n + dst[src != dst])
    src, dst = key // n, key % n
    indptr = np.r_[0, np.cumsum(np.bincount(src, minlength=n))]
    weights = rng.integers(1, 256, key.size).astype(np.float64) if weighted else None
    return Graph(indptr, dst.astype(index_dtype(n)), weights, "small", directed=not undirected,
                 checked=False)


def _python_intrinsics():
    """id of each CPU intrinsic -> a Python stand-in."""
    from kernels_cpu import atomics
    intrinsics = {id(atomics.prefetch): lambda *a: None}
    for name, op in (("atomic_add", lambda a, b: a + b), ("atomic_min", min),
                     ("atomic_max", max), ("atomic_or", lambda a, b: a | b)):
        intrinsics[id(getattr(atomics, name))] = _rmw(op)
    return intrinsics


def _python(fn, memo, intrinsics):
    """A compiled function as plain Python: its Python code with the compiled functions and
    intrinsics it calls replaced the same way."""
    from numba.core.dispatcher import Dispatcher
    if id(fn) in intrinsics:
        return intrinsics[id(fn)]
    if id(fn) not in memo:
        code = fn.py_func
        glob = dict(code.__globals__)
        memo[id(fn)] = types.FunctionType(code.__code__, glob, code.__name__, code.__defaults__,
                                          code.__closure__)
        for name, value in glob.items():
            if isinstance(value, Dispatcher) or id(value) in intrinsics:
                glob[name] = _python(value, memo, intrinsics)
    return memo[id(fn)]


def _rmw(op):
    def rmw(array, index, value):
        old = array[index]
        array[index] = op(old, value)
        return old
    return rmw


@contextlib.contextmanager
def python_kernels():
    """The kernels of PYTHON_MODULES run as Python (the modules' own entry points swapped, then
    put back)."""
    from numba.core.dispatcher import Dispatcher
    swapped, memo, intrinsics = [], {}, _python_intrinsics()
    try:
        for name in PYTHON_MODULES:
            module = importlib.import_module(name)
            for attr, value in list(vars(module).items()):
                # its own entry points only: a compiled one reads its helpers from the module;
                # a graph_kernel's forms share one Python function
                compiled = getattr(value, "serial", value)
                if isinstance(compiled, Dispatcher) and not attr.startswith("_") and \
                        compiled.py_func.__module__ == name:
                    swapped.append((module, attr, value))
                    setattr(module, attr, _python(compiled, memo, intrinsics))
        yield
    finally:
        for module, attr, value in swapped:
            setattr(module, attr, value)


def compile_twins():
    """Each kernel compiled in one of its forms (parallel, or serial for small supersteps) is
    compiled in the other for the same argument types."""
    from kernels_cpu import operators
    pairs = list(operators._COMPILED.values())
    for name in ("kernels_cpu.boxes", "kernels_cpu.frontier"):
        for value in vars(importlib.import_module(name)).values():
            if hasattr(value, "parallel") and hasattr(value, "serial"):
                pairs.append((value.parallel, value.serial))
    for a, b in pairs:
        for x, y in ((a, b), (b, a)):
            for sig in list(x.signatures):
                if sig not in y.signatures:
                    y.compile(sig)


def main(argv=None):
    job = json.loads((argv or sys.argv[1:])[0])
    from .algorithms.base import find
    from .harness import run
    graph = small_graph(job.pop("weighted"), job.pop("undirected"))
    parallel_forms()        # first: the first process runs them
    with python_kernels():
        run(graph, find(job.pop("algorithm")), **job)
    compile_twins()
    return 0


if __name__ == "__main__":
    sys.exit(main())
