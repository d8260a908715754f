"""The GPU operators' kernels compiled to PTX without a GPU.

`compile_only()` switches kernels_gpu.operators to COMPILE_ONLY with a stand-in for the current
device (tests/ptxcheck pairs it with the CPU backend, which computes). `checked` serves
`--device simulated` (NUMBA_ENABLE_CUDASIM=1): the simulator runs functors as Python, so one a
GPU cannot compile (a list, np.zeros) would run there and fail only on a GPU. The simulator
replaces numba.cuda in its process, so the compiling happens in a child process without it,
started when the simulator is chosen (totem_py/backend.py: it loads numba-cuda meanwhile) or at
the first check, and kept for the process's life.

Each kernel (template, functors, switches) goes to the child once per argument kinds, by
reference: the template by name, a functor by its module's name and file and its qualified
name (the child imports the module, or loads the file under that name as the parent did, with
the parent's sys.path). A functor that cannot be named so (a closure, a lambda) is not checked.
The child compiles while the simulator runs the kernel's first launch; after that launch, the
child's Numba error is raised as a NumbaError, which bsp/operators.py's `functor_errors` turns
into one line at the functor's file and line.
"""

import atexit
import contextlib
import importlib
import importlib.util
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from pathlib import Path


@contextlib.contextmanager
def compile_only():
    """kernels_gpu.operators compiles its kernels to PTX (COMPILE_CC) and launches nothing, for
    the length of the block (the same process may launch on a real device too)."""
    import numba.cuda.dispatcher

    from . import operators as gpu

    class Device:       # what numba-cuda asks of the current device compiling a device function
        compute_capability = gpu.COMPILE_CC

    saved = gpu.COMPILE_ONLY, numba.cuda.dispatcher.get_current_device
    gpu.COMPILE_ONLY, numba.cuda.dispatcher.get_current_device = True, Device
    try:
        yield
    finally:
        gpu.COMPILE_ONLY, numba.cuda.dispatcher.get_current_device = saved


# -- the simulated process's side ---------------------------------------------------------------

_CHILD = None
_LOCK = threading.Lock()


# the package's own functors, compiled for a GPU by its tests (test_gpu_backend): not checked
SHIPPED = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), d)
                + os.sep for d in ("bsp", "kernels_cpu", "kernels_gpu", "totem_py"))


def _reference(fn):
    """(module name, module file, qualified name) of a functor, or None where the child could
    not find it by them."""
    module = sys.modules.get(getattr(fn, "__module__", None))
    path = getattr(module, "__file__", None)
    if path is None or "<" in fn.__qualname__:
        return None
    return fn.__module__, os.path.realpath(path), fn.__qualname__


def start():
    """Start the child, if it is not running: it loads numba-cuda while the parent goes on."""
    global _CHILD
    if _CHILD is None or _CHILD[0].poll() is not None:
        env = dict(os.environ)
        env.pop("NUMBA_ENABLE_CUDASIM", None)
        root = str(Path(__file__).resolve().parents[1])
        log = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {root!r}); "
             "from kernels_gpu.ptx import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env)
        _CHILD = proc, log
        atexit.register(_stop, proc)


def _stop(proc):
    proc.stdin.close()      # the child's end of input: it returns
    proc.wait()


def _read():
    proc, log = _CHILD
    try:
        return pickle.load(proc.stdout)
    except (OSError, EOFError, pickle.UnpicklingError):
        proc.wait()
        log.seek(0)
        tail = log.read().decode(errors="replace").strip().splitlines()[-1:]
        raise RuntimeError("the GPU compile check (kernels_gpu/ptx.py) stopped: "
                           f"{' '.join(tail) or f'exit {proc.returncode}'}") from None


@contextlib.contextmanager
def checked(template, fns, arity, switches, kinds):
    """The block (a kernel's first simulated launch) runs while the child compiles `template`
    with its functors `fns` for arguments of `kinds` (operators._key); after it, a NumbaError
    where numba-cuda cannot compile them, a RuntimeError where it has no NVVM."""
    refs = {name: _reference(fn) for name, fn in fns.items()}
    if not refs or None in refs.values() or all(r[1].startswith(SHIPPED) for r in refs.values()):
        yield
        return
    with _LOCK:     # one request in flight: the replies come in order
        start()
        pickle.dump((list(sys.path), template.__name__, refs, arity, switches, kinds),
                    _CHILD[0].stdin)
        _CHILD[0].stdin.flush()
        try:
            yield
        finally:
            reply = _read()
    if reply is None:
        return
    kind, text, path, line = reply
    if kind == "nvvm":
        raise RuntimeError("the simulator's kernels are compiled for a GPU too, which needs "
                           f"NVVM (pip install nvidia-nvvm): {text}")
    from numba.core import ir
    from numba.core.errors import NumbaError
    error = NumbaError(text)
    error.loc = ir.Loc(path, line) if path else None
    raise error


# -- the child's side ---------------------------------------------------------------------------

def _module(name, path):
    """The module `name` from `path`: imported where that name is that file, else loaded."""
    try:
        module = importlib.import_module(name)
        if os.path.realpath(getattr(module, "__file__", "")) == path:
            return module
    except ImportError:
        pass
    name = "__totem_main__" if name == "__main__" else name
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _functor(name, path, qualname):
    obj = _module(name, path)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def serve():
    """The child: read (sys.path, template, functor references, arity, switches, kinds) from
    stdin, compile, write None or (kind, message, file, line) to what was stdout (stdout itself
    goes to stderr, so that what the functors' modules print cannot reach the parent)."""
    inp, out = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    from numba.core.errors import NumbaError

    from . import operators as gpu
    while True:
        try:
            sys.path[:], template, refs, arity, switches, kinds = pickle.load(inp)
        except EOFError:
            return
        reply = None
        try:
            fns = {name: _functor(*ref) for name, ref in refs.items()}
        except Exception as exc:    # a module that fails to load here: not checked
            print(f"not checked: {type(exc).__name__}: {exc}", file=sys.stderr)
            fns = None
        try:
            if fns:
                with compile_only():
                    gpu.compiled(getattr(gpu, template), fns, arity, **switches).compile_ptx(kinds)
        except ImportError as exc:  # numba-cuda's NvvmSupportError
            reply = ("nvvm", str(exc).splitlines()[0], None, None)
        except NumbaError as exc:
            loc = getattr(exc, "loc", None)
            reply = ("numba", str(exc), getattr(loc, "filename", None), getattr(loc, "line", None))
        except Exception as exc:
            reply = ("numba", f"{type(exc).__name__}: {exc}", None, None)
        pickle.dump(reply, out)
        out.flush()
