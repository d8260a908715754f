"""An algorithm as the product runs it: the engine protocol (bsp.Program: messages, modes,
callbacks) and, declared by the same class beside its code, what the command line and the
harness need of it:

  name, options, from_options   `--algorithm NAME` and the options it takes (`Option`)
  reference, verify             a serial computation of the result; a check of a result
  needs_weights                 the weights reach the functors; `nonnegative_weights` too:
                                none may be negative (shortest paths)
  traversed_edges               the TEPS numerator
  metrics                       the algorithm's own --json keys
  memory                        host bytes of a run, checked before anything is loaded
  isolated, values_are_ids      what `--relabel` needs to give the values of a run without it

Whole-graph quantities (a vertex count to normalise by, random sources) come from the graph
given to `from_options`: the Graph in one process, the ranks' GraphSummary under MPI, never a
partition's or a rank's share. `graph.n_ids` counts the vertex ids the results cover: with
`--relabel` the graph stores only the vertices in some edge (`graph.n_vertices` of them,
`graph.ids` their original ids) and stands for the others too, numbered after them; a run's
values cover the stored vertices, and `isolated_values` gives the others'.
"""

import importlib.util
import inspect
import os
import sys
from dataclasses import dataclass

import numpy as np

from bsp import Program

from ..errors import InputError

ALGORITHMS = {}
_FILES = {}     # a file's real path -> the names of the algorithms it registered


def register(cls):
    """Add an Algorithm class to the registry under its `name` (usable as a decorator): the
    command line, the harness, the memory check and the tests find it there."""
    ALGORITHMS[cls.name] = cls
    return cls


def find(spec):
    """The registered name of the algorithm `spec` names: a registered name, or FILE.py or
    FILE.py:NAME, a Python file that defines algorithms (imported once; its Algorithm classes
    are registered if it does not register them itself), NAME one of them (FILE.py alone when
    it defines one). InputError when there is no such file or algorithm."""
    if not spec.endswith(".py") and ".py:" not in spec:
        return spec
    path, _, name = spec.rpartition(".py:") if ".py:" in spec else (spec[:-3], "", "")
    path += ".py"
    real = os.path.realpath(path)
    if real not in _FILES:
        if not os.path.isfile(real):
            raise InputError("no such file", path)
        _FILES[real] = _load(real, path)
    names = _FILES[real]
    if not name and len(names) != 1:
        raise InputError(f"defines {len(names)} algorithms ({', '.join(names) or 'none'}): "
                         f"name one, as {path}:NAME", path)
    if name and name not in names:
        raise InputError(f"defines no algorithm {name!r} (it defines {', '.join(names)})", path)
    return name or names[0]


def _load(real, path):
    """Import the file `real` as a module of its own; the names of the algorithms it defines."""
    module_name = "totem_algorithm_" + os.path.basename(real)[:-3]
    before = dict(ALGORITHMS)
    spec = importlib.util.spec_from_file_location(module_name, real)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise InputError(f"cannot load it: {type(exc).__name__}: {exc}", path) from exc
    for cls in vars(module).values():
        if inspect.isclass(cls) and issubclass(cls, Algorithm) and cls.name != Algorithm.name \
                and cls.__module__ == module_name and ALGORITHMS.get(cls.name) is not cls:
            register(cls)
    return [n for n, cls in ALGORITHMS.items() if before.get(n) is not cls]


@dataclass(frozen=True)
class Option:
    """A command-line option an algorithm takes: its flag ("--k") and argparse's keywords; the
    parsed value reaches `from_options` under argparse's destination name ("k"). `vertices`
    says where the value names vertices, which --relabel renumbers: "one" (the value is a
    vertex id) or "list" (a list value holds vertex ids; a count or a word does not). A --json
    key of the same name as the option's destination holds them too, and is numbered back."""
    flag: str
    kwargs: dict
    vertices: str = None

    @property
    def dest(self):
        return self.flag.lstrip("-").replace("-", "_")


class Algorithm(Program):
    """Base class of the algorithms the command line and the harness run (see the module
    docstring); subclasses also implement the engine callbacks of bsp.Program."""
    name = "algorithm"
    options = ()            # Option objects: what the command line adds for it
    isolated = None         # the value of a vertex in no edge; None: not known (--relabel refuses)
    values_are_ids = False  # the values are vertex ids (labels), renumbered by --relabel too
    weak_components = False     # the values label the weakly connected components
    # with `needs_weights` (bsp.Program's: the weights reach the functors, 1 where a graph has
    # none), a negative weight is refused (shortest paths)
    nonnegative_weights = False
    # results agree (`compare`) whatever the plan and rank count; False where they depend on the
    # order of the work (PageRank-Delta's pushes): verify each instead
    same_on_every_plan = True
    # host bytes of a run, as measured by `python -m experiments.memory_costs`, for an
    # unweighted and a weighted graph: ((peak: per vertex, per edge, fixed), (kept for later
    # stages: per vertex, per edge)); None: the largest of the registered algorithms'
    memory = None

    @classmethod
    def from_options(cls, graph, **options):
        """The algorithm object for `graph` (see the module docstring) from the command line's
        (or run()'s) options, which include every algorithm's: take those it declares, ignore
        the rest."""
        return cls()

    def reference(self, graph):
        """The result computed serially and independently of the engine (NumPy or plain loops,
        no partitions), for tests and the default `verify`."""
        raise NotImplementedError(f"{self.name} has no serial reference")

    def verify(self, graph, values):
        """Check a result: None if it is right, else a one-line description of the first error
        (or raise totem_py.VerificationError). By default, equal to `reference` (integers and
        bools exactly, floats within 1e-6 relative and 1e-9 absolute)."""
        want = np.asarray(self.reference(graph))
        got = np.asarray(values)
        if got.shape != want.shape:
            return f"{self.name}: {got.shape} values, expected {want.shape}"
        exact = want.dtype.kind in "biu"
        bad = got != want if exact else ~np.isclose(got, want, rtol=1e-6, atol=1e-9)
        if bad.any():
            v = int(np.flatnonzero(bad)[0])
            return f"{self.name}: vertex {v} has {got[v]}, the reference {want[v]}"
        return None

    @classmethod
    def compare(cls, one, two):
        """None if two results of this algorithm on one graph agree: integers and bools exactly,
        floats within 1e-5 relative and 1e-9 absolute (sums add up in another order on another
        plan), infinities and NaNs where the other has them; else a note on the first vertex
        that differs."""
        one, two = np.asarray(one), np.asarray(two)
        if one.shape != two.shape:
            return f"shape {one.shape} != {two.shape}"
        if one.dtype.kind in "biu" and two.dtype.kind in "biu":
            bad = np.flatnonzero(one != two)
        else:
            same = np.isclose(one, two, rtol=1e-5, atol=1e-9, equal_nan=True) | (one == two)
            bad = np.flatnonzero(~same)
        return None if bad.size == 0 else (f"{bad.size} vertices differ, first {bad[0]}: "
                                           f"{one[bad[0]]} != {two[bad[0]]}")

    def traversed_edges(self, graph, values, records):
        """Edges counted for TEPS (edges / time): by default |E|. A sum over vertices and
        records: under MPI each rank counts its own vertices (`graph.out_degree` and `values`
        are theirs, `graph.vertex_ids` their global ids) with the records and `graph.n_edges`
        on rank 0 only (none and 0 elsewhere), and the ranks' counts are added."""
        return graph.n_edges

    def metrics(self):
        """The algorithm's own keys of the --json record (after a run: what it found, such as
        the rounds it took), by name."""
        return {}

    @classmethod
    def check_relabel(cls):
        """InputError unless `--relabel` can give this algorithm's values: its class says what
        a vertex in no edge gets (`isolated`, or its own `isolated_values`)."""
        if cls.isolated is None and cls.isolated_values is Algorithm.isolated_values:
            raise InputError(f"{cls.name} does not say what a vertex in no edge gets (its "
                             f"class's `isolated`), so --relabel cannot give its values")

    @classmethod
    def vertex_options(cls):
        """The destinations of its options that name vertices (`Option.vertices`)."""
        return [o.dest for o in cls.options if o.vertices]

    def isolated_values(self, graph):
        """After a run on `graph`, the values of the vertices it leaves out (in no edge, ids
        graph.n_vertices .. graph.n_ids - 1): `isolated` each, by default."""
        self.check_relabel()
        return np.full(graph.n_ids - graph.n_vertices, self.isolated)

    def with_isolated(self, graph, values):
        """A run's values on `graph` followed by those of the vertices it leaves out: one per
        id (the same array when it leaves none out)."""
        if graph.n_ids == graph.n_vertices:
            return values
        rest = np.asarray(self.isolated_values(graph))
        return np.concatenate([values, rest.astype(values.dtype, copy=False)])

    @classmethod
    def memory_cost(cls):
        """`memory`, or the largest of the registered algorithms' figures where it is None."""
        if cls.memory is not None:
            return cls.memory
        known = [c.memory for c in ALGORITHMS.values() if c.memory is not None]
        return tuple(tuple(tuple(max(x) for x in zip(*parts)) for parts in zip(*costs))
                     for costs in zip(*known))
