"""What the algorithms share: sources (the --source option, drawn vertices), owned vertices,
collecting results, and the checks their verifiers start with."""

import argparse
import functools
import math
import weakref

import numpy as np

from kernels_cpu.boxes import box_fill, box_scatter

from ..errors import InputError, VerificationError, check_count
from .base import Option

UNVISITED = np.iinfo(np.int32).max      # the level of a vertex no traversal has reached yet

SOURCE = Option("--source", dict(type=int, default=None, metavar="V",
                                 help="root of a traversal (default: a seeded random vertex "
                                      "with out-degree > 0, printed)"), vertices="one")


def positive_number(text):
    """An option's value that must be a finite positive number (argparse's `type`)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a finite positive number, not {text!r}")
    return value


def source_vertex(graph, source, seed, name):
    """The root of a traversal: `source` checked against the graph, or the default vertex."""
    from ..harness import default_source
    if graph.n_vertices == 0:
        raise InputError(f"{name} needs a source vertex but the graph has no vertices")
    if source is None:
        source = default_source(graph, seed)
    source = check_count(source, "--source")
    if source >= graph.n_vertices:
        raise InputError(f"--source {source} is outside the graph "
                         f"(vertices 0..{graph.n_vertices - 1})")
    return int(source)


def draw_vertices(graph, k, seed=0):
    """k distinct vertices drawn at random with `seed` among the graph's ids (every id when
    k >= n_ids), in increasing order of their original ids: the same vertices whether the graph
    was compacted or not (`Graph.compacted`), given as ids of `graph.with_isolated()` (those in
    no edge that a compacted graph leaves out are graph.n_vertices and up)."""
    n = graph.n_ids
    drawn = (np.arange(n) if k >= n
             else np.sort(np.random.default_rng(seed).choice(n, k, replace=False)))
    if graph.ids is None:
        return drawn.tolist()
    at = np.searchsorted(graph.ids, drawn)
    stored = at < graph.ids.size
    stored[stored] = graph.ids[at[stored]] == drawn[stored]
    return np.where(stored, at, graph.n_vertices + drawn - at).tolist()


def owned_lvid(part, gvid):
    """Local id of global vertex `gvid` if this partition owns it, else None (also for a
    vertex no partition holds: one in no edge that a compacted graph leaves out)."""
    if gvid is None or gvid >= part.plan.graph.n_vertices or part.plan.owner[gvid] != part.pid:
        return None
    return int(part.plan.lvid_of[gvid])


def collect(parts, n_vertices, name, dtype, fill, unset=None):
    """Scatter each partition's state array `name` into one global array of `dtype`, in one
    parallel pass per partition (a single-threaded fancy-indexed store took 0.2 s on 16.7M
    vertices, and its memory traffic slowed the next run's first launches); entries equal to
    `unset` become `fill`, as do vertices no partition here holds (other ranks' under MPI)."""
    out = np.empty(n_vertices, dtype=dtype)
    if sum(p.n_local for p in parts) < n_vertices:
        box_fill(out, fill)
    for p in parts:
        values = p.to_host(getattr(p.state, name)[:p.n_local], count=False)
        box_scatter(values, p.gvids, out, fill if unset is None else unset, fill)
    return out


def first(mask):
    """The first index where `mask` holds."""
    return int(np.flatnonzero(mask)[0])


def as_result(graph, result, what):
    """`result` as an array of one value per vertex, else VerificationError."""
    result = np.asarray(result)
    if result.ndim != 1 or result.size != graph.n_vertices:
        raise VerificationError(
            f"{what}: expected one value per vertex ({graph.n_vertices}), got shape {result.shape}")
    return result


def edge_ends(graph, e):
    """(source, target) of edge `e`, by its place in indices."""
    return int(np.searchsorted(graph.indptr, e, side="right") - 1), int(graph.indices[e])


def checked_source(graph, source, what, error=VerificationError):
    """`source` as an int, `error` if it is not a vertex of `graph`."""
    if not 0 <= int(source) < graph.n_vertices:
        raise error(f"{what}: source {source} is not a vertex of a graph with "
                    f"{graph.n_vertices} vertices")
    return int(source)


_ANSWERS = weakref.WeakKeyDictionary()     # graph -> {(function, arguments): its answer}


def once_per_graph(fn):
    """`fn(graph, *args)` (hashable args) computed once per graph and arguments while the graph
    lives: a serial answer a verifier compares with, which a test verifies many runs of one
    graph against. Arrays in the answer come back read-only."""
    @functools.wraps(fn)
    def answer(graph, *args):
        answers = _ANSWERS.setdefault(graph, {})
        key = (fn, args)
        if key not in answers:
            out = fn(graph, *args)
            for a in out if isinstance(out, tuple) else (out,):
                if isinstance(a, np.ndarray):
                    a.setflags(write=False)
            answers[key] = out
        return answers[key]
    return answer
