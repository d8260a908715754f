"""Serial reference algorithms: the independent oracles the verifiers and tests trust.

Deliberately naive and written for obvious correctness, not speed: plain Python loops over the
whole CSR (as lists), NumPy only where a whole-array formula is just as plain (PageRank); no
partitions, no messages, nothing shared with the engine's kernels. Each is O(V + E) (Dijkstra
O(E log V)) whatever the graph's shape, about a second per million edges.

Semantics (DESIGN.md, "Results"):
  bfs      hop level from the source, -1 unreachable (int64).
  sssp     Dijkstra distance, weights = graph.weights or 1 (>= 0, zero allowed), +inf unreachable.
           Parallel edges: the lightest one counts. Self-loops never shorten a path.
  pagerank exactly K rounds of r(v) = (1-d)/n + d * sum over in-edges (u,v) of r(u)/outdeg(u),
           r0 = 1/n, no dangling redistribution; parallel edges and self-loops count.
  pagerank_converged  networkx's pagerank: the rank D of the vertices without out-edges is spread
           over every vertex, x(v) = (1-d)/n + d * (sum over in-edges of x(u)/outdeg(u) + D/n),
           from x0 = 1/n until the L1 change is below n * tol (the result is that round's x),
           at most max_iter rounds; the ranks sum to 1. SciPy's sparse product, one per round.
  pagerank_delta  the same ranks' limit (K -> infinity) reached by pushing residuals until none
           exceeds tolerance / n, synchronously (all active vertices of a round push at once);
           result rank + residual. `pagerank_limit` is that limit by power iteration.
  cc       weakly connected component label = smallest vertex id in the component (int64).
  bc       Brandes betweenness, unnormalised, directed, hop distances, from the given sources only
           (`betweenness_scale` normalises it as networkx does).

Every function accepts the empty graph (0 vertices) and returns an empty array for it.
"""

import heapq

import numpy as np

UNREACHED = -1  # bfs level of a vertex the source cannot reach
INF = np.inf    # sssp distance of a vertex the source cannot reach


def _check_source(graph, source):
    if not 0 <= int(source) < graph.n_vertices:
        raise ValueError(f"source {source} is not a vertex of a graph with {graph.n_vertices} vertices")
    return int(source)


def bfs_levels(graph, source):
    """Hop level of every vertex from `source` (int64, -1 unreachable): a FIFO queue BFS."""
    if graph.n_vertices == 0:
        return np.empty(0, dtype=np.int64)
    source = _check_source(graph, source)
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    levels = [UNREACHED] * graph.n_vertices
    levels[source] = 0
    queue = [source]
    head = 0  # queue[head:] is still to be expanded
    while head < len(queue):
        u = queue[head]
        head += 1
        for v in indices[indptr[u]:indptr[u + 1]]:
            if levels[v] == UNREACHED:
                levels[v] = levels[u] + 1
                queue.append(v)
    return np.array(levels, dtype=np.int64)


def sssp_distances(graph, source):
    """Dijkstra (binary heap, lazy deletion) distances from `source` (float64, +inf unreachable).

    Weights are graph.weights, or 1 for an unweighted graph; they must be >= 0. Every parallel edge
    is relaxed, so the lightest one wins.
    """
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    source = _check_source(graph, source)
    if graph.weights is not None and graph.n_edges and not (graph.weights >= 0).all():
        raise ValueError("Dijkstra needs non-negative weights")
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    weights = graph.weights.tolist() if graph.weights is not None else [1.0] * graph.n_edges

    dist = [INF] * n
    done = [False] * n
    dist[source] = 0.0
    heap = [(0.0, source)]
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue  # a stale entry: u was settled with a smaller distance
        done[u] = True
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = d + weights[e]
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return np.array(dist, dtype=np.float64)


def pagerank(graph, iterations, damping=0.85):
    """Exactly `iterations` synchronous rounds of PageRank from r0 = 1/n (no dangling redistribution).

    Each edge (u, v) carries r(u) / outdeg(u) to v, so parallel edges and self-loops count as often
    as they appear; a vertex with no out-edges simply loses its rank.
    """
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    src = graph.edge_sources().astype(np.int64)
    dst = graph.indices.astype(np.int64)
    out_degree = graph.out_degree.astype(np.float64)  # >= 1 for every edge source
    ranks = np.full(n, 1.0 / n)
    for _ in range(int(iterations)):
        incoming = np.bincount(dst, weights=ranks[src] / out_degree[src], minlength=n)
        ranks = (1.0 - damping) / n + damping * incoming
    return ranks


def pagerank_rounds(graph, damping=0.85):
    """networkx's PageRank rounds from x0 = 1/n (n > 0): yields (k, x_k, ||x_k - x_{k-1}||_1)
    for k = 1, 2, ... without end. x_k(v) = (1-d)/n + d * (sum over in-edges (u, v) of
    x_{k-1}(u) / outdeg(u) + D/n), D the sum of x_{k-1} over the vertices without out-edges;
    parallel edges and self-loops count as often as they appear (a CSR adds up duplicates)."""
    import scipy.sparse as sp
    n = graph.n_vertices
    src = graph.edge_sources().astype(np.int64)
    dst = graph.indices.astype(np.int64)
    out_degree = graph.out_degree.astype(np.float64)
    # P[v, u] = (number of edges u -> v) / outdeg(u)
    P = sp.csr_array((1.0 / out_degree[src], (dst, src)), shape=(n, n))
    dangling = np.flatnonzero(graph.out_degree == 0)
    x = np.full(n, 1.0 / n)
    k = 0
    while True:
        new = (1.0 - damping) / n + damping * (P @ x + x[dangling].sum() / n)
        change = float(np.abs(new - x).sum())
        x = new
        k += 1
        yield k, x, change


def pagerank_converged(graph, tol=1e-6, damping=0.85, max_iter=100):
    """networkx's `pagerank` (nx.pagerank(G, alpha=damping, tol=tol, max_iter=max_iter) on the
    graph as a MultiDiGraph with every vertex): `pagerank_rounds` until the L1 change is below
    n * tol, that round's ranks; after max_iter rounds without, the last round's (where networkx
    raises PowerIterationFailedConvergence)."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    for k, x, change in pagerank_rounds(graph, damping):
        if change < n * tol or k >= max_iter:
            return x


def pagerank_limit(graph, damping=0.85, tol=1e-14):
    """The fixed point of `pagerank`'s rounds, by rounds until the L1 change is below tol (the
    error left is then below tol * d / (1 - d)); at most 10000 rounds."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    src = graph.edge_sources().astype(np.int64)
    dst = graph.indices.astype(np.int64)
    share = damping / graph.out_degree.astype(np.float64)[src]
    ranks = np.full(n, (1.0 - damping) / n)
    for _ in range(10000):
        new = (1.0 - damping) / n + np.bincount(dst, weights=ranks[src] * share, minlength=n)
        change = np.abs(new - ranks).sum()
        ranks = new
        if change < tol:
            break
    return ranks


def pagerank_delta(graph, tolerance=0.01, damping=0.85):
    """PageRank-Delta, serially: rank 0 and residual (1-d)/n everywhere; each round every vertex
    whose residual exceeds tolerance / n adds it to its rank and passes d * residual / outdeg to
    each out-edge's head; until no residual exceeds it. Returns rank + residual."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    indptr, indices = graph.indptr.tolist(), graph.indices.tolist()
    rank = [0.0] * n
    residual = [(1.0 - damping) / n] * n
    threshold = tolerance / n
    active = [v for v in range(n) if residual[v] > threshold]
    while active:
        taken = [residual[v] for v in active]
        for v, r in zip(active, taken):
            residual[v] = 0.0
            rank[v] += r
        for v, r in zip(active, taken):
            deg = indptr[v + 1] - indptr[v]
            for e in range(indptr[v], indptr[v + 1]):
                residual[indices[e]] += damping * r / deg
        active = [v for v in range(n) if residual[v] > threshold]
    return np.array(rank) + np.array(residual)


def components(graph):
    """Weakly connected components by union-find; label = smallest vertex id in the component.

    A union always hangs the larger root under the smaller one, so every root is the smallest id
    of its set, and the label of v is simply find(v).
    """
    n = graph.n_vertices
    parent = list(range(n))

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]  # path halving
            v = parent[v]
        return v

    for u, v in zip(graph.edge_sources().tolist(), graph.indices.tolist()):
        ru, rv = find(u), find(v)
        if ru < rv:
            parent[rv] = ru
        elif rv < ru:
            parent[ru] = rv
    return np.array([find(v) for v in range(n)], dtype=np.int64)


def betweenness(graph, sources):
    """Brandes betweenness centrality accumulated from `sources` only (float64).

    Semantics:
      - unnormalised and directed: bc(v) = sum over s in sources, t != s, v not in {s, t}, of
        sigma_st(v) / sigma_st, where sigma counts shortest (fewest-hop) paths from s to t; edge
        weights are ignored;
      - multigraph counting: a path is a sequence of edges, so k parallel edges u->v give k distinct
        paths (sigma counts edge-distinct shortest paths);
      - self-loops never lie on a shortest path and are ignored;
      - each entry of `sources` is one BFS; a source listed twice is counted twice.

    Textbook Brandes per source: a BFS counts sigma(w) += sigma(v) over every edge (v, w) with
    level(w) = level(v) + 1 (once per parallel edge); then, in reverse BFS order,
    delta(v) = sigma(v) * sum over those edges of (1 + delta(w)) / sigma(w), and bc(v) += delta(v)
    for v != source.
    """
    n = graph.n_vertices
    bc = np.zeros(n, dtype=np.float64)
    if n == 0:
        return bc
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    for source in sources:
        source = _check_source(graph, source)
        levels = [UNREACHED] * n
        sigma = [0.0] * n
        levels[source] = 0
        sigma[source] = 1.0
        order = [source]
        head = 0
        while head < len(order):
            v = order[head]
            head += 1
            for w in indices[indptr[v]:indptr[v + 1]]:
                if levels[w] == UNREACHED:
                    levels[w] = levels[v] + 1
                    order.append(w)
                if levels[w] == levels[v] + 1:
                    sigma[w] += sigma[v]

        delta = [0.0] * n
        for v in reversed(order):
            share = 0.0
            for w in indices[indptr[v]:indptr[v + 1]]:
                if levels[w] == levels[v] + 1:
                    share += (1.0 + delta[w]) / sigma[w]
            delta[v] = sigma[v] * share
        delta[source] = 0.0  # the source is an endpoint of all its paths
        bc += np.array(delta)
    return bc


def betweenness_scale(n_vertices, sources):
    """Per-vertex factor of normalised betweenness (float64), networkx's for a directed graph
    (`betweenness_centrality(G, normalized=True)`, and with `k` sampled sources): bc(v) counts the
    pairs (s, t), s a source, t != s, v not in {s, t}, and is divided by how many such pairs
    there are: k (n - 2) for a vertex that is not a source, (k - 1)(n - 2) for one that is (NaN
    for it when k = 1: no pair). With every vertex a source: 1 / ((n - 1)(n - 2)) everywhere.
    Graphs of fewer than 3 vertices keep their (zero) values."""
    n, k = int(n_vertices), len(sources)
    if n < 3:
        return np.ones(n)
    pairs = np.full(n, float(k))
    pairs[np.asarray(sources, dtype=np.int64)] -= 1
    with np.errstate(divide="ignore"):
        return np.where(pairs > 0, 1.0 / (pairs * (n - 2)), np.nan)
