"""Input that is wrong, or right but unusual, gets a clear error or exactly what it says.

Graphs built from arrays (ids outside the graph, a decreasing indptr, short weights, ids that
would wrap or truncate, an asymmetric "undirected" CSR; the caller's arrays left as they were),
empty fields in delimited text, weights read as Python's float() reads them, Matrix Market
fields and shapes, crafted .tcsr files, and option values of the command and of
totem_py.run. Expected values come from Python's float() and hand-written graphs.
"""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import totem_py
from totem_py import io as tio
from totem_py.errors import InputError
from totem_py.graph import Graph
from totem_py.io import load

from tests.support.cli import run_here

ROOT = Path(__file__).resolve().parents[1]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def refused(path, line, *words, **options):
    """Loading `path` raises InputError naming the file and `line`, with `words`."""
    with pytest.raises(InputError) as info:
        load(path, **options)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert "\n" not in message and all(w in message for w in words), message
    return message


def cli(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "totem_py.run", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def one_line_exit_2(proc, *words):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-2000:]
    assert all(w in lines[0] for w in words), lines[0]
    return lines[0]


# ---------------------------------------------------------------- Graph from arrays

@pytest.mark.parametrize("make, words", [
    (lambda: Graph(np.array([0, 1, 2, 2]), np.array([1, 3])), "indices[1] is 3"),
    (lambda: Graph(np.array([0, 1, 2]), np.array([-1, 0])), "indices[0] is -1"),
    (lambda: Graph(np.array([0, 2, 1, 2]), np.array([1, 0])), "indptr decreases at vertex 1"),
    (lambda: Graph(np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0])), "1 weights for 2"),
    (lambda: Graph(np.array([0, 1, 2]), np.array([1.0, 0.0])), "indices must be"),
    (lambda: Graph(np.array([0.0, 1.5, 2.0]), np.array([1, 0])), "indptr must be"),
    (lambda: Graph(np.array([0, 1]), np.array([2**32 + 2])), "indices[0] is 4294967298"),
    (lambda: Graph(np.array([], np.int64), np.array([], np.int64)), "indptr is empty"),
    (lambda: Graph(np.array([0, 1, 3]), np.array([1, 0])), "from 0 to the 2 edges"),
    (lambda: Graph(np.array([0, 1, 2]), np.array([1, 0]), np.array(["a", "b"])), "weights"),
    (lambda: Graph.from_edges([0, 1], [1, 2**32 + 2], 3), "dst[1] is 4294967298"),
    (lambda: Graph.from_edges([0, 1.5], [1, 2], 3), "src must be a 1-d array of integers"),
    (lambda: Graph.from_edges([0, 5], [1, 2], 3), "src[1] is 5"),
    (lambda: Graph.from_edges([0, 1], [1, 2], 3, weights=[1.0]), "1 weights for 2 edges"),
    (lambda: Graph.from_edges([0, 1], [1], 3), "2 sources for 1 targets"),
    (lambda: Graph.from_edges([0, 1], [1, 2], 2.5), "n_vertices must be"),
    (lambda: Graph.from_edges([0, 1], [1, 2], -1), "n_vertices must be"),
])
def test_bad_arrays_are_a_value_error_naming_what_is_wrong(make, words):
    with pytest.raises(ValueError) as info:
        make()
    assert words in str(info.value), str(info.value)


@pytest.mark.parametrize("make", [
    lambda: Graph(np.array([0, 1, 2, 2]), np.array([1, 2]), directed=False),
    lambda: Graph.from_edges([0, 1], [1, 2], 3, directed=False),
    lambda: Graph.from_edges([0, 1], [1, 0], 2, weights=[1.0, 2.0], directed=False),
    lambda: Graph.from_edges([0, 0, 1], [1, 1, 0], 2, directed=False),
    lambda: Graph.from_scipy(sp.csr_array(np.array([[0, 1], [0, 0]])), directed=False),
])
def test_undirected_needs_every_reverse(make):
    with pytest.raises(ValueError, match="directed=False, but edge .* has no reverse"):
        make()


def test_undirected_in_any_row_order():
    # parallel edges of different weights, rows unsorted: symmetric as multisets
    src, dst = [0, 0, 1, 1, 2, 1], [1, 1, 0, 0, 1, 2]
    g = Graph.from_edges(src, dst, 3, weights=[1.0, 2.0, 2.0, 1.0, 3.0, 3.0], directed=False)
    assert not g.directed and g.asymmetry() is None
    u = Graph.from_edges([2, 0, 1, 1], [1, 1, 0, 2], 3).to_undirected()
    assert Graph(u.indptr, u.indices, directed=False).n_edges == 8


def test_the_callers_arrays_are_left_alone():
    indptr, indices, weights = np.array([0, 1, 2]), np.array([1, 0]), np.array([1.0, 2.0])
    g = Graph(indptr, indices, weights)
    assert indptr.flags.writeable and indices.flags.writeable and weights.flags.writeable
    indices[0] = 7          # the graph is not the caller's array
    assert g.indices.tolist() == [1, 0] and not g.indices.flags.writeable
    h = g.with_weights(weights)
    assert weights.flags.writeable and not h.weights.flags.writeable
    src, dst = np.array([0, 1]), np.array([1, 0])
    Graph.from_edges(src, dst, 2)
    assert src.flags.writeable and dst.flags.writeable


def test_to_scipy_can_be_changed():
    g = Graph.from_edges([0, 1], [1, 0], 2, weights=[3.0, 4.0])
    m = g.to_scipy()
    m.data[0] = 5.0
    m.indices[0] = 0
    assert g.weights.tolist() == [3.0, 4.0] and g.indices.tolist() == [1, 0]
    assert (Graph.from_edges([0], [1], 2).to_scipy() * 2).toarray().tolist() == [[0, 2], [0, 0]]


# ---------------------------------------------------------------- empty fields

@pytest.mark.parametrize("name, text, line", [
    ("a.csv", "0,1,5\n1,2,,200\n", 2),
    ("b.csv", "0,,1\n", 1),
    ("c.csv", "0,1\n1,2,\n", 2),
    ("d.csv", ",0,1\n", 1),
    ("e.csv", "0 , , 1\n", 1),
    ("f.txt", "# x\n0,1,\t,2\n", 2),
    ("g.csv", "6,2,4,,\n", 1),
    ("h.csv", "6,2,4,5,\n", 1),
    ("i.csv", "0,1\r\n1,2,\r\n", 2),
    ("j.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1,,2 3\n", 3),
    ("k.gr", "p sp 2 1\na 1,,2 3\n", 2),
])
def test_an_empty_field_is_an_error_naming_its_line(tmp_path, name, text, line):
    refused(write(tmp_path, name, text), line, "empty field")


def test_one_comma_between_values_is_a_separator(tmp_path):
    g = load(write(tmp_path, "ok.csv", "0 ,1, 2.5\n1\t,\t0 ,3\n"))
    assert g.edge_sources().tolist() == [0, 1] and g.indices.tolist() == [1, 0]
    assert g.weights.tolist() == [2.5, 3.0]


# ---------------------------------------------------------------- weights as float() reads them

def hard_decimals(rng, count):
    """Decimal texts of doubles that need correct rounding: every length of digits, subnormal
    and near the largest double, halfway cases and long digit strings."""
    out = []
    for _ in range(count):
        x = rng.random()
        kind = rng.randrange(8)
        if kind == 0:
            out.append(repr(x))
        elif kind == 1:
            out.append(f"{x * 10 ** rng.randrange(-30, 30):.{rng.randrange(1, 26)}g}")
        elif kind == 2:
            out.append(f"{x * 2.0 ** rng.randrange(-1074, 1024):.17g}")
        elif kind == 3:
            out.append(f"{rng.randrange(10 ** 25)}.{rng.randrange(10 ** 20):020d}")
        elif kind == 4:            # between two doubles, at 17 digits and beyond
            out.append(f"{(x + np.nextafter(x, 2)) / 2:.25e}")
        elif kind == 5:
            out.append(f"{rng.randrange(10 ** 18)}e{rng.randrange(-340, 290)}")
        elif kind == 6:
            digits = f"{rng.randrange(1, 10 ** 7)}.{rng.randrange(10 ** 6)}"
            out.append(f"-{digits}e-{rng.randrange(30)}")
        else:
            out.append(repr(rng.randrange(2 ** 60) / 2 ** rng.randrange(70)))
    return out


EDGE_CASES = ["2.2250738585072014e-308", "1.7976931348623157e308", "4.9e-324", "5e-324",
              "2.4703282292062328e-324", "2.4703282292062327e-324", "0.1", "0.30000000000000004",
              "1e23", "9007199254740993", "8.98846567431158e307", "1e-400", "-0", "+.5", "7.",
              "1.00000000000000011102230246251565404236316680908203125",
              "0.000000000000000000000000000000000000000001", "123456789012345678901234567890",
              "1" + "0" * 300, "2.225073858507201136057409796709131975934819546351645648e-308"]


def test_weights_read_exactly_as_float_reads_them(tmp_path, monkeypatch):
    texts = hard_decimals(random.Random(6), 5000) + EDGE_CASES
    lines = [f"{k % 97} {k % 89} {t}\n" for k, t in enumerate(texts)]
    monkeypatch.setattr(tio, "CHUNK_BYTES", 4096)          # many chunks
    g = load(write(tmp_path, "w.wel", "".join(lines)))
    order = np.argsort(np.arange(len(texts)) % 97, kind="stable")    # rows keep file order
    want = np.array([float(t) for t in texts])[order]
    assert g.n_edges == len(texts)
    assert np.array_equal(g.weights.view(np.int64), want.view(np.int64))


@pytest.mark.parametrize("text, value", [
    ("2.2250738585072014e-308", 2.2250738585072014e-308),
    ("1.7976931348623157e308", 1.7976931348623157e308),
    ("0.1", 0.1), ("3.0000000000000004", 3.0000000000000004),
    ("943.9948991237769", 943.9948991237769), ("116.15703706526203", 116.15703706526203)])
def test_extreme_and_ordinary_weights(tmp_path, text, value):
    g = load(write(tmp_path, "x.txt", f"0 1 {text}\n"))
    assert g.weights[0] == value and g.weights[0] != 0


@pytest.mark.parametrize("text, words, options", [
    ("1.8e308", "not a finite number", {}),
    ("1e99999999", "not a finite number", {}),
    ("-1.5e-30", "negative weight", {"nonnegative": True}),
    ("-123456789012345678", "negative weight", {"nonnegative": True}),
])
def test_a_weight_read_late_is_still_checked_at_its_line(tmp_path, monkeypatch, text, words,
                                                         options):
    monkeypatch.setattr(tio, "CHUNK_BYTES", 64)
    body = "".join(f"{k} {k + 1} 0.{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}{k}9\n"
                   for k in range(40))
    path = write(tmp_path, "late.txt", body + f"3 4 {text}\n" + "5 6 7\n5 6 x\n")
    refused(path, 41, words, f"'{text}'", **options)


# ---------------------------------------------------------------- Matrix Market

@pytest.mark.parametrize("value", ["1.5", "1e3", "2.", "abc"])
def test_mtx_integer_field_takes_integers_only(tmp_path, value):
    path = write(tmp_path, "i.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                                    f"% c\n2 2 2\n1 2 -7\n2 1 {value}\n")
    refused(path, 5, "not an integer", f"'{value}'")
    g = load(write(tmp_path, "ok.mtx", "%%MatrixMarket matrix coordinate integer general\n"
                                       "2 2 2\n1 2 -7\n2 1 +12\n"))
    assert g.weights.tolist() == [-7.0, 12.0]


def test_mtx_symmetric_must_be_square(tmp_path):
    path = write(tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                                    "%\n3 4 1\n2 1 1.5\n")
    refused(path, 3, "symmetric", "3 x 4")


# ---------------------------------------------------------------- options of totem_py.run

@pytest.mark.parametrize("algorithm, options, words", [
    ("bfs", dict(trials=-1), "--trials must be at least 0, got -1"),
    ("bfs", dict(trials=2.0), "--trials must be an integer"),
    ("bfs", dict(threads=0), "--threads must be at least 1, got 0"),
    ("bfs", dict(source=2.5), "--source must be an integer, got 2.5"),
    ("sssp", dict(source=np.float64(1.0)), "--source must be an integer"),
    ("pagerank", dict(iterations=2.5), "--iterations must be an integer, got 2.5"),
    ("bc", dict(sources=2.5), "--sources must be an integer"),
    ("bc", dict(sources=[1, 2.5]), "--sources must be an integer"),
])
def test_run_refuses_counts_that_are_not_whole(algorithm, options, words):
    g = totem_py.generate("rmat:5")
    with pytest.raises(InputError) as info:
        totem_py.run(g, algorithm, device="emulated", **options)
    assert words in str(info.value), str(info.value)


def test_run_takes_numpy_integers():
    g = totem_py.generate("rmat:5")
    r = totem_py.run(g, "pagerank", device="emulated", iterations=np.int32(2),
                     trials=np.int64(1), threads=np.int64(1), verify=True)
    assert r.metrics["iterations"] == 2 and r.metrics["verified"]
    assert totem_py.run(g, "bfs", device="emulated", source=np.int64(3)).metrics["source"] == 3


@pytest.mark.slow
def test_cpu_share_model_on_a_graph_without_edges(tmp_path):
    path = write(tmp_path, "e.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 0\n")
    r = totem_py.run(load(path), "bfs", cpu_share="model", device="emulated", verify=True)
    assert r.metrics["cpu_share"] == 1.0 and "no edges" in r.metrics["cpu_share_model"]["note"]
    proc = run_here("--graph", path, "--cpu-share", "model", "--device", "emulated")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-2000:]
    assert "cpu share 1.0" in proc.stdout


# ---------------------------------------------------------------- a user's algorithm

WIDEST = '''
"""Widest paths: the largest bottleneck (smallest weight along a path) from a source."""
import numpy as np
from bsp import Frontier, Message, Mode, Vote, advance, atomic_max, put, receive
from totem_py import Algorithm
from totem_py.algorithms import Option, register
from totem_py.algorithms.common import SOURCE, collect, owned_lvid, source_vertex

WIDTH = Message(np.float64, "max", -np.inf)


def widen(s, t, w, width, queued, mark, n_local):
    nw = min(width[s], w)
    if nw > width[t]:
        old = atomic_max(width, t, nw)
        if nw > old:
            if t >= n_local:
                return old == -np.inf
            return atomic_max(queued, t, mark) != mark
    return False


def widen_message(v, m, width, queued, mark):
    if m > width[v] and m > atomic_max(width, v, m):
        return atomic_max(queued, v, mark) != mark
    return False


@register
class Widest(Algorithm):
    name = "widest"
    modes = (Mode("push", "out", "push", WIDTH, state="width", records=True),)
    options = (SOURCE, Option("--iterations", dict(type=int, default=1000,
                                                   help="widest: at most this many rounds")))
    needs_weights = True
    isolated = -np.inf

    def __init__(self, source, iterations):
        self.source, self.iterations = source, iterations

    @classmethod
    def from_options(cls, graph, source=None, seed=0, iterations=1000, **_):
        return cls(source_vertex(graph, source, seed, cls.name), iterations)

    def init(self, part):
        s = part.state
        s.width = part.alloc(np.float64, -np.inf, ("out",))
        s.queued = part.alloc(np.int32, 0)
        s.frontier = Frontier(part)
        lv = owned_lvid(part, self.source)
        if lv is not None:
            put(part, s.width, lv, np.inf)
        s.frontier.start(lv)

    def compute(self, part, step, mode, box):
        s = part.state
        advance(part, "out", s.frontier, widen, s.width, s.queued, np.int32(step + 1),
                part.n_local, outbox=box)

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, widen_message, s.width, s.queued, np.int32(step + 1),
                out=s.frontier)

    def vote(self, part, step):
        edges = part.state.frontier.swap()
        return Vote(part.state.frontier.length if step + 1 < self.iterations else 0, edges)

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "width", np.float64, -np.inf)

    def reference(self, graph):
        width = np.full(graph.n_vertices, -np.inf)
        width[self.source] = np.inf
        src = np.repeat(np.arange(graph.n_vertices), np.diff(graph.indptr))
        for _ in range(graph.n_vertices):
            for u, v, w in zip(src, graph.indices, graph.weights):
                width[v] = max(width[v], min(width[u], w))
        return width
'''


def test_a_user_algorithm_that_needs_weights_takes_negative_ones(tmp_path):
    """`needs_weights` brings the weights to the functors; only an algorithm that declares
    `nonnegative_weights` (shortest paths) refuses a negative one."""
    algorithm = write(tmp_path, "widest.py", WIDEST)
    graph = write(tmp_path, "g.wel", "0 1 -2.5\n1 2 4\n0 2 -7\n2 3 -1\n3 1 9\n4 0 1\n")
    out = tmp_path / "w.npy"
    proc = cli("--algorithm", algorithm, "--graph", graph, "--source", 0, "--device",
               "emulated", "--cpu-share", 0.5, "--partition", "RAND", "--verify", "--quiet",
               "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert np.array_equal(np.load(out), [np.inf, -2.5, -2.5, -2.5, -np.inf])
    one_line_exit_2(cli("--algorithm", "sssp", "--graph", graph, "--quiet"), "g.wel:1",
                    "negative weight", "sssp needs non-negative weights")


def test_a_user_script_shows_its_own_name_and_option_help(tmp_path):
    """A script that runs the command line for its algorithm: its --help names the script, and
    an option it shares with a built-in algorithm (--iterations) shows the script's help and
    default, and takes its default."""
    algorithm = write(tmp_path, "widest.py", WIDEST + '''

if __name__ == "__main__":
    import sys
    from totem_py.run import cli
    sys.exit(cli(["--algorithm", "widest", *sys.argv[1:]]))
''')
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, algorithm, "--help"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: widest.py"), proc.stdout[:200]
    assert "widest: at most this many rounds" in " ".join(proc.stdout.split())
    assert "PageRank" not in proc.stdout.split("--iterations", 1)[1].split("--", 1)[0]


# ---------------------------------------------------------------- the command's smaller promises

def test_quiet_prints_nothing_for_weights_near_the_largest_double(tmp_path):
    """--quiet: only errors; weights past float32's range and a mean weight that overflows
    (SSSP's bucket width) are no warning either."""
    graph = write(tmp_path, "big.wel", "0 1 1.7e308\n1 2 1.7e308\n2 3 1\n")
    proc = cli("--graph", graph, "--algorithm", "sssp", "--source", 0, "--device", "emulated",
               "--verify", "--quiet", "--output", tmp_path / "d.npy")
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == "", proc.stderr
    assert np.array_equal(np.load(tmp_path / "d.npy"), [0, 1.7e308, np.inf, np.inf])


def test_an_existing_file_named_like_a_generator_is_read(tmp_path):
    write(tmp_path, "rmat:3.txt", "0 1\n1 2\n")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "totem_py.run", "--graph", "rmat:3.txt",
                           "--quiet", "--json", "m.json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "m.json").read_text())["graph"]["vertices"] == 3
    from totem_py.generators import is_generator
    assert is_generator("rmat:3") and is_generator("rmat:3:4")


def test_an_output_name_ending_in_a_slash_is_refused(tmp_path):
    proc = run_here("--graph", "tests/data/tiny.txt", "--quiet", "--output", f"{tmp_path}/res/")
    one_line_exit_2(proc, "res/", "ends in a slash")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, sep, header", [("r.txt", " ", "# vertex value"),
                                               ("r.tsv", "\t", "# vertex\tvalue"),
                                               ("r.csv", ",", "vertex,value")])
def test_text_outputs_are_text(tmp_path, name, sep, header):
    proc = run_here("--graph", "tests/data/tiny.txt", "--source", 0, "--quiet", "--output",
                    tmp_path / name)
    assert proc.returncode == 0, proc.stderr
    lines = (tmp_path / name).read_text().splitlines()
    assert lines[0] == header and lines[1] == f"0{sep}0" and len(lines) == 7


def test_a_traversal_of_a_one_direction_listing_hints_at_undirected(tmp_path):
    """Every edge from a smaller to a larger id (a file listing each undirected edge once): a
    traversal says that --undirected adds the reverse edges; not with --undirected, --quiet or
    an edge the other way."""
    graph = write(tmp_path, "once.txt", "0 1\n0 2\n1 3\n2 3\n")
    proc = run_here("--graph", graph, "--source", 3)
    assert proc.returncode == 0 and "--undirected adds the reverse edges" in proc.stderr
    for extra in (["--undirected"], ["--quiet"]):
        assert "--undirected" not in run_here("--graph", graph, "--source", 3, *extra).stderr
    both = write(tmp_path, "both.txt", "0 1\n0 2\n1 3\n3 2\n")
    assert "--undirected" not in run_here("--graph", both, "--source", 3).stderr
