"""Where a result came from: the command, the code version and the hardware, which every
benchmark writes into its JSON (`command`, `code_version`, `hardware`) and prints first, so that a
result file in docs/results/ says how to reproduce it."""

import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def code_version():
    """$TOTEM_CODE_VERSION where set (a copy of the tree whose git metadata is not the tree's,
    e.g. `TOTEM_CODE_VERSION=$(git rev-parse --short HEAD)` taken where the tree was committed),
    else `git describe --always --dirty` of this checkout, or "unknown" outside a git checkout."""
    if os.environ.get("TOTEM_CODE_VERSION"):
        return os.environ["TOTEM_CODE_VERSION"]
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _proc_field(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def hardware(gpu=False):
    """CPU model and cores, memory and, with `gpu` (a benchmark that runs on GPUs), the GPUs CuPy
    finds."""
    cpu = _proc_field("/proc/cpuinfo", "model name") or platform.processor() or platform.machine()
    text = f"{os.cpu_count()} cores ({cpu})"
    mem = _proc_field("/proc/meminfo", "MemTotal")
    if mem and mem.endswith("kB"):
        text += f", {int(mem.split()[0]) / 2**20:.0f} GiB"
    if gpu:
        try:
            import cupy
        except ImportError:
            return text
        try:
            names = [cupy.cuda.runtime.getDeviceProperties(d)["name"].decode()
                     for d in range(cupy.cuda.runtime.getDeviceCount())]
        except Exception:               # no driver or no device: the CPU facts stand
            names = []
        if names:
            text += ", GPUs: " + ", ".join(names)
    return text


def provenance(module, argv=None, gpu=False):
    """{command, code_version, hardware} of a run of `python -m module argv...` (default: this
    process's arguments); `gpu`: name the GPUs too."""
    argv = sys.argv[1:] if argv is None else argv
    return dict(command=" ".join(["python -m", module, *map(shlex.quote, argv)]),
                code_version=code_version(), hardware=hardware(gpu))


def header(prov):
    """The provenance as the comment lines a result text file starts with."""
    return "\n".join(f"# {k.replace('_', ' ')}: {prov[k]}"
                     for k in ("command", "code_version", "hardware"))
