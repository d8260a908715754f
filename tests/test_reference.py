"""The serial references against independent implementations (scipy.sparse.csgraph, networkx, dense
NumPy, brute-force path enumeration) and hand-checked toy answers; and the verifiers accept the
reference answers and reject corrupted ones."""

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components, dijkstra, shortest_path

from toys import rmat_small, toy_graphs, with_random_weights
from totem_py import reference
from totem_py.errors import VerificationError
from totem_py.graph import Graph
from totem_py.verify import (verify, verify_bc, verify_bfs, verify_cc, verify_pagerank,
                             verify_pagerank_delta, verify_sssp)

TOYS = toy_graphs()
NONEMPTY = [name for name, g in TOYS.items() if g.n_vertices]


def edges_of(graph):
    return graph.edge_sources().astype(np.int64), graph.indices.astype(np.int64)


def graph_of(edges, n):
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(edges[:, 0], edges[:, 1], n)


def random_graph(n, m, seed, weighted=False):
    """A uniform random multigraph (parallel edges and self-loops happen)."""
    rng = np.random.default_rng(seed)
    g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n)
    return with_random_weights(g, seed) if weighted else g


def simple_matrix(graph, weights=None):
    """scipy CSR with one entry per (u, v), u != v, keeping the smallest weight of parallel edges
    (a csr_matrix built from duplicates would add them up)."""
    u, v = edges_of(graph)
    w = np.ones(u.size) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = u != v
    u, v, w = u[keep], v[keep], w[keep]
    order = np.lexsort((w, v, u))  # by u, then v, then lightest first
    u, v, w = u[order], v[order], w[order]
    first = np.ones(u.size, dtype=bool)
    first[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
    n = graph.n_vertices
    return csr_matrix((w[first], (u[first], v[first])), shape=(n, n))


def sources_of(graph, k=3):
    """A few sources with out-edges (or vertex 0)."""
    with_edges = np.flatnonzero(graph.out_degree > 0)
    return [int(s) for s in with_edges[:: max(1, with_edges.size // k)][:k]] or [0]


CASES = NONEMPTY + ["random_a", "random_b"]


def case(name):
    if name == "random_a":
        return random_graph(40, 160, seed=1)
    if name == "random_b":
        return random_graph(120, 300, seed=2)  # sparse: several components
    return TOYS[name]


# --- empty graph ---------------------------------------------------------------------------------

def test_empty_graph():
    g = TOYS["empty"]
    for result in (reference.bfs_levels(g, 0), reference.sssp_distances(g, 0),
                   reference.pagerank(g, 5), reference.components(g), reference.betweenness(g, []),
                   reference.pagerank_delta(g), reference.pagerank_limit(g),
                   reference.pagerank_converged(g)):
        assert result.shape == (0,)
    verify("bfs", g, np.empty(0, np.int64), source=0)
    verify("sssp", g, np.empty(0), source=0)
    verify("pagerank", g, np.empty(0), iterations=5)
    verify("pagerank", g, np.empty(0), tol=1e-6)
    verify("cc", g, np.empty(0, np.int64))
    verify("bc", g, np.empty(0), sources=[])
    verify("pagerank_delta", g, np.empty(0), tolerance=0.01)


# --- hand-checked toy answers --------------------------------------------------------------------

def test_toy_known_answers():
    t = TOYS
    assert reference.bfs_levels(t["single"], 0).tolist() == [0]
    assert reference.bfs_levels(t["self_loop"], 0).tolist() == [0]
    assert reference.bfs_levels(t["chain"], 0).tolist() == list(range(10))
    assert reference.bfs_levels(t["chain"], 9).tolist() == [-1] * 9 + [0]
    assert reference.bfs_levels(t["star"], 3).tolist() == [1, 2, 2, 0, 2, 2, 2, 2, 2]
    assert reference.bfs_levels(t["complete"], 2).tolist() == [1, 1, 0, 1, 1, 1]
    assert reference.bfs_levels(t["disconnected"], 1).tolist() == [-1, 0, 1, 2] + [-1] * 6
    assert reference.sssp_distances(t["chain"], 3).tolist() == [np.inf] * 3 + list(range(7))
    assert reference.components(t["disconnected"]).tolist() == [0, 0, 0, 0, 4, 5, 5, 5, 8, 9]
    assert reference.components(t["star"]).tolist() == [0] * 9
    assert reference.components(t["self_loop"]).tolist() == [0]
    # bc: every leaf-to-leaf path of the star passes the hub; from source 1 the hub carries 7
    assert reference.betweenness(t["star"], [1]).tolist() == [7.0] + [0.0] * 8
    assert reference.betweenness(t["star"], range(9)).tolist() == [56.0] + [0.0] * 8
    assert reference.betweenness(t["chain"], [0]).tolist() == [0.0] + list(range(8, 0, -1)) + [0.0]
    assert reference.betweenness(t["complete"], range(6)).tolist() == [0.0] * 6
    # pagerank: a lone vertex keeps only the teleport share, a self-loop keeps everything
    assert reference.pagerank(t["single"], 3) == pytest.approx([0.15])
    assert reference.pagerank(t["self_loop"], 3) == pytest.approx([1.0])
    assert reference.pagerank(t["complete"], 7) == pytest.approx(np.full(6, 1 / 6))
    chain = reference.pagerank(t["chain"], 1)  # one round: 0 gets only teleport, others 0.015 + 0.085
    assert chain == pytest.approx([0.015] + [0.1] * 9)


def test_rmat_small_shape():
    g = TOYS["rmat_small"]
    u, v = edges_of(g)
    assert g.n_vertices == 256 and g.n_edges == 1500
    assert (u == v).any(), "self-loops kept"
    assert len(set(zip(u.tolist(), v.tolist()))) < g.n_edges, "parallel edges kept"
    assert rmat_small().indices.tolist() == g.indices.tolist(), "seeded"
    w = with_random_weights(g, 3).weights
    assert w.min() >= 1 and w.max() <= 255 and (w == np.round(w)).all()


# --- BFS against scipy ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_bfs_matches_scipy(name):
    g = case(name)
    m = simple_matrix(g)
    for s in sources_of(g):
        hops = shortest_path(m, directed=True, unweighted=True, indices=s)
        expected = np.where(np.isinf(hops), -1, hops).astype(np.int64)
        levels = reference.bfs_levels(g, s)
        assert levels.dtype == np.int64
        np.testing.assert_array_equal(levels, expected)
        order = breadth_first_order(m, s, directed=True, return_predecessors=False)
        assert set(order.tolist()) == set(np.flatnonzero(levels >= 0).tolist())


# --- SSSP against scipy --------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_sssp_matches_scipy(name, weighted):
    g = case(name)
    if weighted:
        g = with_random_weights(g, seed=11)
    m = simple_matrix(g, g.weights)
    for s in sources_of(g):
        np.testing.assert_allclose(reference.sssp_distances(g, s), dijkstra(m, directed=True, indices=s))


def test_sssp_parallel_and_zero_weights():
    # 0->1 twice (5, then 2), 1->2 weight 0, 2->0 weight 0 (cycle back), self-loop 1->1 weight 0, 3 isolated
    g = Graph.from_edges([0, 0, 1, 2, 1], [1, 1, 2, 0, 1], 4, weights=[5.0, 2.0, 0.0, 0.0, 0.0])
    assert reference.sssp_distances(g, 0).tolist() == [0.0, 2.0, 2.0, np.inf]
    assert reference.sssp_distances(g, 2).tolist() == [0.0, 2.0, 0.0, np.inf]
    verify_sssp(g, 0, reference.sssp_distances(g, 0))
    unweighted = Graph(g.indptr, g.indices)
    assert reference.sssp_distances(unweighted, 0).tolist() == [0.0, 1.0, 2.0, np.inf]


# --- CC against scipy and networkx ---------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_cc_matches_scipy_and_networkx(name):
    g = case(name)
    n = g.n_vertices
    _, scipy_labels = connected_components(simple_matrix(g), directed=True, connection="weak")
    smallest = np.full(n, n)
    np.minimum.at(smallest, scipy_labels, np.arange(n))
    labels = reference.components(g)
    np.testing.assert_array_equal(labels, smallest[scipy_labels])

    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(n))
    nxg.add_edges_from(zip(*(a.tolist() for a in edges_of(g))))
    for comp in nx.weakly_connected_components(nxg):
        assert set(labels[list(comp)].tolist()) == {min(comp)}


# --- PageRank against a dense matrix power -------------------------------------------------------

def dense_pagerank(graph, iterations, d=0.85):
    """Closed form of K rounds: r_K = A^K r0 + (I - A)^-1 (I - A^K) t, the geometric sum of
    A^i t for i < K, with A = d P, P[v, u] = (#edges u->v) / outdeg(u), t = (1-d)/n
    (I - A is invertible: the column sums of A are at most d < 1)."""
    n = graph.n_vertices
    counts = np.zeros((n, n))
    u, v = edges_of(graph)
    np.add.at(counts, (v, u), 1.0)  # parallel edges and self-loops count
    outdeg = counts.sum(axis=0)
    P = np.divide(counts, outdeg, out=np.zeros_like(counts), where=outdeg > 0)
    A = d * P
    AK = np.linalg.matrix_power(A, iterations)
    teleport = np.full(n, (1 - d) / n)
    return AK @ np.full(n, 1.0 / n) + np.linalg.solve(np.eye(n) - A, (np.eye(n) - AK) @ teleport)


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("iterations", [0, 1, 5, 20])
def test_pagerank_matches_dense(name, iterations):
    g = case(name)
    np.testing.assert_allclose(reference.pagerank(g, iterations), dense_pagerank(g, iterations),
                               rtol=1e-10, atol=1e-14)


def dense_limit(graph, d=0.85):
    """PageRank's fixed point, (I - d P) r = (1 - d) / n, solved directly."""
    n = graph.n_vertices
    counts = np.zeros((n, n))
    u, v = edges_of(graph)
    np.add.at(counts, (v, u), 1.0)
    outdeg = counts.sum(axis=0)
    P = np.divide(counts, outdeg, out=np.zeros_like(counts), where=outdeg > 0)
    return np.linalg.solve(np.eye(n) - d * P, np.full(n, (1 - d) / n))


@pytest.mark.parametrize("name", CASES)
def test_pagerank_limit_and_delta(name):
    """The limit by power iteration is the solved fixed point; PageRank-Delta stays below it,
    within tolerance * d / (1 - d) in L1, and gets there as the tolerance shrinks."""
    g = case(name)
    limit = dense_limit(g)
    np.testing.assert_allclose(reference.pagerank_limit(g), limit, rtol=1e-10, atol=1e-15)
    errors = []
    for tol in (1e-1, 1e-2, 1e-4, 1e-8):
        below = limit - reference.pagerank_delta(g, tol)
        assert (below >= -1e-12).all()
        assert below.sum() <= tol * 0.85 / 0.15 + 1e-12
        errors.append(below.sum())
    assert all(a + 1e-15 >= b for a, b in zip(errors, errors[1:]))
    assert errors[-1] <= max(1e-6 * errors[0], 1e-15)


@pytest.mark.parametrize("name", CASES)
def test_pagerank_converged_matches_networkx(name):
    """networkx's form: nx.pagerank on the graph as a MultiDiGraph (parallel edges count, as
    self-loops do; networkx adds parallel edges up), at networkx's tolerance and a tight one,
    which is within d/(1-d) * n * tol of the Google matrix's fixed point, solved densely."""
    g = case(name)
    G = g.to_networkx(multigraph=True)
    for tol in (1e-6, 1e-12):
        r = nx.pagerank(G, tol=tol, max_iter=1000)
        want = np.array([r[v] for v in range(g.n_vertices)])
        np.testing.assert_allclose(reference.pagerank_converged(g, tol, max_iter=1000), want,
                                   rtol=1e-12, atol=1e-15)
    n = g.n_vertices
    counts = np.zeros((n, n))
    u, v = edges_of(g)
    np.add.at(counts, (v, u), 1.0)
    outdeg = counts.sum(axis=0)
    google = np.where(outdeg > 0, counts / np.where(outdeg > 0, outdeg, 1), 1.0 / n)
    fixed = np.linalg.solve(np.eye(n) - 0.85 * google, np.full(n, 0.15 / n))
    assert np.abs(want - fixed).sum() <= 0.85 / 0.15 * n * 1e-12    # the stopping rule's bound


# --- BC against networkx and brute force ---------------------------------------------------------

def simple_graph(graph):
    """The same graph without parallel edges and self-loops (what a networkx DiGraph holds)."""
    m = simple_matrix(graph).tocoo()
    return graph_of(np.stack([m.row, m.col], axis=1), graph.n_vertices)


@pytest.mark.parametrize("name", CASES)
def test_bc_matches_networkx(name):
    g = simple_graph(case(name))
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(g.n_vertices))
    nxg.add_edges_from(zip(*(a.tolist() for a in edges_of(g))))
    sources = sources_of(g)
    expected = nx.betweenness_centrality_subset(nxg, sources, list(nxg), normalized=False)
    np.testing.assert_allclose(reference.betweenness(g, sources),
                               [expected[v] for v in range(g.n_vertices)], rtol=1e-9, atol=1e-12)
    if g.n_vertices <= 60:
        expected = nx.betweenness_centrality(nxg, normalized=False)
        np.testing.assert_allclose(reference.betweenness(g, range(g.n_vertices)),
                                   [expected[v] for v in range(g.n_vertices)], rtol=1e-9, atol=1e-12)


def brute_force_bc(graph, sources):
    """Enumerate every shortest path as a sequence of edge ids (multigraph semantics) and count."""
    u, v = edges_of(graph)
    n = graph.n_vertices
    bc = np.zeros(n)
    for s in sources:
        hops = shortest_path(simple_matrix(graph), unweighted=True, indices=s)
        paths = {t: [] for t in range(n)}  # t -> list of vertex sequences, one per edge path

        def walk(path):
            x = path[-1]
            paths[x].append(path)
            for e in range(graph.indptr[x], graph.indptr[x + 1]):
                if hops[v[e]] == hops[x] + 1:
                    walk(path + [int(v[e])])

        walk([s])
        for t, ps in paths.items():
            if t == s or not ps:
                continue
            for p in ps:
                for inner in p[1:-1]:
                    bc[inner] += 1.0 / len(ps)
    return bc


def test_bc_multigraph_by_hand():
    # 0->1 twice, 0->2, 1->3, 2->3: three shortest paths 0..3, two of them through 1
    g = graph_of([(0, 1), (0, 1), (0, 2), (1, 3), (2, 3), (3, 3)], 4)
    assert reference.betweenness(g, [0]) == pytest.approx([0, 2 / 3, 1 / 3, 0])
    assert brute_force_bc(g, [0]) == pytest.approx([0, 2 / 3, 1 / 3, 0])


@pytest.mark.parametrize("seed", range(6))
def test_bc_multigraph_matches_brute_force(seed):
    g = random_graph(12, 40, seed=100 + seed)  # parallel edges and self-loops likely
    sources = list(range(g.n_vertices))
    np.testing.assert_allclose(reference.betweenness(g, sources), brute_force_bc(g, sources),
                               rtol=1e-9, atol=1e-12)


def test_bc_sources_accumulate():
    g = case("random_a")
    total = sum(reference.betweenness(g, [s]) for s in range(5))
    np.testing.assert_allclose(reference.betweenness(g, range(5)), total)


# --- verifiers accept the reference and reject corruptions ---------------------------------------

def reference_results(g):
    s = sources_of(g)[0]
    wg = with_random_weights(g, seed=5)
    return {
        "bfs": (g, reference.bfs_levels(g, s), dict(source=s)),
        "sssp": (wg, reference.sssp_distances(wg, s), dict(source=s)),
        "pagerank": (g, reference.pagerank(g, 10), dict(iterations=10)),
        "cc": (g, reference.components(g), {}),
        "bc": (g, reference.betweenness(g, sources_of(g)), dict(sources=sources_of(g))),
        "pagerank_delta": (g, reference.pagerank_delta(g, 1e-3), dict(tolerance=1e-3)),
    }


@pytest.mark.parametrize("name", CASES)
def test_verifiers_accept_reference(name):
    for algo, (g, result, kw) in reference_results(case(name)).items():
        verify(algo, g, result, **kw)
    g = case(name)
    for tol, max_iter in ((1e-6, 100), (1e-12, 5)):     # converged, and stopped by max_iter
        verify("pagerank", g, reference.pagerank_converged(g, tol, max_iter=max_iter), tol=tol,
               iterations=max_iter)


def test_verify_bfs_rejects():
    g, s = TOYS["rmat_small"], sources_of(TOYS["rmat_small"])[0]
    good = reference.bfs_levels(g, s)
    deep = int(np.argmax(good))
    for corrupt in ("one_level_up", "one_level_down", "unreached", "source", "below_minus_one"):
        bad = good.copy()
        if corrupt == "one_level_up":
            bad[deep] += 1
        elif corrupt == "one_level_down":
            bad[deep] -= 1
        elif corrupt == "unreached":
            bad[deep] = -1
        elif corrupt == "source":
            bad[s] = 1
        else:
            bad[np.flatnonzero(good == -1)[0]] = -2
        with pytest.raises(VerificationError):
            verify_bfs(g, s, bad)
    # an unreached vertex claimed reached
    with pytest.raises(VerificationError):
        verify_bfs(TOYS["chain"], 5, np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4]))
    with pytest.raises(VerificationError, match="vertex 9"):
        verify_bfs(TOYS["chain"], 0, np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 10]))
    with pytest.raises(VerificationError, match="vertex 9 has level 7 but no in-neighbour"):
        verify_bfs(TOYS["chain"], 0, np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 7]))
    with pytest.raises(VerificationError):
        verify_bfs(g, s, good[:-1])


def test_verify_sssp_rejects():
    g = with_random_weights(TOYS["rmat_small"], seed=5)
    s = sources_of(g)[0]
    good = reference.sssp_distances(g, s)
    finite = np.flatnonzero(np.isfinite(good) & (good > 0))
    for v in finite[:5]:
        bad = good.copy()
        bad[v] -= 1.0  # one distance too small
        with pytest.raises(VerificationError):
            verify_sssp(g, s, bad)
        bad = good.copy()
        bad[v] += 1.0  # one distance too large
        with pytest.raises(VerificationError):
            verify_sssp(g, s, bad)
    bad = good.copy()
    bad[finite[0]] = np.inf
    with pytest.raises(VerificationError):
        verify_sssp(g, s, bad)
    unreached = np.flatnonzero(np.isinf(good))
    bad = good.copy()
    bad[unreached[0]] = 1e9
    with pytest.raises(VerificationError):
        verify_sssp(g, s, bad)
    # a zero-weight cycle holding two reachable vertices below their true distance
    z = Graph.from_edges([0, 1, 2], [1, 2, 1], 3, weights=[5.0, 0.0, 0.0])
    verify_sssp(z, 0, [0.0, 5.0, 5.0])
    with pytest.raises(VerificationError, match="vertex 1"):
        verify_sssp(z, 0, [0.0, 3.0, 3.0])


def test_verify_cc_rejects():
    g = TOYS["disconnected"]
    good = reference.components(g)
    for bad_labels in ([0, 0, 0, 1, 4, 5, 5, 5, 8, 9],   # label not the smallest id (and split)
                       [0, 0, 0, 0, 0, 5, 5, 5, 8, 9],   # two components share a label
                       [0, 0, 0, 0, 4, 5, 5, 6, 8, 9],   # label of a non-root
                       [0, 0, 0, 0, 4, 6, 6, 6, 8, 9],   # label is not the smallest member
                       [1, 1, 1, 1, 4, 5, 5, 5, 8, 9]):  # label larger than the vertex
        with pytest.raises(VerificationError):
            verify_cc(g, np.array(bad_labels))
    verify_cc(g, good)
    r = TOYS["rmat_small"]
    bad = reference.components(r)
    bad[np.flatnonzero(bad != np.arange(r.n_vertices))[0]] += 1
    with pytest.raises(VerificationError):
        verify_cc(r, bad)


def test_verify_pagerank_and_bc_reject():
    g = TOYS["rmat_small"]
    ranks = reference.pagerank(g, 10)
    bad = ranks.copy()
    bad[17] += 2e-4
    with pytest.raises(VerificationError, match="vertex 17"):
        verify_pagerank(g, 10, bad)
    with pytest.raises(VerificationError):
        verify_pagerank(g, 9, ranks)  # one round short
    ranks = reference.pagerank_delta(g, 1e-4)
    bad = ranks.copy()
    bad[17] += 1e-9                     # above the limit somewhere: a residual pushed twice
    with pytest.raises(VerificationError, match="vertex 17"):
        verify_pagerank_delta(g, 1e-4, bad)
    with pytest.raises(VerificationError, match="L1 distance"):
        verify_pagerank_delta(g, 1e-4, ranks * 0.99)      # mass lost on the way
    with pytest.raises(VerificationError):
        verify_pagerank_delta(g, 1e-6, reference.pagerank_delta(g, 1e-2))   # stopped too early
    sources = sources_of(g)
    scores = reference.betweenness(g, sources)
    top = int(np.argmax(scores))
    bad = scores.copy()
    bad[top] *= 1.001
    with pytest.raises(VerificationError, match=f"vertex {top}"):
        verify_bc(g, sources, bad)
    with pytest.raises(VerificationError):
        verify_bc(g, sources[:1], scores)


def test_verify_dispatch_errors():
    g = TOYS["chain"]
    with pytest.raises(ValueError):
        verify("bfs", g, reference.bfs_levels(g, 0))
    with pytest.raises(ValueError):
        verify("triangles", g, np.zeros(10))
    verify("bc", g, reference.betweenness(g, [0]), source=0)


def test_verifiers_on_every_source_of_toys():
    for name in NONEMPTY:
        g = TOYS[name]
        for s in range(min(g.n_vertices, 20)):
            verify_bfs(g, s, reference.bfs_levels(g, s))
            verify_sssp(g, s, reference.sssp_distances(g, s))
            verify_bc(g, [s], reference.betweenness(g, [s]))


def test_verifiers_name_the_first_bad_edge():
    """The parallel edge checks (kernels_cpu/verify.py: rows cut into blocks, the smallest
    offender wins) name the first offending edge in edge order, as a NumPy scan of all edges
    finds it; on a graph of more rows than blocks, with offenders in many blocks."""
    g = rmat_small(scale=12, seed=5, n_edges=40000)
    u, v = edges_of(g)
    rng = np.random.default_rng(7)
    s = int(np.argmax(np.diff(g.indptr)))
    assert g.n_vertices > 1024                      # more rows than the kernels' blocks
    levels = reference.bfs_levels(g, s)
    bad = levels.copy()
    hit = rng.choice(np.flatnonzero(levels > 1), 40, replace=False)
    bad[hit] = -1                                   # reached in-neighbours now escape
    first = np.flatnonzero((bad[u] >= 0) & (bad[v] < 0))[0]
    with pytest.raises(VerificationError, match=f"vertex {v[first]} is unreached but has an "
                                                f"in-edge from reached vertex {u[first]}$"):
        verify_bfs(g, s, bad)
    bad = levels.copy()
    bad[hit] += 2                                   # deeper than an in-neighbour allows
    first = np.flatnonzero((bad[u] >= 0) & (bad[v] > bad[u] + 1))[0]
    with pytest.raises(VerificationError, match=f"vertex {v[first]} has level {bad[v[first]]} "
                                                f"but in-neighbour {u[first]} has"):
        verify_bfs(g, s, bad)
    labels = reference.components(g)
    bad = labels.copy()
    bad[hit] = hit                                  # split from their components
    first = np.flatnonzero(bad[u] != bad[v])[0]
    with pytest.raises(VerificationError, match=f"cc: edge {u[first]} -> {v[first]} joins"):
        verify_cc(g, bad)
    w = with_random_weights(g, seed=2)
    dist = reference.sssp_distances(w, s)
    bad = dist.copy()
    bad[hit] += 1.0                                 # now an in-edge relaxes each of them
    via = bad[u] + w.weights
    first = np.flatnonzero(np.isfinite(bad[u]) & (bad[v] > via + 1e-5 * np.maximum(1, via)))[0]
    with pytest.raises(VerificationError, match=f"sssp: vertex {v[first]} has distance .* the "
                                                f"edge from {u[first]} gives"):
        verify_sssp(w, s, bad)


def test_parallel_walks_of_the_verifiers_match_scipy():
    """weak_components (parallel union-find) and sssp_tight_reach (parallel BFS levels) on a
    graph of 200K vertices whose edges are sparse enough to leave thousands of components and
    long tight paths, against SciPy's component count and the reachable set."""
    from kernels_cpu.verify import sssp_tight_reach, weak_components
    rng = np.random.default_rng(7)
    n, m = 200_000, 300_000
    g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n,
                         weights=rng.integers(1, 4, m).astype(np.float64))
    count, _ = connected_components(simple_matrix(g), directed=True, connection="weak")
    assert weak_components(g.indptr, g.indices) == count
    s = int(np.argmax(g.out_degree))
    dist = reference.sssp_distances(g, s)
    seen = np.zeros(n, dtype=np.uint8)
    sssp_tight_reach(g.indptr, g.indices, g.weights, True, dist, 1e-5, s, seen)
    assert np.array_equal(seen == 1, np.isfinite(dist))
    assert np.isfinite(dist).sum() > 10_000 and count > 1000
