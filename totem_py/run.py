"""python -m totem_py.run: the command line contract of DESIGN.md.

Exit codes: 0 done; 2 bad input or usage (one line naming file, line and problem); 3 verification
failed; 1 anything else. Set TOTEM_DEBUG=1 to see tracebacks. Under `mpirun -n R` (R > 1) the same
command runs across the ranks (totem_py.distributed).
"""

import argparse
import contextlib
import json
import math
import os
import signal
import sys
import threading
import time
import warnings

import numpy as np

from . import ahead
from .errors import InputError, VerificationError

DEFAULT_GRAPH = "rmat:18"
DEFAULT_ALGORITHM = "bfs"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise InputError(message)

    def parse_known_args(self, args=None, namespace=None):
        """As argparse's, where `--algorithm FILE.py[:NAME]` first loads the file (its
        algorithms join the registry, their options the parser); `algorithm` is then the
        registered name, `algorithm_spec` what was given. The chosen algorithm's options are
        its own declarations (help, default), where another algorithm declares the same flag."""
        from .algorithms import ALGORITHMS
        from .algorithms.base import find
        args = list(sys.argv[1:] if args is None else args)
        spec = given_algorithm(args)
        name = find(spec)
        if name != spec:
            for flag, option in algorithm_options().items():
                if flag not in self._option_string_actions:
                    self.add_option(option)
        for option in getattr(ALGORITHMS.get(name), "options", ()):
            action = self._option_string_actions.get(option.flag)
            if getattr(action, "option", option) is not option:
                self._optionals.conflict_handler = "resolve"    # in place of the other's
                try:
                    self.add_option(option)
                finally:
                    self._optionals.conflict_handler = "error"
        parsed, extra = super().parse_known_args(args, namespace)
        if hasattr(parsed, "algorithm"):
            parsed.algorithm, parsed.algorithm_spec = name, spec
        return parsed, extra

    def add_option(self, option):
        """An algorithm's Option as an argument."""
        action = self.add_argument(option.flag, **option.kwargs)
        action.option = option


def program_name():
    """`python -m totem_py.run`, or the script's file name where a script runs the command line
    (an algorithm's own script, as examples/khop.py)."""
    main = sys.modules.get("__main__")
    path = str(getattr(main, "__file__", None) or "")
    if getattr(main, "__spec__", None) is None and path.endswith(".py"):
        return os.path.basename(path)
    return "python -m totem_py.run"


def given_algorithm(args):
    """The last --algorithm value in `args` (the default when there is none)."""
    spec = DEFAULT_ALGORITHM
    for i, arg in enumerate(map(str, args)):
        if arg == "--algorithm" and i + 1 < len(args):
            spec = str(args[i + 1])
        elif arg.startswith("--algorithm="):
            spec = arg.partition("=")[2]
    return spec


MAX_BYTES = 2**62


def parse_bytes(text, option="--gpu-memory", least=0):
    """'4G', '512M', '1.5e9' -> bytes, at least `least` and below 4 EiB (InputError naming
    `option` and the text as given otherwise)."""
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().rstrip("B").rstrip("I")
    scale = units.get(t[-1:], 1)
    try:
        value = float(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise InputError(f"{option}: cannot read {text!r} as a size (e.g. 4G, 512M)") from None
    if not math.isfinite(value) or value >= MAX_BYTES:
        raise InputError(f"{option}: {text!r} is not a finite size below 4 EiB")
    if value < least:
        raise InputError(f"{option} must be at least {least} bytes, got {text!r}")
    return int(value)


class _Formatter(argparse.HelpFormatter):
    """Each option's default after its help, unless the help says it or there is none."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS):
            return text
        return text + " (default %(default)s)"


def build_parser():
    from . import __version__
    p = _Parser(prog=program_name(), formatter_class=_Formatter,
                description="Run a graph algorithm split between the CPU and GPU partitions.")
    p.add_argument("--version", action="version", version=f"totem_py {__version__}")
    p.add_argument("--graph", default=DEFAULT_GRAPH,
                   help="file (.txt/.el/.csv/.wel/.mtx/.gr/.npz, .gz ok) or rmat:SCALE[:EF] / "
                        f"uniform:SCALE[:EF] (default {DEFAULT_GRAPH})")
    p.add_argument("--undirected", action="store_true", help="add the reverse of every edge")
    from .algorithms import ALGORITHMS
    p.add_argument("--algorithm", default=DEFAULT_ALGORITHM,
                   help=", ".join(ALGORITHMS) + f" (default {DEFAULT_ALGORITHM}), or "
                        "FILE.py[:NAME]: an algorithm defined in a Python file (NAME: its "
                        "`name`, where the file defines several)")
    p.add_argument("--partition", default="HIGH", help="HIGH, LOW, RAND or BLOCK")
    p.add_argument("--hub-sort", default="degree",
                   help="local order inside each partition: degree (every vertex by out-degree, "
                        "highest first; the default), hytgraph (HyTGraph's hub sorting: the top "
                        "8%% by out-degree x in-degree first, the rest in id order) or off (id "
                        "order)")
    p.add_argument("--cpu-share", default=None,
                   help="fraction of edges on the CPU, in [0, 1], or auto (as many edges on the "
                        "GPUs as fit their memory; the default with a GPU, else 0.5), or model "
                        "(the share TOTEM's performance model predicts fastest, from two "
                        "calibration runs)")
    p.add_argument("--gpus", type=int, default=1, help="number of GPU partitions")
    p.add_argument("--device", default="auto",
                   help="auto, gpu, emulated, cpu, or simulated (GPU partitions run the GPU "
                        "operators under numba-cuda's simulator: small graphs only)")
    p.add_argument("--gpu-memory", default=None, help="per-GPU budget for graph data (e.g. 4G)")
    p.add_argument("--host-memory", default=None,
                   help="bytes of edges the run holds in host memory (e.g. 128M): the edges of "
                        "a .tcsr graph stay in the file and are read page by page (also, "
                        "without it, when they exceed the available memory)")
    p.add_argument("--transfer", default="auto",
                   help="auto (edges over the GPU budget stream from host memory, each chunk by "
                        "the cheapest of HyTGraph's engines), resident (edges in GPU memory), "
                        "zerocopy (edges in mapped host memory; with --gpu-memory, what fits "
                        "stays resident), filter or compaction (force that engine)")
    p.add_argument("--path", default="auto",
                   help="execution path of every superstep: auto (chosen per superstep and "
                        "partition) or {sync,async}-{push,pull}-{dd,td}, one the algorithm offers")
    p.add_argument("--chunk-bytes", default=None,
                   help="size of the chunks streamed edges are split into (default 32M, or "
                        "smaller where the staging buffers would take more than half of "
                        "--gpu-memory)")
    p.add_argument("--gpu-cache", default="0",
                   help="bytes of each GPU partition's --gpu-memory for HyTGraph's cache of hot "
                        "streamed rows, read by frontier kernels (an advance over a queue); only "
                        "meaningful when edges stream (default 0: no cache)")
    for option in algorithm_options().values():
        p.add_option(option)
    p.add_argument("--relabel", action="store_true",
                   help="leave the vertices that are in no edge out of the run, numbering the "
                        "rest 0..n-1 in id order (an edge list's largest id + 1 is otherwise "
                        "the vertex count); the options and the results keep the original ids "
                        "and values")
    p.add_argument("--trials", type=int, default=1,
                   help="timed runs after one untimed warm-up; the median is reported (default "
                        "1); 0: one timed run without the warm-up (a run that reads its edges "
                        "from a file reads them once)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads for the kernels (default: every core Numba sees)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the generators, the default source and the partitioner's "
                        "random choices (default 0)")
    p.add_argument("--verify", action="store_true", help="check the result with the verifier")
    p.add_argument("--output", default=None,
                   help="write the per-vertex result: FILE.csv as vertex,value lines, FILE.txt or "
                        "FILE.tsv as lines of vertex and value separated by a space or a tab, "
                        "else .npy")
    p.add_argument("--json", default=None, help="write the run's metrics")
    p.add_argument("--quiet", action="store_true", help="only errors")
    p.add_argument("--mpi-timeout", type=float, default=None, metavar="SECONDS",
                   help="under mpirun: stop every rank when a wait on another rank (MPI's "
                        "start-up, loading, partitioning, a superstep) lasts longer than this; "
                        "rank 0's --verify does not count (default: no limit)")
    return p


def algorithm_options():
    """The registered algorithms' command-line options by flag, each flag once (the first
    declaration)."""
    from .algorithms import ALGORITHMS
    options = {}
    for cls in ALGORITHMS.values():
        for option in cls.options:
            options.setdefault(option.flag, option)
    return options


def algorithm_values(args, ids=None):
    """The values of the chosen algorithm's options, by name, for its from_options (those that
    name vertices in the relabelled graph's ids, given `ids`). An option of another algorithm
    set to anything but its default is an InputError."""
    from .algorithms import ALGORITHMS
    mine = {o.flag: o for o in ALGORITHMS[args.algorithm].options}
    values = {}
    for flag, option in algorithm_options().items():
        value = getattr(args, option.dest)
        if flag in mine:
            values[option.dest] = new_ids(ids, value, mine[flag])
            continue
        kwargs = option.kwargs
        if value != kwargs.get("default", False if kwargs.get("action") == "store_true" else None):
            users = [n for n, cls in ALGORITHMS.items() if flag in {o.flag for o in cls.options}]
            raise InputError(f"{flag} is for {', '.join(users)}, not {args.algorithm}")
    return values


def check_options(args, device):
    """Every option's value, checked before any work starts (alike on every MPI rank).
    Returns (cpu share, GPU budget, chunk bytes, GPU cache bytes); InputError names the option."""
    from partitioners import STRATEGIES, check_hub_sort

    from .algorithms import ALGORITHMS
    from .harness import TRANSFERS
    for option, value, least in (("--gpus", args.gpus, 0), ("--trials", args.trials, 0),
                                 ("--threads", args.threads, 1), ("--seed", args.seed, 0)):
        if value is not None and value < least:
            raise InputError(f"{option} must be at least {least}, got {value}")
    for option, value, allowed in (("--algorithm", args.algorithm, ALGORITHMS),
                                   ("--partition", args.partition.upper(), STRATEGIES),
                                   ("--transfer", args.transfer, TRANSFERS)):
        if value not in allowed:
            raise InputError(f"{option} must be one of {', '.join(allowed)}, not {value!r}")
    if args.relabel:
        ALGORITHMS[args.algorithm].check_relabel()
    check_hub_sort(args.hub_sort)
    if args.mpi_timeout is not None and not 0 < args.mpi_timeout < math.inf:
        raise InputError(f"--mpi-timeout must be a positive number of seconds, "
                         f"got {args.mpi_timeout}")
    default = "auto" if device == "gpu" else "0.5"
    share = _share(default if args.cpu_share is None else args.cpu_share)
    budget = None if args.gpu_memory is None else parse_bytes(args.gpu_memory)
    chunk = None if args.chunk_bytes is None else parse_bytes(args.chunk_bytes, "--chunk-bytes",
                                                              least=64)
    host = None if args.host_memory is None else parse_bytes(args.host_memory, "--host-memory",
                                                             least=1)
    return (share, budget, chunk,
            parse_bytes(args.gpu_cache, "--gpu-cache"), host)


def output_files(args, comm):
    """--output and --json, checked (totem_py/outputs.py): not the input graph, writable; each
    rank its own --output when it names `{rank}`, else rank 0 both."""
    from .outputs import Outputs
    named = []
    if per_rank_output(args):
        named.append(("--output", rank_output(args, comm.rank)))
    elif comm.rank == 0:
        named.append(("--output", args.output))
    if comm.rank == 0:
        named.append(("--json", args.json))
    return Outputs(named, inputs=[args.graph])


def write_outputs(outputs, args, result, values, metrics, comm):
    """The per-vertex result and the metrics, all or nothing (every rank its own)."""
    writers = []
    if per_rank_output(args):
        if comm.size == 1:      # one rank holds every vertex, by its original id (--relabel)
            ids, mine = np.arange(values.size), values
        else:
            engine = result.engine
            order = np.argsort(engine.local_gvids)
            ids, mine = engine.local_gvids[order], engine.values[order]
        path = rank_output(args, comm.rank)
        writers.append(lambda f: save_values(f, path, mine, ids))
    elif comm.rank == 0 and args.output:
        writers.append(lambda f: save_values(f, args.output, values))
    if comm.rank == 0 and args.json:
        writers.append(lambda f: f.write(json.dumps(metrics, indent=1).encode()))
    outputs.write(writers)


def _share(text):
    if text in ("auto", "model"):
        return text
    try:
        share = float(text)
    except ValueError:
        raise InputError(f"--cpu-share must be a number in [0, 1], not {text!r}") from None
    if not 0.0 <= share <= 1.0:
        raise InputError(f"--cpu-share must be in [0, 1], got {share}")
    return share


def main(argv=None, comm=None):
    """The command, in one process or (`comm`, of several ranks) on every MPI rank: the same
    steps, each rank loading its share of the graph (totem_py/distributed.py says how) and rank
    0 writing and printing."""
    from bsp.comm import SOLO

    from .algorithms import ALGORITHMS
    from .backend import resolve_device
    from .harness import agree
    from .progress import Progress

    ranks = comm is not None and comm.size > 1
    if ranks:
        from . import distributed
        args, comm = distributed.start(argv, comm)
        device = comm.bcast(agree(comm, lambda: resolve_device(args.device), root_only=True))
    else:
        comm = SOLO
        args = build_parser().parse_args(argv)
        device = resolve_device(args.device)
    root = comm.rank == 0

    def options():
        if ranks:
            resolve_device(device)      # a rank without a GPU cannot run --device gpu
            distributed.check_input(args)
        return check_options(args, device)
    share, budget, chunk, cache, host = agree(comm, options)
    threads = args.threads or (distributed.default_threads(comm) if ranks else None)
    if ranks and per_rank_output(args):
        agree(comm, lambda: distributed.check_rank_outputs(args, comm))
    outputs = agree(comm, lambda: output_files(args, comm))
    if args.quiet:      # only errors: no NumPy or Numba warnings either
        warnings.simplefilter("ignore")
    if args.quiet or not root:      # a missing transfer profile is said once, by rank 0
        from bsp.transfer_model import without_warning
        without_warning()
    progress = Progress(enabled=False if (args.quiet or not root) else None)
    cls = ALGORITHMS[args.algorithm]
    helper = None if ranks else compile_ahead(args, device, share, cls.needs_weights, progress)
    try:
        comm.phase = "loading the graph"
        t_load = time.perf_counter()
        graph, ids = (distributed.load_share(args, comm, cls, progress) if ranks else
                             load_graph(args, cls, progress, host))
        load_s = time.perf_counter() - t_load
        result = run(graph, args.algorithm, partition=args.partition.upper(), cpu_share=share,
                     gpus=args.gpus, device=device, trials=args.trials, threads=threads,
                     seed=args.seed, verify=verifier(args, cls, ranks), progress=progress,
                     gpu_memory=budget, transfer=args.transfer, chunk_bytes=chunk,
                     hub_sort=args.hub_sort, gpu_cache=cache, comm=comm,
                     gather=not per_rank_output(args), load_s=load_s, path=args.path,
                     host_memory=host,
                     **agree(comm, lambda: algorithm_values(args, ids)))
    finally:
        ahead.stop(helper)
    progress.compile_summary()
    comm.phase = "reporting"
    values, m = result.values, result.metrics
    if ids is not None:
        values = original_ids(cls, m, values, graph)
    hint = None
    if not ranks and not args.quiet and not args.undirected and "--source" in \
            {o.flag for o in cls.options}:
        hint = one_direction_hint(graph)
    del graph
    agree(comm, lambda: write_outputs(outputs, args, result, values, m, comm))
    if hint:
        print(hint, file=sys.stderr)
    if root and not args.quiet:
        print_report(m)
        if ranks:
            distributed.print_ranks(m)
    return 0


def one_direction_hint(graph):
    """A note for a traversal of a graph whose every edge goes from a smaller to a larger vertex
    id (or every one the other way), as in a file that lists each edge of an undirected graph
    once; else None."""
    rows = np.flatnonzero(np.diff(graph.indptr))
    if not graph.directed or rows.size == 0:
        return None
    starts = graph.indptr[rows]
    up = bool(np.all(np.minimum.reduceat(graph.indices, starts) > rows))
    if not up and not np.all(np.maximum.reduceat(graph.indices, starts) < rows):
        return None
    return (f"note: every edge of {graph.spec or 'the graph'} goes from a "
            f"{'smaller' if up else 'larger'} to a {'larger' if up else 'smaller'} vertex id, as "
            f"in a file that lists each edge of an undirected graph once, so the traversal "
            f"follows each edge one way only; --undirected adds the reverse edges")


def run(graph, algorithm, **settings):
    from .harness import run as harness_run
    return harness_run(graph, algorithm, **settings)


def load_graph(args, cls, progress, host_memory=None):
    """The whole graph (one process): (graph, ids), relabelled with --relabel (`ids` the
    original id of each vertex, else None); a .tcsr graph with its edges left in the file
    (store.mapped) with --host-memory, or when they exceed the available memory."""
    from .generators import graph_from_spec
    from .harness import memory_stages
    if edges_stay(args, host_memory):
        from . import store
        progress.phase(f"opening {args.graph}, its edges left in the file")
        return store.mapped(args.graph, then=memory_stages(cls, True, host_memory or 1)), None
    progress.phase(f"loading {args.graph}")
    graph = graph_from_spec(args.graph, seed=args.seed, undirected=args.undirected,
                            weighted=cls.needs_weights, nonnegative=nonnegative(cls),
                            then=memory_stages(cls))
    progress.phase(f"loaded {graph.n_vertices} vertices, {graph.n_edges} edges")
    ids = None
    if args.relabel:
        graph, ids = graph.compacted()
        progress.phase(f"relabelled: {graph.n_vertices} of {graph.n_ids} ids are in edges")
    return graph, ids


def edges_stay(args, host_memory):
    """Whether the run reads a .tcsr graph's edges from the file: with --host-memory (which
    --undirected and --relabel exclude), or when the edges exceed the available memory."""
    from . import store
    from .errors import available_memory
    if host_memory is not None:
        if not store.is_store(args.graph):
            raise InputError("--host-memory reads the edges from a .tcsr graph file (python -m "
                             "totem_py.convert IN OUT.tcsr)")
        for option in ("undirected", "relabel"):
            if getattr(args, option, False):
                raise InputError(f"--host-memory reads the edges as the .tcsr file stores "
                                 f"them: --{option} is not taken with it")
        return True
    if not store.is_store(args.graph) or args.undirected or args.relabel \
            or not os.path.isfile(args.graph):
        return False
    avail = available_memory()
    return avail is not None and os.path.getsize(args.graph) > avail


def nonnegative(cls):
    """What `load(..., nonnegative=)` takes for the algorithm class `cls`: its name when it
    refuses negative weights, else False."""
    return cls.needs_weights and cls.nonnegative_weights and cls.name


def verifier(args, cls, ranks):
    """--verify: True, or over ranks a function giving rank 0 the whole graph to check on."""
    if not args.verify or not ranks:
        return args.verify

    def whole():
        from .generators import graph_from_spec
        return graph_from_spec(args.graph, seed=args.seed, undirected=args.undirected,
                               weighted=cls.needs_weights)
    return whole


def per_rank_output(args):
    """--output naming `{rank}`: every rank writes its own vertices' results there."""
    return bool(args.output) and "{rank}" in args.output


def rank_output(args, rank):
    """The --output path of `rank`."""
    return args.output.replace("{rank}", str(rank))


def compile_ahead(args, device, share, weighted, progress):
    """On a first run (empty kernel cache) of one process, a second one compiling the engine's
    kernels meanwhile (totem_py/ahead.py), or None."""
    if launched_ranks() != 1:
        return None
    try:
        options = algorithm_values(args)
    except InputError:      # reported where the run reads them, after the graph's own checks
        return None
    from .algorithms import ALGORITHMS
    vertices = ALGORITHMS[args.algorithm].vertex_options()
    options = {k: v for k, v in options.items() if k not in vertices}
    helper = ahead.start(args.algorithm_spec, device, weighted=weighted, undirected=args.undirected,
                         partition=args.partition.upper(), gpus=args.gpus,
                         cpu_share=0.5 if isinstance(share, str) else share,
                         hub_sort=args.hub_sort, **options)
    if helper is not None:
        progress.phase("first run: a second process compiles the engine's kernels meanwhile")
        ahead.parallel_forms()
    return helper


def new_ids(ids, value, option):
    """The value of `option` in the ids of the relabelled graph, where it names vertices
    (Option.vertices: "one", a vertex; "list", a list of vertices, while a count or a word
    passes as it is). A vertex in no edge has no new id: InputError."""
    kind = option.vertices
    if ids is None or value is None or not kind or \
            np.ndim(value) != (0 if kind == "one" else 1) or isinstance(value, str):
        return value
    huge = [v for v in np.atleast_1d(np.asarray(value, dtype=object)) if not -2**63 <= v < 2**63]
    if huge:        # no vertex id: NumPy could not hold it
        raise InputError(f"{option.flag}: {huge[0]} is not a vertex id")
    old = np.atleast_1d(np.asarray(value, dtype=np.int64))
    new = np.searchsorted(ids, old)
    missing = (new >= ids.size) | (ids[np.minimum(new, ids.size - 1)] != old)
    if missing.any():
        raise InputError(f"{option.flag}: vertex {old[missing][0]} is in no edge, so --relabel "
                         f"drops it")
    return int(new[0]) if kind == "one" else new.tolist()


def original_ids(cls, metrics, values, graph):
    """A --relabel run's values (one per id of graph.with_isolated(): the class gave those of
    the vertices in no edge) under the original ids, the values that are vertex ids too
    (`values_are_ids`), and so the --json keys named after its vertex options."""
    order = graph.original_order()
    out = np.empty_like(values)
    out[order] = order[values] if cls.values_are_ids else values
    for key in cls.vertex_options():
        if metrics.get(key) is not None:
            mapped = order[np.asarray(metrics[key])]
            metrics[key] = mapped.tolist() if mapped.ndim else int(mapped)
    metrics["relabel"] = dict(vertex_ids=graph.n_ids)
    return out


TEXT_OUTPUTS = {".csv": ",", ".txt": " ", ".tsv": "\t"}     # --output's text forms: separator


def save_values(f, path, values, vertices=None):
    """.csv: a vertex,value header and one line per vertex; .txt and .tsv: the same, separated
    by a space or a tab, the header a `#` comment; anything else: NumPy's .npy, of the values by
    vertex id, or with `vertices` (the values' vertex ids: an MPI rank's own) of (vertex, value)
    records."""
    ids = np.arange(values.size) if vertices is None else vertices
    sep = TEXT_OUTPUTS.get(os.path.splitext(str(path))[1].lower())
    if sep is None:
        if vertices is None:
            return np.save(f, values)
        records = np.empty(ids.size, dtype=[("vertex", np.int64), ("value", values.dtype)])
        records["vertex"], records["value"] = ids, values
        return np.save(f, records)
    f.write(("vertex,value\n" if sep == "," else f"# vertex{sep}value\n").encode())
    fmt = sep.join(["%d", "%d" if values.dtype.kind in "iu" else "%.17g"])
    np.savetxt(f, np.column_stack([ids, values]).astype(object), fmt=fmt)


def print_report(m):
    g = m["graph"]
    print(f"graph {g['spec']}: {g['vertices']} vertices, {g['edges']} edges")
    src = f", source {m['source']}" if m.get("source") is not None else ""
    hubs = f" (hub sort {m['hub_sort']})" if m.get("hub_sort") else ""
    print(f"{m['algorithm']}{src}, partition {m['partition']}{hubs}, cpu share {m['cpu_share']}, "
          f"device {m['device']}, beta {m['beta']:.3f} (aggregated {m['beta_aggregated']:.3f})")
    print(f"{'pid':>3} {'kind':>4} {'vertices':>10} {'edges':>12} {'boundary':>10} "
          f"{'remote':>9} {'compute_s':>10}")
    steps = m["per_superstep"]
    for pid, p in enumerate(m["partitions"]):
        compute = sum(s["compute_s"][pid] for s in steps)
        print(f"{pid:>3} {p['kind']:>4} {p['vertices']:>10} {p['edges']:>12} "
              f"{p['boundary_edges']:>10} {p['remote_vertices']:>9} {compute:>10.4f}")
    exchange = sum(s["exchange_s"] for s in steps)
    model = m.get("cpu_share_model")
    if model and "predicted_s" in model:
        print(f"cpu share {model['chosen']} chosen by the performance model: predicted "
              f"{model['predicted_s']:.4f} s, {model['predicted_speedup']:.2f}x over CPU only "
              f"({len(model['candidates'])} candidates, calibration {model['cost_s']:.1f} s)")
    verified = {True: ", verified", None: ""}[m["verified"]]
    print(f"time {m['time_s']:.4f} s (median of {len(m['trials_s'])}), {m['supersteps']} "
          f"supersteps, exchange {exchange:.4f} s, {m['teps'] / 1e6:.1f} MTEPS{verified}")
    if m.get("converged"):
        print(f"{m['algorithm']}: converged to tol {m['tol']:g} after {m['rounds']} rounds")
    elif m.get("converged") is False:
        print(f"warning: {m['algorithm']} did not converge to tol {m['tol']:g} in {m['rounds']} "
              f"rounds (--iterations): the ranks are the last round's", file=sys.stderr)


def launched_ranks(env=os.environ):
    """How many processes the MPI launcher that started this one runs, read from its
    environment (mpi4py is not imported): 1 when there is no launcher, 0 when there is one that
    does not say (the MPI run then asks MPI)."""
    for var in ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE"):
        if env.get(var, "").isdigit():
            return int(env[var])
    return 0 if ("PMIX_RANK" in env or "MPI_LOCALNRANKS" in env) else 1


def cli(argv=None):
    """The command; under mpirun/mpiexec with more than one rank, totem_py.distributed runs it
    across the ranks."""
    if launched_ranks() != 1:
        from .distributed import cli as mpi_cli
        with sigterm_exits():
            return mpi_cli(argv, single=_cli)
    return _cli(argv)


def _cli(argv=None):
    return exit_code(main, argv)


def exit_code(command, argv=None):
    """Run `command(argv)` as a command: its return value, or 2 with one line for bad input, 3
    for a failed verification, 1 for anything else (a traceback with TOTEM_DEBUG=1)."""
    try:
        with sigterm_exits():
            return command(argv)
    except InputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except VerificationError as exc:
        print(f"verification failed: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:
        if os.environ.get("TOTEM_DEBUG"):
            raise
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


@contextlib.contextmanager
def sigterm_exits():
    """SIGTERM raises SystemExit(143) meanwhile, so that `finally` blocks (the temporary files
    of totem_py/outputs.py) run before the process ends."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(cli())
