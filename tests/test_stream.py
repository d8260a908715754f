"""Streamed edges (bsp/stream.py) on the emulated GPU: every transfer engine, forced or chosen,
gives the references' answers for every algorithm, partitioning and cpu share; the bookkeeping
(chunks, engine letters, bytes moved) adds up; the chunk kernels match NumPy."""

import numpy as np
import pytest

from bsp import EdgeOptions, Engine
from bsp.stream import MAX_CHUNKS, chunk_starts, row_lines
from kernels_cpu import chunks as k
from kernels_cpu.stream import stream_gather, stream_offsets
from partitioners import partition
from totem_py import generate
from totem_py.errors import InputError
from totem_py.harness import run

from test_engine import STRATEGIES, TOYS, check_matrix
from toys import with_random_weights

TRANSFERS = ("filter", "compaction", "zerocopy", "auto")


def streaming(graph, chunk_bytes=64, fraction=0.3):
    """Options under which a GPU partition holding most of `graph` streams its edges: chunks of
    16 edges, a budget for the staging buffers plus `fraction` of the edges as 4-byte ids."""
    window = 4 * (chunk_bytes // 4 + int(graph.out_degree.max(initial=0)))
    budget = int(fraction * graph.n_edges * 4) + 3 * window * 12
    return dict(budget=budget, chunk_bytes=chunk_bytes)


@pytest.mark.parametrize("transfer", TRANSFERS)
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_engine_matches_the_references(transfer, strategy):
    for name in ("rmat10u", "rmat10"):
        g = with_random_weights(generate("rmat:10", seed=4, undirected=name.endswith("u")), 5)
        check_matrix(g, strategy, devices=("emulated",), shares=(0.5, 0.0), gpus_list=(1, 2),
                     edges=EdgeOptions(transfer, **streaming(g)))


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
