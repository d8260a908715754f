"""PageRank in networkx's form (`--tol`): equal to networkx's `pagerank` within 1e-6 per vertex
on the real graphs of ../shared/data and on toy graphs with vertices without out-edges, on
devices cpu and emulated, partitions HIGH/LOW/RAND at cpu shares 1.0, 0.5 and 0.25; the
reference against networkx; the verifier rejecting wrong ranks; the engine's summed votes; the
command line and the Python API. (The configuration matrix of tests/test_engine.py, the GPU
operators in tests/test_gpu_backend.py and MPI ranks in tests/test_mpi.py run it too.)

networkx's graph is a MultiDiGraph where the graph has parallel edges (networkx adds them up,
as the engine and the reference count each), else a DiGraph (the same, built faster); every
vertex is in it, those in no edge too."""

from pathlib import Path

import networkx as nx
import numpy as np
import pytest

import totem_py
from bsp import EdgeOptions, Engine, Vote
from bsp.engine import tally
from partitioners import partition
from totem_py import Graph
from totem_py.algorithms import PageRank, pagerank
from totem_py.errors import VerificationError

from tests.support import SHARED_DATA as DATA
from tests.support.cli import assert_usage_error, run_here
from tests.support.toys import toy_graphs

REAL = ("wiki-Vote.txt.gz", "email-Enron.txt.gz", "web-NotreDame.txt.gz")
LARGE = "web-NotreDame.txt.gz"  # networkx takes 3 s a tolerance there: at 1e-6 only
PLANS = [(s, share) for s in ("HIGH", "LOW", "RAND") for share in (1.0, 0.5, 0.25)]
DEVICES = ("cpu", "emulated")
TOLS = (1e-6, 1e-9)     # networkx's default, and one that takes more rounds (40 on email-Enron)


def has_parallel_edges(graph):
    key = graph.edge_sources().astype(np.int64) * graph.n_vertices + graph.indices
    return np.unique(key).size < key.size


def networkx_ranks(graph, tol=1e-6, max_iter=100, weight=None):
    """nx.pagerank on the graph (every vertex, parallel edges kept), by vertex id; `weight`:
    networkx's edge attribute to weigh by ("weight"), or None for unweighted."""
    G = graph.to_networkx(multigraph=has_parallel_edges(graph))
    r = nx.pagerank(G, alpha=0.85, tol=tol, max_iter=max_iter, weight=weight)
    return np.array([r[v] for v in range(graph.n_vertices)])


def dangling_toys():
    """Toy graphs with vertices without out-edges (and rmat_small's parallel edges and
    self-loops), plus one whose dangling vertex has in-edges only from a parallel pair."""
    toys = toy_graphs()
    out = {k: toys[k] for k in ("chain", "disconnected", "rmat_small", "single", "star")}
    src, dst = np.array([0, 0, 1, 2, 2, 3, 3]), np.array([1, 1, 2, 0, 4, 3, 4])
    out["parallel_to_dangling"] = Graph.from_edges(src, dst, 6, spec="toy:parallel_to_dangling")
    return out


def run_matrix(graph, tol, want, max_iter=100, weighted=False):
    """The engine on every plan and device, each run within 1e-6 of `want` per vertex and
    converged: (the largest difference, the rounds taken)."""
    seen = []
    for strategy, share in PLANS:
        plan = partition(graph, strategy, share, 1, seed=1)
        # a plan without a GPU partition is the same CPU partitions on every device
        for device in DEVICES if "gpu" in plan.kinds else DEVICES[:1]:
            alg = PageRank(max_iter, tol=tol, weighted=weighted)
            got, records = Engine(plan, device, edges=EdgeOptions()).run(alg)
            diff = float(np.abs(got - want).max()) if graph.n_vertices else 0.0
            assert diff <= 1e-6, (strategy, share, device, diff)
            assert graph.n_vertices == 0 or abs(got.sum() - 1.0) <= 1e-9
            assert alg.converged and len(records) == alg.rounds + 1
            seen.append((diff, alg.rounds))
    assert len({r for _, r in seen}) == 1      # every plan and device stops at the same round
    return max(d for d, _ in seen), seen[0][1]


# ---------------------------------------------------------------- against networkx

@pytest.mark.parametrize("name", sorted(dangling_toys()))
def test_toys_equal_networkx(name):
    g = dangling_toys()[name]
    for tol in TOLS:
        want = networkx_ranks(g, tol, max_iter=1000)
        diff, _ = run_matrix(g, tol, want, max_iter=1000)
        assert diff <= 1e-6 * want.min()       # float32 contributions: far below 1e-6
        np.testing.assert_allclose(pagerank.converged(g, tol, max_iter=1000), want,
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["chain", "rmat_small", "parallel_to_dangling"])
def test_weighted_toys_equal_networkx(name):
    """On a weighted graph a rank is shared in proportion to the out-edges' weights, as
    nx.pagerank(G, weight="weight") shares it (vertex 0's out-edges weigh 0: it is dangling)."""
    g = dangling_toys()[name]
    w = np.random.default_rng(2).random(g.n_edges) * 4
    w[g.indptr[0]:g.indptr[1]] = 0.0
    g = g.with_weights(w)
    for tol in TOLS:
        want = networkx_ranks(g, tol, max_iter=1000, weight="weight")
        assert np.abs(want - networkx_ranks(g, tol, max_iter=1000)).max() > 1e-3
        diff, _ = run_matrix(g, tol, want, max_iter=1000, weighted=True)
        assert diff <= 1e-6 * want.min()


@pytest.mark.slow
def test_command_line_weighs_by_the_files_weights(tmp_path):
    """`--tol` on a weighted file gives nx.pagerank(G) (which weighs by "weight"), verified;
    `--unweighted` gives nx.pagerank(G, weight=None); TOTEM's form weighs too."""
    from totem_py.io import load
    path = Path(__file__).resolve().parent / "data" / "tiny.wel"
    g = load(path)
    assert g.weights is not None
    for extra, weight in (((), "weight"), (("--unweighted",), None)):
        out = tmp_path / "pr.npy"
        proc = run_here("--graph", path, "--algorithm", "pagerank", "--tol", "1e-6", *extra,
                        "--device", "emulated", "--verify", "--quiet", "--output", out)
        assert proc.returncode == 0, proc.stderr
        nx_ranks = nx.pagerank(g.to_networkx(multigraph=True), weight=weight)
        want = np.array([nx_ranks[v] for v in range(g.n_vertices)])
        assert np.abs(np.load(out) - want).max() <= 1e-12
    rounds = {}
    for extra in ((), ("--unweighted",)):
        out = tmp_path / "k.npy"
        proc = run_here("--graph", path, "--algorithm", "pagerank", *extra, "--device",
                        "emulated", "--verify", "--quiet", "--output", out)
        assert proc.returncode == 0, proc.stderr
        rounds[extra] = np.load(out)
    np.testing.assert_allclose(rounds[()], pagerank.rounds(g, 5, weighted=True), rtol=1e-6)
    np.testing.assert_allclose(rounds[("--unweighted",)], pagerank.rounds(g, 5), rtol=1e-6)
    assert np.abs(rounds[()] - rounds[("--unweighted",)]).max() > 1e-3


_networkx = {}


def real(name):
    """(graph, {tol: networkx's ranks}) of a real graph, once per module (LARGE: the reference's
    at the tighter tolerance, which equals networkx's on the other graphs)."""
    if name not in _networkx:
        g = totem_py.load(DATA / name)
        _networkx[name] = g, {tol: networkx_ranks(g, tol) if name != LARGE or tol == TOLS[0]
                              else pagerank.converged(g, tol) for tol in TOLS}
    return _networkx[name]


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not beside the checkout")
@pytest.mark.parametrize("name", [n if n == "wiki-Vote.txt.gz" else
                                  pytest.param(n, marks=pytest.mark.extended) for n in REAL])
def test_real_graphs_equal_networkx(name):
    g, want = real(name)
    assert g.directed
    for tol in TOLS:
        diff, rounds = run_matrix(g, tol, want[tol])
        assert rounds > 1 and diff <= 1e-12
        np.testing.assert_allclose(pagerank.converged(g, tol), want[tol], rtol=1e-10,
                                   atol=1e-15)
    # TOTEM's form is not networkx's: rank leaks out through vertices without out-edges
    assert pagerank.rounds(g, 5).sum() < 0.99 or not (g.out_degree == 0).any()


# ---------------------------------------------------------------- the verifier

def test_verifier_accepts_networkx_and_rejects_wrong_ranks():
    g = toy_graphs()["rmat_small"]
    tol = 1e-6
    nxr = networkx_ranks(g, tol)
    pagerank.verify_converged(g, tol, nxr)
    assert PageRank(tol=tol).verify(g, nxr) is None
    totem = pagerank.rounds(g, 5)
    with pytest.raises(VerificationError, match="sum to"):
        pagerank.verify_converged(g, tol, totem)          # TOTEM's form: mass lost
    with pytest.raises(VerificationError, match="sum to"):
        pagerank.verify_converged(g, tol, totem / totem.sum() * 0.999)
    swapped = nxr.copy()
    hi, lo = int(np.argmax(nxr)), int(np.argmin(nxr))
    swapped[[hi, lo]] = swapped[[lo, hi]]               # sums to 1, above the floor
    with pytest.raises(VerificationError, match="vertex|distance"):
        pagerank.verify_converged(g, tol, swapped)
    a, b = np.argsort(-nxr)[:2]
    nudged = nxr.copy()                                 # within the L1 bound, 1e-4 off
    nudged[a] += 1e-4 * nxr[a]
    nudged[b] -= 1e-4 * nxr[a]
    with pytest.raises(VerificationError, match=f"worst vertex ({a}|{b}) "):
        pagerank.verify_converged(g, tol, nudged)
    with pytest.raises(VerificationError, match="round|distance"):
        pagerank.verify_converged(g, tol, pagerank.converged(g, 1e-3))   # stopped early
    with pytest.raises(VerificationError, match="teleport"):
        floor = nxr.copy()
        floor[lo] = 0.0
        floor[hi] += nxr[lo]
        pagerank.verify_converged(g, tol, floor)
    with pytest.raises(VerificationError, match="nan"):
        pagerank.verify_converged(g, tol, np.full(g.n_vertices, np.nan))
    with pytest.raises(VerificationError, match="one value per vertex"):
        pagerank.verify_converged(g, tol, nxr[:-1])


def test_verifier_follows_max_iter_when_not_converged():
    g = toy_graphs()["star"]        # bipartite: the change shrinks slowly
    got = totem_py.run(g, "pagerank", tol=1e-10, iterations=7, device="emulated",
                       verify=True)
    m = got.metrics
    assert m["converged"] is False and m["rounds"] == 7 and m["supersteps"] == 8
    assert m["iterations"] == 7 and m["tol"] == 1e-10
    pagerank.verify_converged(g, 1e-10, got.values, max_iter=7)
    with pytest.raises(VerificationError):
        pagerank.verify_converged(g, 1e-10, got.values, max_iter=8)


def test_verifier_accepts_the_empty_graph():
    g = toy_graphs()["empty"]
    pagerank.verify_converged(g, 1e-6, np.empty(0))
    assert totem_py.run(g, "pagerank", tol=1e-6, device="emulated").values.size == 0


# ---------------------------------------------------------------- engine, API, command line

def test_votes_sums_add_up_over_partitions():
    total = tally([Vote(2, 5, 3.0, (1.0, 0.25)), Vote(1, 0, 1.0, (0.5, 0.5))])
    assert total == Vote(3, 5, 1.0, (1.5, 0.75))
    assert tally([Vote(1), Vote(0)]).sums == ()


def test_python_api_defaults():
    g = toy_graphs()["rmat_small"]
    r = totem_py.run(g, "pagerank", tol=1e-6, device="emulated", verify=True)
    m = r.metrics
    assert m["iterations"] == 100 and m["converged"] is True
    assert m["supersteps"] == m["rounds"] + 1 and m["verified"] is True
    assert abs(r.values.sum() - 1.0) <= 1e-12
    r = totem_py.run(g, "pagerank", device="emulated")     # TOTEM's form, unchanged
    assert r.metrics["iterations"] == 5 and r.metrics["supersteps"] == 5
    assert r.metrics["tol"] is None and r.metrics["converged"] is None
    assert np.allclose(r.values, pagerank.rounds(g, 5), rtol=1e-6)
    with pytest.raises(ValueError):
        PageRank(tol=0.0)


@pytest.mark.slow
@pytest.mark.skipif(not DATA.is_dir(), reason="../shared/data is not beside the checkout")
def test_command_line_on_wiki_vote(tmp_path):
    g, want = real("wiki-Vote.txt.gz")
    out = tmp_path / "pr.npy"
    proc = run_here("--graph", DATA / "wiki-Vote.txt.gz", "--algorithm", "pagerank", "--tol",
                    "1e-6", "--verify", "--device", "emulated", "--output", out)
    assert proc.returncode == 0, proc.stderr
    assert "verified" in proc.stdout and "converged to tol 1e-06 after 5 rounds" in proc.stdout
    ranks = np.load(out)
    assert abs(ranks.sum() - 1.0) <= 1e-9 and np.abs(ranks - want[1e-6]).max() <= 1e-6
    proc = run_here("--graph", DATA / "wiki-Vote.txt.gz", "--algorithm", "pagerank", "--tol",
                    "1e-12", "--iterations", "3", "--device", "emulated")
    assert proc.returncode == 0 and "did not converge" in proc.stderr


@pytest.mark.parametrize("args, words", [
    (["--algorithm", "pagerank", "--tol", "0"], ["--tol", "positive"]),
    (["--algorithm", "pagerank", "--tol", "inf"], ["--tol", "positive"]),
    (["--algorithm", "pagerank_delta", "--tol", "1e-6"], ["--tol", "pagerank"]),
    (["--algorithm", "pagerank", "--tolerance", "0.1"], ["--tolerance", "pagerank_delta"]),
    (["--algorithm", "pagerank", "--tol", "1e-6", "--iterations", "0"], ["--iterations"]),
    (["--algorithm", "pagerank", "--tol", "nan"], ["--tol", "positive"]),
    (["--algorithm", "pagerank_delta", "--tolerance", "inf"], ["--tolerance", "positive"]),
    (["--algorithm", "pagerank_delta", "--tolerance", "nan"], ["--tolerance", "positive"]),
    (["--algorithm", "pagerank_delta", "--tolerance", "-0.01"], ["--tolerance", "positive"]),
])
def test_bad_tol_options_exit_2(args, words):
    assert_usage_error(run_here("--graph", "tests/data/tiny.txt", *args), *words)
