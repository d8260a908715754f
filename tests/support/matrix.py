"""The configuration matrix of the acceptance: every registered built-in algorithm (and
PageRank's other forms: networkx's converged one, split rounds) x HIGH/LOW/RAND x cpu share
1.0/0.7/0.3/0.0 x 1 and 2 GPU partitions x device cpu/emulated, each result checked by its
algorithm's verifier (the serial references it compares with are themselves checked against
scipy and networkx in test_reference.py). One plan serves every algorithm and device of a
configuration. tests/test_engine.py runs it on the toy graphs and the real ones, the stream, hub
sort and GPU tests with their own options, tests/mpi_driver.py and tests/sim_driver.py in their
processes."""

from bsp import EdgeOptions, Engine
from partitioners import partition
from totem_py.algorithms import ALGORITHMS, PageRank
from totem_py.errors import InputError, VerificationError
from totem_py.harness import default_source

from tests.support import SHARED_DATA
from tests.support.toys import toy_graphs, with_random_weights

STRATEGIES = ("HIGH", "LOW", "RAND", "BLOCK")
SHARES = (1.0, 0.7, 0.3, 0.0)
GPUS = (1, 2)
DEVICES = ("cpu", "emulated")
ITERATIONS = 5
LARGE = 100_000
MANY = 40               # supersteps: on graphs of LARGE edges, such runs at one mixed share only
TOLERANCE = 1e-5        # PageRank-Delta's: its L1 bound, 5.7e-5, is tighter than pagerank's 1e-4
TOL = 1e-6              # converged PageRank's (networkx's default): 30 rounds on chain, 75 on star
REAL = sorted(p.name for p in SHARED_DATA.glob("*.gz")) if SHARED_DATA.is_dir() else []
BUILT_IN = [cls for cls in ALGORITHMS.values() if cls.__module__.startswith("totem_py.algorithms.")]
# more settings of an option, each run as one more algorithm by the classes that take it
MORE = (dict(tol=TOL),)
TOYS = toy_graphs()


def algorithms(graph, source, tolerance=TOLERANCE, tol=TOL):
    """[(label, algorithm)] of the matrix on `graph`: every built-in algorithm of the registry
    made by its options (from `source`, ITERATIONS rounds, `tolerance`), again with each setting
    of MORE that it takes (`tol`: converged PageRank), and PageRank with split rounds (the GPUs
    doing the CPU-GPU edges, on by default where GPUs run GPU code), which no option chooses.
    Algorithms that need a vertex the graph lacks (a source of an empty graph) are left out."""
    options = dict(source=source, iterations=ITERATIONS, tolerance=tolerance, seed=0)
    out = []
    for cls in BUILT_IN:
        takes = {o.dest for o in cls.options}
        for more in ({},) + tuple(dict(m, tol=tol) if "tol" in m else m for m in MORE):
            if set(more) <= takes:
                try:
                    alg = cls.from_options(graph, **options, **more)
                except InputError:
                    continue
                out.append((" ".join([cls.name] + [f"--{k} {v}" for k, v in more.items()]),
                            alg))
    return out + [("pagerank split", PageRank(ITERATIONS, split=True))]


def mismatch(alg, graph, got):
    """None if the algorithm's verifier accepts `got` on `graph`, else its note."""
    try:
        return alg.verify(graph, got)
    except VerificationError as exc:
        return str(exc)


def check_matrix(graph, strategy, devices=DEVICES, shares=SHARES, edges=EdgeOptions(),
                 gpus_list=GPUS, hub_sort="degree", thin=False):
    """`thin`: on a graph of LARGE edges or more, the whole matrix at one mixed share
    (SHARES[-2]) only, the other shares with one GPU partition, on one of the devices, taking
    turns, and without the algorithms that took MANY supersteps or more in the first run."""
    source = default_source(graph) if graph.n_vertices else None
    failures, steps = [], {}
    turn = 0
    for share in shares:
        whole = not thin or graph.n_edges < LARGE or share == SHARES[-2]
        for gpus in gpus_list if whole else gpus_list[:1]:
            if share == 1.0 and gpus > 1:
                continue   # the same single-CPU-partition plan
            plan = partition(graph, strategy, share, gpus, seed=1, hub_sort=hub_sort)
            # a plan without a GPU partition is the same CPU partitions on every device
            on = devices if "gpu" in plan.kinds else devices[:1]
            if not whole and len(on) > 1:
                on, turn = (on[turn % len(on)],), turn + 1
            for device in on:
                engine = Engine(plan, device, edges=edges)
                for label, alg in algorithms(graph, source):
                    if not whole and steps.get(label, 0) >= MANY:
                        continue
                    got, records = engine.run(alg)
                    steps.setdefault(label, len(records))
                    note = mismatch(alg, graph, got)
                    if note:
                        failures.append(f"{label} {strategy} share={share} gpus={gpus} "
                                        f"{device} {edges.transfer} hub_sort={hub_sort}: {note}")
    assert not failures, "\n".join(failures)


_loaded = {}


def real_graph(name):
    """A graph of SHARED_DATA, loaded once per process; unweighted files, and signed trust
    ratings (bitcoinotc), get positive random weights."""
    if name not in _loaded:
        import totem_py
        g = totem_py.load(SHARED_DATA / name)
        usable = g.weights is not None and (g.n_edges == 0 or g.weights.min() >= 0)
        _loaded[name] = g if usable else with_random_weights(g, seed=5)
    return _loaded[name]
