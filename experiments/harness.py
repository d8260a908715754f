"""The benchmark harness: one graph, configurations x algorithms run through the public
`totem_py.run` (its trials: one untimed warm-up, then the median of the timed runs), a table row
per cell as it finishes, and a JSON report rewritten after each cell, so that a run cut short
keeps what it measured. Each benchmark (bench_gpu, bench_transfer, gpu_budget, scaling, bench_cpu)
is a matrix, a row format and its own derived columns on top of it:

    prov = start("experiments.NAME", argv, gpu=True)
    graph = make_graph("rmat:20", weighted=True)
    table, report = Table(("algorithm", -9), ("config", -10), ("ms", 9, ".2f")), Report(path, prov)
    for cell in cells(graph, [("cpu", dict(cpu_share=1.0, device="cpu"))], ["bfs", "sssp"]):
        table.row(cell.algorithm, cell.config, 1e3 * cell.metrics["time_s"])
        report.add(dict(cell.metrics, config=cell.config))
"""

import gc
import json
import math
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np

from experiments.provenance import header, provenance

MAX_TRIALS = 25
# the keywords of totem_py.run that make a plan: configurations that agree on them share one
PARTITIONING = ("partition", "cpu_share", "gpus", "seed", "hub_sort")


def start(module, argv, gpu=False):
    """The run's provenance (command, code version, hardware), printed first."""
    prov = provenance(module, argv, gpu=gpu)
    print(header(prov), flush=True)
    return prov


def make_graph(spec, undirected=True, weighted=False, seed=0):
    """The benchmark's graph, generated once and described in one line. (totem_py, which
    starts Numba, is imported on first use: a benchmark may set Numba's thread count first.)"""
    import totem_py
    t0 = time.perf_counter()
    graph = totem_py.generate(spec, seed=seed, undirected=undirected, weighted=weighted)
    print(f"{spec} {'undirected' if undirected else 'directed'}: {graph.n_vertices} vertices, "
          f"{graph.n_edges} edges, generated in {time.perf_counter() - t0:.1f} s", flush=True)
    return graph


def registered(name):
    """The algorithm's class in totem_py's registry."""
    from totem_py.algorithms import ALGORITHMS
    return ALGORITHMS[name]


def same(algorithm, one, two):
    """Whether two results of `algorithm` agree (its class's `compare`)."""
    return registered(algorithm).compare(one, two) is None


class Cell(NamedTuple):
    config: str
    algorithm: str
    metrics: dict       # the run's --json record; None when the run failed
    values: object      # the per-vertex result
    check: str          # reference, same, DIFFERS, verified, or why the run failed
    wall_s: float       # the cell's wall time: partitioning, warm-up, trials, checks


def cells(graph, configs, algorithms, trials=3, min_timed=0.0, verify=(), refs=None,
          options=None, **common):
    """Run every configuration's algorithms on `graph`; yield a Cell as each finishes.

    configs: (label, keywords of totem_py.run) pairs; `common`: keywords of every run;
    `options(algorithm)`: more keywords per algorithm. Consecutive configurations that agree on
    PARTITIONING share one plan; the plan goes before another is built (the partitioner's memory
    check counts what is still held). The first run that reports a source fixes it for the rest.
    A run whose trials add up to less than `min_timed` seconds runs again with enough trials
    (MAX_TRIALS at most): a few-ms run's trials spread widely.
    Checks: an algorithm's first result is the reference (kept in `refs`, which a caller may
    share between calls), later ones are "same" or "DIFFERS" against it; runs are "verified" by
    the algorithm's verifier where `verify` is True, for the references of the algorithms named
    in `verify`, and always for algorithms whose results depend on the plan. A run that raises
    (a configuration that does not fit) yields metrics None and the error as its check.
    """
    import totem_py
    refs = {} if refs is None else refs
    source = common.pop("source", None)
    plan, last = None, None
    for label, kw in configs:
        kw = dict(common, **kw)
        key = [kw.get(k) for k in PARTITIONING]
        if key != last:
            plan = None
            gc.collect()
        last = key
        for alg in algorithms:
            check_all = verify is True or not registered(alg).same_on_every_plan
            checked = check_all or (alg not in refs and alg in verify)
            opts = dict(kw, **(options(alg) if options else {}))
            t0 = time.perf_counter()
            try:
                r = totem_py.run(graph, alg, source=source, trials=trials, plan=plan,
                                 verify=checked, **opts)
                timed = max(sum(r.metrics["trials_s"]), 1e-9)
                more = min(MAX_TRIALS, math.ceil(min_timed / timed * trials))
                if more > trials:
                    r = totem_py.run(graph, alg, source=r.metrics["source"], trials=more,
                                     plan=r.plan, **opts)
            except Exception as exc:        # reported in the table, not fatal
                yield Cell(label, alg, None, None, f"failed: {type(exc).__name__}: {exc}",
                           time.perf_counter() - t0)
                continue
            plan, values, m = r.plan, r.values, r.metrics
            r = None
            if source is None and m.get("source") is not None:
                source = m["source"]
            if alg not in refs:
                refs[alg] = values
                check = "verified" if checked else "reference"
            elif check_all:
                check = "verified"
            else:
                check = "same" if same(alg, values, refs[alg]) else "DIFFERS"
            yield Cell(label, alg, m, values, check, time.perf_counter() - t0)


class Table:
    """A table printed a row at a time. Columns: (title, width[, format]); a negative width
    aligns left; None prints as "-"."""

    def __init__(self, *columns):
        self.columns = columns
        print(self.line([c[0] for c in columns]), flush=True)

    def line(self, texts):
        return " ".join(f"{t:<{-c[1]}}" if c[1] < 0 else f"{t:>{c[1]}}"
                        for t, c in zip(texts, self.columns)).rstrip()

    def row(self, *values):
        texts = ["-" if v is None else format(v, c[2]) if len(c) > 2 else str(v)
                 for v, c in zip(values, self.columns)]
        print(self.line(texts), flush=True)


class Report:
    """The JSON report: the provenance, the run's fields and a list of records (under `key`),
    rewritten after each record when a path is given."""

    def __init__(self, path, prov, key="records", **fields):
        self.path = path
        self.data = dict(prov, **fields)
        self.records = self.data.setdefault(key, [])

    def add(self, record):
        self.records.append(record)
        self.save()

    def save(self):
        if self.path:
            Path(self.path).write_text(json.dumps(self.data, indent=1, default=plain))


def plain(x):
    """JSON for NumPy scalars and arrays."""
    if isinstance(x, (np.generic, np.ndarray)):
        return x.tolist()
    raise TypeError(f"cannot write {type(x).__name__} as JSON")
