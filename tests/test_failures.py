"""Nothing lost, nothing silently wrong: what hostile-but-fair input gets from the command.

Outputs (checked before any work, written all or nothing, never over a device, a pipe, a link
or the input), host memory (refused with the figures before allocating, under an address-space
limit set in the child so a failure is a MemoryError, never the machine's OOM killer),
weights, line endings, option values and their exit codes, the PageRank verifier, and the one
line every error gets. Expected values are written by hand or come from scipy / the serial
references.
"""

import gzip
import io
import json
import os
import resource
import stat
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from totem_py.algorithms import pagerank
from totem_py.errors import InputError, VerificationError, available_memory
from totem_py.generators import generate
from totem_py.graph import Graph
from totem_py.io import NPZ_FORMAT, NPZ_VERSION, load, save_npz

from tests.support.cli import run_here

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LIMIT = 3 << 30     # address space of a child that must refuse, not allocate


def _limit(nbytes):
    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (nbytes, nbytes))
    return apply


def cli(*args, module="totem_py.run", limit=None, timeout=120, env=None):
    """The command in a child process (with RLIMIT_AS = `limit` bytes when given)."""
    return subprocess.run([sys.executable, "-m", module, *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limit(limit) if limit else None,
                          env=dict(os.environ, **(env or {})))


def run_quiet(*args, **kw):
    return cli("--device", "emulated", "--quiet", *args, **kw)


def inproc(*args):
    """`python -m totem_py.run --device emulated --quiet ARGS` in this process (no start-up
    cost): its exit code and what it printed."""
    return run_here("--device", "emulated", "--quiet", *args)


def one_error(proc, code, *words):
    """`proc` exited with `code` and printed one line containing `words`."""
    assert proc.returncode == code, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def can_mknod(tmp_path):
    try:
        os.mknod(tmp_path / "probe", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError):
        return False
    os.unlink(tmp_path / "probe")
    return True


# ---------------------------------------------------------------- 1. outputs destroy nothing

def test_output_to_a_device_node_writes_into_it(tmp_path):
    """--json and --output on a character device (a private /dev/null and /dev/full) write into
    it and leave the node a device; a full device is exit 2 with the reason."""
    if not can_mknod(tmp_path):
        pytest.skip("mknod needs root")
    null, full = tmp_path / "mynull", tmp_path / "myfull"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    assert inproc("--graph", "rmat:8", "--json", null, "--output", null).returncode == 2
    proc = inproc("--graph", "rmat:8", "--json", null)
    assert proc.returncode == 0, proc.stderr
    one_error(inproc("--graph", "rmat:8", "--output", full), 2, str(full),
              "No space left on device")
    for node in (null, full):
        assert stat.S_ISCHR(os.lstat(node).st_mode)


@pytest.mark.slow
def test_output_to_a_named_pipe(tmp_path):
    """A FIFO is written in place when someone reads it, refused (not waited on) otherwise."""
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    one_error(run_quiet("--graph", "rmat:8", "--json", fifo, timeout=60), 2,
              "no process is reading")
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    proc = run_quiet("--graph", "rmat:8", "--json", fifo, timeout=60)
    reader.join(30)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(got[0])["graph"]["vertices"] == 256
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.slow
@pytest.mark.parametrize("output", ["/dev/stdout", "/proc/self/fd/1"])
def test_output_into_a_pipe_streams(output):
    """--output into the command's stdout, a pipe (no file position to ask for, nothing to
    seek): the whole .npy comes through, more than the pipe's 64 KiB buffer holds."""
    proc = subprocess.run([sys.executable, "-m", "totem_py.run", "--graph", "rmat:14",
                           "--device", "emulated", "--quiet", "--output", output],
                          cwd=ROOT, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    levels = np.load(io.BytesIO(proc.stdout))
    assert levels.shape == (1 << 14,) and len(proc.stdout) > 1 << 17
    assert (levels == 0).sum() == 1 and levels.max() > 1


def test_output_follows_symlinks(tmp_path):
    target = tmp_path / "target.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.npy"
    dangling.symlink_to(tmp_path / "new.npy")
    proc = inproc("--graph", "rmat:8", "--json", link, "--output", dangling)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and json.loads(target.read_text())["graph"]["vertices"] == 256
    assert dangling.is_symlink() and np.load(tmp_path / "new.npy").shape == (256,)


@pytest.mark.slow
def test_output_never_overwrites_the_input_graph(tmp_path):
    graph = tmp_path / "g.npz"
    save_npz(generate("rmat:8"), graph)
    before = graph.read_bytes()
    os.link(graph, tmp_path / "hard.npz")
    (tmp_path / "soft.npz").symlink_to(graph)
    for out in (graph, tmp_path / "." / "g.npz", tmp_path / "hard.npz", tmp_path / "soft.npz"):
        one_error(inproc("--graph", graph, "--output", out), 2, "is the input graph")
        one_error(inproc("--graph", graph, "--json", out), 2, "is the input graph")
    one_error(cli(graph, graph, module="totem_py.convert"), 2, "is the input graph")
    assert graph.read_bytes() == before


def test_two_options_naming_one_file(tmp_path):
    one_error(inproc("--graph", "rmat:8", "--output", tmp_path / "x", "--json",
                        tmp_path / "x"), 2, "--json names the same file as --output")


@pytest.mark.parametrize("make, words", [
    (lambda t: t, ["is a directory"]),
    (lambda t: t / "no" / "x.json", ["no such folder"]),
])
def test_unwritable_outputs(tmp_path, make, words):
    one_error(inproc("--graph", "rmat:8", "--json", make(tmp_path)), 2, *words)


# ---------------------------------------------------------------- 2. checked first, all or none

@pytest.mark.slow
def test_outputs_are_checked_before_loading(tmp_path):
    """The bad output is reported, not the missing graph: nothing was loaded."""
    one_error(inproc("--graph", tmp_path / "missing.txt", "--output", "/nonexistent/x.npy"),
              2, "/nonexistent/x.npy", "no such folder")
    one_error(cli(tmp_path / "missing.txt", "/nonexistent/x.npz", module="totem_py.convert"),
              2, "/nonexistent/x.npz")


@pytest.mark.slow
def test_outputs_are_all_or_nothing(tmp_path):
    ok = tmp_path / "ok.npy"
    one_error(inproc("--graph", "rmat:8", "--output", ok, "--json", "/nonexistent/x.json"), 2)
    assert not ok.exists()
    # a failure at write time (a pipe nobody reads) leaves the other output as it was
    ok.write_bytes(b"old")
    fifo = tmp_path / "p.fifo"
    os.mkfifo(fifo)
    one_error(run_quiet("--graph", "rmat:8", "--output", ok, "--json", fifo), 2, str(fifo))
    assert ok.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.npy", "p.fifo"]  # no temporaries


def test_replaced_output_keeps_its_permissions(tmp_path):
    out = tmp_path / "r.json"
    out.write_text("old")
    out.chmod(0o640)
    assert inproc("--graph", "rmat:8", "--json", out).returncode == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and out.read_text() != "old"


# ---------------------------------------------------------------- 3. memory, before allocating

@pytest.mark.slow
def test_one_huge_id_is_refused_before_allocating(tmp_path):
    path = tmp_path / "one.txt"
    path.write_text("0 600000000\n")
    one_error(run_quiet("--graph", path, limit=LIMIT), 2, str(path), "600000001 vertices",
              "GiB available")


def _zip_bomb(path, n_vertices):
    """An .npz whose indptr member declares n_vertices + 1 int64 (in its .npy header and in the
    zip's sizes) but holds a few bytes: only its declared sizes can warn."""
    head = _npy_header(np.dtype(np.int64), (n_vertices + 1,))
    arrays = {"format": np.array(NPZ_FORMAT), "version": np.array(NPZ_VERSION),
              "directed": np.array(True), "indices": np.array([0], np.int32)}
    with zipfile.ZipFile(path, "w") as z:
        for name, a in arrays.items():
            with z.open(name + ".npy", "w") as f:
                np.lib.format.write_array(f, a)
        z.writestr("indptr.npy", head + np.zeros(2, np.int64).tobytes())
        local = z.getinfo("indptr.npy").header_offset
    declared = len(head) + 8 * (n_vertices + 1)
    data = bytearray(path.read_bytes())
    struct.pack_into("<I", data, local + 22, declared)         # the local header's size
    at = data.find(b"PK\x01\x02")
    while at >= 0:                                              # the central directory's
        name_length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46:at + 46 + name_length] == b"indptr.npy":
            struct.pack_into("<I", data, at + 24, declared)
        at = data.find(b"PK\x01\x02", at + 46)
    path.write_bytes(bytes(data))


def _npy_header(dtype, shape):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(dtype),
                                               "fortran_order": False, "shape": shape})
    return buf.getvalue()


@pytest.mark.slow
def test_zip_bomb_npz_is_refused_from_its_declared_sizes(tmp_path):
    path = tmp_path / "bomb.npz"
    _zip_bomb(path, 400_000_000)
    with zipfile.ZipFile(path) as z:       # the archive does declare 3.2 GB
        assert z.getinfo("indptr.npy").file_size > 3_200_000_000
    one_error(run_quiet("--graph", path, limit=LIMIT), 2, str(path), "400000000 vertices",
              "GiB available")


@pytest.mark.slow
def test_gzip_stream_is_counted_as_it_grows(tmp_path, monkeypatch):
    """400 MB of '0 1' lines in a 1 MB gzip: refused while streaming, with real figures."""
    path = tmp_path / "yes.txt.gz"
    block = b"0 1\n" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as f:
        for _ in range(100):
            f.write(block)
    assert path.stat().st_size < 4 << 20
    line = one_error(run_quiet("--graph", path, limit=2 << 30, timeout=300), 2, str(path),
                     "GiB available")
    assert "needs about 0.0 GiB" not in line and " 0 GiB" not in line
    # the reader stops counting edges long before the end of the stream
    from totem_py import io as tio
    monkeypatch.setattr(tio, "available_memory", lambda: 256 << 20)
    with pytest.raises(InputError, match=r"loading a graph of 2 vertices and (\d+) edges needs "
                                         r"about 0\.\d+ GiB, 0.25 GiB available") as info:
        load(path)
    edges = int(str(info.value).split(" and ")[1].split()[0])
    assert edges < 30_000_000


def test_partitioning_a_generated_graph_is_checked(monkeypatch):
    """A generated graph too big to partition and run is refused before partitioning."""
    import totem_py
    from totem_py import errors
    g = generate("rmat:10")
    monkeypatch.setattr(errors, "available_memory", lambda: 1 << 20)
    with pytest.raises(InputError, match="partitioning, planning and running a graph of 1024"):
        totem_py.run(g, "bfs", device="emulated")


@pytest.mark.slow
def test_available_memory_respects_the_address_space_limit():
    code = ("from totem_py.errors import available_memory; print(available_memory())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         preexec_fn=_limit(2 << 30), check=True).stdout
    assert int(out) < 2 << 30 and available_memory() > 0


# ---------------------------------------------------------------- 4. non-finite weights

def _npz(path, indptr, indices, weights=None, directed=True):
    arrays = {"format": np.array(NPZ_FORMAT), "version": np.array(NPZ_VERSION),
              "directed": np.array(directed), "indptr": np.array(indptr, np.int64),
              "indices": np.array(indices, np.int32)}
    if weights is not None:
        arrays["weights"] = np.array(weights, np.float64)
    np.savez(path, **arrays)
    return path


@pytest.mark.parametrize("weights, algorithm, words", [
    ([1, 1, np.nan, 1, 1], "sssp", ["edge 1 -> 3 (nan) is not a finite number"]),
    ([-5, 1, np.nan, 1, 1], "bfs", ["edge 1 -> 3 (nan) is not a finite number"]),
    ([-5, 1, np.nan, 1, 1], "sssp", ["edge 1 -> 3 (nan) is not a finite number"]),
    ([1, 1, np.inf, 1, 1], "pagerank", ["(inf) is not a finite number"]),
    ([1, 1, 3, -1, 1], "sssp", ["edge 2 -> 3 (-1.0) is negative"]),
])
def test_npz_bad_weights_are_refused(tmp_path, weights, algorithm, words):
    # 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3, 3 -> 4
    path = _npz(tmp_path / "w.npz", [0, 2, 3, 4, 5, 5], [1, 2, 3, 3, 4], weights)
    one_error(inproc("--graph", path, "--algorithm", algorithm, "--source", 0), 2,
              str(path), *words)


def test_text_weight_too_large_for_a_double(tmp_path):
    path = tmp_path / "w.wel"
    path.write_text("0 1 1\n1 2 1e400\n")
    with pytest.raises(InputError, match=r"w.wel:2: weight '1e400' is not a finite number"):
        load(path)


def test_negative_weight_check_is_nan_proof():
    """Graphs built in Python (no reader) meet the harness's check: NaN hides no negative."""
    import totem_py
    g = Graph([0, 2, 3, 4, 4], [1, 2, 3, 3], [-5, 1, np.nan, 1])
    with pytest.raises(InputError, match="edge 0 -> 1 weighs -5"):
        totem_py.run(g, "sssp", source=0, device="emulated")
    g = Graph([0, 1, 2, 2], [1, 2], [1, np.nan])
    with pytest.raises(InputError, match="edge 1 -> 2 weighs nan"):
        totem_py.run(g, "sssp", source=0, device="emulated")


# ---------------------------------------------------------------- 5. line ends, columns, symmetry

@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"])
def test_every_line_ending(tmp_path, ending):
    path = tmp_path / "g.txt"
    path.write_bytes(ending.join(["# c", "0 1", "1 2", "", "2 3"]).encode() + ending.encode())
    g = load(path)
    assert g.n_vertices == 4 and g.n_edges == 3
    assert g.edge_sources().tolist() == [0, 1, 2] and g.indices.tolist() == [1, 2, 3]
    path.write_bytes(ending.join(["0 1", "1 x"]).encode())
    with pytest.raises(InputError, match=r"g.txt:2: vertex id 'x'"):
        load(path)


def test_cr_line_ends_across_chunks_and_headers(tmp_path, monkeypatch):
    from totem_py import io as tio
    monkeypatch.setattr(tio, "CHUNK_BYTES", 5)          # CRLF and CR cut at every place
    lines = [f"{i} {i + 1}" for i in range(200)]
    path = tmp_path / "g.el"
    path.write_bytes("\r".join(lines[:100]).encode() + b"\r\n" + "\r\n".join(lines[100:]).encode())
    g = load(path)
    assert g.n_edges == 200 and g.indices.tolist() == list(range(1, 201))
    mtx = tmp_path / "g.mtx"
    mtx.write_bytes(b"%%MatrixMarket matrix coordinate pattern general\r% c\r3 3 2\r1 2\r2 3\r")
    g = load(mtx)
    assert g.n_vertices == 3 and g.indices.tolist() == [1, 2]
    gr = tmp_path / "g.gr"
    gr.write_bytes(b"c x\rp sp 3 2\ra 1 2 5\ra 2 3 7\r")
    assert load(gr).weights.tolist() == [5, 7]


@pytest.mark.parametrize("name, content, line", [
    ("g.txt", "0 1 5 7\n", 1),
    ("g.wel", "0 1 5\n1 2 3 9\n", 2),
    ("g.tsv", "0\t1\t5\t7\n", 1),
])
def test_a_fourth_column_is_an_error(tmp_path, name, content, line):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(InputError, match=rf"{name}:{line}: unexpected column '\d' after the "):
        load(path)


def test_csv_skips_columns_after_the_weight(tmp_path):
    """SNAP's signed networks: SOURCE,TARGET,RATING,TIME."""
    path = tmp_path / "s.csv"
    path.write_text("6,2,4,1289241911.72836\n6,5,-2,1289241941.53378\n")
    g = load(path)
    assert g.indices.tolist() == [2, 5] and g.weights.tolist() == [4, -2]


def test_undirected_npz_must_be_symmetric(tmp_path):
    # 0 -> 1, 1 -> 0, 1 -> 2 (no 2 -> 1)
    path = _npz(tmp_path / "a.npz", [0, 1, 3, 3], [1, 0, 2], directed=False)
    one_error(inproc("--graph", path, "--algorithm", "cc"), 2, str(path),
              "edge 1 -> 2 has no reverse 2 -> 1")
    # both directions, but weights differ
    path = _npz(tmp_path / "w.npz", [0, 1, 2], [1, 0], [1.0, 2.0], directed=False)
    with pytest.raises(InputError, match="edge 0 -> 1 of weight 1.0 has no reverse"):
        load(path)
    # parallel edges count: 0 -> 1 twice needs 1 -> 0 twice
    path = _npz(tmp_path / "p.npz", [0, 2, 3], [1, 1, 0], directed=False)
    with pytest.raises(InputError, match="edge 0 -> 1 has no reverse"):
        load(path)
    ok = _npz(tmp_path / "ok.npz", [0, 2, 4, 5], [1, 1, 0, 0, 2], directed=False)
    assert not load(ok).directed
    g = generate("rmat:8", undirected=True, weighted=True)
    save_npz(g, tmp_path / "r.npz")
    assert np.array_equal(load(tmp_path / "r.npz").weights, g.weights)


# ---------------------------------------------------------------- 6. GPU count

@pytest.mark.slow
def test_gpu_count_is_bounded_by_the_vertex_count():
    one_error(inproc("--graph", "rmat:8", "--gpus", 100000000), 2,
              "--gpus 100000000 is more than the graph's 256 vertices")
    import totem_py
    g = generate("rmat:4")
    with pytest.raises(InputError, match="--gpus 17 is more than the graph's 16 vertices"):
        totem_py.run(g, "bfs", gpus=17, device="emulated")
    assert totem_py.run(g, "bfs", gpus=16, device="emulated", verify=True).metrics["verified"]


# ---------------------------------------------------------------- 7. exit codes of option values

@pytest.mark.parametrize("option, value, words", [
    ("--threads", "-1", ["--threads must be at least 1, got -1"]),
    ("--threads", "0", ["--threads must be at least 1, got 0"]),
    ("--seed", "-1", ["--seed must be at least 0"]),
    ("--trials", "-1", ["--trials must be at least 0"]),
    ("--trials", "-5", ["--trials must be at least 0"]),
    ("--gpu-memory", "inf", ["--gpu-memory", "'inf'", "finite"]),
    ("--gpu-memory", "1e400", ["--gpu-memory", "'1e400'"]),
    ("--gpu-memory", "nan", ["--gpu-memory", "'nan'"]),
    ("--chunk-bytes", "inf", ["--chunk-bytes", "'inf'"]),
    ("--chunk-bytes", "16", ["--chunk-bytes must be at least 64"]),
    ("--gpu-cache", "inf", ["--gpu-cache", "'inf'"]),
    ("--gpu-cache", "-1", ["--gpu-cache must be at least 0"]),
    ("--mpi-timeout", "nan", ["--mpi-timeout"]),
    ("--transfer", "warp", ["--transfer must be one of"]),
    ("--cpu-share", "", ["--cpu-share must be a number", "''"]),
    ("--gpu-memory", "", ["--gpu-memory", "''"]),
])
def test_option_values_exit_2(option, value, words):
    one_error(inproc("--graph", "rmat:6", f"{option}={value}"), 2, *words)


# a run whose GPU partition streams its edges (so the transfer profile is read)
STREAMED = ("--graph", "rmat:12", "--gpu-memory", "100K", "--chunk-bytes", "4K")


@pytest.mark.slow
def test_deeply_nested_profile_names_the_file(tmp_path):
    from bsp.transfer_model import load_profile
    path = tmp_path / "p.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(InputError, match="p.json: malformed transfer profile"):
        load_profile(path)
    # through the command, when edges stream
    one_error(run_quiet(*STREAMED, env={"TOTEM_PROFILE": str(path)}), 2, str(path))


@pytest.mark.slow
def test_option_values_under_mpi_exit_2():
    from tests.support.mpi import launch, one_error_line as _one_error_line
    for args, words in ((("--threads", "-1"), "--threads must be at least 1"),
                        (("--gpus", "100000000"), "--gpus 100000000 is more than")):
        proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:6", *args, timeout=120)
        assert proc.returncode == 2, proc.stderr
        _one_error_line(proc, words)


# ---------------------------------------------------------------- 8. the PageRank verifier

def test_pagerank_verifier_sees_two_swapped_vertices():
    import totem_py
    g = generate("rmat:12")
    ranks = totem_py.run(g, "pagerank", iterations=5, device="emulated").values
    pagerank.verify_rounds(g, 5, ranks)                 # the engine's own answer passes
    bad = ranks.copy()
    bad[[1, 2]] = bad[[2, 1]]
    with pytest.raises(VerificationError, match="2 of 4096 vertices"):
        pagerank.verify_rounds(g, 5, bad)


def test_pagerank_verifier_sees_157_zeroed_vertices():
    g = generate("rmat:18")
    ranks = pagerank.rounds(g, 5)
    ranks = (ranks * (1 + 1e-7 * np.random.default_rng(0).standard_normal(ranks.size)))
    pagerank.verify_rounds(g, 5, ranks)                 # float32-sized noise passes
    ranks[np.random.default_rng(1).choice(g.n_vertices, 157, replace=False)] = 0
    with pytest.raises(VerificationError, match="157 of 262144 vertices"):
        pagerank.verify_rounds(g, 5, ranks)


def test_pagerank_verifier_counts_rounds():
    g = generate("rmat:10")
    with pytest.raises(VerificationError):
        pagerank.verify_rounds(g, 5, pagerank.rounds(g, 6))
    with pytest.raises(VerificationError):
        pagerank.verify_rounds(g, 5, np.full(g.n_vertices, np.nan))


# ---------------------------------------------------------------- 9. messages

def test_negative_weight_names_the_file_line(tmp_path):
    path = tmp_path / "g.wel"
    path.write_text("# s t w\n0 1 3\n1 2 -5\n")
    one_error(inproc("--graph", path, "--algorithm", "sssp", "--source", 0), 2,
              f"{path}:3: negative weight '-5'")
    assert inproc("--graph", path, "--algorithm", "bfs", "--source", 0).returncode == 0
    npz = _npz(tmp_path / "n.npz", [0, 1, 2, 2], [1, 2], [3, -5])
    one_error(inproc("--graph", npz, "--algorithm", "sssp", "--source", 0), 2,
              "edge 1 -> 2 (-5.0) is negative")


def test_blank_files_are_not_called_empty(tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_bytes(b" \n\t\n" * 1000)
    with pytest.raises(InputError, match="only comments and blank lines"):
        load(blank)
    wide = tmp_path / "wide.txt"
    wide.write_bytes(b" " * (17 << 20))
    with pytest.raises(InputError, match="wide.txt:1: more than 16 MiB without a line end"):
        load(wide)
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    with pytest.raises(InputError, match="the file is empty"):
        load(empty)


def test_control_bytes_are_escaped(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes(b"0 1\n\x1b[31mred 2\n")
    line = one_error(inproc("--graph", path), 2, r"'\x1b[31mred'")
    assert "\x1b" not in line
    odd = tmp_path / "a\nb.txt"
    odd.write_text("0 x\n")
    one_error(inproc("--graph", odd), 2, r"a\nb.txt:1:")


def test_missing_file_with_a_colon_is_called_missing(tmp_path):
    one_error(inproc("--graph", "my:graph.txt"), 2, "my:graph.txt: no such file")
    one_error(inproc("--graph", "rmatt:12"), 2, "unknown graph generator")


def test_negative_size_is_shown_as_written():
    line = one_error(inproc("--graph", "rmat:6", "--gpu-memory=-5G"), 2, "'-5G'")
    assert "2684354560" not in line and "5368709120" not in line


@pytest.mark.slow
def test_quiet_hides_the_missing_profile_warning(tmp_path):
    env = {"TOTEM_PROFILE": str(tmp_path / "none.json")}
    proc = run_quiet(*STREAMED, env=env)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    proc = cli("--device", "emulated", *STREAMED, env=env)
    assert proc.returncode == 0 and "no transfer profile" in proc.stderr


@pytest.mark.slow
def test_fifo_as_input_is_refused_at_once(tmp_path):
    fifo = tmp_path / "g.txt"
    os.mkfifo(fifo)
    one_error(run_quiet("--graph", fifo, timeout=60), 2, "is a named pipe, not a regular file")


def test_disk_full_names_the_reason(tmp_path):
    if not can_mknod(tmp_path):
        pytest.skip("mknod needs root")
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    line = one_error(inproc("--graph", "rmat:8", "--json", full), 2, "No space left on device")
    assert "None" not in line


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch):
    import importlib
    run = importlib.import_module("totem_py.run")

    def interrupt(*args, **kw):
        raise KeyboardInterrupt
    monkeypatch.setattr(run, "run", interrupt)
    one_error(inproc("--graph", "rmat:8"), 130, "interrupted")


def test_sigterm_while_writing_leaves_no_temporary_file(tmp_path):
    import signal

    from totem_py.outputs import Outputs
    from totem_py.run import sigterm_exits
    target = tmp_path / "out.npy"

    def write(f):
        f.write(b"partial")
        os.kill(os.getpid(), signal.SIGTERM)
        f.write(b"more")
    with pytest.raises(SystemExit) as stop, sigterm_exits():
        Outputs([("--output", target)]).write([write])
    assert stop.value.code == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_long_output_names_are_checked_before_the_run(tmp_path):
    """A name within NAME_MAX is written (its temporary file's name fits too); a longer one is
    refused before the graph is read."""
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    ok = tmp_path / ("n" * (longest - 10) + ".npy")
    assert inproc("--graph", "rmat:8", "--output", ok).returncode == 0
    assert np.load(ok).size == 256 and sorted(tmp_path.iterdir()) == [ok]
    long = tmp_path / ("n" * longest + ".npy")
    one_error(inproc("--graph", tmp_path / "missing.txt", "--output", long), 2,
              "File name too long")


@pytest.mark.slow
def test_a_short_write_names_its_reason(tmp_path):
    """A file that cannot grow (here RLIMIT_FSIZE; a full disk alike) gets the system's reason,
    not NumPy's "N requested and M written", and leaves no temporary file."""
    code = ("import resource, signal, sys, numpy as np\n"
            "from totem_py.errors import InputError\n"
            "from totem_py.outputs import Outputs\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "try:\n"
            "    out = Outputs([('--output', sys.argv[1])])\n"
            "    out.write([lambda f: np.save(f, np.zeros(9999))])\n"
            "except InputError as exc:\n"
            "    print(exc)\n")
    out = tmp_path / "big.npy"
    proc = subprocess.run([sys.executable, "-c", code, out], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert os.strerror(27) in proc.stdout and "requested" not in proc.stdout, proc
    assert list(tmp_path.iterdir()) == []
