"""Options whose results must mean what users expect: --relabel's refusals (its values:
test_registry.py), bc's --sources and --normalized (against networkx), CSV output, the default
source, and complete help texts."""

import ast
import importlib
import inspect
import json
import random

import networkx as nx
import numpy as np
import pytest

import totem_py
from totem_py import Graph
from totem_py.algorithms import bc, bfs, sssp
from totem_py.harness import default_source

from tests.support import ROOT, SHARED_DATA as DATA
from tests.support.cli import assert_usage_error, run_cli, run_here

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason="no ../shared/data beside the checkout")


def run_json(tmp_path, *args, output="r.npy"):
    out, js = tmp_path / output, tmp_path / "m.json"
    proc = run_here(*args, "--output", out, "--json", js, "--quiet", "--device", "emulated")
    assert proc.returncode == 0, proc.stderr
    values = np.load(out) if output.endswith(".npy") else out.read_text()
    return values, json.loads(js.read_text())


@pytest.mark.slow
@needs_data
def test_relabel_refuses_a_source_in_no_edge():
    proc = run_here("--graph", DATA / "wiki-Vote.txt.gz", "--relabel", "--source", 0)
    assert_usage_error(proc, "--source", "vertex 0")


def directed_graph(n=60, p=0.08, seed=5):
    return nx.gnp_random_graph(n, p, seed=seed, directed=True)


@pytest.mark.slow
def test_bc_normalized_over_every_source_equals_networkx(tmp_path):
    d = directed_graph()
    path = tmp_path / "g.el"
    path.write_text("".join(f"{u} {v}\n" for u, v in d.edges))
    values, m = run_json(tmp_path, "--graph", path, "--algorithm", "bc", "--sources", "all",
                         "--normalized", "--verify", "--relabel")
    want = nx.betweenness_centrality(d, normalized=True)
    got = {v: values[v] for v in d}
    assert m["normalized"] is True and len(m["sources"]) == d.number_of_nodes()
    assert np.allclose([got[v] for v in d], [want[v] for v in d], rtol=1e-9, atol=1e-12)


def test_bc_normalized_over_sampled_sources_equals_networkx():
    d = directed_graph()
    k = 7
    # the nodes networkx samples below; its per-source scaling is that of networkx 3.5+
    sampled = random.Random(11).sample(list(d), k)
    want = nx.betweenness_centrality(d, k=k, normalized=True, seed=random.Random(11))
    got = totem_py.run(Graph.from_networkx(d), "bc", sources=sampled, normalized=True,
                       device="cpu").values
    assert np.allclose(got, [want[v] for v in range(d.number_of_nodes())], rtol=1e-9,
                       atol=1e-12)


def test_betweenness_scale_counts_pairs():
    scale = bc.scale(5, [0, 1])    # 2 sources: pairs (k - 1)(n - 2) or k (n - 2)
    assert np.allclose(scale, [1 / 3, 1 / 3, 1 / 6, 1 / 6, 1 / 6])
    assert np.isnan(bc.scale(5, [2])[2])
    assert np.array_equal(bc.scale(2, [0]), [1.0, 1.0])


@pytest.mark.slow
def test_bc_sources_k_and_list(tmp_path):
    spec = ("--graph", "rmat:8", "--algorithm", "bc")
    _, a = run_json(tmp_path, *spec, "--sources", 5, "--verify")
    _, b = run_json(tmp_path, *spec, "--sources", 5, "--seed", 0)
    assert a["sources"] == b["sources"] and len(set(a["sources"])) == 5
    values, c = run_json(tmp_path, *spec, "--sources", "3,17,40", "--verify")
    assert c["sources"] == [3, 17, 40]
    g = totem_py.generate("rmat:8")
    assert np.allclose(values, bc.betweenness(g, [3, 17, 40]))
    _, everyone = run_json(tmp_path, *spec, "--sources", 10 ** 6)
    assert everyone["sources"] == list(range(256))


@pytest.mark.parametrize("args, words", [
    (("--algorithm", "bc", "--sources", "x"), ("--sources", "'x'")),
    (("--algorithm", "bc", "--sources", "3,3"), ("--sources", "twice")),
    (("--algorithm", "bc", "--sources", "3,900"), ("--sources", "900")),
    (("--algorithm", "bc", "--sources", "0"), ("--sources", "at least 1")),
    (("--algorithm", "bc", "--sources", "2", "--source", "1"), ("--source", "not both")),
    (("--algorithm", "bfs", "--sources", "2"), ("--sources", "bfs")),
    (("--algorithm", "pagerank", "--normalized"), ("--normalized", "pagerank")),
])
def test_bad_bc_options_exit_2(args, words):
    assert_usage_error(run_here("--graph", "rmat:8", *args), *words)


@pytest.mark.slow
def test_output_csv_has_a_line_per_vertex(tmp_path):
    text, m = run_json(tmp_path, "--graph", "rmat:8", "--algorithm", "sssp", output="r.csv")
    lines = text.splitlines()
    assert lines[0] == "vertex,value" and len(lines) == 257
    dist = sssp.distances(totem_py.generate("rmat:8", weighted=True), m["source"])
    got = {int(v): float(x) for v, x in (line.split(",") for line in lines[1:])}
    assert [got[v] for v in range(256)] == dist.tolist()
    text, _ = run_json(tmp_path, "--graph", "rmat:8", "--algorithm", "bfs", output="r.csv")
    assert text.splitlines()[1].count(",") == 1 and "." not in text


@needs_data
def test_default_source_is_in_the_largest_component():
    g = totem_py.load(DATA / "email-Enron.txt.gz")
    source = default_source(g)
    levels = bfs.levels(g, source)
    assert (levels >= 0).sum() > 0.9 * 33696      # the giant component's size
    # two components: a path 0-1-2 and a bigger one 3..9; any seed picks a vertex of the latter
    src, dst = [0, 1] + list(range(3, 9)), [1, 2] + list(range(4, 10))
    small = Graph.from_edges(np.array(src), np.array(dst), 10)
    assert {default_source(small, seed) for seed in range(20)} <= set(range(3, 9))


@pytest.mark.slow
def test_help_describes_every_option():
    helps = {"totem_py.run": run_here("--help"),
             "experiments.offload_sweep": run_cli("--help", module="experiments.offload_sweep")}
    for module, proc in helps.items():
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout.split("options:")[1]
        # every option line names its metavar and a description (on that line or the next)
        blocks = [b for b in text.split("\n  -")[1:]]
        for block in blocks:
            words = block.split()
            assert len(words) > 2 or "help" in block, f"{module}: no help for -{block!r}"
    description = helps["experiments.offload_sweep"].stdout
    assert "one JSON line per run." in " ".join(description.split())


def test_experiments_describe_themselves_in_whole_sentences():
    """`--help` of every experiment starts with its docstring's first paragraph, not a line cut
    off mid-sentence."""
    for path in sorted((ROOT / "experiments").glob("*.py")):
        text = path.read_text()
        if "description=__doc__" in text:
            assert 'description=__doc__.split("\\n\\n")[0]' in text, path.name
            first = " ".join(ast.get_docstring(ast.parse(text)).split("\n\n")[0].split())
            assert first.endswith((".", "?", ")")), (path.name, first[-40:])


def test_python_api_documents_its_keywords():
    importlib.import_module("totem_py.run")     # the command's module does not hide the function
    sig = inspect.signature(totem_py.run)
    names = [p for p in sig.parameters if p != "graph"]
    assert "options" in names and "cpu_share" in names
    doc = totem_py.run.__doc__
    assert "sources" in doc and "normalized" in doc     # bc's, among the algorithms' options
    for name in names:
        assert f"{name}:" in doc or f"{name}: " in doc, name


@pytest.mark.slow
def test_mpi_check_runs_without_a_gpu_by_default():
    """mpi_check on its default device, two ranks against one process (its smoke test)."""
    proc = run_cli("--ranks", 2, "--graph", "rmat:9", "--algorithms", "bfs", "--trials", 1,
                   module="experiments.mpi_check")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "results MATCH" in proc.stdout and "all results match" in proc.stdout


@pytest.mark.slow
def test_a_rank_output_of_one_process_lists_every_vertex_by_its_original_id(tmp_path):
    """--output with {rank} in one process after --relabel: every vertex under the file's ids,
    the one in no edge too."""
    path = tmp_path / "g.csv"
    path.write_text("0,1\n1,2\n2,3\n3,5\n")        # vertex 4 is in no edge
    proc = run_here("--graph", path, "--algorithm", "bfs", "--relabel", "--source", 0,
                   "--verify", "--quiet", "--device", "emulated",
                   "--output", tmp_path / "r{rank}.npy")
    assert proc.returncode == 0, proc.stderr
    got = np.load(tmp_path / "r0.npy")
    assert got["vertex"].tolist() == [0, 1, 2, 3, 4, 5]
    assert got["value"].tolist() == [0, 1, 2, 3, -1, 4]
