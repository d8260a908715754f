"""The configuration matrix of the acceptance (tests/support/matrix.py: every registered
built-in algorithm x HIGH/LOW/RAND x cpu shares x 1 and 2 GPU partitions x device cpu/emulated,
each result checked by its algorithm's verifier) on the toy graphs and on every graph of
../shared/data; and the engine's runs beside it: reuse of one engine, the collector, SSSP's
marks and buckets, PageRank's split rounds and weights, bounded memory per superstep."""

import gc

import numpy as np
import pytest

import totem_py

from bsp import EdgeOptions, Engine
from partitioners import partition
from totem_py.backend import cuda_device_count
from totem_py.graph import Graph
from totem_py.algorithms import BFS, CC, SSSP, PageRank, pagerank, sssp
from totem_py.harness import default_source

from tests.support.matrix import (DEVICES, ITERATIONS, REAL, STRATEGIES, TOL, TOYS, check_matrix,
                                  real_graph)
from tests.support.toys import with_random_weights


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(TOYS))
def test_toy_graphs(name, strategy):
    check_matrix(with_random_weights(TOYS[name], seed=3), strategy)


# the real graphs of a million edges or of thousands of supersteps, whose kinds the others have
# (web and social graphs: email-Enron, wiki-Vote; road networks: rome99), in the extended tier
LARGE_REAL = ("road-luxembourg-osm.mtx.gz", "road-usroads.mtx.gz", "soc-Slashdot0902.txt.gz",
              "web-NotreDame.txt.gz")


@pytest.mark.slow
@pytest.mark.skipif(not REAL, reason="../shared/data is not beside the checkout")
@pytest.mark.parametrize("strategy", [s if s == "HIGH" else
                                      pytest.param(s, marks=pytest.mark.extended)
                                      for s in STRATEGIES])
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.extended) if n in LARGE_REAL
                                  else n for n in REAL])
def test_real_graphs(name, strategy):
    check_matrix(real_graph(name), strategy, thin=True)


def test_results_do_not_depend_on_the_plan_seed():
    g = with_random_weights(TOYS["rmat_small"], seed=1)
    a, _ = Engine(partition(g, "RAND", 0.5, 2, seed=1), "emulated").run(CC())
    b, _ = Engine(partition(g, "RAND", 0.5, 2, seed=2), "emulated").run(CC())
    assert np.array_equal(a, b)


@pytest.mark.parametrize("device", ["emulated", pytest.param("gpu", marks=[
    pytest.mark.gpu, pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")])])
def test_runs_on_one_engine_reuse_the_reset_push_box(device):
    """A run ends with its push box (a state array's ghost slots) back at the identity, and the
    next run's `alloc` fills only the rest: BFS, then SSSP, from several sources in a row on one
    engine, each against the reference, with the kept box's array the one the next run gets."""
    g = with_random_weights(TOYS["rmat_small"], seed=2)
    engine = Engine(partition(g, "HIGH", 0.5, 2, seed=1), device)
    sources = [int(v) for v in np.argsort(-g.out_degree)[:2]] + [int(np.argmin(g.out_degree))]
    for make, state in ((BFS, "level"), (SSSP, "dist")):
        kept = []
        for s in sources:
            alg = make(s)
            got, _ = engine.run(alg)
            assert alg.compare(got, alg.reference(g)) is None, (make.name, s)
            arrays = [getattr(p.state, state) for p in engine.parts]
            assert all(p.clean_tail is not None and p.clean_tail[0] is a
                       for p, a in zip(engine.parts, arrays))
            kept.append(arrays)
        assert all(a is b for a, b in zip(kept[0], kept[-1]))   # the same arrays, run to run


def test_no_cyclic_collection_inside_a_run():
    """The collector is paused for a run's supersteps and back on after it: with the threshold
    at one allocation, a run with it on collects hundreds of times."""
    g = with_random_weights(TOYS["rmat_small"], seed=3)
    engine = Engine(partition(g, "RAND", 0.5, 2, seed=1), "emulated")
    engine.run(SSSP(0))       # compile and place outside the count
    inside, collections = [False], []
    run = engine._run

    def timed_part(algorithm):
        inside[0] = True
        try:
            return run(algorithm)
        finally:
            inside[0] = False

    def count(phase, info):
        if phase == "start" and inside[0]:
            collections.append(info["generation"])

    engine._run = timed_part
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    gc.callbacks.append(count)
    try:
        got, _ = engine.run(SSSP(0))
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
    assert gc.isenabled()
    assert collections == []
    assert SSSP.compare(got, sssp.distances(g, 0)) is None


class CheckedMarks(SSSP):
    """SSSP that checks after every step that the near list's vertices, each there once, carry
    its mark, and no flag a later one."""

    def vote(self, part, step):
        vote = super().vote(part, step)
        s = part.state
        near, pending = (a if isinstance(a, np.ndarray) else a.get()
                         for a in (s.near[:vote.active], s.pending))
        assert np.unique(near).size == near.size, f"step {step}: a vertex twice on the list"
        assert (pending[near] == s.mark).all() and pending.max() <= s.mark, f"step {step}"
        return vote


class FewMarks(CheckedMarks):
    """CheckedMarks with flags of `marks` near-list marks."""
    marks = 6

    def init(self, part):
        super().init(part)
        part.state.last_mark = FewMarks.marks + 1


@pytest.mark.parametrize("device", ["cpu", "emulated", pytest.param("gpu", marks=[
    pytest.mark.gpu, pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")])])
def test_sssp_marks_start_over(device):
    """SSSP marks each step's near list on a flag per vertex; when the flags' type has no mark
    left (a byte on a CPU: 255), one pass starts them over. Here after 6 marks, many times over
    a run: a 5 x 40 grid with random weights, where a vertex is often lowered twice in a step.
    Distances against the reference from two corners, no vertex twice on a list."""
    rng = np.random.default_rng(4)
    ids = np.arange(200).reshape(40, 5)
    src = np.r_[ids[:, :-1].ravel(), ids[:-1].ravel()]
    dst = np.r_[ids[:, 1:].ravel(), ids[1:].ravel()]
    g = Graph.from_edges(src, dst, 200, weights=rng.uniform(1, 2, src.size)).to_undirected()
    engine = Engine(partition(g, "HIGH", 0.5, 1, seed=1), device)
    for s in (0, 199):
        got, records = engine.run(FewMarks(s, delta=2.0), "sync-push-dd")
        assert len(records) > 4 * FewMarks.marks
        assert SSSP.compare(got, sssp.distances(g, s)) is None


@pytest.mark.parametrize("device", ["cpu", "emulated"])
def test_sssp_over_more_steps_than_its_flags_have_marks(device):
    """SSSP marks each near list in a byte per vertex on a CPU (255 marks): a chain of 700 unit
    edges with buckets 2.5 wide takes 700 supersteps, so the marks start over twice; a
    shortcut every 50 vertices lowers vertices already listed. Distances against the
    reference, from both ends, split between two partitions; the marks checked every step."""
    n = 700
    src = np.r_[np.arange(n - 1), np.arange(0, n - 60, 50)]
    dst = np.r_[np.arange(1, n), np.arange(0, n - 60, 50) + 60]
    w = np.r_[np.ones(n - 1), np.full(src.size - n + 1, 59.5)]
    g = Graph.from_edges(src, dst, n, weights=w).to_undirected()
    engine = Engine(partition(g, "HIGH", 0.5, 1, seed=1), device)
    for s in (0, n - 1):
        got, records = engine.run(CheckedMarks(s, delta=2.5), "sync-push-dd")
        assert len(records) > 2 * 255
        assert SSSP.compare(got, sssp.distances(g, s)) is None


@pytest.mark.parametrize("device", DEVICES)
def test_pagerank_split_rounds(device):
    """Split rounds (the GPU partitions add their contributions into the CPU's vertices, the
    CPU reads only its own): two supersteps a round, TEPS counting rounds, far fewer messages
    than plain rounds and the same ranks; off by default on host devices and directed graphs."""
    g = totem_py.generate("rmat:9", undirected=True)
    want = pagerank.rounds(g, ITERATIONS)
    plan = partition(g, "HIGH", 0.5, 1, seed=1)
    runs = {}
    for split in (None, True):
        r = totem_py.run(g, PageRank(ITERATIONS, split=split), plan=plan, device=device)
        runs[split] = r.metrics
        assert np.abs(r.values - want).sum() <= 1e-6
    plain, split = runs[None], runs[True]
    assert (plain["supersteps"], split["supersteps"]) == (ITERATIONS, 2 * ITERATIONS)
    assert split["teps"] * split["time_s"] == pytest.approx(g.n_edges * ITERATIONS)
    messages = [sum(s["messages"] for s in m["per_superstep"]) for m in (plain, split)]
    assert messages[1] < messages[0] / 2, messages
    r = totem_py.run(totem_py.generate("rmat:9"), PageRank(ITERATIONS, split=True),
                     cpu_share=0.5, device=device)
    assert r.metrics["supersteps"] == ITERATIONS


@pytest.mark.slow
@pytest.mark.parametrize("device", DEVICES)
def test_memory_per_superstep_stays_bounded(device, monkeypatch):
    """A run keeps one record per superstep for the first KEPT only, the rest summed per mode,
    and nothing else per superstep: PageRank for 1500 rounds on a 6-vertex graph peaks no
    higher (tracemalloc) than for 500 (a record or gather array kept per superstep would add
    about 1.3 KB each); the metrics still count every superstep and round."""
    import tracemalloc
    import bsp.engine
    monkeypatch.setattr(bsp.engine, "KEPT", 20)
    g = TOYS["complete"]
    engine = Engine(partition(g, "HIGH", 0.5, 1, seed=1), device)
    engine.run(PageRank(1500))      # warm: caches and free lists filled
    peaks = {}
    tracemalloc.start()
    try:
        for rounds in (500, 1500):
            tracemalloc.reset_peak()
            base = tracemalloc.get_traced_memory()[0]
            _, records = engine.run(PageRank(rounds))
            peaks[rounds] = tracemalloc.get_traced_memory()[1] - base
            assert bsp.engine.supersteps(records) == rounds and len(records) == 21
            del records
    finally:
        tracemalloc.stop()
    assert (peaks[1500] - peaks[500]) / 1000 < 16, peaks
    m = totem_py.run(g, "pagerank", iterations=50, device=device, cpu_share=0.5,
                     verify=True).metrics
    assert m["supersteps"] == 50 and len(m["per_superstep"]) == 21
    assert m["per_superstep"][-1]["steps"] == 30 and m["per_superstep"][-1]["step"] == 20
    assert m["teps"] * m["time_s"] == pytest.approx(g.n_edges * 50)
    monkeypatch.setattr(bsp.engine, "KEPT", 100)
    every = totem_py.run(g, "pagerank", iterations=50, device=device, cpu_share=0.5).metrics
    for key in ("messages", "active_vertices", "h2d_bytes"):
        assert sum(s[key] for s in m["per_superstep"]) == sum(
            s[key] for s in every["per_superstep"]), key
    chain = TOYS["chain"]       # direction-optimising BFS reads the last two supersteps'
    monkeypatch.setattr(bsp.engine, "KEPT", 2)
    r = totem_py.run(chain, "bfs", source=0, device=device, cpu_share=0.5, verify=True)
    assert r.metrics["supersteps"] == 10 and r.values.tolist() == list(range(10))


@pytest.mark.parametrize("device", DEVICES)
def test_pagerank_weighs_edges_in_both_forms(device):
    """On a weighted graph PageRank shares a rank in proportion to the out-edges' weights:
    TOTEM's rounds (plain and split) and networkx's form equal their weighted references; the
    unweighted forms after them on the same engine get no weights."""
    g = totem_py.generate("rmat:9", undirected=True, weighted=True)
    engine = Engine(partition(g, "HIGH", 0.5, 1, seed=1), device)
    for weighted in (True, False):
        for split in (False, True):
            got, _ = engine.run(PageRank(ITERATIONS, split=split, weighted=weighted))
            want = pagerank.rounds(g, ITERATIONS, weighted=weighted)
            assert np.abs(got - want).max() <= 1e-6 * want.min(), (weighted, split)
        alg = PageRank(100, tol=TOL, weighted=weighted)
        got, _ = engine.run(alg)
        assert alg.verify(g, got) is None
        assert np.abs(got - pagerank.converged(g, TOL, weighted=weighted)).max() <= 1e-12
    assert np.abs(pagerank.rounds(g, ITERATIONS, weighted=True)
                  - pagerank.rounds(g, ITERATIONS)).max() > 1e-4


def test_pagerank_splits_by_default_where_the_gpus_run_gpu_code_and_send_less():
    """The default: split rounds where GPU partitions run GPU code with their edges in device
    memory and the partials are far fewer values than the CPU stops reading (HIGH), else not
    (LOW, RAND; the emulated device; streamed or mapped edges)."""
    from types import SimpleNamespace
    g = totem_py.generate("rmat:9", undirected=True)
    for strategy, want in (("HIGH", True), ("LOW", False), ("RAND", False)):
        part = SimpleNamespace(run_device="gpu", edges_resident=True,
                               plan=partition(g, strategy, 0.5, 1, seed=1))
        assert PageRank._split_pays(part) == want, strategy
    part.plan = partition(g, "HIGH", 0.5, 1, seed=1)
    for other in (dict(run_device="emulated"), dict(edges_resident=False)):
        assert not PageRank._split_pays(SimpleNamespace(**{**vars(part), **other})), other
    # the engine tells whether GPU edges are resident: not when they stream or are mapped
    plan = partition(g, "HIGH", 0.5, 1, seed=1)
    for edges, want in ((EdgeOptions(), True), (EdgeOptions("auto", budget=1 << 20), True),
                        (EdgeOptions("auto", budget=15_000, chunk_bytes=1 << 10), False),
                        (EdgeOptions("zerocopy"), False)):
        engine = Engine(plan, "emulated", edges=edges)
        engine.prepare(PageRank(ITERATIONS))
        assert [p.edges_resident for p in engine.parts] == [want, want], edges


@pytest.mark.slow
def test_sssp_buckets_double_while_the_far_lists_shrink():
    """SSSP's next bucket once the near lists are empty: the bucket holding the smallest far
    distance, twice as wide as the last while the far lists shrink, delta again when they
    grow; no far distance ends the run. At the CPU's width on rmat:16, the doubling takes
    fewer supersteps than fixed buckets, with the same distances."""
    from bsp import Vote
    alg = SSSP(0, delta=10.0)
    alg.width, alg.far = 10.0, 0.0
    walk = [(5.0, 100, 10.0, 10.0), (25.0, 50, 40.0, 20.0), (41.0, 20, 80.0, 40.0),
            (85.0, 30, 90.0, 10.0), (95.0, 10, 100.0, 20.0)]
    for key, far, bound, width in walk:
        assert not alg.finished(Vote(0, 0, key, (float(far),)))
        assert (alg.bound, alg.width) == (bound, width), key
    assert not alg.finished(Vote(3, 0, np.inf, (1.0,))) and alg.bound == 100.0
    assert alg.finished(Vote(0, 0, np.inf, (0.0,)))
    g = totem_py.generate("rmat:16", undirected=True, weighted=True)
    source = default_source(g)
    fixed = SSSP(source)
    fixed.finished = lambda total: total.active == 0 and not _fixed_bucket(fixed, total.key)
    runs = [totem_py.run(g, alg, cpu_share=1.0, device="cpu", path="sync-push-dd")
            for alg in (SSSP(source), fixed)]
    assert np.array_equal(runs[0].values, sssp.distances(g, source))
    assert np.array_equal(runs[1].values, runs[0].values)
    assert runs[0].metrics["supersteps"] < runs[1].metrics["supersteps"]


def _fixed_bucket(alg, key):
    """Buckets of width delta always (what SSSP.finished does without the doubling)."""
    if not np.isfinite(key):
        return False
    alg.bound = (np.floor(key / alg.delta) + 1) * alg.delta
    return True
