"""The serial references against independent implementations (scipy.sparse.csgraph, networkx, dense
NumPy, brute-force path enumeration) and hand-checked toy answers; and the verifiers accept the
reference answers and reject corrupted ones."""

import networkx as nx
import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components, dijkstra, shortest_path

from tests.support.toys import rmat_small, toy_graphs, with_random_weights
from totem_py.algorithms import (ALGORITHMS, PageRank, bc, bfs, cc, pagerank, pagerank_delta,
                                 sssp)
from totem_py.errors import VerificationError
from totem_py.graph import Graph

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
    for result in (bfs.levels(g, 0), sssp.distances(g, 0),
                   pagerank.rounds(g, 5), cc.components(g), bc.betweenness(g, []),
                   pagerank_delta.pushes(g), pagerank_delta.limit(g),
                   pagerank.converged(g)):
        assert result.shape == (0,)
    bfs.verify_levels(g, 0, np.empty(0, np.int64))
    sssp.verify_distances(g, 0, np.empty(0))
    pagerank.verify_rounds(g, 5, np.empty(0))
    pagerank.verify_converged(g, 1e-6, np.empty(0))
    cc.verify_components(g, np.empty(0, np.int64))
    bc.verify_betweenness(g, [], np.empty(0))
    pagerank_delta.verify_pushes(g, 0.01, np.empty(0))


# --- hand-checked toy answers --------------------------------------------------------------------

def test_toy_known_answers():
    t = TOYS
    assert bfs.levels(t["single"], 0).tolist() == [0]
    assert bfs.levels(t["self_loop"], 0).tolist() == [0]
    assert bfs.levels(t["chain"], 0).tolist() == list(range(10))
    assert bfs.levels(t["chain"], 9).tolist() == [-1] * 9 + [0]
    assert bfs.levels(t["star"], 3).tolist() == [1, 2, 2, 0, 2, 2, 2, 2, 2]
    assert bfs.levels(t["complete"], 2).tolist() == [1, 1, 0, 1, 1, 1]
    assert bfs.levels(t["disconnected"], 1).tolist() == [-1, 0, 1, 2] + [-1] * 6
    assert sssp.distances(t["chain"], 3).tolist() == [np.inf] * 3 + list(range(7))
    assert cc.components(t["disconnected"]).tolist() == [0, 0, 0, 0, 4, 5, 5, 5, 8, 9]
    assert cc.components(t["star"]).tolist() == [0] * 9
    assert cc.components(t["self_loop"]).tolist() == [0]
    # bc: every leaf-to-leaf path of the star passes the hub; from source 1 the hub carries 7
    assert bc.betweenness(t["star"], [1]).tolist() == [7.0] + [0.0] * 8
    assert bc.betweenness(t["star"], range(9)).tolist() == [56.0] + [0.0] * 8
    assert bc.betweenness(t["chain"], [0]).tolist() == [0.0] + list(range(8, 0, -1)) + [0.0]
    assert bc.betweenness(t["complete"], range(6)).tolist() == [0.0] * 6
    # pagerank: a lone vertex keeps only the teleport share, a self-loop keeps everything
    assert pagerank.rounds(t["single"], 3) == pytest.approx([0.15])
    assert pagerank.rounds(t["self_loop"], 3) == pytest.approx([1.0])
    assert pagerank.rounds(t["complete"], 7) == pytest.approx(np.full(6, 1 / 6))
    chain = pagerank.rounds(t["chain"], 1)  # one round: 0 gets only teleport, others 0.015 + 0.085
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
        levels = bfs.levels(g, s)
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
        np.testing.assert_allclose(sssp.distances(g, s), dijkstra(m, directed=True, indices=s))


def test_sssp_parallel_and_zero_weights():
    # 0->1 twice (5, then 2), 1->2 weight 0, 2->0 weight 0 (cycle back), self-loop 1->1 weight 0, 3 isolated
    g = Graph.from_edges([0, 0, 1, 2, 1], [1, 1, 2, 0, 1], 4, weights=[5.0, 2.0, 0.0, 0.0, 0.0])
    assert sssp.distances(g, 0).tolist() == [0.0, 2.0, 2.0, np.inf]
    assert sssp.distances(g, 2).tolist() == [0.0, 2.0, 0.0, np.inf]
    sssp.verify_distances(g, 0, sssp.distances(g, 0))
    unweighted = Graph(g.indptr, g.indices)
    assert sssp.distances(unweighted, 0).tolist() == [0.0, 1.0, 2.0, np.inf]


# --- CC against scipy and networkx ---------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_cc_matches_scipy_and_networkx(name):
    g = case(name)
    n = g.n_vertices
    _, scipy_labels = connected_components(simple_matrix(g), directed=True, connection="weak")
    smallest = np.full(n, n)
    np.minimum.at(smallest, scipy_labels, np.arange(n))
    labels = cc.components(g)
    np.testing.assert_array_equal(labels, smallest[scipy_labels])

    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(n))
    nxg.add_edges_from(zip(*(a.tolist() for a in edges_of(g))))
    for comp in nx.weakly_connected_components(nxg):
        assert set(labels[list(comp)].tolist()) == {min(comp)}


# --- PageRank against a dense matrix power -------------------------------------------------------

def dense_pagerank(graph, iterations, d=0.85, weighted=False):
    """Closed form of K rounds: r_K = A^K r0 + (I - A)^-1 (I - A^K) t, the geometric sum of
    A^i t for i < K, with A = d P, P[v, u] = (#edges u->v) / outdeg(u) (`weighted`: the weight
    of the edges u->v over that of u's out-edges), t = (1-d)/n (I - A is invertible: the column
    sums of A are at most d < 1)."""
    n = graph.n_vertices
    counts = np.zeros((n, n))
    u, v = edges_of(graph)
    np.add.at(counts, (v, u), graph.weights if weighted else 1.0)  # parallel edges, loops count
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
    np.testing.assert_allclose(pagerank.rounds(g, iterations), dense_pagerank(g, iterations),
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
    np.testing.assert_allclose(pagerank_delta.limit(g), limit, rtol=1e-10, atol=1e-15)
    errors = []
    for tol in (1e-1, 1e-2, 1e-4, 1e-8):
        below = limit - pagerank_delta.pushes(g, tol)
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
        np.testing.assert_allclose(pagerank.converged(g, tol, max_iter=1000), want,
                                   rtol=1e-12, atol=1e-15)
    n = g.n_vertices
    counts = np.zeros((n, n))
    u, v = edges_of(g)
    np.add.at(counts, (v, u), 1.0)
    outdeg = counts.sum(axis=0)
    google = np.where(outdeg > 0, counts / np.where(outdeg > 0, outdeg, 1), 1.0 / n)
    fixed = np.linalg.solve(np.eye(n) - 0.85 * google, np.full(n, 0.15 / n))
    assert np.abs(want - fixed).sum() <= 0.85 / 0.15 * n * 1e-12    # the stopping rule's bound


def weighted_case(name):
    """A case with fractional weights in [0, 3), the out-edges of vertex 1 weighing 0 in all."""
    g = case(name)
    w = np.random.default_rng(4).random(g.n_edges) * 3
    if g.n_vertices > 1:
        w[g.indptr[1]:g.indptr[2]] = 0.0
    return g.with_weights(w)


@pytest.mark.parametrize("name", CASES)
def test_weighted_pagerank_matches_dense_and_networkx(name):
    """With weights, a rank is shared among the out-edges in proportion to their weights: K
    rounds as the dense closed form, networkx's form as nx.pagerank(G, weight="weight") (a
    vertex whose out-edges weigh 0 in all is dangling there); unweighted as before."""
    g = weighted_case(name)
    for k in (1, 5, 20):
        np.testing.assert_allclose(pagerank.rounds(g, k, weighted=True),
                                   dense_pagerank(g, k, weighted=True), rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(pagerank.rounds(g, k), dense_pagerank(g, k), rtol=1e-10,
                                   atol=1e-14)
    G = g.to_networkx(multigraph=True)
    for weight, weighted in (("weight", True), (None, False)):
        r = nx.pagerank(G, tol=1e-9, max_iter=1000, weight=weight)
        want = np.array([r[v] for v in range(g.n_vertices)])
        got = pagerank.converged(g, 1e-9, max_iter=1000, weighted=weighted)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
        alg = PageRank.from_options(g, tol=1e-9, iterations=1000, unweighted=not weighted)
        assert alg.weighted == weighted and alg.verify(g, want) is None
    alg = PageRank.from_options(g, iterations=5)
    assert alg.weighted and alg.verify(g, dense_pagerank(g, 5, weighted=True)) is None
    if g.n_edges and not np.allclose(pagerank.rounds(g, 5), pagerank.rounds(g, 5, weighted=True)):
        with pytest.raises(VerificationError):
            alg.verify(g, pagerank.rounds(g, 5))


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
    np.testing.assert_allclose(bc.betweenness(g, sources),
                               [expected[v] for v in range(g.n_vertices)], rtol=1e-9, atol=1e-12)
    if g.n_vertices <= 60:
        expected = nx.betweenness_centrality(nxg, normalized=False)
        np.testing.assert_allclose(bc.betweenness(g, range(g.n_vertices)),
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
    assert bc.betweenness(g, [0]) == pytest.approx([0, 2 / 3, 1 / 3, 0])
    assert brute_force_bc(g, [0]) == pytest.approx([0, 2 / 3, 1 / 3, 0])


@pytest.mark.parametrize("seed", range(6))
def test_bc_multigraph_matches_brute_force(seed):
    g = random_graph(12, 40, seed=100 + seed)  # parallel edges and self-loops likely
    sources = list(range(g.n_vertices))
    np.testing.assert_allclose(bc.betweenness(g, sources), brute_force_bc(g, sources),
                               rtol=1e-9, atol=1e-12)


def test_bc_sources_accumulate():
    g = case("random_a")
    total = sum(bc.betweenness(g, [s]) for s in range(5))
    np.testing.assert_allclose(bc.betweenness(g, range(5)), total)


# --- verifiers accept the reference and reject corruptions ---------------------------------------

def built_in(g):
    """Every built-in algorithm of the registry, made for `g` (a weighted copy where it needs
    weights) by its options (a source with out-edges, a few sources, 10 rounds, a tolerance of
    1e-3), and PageRank's converged form: [(algorithm, its graph)]."""
    options = dict(source=sources_of(g)[0], iterations=10, tolerance=1e-3, seed=1)
    out = []
    for cls in ALGORITHMS.values():
        if cls.__module__.startswith("totem_py.algorithms."):
            graph = with_random_weights(g, seed=5) if cls.needs_weights else g
            out.append((cls.from_options(graph, **options), graph))
    out += [(PageRank(max_iter, tol=tol), g) for tol, max_iter in ((1e-6, 100), (1e-12, 5))]
    out.append((ALGORITHMS["bc"](sources_of(g)), g))
    return out


@pytest.mark.parametrize("name", CASES)
def test_verifiers_accept_reference(name):
    """Each algorithm's verifier accepts its serial reference's answer (PageRank converged,
    and stopped by max_iter)."""
    for alg, g in built_in(case(name)):
        assert alg.verify(g, alg.reference(g)) is None, alg.name


def test_verify_bfs_rejects():
    g, s = TOYS["rmat_small"], sources_of(TOYS["rmat_small"])[0]
    good = bfs.levels(g, s)
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
            bfs.verify_levels(g, s, bad)
    # an unreached vertex claimed reached
    with pytest.raises(VerificationError):
        bfs.verify_levels(TOYS["chain"], 5, np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4]))
    with pytest.raises(VerificationError, match="vertex 9"):
        bfs.verify_levels(TOYS["chain"], 0, np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 10]))
    with pytest.raises(VerificationError, match="vertex 9 has level 7 but no in-neighbour"):
        bfs.verify_levels(TOYS["chain"], 0, np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 7]))
    with pytest.raises(VerificationError):
        bfs.verify_levels(g, s, good[:-1])


def test_verify_sssp_rejects():
    g = with_random_weights(TOYS["rmat_small"], seed=5)
    s = sources_of(g)[0]
    good = sssp.distances(g, s)
    finite = np.flatnonzero(np.isfinite(good) & (good > 0))
    for v in finite[:5]:
        bad = good.copy()
        bad[v] -= 1.0  # one distance too small
        with pytest.raises(VerificationError):
            sssp.verify_distances(g, s, bad)
        bad = good.copy()
        bad[v] += 1.0  # one distance too large
        with pytest.raises(VerificationError):
            sssp.verify_distances(g, s, bad)
    bad = good.copy()
    bad[finite[0]] = np.inf
    with pytest.raises(VerificationError):
        sssp.verify_distances(g, s, bad)
    unreached = np.flatnonzero(np.isinf(good))
    bad = good.copy()
    bad[unreached[0]] = 1e9
    with pytest.raises(VerificationError):
        sssp.verify_distances(g, s, bad)
    # a zero-weight cycle holding two reachable vertices below their true distance
    z = Graph.from_edges([0, 1, 2], [1, 2, 1], 3, weights=[5.0, 0.0, 0.0])
    sssp.verify_distances(z, 0, [0.0, 5.0, 5.0])
    with pytest.raises(VerificationError, match="vertex 1"):
        sssp.verify_distances(z, 0, [0.0, 3.0, 3.0])


def test_verify_cc_rejects():
    g = TOYS["disconnected"]
    good = cc.components(g)
    for bad_labels in ([0, 0, 0, 1, 4, 5, 5, 5, 8, 9],   # label not the smallest id (and split)
                       [0, 0, 0, 0, 0, 5, 5, 5, 8, 9],   # two components share a label
                       [0, 0, 0, 0, 4, 5, 5, 6, 8, 9],   # label of a non-root
                       [0, 0, 0, 0, 4, 6, 6, 6, 8, 9],   # label is not the smallest member
                       [1, 1, 1, 1, 4, 5, 5, 5, 8, 9]):  # label larger than the vertex
        with pytest.raises(VerificationError):
            cc.verify_components(g, np.array(bad_labels))
    cc.verify_components(g, good)
    r = TOYS["rmat_small"]
    bad = cc.components(r)
    bad[np.flatnonzero(bad != np.arange(r.n_vertices))[0]] += 1
    with pytest.raises(VerificationError):
        cc.verify_components(r, bad)


def test_verify_pagerank_and_bc_reject():
    g = TOYS["rmat_small"]
    ranks = pagerank.rounds(g, 10)
    bad = ranks.copy()
    bad[17] += 2e-4
    with pytest.raises(VerificationError, match="vertex 17"):
        pagerank.verify_rounds(g, 10, bad)
    with pytest.raises(VerificationError):
        pagerank.verify_rounds(g, 9, ranks)  # one round short
    ranks = pagerank_delta.pushes(g, 1e-4)
    bad = ranks.copy()
    bad[17] += 1e-9                     # above the limit somewhere: a residual pushed twice
    with pytest.raises(VerificationError, match="vertex 17"):
        pagerank_delta.verify_pushes(g, 1e-4, bad)
    with pytest.raises(VerificationError, match="L1 distance"):
        pagerank_delta.verify_pushes(g, 1e-4, ranks * 0.99)      # mass lost on the way
    with pytest.raises(VerificationError):
        pagerank_delta.verify_pushes(g, 1e-6, pagerank_delta.pushes(g, 1e-2))   # stopped too early
    sources = sources_of(g)
    scores = bc.betweenness(g, sources)
    top = int(np.argmax(scores))
    bad = scores.copy()
    bad[top] *= 1.001
    with pytest.raises(VerificationError, match=f"vertex {top}"):
        bc.verify_betweenness(g, sources, bad)
    with pytest.raises(VerificationError):
        bc.verify_betweenness(g, sources[:1], scores)


def test_verifiers_on_every_source_of_toys():
    for name in NONEMPTY:
        g = TOYS[name]
        for s in range(min(g.n_vertices, 20)):
            bfs.verify_levels(g, s, bfs.levels(g, s))
            sssp.verify_distances(g, s, sssp.distances(g, s))
            bc.verify_betweenness(g, [s], bc.betweenness(g, [s]))


def test_verifiers_name_the_first_bad_edge():
    """The parallel edge checks (kernels_cpu/checks.py: rows cut into blocks, the smallest
    offender wins) name the first offending edge in edge order, as a NumPy scan of all edges
    finds it; on a graph of more rows than blocks, with offenders in many blocks."""
    g = rmat_small(scale=12, seed=5, n_edges=40000)
    u, v = edges_of(g)
    rng = np.random.default_rng(7)
    s = int(np.argmax(np.diff(g.indptr)))
    assert g.n_vertices > 1024                      # more rows than the kernels' blocks
    levels = bfs.levels(g, s)
    bad = levels.copy()
    hit = rng.choice(np.flatnonzero(levels > 1), 40, replace=False)
    bad[hit] = -1                                   # reached in-neighbours now escape
    first = np.flatnonzero((bad[u] >= 0) & (bad[v] < 0))[0]
    with pytest.raises(VerificationError, match=f"vertex {v[first]} is unreached but has an "
                                                f"in-edge from reached vertex {u[first]}$"):
        bfs.verify_levels(g, s, bad)
    bad = levels.copy()
    bad[hit] += 2                                   # deeper than an in-neighbour allows
    first = np.flatnonzero((bad[u] >= 0) & (bad[v] > bad[u] + 1))[0]
    with pytest.raises(VerificationError, match=f"vertex {v[first]} has level {bad[v[first]]} "
                                                f"but in-neighbour {u[first]} has"):
        bfs.verify_levels(g, s, bad)
    labels = cc.components(g)
    bad = labels.copy()
    bad[hit] = hit                                  # split from their components
    first = np.flatnonzero(bad[u] != bad[v])[0]
    with pytest.raises(VerificationError, match=f"cc: edge {u[first]} -> {v[first]} joins"):
        cc.verify_components(g, bad)
    w = with_random_weights(g, seed=2)
    dist = sssp.distances(w, s)
    bad = dist.copy()
    bad[hit] += 1.0                                 # now an in-edge relaxes each of them
    via = bad[u] + w.weights
    first = np.flatnonzero(np.isfinite(bad[u]) & (bad[v] > via + 1e-5 * np.maximum(1, via)))[0]
    with pytest.raises(VerificationError, match=f"sssp: vertex {v[first]} has distance .* the "
                                                f"edge from {u[first]} gives"):
        sssp.verify_distances(w, s, bad)


def test_parallel_walks_of_the_verifiers_match_scipy():
    """weak_roots (parallel union-find) and tight_reach (parallel levels) on a graph of 200K
    vertices whose edges are sparse enough to leave thousands of components and long tight
    paths, against SciPy's components and the reachable set."""
    from kernels_cpu.checks import tight_reach, weak_roots
    rng = np.random.default_rng(7)
    n, m = 200_000, 300_000
    g = Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), n,
                         weights=rng.integers(1, 4, m).astype(np.float64))
    count, labels = connected_components(simple_matrix(g), directed=True, connection="weak")
    roots = weak_roots(g.indptr, g.indices)
    assert np.count_nonzero(roots == np.arange(n)) == count
    assert np.array_equal(roots, cc.components(g))     # the smallest id of each component
    s = int(np.argmax(g.out_degree))
    dist = sssp.distances(g, s)
    seen = np.zeros(n, dtype=np.uint8)
    tight_reach(g.indptr, g.indices, g.weights, True, dist, 1e-5, s, seen)
    assert np.array_equal(seen == 1, np.isfinite(dist))
    assert np.isfinite(dist).sum() > 10_000 and count > 1000


def test_verify_sssp_is_exact_on_whole_weights_and_within_ulps_on_others():
    """Distances are sums of the graph's own weights, added alike by the engine and the
    verifier: 3,000,000 reported as 2,999,980 fails, as does a wrong last bit where the weights
    are whole; with fractional weights, one distance a millionth of a millionth off fails."""
    chain = Graph.from_edges([0, 1, 2], [1, 2, 3], 4, weights=[1e6] * 3)
    good = sssp.distances(chain, 0)
    assert good[3] == 3e6
    sssp.verify_distances(chain, 0, good)
    for wrong in (2_999_980.0, np.nextafter(3e6, 0), np.nextafter(3e6, np.inf)):
        with pytest.raises(VerificationError, match="vertex 3"):
            sssp.verify_distances(chain, 0, np.append(good[:3], wrong))
    rng = np.random.default_rng(3)
    g = TOYS["rmat_small"]
    g = g.with_weights(rng.random(g.n_edges) * 10)
    s = sources_of(g)[0]
    good = sssp.distances(g, s)
    sssp.verify_distances(g, s, good)
    for v in np.flatnonzero(np.isfinite(good) & (good > 0))[::7]:
        for factor in (1 - 1e-12, 1 + 1e-12):
            bad = good.copy()
            bad[v] *= factor
            with pytest.raises(VerificationError):
                sssp.verify_distances(g, s, bad)


def test_verify_pagerank_delta_bounds_each_vertex():
    """The L1 bound alone lets the top rank be cut by 40%; each vertex's own bound does not."""
    g = TOYS["rmat_small"]
    ranks = pagerank_delta.pushes(g, 0.01)
    pagerank_delta.verify_pushes(g, 0.01, ranks)
    top = int(np.argmax(ranks))
    bad = ranks.copy()
    bad[top] *= 0.6
    assert bad[top] * 0.4 / 0.6 < 0.01 * 0.85 / 0.15      # within the L1 bound
    with pytest.raises(VerificationError, match=f"vertex {top} has .* below the limit"):
        pagerank_delta.verify_pushes(g, 0.01, bad)


def tampered(values):
    """Copies of `values` with one vertex changed in a way that matters, the one with the
    largest finite value: an integer one less and one more, a float 40% less and 40% more."""
    finite = np.flatnonzero(np.isfinite(values)) if values.dtype.kind == "f" \
        else np.arange(values.size)
    v = int(finite[np.argmax(np.abs(values[finite]))])
    assert values[v] != 0
    out = []
    for change in ((-1, 1) if values.dtype.kind in "iu" else (0.6, 1.4)):
        bad = values.copy()
        bad[v] = bad[v] + change if values.dtype.kind in "iu" else bad[v] * change
        out.append((v, bad))
    return out


def every_algorithm(g):
    """[(label, algorithm, its graph)]: every built-in algorithm of the registry made by its
    options, PageRank in both forms, BC from several sources and normalised, SSSP on whole and
    on fractional weights."""
    options = dict(source=int(np.argmax(g.out_degree)), iterations=10, seed=1)
    weighted = with_random_weights(g, seed=5)
    out = []
    for name, cls in ALGORITHMS.items():
        if cls.__module__.startswith("totem_py.algorithms."):
            graph = weighted if cls.needs_weights else g
            out.append((name, cls.from_options(graph, **options), graph))
    fractional = g.with_weights(np.random.default_rng(5).random(g.n_edges) * 10)
    out += [("pagerank --tol", PageRank.from_options(g, tol=1e-6), g),
            ("pagerank --tol --iterations 4", PageRank.from_options(g, tol=1e-9, iterations=4), g),
            ("bc --sources 4 --normalized",
             ALGORITHMS["bc"].from_options(g, sources=4, normalized=True, seed=1), g),
            ("sssp fractional weights", ALGORITHMS["sssp"].from_options(fractional, **options),
             fractional)]
    return out


@pytest.mark.parametrize("spec", ["toy:rmat_small", "rmat:9"])
def test_every_verifier_fails_a_result_with_one_wrong_vertex(spec):
    """Each algorithm's result from the engine (a CPU and an emulated GPU partition) passes its
    verifier; with one vertex changed (`tampered`) it fails."""
    from totem_py import run
    from totem_py.generators import graph_from_spec
    g = TOYS["rmat_small"] if spec.startswith("toy:") else graph_from_spec(spec, seed=3)
    cases = every_algorithm(g)
    assert {name for name, *_ in cases} >= {n for n, cls in ALGORITHMS.items()
                                             if cls.__module__.startswith("totem_py.algorithms.")}
    passed = []
    for label, alg, graph in cases:
        values = run(graph, alg, device="emulated", cpu_share=0.5, partition="RAND").values
        assert alg.verify(graph, values) is None, label
        for v, bad in tampered(values):
            try:
                note = alg.verify(graph, bad)
            except VerificationError as exc:
                note = str(exc)
            if note is None:
                passed.append(f"{label}: vertex {v} {values[v]} -> {bad[v]} passes")
    assert not passed, "\n".join(passed)
