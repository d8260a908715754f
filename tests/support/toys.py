"""Toy graphs with known answers, as in TOTEM's tests.

    empty         0 vertices
    single        1 vertex, no edge
    self_loop     1 vertex, the edge 0 -> 0
    chain         0 -> 1 -> ... -> 9 (one direction)
    star          hub 0 -> 1..8 and 1..8 -> 0
    complete      6 vertices, every ordered pair i != j
    disconnected  chains 0->1->2->3 and 5->6->7, isolated 4, 8, 9
    rmat_small    seeded R-MAT (A=.57 B=.19 C=.19), 256 vertices, 1500 edges, with self-loops and
                  parallel edges kept, plus a few added so that both are always present

`with_random_weights(graph, seed)` gives a copy with integer weights in [1, 255] (float64), the
same both ways on an undirected graph.
"""

import numpy as np

from totem_py.graph import Graph


def _graph(edges, n_vertices, name):
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    return Graph.from_edges(edges[:, 0], edges[:, 1], n_vertices, spec=f"toy:{name}")


def rmat_small(seed=7, scale=8, n_edges=1500):
    """A small power-law-ish R-MAT graph; ids are permuted so the hubs are not all at 0."""
    rng = np.random.default_rng(seed)
    a, b, c = 0.57, 0.19, 0.19
    src = np.zeros(n_edges, dtype=np.int64)
    dst = np.zeros(n_edges, dtype=np.int64)
    for bit in range(scale):  # pick one quadrant per bit of the ids
        r = rng.random(n_edges)
        src_bit = r >= a + b                                 # quadrants C and D
        dst_bit = ((r >= a) & (r < a + b)) | (r >= a + b + c)  # quadrants B and D
        src |= src_bit.astype(np.int64) << bit
        dst |= dst_bit.astype(np.int64) << bit
    n = 1 << scale
    perm = rng.permutation(n)
    src, dst = perm[src], perm[dst]
    # make sure parallel edges and self-loops are present, whatever the seed: the last six edges
    # become copies of edges 0..2 and self-loops on the sources of edges 3..5
    src[-6:] = src[:6]
    dst[-6:-3] = dst[:3]
    dst[-3:] = src[3:6]
    return Graph.from_edges(src, dst, n, spec=f"toy:rmat_small(seed={seed})")


def toy_graphs():
    """name -> Graph for every toy graph above."""
    return {
        "empty": _graph([], 0, "empty"),
        "single": _graph([], 1, "single"),
        "self_loop": _graph([(0, 0)], 1, "self_loop"),
        "chain": _graph([(i, i + 1) for i in range(9)], 10, "chain"),
        "star": _graph([(0, i) for i in range(1, 9)] + [(i, 0) for i in range(1, 9)], 9, "star"),
        "complete": _graph([(i, j) for i in range(6) for j in range(6) if i != j], 6, "complete"),
        "disconnected": _graph([(0, 1), (1, 2), (2, 3), (5, 6), (6, 7)], 10, "disconnected"),
        "rmat_small": rmat_small(),
    }


def with_random_weights(graph, seed=0):
    """A copy of `graph` with seeded integer weights in [1, 255] (float64, as generated graphs
    get); on an undirected graph a weight per pair of vertices, so that each edge weighs what
    its reverse does (an undirected graph's in-edges are its out-edges)."""
    rng = np.random.default_rng(seed)
    if graph.directed:
        return graph.with_weights(rng.integers(1, 256, size=graph.n_edges).astype(np.float64))
    u, v = graph.edge_sources().astype(np.int64), graph.indices.astype(np.int64)
    a, b = rng.integers(1, 1 << 20, size=2)
    pair = np.minimum(u, v) * a + np.maximum(u, v) * b
    return graph.with_weights((1 + pair % 255).astype(np.float64))
