"""`python -m totem_py.run` under `mpirun -n R` / `mpiexec -n R`: the same run across R processes.

No rank holds the whole graph. Every rank reads its block of rows of a .tcsr file (by byte range)
or generates its range of a generator's edges, and the ranks partition the graph together
(partitioners/distributed.py): vertices dealt to ranks by degree (BLOCK: consecutive ranges),
then each rank's share split between its CPU and GPU partitions with HIGH/LOW/RAND/BLOCK at
--cpu-share, exactly as `partition(..., ranks=R)` would in one process; each rank builds its
own partitions and exchange plan. Other graph files are refused with the command that converts
them (convert once, run many). Every rank checks its own memory before reading. `--cpu-share
auto` lets each rank pick the share its GPUs fit, and takes the largest.

Results: gathered to rank 0, which verifies (--verify reads the whole graph on rank 0), writes
--output and --json and is the only rank that prints; or, when --output holds `{rank}`, every
rank writes its own vertices' results there (a .npy of records (vertex, value), by vertex id),
and nothing is gathered. Each rank's GPU partitions take the devices by the rank's place on its
node (local rank k, GPU partitions per rank g: devices k*g, k*g+1, ... modulo the device count).
With no --threads, each rank uses its share of the node's cores (all the cores it may run on when
the launcher bound it to fewer). The --json record has each rank's peak resident memory.

Failures: the ranks first compare their arguments (a launch whose ranks got different ones is
exit 2, one line). An error that every rank can know about - bad options, bad input found by any
rank, too little memory on any rank, a GPU budget exceeded on any rank, a failed verification - is
agreed on collectively: rank 0 prints it once and every rank exits with the usual code (2, 3 or
1). Anything else (out of memory in a superstep, a bug) is printed once by the rank it happened
on, prefixed with its rank, and `MPI_Abort` stops every rank at once; `--mpi-timeout S` bounds
every wait on another rank, from MPI's start-up to the last collective (bsp.mpi.Waiter,
bsp/watchdog.py); the other ranks wait for rank 0's --verify unbounded (it is working, not stuck).

Imported only when the launcher's environment says there are several ranks; it imports mpi4py.
"""

import contextlib
import io
import os
import sys
import traceback

from .errors import InputError
from .harness import Agreed, agree, describe


def start(argv, comm):
    """(args, the communicator guarded by --mpi-timeout) once every rank has parsed the same
    arguments: only rank 0 shows --help or a usage error, and none stops before the ranks have
    compared their arguments (a launch whose ranks got different ones is exit 2)."""
    from bsp.mpi import guarded
    from partitioners.distributed import malloc_returns_memory
    from .run import build_parser
    malloc_returns_memory()
    try:
        if comm.rank == 0:
            args, error = build_parser().parse_args(argv), None
        else:
            with contextlib.redirect_stdout(io.StringIO()):
                args, error = build_parser().parse_args(argv), None
    except (InputError, SystemExit) as exc:
        args, error = None, exc
    timeout = getattr(args, "mpi_timeout", None)
    comm = guarded(comm, timeout if timeout and timeout > 0 else None)
    everyone = comm.allgather(list(sys.argv[1:] if argv is None else argv))
    for r, other in enumerate(everyone):
        if other != everyone[0]:
            raise Agreed(2, f"error: the ranks were started with different arguments: rank 0 "
                            f"got {' '.join(everyone[0])!r}, rank {r} got {' '.join(other)!r}")
    if error is not None:     # the same on every rank
        raise error
    return args, comm


def check_input(args):
    """What the ranks cannot run: a graph file other than .tcsr (convert once, run many), the
    performance model's share, --relabel."""
    from .generators import is_generator
    from .store import EXTENSION, is_store
    if str(args.cpu_share) == "model":
        raise InputError("--cpu-share model is not available under mpirun (it calibrates on the "
                         "whole graph); give a share or auto")
    if args.relabel:
        raise InputError("--relabel works in one process only, not under mpirun")
    if not is_generator(args.graph) and not os.path.exists(args.graph):
        raise InputError("no such file", args.graph)
    if not is_generator(args.graph) and not is_store(args.graph):
        raise InputError(f"under mpirun every rank reads its share of a {EXTENSION} file; "
                         f"convert this one once with: python -m totem_py.convert "
                         f"{args.graph} GRAPH{EXTENSION}", args.graph)


def check_rank_outputs(args, comm):
    """--output with `{rank}`: InputError when two ranks' paths lead to one file."""
    from .run import rank_output
    paths = comm.allgather(os.path.realpath(rank_output(args, comm.rank)))
    for r, path in enumerate(paths):
        if path in paths[:r]:
            first = paths.index(path)
            raise InputError(f"--output names the same file {path} for ranks {first} and {r}",
                             args.output)


def default_threads(comm):
    """This rank's share of the node's cores, or every core it may use when already bound."""
    from bsp.mpi import node_place
    node_size = node_place(comm)[1]
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 1
    if usable >= (os.cpu_count() or usable):
        return max(1, usable // max(node_size, 1))
    return usable


def load_share(args, comm, cls, progress):
    """This rank's share of the graph (its home block), read from the .tcsr file or generated by
    the ranks together; (share, None), as `run.load_graph` returns (no relabelling)."""
    from bsp.watchdog import fault_point
    from partitioners.distributed import agreed, generate_share, read_share

    from .generators import Generator, is_generator
    from .harness import takes_source
    from .store import Store
    progress.phase(f"loading {args.graph}: each of {comm.size} ranks its share")
    fault_point(comm.rank, "load")
    weighted = cls.needs_weights
    # the default source runs the components algorithm on the "both" view: its in-rows too
    find = args.source is None and getattr(args, "sources", None) is None and \
        takes_source(args.algorithm)
    in_view = bool({m.view for m in cls.modes} & {"in", "both"}) or find
    if is_generator(args.graph):
        share = agree(comm, lambda: generate_share(
            comm, Generator(args.graph, args.seed), args.undirected, weighted,
            in_view and not args.undirected))
    else:
        share = agree(comm, lambda: read_share(comm, agreed(comm, Store, args.graph),
                                               args.undirected, weighted, in_view))
    summary = share.summary(comm)
    progress.phase(f"loaded {summary.n_vertices} vertices, {summary.n_edges} edges")
    return share, None


def print_ranks(m):
    print(f"{'rank':>4} {'host':>12} {'pids':>8} {'edges':>12} {'compute_s':>10} "
          f"{'exchange_s':>10} {'vote_s':>8} {'sent_MB':>9} {'peak_MB':>8}")
    for r in m["per_rank"]:
        pids = ",".join(map(str, r["partitions"]))
        print(f"{r['rank']:>4} {r['host'][:12]:>12} {pids:>8} {r['edges']:>12} "
              f"{r['compute_s']:>10.4f} {r['exchange_s']:>10.4f} {r['vote_s']:>8.4f} "
              f"{r['bytes_sent'] / 1e6:>9.3f} {r['peak_rss_bytes'] / 1e6:>8.0f}")


def start_timeout(argv):
    """--mpi-timeout's seconds from the arguments, read before MPI starts (None when it is not
    given or not a positive number: the full parse reports that)."""
    import math
    value = None
    for i, arg in enumerate(argv):
        if arg == "--mpi-timeout" and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith("--mpi-timeout="):
            value = arg.partition("=")[2]
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return None
    return seconds if 0 < seconds < math.inf else None


def cli(argv=None, single=None):
    """Entry point under an MPI launcher; `single` runs the one-process command (world size 1)."""
    from bsp.watchdog import bound, fault_point, launcher_rank, watchdog
    timeout = start_timeout(sys.argv[1:] if argv is None else argv)
    fault_point(launcher_rank(), "start")
    bound(timeout, launcher_rank(), "starting MPI")     # `import mpi4py` waits for every rank
    try:
        from bsp.mpi import abort, world
    except ImportError as exc:
        if os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")) == "0":
            print(f"error: started by an MPI launcher but mpi4py cannot be imported ({exc}); "
                  "install it with: pip install 'totem_py[mpi]'", file=sys.stderr)
        return 1
    comm = world()
    if timeout:
        watchdog().disarm()
    if comm.size == 1:
        return single(argv)
    from .run import main
    try:
        code = main(argv, comm)
    except Agreed as exc:
        if comm.rank == 0:
            print(exc.line, file=sys.stderr, flush=True)
        code = exc.code
    except InputError as exc:      # a usage error while parsing: the same on every rank
        if comm.rank == 0:
            print(f"error: {exc}", file=sys.stderr, flush=True)
        code = 2
    except SystemExit as exc:      # --help
        code = exc.code or 0
    except BaseException as exc:   # this rank alone: say so once and stop every rank
        if os.environ.get("TOTEM_DEBUG"):
            traceback.print_exc()
        code, line = describe(exc) if isinstance(exc, Exception) else (1, "error: interrupted")
        abort(comm, line.replace("error: ", f"error: rank {comm.rank}: ", 1), 1)
    bound(timeout, comm.rank, "finishing MPI")      # MPI_Finalize, at exit, waits for every rank
    return code
