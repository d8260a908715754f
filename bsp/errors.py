"""Errors every layer raises for bad input (reported as one line, exit code 2) and the host-memory
check made before anything large is allocated."""

import os
import re


def printable(text):
    """`text` on one line with control characters shown as escapes (\\n, \\x1b, ...), so what a
    file or a file name holds cannot break or restyle a one-line message."""
    return re.sub(r"[\x00-\x1f\x7f-\x9f]",
                  lambda m: repr(m.group())[1:-1], str(text))


class InputError(Exception):
    """Bad input or usage: reported as one line, exit code 2.

    `where` names the file (and line) the problem is in, when there is one.
    """

    def __init__(self, message, path=None, line=None):
        self.path, self.line = path, line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        super().__init__(printable(where + message))


def _read_int(path):
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_room():
    """Bytes this process's cgroup (v2, else v1) may still take, or None without a limit."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and usage is not None and limit < 1 << 60:
            return max(limit - usage, 0)
    return None


def _address_space_room():
    """Bytes of address space left under RLIMIT_AS (ulimit -v), or None without a limit."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as f:
            size = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        return None
    return max(soft - size, 0)


def available_memory():
    """Bytes of host memory a new allocation can take: the least of MemAvailable, what the
    cgroup's limit leaves and what RLIMIT_AS leaves; None if none of them is known."""
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
    except OSError:
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            pass
    rooms = [r for r in (avail, _cgroup_room(), _address_space_room()) if r is not None]
    return min(rooms) if rooms else None


def gib(nbytes):
    """Bytes as GiB for a message: one decimal, two significant digits below 1 GiB."""
    g = nbytes / 2**30
    return f"{g:.1f}" if g >= 1 else f"{g:.2g}"


def check_memory(nbytes, what, path=None, available=None):
    """Raise InputError before allocating `nbytes` if the host cannot hold them (`available`:
    bytes measured earlier, else now)."""
    avail = available_memory() if available is None else available
    if avail is not None and nbytes > avail:
        raise InputError(f"{what} needs about {gib(nbytes)} GiB, {gib(avail)} GiB available",
                         path)
