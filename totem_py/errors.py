"""Errors the command line turns into exit codes (DESIGN.md: 2 bad input, 3 verification failed),
and the host-memory check made before anything large is allocated."""

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


class VerificationError(Exception):
    """A result failed its property verifier: exit code 3."""


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


# Host bytes of each stage of a run, per vertex, per edge and per weighted edge (the weight's
# share), as (peak above what the stage started from, what it keeps for the stages after it),
# plus a fixed peak. Measured by `python -m experiments.memory_costs` (uniform random graphs of
# 2**16..2**19 vertices and 1M..8M edges, emulated device, the largest fit over bfs, pagerank,
# cc, bc and sssp).
STAGES = ("load", "undirected", "partition", "plan", "run")
AFTER_LOADING = ("partition", "plan", "run")
STAGE_COSTS = {
    #              peak: vertex, edge, weight, fixed      keep: vertex, edge, weight
    "load":       ((8, 16, 16, 64 << 20),                 (8, 4, 8)),
    "undirected": ((8, 16, 16, 0),                        (8, 4, 8)),
    "partition":  ((64, 0, 0, 0),                         (16, 0, 0)),
    "plan":       ((64, 16, 16, 0),                       (32, 16, 16)),
    "run":        ((128, 16, 16, 64 << 20),               (64, 8, 8)),
}
LOAD_NPZ = ((8, 4, 8, 16 << 20), (8, 4, 8))     # the arrays alone, read in place
LOAD_NPZ_UNDIRECTED = ((16, 36, 16, 16 << 20), (8, 4, 8))   # and the symmetry check (io.py)


def stage_bytes(n_vertices, n_edges, weighted, stages, costs=None):
    """Peak host bytes of running `stages` (names of STAGE_COSTS, in order) on a graph of this
    size: the largest, over the stages, of what the earlier ones keep plus the stage's peak.
    After "undirected" the later stages see twice the edges. `costs` replaces some stages'."""
    costs = dict(STAGE_COSTS, **(costs or {}))
    kept = peak = 0
    m, w = n_edges, n_edges if weighted else 0
    for stage in stages:
        (pv, pe, pw, fixed), (kv, ke, kw) = costs[stage]
        peak = max(peak, kept + pv * n_vertices + pe * m + pw * w + fixed)
        kept += kv * n_vertices + ke * m + kw * w
        if stage == "undirected":
            m, w = 2 * m, 2 * w
    return int(peak)


def check_stages(n_vertices, n_edges, weighted, stages, path=None, available=None, costs=None):
    """InputError, with the figures in GiB, if `stages` on a graph of this size need more host
    memory than is available (`available`: measured before the first stage began)."""
    need = stage_bytes(n_vertices, n_edges, weighted, stages, costs)
    avail = available_memory() if available is None else available
    if avail is not None and need > avail:
        work = {"load": "loading", "undirected": "symmetrising", "partition": "partitioning",
                "plan": "planning", "run": "running"}
        steps = [work.get(s, s) for s in stages]
        doing = ", ".join(steps[:-1]) + " and " + steps[-1] if len(steps) > 1 else steps[0]
        raise InputError(f"{doing} a graph of {n_vertices} vertices and {n_edges} edges needs "
                         f"about {gib(need)} GiB, {gib(avail)} GiB available", path)
