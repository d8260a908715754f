"""Operators over chunks of rows, as streamed edges come: `pull` (searching: BFS's bottom-up
functors; reducing: PageRank's; over a list of rows: BC's backward step; CC's Afforest phase,
whose pulls sample one edge per row and walk the ghost or local span of the rows a row_fn
selects). Split into 1, 2 or many ranges [first, end), they leave the state of one call over all
rows, and they read no edge of rows outside their range: each range's segment gets an `indices`
whose entries outside its rows point at a poison slot (a ghost in the frontier, a node no edge
reaches, a contribution of 1e30), so any read of them shows in the state. They run on every
backend of the `backend` fixture (conftest.py)."""

import numpy as np
import pytest

from bsp import pull
from totem_py.algorithms import bc, bfs, cc, pagerank
from totem_py.algorithms.bfs import UNVISITED
from tests.support.csr import random_csr as graph
from tests.support.twins import ranges

POISON_VALUE = 1e30


GRAPHS = [(0, 0, 0, 0), (0, 3, 1, 0), (1, 0, 2, 0), (1, 2, 3, 0), (7, 2, 4, 0), (60, 5, 5, 0),
          (300, 20, 6, 6000), (2000, 40, 7, 5000)]


def splits(n, seed):
    """Range boundaries [0, ..., n]: one range, two, several (some empty), one per row."""
    rng = np.random.default_rng(seed)
    out = [[0, n], [0, n // 2, n], [0, int(rng.integers(0, n + 1)), n]]
    cuts = np.sort(rng.integers(0, n + 1, 6))
    out.append([0] + list(cuts) + [n])
    if n <= 60:
        out.append(list(range(n + 1)))
    return [[int(b) for b in bounds] for bounds in out]


def outside(n_local, first, end):
    mask = np.ones(n_local, bool)
    mask[first:end] = False
    return mask


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_pull_search_ranges(backend, n_local, n_ghosts, seed, hub):
    """BFS's bottom-up step: unvisited rows look for a parent in the frontier (local bits, ghost
    bits), stop at the first and join the next queue."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    rng = np.random.default_rng(seed + 100)
    depth = 2
    n = n_local + n_ghosts + 1          # the last slot is the poison: a ghost on the frontier
    start = np.where(rng.random(n) < 0.5, UNVISITED, rng.integers(0, depth + 1, n))
    start = start.astype(np.int32)
    start[n - 1] = depth
    poison = n - 1
    part = backend.part(n_local)
    bits = backend.put(np.packbits(start[:n_local] == depth, bitorder="little"))
    ghosts = backend.put(np.packbits(start[n_local:] == depth, bitorder="little"))

    def run(view, level, check):
        """One pull over `view`; returns the rows it listed."""
        queue = backend.put(np.full(max(1, n_local), -1, np.int64))
        length = backend.put(np.zeros(1, np.int64))
        before = backend.get(level)
        pull(part, view, bfs.find_parent, level, bits, ghosts, n_local, depth,
             row_fn=bfs.unvisited, out=(queue, length))
        found = backend.get(queue)[:int(backend.get(length)[0])]
        if check:       # a single range: nothing outside it changes or is listed
            first, end = view.ranges[0]
            rest = outside(n_local, first, end)
            assert np.array_equal(backend.get(level)[rest], before[rest]), (first, end)
            assert np.all((found >= first) & (found < end)), (first, end)
        return sorted(found.tolist())

    level = backend.put(start[:n_local])
    want_queue = run(backend.view(indptr, indices, n_local), level, False)
    want_level = backend.get(level)
    reached = [v for v in range(n_local) if start[v] == UNVISITED
               and (start[indices[indptr[v]:indptr[v + 1]]] == depth).any()]
    assert want_queue == reached
    assert np.array_equal(np.flatnonzero(want_level != start[:n_local]), reached)
    assert np.all(want_level[reached] == depth + 1)
    for bounds in splits(n_local, seed):
        level, found = backend.put(start[:n_local]), []
        for first, end in ranges(bounds):       # a call per range
            found += run(backend.view(indptr, indices, n_local, bounds=[first, end],
                                      poison=poison), level, True)
        assert np.array_equal(backend.get(level), want_level), bounds
        assert sorted(found) == want_queue, bounds
        level = backend.put(start[:n_local])    # the ranges as segments of one call
        found = run(backend.view(indptr, indices, n_local, bounds=bounds, poison=poison),
                    level, False)
        assert np.array_equal(backend.get(level), want_level), bounds
        assert found == want_queue, bounds


def components(backend, indptr, indices, n_local, n_nodes, bounds, poison):
    """CC's local Afforest phase (algorithms/cc.py) over a view whose rows come in the ranges
    `bounds`; checks that no poisoned edge was linked (the poison node stays alone)."""
    comp = backend.put(np.arange(n_nodes, dtype=np.int64))
    view = backend.view(indptr, indices, n_local, bounds=bounds, poison=poison)
    cc.afforest(backend.part(n_local), view, comp, seed=0)
    got = backend.get(comp)
    if poison is not None:
        assert got[poison] == poison
    return got


def naive_components(indptr, indices, n_local, n_nodes):
    """Smallest node of each node's component, edges taken both ways."""
    parent = list(range(n_nodes))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x
    for u in range(n_local):
        for t in indices[indptr[u]:indptr[u + 1]]:
            a, b = find(u), find(int(t))
            parent[max(a, b)] = min(a, b)
    return np.array([find(x) for x in range(n_nodes)])


@pytest.mark.parametrize("ghosts_first", [False, True])
@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_cc_afforest_ranges(backend, n_local, n_ghosts, seed, hub, ghosts_first):
    """The roots of every node (vertex or ghost slot) after Afforest's local phase, whatever the
    ranges; with `ghosts_first`, rows whose ghost edges come first (the giant component's rows
    link only those)."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub, both=True, ghosts_first=ghosts_first)
    n_nodes = n_local + n_ghosts + 1     # the last node is the poison, reached by no edge
    want = naive_components(indptr, indices, n_local, n_nodes)
    assert np.array_equal(components(backend, indptr, indices, n_local, n_nodes, None, None),
                          want)
    for bounds in splits(n_local, seed):
        got = components(backend, indptr, indices, n_local, n_nodes, bounds, n_nodes - 1)
        assert np.array_equal(got, want), bounds


def bc_state(n_local, n_ghosts, seed, depth):
    rng = np.random.default_rng(seed + 200)
    level = rng.integers(0, depth + 3, n_local).astype(np.int32)
    level[rng.random(n_local) < 0.2] = UNVISITED
    sigma = rng.integers(1, 5, n_local).astype(np.float64)
    delta = np.where(level == depth + 1, rng.random(n_local), 0.0)
    ghosts = np.where(rng.random(n_ghosts + 1) < 0.5, rng.random(n_ghosts + 1), 0.0)
    ghosts[n_ghosts] = POISON_VALUE     # the poison slot: node n_local + n_ghosts
    vertices = rng.permutation(np.flatnonzero(level == depth)).astype(np.int64)
    return level, sigma, delta, ghosts, vertices


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_pull_list_ranges(backend, n_local, n_ghosts, seed, hub):
    """BC's backward step: the rows of a list (one level's vertices) sum their successors'
    shares (local ones from the level below's share array, or the ghost slots' published ones)
    and store their own shares; the list split among the ranges, each range's rows a sub-queue
    of its own, as streamed edges split a queue."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    depth = 1
    level, sigma, delta0, ghosts, vertices = bc_state(n_local, n_ghosts, seed, depth)
    source = int(vertices[0]) if vertices.size else -1
    bc0 = np.arange(n_local, dtype=np.float64)
    poison = n_local + n_ghosts
    part = backend.part(n_local)
    below = np.where(level == depth + 1, (1 + delta0) / sigma, 0.0)
    args = [backend.put(a) for a in (below, sigma)]

    def run(view, delta, scores, mine, check):
        before = backend.get(delta), backend.get(scores), backend.get(mine)
        pull(part, view, bc.successor_share, *args, delta, backend.put(ghosts), scores,
             n_local, source, mine, apply=bc.accumulate, rows=backend.put(vertices))
        if check:
            first, end = view.ranges[0]
            rest = outside(n_local, first, end)
            for got, was in zip((delta, scores, mine), before):
                assert np.array_equal(backend.get(got)[rest], was[rest]), (first, end)

    fresh = lambda: (backend.put(delta0), backend.put(bc0),  # noqa: E731
                     backend.put(np.zeros(n_local)))
    delta, scores, mine = fresh()
    run(backend.view(indptr, indices, n_local), delta, scores, mine, False)
    want_delta, want_bc, want_mine = backend.get(delta), backend.get(scores), backend.get(mine)
    share = np.concatenate([below, ghosts])
    on_level = np.isin(np.arange(n_local), vertices)
    totals = np.array([share[indices[indptr[v]:indptr[v + 1]]].sum() for v in range(n_local)])
    assert np.allclose(want_delta, np.where(on_level, sigma * totals, delta0), rtol=1e-12)
    assert np.allclose(want_mine, np.where(on_level, (1 + want_delta) / sigma, 0.0), rtol=1e-12)
    gains = np.where(on_level & (np.arange(n_local) != source), want_delta, 0.0)
    assert np.array_equal(want_bc, bc0 + gains)
    assert np.all(want_delta < POISON_VALUE / 2)
    for bounds in splits(n_local, seed):
        delta, scores, mine = fresh()
        for first, end in ranges(bounds):
            run(backend.view(indptr, indices, n_local, bounds=[first, end], poison=poison),
                delta, scores, mine, True)
        for got, want in ((delta, want_delta), (scores, want_bc), (mine, want_mine)):
            assert np.array_equal(backend.get(got), want), bounds
        delta, scores, mine = fresh()
        run(backend.view(indptr, indices, n_local, bounds=bounds, poison=poison), delta, scores,
            mine, False)
        for got, want in ((delta, want_delta), (scores, want_bc), (mine, want_mine)):
            assert np.array_equal(backend.get(got), want), bounds


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_pull_reduce_ranges(backend, n_local, n_ghosts, seed, hub):
    """PageRank's pull: each row's rank from the sum of its in-neighbours' contributions."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    rng = np.random.default_rng(seed + 300)
    contrib = rng.random(n_local + n_ghosts + 1).astype(np.float32)
    contrib[-1] = POISON_VALUE
    poison = contrib.size - 1
    part = backend.part(n_local)
    d_contrib = backend.put(contrib)

    def run(view, rank, check):
        before = backend.get(rank)
        pull(part, view, pagerank.in_contribution, d_contrib, rank, 0.01, 0.85,
             apply=pagerank.new_rank)
        if check:
            first, end = view.ranges[0]
            rest = outside(n_local, first, end)
            assert np.array_equal(backend.get(rank)[rest], before[rest]), (first, end)

    rank = backend.put(np.full(n_local, -1.0))
    run(backend.view(indptr, indices, n_local), rank, False)
    want = backend.get(rank)
    sums = np.array([contrib[indices[indptr[v]:indptr[v + 1]]].astype(np.float64).sum()
                     for v in range(n_local)])
    assert np.allclose(want, 0.01 + 0.85 * sums, rtol=1e-10)
    for bounds in splits(n_local, seed):
        rank = backend.put(np.full(n_local, -1.0))
        for first, end in ranges(bounds):
            run(backend.view(indptr, indices, n_local, bounds=[first, end], poison=poison),
                rank, True)
        assert np.allclose(backend.get(rank), want, rtol=1e-10, atol=0), bounds
        rank = backend.put(np.full(n_local, -1.0))
        run(backend.view(indptr, indices, n_local, bounds=bounds, poison=poison), rank, False)
        assert np.allclose(backend.get(rank), want, rtol=1e-10, atol=0), bounds
