"""Graph readers, the .npz writer and the convert CLI.

Expected values come from hand-written edges, scipy.io.mmread, np.loadtxt and the counts stated
in shared/data/PROVENANCE.md, never from the code under test.
"""

import gzip
import io as _io
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from kernels_cpu import parse as kparse
from totem_py import io as tio
from totem_py.errors import InputError
from totem_py.generators import generate
from totem_py.io import load, save_npz

from tests.support import SHARED_DATA
from tests.support.cli import run_cli, run_here

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"

# The tiny graph of tests/data: undirected edges (u, v, weight) stored in both directions,
# a self-loop on 5, vertex 4 isolated; 6 vertices, 11 directed edges.
TINY_UNDIRECTED = [(0, 1, 2), (0, 2, 3), (1, 2, 5), (2, 3, 7), (3, 5, 11), (5, 5, 13)]
TINY = sorted({(u, v, w) for u, v, w in TINY_UNDIRECTED} | {(v, u, w) for u, v, w in TINY_UNDIRECTED})
TINY_FILES = {  # file -> weighted?
    "tiny.txt": False, "tiny.el": False, "tiny.csv": True, "tiny.wel": True, "tiny.mtx": True,
    "tiny_sym.mtx": False, "tiny.gr": True, "tiny.txt.gz": False, "tiny_sym.mtx.gz": False,
}


def edges_of(graph):
    """Sorted (u, v, w) triples of a graph (w = 1 when unweighted)."""
    src = np.repeat(np.arange(graph.n_vertices), np.diff(graph.indptr))
    w = graph.weights if graph.weights is not None else np.ones(graph.n_edges)
    return sorted(zip(src.tolist(), graph.indices.tolist(), w.tolist()))


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def assert_input_error(path, line=None, match=None):
    """Loading `path` raises InputError naming the file (and the line, when given)."""
    with pytest.raises(InputError) as info:
        load(path)
    message = str(info.value)
    where = f"{path}:{line}:" if line is not None else str(path)
    assert message.startswith(where), message
    if match is not None:
        assert match in message, message
    return message


# ---------------------------------------------------------------- every format, same graph

@pytest.mark.parametrize("name", sorted(TINY_FILES))
def test_tiny_graph_in_every_format(name):
    g = load(DATA / name)
    assert g.n_vertices == 6 and g.n_edges == 11
    assert g.indptr.dtype == np.int64 and g.indices.dtype == np.int32
    assert (g.weights is not None) == TINY_FILES[name]
    expected = TINY if TINY_FILES[name] else [(u, v, 1.0) for u, v, _ in TINY]
    assert edges_of(g) == sorted(expected)
    assert g.out_degree[4] == 0


@pytest.mark.parametrize("name", ["tiny.mtx", "tiny_sym.mtx"])
def test_mtx_matches_scipy(name):
    g = load(DATA / name)
    expected = sp.csr_matrix(scipy.io.mmread(DATA / name))
    ours = sp.csr_matrix((g.weights if g.weights is not None else np.ones(g.n_edges),
                          g.indices, g.indptr), shape=(g.n_vertices, g.n_vertices))
    assert expected.shape == ours.shape
    assert (expected != ours).nnz == 0


def test_symmetric_mtx_is_undirected_and_not_doubled():
    g = load(DATA / "tiny_sym.mtx")
    assert not g.directed
    assert load(DATA / "tiny_sym.mtx", undirected=True).n_edges == 11


def test_undirected_adds_reverse_edges():
    g = load(DATA / "tiny.el", undirected=True)
    assert not g.directed and g.n_edges == 22
    assert edges_of(g) == sorted([(u, v, 1.0) for u, v, _ in TINY] * 2)


def test_rows_keep_file_order_and_parallel_edges(tmp_path):
    g = load(write(tmp_path, "order.txt", "0 3\n0 1\n0 3\n2 2\n0 2\n2 2\n"))
    assert g.indices[g.indptr[0]:g.indptr[1]].tolist() == [3, 1, 3, 2]
    assert g.indices[g.indptr[2]:g.indptr[3]].tolist() == [2, 2]   # self-loops kept, twice


def test_float_weights_and_separators(tmp_path):
    path = write(tmp_path, "w.txt", "0,1,1.5\n1\t0  -2e-3\r\n 0 ,0, +3.25E2 \n1 1 7\n")
    g = load(path)
    assert edges_of(g) == sorted([(0, 1, 1.5), (1, 0, -0.002), (0, 0, 325.0), (1, 1, 7.0)])


def test_bom_and_no_trailing_newline(tmp_path):
    g = load(write(tmp_path, "b.csv", b"\xef\xbb\xbf0,1\n1,2"))
    assert edges_of(g) == [(0, 1, 1.0), (1, 2, 1.0)]


def test_chunk_boundaries(tmp_path, monkeypatch):
    """Tiny chunks: lines, comments and CRLF split across reads give the same graph."""
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 300, 2000), rng.integers(0, 300, 2000)
    lines = []
    for i, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        if i % 97 == 0:
            lines.append("# a comment line that is longer than one chunk of the reader ..........")
        lines.append(f"{u}\t{v}\t{i % 13}.5")
    text = "\r\n".join(lines) + "\r\n"
    monkeypatch.setattr(tio, "CHUNK_BYTES", 37)
    g = load(write(tmp_path, "chunks.txt", text))
    expected = sp.csr_matrix((np.arange(2000) % 13 + 0.5, (src, dst)), shape=(300, 300))
    ours = sp.csr_matrix((g.weights, g.indices, g.indptr), shape=(300, 300))
    assert (expected != ours).nnz == 0 and g.n_edges == 2000
    # the error line is counted across chunks
    bad = text.split("\r\n")
    bad[1234] = "17 x"
    assert_input_error(write(tmp_path, "chunks_bad.txt", "\r\n".join(bad)), line=1235, match="'x'")


def test_gzip_detected_by_magic_bytes(tmp_path):
    path = write(tmp_path, "packed.el", gzip.compress((DATA / "tiny.el").read_bytes()))
    assert edges_of(load(path)) == [(u, v, 1.0) for u, v, _ in TINY]


def test_wide_ids_are_reported_by_the_scanner():
    """Ids past int32 make the reader switch to int64 arrays (too big to load here)."""
    buf = np.frombuffer(b"0 1\n5 3000000000\n", dtype=np.uint8)
    src, dst, w = np.empty(3, np.int32), np.empty(3, np.int32), np.empty(3)
    res = kparse.scan_edges(buf, 0, buf.size, ord("#"), ord("%"), 0, -1, 0, False,
                            1 << 62, 1 << 62, 1 << 62, np.iinfo(np.int32).max, src, dst, w,
                            np.empty(3, np.int64))
    assert res[0] == 1 and res[3] == kparse.WIDE_ID and res[4] == 1
    src, dst = np.empty(3, np.int64), np.empty(3, np.int64)
    res = kparse.scan_edges(buf, 0, buf.size, ord("#"), ord("%"), 0, -1, 0, False,
                            1 << 62, 1 << 62, 1 << 62, np.iinfo(np.int64).max, src, dst, w,
                            np.empty(3, np.int64))
    assert res[:4] == (2, 0, 3000000000, kparse.OK) and dst[1] == 3000000000


# ---------------------------------------------------------------- bad input

def test_missing_file(tmp_path):
    assert_input_error(tmp_path / "nope.txt", match="no such file")


def test_unknown_file_type(tmp_path):
    assert_input_error(write(tmp_path, "graph.xyz", "0 1\n"), match="unknown file type")


def test_empty_file(tmp_path):
    assert_input_error(write(tmp_path, "empty.txt", ""), line=1, match="empty")
    assert_input_error(write(tmp_path, "comments.el", "# a\n\n% b\n"), line=3, match="no edges")
    assert_input_error(write(tmp_path, "empty.mtx", ""), line=1, match="empty")
    assert_input_error(write(tmp_path, "empty.gr", ""), line=1, match="empty")


def _piece_text(n=600, weighted=True):
    """Lines of a text edge list with comments, blank lines and weights the scanner cannot
    compute exactly, and its edges."""
    rng = np.random.default_rng(11)
    src, dst = rng.integers(0, 50, n), rng.integers(0, 50, n)
    w = np.round(rng.random(n), 17) + np.arange(n)
    lines = []
    for i in range(n):
        if i % 37 == 0:
            lines += ["# comment", ""]
        lines.append(f"{src[i]} {dst[i]}" + (f" {float(w[i])!r}" if weighted else ""))
    return lines, src, dst, w


def test_pieces_scanned_at_once(tmp_path, monkeypatch):
    """Chunks cut into pieces of a few lines each, scanned in parallel: the same graph (rows in
    file order, weights as float() reads them) and the first error with its line."""
    monkeypatch.setattr(tio, "PIECE_BYTES", 16)
    lines, src, dst, w = _piece_text()
    g = load(write(tmp_path, "pieces.txt", "\n".join(lines) + "\n"))
    assert edges_of(g) == sorted(zip(src.tolist(), dst.tolist(), w.tolist()))
    order = np.argsort(src, kind="stable")
    assert g.indices.tolist() == dst[order].tolist() and np.array_equal(g.weights, w[order])
    for rows, line, match in [({600: "3 x", 40: "1 y 2"}, 41, "'y'"),
                              ({300: "1 2"}, 301, "missing weight")]:
        bad = list(lines)
        for i, text in rows.items():
            bad[i] = text
        assert_input_error(write(tmp_path, "bad_pieces.txt", "\n".join(bad)), line=line,
                           match=match)
    unweighted = _piece_text(weighted=False)[0]
    for i in range(500, len(unweighted)):   # pieces that decide the weight column apart
        unweighted[i] += " 7"
    assert_input_error(write(tmp_path, "mixed.txt", "\n".join(unweighted)), line=501,
                       match="third column")


@pytest.mark.parametrize("content, line, match", [
    ("0 1\n1 x\n", 2, "'x'"),
    ("0 {x}\n", 1, "'{x}'"),
    ("0 1\n1.5 2\n", 2, "'1.5'"),
    ("0 1\n\n-1 2\n", 3, "negative"),
    ("0 1\n3\n", 2, "one column"),
    ("0 1\n3 \t\r\n", 2, "one column"),
    ("0 1 1\n1 2 abc\n", 2, "'abc'"),
    ("0 1 1\n1 2 1e\n", 2, "not a number"),
    ("0 1 1\n1 2\n", 2, "missing weight"),
    ("0 1\n1 2 3\n", 2, "third column"),
    ("0 123456789012345678901234\n", 1, "too large"),
])
def test_bad_edge_list_line(tmp_path, content, line, match):
    assert_input_error(write(tmp_path, "bad.txt", content), line=line, match=match)


def test_wel_needs_weights(tmp_path):
    assert_input_error(write(tmp_path, "bad.wel", "# s t w\n0 1\n"), line=2, match="missing weight")


def test_huge_id_is_refused_before_allocating(tmp_path):
    assert_input_error(write(tmp_path, "huge.txt", "0 900000000000000000\n"), match="GiB")


MTX_HEAD = "%%MatrixMarket matrix coordinate pattern general\n"


@pytest.mark.parametrize("header", [
    "%%MatrixMarket matrix array real general",
    "%%MatrixMarket matrix coordinate complex general",
    "%%MatrixMarket matrix coordinate real hermitian",
    "%%MatrixMarket matrix coordinate real skew-symmetric",
    "%%MatrixMarket vector coordinate real general",
    "%%MatrixMarket matrix coordinate real",
    "3 3 1",
])
def test_unsupported_mtx_header(tmp_path, header):
    assert_input_error(write(tmp_path, "bad.mtx", header + "\n3 3 1\n1 2 1.0\n"), line=1)


@pytest.mark.parametrize("body, line, match", [
    ("% c\n3 3 3\n1 2\n2 3\n", 3, "declares 3 entries but the file has 2"),
    ("3 3 1\n1 2\n2 3\n", 4, "more entries than the 1 declared"),
    ("3 3 2\n1 2\n4 1\n", 4, "beyond the declared size"),
    ("3 2 1\n1 3\n", 3, "beyond the declared size"),
    ("3 3 1\n0 1\n", 3, "below 1"),
    ("3 3 1\n1 2 5\n", 3, "extra column"),
    ("3 3\n1 2\n", 2, "size line"),
    ("% only comments\n", 2, "header"),
    ("0 0 0\n", 2, "no vertices"),
])
def test_bad_mtx_body(tmp_path, body, line, match):
    assert_input_error(write(tmp_path, "bad.mtx", MTX_HEAD + body), line=line, match=match)


def test_mtx_weight_not_a_number(tmp_path):
    path = write(tmp_path, "bad.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 x\n")
    assert_input_error(path, line=3, match="'x'")


def test_mtx_without_entries_keeps_declared_vertices(tmp_path):
    g = load(write(tmp_path, "iso.mtx", MTX_HEAD + "4 4 0\n"))
    assert g.n_vertices == 4 and g.n_edges == 0


@pytest.mark.parametrize("content, line, match", [
    ("c x\np sp 3 2\na 1 2 1\n", 2, "declares 2 arcs but the file has 1"),
    ("p sp 3 1\na 1 2 1\na 2 3 1\n", 3, "more arcs"),
    ("p sp 3 1\na 1 4 1\n", 2, "beyond the declared 3 vertices"),
    ("p sp 3 1\na 0 1 1\n", 2, "below 1"),
    ("p sp 3 1\nx 1 2 1\n", 2, "arc line"),
    ("p sp 3 1\na 1 2\n", 2, "missing arc weight"),
    ("p sp 3 1\na 1 2 w\n", 2, "'w'"),
    ("c only\na 1 2 1\n", 2, "problem line"),
    ("p sp 3\n", 1, "problem line"),
])
def test_bad_gr(tmp_path, content, line, match):
    assert_input_error(write(tmp_path, "bad.gr", content), line=line, match=match)


def test_corrupt_gzip(tmp_path):
    packed = gzip.compress((DATA / "tiny.txt").read_bytes() * 50)
    assert_input_error(write(tmp_path, "cut.txt.gz", packed[:len(packed) // 2]), match="cannot read")


# ---------------------------------------------------------------- npz

@pytest.mark.parametrize("name", ["tiny.wel", "tiny_sym.mtx"])
def test_npz_round_trip(tmp_path, name):
    g = load(DATA / name)
    save_npz(g, tmp_path / "g.npz")
    h = load(tmp_path / "g.npz")
    assert np.array_equal(g.indptr, h.indptr) and np.array_equal(g.indices, h.indices)
    assert h.directed == g.directed and h.indices.dtype == g.indices.dtype
    assert (h.weights is None) == (g.weights is None)
    if g.weights is not None:
        assert np.array_equal(g.weights, h.weights)
    # gzip-compressed npz is read too
    write(tmp_path, "g.npz.gz", gzip.compress((tmp_path / "g.npz").read_bytes()))
    assert np.array_equal(load(tmp_path / "g.npz.gz").indices, g.indices)


def test_npz_round_trip_generated(tmp_path):
    g = generate("rmat:8", undirected=True, weighted=True)
    save_npz(g, tmp_path / "r.npz")
    h = load(tmp_path / "r.npz")
    assert not h.directed and np.array_equal(g.weights, h.weights)
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]   # no temporary left behind


def _npz(tmp_path, **arrays):
    base = {"format": np.array(tio.NPZ_FORMAT), "version": np.array(tio.NPZ_VERSION),
            "directed": np.array(True), "indptr": np.array([0, 1, 2]), "indices": np.array([1, 0])}
    base.update(arrays)
    base = {k: v for k, v in base.items() if v is not None}
    path = tmp_path / "bad.npz"
    np.savez(path, **base)
    return path


@pytest.mark.parametrize("arrays, match", [
    ({"indptr": None}, "missing indptr"),
    ({"format": np.array("other")}, "format tag"),
    ({"version": np.array(99)}, "version"),
    ({"indptr": np.array([0, 2, 1])}, "indptr"),
    ({"indptr": np.array([0, 1, 3])}, "indptr"),
    ({"indices": np.array([1, 2])}, "outside"),
    ({"indices": np.array([1.0, 0.0])}, "indices"),
    ({"weights": np.array([1.0])}, "weights"),
    ({"directed": np.array(1.5)}, "directed"),
])
def test_bad_npz(tmp_path, arrays, match):
    assert_input_error(_npz(tmp_path, **arrays), match=match)


def test_npz_not_an_archive(tmp_path):
    assert_input_error(write(tmp_path, "text.npz", "0 1\n"), match="not a valid .npz")


# ---------------------------------------------------------------- convert CLI

@pytest.mark.slow
def test_convert_round_trip(tmp_path):
    out = tmp_path / "tiny.npz"
    res = run_here(DATA / "tiny.gr", out, "--undirected", module="totem_py.convert")
    assert res.returncode == 0, res.stderr
    g = load(out)
    assert not g.directed and edges_of(g) == sorted(TINY * 2)


@pytest.mark.slow
def test_convert_bad_input(tmp_path):
    bad = write(tmp_path, "bad.txt", "0 1\n2 x\n")
    out = tmp_path / "out.npz"
    res = run_cli(bad, out, module="totem_py.convert")      # a process: no traceback at all
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}:2:"), res.stderr
    assert "Traceback" not in res.stderr and not out.exists()
    for args in [(), (DATA / "tiny.txt", tmp_path / "out.txt"), (tmp_path / "nope.txt", out)]:
        res = run_here(*args, module="totem_py.convert")
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
        assert res.stderr.startswith("error: ")
    assert list(tmp_path.iterdir()) == [bad]


# ---------------------------------------------------------------- real files (shared/data)

# file, kind, vertices (distinct ids, or the declared size), edge lines, self-loop lines
REAL = [
    ("wiki-Vote.txt.gz", "edges", 7115, 103689, 0),
    ("facebook_combined.txt.gz", "edges", 4039, 88234, 0),
    ("soc-sign-bitcoinotc.csv.gz", "edges", 5881, 35592, 0),
    ("email-Enron.txt.gz", "edges", 36692, 367662, 0),
    ("soc-Slashdot0902.txt.gz", "edges", 82168, 948464, 78303),
    ("web-NotreDame.txt.gz", "edges", 325729, 1497134, 27455),
    ("ca-GrQc.txt.gz", "edges", 5242, 28980, 12),
    ("rome99.gr.gz", "gr", 3353, 8870, 0),
    ("road-usroads.mtx.gz", "symmetric", 129164, 165435, 0),
    ("road-luxembourg-osm.mtx.gz", "symmetric", 114599, 119666, 0),
]


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not here")
@pytest.mark.parametrize("name, kind, vertices, lines, loops", REAL)
def test_real_file_counts(name, kind, vertices, lines, loops):
    g = load(SHARED_DATA / name)
    src = g.edge_sources()
    assert np.count_nonzero(src == g.indices) == loops
    if kind == "edges":
        touched = np.diff(g.indptr) + np.bincount(g.indices, minlength=g.n_vertices)
        assert np.count_nonzero(touched) == vertices and g.n_edges == lines
    elif kind == "gr":
        assert g.n_vertices == vertices and g.n_edges == lines
        assert g.weights.min() == 1 and g.weights.max() == 12711
    else:   # each stored entry stands for both directions (no self-loops in these files)
        assert g.n_vertices == vertices and g.n_edges == 2 * lines and not g.directed


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not here")
def test_real_weighted_csv():
    g = load(SHARED_DATA / "soc-sign-bitcoinotc.csv.gz")
    assert g.weights.min() == -10 and g.weights.max() == 10 and np.all(g.weights != 0)
    assert np.unique(g.weights).size == 20


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not here")
def test_real_edge_list_matches_loadtxt():
    """Same CSR, rows in file order, as an independent parse with np.loadtxt."""
    with gzip.open(SHARED_DATA / "wiki-Vote.txt.gz", "rt") as f:
        edges = np.loadtxt(f, dtype=np.int64, comments="#")
    order = np.argsort(edges[:, 0], kind="stable")
    g = load(SHARED_DATA / "wiki-Vote.txt.gz")
    assert g.n_vertices == edges.max() + 1
    assert np.array_equal(g.indices, edges[order, 1])
    assert np.array_equal(g.edge_sources(), edges[order, 0])


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="shared/data is not here")
def test_real_mtx_matches_scipy():
    with gzip.open(SHARED_DATA / "road-usroads.mtx.gz", "rb") as f:
        expected = sp.csr_matrix(scipy.io.mmread(_io.BytesIO(f.read())))
    g = load(SHARED_DATA / "road-usroads.mtx.gz")
    ours = sp.csr_matrix((np.ones(g.n_edges), g.indices, g.indptr), shape=expected.shape)
    assert (expected != ours).nnz == 0
