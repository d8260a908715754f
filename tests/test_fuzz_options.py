"""Seeded random command lines of `python -m totem_py.run`, calls of totem_py.run and graphs
built from arrays, on tiny graphs (generated ones and tests/data's files).

Command lines draw every option of `--help` with values valid, at a boundary or hostile (empty,
negative, zero, huge, NaN and infinity, not a number, unknown names, folders, missing or
unwritable paths, an output naming the input), repeated options and options that exclude each
other. Each must exit 0 with a verified result and complete output files, or 2 with one line on
stderr and no output written (no temporary file left either); never 1, 3 (every graph here is
valid, so a failed verification is a wrong result), a traceback or a hang. Most run in this
process through the command's own entry point, a few through `python -m totem_py.run`.

Calls of totem_py.run take random keywords, calls of totem_py.load and totem_py.generate random
arguments; graphs come from random arrays (every dtype, ids outside the graph, decreasing
offsets, short weights, NaN). Each returns a result (checked by its verifier) or a graph that is
exactly what was asked, or raises InputError, ValueError or TypeError with a one-line message.

The seed and, with `-m extended`, the time spent come from TOTEM_FUZZ_SEED and TOTEM_FUZZ_SECONDS
(test_fuzz.py says how).
"""

import contextlib
import importlib
import io
import json
import math
import os
import subprocess
import sys
import traceback
import warnings
from pathlib import Path

import numba
import numpy as np
import pytest

import totem_py
from totem_py.errors import InputError
from totem_py.graph import Graph

from tests.support.fuzz import (SEED, Hang, case_numbers, case_rng, on_demand_seconds,
                                time_limit)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
COMMANDS = 500              # command lines in this process
SUBPROCESS = 3              # command lines through python -m totem_py.run
API_CALLS = 400             # totem_py.run calls
ARRAY_GRAPHS = 600          # Graph(...) and Graph.from_edges(...) constructions
CASE_SECONDS = 60           # a case that takes longer is a hang (compiling included)

cli_module = importlib.import_module("totem_py.run")


# ---------------------------------------------------------------- option values

GRAPHS = ["rmat:6", "road:6", "uniform:5", "rmat:5:2", "rmat:1", "road:1",
          *(f"{DATA}/{name}" for name in ("tiny.txt", "tiny.el", "tiny.csv", "tiny.wel",
                                          "tiny.mtx", "tiny_sym.mtx", "tiny.gr", "tiny.txt.gz",
                                          "tiny_sym.mtx.gz")),
          "{dir}/g.npz"]
HOSTILE_GRAPHS = ["", "rmat:", "rmat:0", "rmat:-1", "rmat:x", "rmat:6:0", "rmat:6:-2", "rmat:70",
                  "rmat:6.5", "road:6:3", "road:-2", "nope:6", "uniform:99", "{dir}",
                  "{dir}/missing.txt", "{dir}/garbage.txt", "/dev/null", "{dir}/r.npy",
                  "{dir}/empty.txt", f"{DATA}/README.md", "rmat:6:1e9", "{dir}/a\nb.txt",
                  "{dir}/ü v.txt", "{dir}/garbage.txt/g.txt", "rmat:٥", "RMAT:6"]

NUMBERS = ["", "-1", "0", "nan", "inf", "-inf", "x", "1e400", "2.5", "0x10", " ", "1_0",
           "99999999999999999999999", str(2**63), str(-2**63 - 1)]
# rounds and trials: no huge positive counts, which are valid requests for a very long run
ROUNDS = [v for v in NUMBERS if v not in ("99999999999999999999999", str(2**63))]
SIZES = ["", "-1", "0", "nan", "inf", "x", "1e30", "16E", "4Q", "-5M", "1.5K", "0.3"]
PATHS = ["auto", "sync-push-dd", "sync-push-td", "sync-pull-dd", "sync-pull-td", "async-push-dd",
         "async-push-td", "async-pull-dd", "async-pull-td", "sync-push-dd-prio",
         "async-push-dd-prio"]
OUTPUT_NAMES = ["{dir}/r.npy", "{dir}/r.csv", "{dir}/r.txt", "{dir}/r.tsv", "{dir}/r.out"]
HOSTILE_OUTPUTS = ["", "{dir}", "{dir}/missing/r.npy", "/proc/self/r.npy", "{dir}/sub/",
                   "{dir}/m.json", "{dir}/g.npz", "{dir}/" + "x" * 300 + ".npy",
                   "{dir}/r{rank}.npy", "/dev/null", "{dir}/o\nut.npy", "{dir}/ü r.csv",
                   "{dir}/garbage.txt/r.npy", "{dir}/\x1b[31m.txt"]

ALGORITHMS = {"bfs": ["--source"], "sssp": ["--source"], "cc": [],
              "pagerank": ["--iterations", "--tol", "--unweighted"],
              "pagerank_delta": ["--tolerance"], "bc": ["--source", "--sources", "--normalized"]}
HOSTILE_ALGORITHMS = ["", "BFS", "nope", "{dir}/missing.py", "{dir}", f"{DATA}/tiny.txt",
                      "{dir}/broken.py", "{dir}/raises.py", "{dir}/empty.py",
                      "examples/khop.py:nope"]
# flag: (valid values, hostile values); None for a flag without a value
OPTIONS = {
    "--undirected": None,
    "--algorithm": (list(ALGORITHMS), HOSTILE_ALGORITHMS),
    "--partition": (["HIGH", "LOW", "RAND", "BLOCK", "low"], ["", "MIDDLE", "0"]),
    "--hub-sort": (["degree", "hytgraph", "off"], ["", "x", "DEGREE"]),
    "--cpu-share": (["0", "1", "0.5", "0.3", "auto", "model", "1e-300", "0.999"],
                    NUMBERS + ["1.5", "-0.1", "AUTO"]),
    "--gpus": (["0", "1", "2", "3"], NUMBERS + ["1000", "100000000"]),
    "--device": (["cpu", "emulated", "auto"], ["", "x", "gpu", "CPU"]),
    "--gpu-memory": (["1K", "16K", "4G", "64M", "1000"], SIZES),
    "--transfer": (["auto", "resident", "zerocopy", "filter", "compaction"], ["", "x"]),
    "--path": (PATHS, ["", "x", "sync-push", "sync-push-dd-x", "SYNC-PUSH-DD"]),
    "--chunk-bytes": (["64", "4K", "32M", "1000"], SIZES + ["63"]),
    "--gpu-cache": (["0", "1K", "64K"], SIZES),
    "--source": (["0", "1", "2", "3", "5"], NUMBERS + ["64", "100000000"]),
    "--sources": (["1", "3", "all", "0,1", "2,0,3", "1000000"],
                  NUMBERS + ["1,1", "0,,1", "0,", ",", "0,-1", "all,1", "0,99999999999999999999"]),
    "--normalized": None,
    "--iterations": (["0", "1", "3", "20"], ROUNDS),
    "--tol": (["1e-6", "0.1", "1e-300", "1e300"], NUMBERS),
    "--unweighted": None,
    "--tolerance": (["0.01", "1e-9", "1", "1e300"], NUMBERS),
    "--relabel": None,
    "--trials": (["1", "2"], ROUNDS),
    "--threads": (["1", "2", "1000"], NUMBERS),
    "--seed": (["0", "1", "4294967296", str(2**63 - 1)], NUMBERS),
    "--verify": None,
    "--output": (OUTPUT_NAMES, HOSTILE_OUTPUTS),
    "--json": (["{dir}/m.json"], HOSTILE_OUTPUTS),
    "--quiet": None,
    "--mpi-timeout": (["1", "1e9"], NUMBERS),
}
STRAYS = [["--bogus"], ["x"], ["--graph"], ["--verify=1"], ["-"], ["--"], ["--gpu"],
          ["--source", "--verify"], ["--graph=rmat:6"], ["--algorithm=bfs"], ["-h"], ["--help"],
          ["--version"]]
# the files in each case's folder (g.npz: a small graph, written there too)
FIXTURES = {"broken.py": b"def f(:\n", "raises.py": b"raise RuntimeError('at import')\n",
            "empty.py": b"x = 1\n", "garbage.txt": b"\x00\xff\xfe 1 2 3\n\x1b[31m",
            "empty.txt": b"", "ü v.txt": b"0 1\n1 2\n2 0\n"}


def _fill(value, folder):
    return value.replace("{dir}", str(folder))


OWN = {flag for flags in ALGORITHMS.values() for flag in flags}


def random_argv(rng, folder):
    """A command line: a graph, an algorithm, --verify mostly, then a few options (mostly the
    algorithm's and the common ones), each valid, at a boundary or hostile, sometimes twice or
    in `--flag=value` form; now and then a stray word."""
    pick = lambda values: values[int(rng.integers(0, len(values)))]
    algorithm = pick(list(ALGORITHMS))
    argv = ["--graph", pick(GRAPHS if rng.random() < 0.9 else HOSTILE_GRAPHS),
            "--algorithm", algorithm if rng.random() < 0.95 else pick(HOSTILE_ALGORITHMS)]
    if rng.random() < 0.85:
        argv.append("--verify")
    if rng.random() < 0.6:
        argv += ["--device", pick(["cpu", "emulated"])]
    common = [flag for flag in OPTIONS if flag not in OWN]
    for _ in range(int(rng.integers(0, 7))):
        mine = ALGORITHMS[algorithm]
        flag = pick(mine if mine and rng.random() < 0.4 else
                    common if rng.random() < 0.93 else sorted(OWN))
        values = OPTIONS[flag]
        if values is None:
            argv.append(flag)
            continue
        value = pick(values[0] if rng.random() < 0.8 else values[1])
        argv += [f"{flag}={value}"] if rng.random() < 0.15 else [flag, value]
    if rng.random() < 0.5:
        argv += ["--output", pick(OUTPUT_NAMES)]
    if rng.random() < 0.5:
        argv += ["--json", "{dir}/m.json"]
    if rng.random() < 0.5:
        argv.append("--quiet")
    if rng.random() < 0.05:
        at = int(rng.integers(0, len(argv) + 1))
        argv[at:at] = pick(STRAYS)
    return [_fill(a, folder) for a in argv]


def case_folder(base, k, npz):
    """A fresh folder for case k, with the files its values name."""
    folder = base / f"c{k:05d}"
    folder.mkdir()
    for name, data in {**FIXTURES, "g.npz": npz}.items():
        (folder / name).write_bytes(data)
    return folder


@pytest.fixture(scope="module")
def npz(tmp_path_factory):
    """A small .npz graph (rmat:5, weighted), copied into each case's folder."""
    from totem_py import io as tio
    buf = io.BytesIO()
    tio.npz_writer(totem_py.generate("rmat:5", weighted=True))(buf)
    return buf.getvalue()


# ---------------------------------------------------------------- running a command line

def run_in_process(argv):
    """(exit code, stdout, stderr) of the command's entry point, TOTEM_DEBUG set so that an
    exception that would be exit 1 surfaces as its traceback in stderr."""
    out, err = io.StringIO(), io.StringIO()
    threads = numba.get_num_threads()
    with warnings.catch_warnings(), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            code = cli_module.cli(argv)
        except SystemExit as e:         # --help, --version
            code = e.code if isinstance(e.code, int) else 1
        except Hang:
            raise
        except BaseException:
            code = 1
            err.write(traceback.format_exc())
        finally:
            numba.set_num_threads(threads)
    return code, out.getvalue(), err.getvalue()


def run_subprocess(argv):
    proc = subprocess.run([sys.executable, "-m", "totem_py.run", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=CASE_SECONDS * 4,
                          env=dict(os.environ, TOTEM_COMPILE_AHEAD="0"))
    return proc.returncode, proc.stdout, proc.stderr


def last_value(argv, flag):
    value = None
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(flag + "="):
            value = a.partition("=")[2]
    return value


def check_outcome(argv, folder, fixtures, code, out, err):
    """The property of one command line (its outputs in `folder`, beside `fixtures`, a dict of
    the files there before by name); returns the outcome."""
    assert code in (0, 2), f"exit {code}: {err[-3000:]}"
    assert "Traceback" not in err, err[-3000:]
    output, metrics = (last_value(argv, flag) for flag in ("--output", "--json"))
    output = output and output.replace("{rank}", "0")       # one process is rank 0
    named = set()
    if code == 0 and not {"--help", "-h", "--version"} & set(argv):
        named = {Path(p).name for p in (output, metrics) if p and Path(p).parent == folder}
    files = {p.name for p in folder.iterdir()}
    assert files - set(fixtures) <= named, f"exit {code} left {sorted(files - set(fixtures))}"
    for name, data in fixtures.items():
        assert name in named or (folder / name).read_bytes() == data, f"{name} changed"
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err[-3000:]
        return "refused"
    if not named and {"--help", "-h", "--version"} & set(argv):
        return "help"
    assert named <= files, f"exit 0 without {sorted(named - files)}"
    if metrics and Path(metrics).parent == folder:
        m = json.loads(Path(metrics).read_text())
        assert m["verified"] is ("--verify" in argv or None), m["verified"]
        n = m.get("relabel", {}).get("vertex_ids", m["graph"]["vertices"])
        if output and Path(output).parent == folder:
            assert len(read_values(Path(output))) == n
    return "verified" if "--verify" in argv else "ran"


def read_values(path):
    if path.suffix in (".csv", ".txt", ".tsv"):
        lines = path.read_text().splitlines()
        assert all(len(ln.replace(",", " ").split()) == 2 for ln in lines[1:])
        return lines[1:]
    return np.load(path)


def command_case(base, npz, k, subprocess_=False):
    rng = case_rng(k, "command")
    folder = case_folder(base, k, npz)
    argv = random_argv(rng, folder)
    try:
        with time_limit(CASE_SECONDS * (5 if subprocess_ else 1)):
            code, out, err = (run_subprocess if subprocess_ else run_in_process)(argv)
        return check_outcome(argv, folder, {**FIXTURES, "g.npz": npz}, code, out, err)
    except Hang as e:
        raise AssertionError(f"TOTEM_FUZZ_SEED={SEED} command case {k}: python -m totem_py.run "
                             f"{' '.join(map(repr, argv))}\n{e}") from None
    except AssertionError as e:
        raise AssertionError(f"TOTEM_FUZZ_SEED={SEED} command case {k}: python -m totem_py.run "
                             f"{' '.join(map(repr, argv))}\n{e}") from None


@pytest.fixture
def quiet_process(monkeypatch):
    """No compiling helper process; TOTEM_DEBUG so that exit-1 errors show their traceback."""
    monkeypatch.setenv("TOTEM_COMPILE_AHEAD", "0")
    monkeypatch.setenv("TOTEM_DEBUG", "1")


def commands(tmp_path, npz, numbers):
    outcomes = {}
    for k in numbers:
        outcome = command_case(tmp_path, npz, k)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def test_random_command_lines(tmp_path, npz, quiet_process):
    outcomes = commands(tmp_path, npz, range(COMMANDS))
    # the cases are neither all refused nor all accepted
    assert outcomes.get("verified", 0) > COMMANDS // 5, outcomes
    assert outcomes.get("refused", 0) > COMMANDS // 5, outcomes


@pytest.mark.slow
def test_random_command_lines_through_python(tmp_path, npz):
    for k in range(SUBPROCESS):
        command_case(tmp_path, npz, 10**6 + k, subprocess_=True)


@pytest.mark.extended
def test_more_random_command_lines(tmp_path, npz, quiet_process):
    outcomes = commands(tmp_path, npz, case_numbers(COMMANDS, on_demand_seconds(0.35)))
    print(f"command lines: {outcomes}")


# ---------------------------------------------------------------- totem_py.run

HOSTILE = [None, "", "x", -1, 0, 2.5, math.nan, math.inf, -math.inf, 10**30, -(2**63), 2**64,
           True, [], [0], np.array([1, 2]), np.float32(0.5), np.int64(-1), b"1", 1j, object()]
KEYWORDS = {
    "partition": (["HIGH", "LOW", "RAND", "BLOCK"], ["high", "MIDDLE"]),
    "cpu_share": ([0, 1, 0.5, 0.3, "auto", "model", np.float64(0.7)], [1.5, -0.1, "0.5"]),
    "gpus": ([0, 1, 2, 3, np.int32(2)], [10**6]),
    "device": (["cpu", "emulated"], ["gpu", "CPU"]),
    "source": ([None, 0, 1, 2, 5, np.int64(3), np.uint8(1)], [64, 10**6, "0"]),
    "iterations": ([None, 0, 1, 3, np.int16(2)], [2.0, "3"]),
    "trials": ([1, 2, np.int64(1)], ["1"]),
    "threads": ([None, 1, 2, 1000], ["2"]),
    "seed": ([0, 1, 2**32, 2**63 - 1], ["0"]),
    "gpu_memory": ([None, 1024, 1 << 30, 100], ["4G", 1.5]),
    "transfer": (["auto", "resident", "zerocopy", "filter", "compaction"], ["Auto"]),
    "chunk_bytes": ([None, 64, 4096, 1 << 25], [63, "4K"]),
    "hub_sort": (["degree", "hytgraph", "off"], ["DEGREE"]),
    "gpu_cache": ([0, 1024, 1 << 20], ["1K"]),
    "tolerance": ([0.01, 1e-9, 1.0, 1e300], ["0.01"]),
    "path": (PATHS, ["SYNC-PUSH-DD", "sync-push"]),
    "sources": ([None, 1, 3, "all", [0, 1], (2, 0, 3), np.array([0, 1])],
                ["ALL", [1, 1], [0, -1], [2.5], ["1"], [[0]], {0, 1}, 10**20]),
    "normalized": ([False, True], ["yes", 2]),
    "tol": ([None, 1e-6, 0.1, 1e300], ["1e-6"]),
    "unweighted": ([False, True], ["yes"]),
    "bogus": ([], [1]),
}


def api_graphs():
    """(name, graph) of the graphs API calls run on."""
    out = [(spec, totem_py.generate(spec, weighted=w))
           for spec, w in (("rmat:6", False), ("road:6", True), ("uniform:5", True))]
    out += [(name, totem_py.load(DATA / name)) for name in ("tiny.txt", "tiny.wel", "tiny.gr")]
    out += [("empty", Graph(np.zeros(1, np.int64), np.zeros(0, np.int64))),
            ("one vertex", Graph(np.zeros(2, np.int64), np.zeros(0, np.int64))),
            ("self-loop", Graph.from_edges([0, 0], [0, 1], 3, weights=[1.0, 2.0])),
            ("negative weights", Graph.from_edges([0, 1, 2], [1, 2, 0], 3,
                                                  weights=[-1.0, 2.0, 0.5])),
            ("zero weights", Graph.from_edges([0, 1], [1, 0], 2, weights=[0.0, -0.0]))]
    return out


OWN_KEYWORDS = {flag[2:] for flag in OWN}
ACCEPTED = (InputError, ValueError, TypeError)


def one_line(exc):
    message = str(exc)
    return message.strip() != "" and "\n" not in message.strip()


def attempt(where, call):
    """call() within CASE_SECONDS: its value, or None where it refused with an accepted error of
    one line; an AssertionError naming `where` for a hang or any other exception."""
    try:
        with time_limit(CASE_SECONDS):
            return call()
    except ACCEPTED as e:
        assert one_line(e), f"{where}: {type(e).__name__} of several lines: {e}"
        return None
    except Hang:
        raise AssertionError(f"{where}: ran past {CASE_SECONDS} s") from None
    except BaseException as e:
        raise AssertionError(f"{where}: {type(e).__name__}: {e}\n{traceback.format_exc()}") \
            from None


def api_case(graphs, k):
    rng = case_rng(k, "api")
    pick = lambda values: values[int(rng.integers(0, len(values)))]
    name, graph = pick(graphs)
    algorithm = pick(list(ALGORITHMS)) if rng.random() < 0.95 else pick(["", "nope", None, 1])
    kwargs = {"verify": True, "device": pick(["cpu", "emulated"])}
    mine = [f[2:] for f in ALGORITHMS.get(algorithm, [])]
    common = [key for key in KEYWORDS if key not in OWN_KEYWORDS]
    for _ in range(int(rng.integers(0, 5))):
        key = pick(mine if mine and rng.random() < 0.4 else
                   common if rng.random() < 0.93 else sorted(OWN_KEYWORDS))
        valid, hostile = KEYWORDS[key]
        hostile = hostile + HOSTILE
        if key in ("iterations", "trials"):      # not a valid request for a very long run
            hostile = [v for v in hostile if not (isinstance(v, int) and v > 10**6)]
        kwargs[key] = pick(valid if valid and rng.random() < 0.8 else hostile)
    where = (f"TOTEM_FUZZ_SEED={SEED} api case {k}: totem_py.run(<{name}>, {algorithm!r}, "
             f"{', '.join(f'{k}={v!r}' for k, v in kwargs.items())})")
    def call():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            threads = numba.get_num_threads()
            try:
                return totem_py.run(graph, algorithm, **kwargs)
            finally:
                numba.set_num_threads(threads)
    result = attempt(where, call)
    if result is None:
        return "refused"
    assert result.values.shape == (graph.n_vertices,), f"{where}: {result.values.shape}"
    assert result.metrics["verified"] is True, where
    return "verified"


SPECS = ["rmat:5", "road:4", "uniform:3:2", "rmat:1:1", *GRAPHS[6:-1], "rmat:41", "rmat:5:0",
         "uniform:٣", DATA, "/dev/null", "/proc/self/mem", "rmat:5.0", Path("rmat:5")]


def io_case(k):
    """totem_py.generate or totem_py.load with random arguments."""
    rng = case_rng(k, "io")
    pick = lambda values: values[int(rng.integers(0, len(values)))]
    spec = pick(SPECS) if rng.random() < 0.85 else pick(HOSTILE)
    flags = [True, False, False, False, 1, "x", None, np.bool_(True)]
    if rng.random() < 0.5 and not (isinstance(spec, str) and spec.startswith(("rmat", "road",
                                                                             "uniform"))):
        call, kwargs = totem_py.load, dict(undirected=pick(flags))
    else:
        call = totem_py.generate
        kwargs = dict(seed=pick([0, 1, 2**64 - 1, np.uint64(7)] * 3 + HOSTILE),
                      undirected=pick(flags), weighted=pick(flags))
    where = f"TOTEM_FUZZ_SEED={SEED} io case {k}: totem_py.{call.__name__}({spec!r}, {kwargs})"
    graph = attempt(where, lambda: call(spec, **kwargs))
    if graph is None:
        return "refused"
    check_csr(graph, "Graph", [graph.indptr, graph.indices, graph.weights], where)
    if call is totem_py.generate:
        assert graph.n_vertices == 2 ** int(str(spec).split(":")[1]), where
    return "loaded"


def api_calls(numbers):
    graphs = api_graphs()
    outcomes = {}
    for k in numbers:
        outcome = io_case(k) if k % 5 == 4 else api_case(graphs, k)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def test_random_api_calls():
    outcomes = api_calls(range(API_CALLS))
    assert outcomes.get("verified", 0) > API_CALLS // 5, outcomes
    assert outcomes.get("refused", 0) > API_CALLS // 5, outcomes


@pytest.mark.extended
def test_more_random_api_calls():
    outcomes = api_calls(case_numbers(API_CALLS, on_demand_seconds(0.2)))
    print(f"api calls: {outcomes}")


# ---------------------------------------------------------------- graphs from arrays

def random_csr(rng, symmetric):
    """(indptr, indices, weights or None, n) of a random small valid CSR (`symmetric`: each
    edge with its reverse, of the same weight)."""
    n = int(rng.integers(0, 7))
    m = int(rng.integers(0, 12)) if n else 0
    src, dst = rng.integers(0, n, (2, m)) if n else np.zeros((2, 0), np.int64)
    weights = rng.choice([1.0, 2.5, 0.0, 7.0], m) if rng.random() < 0.5 else None
    if symmetric:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        weights = None if weights is None else np.concatenate([weights, weights])
    order = np.argsort(src, kind="stable")
    indptr = np.searchsorted(src[order], np.arange(n + 1)).astype(np.int64)
    return indptr, dst[order], None if weights is None else weights[order], n


def spoil(rng, a, ids=True):
    """`a` (an array of ids, or of weights), changed one hostile way (or not at all)."""
    kind = int(rng.integers(0, 60))
    if kind < 4 or kind >= 16 or a is None:
        return a
    a = np.array(a)
    if kind == 4:
        return a.astype(rng.choice(["int8", "uint8", "int16", "uint32", "uint64", "int32",
                                    "float32", "float64", "bool", "object", "complex128"]))
    if kind == 5:
        return a.astype(str)
    if kind == 6:
        return a.reshape(1, -1) if a.size else a.reshape(0, 1)
    if kind == 7:
        return a[:-1] if a.size else np.array(0)
    if kind == 8:
        return np.append(a, a[-1:] if a.size else [1])
    if kind == 9:
        return a.tolist()
    if not a.size:
        return a
    b = a.astype(np.float64 if kind in (10, 11) else np.int64 if ids else np.float64)
    j = int(rng.integers(0, a.size))
    values = ([0.5, math.nan, math.inf] if kind in (10, 11) else
              [-1, 2**31, 2**32 + 1, 2**63 - 1, -(2**63), int(b.max()) + 1] if ids else
              [-1.0, math.nan, math.inf, -math.inf, 1e308, 5e-324, -0.0])
    b[j] = rng.choice(values)
    return b


def graph_case(k):
    rng = case_rng(k, "arrays")
    directed = [True, True, False, False, None, "x", 0][int(rng.integers(0, 7))]
    indptr, indices, weights, n = random_csr(rng, not directed and rng.random() < 0.7)
    if rng.random() < 0.5:
        form = "Graph"
        args = [spoil(rng, indptr), spoil(rng, indices), spoil(rng, weights, ids=False)]
    else:
        form = "Graph.from_edges"
        src = np.repeat(np.arange(n), np.diff(indptr))
        sizes = [n, n, n, n - 1, n + 1, -1, 2.5, np.int64(n), True, str(n), None, 2**63, 10**20,
                 math.nan]
        size = sizes[int(rng.integers(0, len(sizes)))]
        args = [spoil(rng, src), spoil(rng, indices), size, spoil(rng, weights, ids=False)]
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    flags = [a.flags.writeable if isinstance(a, np.ndarray) else None for a in args]
    where = (f"TOTEM_FUZZ_SEED={SEED} arrays case {k}: {form}(" +
             ", ".join(map(repr, args)) + f", directed={directed!r})")
    make = Graph if form == "Graph" else Graph.from_edges
    try:
        graph = attempt(where, lambda: make(*args, directed=directed))
    finally:
        for a, copy, flag in zip(args, copies, flags):
            if isinstance(a, np.ndarray):
                assert a.flags.writeable == flag, f"{where}: the caller's array changed flags"
                assert np.array_equal(a, copy, equal_nan=a.dtype.kind in "fc"), \
                    f"{where}: the caller's array changed"
    if graph is None:
        return "refused"
    check_csr(graph, form, args, where)
    algorithm = str(rng.choice(list(ALGORITHMS)))
    try:
        with time_limit(CASE_SECONDS), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = totem_py.run(graph, algorithm, device=str(rng.choice(["cpu", "emulated"])),
                                  verify=True)
    except InputError as e:       # negative weights for sssp, pagerank; no vertices
        assert one_line(e), f"{where}: {e}"
        return "accepted"
    except BaseException as e:
        raise AssertionError(f"{where}, then {algorithm}: {type(e).__name__}: {e}\n"
                             f"{traceback.format_exc()}") from None
    assert result.values.shape == (graph.n_vertices,), where
    return "verified"


def check_csr(graph, form, args, where):
    """An accepted graph is exactly what the arrays say: ids in range, offsets rising from 0 to
    the edge count, as many weights as edges, and every value as given."""
    n = graph.n_vertices
    indptr, indices = graph.indptr, graph.indices
    assert indptr[0] == 0 and indptr[-1] == indices.size, where
    assert np.all(np.diff(indptr) >= 0), where
    assert indices.size == 0 or (indices.min() >= 0 and indices.max() < n), where
    weights = args[-1]
    if form == "Graph":
        assert indptr.tolist() == np.asarray(args[0]).tolist(), where
        assert indices.tolist() == np.asarray(args[1]).tolist(), where
        order = np.arange(indices.size)
    else:
        src, dst = np.asarray(args[0]).tolist(), np.asarray(args[1]).tolist()
        assert n == args[2], where
        order = sorted(range(len(src)), key=lambda e: (src[e], dst[e]))
        got = sorted(zip(graph.edge_sources().tolist(), indices.tolist()))
        assert got == [(src[e], dst[e]) for e in order], where
    if weights is None:
        assert graph.weights is None, where
    else:
        want = np.asarray(weights, dtype=np.float64)[order]
        got = graph.weights if form == "Graph" else \
            graph.weights[np.lexsort((indices, graph.edge_sources()))]
        assert np.array_equal(np.sort(got), np.sort(want), equal_nan=True), where


def graphs_from_arrays(numbers):
    outcomes = {}
    for k in numbers:
        outcome = graph_case(k)
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes


def test_random_graphs_from_arrays():
    outcomes = graphs_from_arrays(range(ARRAY_GRAPHS))
    assert outcomes.get("verified", 0) > ARRAY_GRAPHS // 5, outcomes
    assert outcomes.get("refused", 0) > ARRAY_GRAPHS // 5, outcomes


@pytest.mark.extended
def test_more_random_graphs_from_arrays():
    outcomes = graphs_from_arrays(case_numbers(ARRAY_GRAPHS, on_demand_seconds(0.1)))
    print(f"graphs from arrays: {outcomes}")


# ---------------------------------------------------------------- cases the fuzz found

def test_an_empty_array_of_the_caller_stays_writable():
    weights = np.array([], np.float64)
    Graph(np.array([0]), np.array([], np.int64), weights)
    assert weights.flags.writeable


@pytest.mark.parametrize("n", [2**63, 10**20, 2**40])
def test_a_vertex_count_past_memory_is_refused(n):
    with pytest.raises(InputError, match=f"a graph of {n} vertices needs about"):
        Graph.from_edges([], [], n)


@pytest.mark.parametrize("keywords, words", [
    (dict(partition=True), "--partition must be one of"),
    (dict(partition=0), "--partition must be one of"),
    (dict(partition=[0], cpu_share="model"), "--partition must be one of"),
    (dict(gpu_cache=math.inf), "--gpu-cache must be an integer"),
    (dict(gpu_cache=2.5), "--gpu-cache must be an integer"),
    (dict(chunk_bytes=64.5), "--chunk-bytes must be an integer"),
    (dict(gpu_memory=math.nan), "--gpu-memory must be an integer"),
])
def test_run_refuses_keywords_of_the_wrong_type(keywords, words):
    with pytest.raises(InputError, match=words):
        totem_py.run(totem_py.load(DATA / "tiny.wel"), "cc", device="cpu", **keywords)


def test_the_model_share_of_a_run_that_walks_no_edge_is_cpu_only():
    """--cpu-share model from a source with no out-edge: the calibration run walks no edge, so
    the model has no rate to fit (a division by zero before): CPU only."""
    g = totem_py.Graph.from_edges([1, 2], [2, 0], 3)
    r = totem_py.run(g, "bfs", cpu_share="model", source=0, device="emulated", verify=True)
    assert r.metrics["cpu_share"] == 1.0 and r.metrics["verified"]


@pytest.mark.parametrize("seed, words", [(2**64, "below 2**64"), (2**64 + 5, "below 2**64"),
                                         (-1, "at least 0"), (2.5, "an integer")])
def test_a_seed_that_would_wrap_or_truncate_is_refused(seed, words):
    with pytest.raises(InputError) as info:
        totem_py.generate("rmat:5", seed=seed)
    assert f"--seed must be {words}" in str(info.value)
    assert totem_py.generate("rmat:5", seed=2**64 - 1).n_edges > 0


@pytest.mark.parametrize("weights, tol", [([7.0, 2.5, math.inf, 0.0, 0.0], None),
                                          ([1.0, 1e308, 7.0, 7.0, 2.5], None),
                                          ([1.0, 1e25, 7.0, 7.0, 2.5], None),
                                          ([1.0, 1e-25, 7.0, 7.0, 2.5], None),
                                          ([1.0, 1e308, 7.0, 7.0, 2.5], 1e-6)])
def test_pagerank_refuses_weights_its_shares_cannot_carry(weights, tol):
    g = Graph.from_edges([0, 1, 2, 3, 4], [1, 2, 3, 4, 0], 5, weights=weights)
    with pytest.raises(InputError, match="out-edges weigh .* in all, outside"):
        totem_py.run(g, "pagerank", device="cpu", verify=True, tol=tol)
    assert totem_py.run(g, "pagerank", device="cpu", verify=True, tol=tol,
                        unweighted=True).metrics["verified"]


def test_an_npz_of_an_unknown_zip_version_is_refused(tmp_path, npz):
    """A damaged byte made a member need zip version 14.6: NotImplementedError, not exit 2."""
    data = bytearray(npz)
    data[data.index(b"PK\x01\x02") + 6] = 146        # version needed to extract
    path = tmp_path / "v.npz"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="not a valid .npz file .zip file version 14.6"):
        totem_py.load(path)


@pytest.mark.parametrize("argv", [
    ["--algorithm", "bfs", "--source", str(2**63)],
    ["--algorithm", "bc", "--sources", f"1,{-2**63 - 1}"],
])
def test_relabel_refuses_a_vertex_numpy_cannot_hold(argv, quiet_process):
    code, _, err = run_in_process(["--graph", "rmat:5:2", "--relabel", "--quiet", *argv])
    assert code == 2 and err.count("\n") == 1 and "is not a vertex id" in err, err
