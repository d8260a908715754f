"""Row-range kernels (bfs_pull, cc_link_sample, cc_link_rest, bc_backward, pr_pull) over chunks of
rows: split into 1, 2 or many ranges [first, end), they leave the state of one call over all rows,
and they read no edge of rows outside their range. Each chunk call gets an `indices` whose entries
outside [indptr[first], indptr[end]) point at a poison slot (a frontier vertex, a node no edge
reaches, a ghost or contribution of 1e30): any read of them shows in the state. The same bodies
run on the CUDA twins where CuPy sees a device."""

import numpy as np
import pytest

from kernels_cpu.bfs import UNVISITED
from twins import twins  # noqa: F401 (fixture)

POISON_VALUE = 1e30


def graph(n_local, n_ghosts, seed, hub=0, both=False):
    """A random CSR of n_local rows over n_local + n_ghosts targets, many empty rows, row
    min(3, n_local - 1) with `hub` more edges; with `both` every local edge also reversed (CC's
    "both" view); rows sorted, so ghost targets come last as the CC kernels expect."""
    rng = np.random.default_rng(seed)
    degrees = np.where(rng.random(n_local) < 0.3, 0, rng.integers(1, 9, n_local))
    if hub and n_local:
        degrees[min(3, n_local - 1)] += hub
    src = np.repeat(np.arange(n_local), degrees)
    dst = rng.integers(0, max(1, n_local + n_ghosts), src.size)
    if both:
        local = dst < n_local
        src, dst = np.concatenate([src, dst[local]]), np.concatenate([dst, src[local]])
    order = np.lexsort((dst, src))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n_local))])
    return indptr.astype(np.int64), dst[order].astype(np.int32)


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


def ranges(bounds):
    return list(zip(bounds[:-1], bounds[1:]))


def poisoned(indptr, indices, first, end, poison):
    """indices with every entry outside rows [first, end) set to `poison`."""
    out = np.full_like(indices, poison)
    lo, hi = indptr[first], indptr[end]
    out[lo:hi] = indices[lo:hi]
    return out


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_bfs_pull_ranges(twins, n_local, n_ghosts, seed, hub):
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    rng = np.random.default_rng(seed + 100)
    depth = 2
    n = n_local + n_ghosts + 1          # the last slot is the poison: on the frontier
    start = np.where(rng.random(n) < 0.5, UNVISITED, rng.integers(0, depth + 1, n))
    start = start.astype(np.int32)
    start[n - 1] = depth
    poison = n - 1

    # the kernel gets the locals' levels and the ghosts' frontier bits (the bitmap the pull
    # exchange delivers): the poison ghost's bit is set, and no ghost's level is ever read
    ghosts = twins.put(np.packbits(start[n_local:] == depth, bitorder="little"))

    def run(bounds, check):
        level = twins.put(start[:n_local])
        queue = twins.put(np.zeros(max(1, n_local), np.int64))
        length = twins.put(np.zeros(1, np.int64))
        found = []
        for first, end in ranges(bounds):
            before = twins.get(level)
            idx = twins.put(poisoned(indptr, indices, first, end, poison) if check else indices)
            length[0] = 0
            twins.bfs.bfs_pull(twins.put(indptr), idx, end, level, ghosts, depth, queue, length, first)
            after, q = twins.get(level), twins.get(queue)[:int(twins.get(length)[0])]
            outside = np.ones(n_local, bool)
            outside[first:end] = False
            assert np.array_equal(after[outside], before[outside]), (first, end)
            assert np.all((q >= first) & (q < end)), (first, end)
            found += list(q)
        return twins.get(level), sorted(found)

    want_level, want_queue = run([0, n_local], False)
    reached = [v for v in range(n_local) if start[v] == UNVISITED
               and (start[indices[indptr[v]:indptr[v + 1]]] == depth).any()]
    assert want_queue == reached
    assert np.array_equal(np.flatnonzero(want_level != start[:n_local]), reached)
    for bounds in splits(n_local, seed):
        level, queue = run(bounds, True)
        assert np.array_equal(level, want_level), bounds
        assert queue == want_queue, bounds


def test_bfs_pull_default_first(twins):
    """No `first` is rows [0, n_local), as before."""
    indptr, indices = graph(60, 5, 9)
    level = np.full(60, UNVISITED, np.int32)
    level[[0, 20]] = 0
    ghosts = np.packbits(np.arange(5) == 3, bitorder="little")   # ghost slot 3, target 63
    out = []
    for extra in ((), (0,)):
        lv, queue = twins.put(level), twins.put(np.zeros(60, np.int64))
        length = twins.put(np.zeros(1, np.int64))
        twins.bfs.bfs_pull(twins.put(indptr), twins.put(indices), 60, lv, twins.put(ghosts), 0, queue,
                        length, *extra)
        out.append(twins.get(lv))
    assert np.array_equal(out[0], out[1])
    assert (out[0] == 1).any()


def components(twins, indptr, indices, n_local, n_nodes, bounds, convention, poison):
    """The local Afforest phase of algorithms/cc.py with every link kernel called per range;
    checks after each call that no poisoned edge was linked (the poison node stays alone)."""
    k = twins.cc
    comp = twins.put(np.arange(n_nodes, dtype=np.int64))
    d_indptr = twins.put(indptr)

    def chunks():
        for first, end in ranges(bounds):
            idx = indices if poison is None else poisoned(indptr, indices, first, end, poison)
            yield first, end, twins.put(idx)

    def clean():
        if poison is not None:
            assert int(twins.get(comp)[poison]) == poison

    for r in range(k.SAMPLE):
        for first, end, idx in chunks():
            k.cc_link_sample(d_indptr, idx, end, comp, r, first)
            clean()
        k.cc_compress(comp)
    giant = k.cc_frequent(comp[:n_local], 1024, 0)
    for first, end, idx in chunks():
        if convention == "end":
            k.cc_link_rest(d_indptr, idx, n_local, comp, giant, first, end)
        else:                           # the chunk's end as n_local (ghosts from `end` on)
            k.cc_link_rest(d_indptr, idx, end, comp, giant, first)
        clean()
    k.cc_compress(comp)
    return twins.get(comp)


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


@pytest.mark.parametrize("convention", ["end", "n_local"])
@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_cc_link_ranges(twins, n_local, n_ghosts, seed, hub, convention):
    indptr, indices = graph(n_local, n_ghosts, seed, hub, both=True)
    n_nodes = n_local + n_ghosts + 1     # the last node is the poison, reached by no edge
    poison = n_nodes - 1
    want = naive_components(indptr, indices, n_local, n_nodes)
    one = components(twins, indptr, indices, n_local, n_nodes, [0, n_local], convention, None)
    assert np.array_equal(one, want)
    for bounds in splits(n_local, seed):
        got = components(twins, indptr, indices, n_local, n_nodes, bounds, convention, poison)
        assert np.array_equal(got, want), bounds


def test_cc_link_default_first(twins):
    """No `first` (and no `end`) is rows [0, n_local)."""
    indptr, indices = graph(60, 5, 9, both=True)
    k, out = twins.cc, []
    for extra in ((), (0,)):
        comp = twins.put(np.arange(66, dtype=np.int64))
        k.cc_link_sample(twins.put(indptr), twins.put(indices), 60, comp, 0, *extra)
        k.cc_link_rest(twins.put(indptr), twins.put(indices), 60, comp, -1, *extra)
        k.cc_compress(comp)
        out.append(twins.get(comp))
    assert np.array_equal(out[0], out[1])
    assert np.array_equal(out[0], naive_components(indptr, indices, 60, 66))


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
def test_bc_backward_ranges(twins, n_local, n_ghosts, seed, hub):
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    depth = 1
    level, sigma, delta0, ghosts, vertices = bc_state(n_local, n_ghosts, seed, depth)
    source = int(vertices[0]) if vertices.size else -1
    bc0 = np.arange(n_local, dtype=np.float64)
    poison = n_local + n_ghosts
    args = [twins.put(a) for a in (level, sigma)]

    def run(bounds, check):
        delta, bc = twins.put(delta0), twins.put(bc0)
        for first, end in ranges(bounds):
            before = twins.get(delta), twins.get(bc)
            idx = poisoned(indptr, indices, first, end, poison) if check else indices
            twins.bc.bc_backward(twins.put(indptr), twins.put(idx), n_local, *args, delta, twins.put(ghosts),
                              depth, bc, source, twins.put(vertices), first, end)
            outside = np.ones(n_local, bool)
            outside[first:end] = False
            assert np.array_equal(twins.get(delta)[outside], before[0][outside]), (first, end)
            assert np.array_equal(twins.get(bc)[outside], before[1][outside]), (first, end)
        return twins.get(delta), twins.get(bc)

    want_delta, want_bc = run([0, n_local], False)
    assert np.all(want_delta < POISON_VALUE / 2)
    for bounds in splits(n_local, seed):
        delta, bc = run(bounds, True)
        assert np.array_equal(delta, want_delta), bounds
        assert np.array_equal(bc, want_bc), bounds


def test_bc_backward_default_range(twins):
    """No `first`/`end` is rows [0, n_local); `first` alone is rows [first, n_local)."""
    n_local, n_ghosts, depth = 60, 5, 1
    indptr, indices = graph(n_local, n_ghosts, 9)
    level, sigma, delta0, ghosts, vertices = bc_state(n_local, n_ghosts, 9, depth)
    out = []
    for extra in ((), (0, -1), (0, n_local), (25,)):
        delta, bc = twins.put(delta0), twins.put(np.zeros(n_local))
        twins.bc.bc_backward(twins.put(indptr), twins.put(indices), n_local, twins.put(level),
                          twins.put(sigma), delta, twins.put(ghosts), depth, bc, -1,
                          twins.put(vertices), *extra)
        out.append(twins.get(delta))
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])
    assert np.array_equal(out[3][25:], out[0][25:])
    assert np.array_equal(out[3][:25], delta0[:25])
    assert not np.array_equal(out[0], delta0)


@pytest.mark.parametrize("n_local,n_ghosts,seed,hub", GRAPHS)
def test_pr_pull_ranges(twins, n_local, n_ghosts, seed, hub):
    """pr_pull needs no `first`: a chunk's caller passes indptr[first:end + 1] and
    rank[first:end], edge offsets staying absolute."""
    indptr, indices = graph(n_local, n_ghosts, seed, hub)
    rng = np.random.default_rng(seed + 300)
    contrib = rng.random(n_local + n_ghosts + 1).astype(np.float32)
    contrib[-1] = POISON_VALUE
    poison = contrib.size - 1
    d_indptr, d_contrib = twins.put(indptr), twins.put(contrib)

    def run(bounds, check):
        rank = twins.put(np.full(n_local, -1.0))
        for first, end in ranges(bounds):
            idx = poisoned(indptr, indices, first, end, poison) if check else indices
            twins.pagerank.pr_pull(d_indptr[first:end + 1], twins.put(idx), d_contrib, rank[first:end],
                                0.01, 0.85)
        return twins.get(rank)

    want = run([0, n_local], False)
    sums = np.array([contrib[indices[indptr[v]:indptr[v + 1]]].astype(np.float64).sum()
                     for v in range(n_local)])
    assert np.allclose(want, 0.01 + 0.85 * sums, rtol=1e-10)
    for bounds in splits(n_local, seed):
        assert np.allclose(run(bounds, True), want, rtol=1e-10, atol=0), bounds
