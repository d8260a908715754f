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


# Host bytes of each stage of a run, for an unweighted and a weighted graph: ((peak above what
# the stage starts from: per vertex, per edge, fixed), (what it keeps for the stages after it: per
# vertex, per edge)). Edges are the stage's input edges (an undirected .npz: the stored ones).
# "plan:VIEW" builds the partitions' local CSRs of one view, "run:ALG" runs one algorithm.
# Measured by `python -m experiments.memory_costs` on the 2-core machine, emulated device
# (docs/results/memory_costs_2core.txt): each figure the largest over the algorithms.
STAGE_COSTS = {
    "load_npz":            (((8, 5, 899668), (9, 5)), ((9, 14, 95145), (9, 13))),
    "load_npz_undirected": (((9, 35, 20467), (9, 5)), ((9, 52, 23759), (9, 13))),
    "load":                (((15, 11, 29476583), (9, 5)), ((9, 24, 20876089), (9, 13))),
    "undirected":          (((21, 25, 17839609), (8, 8)), ((16, 57, 1687), (9, 25))),
    "partition":           (((53, 0, 2146856), (17, 0)), ((53, 0, 2146842), (17, 1))),
    "plan:in":             (((59, 9, 0), (28, 9)), ((59, 25, 0), (28, 25))),
    "plan:out":            (((52, 5, 0), (23, 5)), ((52, 13, 0), (23, 13))),
    "run:bfs":             (((96, 6, 0), (83, 6)), ((96, 6, 0), (83, 6))),
    "run:pagerank":        (((94, 7, 0), (66, 7)), ((94, 15, 0), (66, 15))),
    "run:sssp":            (((160, 29, 0), (146, 29)), ((124, 9, 0), (110, 9))),
    "plan:both":           (((17, 20, 20873730), (34, 17)), ((17, 52, 20873888), (34, 49))),
    "run:cc":              (((197, 10, 0), (169, 10)), ((197, 18, 0), (169, 18))),
    "run:bc":              (((138, 5, 0), (124, 5)), ((138, 5, 0), (124, 5))),
}
_WORK = {"load": "loading", "load_npz": "loading", "load_npz_undirected": "loading",
         "undirected": "symmetrising", "partition": "partitioning", "plan": "planning",
         "run": "running"}


def _costs(stage, weighted):
    """A stage's figures; a kind alone ("run") or an unmeasured one ("run:khop"): the largest of
    that kind's."""
    if stage in STAGE_COSTS:
        return STAGE_COSTS[stage][weighted]
    kind = stage.split(":")[0]
    rows = [c[weighted] for s, c in STAGE_COSTS.items() if s.split(":")[0] == kind]
    return tuple(tuple(max(x) for x in zip(*parts)) for parts in zip(*rows))


def stage_bytes(n_vertices, n_edges, weighted, stages):
    """Peak host bytes of running `stages` (keys of STAGE_COSTS, or their kinds) in order on a
    graph of this size: the largest, over the stages, of what the earlier ones keep plus the
    stage's peak. After "undirected" the later stages see twice the edges."""
    kept = peak = 0
    m = n_edges
    for stage in stages:
        (pv, pe, fixed), (kv, ke) = _costs(stage, bool(weighted))
        peak = max(peak, kept + pv * n_vertices + pe * m + fixed)
        kept += kv * n_vertices + ke * m
        if stage == "undirected":
            m *= 2
    return int(peak)


def check_stages(n_vertices, n_edges, weighted, stages, path=None, available=None):
    """InputError, with the figures in GiB, if `stages` on a graph of this size need more host
    memory than is available (`available`: measured before the first stage began)."""
    need = stage_bytes(n_vertices, n_edges, weighted, stages)
    avail = available_memory() if available is None else available
    if avail is not None and need > avail:
        steps = list(dict.fromkeys(_WORK[s.split(":")[0]] for s in stages))
        doing = ", ".join(steps[:-1]) + " and " + steps[-1] if len(steps) > 1 else steps[0]
        raise InputError(f"{doing} a graph of {n_vertices} vertices and {n_edges} edges needs "
                         f"about {gib(need)} GiB, {gib(avail)} GiB available", path)
