"""Result verifiers, GAP style: check properties of an answer rather than compare it bit for bit.

  bfs       source at level 0; no edge from a reached vertex skips a level or leaves the reached set;
            every other reached vertex has an in-neighbour one level up; the rest are at -1.
  sssp      dist(source) = 0; no edge can still be relaxed; every other finite vertex has a tight
            in-edge, and the tight edges reach all finite vertices from the source (this rules out
            zero-weight cycles holding each other's distances down); unreachable means +inf.
  cc        labels are constant along every edge, each label is the smallest id carrying it, and
            there are as many labels as weakly connected components (union-find counts them).
  pagerank  no cheap property pins down the ranks after a finite number of rounds: every vertex
            within a relative bound of the serial reference's ranks after the same rounds. The
            engine sends contributions as float32 (2**-24 relative rounding) and sums in float64,
            so each round adds at most 2**-24 to a rank's relative error; the bound allows four
            times K rounds' worth (1.2e-6 for K = 5), so one wrong vertex fails.
  pagerank with a tolerance (networkx's form): the ranks sum to 1, none is below the teleport
            share (1-d)/n, their L1 distance to the fixed point (rounds to an L1 change of
            1e-13) is at most d/(1-d) * n * tol (what stopping at a change below n * tol
            guarantees), and every rank is within a relative bound of the serial reference's
            ranks at the round it stops at (or the next or previous round where that round's
            change is within rounding of n * tol): within 1e-9 relative (the engine's float64
            sums, added in another order, differ from the reference's near 1e-15).
  pagerank_delta  below the limit of PageRank's rounds everywhere, and within
            tolerance * d / (1 - d) of it in L1 (what stopping with every residual at most
            tolerance / n guarantees; totem_py/algorithms/pagerank_delta.py), the limit by power
            iteration.
  bc        compared with the serial Brandes reference (relative plus small absolute tolerance).

Each verifier returns None, or raises VerificationError naming the first bad vertex. Edge checks
are one parallel pass over the CSR (kernels_cpu/verify.py), naming the first bad edge in edge
order.
"""

import numpy as np
from kernels_cpu import verify as _k

from . import reference
from .errors import VerificationError


def _first(mask):
    return int(np.flatnonzero(mask)[0])


def _as_result(graph, result, what):
    result = np.asarray(result)
    if result.ndim != 1 or result.size != graph.n_vertices:
        raise VerificationError(
            f"{what}: expected one value per vertex ({graph.n_vertices}), got shape {result.shape}")
    return result


def _edge(graph, e):
    """(source, target) of edge `e`, by its place in indices."""
    return int(np.searchsorted(graph.indptr, e, side="right") - 1), int(graph.indices[e])


def _check_source(graph, source, what):
    if not 0 <= int(source) < graph.n_vertices:
        raise VerificationError(f"{what}: source {source} is not a vertex")
    return int(source)


def verify_bfs(graph, source, levels):
    levels = _as_result(graph, levels, "bfs")
    if graph.n_vertices == 0:
        return
    if not np.issubdtype(levels.dtype, np.integer):
        raise VerificationError(f"bfs: levels must be integers, got {levels.dtype}")
    source = _check_source(graph, source, "bfs")
    levels = levels.astype(np.int64)
    if levels[source] != 0:
        raise VerificationError(f"bfs: source {source} has level {levels[source]}, expected 0")
    if (levels < -1).any():
        v = _first(levels < -1)
        raise VerificationError(f"bfs: vertex {v} has level {levels[v]} (unreached must be -1)")
    has_parent = np.zeros(graph.n_vertices, dtype=np.uint8)
    escape, skip = _k.bfs_edges(graph.indptr, graph.indices, levels, has_parent)
    if escape >= 0:
        u, v = _edge(graph, escape)
        raise VerificationError(f"bfs: vertex {v} is unreached but has an in-edge from "
                                f"reached vertex {u}")
    if skip >= 0:
        u, v = _edge(graph, skip)
        raise VerificationError(f"bfs: vertex {v} has level {levels[v]} but in-neighbour "
                                f"{u} has level {levels[u]}")
    has_parent[source] = 1
    bad = (levels >= 0) & (has_parent == 0)
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"bfs: vertex {w} has level {levels[w]} but no in-neighbour "
                                f"at level {levels[w] - 1}")


def verify_sssp(graph, source, dist, rtol=1e-5):
    dist = _as_result(graph, dist, "sssp")
    if graph.n_vertices == 0:
        return
    source = _check_source(graph, source, "sssp")
    dist = dist.astype(np.float64)
    if dist[source] != 0:
        raise VerificationError(f"sssp: source {source} has distance {dist[source]}, expected 0")
    bad = np.isnan(dist) | (dist < 0)
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"sssp: vertex {w} has distance {dist[w]}")
    finite = np.isfinite(dist)
    # edges out of +inf vertices constrain nothing
    weights = graph.weights if graph.weights is not None else np.empty(0)
    args = (graph.indptr, graph.indices, weights, graph.weights is not None, dist, rtol)
    has_tight = np.zeros(graph.n_vertices, dtype=np.uint8)
    e = _k.sssp_edges(*args, has_tight)
    if e >= 0:
        u, v = _edge(graph, e)
        via = dist[u] + (weights[e] if graph.weights is not None else 1.0)
        raise VerificationError(f"sssp: vertex {v} has distance {dist[v]} but the edge from "
                                f"{u} gives {via}")
    has_tight[source] = 1
    bad = finite & (has_tight == 0)
    if bad.any():
        x = _first(bad)
        raise VerificationError(f"sssp: vertex {x} has distance {dist[x]} but no in-edge gives it")
    on_tree = np.zeros(graph.n_vertices, dtype=np.uint8)
    _k.sssp_tight_reach(*args, source, on_tree)
    bad = finite & (on_tree == 0)
    if bad.any():
        x = _first(bad)
        raise VerificationError(f"sssp: vertex {x} has distance {dist[x]} that no path from the "
                                f"source gives (a zero-weight cycle holds it down)")


def verify_pagerank(graph, iterations, ranks, rtol=None):
    """Each rank within `rtol` (default 4 * iterations * 2**-24, the module docstring) of the
    reference's after `iterations` rounds, relative to it (every reference rank is at least
    (1 - d) / n > 0)."""
    ranks = _as_result(graph, ranks, "pagerank")
    if graph.n_vertices == 0:
        return
    if rtol is None:
        rtol = 4 * int(iterations) * 2.0 ** -24 + 1e-12
    ranks = ranks.astype(np.float64)
    expected = reference.pagerank(graph, iterations)
    error = np.abs(ranks - expected) / expected
    bad = ~(error <= rtol)                      # NaN counts as bad
    if bad.any():
        w = int(np.argmax(np.where(np.isnan(error), np.inf, error)))
        raise VerificationError(
            f"pagerank: {int(bad.sum())} of {graph.n_vertices} vertices differ from "
            f"{int(iterations)} rounds by more than {rtol:.2g} relative; worst vertex {w} has "
            f"{ranks[w]:.9g}, expected {expected[w]:.9g}")


def verify_pagerank_converged(graph, tol, ranks, damping=0.85, max_iter=100):
    """PageRank to a tolerance, networkx's form (reference.pagerank_converged): the module
    docstring's properties."""
    ranks = _as_result(graph, ranks, "pagerank")
    n = graph.n_vertices
    if n == 0:
        return
    ranks = ranks.astype(np.float64)
    bad = ~np.isfinite(ranks)
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"pagerank: vertex {w} has {ranks[w]}")
    total = float(ranks.sum())
    if not abs(total - 1.0) <= 1e-9:
        raise VerificationError(f"pagerank: the ranks sum to {total:.9g}, not 1 (with --tol the "
                                f"rank of vertices without out-edges is spread, not lost)")
    floor = (1.0 - damping) / n
    bad = ranks < floor * (1.0 - 1e-9)
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"pagerank: vertex {w} has {ranks[w]:.9g}, below the teleport "
                                f"share (1-d)/n = {floor:.9g}")
    rtol = slack = 1e-9     # per vertex, relative; the L1 change's rounding (the ranks sum to 1)
    # the reference's rounds: the one the rule stops at, its neighbours, the fixed point
    threshold = n * tol
    stop, rounds, changes = None, {}, {}
    for k, x, change in reference.pagerank_rounds(graph, damping):
        changes[k] = change
        if stop is None and (change < threshold or k >= max_iter):
            stop = k
        if stop is None or k <= stop + 1:
            rounds[k] = x
            rounds.pop(k - 3, None)
        if stop is not None and k > stop and (changes[stop] >= threshold or change < 1e-13
                                              or k >= 10000):
            break
    fixed = x
    if changes[stop] < threshold:       # converged: the distance the stopping rule guarantees
        distance = float(np.abs(ranks - fixed).sum())
        bound = damping / (1.0 - damping) * (threshold + slack) + slack
        if not distance <= bound:
            raise VerificationError(
                f"pagerank: L1 distance {distance:.3g} to the fixed point > d/(1-d) * n * tol = "
                f"{bound:.3g}")
    candidates = [stop]
    if stop > 1 and changes[stop - 1] < threshold + slack:
        candidates.append(stop - 1)
    if stop < max_iter and changes[stop] >= threshold - slack:
        candidates.append(stop + 1)
    for k in candidates:
        if (np.abs(ranks - rounds[k]) <= rtol * rounds[k]).all():
            return
    want = rounds[stop]
    error = np.abs(ranks - want) / want
    w = int(np.argmax(error))
    raise VerificationError(
        f"pagerank: {int((error > rtol).sum())} of {n} vertices differ from the reference's "
        f"round {stop} (L1 change {changes[stop]:.3g}, n * tol = {threshold:.3g}) by more than "
        f"{rtol:.2g} relative; worst vertex {w} has {ranks[w]:.9g}, expected {want[w]:.9g}")


def verify_pagerank_delta(graph, tolerance, ranks, damping=0.85):
    ranks = _as_result(graph, ranks, "pagerank_delta")
    if graph.n_vertices == 0:
        return
    ranks = ranks.astype(np.float64)
    exact = reference.pagerank_limit(graph, damping)
    below = exact - ranks
    slack = 1e-9 * exact + 1e-15                  # rounding in sums of up to n terms
    bad = ~(below >= -slack)                        # NaN counts as bad
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"pagerank_delta: vertex {w} has {ranks[w]:.9g}, above the "
                                f"limit {exact[w]:.9g}")
    bound = tolerance * damping / (1.0 - damping)
    if below.sum() > bound + slack.sum():
        w = int(np.argmax(below))
        raise VerificationError(f"pagerank_delta: L1 distance {below.sum():.3g} to the limit > "
                                f"tolerance * d / (1 - d) = {bound:.3g}; worst vertex {w} has "
                                f"{ranks[w]:.6g}, limit {exact[w]:.6g}")


def verify_cc(graph, labels):
    labels = _as_result(graph, labels, "cc")
    n = graph.n_vertices
    if n == 0:
        return
    if not np.issubdtype(labels.dtype, np.integer):
        raise VerificationError(f"cc: labels must be integers, got {labels.dtype}")
    labels = labels.astype(np.int64)
    ids = np.arange(n)
    bad = (labels < 0) | (labels > ids)
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"cc: vertex {w} has label {labels[w]}, which is not a smaller id")
    bad = labels[labels] != labels
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"cc: vertex {w} has label {labels[w]} but vertex {labels[w]} "
                                f"has label {labels[labels[w]]}")
    e = _k.cc_edges(graph.indptr, graph.indices, labels)
    if e >= 0:
        u, v = _edge(graph, e)
        raise VerificationError(f"cc: edge {u} -> {v} joins labels {labels[u]} and "
                                f"{labels[v]}")
    n_components = _k.weak_components(graph.indptr, graph.indices)
    n_labels = np.unique(labels).size
    if n_labels != n_components:
        # labels are constant on components, so some label covers two components: name one
        raise VerificationError(f"cc: {n_labels} labels for {n_components} weak components "
                                f"(some label spans more than one component)")


def verify_bc(graph, sources, scores, rtol=1e-5, atol=1e-6):
    scores = _as_result(graph, scores, "bc")
    if graph.n_vertices == 0:
        return
    scores = scores.astype(np.float64)
    for s in sources:
        _check_source(graph, s, "bc")
    expected = reference.betweenness(graph, sources)
    bad = ~(np.abs(scores - expected) <= rtol * np.abs(expected) + atol)  # NaN counts as bad
    if bad.any():
        w = _first(bad)
        raise VerificationError(f"bc: vertex {w} has {scores[w]:.6g}, expected {expected[w]:.6g}")


def verify(name, graph, result, source=None, sources=None, iterations=None, tolerance=None,
           tol=None):
    """Run the verifier of algorithm `name` ('bfs', 'sssp', 'pagerank', 'cc', 'bc',
    'pagerank_delta'); pagerank with `tol`: the converged form (`iterations` its most rounds,
    default 100)."""
    if name in ("bfs", "sssp"):
        if source is None:
            raise ValueError(f"{name} verification needs a source")
        return (verify_bfs if name == "bfs" else verify_sssp)(graph, source, result)
    if name == "pagerank" and tol is not None:
        return verify_pagerank_converged(graph, tol, result,
                                         max_iter=100 if iterations is None else iterations)
    if name == "pagerank":
        if iterations is None:
            raise ValueError("pagerank verification needs the number of iterations")
        return verify_pagerank(graph, iterations, result)
    if name == "pagerank_delta":
        if tolerance is None:
            raise ValueError("pagerank_delta verification needs the tolerance")
        return verify_pagerank_delta(graph, tolerance, result)
    if name == "cc":
        return verify_cc(graph, result)
    if name == "bc":
        if sources is None:
            if source is None:
                raise ValueError("bc verification needs sources")
            sources = [source]
        return verify_bc(graph, sources, result)
    raise ValueError(f"no verifier for algorithm {name!r}")
