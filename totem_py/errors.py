"""Errors the command line turns into exit codes (DESIGN.md: 2 bad input, 3 verification failed),
and the host-memory check of each stage of a run, made before anything large is allocated
(InputError and the check itself are bsp.errors', which every layer uses)."""

import numbers

from bsp.errors import InputError, available_memory, check_memory, gib, printable

__all__ = ["InputError", "VerificationError", "available_memory", "check_count", "check_memory",
           "check_stages", "gib", "printable", "stage_bytes",
           "stage_figures"]


class VerificationError(Exception):
    """A result failed its property verifier: exit code 3."""


def check_count(value, option, least=0):
    """`value` as an int; InputError naming `option` unless it is an integer (a bool or a float
    is not, whatever its value) of at least `least`."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise InputError(f"{option} must be an integer, got {value!r}")
    if value < least:
        raise InputError(f"{option} must be at least {least}, got {value}")
    return int(value)


# Host bytes of each stage of a run, for an unweighted and a weighted graph: ((peak above what
# the stage starts from: per vertex, per edge, fixed), (what it keeps for the stages after it: per
# vertex, per edge)). Edges are the stage's input edges (an undirected .npz: the stored ones).
# "plan:VIEW" builds the partitions' local CSRs of one view; running an algorithm is a stage
# ("run", its class's figures: Algorithm.memory). Measured by `python -m
# experiments.memory_costs`, emulated device (docs/results/memory_costs_2core.txt): each figure
# the largest over the algorithms.
STAGE_COSTS = {
    "load_npz":            (((8, 5, 899668), (9, 5)), ((9, 14, 95145), (9, 13))),
    "load_npz_undirected": (((9, 35, 20467), (9, 5)), ((9, 52, 23759), (9, 13))),
    "load":                (((15, 11, 29476583), (9, 5)), ((9, 24, 20876089), (9, 13))),
    "undirected":          (((21, 25, 17839609), (8, 8)), ((16, 57, 1687), (9, 25))),
    "partition":           (((53, 0, 2146856), (17, 0)), ((53, 0, 2146842), (17, 1))),
    "plan:in":             (((59, 9, 0), (28, 9)), ((59, 25, 0), (28, 25))),
    "plan:out":            (((52, 5, 0), (23, 5)), ((52, 13, 0), (23, 13))),
    "plan:both":           (((17, 20, 20873730), (34, 17)), ((17, 52, 20873888), (34, 49))),
}
_WORK = {"load": "loading", "load_npz": "loading", "load_npz_undirected": "loading",
         "undirected": "symmetrising", "partition": "partitioning", "plan": "planning",
         "run": "running"}


def _name(stage):
    return stage if isinstance(stage, str) else stage[0]


def _costs(stage, weighted):
    """A stage's figures: a (name, figures) pair's, else STAGE_COSTS'; a kind alone ("plan") or
    an unmeasured one: the largest of that kind's."""
    if not isinstance(stage, str):
        return stage[1][weighted]
    if stage in STAGE_COSTS:
        return STAGE_COSTS[stage][weighted]
    kind = stage.split(":")[0]
    rows = [c[weighted] for s, c in STAGE_COSTS.items() if s.split(":")[0] == kind]
    return tuple(tuple(max(x) for x in zip(*parts)) for parts in zip(*rows))


def stage_figures(stage):
    """STAGE_COSTS' figures of a stage (or the largest of its kind), unweighted and weighted."""
    return tuple(_costs(stage, w) for w in (False, True))


def stage_bytes(n_vertices, n_edges, weighted, stages):
    """Peak host bytes of running `stages` (keys of STAGE_COSTS or their kinds, or (name,
    figures) pairs in the form of STAGE_COSTS' values) in order on a graph of this size: the
    largest, over the stages, of what the earlier ones keep plus the stage's peak. After
    "undirected" the later stages see twice the edges."""
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
        steps = list(dict.fromkeys(_WORK[_name(s).split(":")[0]] for s in stages))
        doing = ", ".join(steps[:-1]) + " and " + steps[-1] if len(steps) > 1 else steps[0]
        raise InputError(f"{doing} a graph of {n_vertices} vertices and {n_edges} edges needs "
                         f"about {gib(need)} GiB, {gib(avail)} GiB available", path)
