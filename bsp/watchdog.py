"""The deadline on a rank's waits for other ranks, kept by a second process.

A blocking MPI call can hold the GIL while it waits (mpi4py's pickle-based collectives do, and
so does `MPI_Init` inside `from mpi4py import MPI`), so a watcher thread of the rank never gets
to run. The watchdog is a child process forked when the rank starts (before MPI starts, so that
MPI's start-up is bounded too): the rank tells it through a pipe when a wait starts (`arm`) and
when it ends (`disarm`); a wait that outlasts its deadline makes the watchdog print one line on
the rank's stderr and kill the rank (SIGKILL), and the launcher then stops every rank with a
nonzero exit. The watchdog ends when the rank does (the pipe closes).

Also here, because the start-up hook runs before mpi4py is imported: `TOTEM_MPI_FAULT`, the
failures the tests inject (`fault_point`).
"""

import os
import select
import signal
import time

STAGGER_S = 0.5     # later ranks give up this much later each, so that the first one stops all

_dog = None         # this process's Watchdog


class Watchdog:
    """A child process that kills this one when an armed wait passes its deadline."""

    def __init__(self):
        read, self._write = os.pipe()
        # the rank's signal handlers are not the watchdog's: no signal runs one in between
        caught = {signal.SIGINT, signal.SIGTERM}
        signal.pthread_sigmask(signal.SIG_BLOCK, caught)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                os.close(self._write)
                signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the rank's
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, caught)
                _watch(read, os.getppid())
            finally:
                os._exit(0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, caught)
        os.close(read)

    def arm(self, seconds, line):
        """Kill this process after `seconds` unless disarmed first, printing `line` with
        `{elapsed}` replaced by the seconds waited."""
        self._send(f"{seconds!r}\t{line}")

    def disarm(self):
        self._send("-")

    def _send(self, message):
        try:
            os.write(self._write, (message.replace("\n", " ") + "\n").encode())
        except OSError:         # the watchdog is gone: the launcher is stopping every rank
            pass


def watchdog():
    """This process's Watchdog, started on first use."""
    global _dog
    if _dog is None:
        _dog = Watchdog()
    return _dog


def _watch(read, rank_pid):
    buffered, armed = b"", None                      # (deadline, start, line)
    while True:
        left = None if armed is None else max(0.0, armed[0] - time.monotonic())
        if select.select([read], [], [], left)[0]:
            chunk = os.read(read, 4096)
            if not chunk:
                return          # the rank has ended
            buffered += chunk
            *messages, buffered = buffered.split(b"\n")
            for message in messages:
                text = message.decode()
                if text == "-":
                    armed = None
                else:
                    seconds, line = text.split("\t", 1)
                    now = time.monotonic()
                    armed = (now + float(seconds), now, line)
        elif armed is not None and time.monotonic() >= armed[0]:
            elapsed = f"{time.monotonic() - armed[1]:.1f}"
            os.write(2, (armed[2].replace("{elapsed}", elapsed) + "\n").encode())
            os.kill(rank_pid, signal.SIGKILL)
            return


def launcher_rank(env=os.environ):
    """This process's rank as the MPI launcher's environment gives it (0 when it does not)."""
    for var in ("OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"):
        if env.get(var, "").isdigit():
            return int(env[var])
    return 0


def bound(timeout, rank, what):
    """Bound what this rank does next (MPI's start-up or its finish, which wait for every rank)
    by `timeout` seconds (None: no bound) until `watchdog().disarm()` or the rank's end."""
    if timeout:
        watchdog().arm(timeout + STAGGER_S * rank,
                       f"error: rank {rank}: {what} not complete after {{elapsed}} s "
                       f"(--mpi-timeout {timeout:g}); a peer rank is stuck or gone, stopping "
                       f"all ranks")


# ---- injected failures (tests) ------------------------------------------------------------

def parse_fault(rank):
    """TOTEM_MPI_FAULT=RANK:WHEN:KIND (tests only): (when, kind) for this rank, else None; WHEN
    is a superstep number, or `start`, `load`, `partition` or `verify`; KIND `oom`, `stall`
    (an hour's sleep), `slow` (eight seconds' sleep) or `stop` (SIGSTOP)."""
    spec = os.environ.get("TOTEM_MPI_FAULT")
    if not spec:
        return None
    r, when, kind = spec.split(":")
    return (int(when) if when.isdigit() else when, kind) if int(r) == rank else None


def fault_point(rank, when):
    """Inject TOTEM_MPI_FAULT's failure here if it names this rank and `when`."""
    fault = parse_fault(rank)
    if fault and fault[0] == when:
        inject(fault[1], rank, when)


def inject(kind, rank, when):
    if kind in ("stall", "slow"):
        time.sleep(3600 if kind == "stall" else 8)
        return
    if kind == "stop":
        os.kill(os.getpid(), signal.SIGSTOP)
        return
    raise MemoryError(f"injected out-of-memory at {when} (TOTEM_MPI_FAULT)")
