"""Streamed edges (bsp/stream.py) on the emulated GPU: every transfer engine, forced or chosen,
gives the references' answers for every algorithm, partitioning and cpu share, with the GPU cache
of hot rows off and on; the bookkeeping (chunks, engine letters, bytes moved) adds up; the cache
picks the hottest rows that fit and refreshes only when enough of them are new; the chunk kernels
match NumPy (and, where CuPy sees a device, their CUDA twins do too)."""

import math

import numba
import numpy as np
import pytest

import bsp.operators
import bsp.stream
from bsp import EdgeOptions, Engine
from bsp.stream import MAX_CHUNKS, chunk_starts, row_lines
from kernels_cpu import chunks as k
from kernels_cpu.stream import stream_gather, stream_offsets
from partitioners import partition
from totem_py import generate
from totem_py.algorithms import SSSP, pagerank_delta, sssp
from totem_py.algorithms.sssp import default_delta
from totem_py.errors import InputError
from totem_py.harness import default_source, run

from tests.support.matrix import STRATEGIES, TOYS, check_matrix
from tests.support.stream import (TRANSFERS, cache_bytes, cached_streaming, check_sorted_mapped,
                                  check_sorted_segments, one_of_each, streaming)
from tests.support.toys import with_random_weights

@pytest.mark.slow
@pytest.mark.parametrize("transfer, strategy", one_of_each(TRANSFERS, STRATEGIES))
def test_every_engine_matches_the_references(transfer, strategy):
    for name in ("rmat10u", "rmat10"):
        g = with_random_weights(generate("rmat:10", seed=4, undirected=name.endswith("u")), 5)
        check_matrix(g, strategy, devices=("emulated",), shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=EdgeOptions(transfer, **streaming(g)))


@pytest.mark.parametrize("transfer", ("zerocopy", "compaction", "auto"))
def test_streamed_segments_sorted(transfer, monkeypatch):
    check_sorted_segments(transfer, monkeypatch, "emulated")


def test_mapped_queues_sorted(monkeypatch):
    check_sorted_mapped(monkeypatch, "emulated")


def test_zero_copy_rows_in_pieces(monkeypatch):
    """advance with a source functor (PageRank-Delta's) asks for zero-copy rows in pieces: each
    piece's rows are the queue's in a run of consecutive chunks, the pieces follow one another
    in chunk order, the segments together hold the queue, and the answers are the references'."""
    monkeypatch.setattr(bsp.stream, "PIECE_VERTICES", 1)
    monkeypatch.setattr(pagerank_delta, "PULL_SHARE", math.inf)     # push after the first step
    pieces_seen = []
    segments = bsp.stream.EdgeStream.queue_segments

    def spy(self, queue, qlen, pieces=1):
        want = np.sort(np.asarray(queue[:qlen]))
        got, last = [], -1
        zerocopy = 0
        for seg in segments(self, queue, qlen, pieces):
            rows = np.asarray(seg[3][:seg[4]])
            got.append(rows)
            if seg[1] is self.host_indices:
                chunks = np.searchsorted(self.starts, rows, side="right") - 1
                assert chunks.min() > last
                last = chunks.max()
                zerocopy += 1
            yield seg
        assert np.array_equal(np.sort(np.concatenate(got)), want)
        if pieces > 1:
            pieces_seen.append(zerocopy)
    monkeypatch.setattr(bsp.stream.EdgeStream, "queue_segments", spy)
    g = with_random_weights(generate("rmat:10", seed=4, undirected=True), 5)
    check_matrix(g, "HIGH", devices=("emulated",), shares=(0.0,), gpus_list=(1,),
                 edges=EdgeOptions("zerocopy", **streaming(g, fraction=0.0)))
    assert max(pieces_seen) == bsp.operators.ASYNC_PIECES


@pytest.mark.parametrize("transfer", TRANSFERS)
def test_toys_stream(transfer):
    for name in sorted(TOYS):
        g = with_random_weights(TOYS[name], seed=3)
        check_matrix(g, "HIGH", devices=("emulated",), shares=(0.0,), gpus_list=(1,),
                     edges=EdgeOptions(transfer, **streaming(g, chunk_bytes=8, fraction=0.0)))


def test_bookkeeping_adds_up():
    g = generate("rmat:11", seed=2, undirected=True, weighted=True)
    opts = streaming(g)
    for alg in ("bfs", "sssp", "pagerank", "cc"):
        for transfer in TRANSFERS:
            m = run(g, alg, cpu_share=0.0, device="emulated", transfer=transfer,
                    gpu_memory=opts["budget"], chunk_bytes=opts["chunk_bytes"]).metrics
            t = m["transfer"]
            assert t["chunks"] > 10 and 0 < t["resident_chunks"] < t["chunks"]
            letters = "".join(s["chunks"]["0"] for s in m["per_superstep"] if "chunks" in s)
            assert set(letters) <= set(".R" + {"filter": "F", "compaction": "C",
                                               "zerocopy": "Z", "auto": "FCZ"}[transfer])
            share = t["engine_share"]
            assert sum(share.values()) == pytest.approx(1.0)
            for key, letter in (("filter", "F"), ("compaction", "C"), ("zerocopy", "Z"),
                                ("resident", "R")):
                assert share[key] == pytest.approx(letters.count(letter) / len(letters.replace(".", "")))
            moved = t["filter_bytes"] + t["compaction_bytes"] + t["zerocopy_bytes"]
            assert t["volume_ratio"] == pytest.approx(moved / t["streamed_edge_bytes"])
            if transfer != "zerocopy":   # copies are what the partition counts as sent to it
                assert t["filter_bytes"] + t["compaction_bytes"] <= t["h2d_bytes"]
            if transfer == "filter":
                assert t["compaction_bytes"] == t["zerocopy_bytes"] == 0 < t["filter_bytes"]


def test_a_budget_below_the_staging_buffers_is_refused():
    g = generate("rmat:10", seed=1)
    with pytest.raises(InputError, match="too small to stream"):
        run(g, "bfs", cpu_share=0.0, device="emulated", transfer="filter", gpu_memory=1000,
            chunk_bytes=1 << 20)


def test_everything_fits_means_nothing_streams():
    g = generate("rmat:10", seed=1)
    m = run(g, "bfs", cpu_share=0.0, device="emulated", transfer="auto",
            gpu_memory=1 << 30).metrics
    assert "chunks" not in m["transfer"]
    assert all("chunks" not in s for s in m["per_superstep"])


def test_chunks_are_edge_balanced_rows():
    rng = np.random.default_rng(0)
    deg = rng.integers(0, 20, 5000)
    deg[10] = 3000                                 # a row longer than a chunk
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    n = deg.size
    starts = chunk_starts(indptr, n, 4, 4096)      # 1024 edges per chunk
    assert starts[0] == 0 and starts[-1] == n and np.all(np.diff(starts) > 0)
    sizes = np.diff(indptr[starts])
    big = np.flatnonzero(sizes > 1024 + 19)          # 19: the largest other degree
    assert big.size == 1 and starts[big[0]] <= 10 < starts[big[0] + 1]  # only the hub's chunk
    assert chunk_starts(indptr, n, 4, 4).size - 1 <= MAX_CHUNKS
    assert chunk_starts(np.zeros(1, np.int64), 0, 4, 64).tolist() == [0]


def test_chunk_kernels_match_numpy():
    rng = np.random.default_rng(1)
    deg = rng.integers(0, 40, 300)
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    indices = rng.integers(0, 300, indptr[-1]).astype(np.int32)
    starts = chunk_starts(indptr, 300, 4, 256)
    queue = rng.permutation(300)[:120].astype(np.int64)
    cid = np.empty(300, np.int64)
    cnt = np.zeros((3, starts.size - 1), np.int64)
    k.chunk_stats(indptr, queue, queue.size, starts, 4, 8, np.zeros(300, np.uint8), cid,
                  cnt[0], cnt[1], cnt[2])
    chunk = np.searchsorted(starts, queue, side="right") - 1
    assert np.array_equal(cid[:120], chunk)
    assert np.array_equal(cnt[0], np.bincount(chunk, minlength=starts.size - 1))
    assert np.array_equal(cnt[1], np.bincount(chunk, weights=deg[queue],
                                              minlength=starts.size - 1))
    lines = row_lines(indptr, 4) + row_lines(indptr, 8)
    assert np.array_equal(cnt[2], np.bincount(chunk, weights=lines[queue],
                                              minlength=starts.size - 1))
    # split: every item once, in its segment's range
    seg = rng.integers(0, 3, starts.size - 1)
    sizes = np.bincount(seg[chunk], minlength=3)
    pos = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    out = np.empty(120, np.int64)
    k.chunk_split(queue, 120, cid, seg, pos.copy(), out)
    for s in range(3):
        part = out[pos[s]:pos[s] + sizes[s]]
        assert sorted(part) == sorted(queue[seg[chunk] == s])
    # gather and index: the compacted rows read back as the original rows
    q = np.sort(queue)
    buf = np.empty(indptr[-1], np.int32)
    offsets = np.empty(q.size + 1, np.int64)
    stream_offsets(indptr, q, q.size, offsets)
    stream_gather(indptr, indices, q, q.size, offsets, buf)
    index = np.zeros(301, np.int64)
    k.chunk_index(q, q.size, offsets, index)
    for v in q:
        assert np.array_equal(buf[index[v]:index[v + 1]], indices[indptr[v]:indptr[v + 1]])
    k.chunk_copy(indices, 100, 900, buf)
    assert np.array_equal(buf[:800], indices[100:900])
    # rows as a kernel over all rows reads them: none, the first line, or whole
    reads = rng.integers(0, 3, 300).astype(np.uint8)
    k.chunk_row_stats(indptr, reads, starts, 4, 8, cnt[0], cnt[1], cnt[2])
    rows = np.searchsorted(starts, np.arange(300), side="right") - 1
    read = (reads > 0) & (deg > 0)
    whole = read & (reads == 2)
    n = starts.size - 1
    assert np.array_equal(cnt[0], np.bincount(rows[read], minlength=n))
    assert np.array_equal(cnt[1], np.bincount(rows[read], weights=np.where(whole, deg, 1)[read],
                                              minlength=n))
    assert np.array_equal(cnt[2], np.bincount(rows[read], weights=np.where(whole, lines, 2)[read],
                                              minlength=n))


def test_rows_not_read_are_not_streamed():
    """A kernel over rows that reads none of them gets only the resident rows; with every row
    read whole it gets them all; a chunk is never counted as more lines than it has."""
    g = generate("rmat:11", seed=2, undirected=True)
    opts = streaming(g)
    plan = partition(g, "HIGH", cpu_share=0.0, gpus=1)
    for transfer in ("zerocopy", "auto"):
        engine = Engine(plan, "emulated", edges=EdgeOptions(transfer, **opts))
        part = engine.parts[0]
        view = part.view("out")
        view.prepare(False)
        stream = view.stream
        assert stream is not None and stream.n_resident < stream.nchunks
        none = list(view.row_segments(lambda: np.zeros(view.n_local, bool)))
        assert [(s[3], s[4]) for s in none] == [(0, int(stream.starts[stream.n_resident]))]
        every = list(view.row_segments(lambda: np.full(view.n_local, 2, np.uint8)))
        covered = sorted((s[3], s[4]) for s in every)
        assert covered[0][0] == 0 and covered[-1][1] == view.n_local
        assert all(a[1] == b[0] for a, b in zip(covered, covered[1:]))
        s = stream.take_stats()
        assert s["zerocopy_bytes"] <= 128 * stream.chunk_lines[stream.n_resident:].sum()


def numpy_choose(pm, vertices, edges, lines, chunk_lines, tef, rows, bpe, warps, n_resident,
                 n_staged, lazy, lazy_loss):
    """The NumPy twin of kernels_cpu.stream.auto_choose, on the Profile's own cost methods:
    (codes, unstage)."""
    active = edges > 0
    density = 1.0 - (1.0 - lines / np.maximum(chunk_lines, 1)) ** 2
    tiz = pm.zerocopy_s(lines, density, warps)
    tec = np.full(edges.size, np.inf) if rows else pm.compaction_s(edges * bpe, vertices)
    picked = pm.choose(tef, tec, tiz)
    compact = active & (picked == bsp.stream.COMPACTION)
    compact[:n_resident] = False
    if compact.any() and (np.minimum(tef, tiz)[compact].sum() - tec[compact].sum()
                          < bsp.stream.COMPACTION_FIXED_S):
        picked[compact] = np.where(tiz < tef, bsp.stream.ZEROCOPY, bsp.stream.FILTER)[compact]
    unstage = False
    if lazy:
        copy = active & (picked != bsp.stream.ZEROCOPY)
        copy[:n_resident] = False
        if copy.any():
            gain = (tiz - np.where(picked == bsp.stream.FILTER, tef, tec))[copy].sum()
            if gain > lazy_loss:
                unstage = True
            else:
                picked[copy] = bsp.stream.ZEROCOPY
    codes = np.full(edges.size, -1, np.int8)
    codes[active] = picked[active]
    resident = n_staged if unstage else n_resident
    codes[:resident][active[:resident]] = bsp.stream.RESIDENT
    return codes, unstage


def test_auto_choice_matches_its_numpy_twin():
    from bsp.transfer_model import ALPHA, BETA, Profile
    from kernels_cpu.stream import auto_choose
    rng = np.random.default_rng(11)
    measured = Profile(memcpy_h2d_Bps=54.7e9, zerocopy_seq_Bps=50.8e9, zerocopy_random_Bps=14.5e9,
                       compaction_Bps=10.1e9, memcpy_latency_s=2.7e-6, zerocopy_rows_Bps=35.3e9,
                       zerocopy_edges_Bps=49.8e9, measured=("memcpy",))
    seen = set()
    for trial in range(600):
        pm = (measured, Profile.fallback())[trial % 2]
        n = int(rng.integers(1, 40))
        chunk_edges = rng.integers(1, 1 << 20, n)
        chunk_lines = chunk_edges * 4 // 128 + rng.integers(0, 50, n)
        busy = rng.random(n) < rng.random()
        edges = np.where(busy, (chunk_edges * rng.random(n) ** 3).astype(np.int64), 0)
        vertices = np.where(edges > 0, np.maximum(edges // rng.integers(1, 64, n), 1), 0)
        lines = np.minimum(np.where(edges > 0, edges * 4 // 128 + vertices, 0), chunk_lines)
        tef = pm.filter_s(chunk_edges * 4.0) + rng.choice([0.0, 15e-6])
        rows, warps, lazy = (bool(b) for b in rng.integers(0, 2, 3))
        n_staged = int(rng.integers(0, n + 1))
        n_resident = int(rng.integers(n_staged, n + 1)) if lazy else n_staged
        lazy_loss = float(tef[n_staged:n_resident].sum())
        want, unstage = numpy_choose(pm, vertices, edges, lines, chunk_lines, tef, rows, 4,
                                     warps, n_resident, n_staged, lazy, lazy_loss)
        got = np.full(n, -1, np.int8)
        assert auto_choose(vertices, edges, lines, chunk_lines, tef, rows, 4, pm.memcpy_h2d_Bps,
                           pm.compaction_Bps, pm.zerocopy_random_Bps, pm.dense_Bps(warps),
                           pm.tlp_bytes, ALPHA, BETA, bsp.stream.COMPACTION_FIXED_S, n_resident,
                           n_staged, lazy, lazy_loss, got) == unstage
        assert got.tolist() == want.tolist(), trial
        seen |= set(got.tolist()) | {("unstage", unstage)}
    assert seen >= {-1, 0, 1, 2, 3, ("unstage", True), ("unstage", False)}


def test_auto_keeps_the_staging_room_resident_until_a_copy_pays(monkeypatch):
    """Auto starts every run with the chunks that fit in the staging buffers' room resident
    (n_lazy of them); a superstep whose copies pay gives the room to the buffers (n_staged
    resident) for the rest of the run, and the next run starts with the room's chunks copied
    back. Zero-copy at 1 MB/s, so that copies pay; results as the reference."""
    from bsp.transfer_model import Profile
    slow = Profile(memcpy_h2d_Bps=50e9, zerocopy_seq_Bps=1e6, zerocopy_random_Bps=1e6,
                   measured=("memcpy", "zerocopy"))
    monkeypatch.setattr(bsp.stream, "load_profile", lambda warn=True: slow)
    g = with_random_weights(generate("rmat:11", seed=2, undirected=True), 5)
    engine = Engine(partition(g, "HIGH", cpu_share=0.0, gpus=1), "emulated",
                    edges=EdgeOptions("auto", **streaming(g)))
    source = default_source(g)
    want = sssp.distances(g, source)
    for _ in range(2):
        view = engine.parts[0].view("out", True)
        view.prepare(True)
        stream = view.stream
        assert stream.lazy and stream.n_staged < stream.n_lazy == stream.n_resident
        got, records = engine.run(SSSP(source))
        assert not stream.lazy and stream.n_resident == stream.n_staged
        assert np.allclose(got, want)
        assert sum(r["engines"]["filter"] + r["engines"]["compaction"] for r in records) > 0


def test_cli_streams_with_a_small_budget(tmp_path):
    from totem_py.run import main
    out = tmp_path / "m.json"
    assert main(["--graph", "rmat:11", "--undirected", "--algorithm", "sssp", "--device",
                 "emulated", "--cpu-share", "0", "--gpu-memory", "300K", "--chunk-bytes", "8K",
                 "--transfer", "auto", "--verify", "--quiet", "--json", str(out)]) == 0
    import json
    m = json.loads(out.read_text())
    assert m["verified"] and m["transfer"]["chunks"] > 1


def test_weights_narrow_to_float32_only_when_exact():
    """Integer weights stream as float32 (half the bytes); weights that float32 would round
    stay float64; SSSP matches the reference either way."""
    g = generate("rmat:10", seed=3, undirected=True, weighted=True)
    fractional = g.with_weights(g.weights + 0.1)
    for graph, dtype in ((g, np.float32), (fractional, np.float64)):
        opts = streaming(graph)
        plan = partition(graph, "HIGH", cpu_share=0.0, gpus=1)
        engine = Engine(plan, "emulated", edges=EdgeOptions("auto", **opts))
        view = engine.parts[0].view("out", True)
        assert view.host_weights.dtype == dtype and view.stream.weights.dtype == dtype
        check_matrix(graph, "HIGH", devices=("emulated",), shares=(0.0,), gpus_list=(1,),
                     edges=EdgeOptions("auto", **opts))


# -- the GPU cache of hot rows ------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("transfer, strategy", one_of_each(TRANSFERS, STRATEGIES))
def test_every_engine_matches_the_references_with_the_cache(transfer, strategy, often):
    for name in ("rmat10u", "rmat10"):
        g = with_random_weights(generate("rmat:10", seed=4, undirected=name.endswith("u")), 5)
        edges = EdgeOptions(transfer, **cached_streaming(g))
        check_matrix(g, strategy, devices=("emulated",), shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=edges)
        assert served_from_cache(g, strategy, edges) > 0


@pytest.mark.parametrize("transfer", ("zerocopy", "auto"))
def test_toys_stream_with_the_cache(transfer, often):
    for name in sorted(TOYS):
        g = with_random_weights(TOYS[name], seed=3)
        opts = streaming(g, chunk_bytes=8, fraction=0.0)
        opts["budget"] += cache_bytes(g, 0.5)
        check_matrix(g, "HIGH", devices=("emulated",), shares=(0.0,), gpus_list=(1,),
                     edges=EdgeOptions(transfer, cache=cache_bytes(g, 0.5), **opts))


def served_from_cache(graph, strategy, edges):
    """Queue vertices the cache served in an SSSP run and a BC run on one GPU partition."""
    plan = partition(graph, strategy, 0.0, 1, seed=1)
    engine = Engine(plan, "emulated", edges=edges)
    source = default_source(graph)
    from totem_py.algorithms import BC
    served = 0
    for alg in (SSSP(source), BC([source])):
        _, records = engine.run(alg)
        served += sum(r.get("cache", 0) for r in records)
    return served


def cache_stream(graph, cache):
    """The streamed "out" view (weights read) of a GPU partition holding all of `graph`."""
    plan = partition(graph, "HIGH", cpu_share=0.0, gpus=1)
    engine = Engine(plan, "emulated", edges=EdgeOptions("auto", cache=cache, **streaming(graph)))
    view = engine.parts[0].view("out", True)
    view.prepare(True)
    return view.stream


def test_the_cache_holds_the_hottest_rows_that_fit():
    g = generate("rmat:11", seed=2, undirected=True, weighted=True)
    stream = cache_stream(g, cache_bytes(g))
    hp, n, first = stream.view.indptr, stream.n, stream.first
    bpe = stream.width + stream.wwidth
    assert 0 < first < n and stream.cache_capacity == cache_bytes(g) // bpe
    deg = np.diff(hp)
    rng = np.random.default_rng(0)
    hot = np.zeros(n, np.int64)
    hot[first:] = rng.permutation(n - first) * (deg[first:] > 0)   # distinct, 0 for empty rows
    stream.hot[:] = hot
    assert stream.select()
    # by hand: the streamed rows by hotness, the longest prefix that fits
    ranked = first + np.argsort(-hot[first:], kind="stable")
    ranked = ranked[hot[ranked] > 0]
    k_fit = int(np.searchsorted(np.cumsum(deg[ranked]), stream.cache_capacity, side="right"))
    want = np.sort(ranked[:k_fit])
    assert 0 < k_fit < ranked.size
    assert np.array_equal(np.flatnonzero(stream.cached), want)
    assert not stream.hot.any() and stream.processed == 0
    # the cache holds their rows (ids and weights), read through its row index
    for v in want:
        a, b = stream.cache_index[v], stream.cache_index[v + 1]
        assert np.array_equal(stream.cache_indices[a:b], stream.view.indices[hp[v]:hp[v + 1]])
        assert np.array_equal(stream.cache_weights[a:b], stream.weights[hp[v]:hp[v + 1]])
    assert stream.stats["cache_bytes"] == deg[want].sum() * bpe
    assert stream.stats["cache_refreshes"] == 1
    # new candidates, 20% of them not cached: no refresh, the cache stays as it was
    stream.take_stats()
    keep, fresh = want[:int(0.8 * want.size)], np.setdiff1d(ranked, want)
    fresh = fresh[deg[fresh] <= deg[want[int(0.8 * want.size):]].min()]
    hot[:] = 0
    hot[keep] = 1000
    hot[fresh[:want.size - keep.size]] = 500
    stream.hot[:] = hot
    cand = stream.candidates()
    new = np.setdiff1d(cand, want).size
    assert 0 < new <= 0.3 * cand.size
    assert not stream.select()
    assert np.array_equal(np.flatnonzero(stream.cached), want)
    assert stream.stats["cache_bytes"] == 0 and stream.stats["cache_refreshes"] == 0
    # mostly new candidates: refreshed, the old rows are gone
    hot[:] = 0
    hot[fresh] = 500
    stream.hot[:] = hot
    cand = stream.candidates()
    assert np.setdiff1d(cand, want).size > 0.3 * cand.size
    assert stream.select()
    assert np.array_equal(np.flatnonzero(stream.cached), cand)
    # a run starts with an empty cache
    stream.reset()
    assert not stream.cached.any() and stream.n_cached == 0


def test_the_cache_serves_sssp_and_fewer_bytes_stream():
    """SSSP with the bucket width it has on a real GPU (16x the emulated run's: it relaxes some
    vertices more than once, so the queues hold more than n vertices and the cache is used), the
    cache given beside the same resident chunks: its vertices are served from it, and the
    engines move fewer bytes. One thread: parallel relaxations differ in how often they lower
    a vertex from run to run, and with them the bytes streamed (by up to 10% on 2 threads)."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        _cache_serves_sssp()
    finally:
        numba.set_num_threads(threads)


def _cache_serves_sssp():
    g = generate("rmat:11", seed=2, undirected=True, weighted=True)
    opts = streaming(g)
    cache = int(0.1 * g.n_edges) * 8             # 8 bytes per edge: ids and float32 weights
    plan = partition(g, "HIGH", 0.0, 1, seed=1)
    source = default_source(g)
    want = None
    for transfer in ("auto", "zerocopy"):
        moved, served, resident = {}, {}, set()
        for c in (0, cache):
            edges = EdgeOptions(transfer, budget=opts["budget"] + c, chunk_bytes=64, cache=c)
            engine = Engine(plan, "emulated", edges=edges)
            # wide buckets: the queues hold more than n vertices in all (the cache selects)
            values, records = engine.run(SSSP(source, 16 * default_delta(g)))
            want = values if want is None else want
            assert np.allclose(values, want)
            stream = engine.parts[0].views["out"].stream
            assert stream.wwidth == 4 and stream.cache_capacity * 8 == c
            resident.add(stream.n_resident)
            moved[c] = sum(r.get(key, 0) for r in records
                           for key in ("filter_bytes", "compaction_bytes", "zerocopy_bytes"))
            served[c] = sum(r.get("cache", 0) for r in records)
            loaded = sum(r.get("cache_bytes", 0) for r in records)
            assert (loaded > 0) == (c > 0)
        print(f"{transfer}: streamed bytes {moved[0]} without the cache, {moved[cache]} with "
              f"it ({served[cache]} queue vertices served from it)")
        assert len(resident) == 1                 # the same resident chunks
        assert served[0] == 0 < served[cache]
        assert moved[cache] < moved[0]


def test_a_cache_beyond_the_budget_is_refused():
    g = generate("rmat:11", seed=2, undirected=True, weighted=True)
    opts = streaming(g)
    with pytest.raises(InputError, match="--gpu-cache"):
        run(g, "sssp", cpu_share=0.0, device="emulated", transfer="auto",
            gpu_memory=opts["budget"], chunk_bytes=opts["chunk_bytes"],
            gpu_cache=opts["budget"])
    with pytest.raises(InputError, match="--gpu-cache must be at least 0"):
        run(g, "bfs", cpu_share=0.0, device="emulated", gpu_memory=opts["budget"],
            chunk_bytes=opts["chunk_bytes"], gpu_cache=-1)


def test_the_cache_is_in_the_record():
    g = generate("rmat:11", seed=2, undirected=True, weighted=True)
    opts = streaming(g)
    cache = cache_bytes(g)
    metrics = {}
    for c in (0, cache):
        r = run(g, "bc", cpu_share=0.0, device="emulated", transfer="auto",
                gpu_memory=opts["budget"], chunk_bytes=opts["chunk_bytes"], gpu_cache=c)
        metrics[c] = r.metrics
    stream = r.plan.engines["emulated", EdgeOptions("auto", opts["budget"], opts["chunk_bytes"],
                                                    cache=cache)].parts[0].views["out"].stream
    on, off = metrics[cache], metrics[0]
    assert on["gpu_cache"] == cache and off["gpu_cache"] == 0
    t = on["transfer"]
    assert t["cache"] == sum(s["cache"] for s in on["per_superstep"]) > 0
    assert t["cache_bytes"] == sum(s["cache_bytes"] for s in on["per_superstep"]) > 0
    assert t["cache_capacity_bytes"] == cache // 4 * 4
    assert off["transfer"]["cache"] == off["transfer"]["cache_bytes"] == 0
    moved = sum(t[k] for k in ("filter_bytes", "compaction_bytes", "zerocopy_bytes",
                               "cache_bytes"))
    assert t["volume_ratio"] == pytest.approx(moved / t["streamed_edge_bytes"])
    # the cache is device memory taken from the same budget: the edge data on the GPU is as
    # much (but for the room left beside the last resident chunk), the resident chunks fewer
    gpu_on, gpu_off = (m["partitions"][0]["on_gpu_bytes"] for m in (on, off))
    assert gpu_on == stream.device_bytes and t["cache_capacity_bytes"] < gpu_on <= opts["budget"]
    assert abs(gpu_on - gpu_off) <= np.diff(stream.ends).max() * 4
    assert t["resident_chunks"] < off["transfer"]["resident_chunks"]


def test_cache_kernels_match_numpy(twins):
    """chunk_stats leaves cached vertices out (pseudo chunk nchunks), chunk_hotness adds the
    streamed rows' degrees, chunk_cache_load gathers rows: CPU twin, and CUDA twin on a GPU."""
    x = twins
    rng = np.random.default_rng(5)
    n = 400
    deg = rng.integers(0, 40, n)
    deg[7] = 900
    indptr = np.concatenate([[0], np.cumsum(deg)]).astype(np.int64)
    indices = rng.integers(0, n, indptr[-1]).astype(np.int32)
    weights = rng.random(indptr[-1]).astype(np.float32)
    starts = chunk_starts(indptr, n, 4, 256)
    nchunks = starts.size - 1
    queue = rng.permutation(n)[:250].astype(np.int64)
    cached = (rng.random(n) < 0.3).astype(np.uint8)
    cid = x.put(np.empty(n, np.int64))
    cnt = x.put(np.zeros((3, nchunks), np.int64))
    d_indptr, d_queue = x.put(indptr), x.put(queue)
    x.chunks.chunk_stats(d_indptr, d_queue, queue.size, x.put(starts), 4, 4, x.put(cached), cid,
                    cnt[0], cnt[1], cnt[2])
    chunk = np.searchsorted(starts, queue, side="right") - 1
    chunk[cached[queue] == 1] = nchunks
    assert np.array_equal(x.get(cid)[:queue.size], chunk)
    live = chunk < nchunks
    got = x.get(cnt)
    lines = 2 * row_lines(indptr, 4)
    assert np.array_equal(got[0], np.bincount(chunk[live], minlength=nchunks))
    assert np.array_equal(got[1], np.bincount(chunk[live], weights=deg[queue][live],
                                              minlength=nchunks))
    assert np.array_equal(got[2], np.bincount(chunk[live], weights=lines[queue][live],
                                              minlength=nchunks))
    # hotness: degrees of the queue's rows from `first` on, added to what is there
    first = 100
    hot = x.put(np.full(n, 3, np.int64))
    x.chunks.chunk_hotness(d_indptr, d_queue, queue.size, first, hot)
    x.chunks.chunk_hotness(d_indptr, d_queue, 40, first, hot)
    want = np.full(n, 3, np.int64)
    for q in (queue, queue[:40]):
        far = q[q >= first]
        want[far] += deg[far]
    assert np.array_equal(x.get(hot), want)
    # the cache load: rows back to back, ascending, readable through chunk_index's row index
    rows = np.sort(rng.choice(np.arange(n), 60, replace=False)).astype(np.int64)
    rows = np.union1d(rows, [6, 7, 8]).astype(np.int64)    # the long row and its neighbours
    offsets = np.concatenate([[0], np.cumsum(deg[rows])]).astype(np.int64)
    total = int(offsets[-1])
    d_rows, d_offsets = x.put(rows), x.put(offsets)
    out_ids, out_w = x.put(np.zeros(total + 5, np.int32)), x.put(np.zeros(total + 5, np.float32))
    x.chunks.chunk_cache_load(d_indptr, x.put(indices), d_rows, rows.size, d_offsets, out_ids)
    x.chunks.chunk_cache_load(d_indptr, x.put(weights), d_rows, rows.size, d_offsets, out_w)
    index = x.put(np.zeros(n + 1, np.int64))
    x.chunks.chunk_index(d_rows, rows.size, d_offsets, index)
    ids, w, index = x.get(out_ids), x.get(out_w), x.get(index)
    assert not ids[total:].any() and not w[total:].any()
    for v in rows:
        a, b = index[v], index[v + 1]
        assert np.array_equal(ids[a:b], indices[indptr[v]:indptr[v + 1]])
        assert np.array_equal(w[a:b], weights[indptr[v]:indptr[v + 1]])
