"""The run command (or another module's) in a subprocess from the checkout, and the contract of
its usage errors: exit 2 and one line on stderr, no traceback."""

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


def run_here(*args):
    """The run command's `cli` called in this process (no interpreter to start, no kernels to
    load): its exit code and what it printed, as `run_cli` gives them. For arguments the command
    refuses before it runs anything; a run belongs in a process of its own (`run_cli`)."""
    import contextlib
    import io

    from totem_py.run import cli
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            code = cli(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["totem_py.run", *argv], code, out.getvalue(),
                                       err.getvalue())
