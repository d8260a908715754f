"""The run command (or another module's) in a subprocess from the checkout or, for what a
process of its own does not change, in this one; and the contract of its usage errors: exit 2
and one line on stderr, no traceback."""

import subprocess
import sys

from tests.support import ROOT


def run_cli(*args, module="totem_py.run"):
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def assert_usage_error(proc, *words):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


def run_here(*args, module="totem_py.run"):
    """The run command's `cli` (or totem_py.convert's `main`, as `python -m` runs it) called in
    this process (no interpreter to start, no kernels to load): its exit code and what it
    printed, as `run_cli` gives them. What a run changes in the process is put back afterwards:
    the working directory, the environment, the warning filters, Numba's thread count and the
    transfer profiles already warned about. What only a process of its own shows (its exit
    status after a signal, output through a pipe, a resource limit, mpirun, a first import)
    needs `run_cli`."""
    import contextlib
    import importlib
    import io
    import os
    import warnings

    import numba

    from bsp import transfer_model
    from totem_py import convert
    run = importlib.import_module("totem_py.run")      # the module, not totem_py.run the function
    commands = {"totem_py.run": run.cli,
                "totem_py.convert": lambda argv: run.exit_code(convert.main, argv)}
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    environ, threads = dict(os.environ), numba.get_num_threads()
    warned = set(transfer_model._warned)
    try:
        with contextlib.chdir(ROOT), warnings.catch_warnings(), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = commands[module](argv)
            except SystemExit as exc:       # --help, --version
                code = exc.code if isinstance(exc.code, int) else 1
    finally:
        for name in set(os.environ) - set(environ):
            del os.environ[name]
        os.environ.update((k, v) for k, v in environ.items() if os.environ.get(k) != v)
        numba.set_num_threads(threads)
        transfer_model._warned.clear()
        transfer_model._warned.update(warned)
    return subprocess.CompletedProcess([module, *argv], code, out.getvalue(),
                                       err.getvalue())
