"""Numba CPU kernels on raw arrays (DESIGN.md: they never see Graph, plans or config).

Every kernel is `@njit(parallel=True, nogil=True, cache=True)` where it loops over vertices or
edges; `kernels_gpu/` holds the CUDA twins with the same module and function names.

Importing this package settles, before Numba starts its thread pool, what a user's environment
leaves open (a variable the user set is kept):
- OMP_WAIT_POLICY: passive (idle threads sleep), or active (they spin) on machines of 8+ cores
  where nothing else is runnable (`wait_policy`). libgomp reads it once, when it is loaded.
- NUMBA_THREADING_LAYER: omp where Numba's OpenMP layer loads, else workqueue; never TBB by
  accident (TBB's idle threads spin in sched_yield whatever the wait policy says).
- where compiled kernels are cached (unless NUMBA_CACHE_DIR is set): `cache_dir()`, by the
  source file's path inside the project and a hash of its contents, so that a reinstall, or a
  switch between an editable and a regular install, finds the kernels it compiled before
  (Numba's own cache sits beside the installed files and starts empty in a new install);
  processes compiling the same kernel at once compile it once (`compile_once_per_machine`).
"""

import contextlib
import functools
import hashlib
import os
import time

SPIN_CORES = 8

# Why (one line each):
# - spin on big idle machines: spinning threads start each of a superstep's many launches at once
# - sleep otherwise: on few or busy cores, spinning threads take the time the working ones need
# - not TBB: idle TBB threads spin anyway, slowing whatever runs beside them


def _cores():
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def other_load(looks=3, gap_s=0.01):
    """Runnable tasks on the machine other than this process: the fewest of a few looks at
    /proc/loadavg (a CPU-bound process is runnable at every look); None where it cannot be read."""
    seen = []
    try:
        for look in range(looks):
            if look:
                time.sleep(gap_s)
            with open("/proc/loadavg") as f:
                seen.append(int(f.read().split()[3].split("/")[0]) - 1)
    except (OSError, ValueError, IndexError):
        return None
    return min(seen)


def wait_policy(cores=None, load=None):
    """OMP_WAIT_POLICY for this machine: active only with SPIN_CORES cores or more and no other
    runnable task seen, else passive."""
    cores = _cores() if cores is None else cores
    if cores < SPIN_CORES:
        return "passive"
    load = other_load() if load is None else load
    return "active" if load == 0 else "passive"


def threading_layer():
    """omp where Numba's OpenMP layer loads (libgomp; Intel OpenMP on macOS), else workqueue."""
    try:
        from numba.np.ufunc import omppool  # noqa: F401
    except ImportError:
        return "workqueue"
    return "omp"


PACKAGES = ("bsp", "kernels_cpu", "kernels_gpu", "partitioners", "totem_py")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cache_dir():
    """~/.cache/totem_py/numba, or under $XDG_CACHE_HOME."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "totem_py", "numba")


@functools.lru_cache(maxsize=None)
def _contents_hash(path, mtime, size):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def cache_by_contents():
    """Put a locator first in Numba's list that caches this project's kernels under
    cache_dir()/<module path>/<contents hash>; files of other projects go to Numba's own."""
    from numba.core import caching
    try:        # the names of recent Numba, then the private ones of older versions
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
        base = (getattr(caching, "UserProvidedCacheLocator", None)
                or caching._UserProvidedCacheLocator)
    except AttributeError:      # a Numba without them: its own cache, beside the files
        return
    if any(c.__name__ == "ContentsLocator" for c in impl._locator_classes):
        return

    class ContentsLocator(base):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            st = os.stat(py_file)
            module = os.path.splitext(os.path.relpath(py_file, ROOT))[0]
            self._cache_path = os.path.join(cache_dir(), module,
                                            _contents_hash(py_file, st.st_mtime, st.st_size))

        @classmethod
        def from_function(cls, py_func, py_file):
            try:
                rel = os.path.relpath(os.path.abspath(py_file), ROOT)
            except ValueError:      # another drive
                return None
            if rel.split(os.sep)[0] not in PACKAGES:
                return None
            return super(base, cls).from_function(py_func, py_file)   # exists and writable

    impl._locator_classes.insert(0, ContentsLocator)


_HELD = set()       # the lock files of the compile locks this process holds


@contextlib.contextmanager
def _compile_lock(dispatcher):
    """Hold the cross-process lock of `dispatcher`'s cache entry (a file beside its index); a
    lock this process holds already (a recursive kernel types itself again), a dispatcher
    without a disk cache or a lock that cannot be taken: nothing."""
    entry = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)    # Numba 0.5x-0.6x
    folder, name = getattr(entry, "_cache_path", None), getattr(entry, "_index_name", None)
    path = os.path.join(folder, name + ".lock") if folder and name else None
    if path is None or path in _HELD:
        yield
        return
    try:
        import fcntl
        os.makedirs(folder, exist_ok=True)
        f = open(path, "a")
    except (ImportError, OSError):
        yield
        return
    with f:
        fcntl.flock(f, fcntl.LOCK_EX)
        _HELD.add(path)
        try:
            yield
        finally:
            _HELD.discard(path)
            fcntl.flock(f, fcntl.LOCK_UN)


class _Miss(Exception):
    pass


class _CacheOnly:
    """A dispatcher's compiler while the dispatcher only looks in its cache: whatever is asked
    of it (a compile after a miss) raises _Miss."""

    def __getattr__(self, name):
        raise _Miss


def compile_once_per_machine():
    """Processes that need the same kernel at once (pytest-xdist workers, the ranks of a first
    mpirun, several runs started together) compile it once: a dispatcher compiles a new
    signature under its cache entry's file lock, so the others wait for it and then load what
    it saved. A signature the cache holds loads without the lock (ranks starting together load
    their kernels side by side)."""
    from numba.core import dispatcher
    from numba.core.compiler_lock import global_compiler_lock
    plain = dispatcher.Dispatcher.compile
    if getattr(plain, "locked", False):
        return

    def compile(self, sig):
        with global_compiler_lock:      # (one thread at a time swaps the compiler)
            compiler = getattr(self, "_compiler", None)
            if compiler is not None and getattr(self, "_cache", None) is not None:
                self._compiler = _CacheOnly()       # a load from the cache takes no lock
                try:
                    return plain(self, sig)
                except _Miss:       # counted again below, as a hit or a miss
                    misses = getattr(self, "_cache_misses", None)
                    if misses is not None:
                        misses[sig] -= 1
                finally:
                    self._compiler = compiler
        with _compile_lock(self):
            return plain(self, sig)
    compile.locked = True
    dispatcher.Dispatcher.compile = compile


def spinning():
    """Whether the pool's idle threads spin between launches (OMP_WAIT_POLICY active under the
    OpenMP layer): a parallel launch then costs about a microsecond, against the tens that
    waking sleeping threads takes."""
    return (os.environ.get("OMP_WAIT_POLICY", "").lower() == "active"
            and os.environ.get("NUMBA_THREADING_LAYER") == "omp")


def threads():
    """What the --json record says of the CPU threads: Numba's threading layer, the wait policy
    and the thread count."""
    count = numba.get_num_threads()     # starts the thread pool if no kernel has yet
    return dict(layer=numba.threading_layer(), wait_policy=os.environ.get("OMP_WAIT_POLICY"),
                count=count)


if "OMP_WAIT_POLICY" not in os.environ:
    os.environ["OMP_WAIT_POLICY"] = wait_policy()
if "NUMBA_THREADING_LAYER" not in os.environ:
    os.environ["NUMBA_THREADING_LAYER"] = threading_layer()
# Numba may have been imported already (it reads its configuration at import, and again only
# when it compiles): hand it the value directly too
import numba  # noqa: E402

numba.config.THREADING_LAYER = os.environ["NUMBA_THREADING_LAYER"]
if "NUMBA_CACHE_DIR" not in os.environ:
    cache_by_contents()
compile_once_per_machine()
