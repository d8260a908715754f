"""Hub sorting (`hub_sort`, partitioners/plan.py): the local order inside partitions is "degree"
(every vertex by out-degree), "hytgraph" (HyTGraph's top 8% by out-degree x in-degree first, the
rest in id order) or "off" (id order). The orders are checked against naive sorts written here,
and so is the order inside each local row (targets by degree), as are the degree order's fast
sort and the views' boundary tables (against their definitions);
every algorithm gives the references' answers under each order, on cpu and the emulated GPU,
resident and streamed; the harness keys its plan cache on the order; the CLI takes --hub-sort."""

import json

import numpy as np
import pytest

from bsp import EdgeOptions
from partitioners import HUB_SORTS, local_order, partition
from totem_py import generate
from totem_py.errors import InputError
from totem_py.graph import Graph
from totem_py.harness import run

from tests.support.cli import assert_usage_error, run_here
from tests.support.matrix import TOYS, check_matrix
from tests.support.stream import TRANSFERS, one_of_each, streaming
from tests.support.toys import with_random_weights


def naive_order(graph, members, hub_sort):
    """The expected local order, by Python sorts over (key, global id) tuples."""
    members = sorted(int(v) for v in members)
    out = graph.out_degree
    if hub_sort == "off":
        return members
    if hub_sort == "degree":
        return sorted(members, key=lambda v: (-out[v], v))
    indeg = np.zeros(graph.n_vertices, np.int64)
    for t in graph.indices:                    # in-degree by counting every edge's target
        indeg[t] += 1
    k = -(-len(members) * 8 // 100)
    hubs = sorted(members, key=lambda v: (-int(out[v]) * int(indeg[v]), v))[:k]
    return hubs + sorted(set(members) - set(hubs))


def directed_example():
    """30 vertices whose out-degree x in-degree products are 5: 4 x 5 = 20, 3: 7 x 1 = 7 (the
    most out-edges), 7: 3 x 2 = 6 and 11: 2 x 3 = 6 (a tie across the 8% cut, which goes by
    global id), every other vertex at most 2; plus a 2-cycle and a self-loop."""
    edges = [(3, t) for t in range(20, 27)] + [(29, 3)]
    edges += [(5, t) for t in range(20, 24)] + [(s, 5) for s in range(25, 30)]
    edges += [(7, t) for t in (20, 21, 22)] + [(27, 7), (28, 7)]
    edges += [(11, 20), (11, 21)] + [(s, 11) for s in (24, 25, 26)]
    edges += [(12, 13), (13, 12), (14, 14)]
    src, dst = np.array(edges).T
    return Graph.from_edges(src, dst, 30, spec="hubs")


@pytest.mark.parametrize("hub_sort", HUB_SORTS)
def test_local_order_matches_naive_sorts(hub_sort):
    rng = np.random.default_rng(3)
    graphs = [directed_example(), generate("rmat:9", seed=2), generate("rmat:9", seed=2,
                                                                      undirected=True)]
    for g in graphs:
        for members in (np.arange(g.n_vertices), rng.permutation(g.n_vertices)[:37],
                        np.array([5]), np.empty(0, np.int64)):
            got = local_order(g, members, hub_sort)
            assert got.tolist() == naive_order(g, members, hub_sort), (g, hub_sort, members.size)


def test_hytgraph_order_moves_the_top_8_percent_only():
    g = directed_example()
    out, indeg = g.out_degree, g.in_degree
    product = out * indeg
    order = local_order(g, np.arange(30), "hytgraph")
    k = 3                                                   # ceil(8% of 30 = 2.4)
    assert order[:k].tolist() == [5, 3, 7]                  # products 20, 7, 6 (7 before 11)
    assert product[5] == 20 and product[3] == 7 and product[7] == product[11] == 6
    assert np.sort(product)[-5] <= 2
    assert np.all(np.diff(order[k:]) > 0)                   # the others keep their id order
    assert sorted(order.tolist()) == list(range(30))
    # not the out-degree order: vertex 3 has the most out-edges, 5 the largest product
    assert local_order(g, np.arange(30), "degree")[:2].tolist() == [3, 5]
    # ceil: 1 vertex of 1..12, 2 of 13..25
    for n, hubs in ((1, 1), (12, 1), (13, 2), (25, 2), (26, 3)):
        assert -(-8 * n // 100) == hubs
    # undirected: in-degree is the out-degree, so the product is out-degree squared
    u = generate("rmat:8", seed=5, undirected=True)
    top = local_order(u, np.arange(u.n_vertices), "hytgraph")[:21]    # ceil(8% of 256)
    assert top.tolist() == sorted(range(256), key=lambda v: (-u.out_degree[v], v))[:21]


@pytest.mark.parametrize("hub_sort", HUB_SORTS)
def test_partition_applies_the_order_in_every_partition(hub_sort):
    g = generate("rmat:10", seed=1)
    for strategy, share, gpus, ranks in (("HIGH", 0.5, 2, 1), ("RAND", 0.3, 1, 2)):
        plan = partition(g, strategy, share, gpus, seed=1, ranks=ranks, hub_sort=hub_sort)
        assert plan.hub_sort == hub_sort
        for gvids in plan.gvids:
            assert gvids.tolist() == naive_order(g, gvids, hub_sort)
            assert np.array_equal(plan.lvid_of[gvids], np.arange(gvids.size))
    with pytest.raises(InputError, match="--hub-sort"):
        partition(g, "HIGH", 0.5, 1, hub_sort="sideways")


def test_by_degree_is_the_stable_argsort():
    """`by_degree` (a counting sort by degree rank) gives np.argsort's stable order, ties by
    position, both ways, and so does its fallback for degrees far beyond the item count."""
    from partitioners.plan import by_degree
    rng = np.random.default_rng(4)
    cases = [rng.integers(0, 5, 1000), rng.integers(0, 10 ** 6, 5000), np.array([7]),
             np.empty(0, np.int64), np.array([3, 3, 3, 1, 1]),
             np.array([0, 2 ** 61, 5, 2 ** 61, 0], dtype=np.int64),     # the fallback
             np.array([9, 0, 9, 4], dtype=np.int32)]
    for degree in cases:
        for descending in (True, False):
            want = np.argsort(-degree if descending else degree, kind="stable")
            assert by_degree(degree, descending).tolist() == want.tolist()


def test_view_tables_against_their_definitions():
    """Ghost slots grouped by owner, each group in the owner's local order; boundary_lvid the
    sorted local ids that any peer holds as ghosts; peer_pos[q] their positions in it, in q's
    slot order (the exchange folds and fills boxes through these)."""
    g = generate("rmat:10", seed=3, undirected=True)
    for strategy, share, gpus in (("HIGH", 0.5, 1), ("RAND", 0.3, 2), ("LOW", 0.0, 2)):
        plan = partition(g, strategy, share, gpus, seed=1)
        views = plan.views("out")
        for pid, view in enumerate(views):
            for q in range(plan.n_partitions):
                group = view.ghost_gvid[view.ghost_ptr[q]:view.ghost_ptr[q + 1]]
                assert np.all(plan.owner[group] == q)
                assert np.all(np.diff(plan.lvid_of[group].astype(np.int64)) > 0)
            targets = {int(t) for u in plan.gvids[pid]
                       for t in g.indices[g.indptr[u]:g.indptr[u + 1]] if plan.owner[t] != pid}
            assert sorted(int(v) for v in view.ghost_gvid) == sorted(targets)
        for q, view in enumerate(views):
            held = [plan.lvid_of[v.ghost_gvid[v.ghost_ptr[q]:v.ghost_ptr[q + 1]]] for v in views]
            union = sorted({int(x) for h in held for x in h})
            assert view.boundary_lvid.tolist() == union
            for h, pos in zip(held, view.peer_pos):
                assert view.boundary_lvid[pos].tolist() == h.tolist()


def test_rows_list_targets_by_degree():
    """Each local row holds its graph row's (target, weight) pairs, its boundary edges together
    (a prefix or a suffix), each group by target degree, highest first, and the group whose
    first target has the higher degree first (locals on a tie)."""
    g = generate("rmat:10", seed=1, weighted=True)
    degree = np.diff(g.indptr)
    for strategy, share, gpus in (("HIGH", 0.5, 1), ("RAND", 0.3, 2)):
        plan = partition(g, strategy, share, gpus, seed=1)
        for pid, view in enumerate(plan.views("out")):
            gvid = np.concatenate([plan.gvids[pid], view.ghost_gvid])
            for i, u in enumerate(plan.gvids[pid]):
                a, b = view.indptr[i], view.indptr[i + 1]
                row, w = view.indices[a:b], view.weights[a:b]
                lo, hi = g.indptr[u], g.indptr[u + 1]
                assert sorted(zip(gvid[row].tolist(), w.tolist())) == \
                    sorted(zip(g.indices[lo:hi].tolist(), g.weights[lo:hi].tolist()))
                remote = row >= view.n_local
                flips = np.count_nonzero(remote[1:] != remote[:-1])
                assert flips <= 1
                for group in (row[~remote], row[remote]):
                    assert np.all(np.diff(degree[gvid[group]]) <= 0)
                if flips:
                    first_local = degree[gvid[row[~remote][0]]]
                    first_remote = degree[gvid[row[remote][0]]]
                    assert remote[0] == (first_remote > first_local)


@pytest.mark.slow
@pytest.mark.parametrize("hub_sort", HUB_SORTS)
@pytest.mark.parametrize("strategy", ("HIGH", "RAND"))
def test_toys_under_every_order(hub_sort, strategy):
    for name in sorted(TOYS):
        check_matrix(with_random_weights(TOYS[name], seed=3), strategy, hub_sort=hub_sort)


@pytest.mark.slow
@pytest.mark.parametrize("hub_sort", HUB_SORTS)
def test_generated_graph_under_every_order(hub_sort):
    for undirected in (False, True):
        g = with_random_weights(generate("rmat:10", seed=4, undirected=undirected), 5)
        check_matrix(g, "HIGH", shares=(0.7, 0.3, 0.0), hub_sort=hub_sort)


@pytest.mark.slow
@pytest.mark.parametrize("transfer, hub_sort", one_of_each(TRANSFERS, HUB_SORTS))
def test_streamed_edges_under_every_order(hub_sort, transfer):
    for undirected in (False, True):
        g = with_random_weights(generate("rmat:10", seed=4, undirected=undirected), 5)
        check_matrix(g, "HIGH", devices=("emulated",), shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=EdgeOptions(transfer, **streaming(g)), hub_sort=hub_sort)
    for name in ("star", "rmat_small", "disconnected"):
        g = with_random_weights(TOYS[name], seed=3)
        check_matrix(g, "HIGH", devices=("emulated",), shares=(0.0,), gpus_list=(1,),
                     edges=EdgeOptions(transfer, **streaming(g, chunk_bytes=8, fraction=0.0)),
                     hub_sort=hub_sort)


def test_harness_keys_its_plan_cache_on_the_order():
    g = generate("rmat:9", seed=1)
    a = run(g, "bfs", device="cpu", hub_sort="off")
    assert a.metrics["hub_sort"] == "off" and a.plan.hub_sort == "off"
    assert run(g, "bfs", device="cpu", hub_sort="off", plan=a.plan).plan is a.plan
    b = run(g, "bfs", device="cpu", hub_sort="hytgraph", plan=a.plan)
    assert b.plan is not a.plan and b.plan.hub_sort == "hytgraph"
    assert np.array_equal(a.values, b.values)
    assert run(g, "bfs", device="cpu").metrics["hub_sort"] == "degree"
    with pytest.raises(InputError, match="--hub-sort"):
        run(g, "bfs", device="cpu", hub_sort="HYTGRAPH", plan=a.plan)


def test_rank_plans_carry_the_order():
    from partitioners.ranks import RankPlan, rank_meta
    g = generate("rmat:9", seed=1)
    plan = partition(g, "HIGH", 0.5, 1, ranks=2, hub_sort="hytgraph")
    pids = [p for p in range(plan.n_partitions) if plan.rank_of[p] == 1]
    rank = RankPlan(rank_meta(plan), 1, [plan.gvids[p] for p in pids],
                    [plan.out_degree(p) for p in pids])
    assert rank.hub_sort == "hytgraph"
    for p in pids:
        assert rank.gvids[p] is plan.gvids[p]
        assert [rank.lvid_of[v] for v in plan.gvids[p][:5]] == list(range(5))


@pytest.mark.slow
@pytest.mark.parametrize("hub_sort", HUB_SORTS)
def test_cli_hub_sort_streamed(tmp_path, hub_sort):
    js = tmp_path / "m.json"
    proc = run_here("--graph", "rmat:11", "--undirected", "--algorithm", "pagerank",
                    "--hub-sort", hub_sort, "--cpu-share", "0", "--device", "emulated",
                    "--gpu-memory", "160K", "--chunk-bytes", "4K", "--json", js,
                    "--verify")
    assert proc.returncode == 0, proc.stderr
    assert f"(hub sort {hub_sort})" in proc.stdout
    m = json.loads(js.read_text())
    assert m["hub_sort"] == hub_sort and m["verified"] is True
    assert m["transfer"]["chunks"] > m["transfer"]["resident_chunks"] > 0


def test_cli_bad_hub_sort_exits_2():
    assert_usage_error(run_here("--graph", "tests/data/tiny.txt", "--hub-sort", "sideways"),
                       "--hub-sort", "sideways", "hytgraph")
