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
