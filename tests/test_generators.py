"""Generated graphs: determinism, cleanup (checked against numpy on the raw edges), symmetry,
weights, permuted ids and spec errors."""

from pathlib import Path

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from kernels_cpu import buckets as kbuckets
from kernels_cpu import generate as kgen
from totem_py.errors import InputError
from totem_py.generators import (_RMAT_TABLES, RMAT_ABCD, edge_weights, generate,
                                 graph_from_spec, parse_spec, raw_edges, rmat_tables)

REPO_DATA = Path(__file__).resolve().parent / "data"


def as_matrix(g):
    data = g.weights if g.weights is not None else np.ones(g.n_edges)
    return sp.csr_matrix((data, g.indices, g.indptr), shape=(g.n_vertices, g.n_vertices))


def same_graph(a, b):
    return (np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
            and (a.weights is None) == (b.weights is None)
            and (a.weights is None or np.array_equal(a.weights, b.weights)))


@pytest.mark.parametrize("kind", ["rmat", "uniform"])
@pytest.mark.parametrize("undirected", [False, True])
def test_cleanup_matches_numpy(kind, undirected):
    """The CSR is exactly the distinct non-loop pairs of the raw generated edges."""
    scale, ef, seed = 9, 8, 11
    n = 1 << scale
    src, dst = (a.astype(np.int64) for a in raw_edges(kind, scale, ef, seed))
    if undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    keep = src != dst
    pairs = np.unique(src[keep] * n + dst[keep])
    g = generate(f"{kind}:{scale}:{ef}", seed=seed, undirected=undirected)
    assert g.n_vertices == n and g.directed != undirected
    assert np.array_equal(g.edge_sources().astype(np.int64) * n + g.indices, pairs)


@pytest.mark.parametrize("per_bucket", [1 << 4, 1 << 9, 1 << 16])
@pytest.mark.parametrize("mirror", [False, True])
def test_bucketed_build_matches_numpy(monkeypatch, per_bucket, mirror):
    """kernels_cpu.buckets: rows first .. first + n - 1 from unordered entries with repeats and
    self-loops, for buckets of a few entries (sorted row by row), many and one (radix sorted)."""
    monkeypatch.setattr(kbuckets, "BUCKET_ENTRIES", per_bucket)
    monkeypatch.setattr(kbuckets, "SMALL_BUCKET", 64)
    rng = np.random.default_rng(per_bucket)
    first, n, bits = 1000, 3000, 13
    src = (first + rng.zipf(1.5, 40000) % n).astype(np.int32)
    dst = np.where(rng.random(src.size) < 0.5, first + rng.integers(0, n, src.size),
                   rng.integers(0, 1 << bits, src.size)).astype(np.int32)
    dst[::97] = src[::97]                              # self-loops
    if mirror:
        dst = first + dst % n
    indptr, indices = kbuckets.sorted_csr(kbuckets.bucketed(src, dst, n, bits, mirror, first))
    u, v = src.astype(np.int64), dst.astype(np.int64)
    if mirror:
        u, v = np.concatenate([u, v]), np.concatenate([v, u])
    pairs = np.unique((u * (1 << bits) + v)[u != v])
    assert indptr.size == n + 1 and indices.dtype == np.int32
    rows = np.repeat(np.arange(first, first + n), np.diff(indptr))
    assert np.array_equal(rows * (1 << bits) + indices, pairs)


@pytest.mark.parametrize("spec", ["rmat:10", "uniform:10"])
def test_no_self_loops_or_duplicates_and_sorted_rows(spec):
    g = generate(spec, seed=1)
    src = g.edge_sources()
    assert np.all(src != g.indices)
    same_row = src[1:] == src[:-1]
    assert np.all(g.indices[1:][same_row] > g.indices[:-1][same_row])
    assert 0 < g.n_edges <= 16 * 1024


def test_deterministic_for_a_seed_and_thread_count():
    a = generate("rmat:10", seed=3, weighted=True)
    assert same_graph(a, generate("rmat:10", seed=3, weighted=True))
    assert not same_graph(a, generate("rmat:10", seed=4, weighted=True))
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = generate("rmat:10", seed=3, weighted=True)
        one_u = generate("uniform:9", seed=3, undirected=True)
    finally:
        numba.set_num_threads(threads)
    assert same_graph(a, one)
    assert same_graph(one_u, generate("uniform:9", seed=3, undirected=True))


def test_rmat_is_skewed_and_ids_are_permuted():
    hubs = []
    for seed in range(3):
        g = generate("rmat:12", seed=seed)
        degree = g.out_degree + np.bincount(g.indices, minlength=g.n_vertices)
        assert degree.max() > 20 * degree.mean()
        hubs.append(int(np.argmax(degree)))
    # without the permutation vertex 0 is always the hub (quadrant A is the likeliest)
    assert 0 not in hubs and len(set(hubs)) == 3
    u = generate("uniform:12", seed=0)
    assert u.out_degree.max() < 3 * 16


@pytest.mark.parametrize("spec", ["rmat:9", "uniform:9"])
def test_undirected_is_symmetric_with_symmetric_weights(spec):
    g = generate(spec, seed=2, undirected=True, weighted=True)
    a = as_matrix(g)
    assert (a != a.T).nnz == 0
    assert not g.directed


def test_weights_are_integers_in_range():
    g = generate("rmat:10", seed=5, weighted=True)
    w = g.weights
    assert w.dtype == np.float64 and w.size == g.n_edges
    assert w.min() >= 1 and w.max() <= 255 and np.all(w == np.round(w))
    assert np.unique(w).size > 200
    assert generate("rmat:10", seed=5).weights is None


def test_edge_factor():
    assert parse_spec("rmat:8") == ("rmat", 8, 16)
    assert parse_spec("uniform:8:4") == ("uniform", 8, 4)
    g = generate("uniform:8:4")
    assert g.n_vertices == 256 and 0.9 * 1024 < g.n_edges <= 1024


@pytest.mark.parametrize("spec", ["rmat:abc", "rmat:0", "rmat:41", "kron:5", "rmat:", "rmat",
                                  "rmat:5:0", "rmat:5:x", "rmat:5:4:3", "uniform:-1",
                                  "road:5:3"])
def test_bad_spec(spec):
    with pytest.raises(InputError) as info:
        generate(spec)
    assert f"'{spec}'" in str(info.value)


def test_road_is_a_sparse_grid_of_high_diameter():
    """road:SCALE: undirected whatever is asked, the distinct non-loop pairs of its raw edges
    both ways, edges within ROAD_REACH grid steps, average degree about 3, and a diameter of
    the order of the grid's side (an R-MAT graph of the same size has one under 10)."""
    scale, seed = 12, 5
    n, width = 1 << scale, 1 << 6
    src, dst = (a.astype(np.int64) for a in raw_edges("road", scale, 3, seed))
    keep = src != dst
    assert np.all(np.abs(src % width - dst % width) <= 3)
    assert np.all(np.abs(src // width - dst // width) <= 3)
    pairs = np.unique(np.concatenate([src[keep] * n + dst[keep], dst[keep] * n + src[keep]]))
    g = generate(f"road:{scale}", seed=seed)
    assert not g.directed and same_graph(g, generate(f"road:{scale}", seed=seed,
                                                     undirected=True))
    assert np.array_equal(g.edge_sources().astype(np.int64) * n + g.indices, pairs)
    assert 2.6 < g.n_edges / n < 3.4
    labels = sp.csgraph.connected_components(as_matrix(g))[1]
    giant = np.flatnonzero(labels == np.argmax(np.bincount(labels)))
    assert giant.size > 0.9 * n
    hops = sp.csgraph.shortest_path(as_matrix(g), indices=[giant[0]], unweighted=True)[0]
    assert hops[np.isfinite(hops)].max() > width


def test_too_big_is_refused_before_allocating():
    with pytest.raises(InputError, match="rmat:40"):
        generate("rmat:40")


def test_graph_from_spec():
    assert graph_from_spec("rmat:6", seed=1).spec == "rmat:6"
    g = graph_from_spec(REPO_DATA / "tiny.el", undirected=True)
    assert g.n_vertices == 6 and g.n_edges == 22
    with pytest.raises(InputError, match="unknown graph generator"):
        graph_from_spec("kron:5")


@pytest.mark.parametrize("scale", [7, 10])
def test_rmat_quadrant_frequencies(scale):
    """Without the id scramble, every level's (row bit, column bit) follows A, B, C, D."""
    m = 1 << 16
    src, dst = np.empty(m, np.int64), np.empty(m, np.int64)
    t = [np.uint64(round(p * 2**32)) for p in np.cumsum(RMAT_ABCD)[:3]]
    kgen.rmat_edges(scale, np.uint64(9), *t, *_RMAT_TABLES, np.empty(0, np.uint64), src, dst)
    for level in range(scale):
        quadrant = 2 * ((src >> level) & 1) + ((dst >> level) & 1)
        counts = np.bincount(quadrant, minlength=4)
        sigma = np.sqrt(m * np.array(RMAT_ABCD) * (1 - np.array(RMAT_ABCD)))
        assert np.all(np.abs(counts - m * np.array(RMAT_ABCD)) < 5 * sigma), (level, counts)


@numba.njit
def _scramble_all(scale, keys):
    out = np.empty(1 << scale, np.int64)
    for v in range(out.size):
        out[v] = kgen._scramble(v, np.uint64(out.size - 1), np.uint64((scale + 1) // 2), keys)
    return out


def test_alias_tables_give_the_four_level_distribution():
    keep, alias, block_u, block_v = rmat_tables(*RMAT_ABCD)
    taken = keep / 2**24 / 256                      # P(bucket b drawn and kept)
    prob = taken.copy()
    np.add.at(prob, alias.astype(np.int64), 1 / 256 - taken)
    expected = np.ones(256)
    for level in range(4):                          # block bit 3 is the first level
        bu, bv = (block_u >> (3 - level)) & 1, (block_v >> (3 - level)) & 1
        expected *= np.array(RMAT_ABCD)[2 * bu + bv]
    assert np.allclose(prob, expected, rtol=0, atol=1e-7)
    assert sorted(zip(block_u.tolist(), block_v.tolist())) == [(u, v) for u in range(16)
                                                                for v in range(16)]


def test_id_scramble_is_a_permutation():

    keys = np.array([12345, 678910111, 2**63 + 3], dtype=np.uint64) | np.uint64(1)
    for scale in (1, 2, 5, 12):
        out = _scramble_all(scale, keys)
        assert np.array_equal(np.sort(out), np.arange(1 << scale))
        assert scale < 5 or not np.array_equal(out, np.arange(1 << scale))


@pytest.mark.parametrize("kind", ["rmat", "uniform"])
def test_any_range_of_edges_is_that_slice_of_the_whole(kind):
    """What an MPI rank generates (its range of the edges) is the one process's slice; weights
    of any block of rows are the whole graph's rows' weights."""
    src, dst = raw_edges(kind, 10, 4, 7)
    for first, count in ((0, 100), (1234, 999), (src.size - 5, 5), (17, 0)):
        s, d = raw_edges(kind, 10, 4, 7, first, count)
        assert np.array_equal(s, src[first:first + count])
        assert np.array_equal(d, dst[first:first + count])
    g = generate(f"{kind}:10:4", seed=7, undirected=True, weighted=True)
    lo, hi = 300, 700
    a, b = g.indptr[lo], g.indptr[hi]
    w = edge_weights(g.indptr[lo:hi + 1] - a, g.indices[a:b], 7, lo)
    assert np.array_equal(w, g.weights[a:b])


def test_parallel_and_serial_forms_agree(monkeypatch):
    """Graphs of at most SMALL_GRAPH edges are generated and partitioned by the kernels' serial
    forms (kernels_cpu.jit.graph_kernel); the parallel forms, which larger graphs take, give the
    same graphs, views and boundary statistics."""
    from kernels_cpu import jit
    from partitioners import estimate_stats, partition

    def build():
        g = generate("rmat:11", seed=5, weighted=True, undirected=True)
        u = generate("uniform:10", seed=5)
        plans = [partition(g, s, 0.4, 2, 1) for s in ("HIGH", "RAND")]
        views = [(v.indptr, v.indices, v.weights, v.ghost_gvid, v.ghost_ptr)
                 for p in plans for name in ("out", "in") for v in p.views(name)]
        return g, u, views, estimate_stats(g, "HIGH", [0.3, 0.6], 2)

    serial = build()
    monkeypatch.setattr(jit, "SMALL_GRAPH", 0)
    parallel = build()
    assert kgen.rmat_edges.parallel.signatures and kgen.rmat_edges.serial.signatures
    assert same_graph(serial[0], parallel[0]) and same_graph(serial[1], parallel[1])
    for a, b in zip(serial[2], parallel[2]):
        assert all(np.array_equal(x, y) for x, y in zip(a, b) if x is not None)
    assert serial[3] == parallel[3]
