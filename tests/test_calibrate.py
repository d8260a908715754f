"""The transfer cost model (bsp/transfer_model.py), its profile file, the compaction gather
(kernels_cpu/stream.py) and `python -m totem_py.calibrate`.

The fallback profile is checked against HyTGraph's equations (1)-(3) written out here from the
paper (section V-A) in units of RTT, not against the module's own formulas; the gather against a
NumPy concatenation of the rows. The calibration itself needs a GPU: `pytest -m gpu` runs it."""

import dataclasses
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bsp import transfer_model as tm
from bsp.transfer_model import (COMPACTION, ENGINES, FILTER, ZEROCOPY, Profile, choose,
                                load_profile, save_profile, zerocopy_lines)
from kernels_cpu.stream import stream_gather, stream_offsets
from totem_py.backend import cuda_device_count
from totem_py.errors import InputError

ROOT = Path(__file__).resolve().parents[1]

# the paper's constants: m = 128-byte requests, MR = 256 per TLP, d1 = 4-byte edges,
# d2 = 8-byte index entries, gamma = 0.625, alpha = 0.8, beta = 0.4; RTT of a saturated TLP on
# PCIe 3.0 x16 = 32 KiB / 12.3 GB/s
M, MR, D1, D2, GAMMA = 128, 256, 4, 8, 0.625
RTT_S = M * MR / 12.3e9
CHUNK_EDGES = 8 << 20            # a 32 MB chunk of int32 edges, the paper's partition size


def paper_costs(chunk_edges, degrees, starts):
    """Tef, Tec, Tiz in RTTs (equations 1-3, Tec without compaction as the paper computes it) for
    a chunk of chunk_edges edges whose active vertices have `degrees` and rows starting at edge
    offsets `starts`."""
    tef = math.ceil(chunk_edges * D1 / M / MR)
    active_edges = int(np.sum(degrees))
    tec = math.ceil((active_edges * D1 + len(degrees) * D2) / M / MR)
    requests = 0
    for d, s in zip(degrees, starts):     # ceil(D d1 / m) + am(v): one request per line touched
        if d:
            requests += ((s + d) * D1 - 1) // M - s * D1 // M + 1
    density = active_edges / chunk_edges
    rtt_zc = GAMMA + (1 - GAMMA) * density
    return tef, tec, math.ceil(requests / MR) * rtt_zc, requests, density


def paper_choice(tef, tec, tiz):
    if tec < 0.8 * tef and tec < 0.4 * tiz:
        return "compaction"
    return "zerocopy" if tiz < tef else "filter"


def model_costs(profile, chunk_edges, degrees, starts):
    degrees, starts = np.asarray(degrees), np.asarray(starts)
    lines = int(zerocopy_lines(starts * D1, degrees * D1).sum())
    density = degrees.sum() / chunk_edges
    return (profile.filter_s(np.array([chunk_edges * D1])),
            profile.compaction_s(np.array([degrees.sum() * D1]), np.array([len(degrees)])),
            profile.zerocopy_s(np.array([lines]), np.array([density])))


# hand-worked chunks of 8M edges; costs in RTTs worked out in the comments
HUBS = (np.full(10, 10_000), np.arange(10) * 320_000)            # 10 rows, 128-byte aligned
LOW_DEGREE = (np.full(100_000, 2), np.arange(100_000) * 80)       # 100K rows of 8 bytes, apart
ALL_ACTIVE = (np.full(1 << 20, 8), np.arange(1 << 20) * 8)         # every vertex, every edge


@pytest.mark.parametrize("name, chunk, want, costs", [
    # Tef = 1024; Tec = ceil((32 MiB + 8 MiB) / 32 KiB) = 1280 > 0.8 Tef; one request per 32-byte
    # row: 1M requests = 4096 TLPs at RTT_zc = RTT (density 1) > Tef: filter
    ("all edges active", ALL_ACTIVE, "filter", (1024, 1280, 4096)),
    # 313 requests per hub, 3130 -> 13 TLPs at RTT_zc = 0.625 + 0.375 x 100000 / 8M = 0.6295:
    # Tiz = 8.18; Tec = ceil(400080 / 32768) = 13 > 0.4 Tiz; Tiz < Tef: zero-copy
    ("few active vertices of high degree", HUBS, "zerocopy", (1024, 13, 8.183)),
    # 100K requests -> 391 TLPs at 0.625 + 0.375 x 200000 / 8M = 0.6339: Tiz = 247.9;
    # Tec = ceil(1.6 MB / 32 KiB) = 49 < 0.8 Tef and < 0.4 Tiz: compaction
    ("many active vertices of low degree", LOW_DEGREE, "compaction", (1024, 49, 247.87)),
])
def test_fallback_reproduces_the_papers_choice(name, chunk, want, costs):
    degrees, starts = chunk
    tef, tec, tiz, _, _ = paper_costs(CHUNK_EDGES, degrees, starts)
    assert (tef, tec) == costs[:2] and tiz == pytest.approx(costs[2], abs=5e-3)
    assert paper_choice(tef, tec, tiz) == want
    p = Profile.fallback()
    got = model_costs(p, CHUNK_EDGES, degrees, starts)
    for seconds, rtts in zip(got, (tef, tec, tiz)):
        assert seconds[0] == pytest.approx(rtts * RTT_S, rel=1e-12)
    code = choose(*got)
    assert code.dtype == np.int8 and ENGINES[code[0]] == want
    assert Profile.choose is choose


def test_fallback_matches_the_equations_on_random_chunks():
    """Random active sets of all sizes: the same costs (in RTT) and, away from exact ties, the
    same engine as equations (1)-(3) and the selection rule."""
    rng = np.random.default_rng(7)
    p = Profile.fallback()
    checked = 0
    for trial in range(300):
        n = int(rng.integers(1, 5000))
        row_degrees = rng.integers(0, int(rng.choice([4, 40, 4000])), n)
        indptr = np.concatenate([[0], np.cumsum(row_degrees)])
        chunk_edges = max(int(indptr[-1]), 1)
        active = np.sort(rng.permutation(n)[:int(rng.integers(1, n + 1))])
        degrees, starts = row_degrees[active], indptr[active]
        tef, tec, tiz, _, _ = paper_costs(chunk_edges, degrees, starts)
        got = [float(c[0]) / RTT_S for c in model_costs(p, chunk_edges, degrees, starts)]
        assert got == pytest.approx([tef, tec, tiz], rel=1e-9)
        margins = [tec - 0.8 * tef, tec - 0.4 * tiz, tiz - tef]
        if min(abs(x) for x in margins) > 1e-6:
            checked += 1
            assert ENGINES[choose(*[np.array([c]) for c in got])[0]] == \
                paper_choice(tef, tec, tiz)
    assert checked > 250


def test_choose_vectorised_and_thresholds():
    tef = np.array([10.0, 10.0, 10.0, 10.0, 10.0])
    tec = np.array([7.9, 8.0, 1.0, 1.0, 1.0])
    tiz = np.array([100.0, 100.0, 2.6, 2.4, 10.0])
    # 7.9 < 0.8 x 10 and < 0.4 x 100: C; 8.0 not < 8, tiz 100 > 10: F; 1 < 0.4 x 2.6: C;
    # 1 not < 0.4 x 2.4 and tiz < tef: Z; 1 < 8 and 1 < 4: C
    assert choose(tef, tec, tiz).tolist() == [COMPACTION, FILTER, COMPACTION, ZEROCOPY, COMPACTION]
    assert choose(10.0, 9.0, 10.0).tolist() == FILTER        # tie tiz == tef: filter (the text)
    assert choose(tef, tec, tiz, alpha=0.5, beta=0.05).tolist() == [FILTER, FILTER, ZEROCOPY,
                                                                    ZEROCOPY, FILTER]
    assert (FILTER, COMPACTION, ZEROCOPY) == (0, 1, 2)
    assert ENGINES == ("filter", "compaction", "zerocopy")
    assert choose([], [], []).shape == (0,)


def test_measured_compaction_cost_counts_the_gather():
    """The paper leaves the CPU gather out; with a measured gather rate of 1 GB/s the
    low-degree chunk above is cheaper by zero-copy than by compaction."""
    degrees, starts = LOW_DEGREE
    slow = Profile(memcpy_h2d_Bps=12.3e9, zerocopy_seq_Bps=12.3e9,
                   zerocopy_random_Bps=12.3e9 / 0.625, compaction_Bps=1e9, tlp_bytes=32768,
                   measured=("compaction",))
    tef, tec, tiz = model_costs(slow, CHUNK_EDGES, degrees, starts)
    assert tec[0] == pytest.approx(49 * RTT_S + 1.6e6 / 1e9)
    assert choose(tef, tec, tiz)[0] == ZEROCOPY
    assert choose(*model_costs(Profile.fallback(), CHUNK_EDGES, degrees, starts))[0] == COMPACTION


def test_zerocopy_interpolation_and_lines():
    p = Profile(memcpy_h2d_Bps=25e9, zerocopy_seq_Bps=20e9, zerocopy_random_Bps=5e9)
    lines = np.array([1000, 1000, 1000, 0])
    t = p.zerocopy_s(lines, np.array([0.0, 0.5, 1.0, 0.3]))
    assert t[0] == pytest.approx(128e3 / 5e9) and t[2] == pytest.approx(128e3 / 20e9)
    assert t[1] == pytest.approx(0.5 * (t[0] + t[2])) and t[3] == 0.0
    assert p.filter_s(np.array([0, 25e9]))[1] == pytest.approx(1.0)
    # the engine kernels' dense rates, where measured, replace the stream's, by kernel kind
    k = dataclasses.replace(p, zerocopy_rows_Bps=10e9, zerocopy_edges_Bps=16e9)
    dense = np.array([1000]), np.array([1.0])
    assert k.zerocopy_s(*dense, warps=True)[0] == pytest.approx(128e3 / 10e9)
    assert k.zerocopy_s(*dense)[0] == pytest.approx(128e3 / 16e9)
    assert k.zerocopy_s(np.array([1000]), np.array([0.0]), True)[0] == pytest.approx(t[0])
    assert p.zerocopy_s(*dense, warps=True)[0] == pytest.approx(t[2])
    with_latency = Profile(memcpy_h2d_Bps=1e9, zerocopy_seq_Bps=1e9, zerocopy_random_Bps=1e9,
                           memcpy_latency_s=1e-5)
    assert with_latency.filter_s(np.array([0, 1000])).tolist() == pytest.approx([0.0, 1e-6 + 1e-5])
    assert np.isinf(Profile.fallback().compaction_Bps) and Profile.fallback().is_fallback
    # requests per row: lines touched, misaligned starts included
    rng = np.random.default_rng(3)
    start, nbytes = rng.integers(0, 10_000, 500) * 4, rng.integers(0, 2_000, 500) * 4
    brute = [len({b // 128 for b in range(s, s + n)}) for s, n in zip(start, nbytes)]
    assert zerocopy_lines(start, nbytes).tolist() == brute
    assert zerocopy_lines(np.array([120, 128, 0]), np.array([16, 128, 0])).tolist() == [2, 1, 0]


def measured_profile():
    return Profile(memcpy_h2d_Bps=52.1e9, zerocopy_seq_Bps=48.5e9, zerocopy_random_Bps=30.25e9,
                   compaction_Bps=6.5e9, memcpy_latency_s=2.5e-6, tlp_bytes=0,
                   zerocopy_rows_Bps=33e9, zerocopy_edges_Bps=36e9,
                   device="NVIDIA H100 80GB HBM3", date="2025-01-01T00:00:00+00:00",
                   measured=("memcpy", "zerocopy", "compaction"),
                   tables={"zerocopy_random_Bps": {"32": 8e9, "128": 30.25e9, "512": 40e9},
                           "compaction_Bps_by_degree": {"2": 3e9, "8": 6.5e9}})


def test_profile_round_trip(tmp_path):
    p = measured_profile()
    path = save_profile(p, tmp_path / "sub" / "profile.json")
    data = json.loads(Path(path).read_text())
    assert data["version"] == 1 and data["device"] == "NVIDIA H100 80GB HBM3" and data["date"]
    for key in ("memcpy_h2d_Bps", "memcpy_latency_s", "zerocopy_seq_Bps", "compaction_Bps",
                "zerocopy_rows_Bps", "zerocopy_edges_Bps"):
        assert data[key] == getattr(p, key)
    assert data["zerocopy_random_Bps"] == {"32": 8e9, "128": 30.25e9, "512": 40e9}
    q = load_profile(path)
    assert q == p and q.tables == p.tables and not q.is_fallback
    # the fallback (infinite compaction rate, TLP rounding) survives a round trip as well
    save_profile(Profile.fallback(), tmp_path / "fallback.json")
    assert json.loads((tmp_path / "fallback.json").read_text())["compaction_Bps"] is None
    assert load_profile(tmp_path / "fallback.json") == Profile.fallback()
    assert not list(tmp_path.glob("**/*.tmp*"))


def test_profile_path_from_environment(tmp_path, monkeypatch):
    path = tmp_path / "env.json"
    save_profile(measured_profile(), path)
    monkeypatch.setenv("TOTEM_PROFILE", str(path))
    assert load_profile() == measured_profile()
    monkeypatch.delenv("TOTEM_PROFILE")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tm.profile_path() == str(tmp_path / ".cache" / "totem_py" / "transfer_profile.json")


def test_missing_profile_warns_once_and_falls_back(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("TOTEM_PROFILE", raising=False)
    assert load_profile() == Profile.fallback()
    assert load_profile() == Profile.fallback()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert str(tmp_path / ".cache" / "totem_py" / "transfer_profile.json") in err[0]
    assert "python -m totem_py.calibrate" in err[0]
    other = tmp_path / "elsewhere.json"
    assert load_profile(other, warn=False) == Profile.fallback()
    assert capsys.readouterr().err == ""
    load_profile(other)
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and f"--output {other}" in line


@pytest.mark.parametrize("text, words", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"version": 2, "memcpy_h2d_Bps": 1}', "version 2"),
    ('{"version": 1, "zerocopy_seq_Bps": 1e9, "zerocopy_random_Bps": 1e9}', "no memcpy_h2d_Bps"),
    ('{"version": 1, "memcpy_h2d_Bps": -5, "zerocopy_seq_Bps": 1e9, "zerocopy_random_Bps": 1e9}',
     "memcpy_h2d_Bps must be a positive number"),
    ('{"version": 1, "memcpy_h2d_Bps": 1e9, "zerocopy_seq_Bps": "fast", '
     '"zerocopy_random_Bps": 1e9}', "zerocopy_seq_Bps"),
    ('{"version": 1, "memcpy_h2d_Bps": 1e9, "zerocopy_seq_Bps": 1e9, '
     '"zerocopy_random_Bps": {"32": 1e9}}', "no 128-byte entry"),
    ('{"version": 1, "memcpy_h2d_Bps": 1e9, "zerocopy_seq_Bps": 1e9, '
     '"zerocopy_random_Bps": 1e9, "zerocopy_rows_Bps": 0}', "zerocopy_rows_Bps must be a positive"),
])
def test_malformed_profile_names_the_file(tmp_path, text, words):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_profile(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and words in message and "\n" not in message


def test_unreadable_profile_names_the_file(tmp_path):
    with pytest.raises(InputError, match=str(tmp_path)):
        load_profile(tmp_path)           # a directory


# ---------------------------------------------------------------- the compaction gather

def random_csr(rng, n, max_degree, index_dtype=np.int32, hubs=()):
    degrees = rng.integers(0, max_degree + 1, n)
    for v, d in hubs:
        degrees[v] = d
    indptr = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    indices = rng.integers(0, max(n, 1), indptr[-1]).astype(index_dtype)
    return indptr, indices, rng.random(indptr[-1])


def reference_gather(indptr, array, queue):
    rows = [array[indptr[v]:indptr[v + 1]] for v in queue]
    return np.concatenate(rows) if rows else array[:0]


@pytest.mark.parametrize("variant", ["dispatch", "serial", "parallel"])
@pytest.mark.parametrize("case", ["empty", "small", "large", "hubs", "int64"])
def test_stream_gather_matches_numpy(case, variant):
    if case == "int64" and variant != "dispatch":
        pytest.skip("the serial/parallel split is covered with int32 indices")
    n, max_degree, qlen, hubs, dtype = {
        "empty": (50, 5, 0, (), np.int32),
        "small": (300, 6, 40, (), np.int32),
        "large": (100_000, 12, 70_000, (), np.int32),
        "hubs": (5_000, 3, 3_000, ((7, 150_000), (8, 0), (4000, 40_000)), np.int32),
        "int64": (20_000, 9, 9_000, (), np.int64)}[case]
    rng = np.random.default_rng(len(case) * 31 + qlen)
    indptr, indices, weights = random_csr(rng, n, max_degree, dtype, hubs)
    queue = rng.permutation(n)[:qlen].astype(np.int64)
    if case == "hubs":
        queue[:3] = [7, 8, 4000]
    queue = np.concatenate([queue, rng.integers(0, n, 5)])      # items past qlen are ignored
    offsets = np.full(qlen + 10, -1, dtype=np.int64)              # longer than qlen + 1
    offs_fn, gather_fn = stream_offsets, stream_gather
    if variant != "dispatch":
        offs_fn, gather_fn = getattr(stream_offsets, variant), getattr(stream_gather, variant)
    total = offs_fn(indptr, queue, qlen, offsets)
    degrees = indptr[queue[:qlen] + 1] - indptr[queue[:qlen]]
    assert total == degrees.sum()
    assert offsets[:qlen + 1].tolist() == np.concatenate([[0], np.cumsum(degrees)]).tolist()
    out = np.full(total + 3, -7, dtype=dtype)
    gather_fn(indptr, indices, queue, qlen, offsets, out)
    assert np.array_equal(out[:total], reference_gather(indptr, indices, queue[:qlen]))
    assert (out[total:] == -7).all()
    out2, wout = np.full(total, -7, dtype=dtype), np.full(total + 2, np.nan)
    gather_fn(indptr, indices, queue, qlen, offsets, out2, weights, wout)
    assert np.array_equal(out2, out[:total])
    assert np.array_equal(wout[:total], reference_gather(indptr, weights, queue[:qlen]))
    assert np.isnan(wout[total:]).all()


# ---------------------------------------------------------------- the command

def calibrate(*args):
    return subprocess.run([sys.executable, "-m", "totem_py.calibrate", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def one_line_error(proc, *words):
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.slow
@pytest.mark.skipif(cuda_device_count() > 0, reason="this machine has a CUDA device")
def test_calibrate_without_a_gpu_is_a_one_line_error(tmp_path):
    out = tmp_path / "p.json"
    proc = calibrate("--output", out, "--quick")
    one_line_error(proc, "GPU", "--cpu-only")
    assert proc.stdout == "" and not out.exists()


@pytest.mark.slow
def test_calibrate_usage_errors(tmp_path):
    one_line_error(calibrate("--bogus"), "--bogus")
    one_line_error(calibrate("--output", tmp_path, "--cpu-only"), str(tmp_path), "directory")
    one_line_error(calibrate("--device-id", "x"), "--device-id")


@pytest.mark.slow
def test_calibrate_cpu_only_writes_a_loadable_profile(tmp_path):
    out = tmp_path / "p.json"
    proc = calibrate("--cpu-only", "--quick", "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert "compaction_Bps" in proc.stdout and str(out) in proc.stdout
    data = json.loads(out.read_text())
    assert data["version"] == 1 and data["measured"] == ["compaction"]
    assert all(v > 0 for v in data["compaction_Bps_by_degree"].values())
    assert all(v > 0 for v in data["compaction_weighted_Bps_by_degree"].values())
    p = load_profile(out)
    assert 0 < p.compaction_Bps < math.inf
    assert p.memcpy_h2d_Bps == Profile.fallback().memcpy_h2d_Bps     # transfer: the paper's
    assert calibrate("--cpu-only", "--quick", "--quiet", "--output", out).stdout == ""


@pytest.mark.slow
def test_importing_never_needs_cupy():
    code = ("import sys, bsp.transfer_model, totem_py.calibrate, kernels_cpu.stream; "
            "assert 'cupy' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_kernel_calls(backend):
    """measure_kernels' two timed calls, given the arrays it gives them (int64 indptr, the
    graph's indices), through every operator backend (tests/ptxcheck: the GPU backend compiles
    them): one pull sets every rank from the in-degree, one push adds each source's share to
    every target's residual."""
    import importlib

    import totem_py
    from totem_py.calibrate import kernel_calls
    g = totem_py.generate("rmat:8", seed=1, undirected=True)
    ops = importlib.import_module(f"{backend.operators}.operators")
    calls, (contrib, rank, share, residual) = kernel_calls(ops, backend.xp,
                                                           backend.put(g.indptr), g.n_vertices)
    assert sorted(calls) == ["edges", "rows"]
    for call in calls.values():
        call(backend.put(g.indices))
    in_degree = np.bincount(g.indices, minlength=g.n_vertices)
    assert np.allclose(backend.get(rank), 0.15 + 0.85 * in_degree, rtol=1e-12)
    assert np.allclose(backend.get(residual), 1e-12 * in_degree, rtol=1e-12)


@pytest.mark.slow
@pytest.mark.gpu
@pytest.mark.skipif(cuda_device_count() == 0, reason="no CUDA device")
def test_calibrate_on_the_gpu(tmp_path):
    out = tmp_path / "p.json"
    proc = calibrate("--quick", "--output", out)
    assert proc.returncode == 0, proc.stderr
    print(proc.stdout)
    data = json.loads(out.read_text())
    assert data["version"] == 1 and data["device"] and data["date"]
    assert data["measured"] == ["memcpy", "zerocopy", "compaction"]
    for key in ("memcpy_h2d_Bps", "zerocopy_seq_Bps", "compaction_Bps", "zerocopy_rows_Bps",
                "zerocopy_edges_Bps", "device_rows_Bps", "device_edges_Bps"):
        assert data[key] > 0, key
    assert data["memcpy_latency_s"] >= 0
    for key in ("zerocopy_random_Bps", "zerocopy_misaligned_Bps"):
        assert sorted(map(int, data[key])) == [32, 64, 128, 256, 512], key
        assert all(v > 0 for v in data[key].values()), key
    for key in ("memcpy_h2d_pinned_Bps_by_bytes", "memcpy_h2d_pageable_Bps_by_bytes",
                "compaction_Bps_by_degree", "compaction_weighted_Bps_by_degree"):
        assert data[key] and all(v > 0 for v in data[key].values()), key
    p = load_profile(out)
    assert not p.is_fallback and p.zerocopy_random_Bps == data["zerocopy_random_Bps"]["128"]
