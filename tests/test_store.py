"""The .tcsr format (totem_py/store.py, docs/guide/graph_format.md): what is written reads back
the same, whole or by rows; a file written by hand from the documented layout reads; `convert`
writes it and `--graph` reads it; bad files are exit 2 with one line naming the file."""

import json
from pathlib import Path

import numpy as np
import pytest

from totem_py import generate, io, store
from totem_py.graph import Graph

from tests.support.cli import run_cli, run_here
from tests.support.toys import toy_graphs, with_random_weights

ROOT = Path(__file__).resolve().parents[1]


def graphs():
    out = dict(toy_graphs())
    out["weighted"] = with_random_weights(out["rmat_small"], 5)
    out["undirected"] = generate("rmat:8", seed=3, undirected=True)
    return out


@pytest.mark.parametrize("name", sorted(graphs()))
def test_what_is_written_reads_back_whole_and_by_rows(name, tmp_path):
    g = graphs()[name]
    path = tmp_path / "g.tcsr"
    store.write(g, path)
    h = store.load(path)
    assert h.directed == g.directed and h.n_vertices == g.n_vertices
    assert np.array_equal(h.indptr, g.indptr) and np.array_equal(h.indices, g.indices)
    assert h.indices.dtype == np.int32
    assert (h.weights is None) == (g.weights is None)
    if g.weights is not None:
        assert np.array_equal(h.weights, g.weights)
    s = store.Store(path)
    n = g.n_vertices
    for lo, hi in ((0, n), (0, n // 2), (n // 3, n), (n // 2, n // 2)):
        indptr, ids, weights = s.rows(lo, hi)
        a, b = int(g.indptr[lo]), int(g.indptr[hi])
        assert s.edge_range(lo, hi) == (a, b)
        assert np.array_equal(indptr, g.indptr[lo:hi + 1] - a)
        assert np.array_equal(ids, g.indices[a:b])
        if g.weights is not None:
            assert np.array_equal(weights, g.weights[a:b])
        assert np.array_equal(s.in_degrees(lo, hi),
                              np.bincount(g.indices, minlength=n)[lo:hi])


def test_undirected_reads_add_the_reverse_of_a_directed_graph(tmp_path):
    g = toy_graphs()["rmat_small"]
    store.write(g, tmp_path / "g.tcsr")
    h = store.load(tmp_path / "g.tcsr", undirected=True)
    want = g.to_undirected()
    assert not h.directed and np.array_equal(h.indptr, want.indptr)
    assert np.array_equal(h.indices, want.indices)


def write_by_hand(path, indptr, ids, directed=True, weights=None, ids_dtype="<i8"):
    """A .tcsr file from docs/guide/graph_format.md alone: magic, header length, JSON header,
    then each array at a multiple of 4096."""
    arrays = {"offsets": np.asarray(indptr, "<i8"), "ids": np.asarray(ids, ids_dtype)}
    if weights is not None:
        arrays["weights"] = np.asarray(weights, "<f8")
    table, offset, body = {}, 4096, b""
    for name, a in arrays.items():
        table[name] = {"dtype": a.dtype.str, "offset": offset, "count": int(a.size)}
        body += a.tobytes() + b"\0" * (-a.nbytes % 4096)
        offset += a.nbytes + (-a.nbytes % 4096)
    header = json.dumps({"format": "totem_py-tcsr", "version": 1, "directed": directed,
                         "vertices": len(indptr) - 1, "edges": len(ids),
                         "arrays": table}).encode()
    head = b"TOTEMCSR" + np.uint64(len(header)).astype("<u8").tobytes() + header
    Path(path).write_bytes(head + b"\0" * (4096 - len(head)) + body)


def test_a_file_written_from_the_documented_layout_reads(tmp_path):
    path = tmp_path / "hand.tcsr"
    write_by_hand(path, [0, 2, 3, 3], [1, 2, 0], weights=[1.5, 2.0, 3.0])
    g = store.load(path)
    assert g.n_vertices == 3 and g.directed
    assert g.indices.dtype == np.int32 and list(g.indices) == [1, 2, 0]   # <i8 ids accepted
    assert list(g.weights) == [1.5, 2.0, 3.0]
    assert store.Store(path).in_degrees(0, 3) is None                    # in_degrees optional


@pytest.mark.slow
def test_convert_writes_it_and_the_command_reads_it(tmp_path):
    path = tmp_path / "tiny.tcsr"
    proc = run_here("tests/data/tiny.wel", path, module="totem_py.convert")
    assert proc.returncode == 0, proc.stderr
    assert "tiny.tcsr" in proc.stdout and "weighted" in proc.stdout
    want = io.load(ROOT / "tests/data/tiny.wel")
    got = store.load(path)
    assert np.array_equal(got.indices, want.indices) and np.array_equal(got.weights, want.weights)
    outs = []
    for graph in ("tests/data/tiny.wel", path):
        out = tmp_path / f"{len(outs)}.npy"
        proc = run_here("--graph", graph, "--algorithm", "sssp", "--source", "0", "--device",
                        "emulated", "--output", out, "--quiet", "--verify")
        assert proc.returncode == 0, proc.stderr
        outs.append(np.load(out))
    assert np.array_equal(*outs)
    proc = run_here("tests/data/tiny.txt", tmp_path / "x.bin", module="totem_py.convert")
    assert proc.returncode == 2 and ".npz or .tcsr" in proc.stderr


def corrupt(tmp_path, how):
    """A good file with one thing broken, by `how`."""
    path = tmp_path / "bad.tcsr"
    g = with_random_weights(toy_graphs()["rmat_small"], 2)
    store.write(g, path)
    raw = bytearray(path.read_bytes())
    s = store.Store(path)
    n_header = int(np.frombuffer(raw[8:16], "<u8")[0])
    header = json.loads(raw[16:16 + n_header])

    def put(name, index, value):
        dtype, offset = s.arrays[name]
        at = offset + index * dtype.itemsize
        raw[at:at + dtype.itemsize] = np.array([value], dtype).tobytes()

    def new_header(h):
        text = h if isinstance(h, bytes) else json.dumps(h).encode()
        raw[8:4096] = (np.uint64(len(text)).astype("<u8").tobytes() + text
                       + b"\0" * (4096 - 16 - len(text)))
    if how == "magic":
        raw[:8] = b"TOTEMCSV"
    elif how == "json":
        raw[16] = ord("[")
    elif how == "version":
        new_header(dict(header, version=7))
    elif how == "cut":
        del raw[s.arrays["weights"][1] + 100:]
    elif how == "id":
        put("ids", 17, 10 ** 6)
    elif how == "nan":
        put("weights", 5, np.nan)
    elif how == "offsets":
        put("offsets", 3, 10 ** 5)
    elif how == "count":
        header["arrays"]["ids"]["count"] -= 1
        new_header(header)
    elif how == "in_degrees":
        put("in_degrees", 0, 12345)
    elif how == "overlap":      # the weights read the ids' bytes
        header["arrays"]["weights"]["offset"] = header["arrays"]["ids"]["offset"]
        new_header(header)
    elif how == "inside":       # the ids start inside the offsets
        header["arrays"]["ids"]["offset"] = header["arrays"]["offsets"]["offset"] + 8
        new_header(header)
    elif how == "nested":
        new_header(b"[" * 2000 + b"]" * 2000)
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("how, words", [
    ("magic", "does not start with TOTEMCSR"), ("json", "not JSON"),
    ("version", "unsupported totem_py-tcsr version 7"), ("cut", "outside the file"),
    ("id", "edge 17"), ("nan", "weighs nan"), ("offsets", "decrease at vertex 3"),
    ("count", "'ids' must have"), ("in_degrees", "'in_degrees' do not count"),
    ("overlap", "arrays 'ids' and 'weights' overlap"),
    ("inside", "arrays 'offsets' and 'ids' overlap"), ("nested", "nested too deep")])
def test_bad_files_are_exit_2_with_one_line(tmp_path, how, words):
    path = corrupt(tmp_path, how)
    proc = run_here("--graph", path, "--device", "cpu", "--quiet")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: ") and words in lines[0], \
        proc.stderr


@pytest.mark.slow
def test_missing_file(tmp_path):
    proc = run_cli("--graph", tmp_path / "none.tcsr", "--quiet")     # a process: no traceback
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_zero_vertices(tmp_path):
    store.write(Graph(np.zeros(1, np.int64), np.empty(0, np.int32)), tmp_path / "e.tcsr")
    g = store.load(tmp_path / "e.tcsr")
    assert g.n_vertices == 0 and g.n_edges == 0
