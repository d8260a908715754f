"""Graph conversions from and to scipy.sparse and networkx, and compacting ids (`--relabel`)."""

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import totem_py
from totem_py import Graph
from totem_py.algorithms import cc


def edges_of(graph):
    w = graph.weights.tolist() if graph.weights is not None else [None] * graph.n_edges
    return sorted(zip(graph.edge_sources().tolist(), graph.indices.tolist(), w))


def test_compacted_drops_vertices_in_no_edge_and_keeps_id_order():
    # ids 2, 5 and 9 are in edges; 0, 1, 3, 4, 6, 7, 8 are not
    g = Graph.from_edges([9, 2, 5, 9], [2, 5, 9, 9], 10, weights=[1.0, 2.0, 3.0, 4.0])
    c, ids = g.compacted()
    assert ids.tolist() == [2, 5, 9] and c.n_vertices == 3 and c.n_edges == 4
    assert edges_of(c) == [(0, 1, 2.0), (1, 2, 3.0), (2, 0, 1.0), (2, 2, 4.0)]
    c2, ids2 = c.compacted()
    assert ids2.tolist() == [0, 1, 2] and edges_of(c2) == edges_of(c)
    no_edge = np.empty(0, dtype=np.int64)
    empty, none = Graph.from_edges(no_edge, no_edge, 4).compacted()
    assert empty.n_vertices == 0 and none.size == 0


def test_scipy_round_trip_keeps_weights_parallel_edges_and_explicit_zeros():
    coo = sp.coo_array(([2.5, 0.0, 1.0, 1.0], ([0, 1, 2, 2], [1, 2, 0, 0])), shape=(4, 4))
    g = Graph.from_scipy(coo)
    assert g.n_vertices == 4 and edges_of(g) == [(0, 1, 2.5), (1, 2, 0.0), (2, 0, 1.0),
                                                 (2, 0, 1.0)]
    back = g.to_scipy()
    assert back.shape == (4, 4) and back.nnz == 4
    assert np.array_equal(back.toarray(), coo.toarray())
    ones = Graph.from_scipy(sp.csr_array(np.array([[0, 1], [1, 0]])), directed=False)
    assert ones.weights is None and not ones.directed
    assert ones.to_scipy().toarray().tolist() == [[0, 1], [1, 0]]


def test_from_scipy_refuses_what_is_not_a_square_sparse_matrix():
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(sp.csr_array((2, 3)))
    with pytest.raises(ValueError, match="square"):
        Graph.from_scipy(np.eye(3))


def test_from_networkx_orders_nodes_and_reads_weights():
    d = nx.DiGraph()
    d.add_edge("a", "b", weight=3.0)
    d.add_edge("b", "c")                # no weight: 1
    d.add_node("z")
    g = Graph.from_networkx(d)
    assert g.n_vertices == 4 and g.directed
    assert edges_of(g) == [(0, 1, 3.0), (1, 2, 1.0)]
    g = Graph.from_networkx(d, nodelist=["z", "c", "b", "a"])
    assert edges_of(g) == [(2, 1, 1.0), (3, 2, 3.0)]
    with pytest.raises(ValueError, match="nodelist"):
        Graph.from_networkx(d, nodelist=["a", "b"])
    u = nx.Graph([(0, 1), (1, 1)])
    g = Graph.from_networkx(u)
    assert not g.directed and g.weights is None
    assert edges_of(g) == [(0, 1, None), (1, 0, None), (1, 1, None)]   # a self-loop once
    m = nx.MultiDiGraph([(0, 1), (0, 1)])
    assert Graph.from_networkx(m).n_edges == 2


def test_to_networkx_round_trips():
    d = nx.gnp_random_graph(40, 0.1, seed=3, directed=True)
    for u, v in d.edges:
        d[u][v]["weight"] = float(u + v)
    back = Graph.from_networkx(d).to_networkx()
    assert isinstance(back, nx.DiGraph) and sorted(back.edges(data="weight")) == \
        sorted(d.edges(data="weight"))
    u = Graph.from_networkx(nx.path_graph(5)).to_networkx()
    assert isinstance(u, nx.Graph) and not u.is_directed() and sorted(u.edges) == \
        [(0, 1), (1, 2), (2, 3), (3, 4)]
    g = Graph.from_edges([0, 0, 1], [1, 1, 2], 3)
    assert g.to_networkx().number_of_edges() == 2
    assert g.to_networkx(multigraph=True).number_of_edges() == 3
    assert Graph.from_networkx(nx.MultiGraph([(0, 1), (0, 1)])).to_networkx(
        multigraph=True).number_of_edges() == 2


def test_converted_graphs_run_as_the_original():
    d = nx.gnp_random_graph(200, 0.03, seed=1, directed=True)
    g = Graph.from_networkx(d)
    levels = totem_py.run(g, "bfs", source=0, device="cpu").values
    want = nx.single_source_shortest_path_length(d, 0)
    assert {v: int(levels[v]) for v in range(200) if levels[v] >= 0} == want
    s = Graph.from_scipy(g.to_scipy())
    assert np.array_equal(totem_py.run(s, "cc", device="cpu").values, cc.components(g))
