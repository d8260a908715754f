"""The registry is the only place the rest of the code learns about an algorithm: no library
module names a built-in algorithm outside its own file (the command line's default excepted),
and an algorithm written in a file of its own runs through the command line, --verify,
--relabel, the emulated GPU and MPI ranks with no other edit."""

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from totem_py.algorithms import ALGORITHMS

from tests.support import ROOT, SHARED_DATA as DATA
from tests.support.cli import assert_usage_error, run_cli
from tests.support.mpi import launch

LIBRARY = ("bsp", "kernels_cpu", "kernels_gpu", "partitioners", "totem_py")
# hits that are no algorithm's: (file, name) -> how many, and why
ALLOWED = {("totem_py/run.py", "bfs"): 1,           # DEFAULT_ALGORITHM, the command's default
           ("kernels_gpu/operators.py", "cc"): 1}    # numba-cuda's compile(cc=): compute capability


def builtins():
    """{name or class name: the file of the class} of the package's own algorithms."""
    out = {}
    for cls in ALGORITHMS.values():
        if cls.__module__.startswith("totem_py.algorithms."):
            path = Path(sys.modules[cls.__module__].__file__).resolve().relative_to(ROOT)
            out[cls.name] = out[cls.__name__] = path.as_posix()
    return out


def docstrings(tree):
    """ids of the docstring constants of a module's tree."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def identifiers(node):
    """The identifiers a node introduces or uses (module paths split at their dots)."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.keyword):
        return [node.arg] if node.arg else []
    if isinstance(node, ast.alias):
        return node.name.split(".") + ([node.asname] if node.asname else [])
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").split(".")
    return []


def hits(source, names):
    """(line, name) for each identifier equal to one of `names` and each string literal (not a
    docstring) holding one of the lower-case ones (registered names) as a word, in Python
    `source`."""
    tree = ast.parse(source)
    skip = docstrings(tree)
    words = {n: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])")
             for n in names if n.islower()}
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        found += [(line, i) for i in identifiers(node) if i in names]
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            found += [(line, n) for n, w in words.items() if w.search(node.value)]
    return found


def test_the_scan_finds_names_in_code_and_not_in_docstrings():
    """What the scan catches: the command's relabel fill as it was written before the registry,
    an import from another algorithm's file, a class name, a stage name; not prose."""
    code = textwrap.dedent('''
        """bfs and sssp: the docstring may name them."""
        from .algorithms.bc import parse_sources
        from .bfs import UNVISITED
        fill = {"bfs": -1, "sssp": np.inf}.get(name, 0)
        def default(x):
            """PageRank's rounds."""
            return CC() if x == f"run:{name}" else "run:pagerank"
        sources = "pagerank_delta"
    ''')
    names = set(builtins())
    got = sorted(hits(code, names))
    assert got == [(3, "bc"), (4, "bfs"), (5, "bfs"), (5, "sssp"), (8, "CC"), (8, "pagerank"),
                   (9, "pagerank_delta")], got


def test_no_library_module_names_a_built_in_algorithm_outside_its_file():
    own = builtins()
    assert {"bfs", "sssp", "pagerank", "pagerank_delta", "cc", "bc"} <= set(own)
    counted, problems = {}, []
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for line, name in hits(path.read_text(), set(own)):
                if own[name] == rel:
                    continue
                counted[rel, name] = counted.get((rel, name), 0) + 1
                if counted[rel, name] > ALLOWED.get((rel, name), 0):
                    problems.append(f"{rel}:{line}: {name}")
    assert not problems, "\n".join(problems)
    assert counted == ALLOWED, counted      # each allowance still needed


# the user's file: examples/khop.py under another name, without its own `register` (the command
# line registers what the file defines)
USER = (ROOT / "examples" / "khop.py").read_text().replace('name = "khop"', 'name = "near"') \
    .replace("@register\n", "")


# vertices 0, 6 and 11 are in no edge (Matrix Market: 1-based, n declared)
EDGES = [(1, 2), (2, 3), (3, 4), (4, 5), (3, 5), (5, 1), (7, 8), (8, 9), (9, 7), (10, 8), (2, 7)]


@pytest.fixture(scope="module")
def isolated(tmp_path_factory):
    """A toy graph of 12 vertex ids, three of them (0, 6, 11: first, inner, last) in no edge."""
    path = tmp_path_factory.mktemp("toy") / "isolated.mtx"
    lines = [f"{u + 1} {v + 1}" for u, v in EDGES]
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                    f"12 12 {len(lines)}\n" + "\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def user_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("user") / "near.py"
    path.write_text(USER)
    return path


def run_json(tmp_path, *args, name="r"):
    out, js = tmp_path / f"{name}.npy", tmp_path / f"{name}.json"
    proc = run_cli(*args, "--output", out, "--json", js, "--quiet")
    assert proc.returncode == 0, proc.stderr
    return np.load(out), json.loads(js.read_text())


@pytest.mark.slow
def test_an_algorithm_from_a_file_runs_everywhere(user_file, isolated, tmp_path):
    """The user's file, named on the command line: verified on the CPU, on the emulated GPU
    partition with another cpu share, with --relabel (the same values under the original ids),
    and on two MPI ranks (the same values as one process)."""
    common = ("--graph", isolated, "--algorithm", f"{user_file}:near", "--k", "2", "--source",
              "3", "--verify")
    plain, m = run_json(tmp_path, *common, "--device", "cpu", name="cpu")
    assert m["algorithm"] == "near" and m["verified"] is True and plain.dtype == bool
    assert plain.size == 12 and plain[[3, 4]].all() and not plain[[0, 11]].any()
    emulated, m = run_json(tmp_path, *common, "--device", "emulated", "--gpus", "1",
                           "--cpu-share", "0.3", "--partition", "RAND", name="emulated")
    assert any(p["kind"] == "gpu" for p in m["partitions"]) and m["verified"] is True
    assert np.array_equal(emulated, plain)
    relabelled, m = run_json(tmp_path, *common, "--device", "emulated", "--relabel",
                             name="relabel")
    assert m["relabel"] == {"vertex_ids": 12} and m["graph"]["vertices"] < 12
    assert m["source"] == 3 and np.array_equal(relabelled, plain)
    proc = launch(2, "-m", "totem_py.run", "--graph", "rmat:9", "--algorithm",
                  f"{user_file}:near", "--k", "3", "--source", "5", "--device", "emulated",
                  "--quiet", "--verify", "--output", tmp_path / "two.npy")
    assert proc.returncode == 0, proc.stderr[-3000:]
    one, _ = run_json(tmp_path, "--graph", "rmat:9", "--algorithm", str(user_file), "--k", "3",
                      "--source", "5", "--device", "emulated", name="one")
    assert np.array_equal(np.load(tmp_path / "two.npy"), one)


WIKI = DATA / "wiki-Vote.txt.gz"        # 8298 ids, 1183 of them in no edge
BUILT_IN = sorted(name for name, cls in ALGORITHMS.items()
                  if cls.__module__.startswith("totem_py.algorithms."))
# more settings, each run by the algorithms that take every flag of it
MORE = (("--tol", "1e-9"), ("--sources", "5", "--normalized"),
        ("--sources", "all", "--normalized"))


def relabel_cases(small):
    """(algorithm, extra options): every built-in algorithm of the registry by default, and with
    each setting of MORE that it takes (every source: on the toy only)."""
    cases = [(name, ()) for name in BUILT_IN]
    for more in MORE[:None if small else 2]:
        flags = {f for f in more if f.startswith("--")}
        cases += [(name, more) for name in BUILT_IN
                  if flags <= {o.flag for o in ALGORITHMS[name].options}]
    return cases


def same_values(plain, relabelled):
    """Integers and bools exactly, floats within 1e-12 relative (infinities and NaNs where the
    other has them)."""
    assert plain.dtype == relabelled.dtype and plain.shape == relabelled.shape
    if plain.dtype.kind in "biu":
        return np.array_equal(plain, relabelled)
    return bool(np.all(np.isclose(plain, relabelled, rtol=1e-12, atol=0, equal_nan=True)
                       | (plain == relabelled)))


def in_process(tmp_path, *args, name):
    """The command in this process (faster than one each): its --output and --json."""
    from totem_py.run import cli
    out, js = tmp_path / f"{name}.npy", tmp_path / f"{name}.json"
    code = cli([*map(str, args), "--output", str(out), "--json", str(js), "--quiet",
                "--device", "emulated"])
    assert code == 0, args
    return np.load(out), json.loads(js.read_text())


@pytest.mark.parametrize("graph", ["toy", "wiki-Vote"])
def test_relabel_gives_every_algorithm_the_values_it_gives_without(graph, isolated, tmp_path):
    """--relabel leaves the vertices in no edge out of the run: every built-in algorithm still
    gives each original id the value it gets without --relabel (the vertex counts it normalises
    by are the original one: PageRank's in both forms, PageRank-Delta's, BC's), from the same
    sources (the default one, and drawn ones) and with the same --json sources."""
    if graph == "wiki-Vote" and not WIKI.exists():
        pytest.skip("no ../shared/data beside the checkout")
    path = isolated if graph == "toy" else WIKI
    failures = []
    for k, (name, more) in enumerate(relabel_cases(graph == "toy")):
        args = ("--graph", path, "--algorithm", name, *more, "--verify")
        plain, m = in_process(tmp_path, *args, name=f"{k}plain")
        relabelled, r = in_process(tmp_path, *args, "--relabel", name=f"{k}relabel")
        assert r["relabel"]["vertex_ids"] == m["graph"]["vertices"] > r["graph"]["vertices"]
        assert r["verified"] is True
        for key in ("source", "sources", "rounds", "converged"):
            if r.get(key) != m.get(key):
                failures.append(f"{name} {more}: --json {key} {r.get(key)} != {m.get(key)}")
        if not same_values(plain, relabelled):
            bad = np.flatnonzero(~np.isclose(plain, relabelled, rtol=1e-12, equal_nan=True))
            failures.append(f"{name} {more}: {bad.size} ids differ, first {bad[:1]}")
    assert not failures, "\n".join(failures)


@pytest.mark.slow
def test_a_file_without_algorithms_or_an_unknown_name_is_a_usage_error(tmp_path, user_file):
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    assert_usage_error(run_cli("--graph", "rmat:6", "--algorithm", empty), "empty.py",
                       "0 algorithms")
    assert_usage_error(run_cli("--graph", "rmat:6", "--algorithm", f"{user_file}:far"),
                       "near.py", "'far'")
    assert_usage_error(run_cli("--graph", "rmat:6", "--algorithm", tmp_path / "none.py"),
                       "none.py", "no such file")


@pytest.mark.slow
def test_relabel_refuses_an_algorithm_that_does_not_say_what_isolated_vertices_get(tmp_path,
                                                                                 isolated):
    path = tmp_path / "silent.py"
    silent = "\n".join(line for line in USER.splitlines() if "isolated = " not in line)
    assert silent != USER
    path.write_text(silent)
    proc = run_cli("--graph", isolated, "--algorithm", path,
                   "--source", "3", "--relabel")
    assert_usage_error(proc, "near", "no edge", "--relabel")


TYPO = ("    return reached[t] == 0 and atomic_max(reached, t, 1) == 0",
        "    return reached[t] == widht and atomic_max(reached, t, 1) == 0")


@pytest.mark.slow
@pytest.mark.parametrize("debug", ["", "1"])
def test_a_functor_that_does_not_compile_is_one_line_at_its_file_and_line(tmp_path, debug):
    """A misspelt name in a user's functor: exit 2 and one line naming the file, the line of
    the name, the functor and Numba's reason, with TOTEM_DEBUG=1 too (no traceback)."""
    assert TYPO[0] in USER
    path = tmp_path / "typo.py"
    path.write_text(USER.replace(*TYPO))
    line = USER.splitlines().index(TYPO[0]) + 1
    first = USER.splitlines().index("def claim(s, t, w, reached):") + 1
    env = dict(os.environ, TOTEM_DEBUG=debug)
    proc = subprocess.run(
        [sys.executable, "-m", "totem_py.run", "--graph", "rmat:8", "--algorithm", str(path),
         "--source", "3", "--device", "emulated", "--quiet"], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=300)
    assert_usage_error(proc, f"{path}:{line}: ", f"functor claim (line {first})",
                       "NameError: name 'widht' is not defined")
