"""The engine protocol a program implements (TOTEM's programming model, in Python).

Once per run the engine calls `start()`, where a program sets its run-wide control state (the
phase, the round, a bound: what `mode`, `finished` and `advance` read and write), then
`init(part)` on every partition, which allocates the partition's state. Per superstep the engine
runs one Mode of the program on every partition:

  push mode:  compute(part, step, mode, box)  -> the kernel writes messages for remote targets into
              `box.values` (an `Outbox`: one slot per ghost, pre-set to the message identity,
              combined with the message's operator) and, if the mode `records`, appends each
              slot it moves off the identity to `box.touched` through the counter `box.count`,
              so that exchanging a few messages costs a few, not one per ghost;
              exchange  -> every slot reaches the partition owning the
              vertex, combined again across senders into `inbox` (an `Inbox`: `lvid`, `values`,
              only the vertices that received something when few did);
              scatter(part, step, mode, inbox) folds it into local state.
  pull mode:  gather(part, step, mode) returns the values of the partition's boundary vertices;
              exchange copies them into the ghost slots of every reader;  compute(part, step, mode,
              box) then reads remote neighbours from `box`. A bool message (a flag per vertex,
              e.g. "in the frontier") travels packed to bits, 1/8 byte per ghost slot.

After every superstep each partition votes (`vote`): how many vertices are active for the next
step, and optionally `sums`, floats the engine adds up over every partition (and MPI rank). The
engine hands the tally to `finished(total)`, which by default stops when no partition has an
active vertex and `advance(key)` says no other phase follows (delta-stepping's next bucket,
Brandes' backward sweep); an algorithm that runs until a global quantity is small enough
(PageRank to a tolerance: the L1 change of its ranks) decides from `total.sums` instead.
`collect` returns the result by global vertex id.

Callbacks do their work with the operators of bsp/operators.py and small functors; the
engine's own kernels (`part.kernels(name)`: boxes, frontier counts, streamed chunks) come from
`kernels_cpu/` or `kernels_gpu/`, whichever matches the partition's device.

This is all the engine knows of a program. What the command line and the harness need (options,
serial reference, verifier, TEPS count, memory cost, metrics) is declared by the product class,
totem_py.Algorithm, a subclass of Program.
"""

from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import NamedTuple

import numpy as np

COMBINE = ("min", "max", "sum", "or")


@dataclass(frozen=True)
class Message:
    """What travels on boundary edges: dtype, combine operator and its identity."""
    dtype: np.dtype
    combine: str
    identity: object

    def __post_init__(self):
        if self.combine not in COMBINE:
            raise ValueError(f"combine must be one of {COMBINE}")
        object.__setattr__(self, "dtype", np.dtype(self.dtype))


@dataclass(frozen=True)
class Mode:
    """One kind of superstep: which CSR view it walks and which way messages go.

    `state` optionally names a state array allocated with `part.alloc` (n_local + ghost slots):
    its tail is then the box, so a kernel reads and writes local vertices and ghosts with one
    index and no branch (ghost slot s is element n_local + s, exactly what the view's indices
    hold). Without it the engine allocates a separate box. A push mode's state array made by
    `part.alloc` with the message identity as its fill is taken as a clean box after init, so
    init must not write its ghost slots.
    `records` (push modes): compute lists the slots it writes in the Outbox (see above); without
    it the engine finds them by scanning the whole box.
    """
    name: str
    view: str          # "out", "in" or "both"
    exchange: str      # "push" (ghost -> owner, combined) or "pull" (owner -> ghost, copied)
    message: Message
    state: str = None
    records: bool = False


class Outbox(NamedTuple):
    """A push mode's box: `values` (one slot per ghost) and, for modes that record, the slots
    moved off the identity this superstep: touched[:count[0]] (count is a one-element array on
    the partition's device, bumped atomically by the kernel)."""
    values: object
    touched: object
    count: object


@dataclass
class Vote:
    """A partition's vote after a superstep: active vertices and edges for the next one, a key
    the engine reduces with min over partitions (e.g. the smallest pending distance), and `sums`,
    floats it adds up element by element over partitions (every partition's vote has as many).
    The tally over every partition (and MPI rank) is a Vote too, which `finished` receives."""
    active: int = 0
    edges: int = 0
    key: float = np.inf
    sums: tuple = ()


ROUNDS = ("sync", "async")
DIRECTIONS = ("push", "pull")
WORKLISTS = ("dd", "td")
PRIORITY_SAMPLE = 1000     # a priority path samples this many active vertices per round
PRIORITY_TOP = 200         # and takes those at or above the sample's PRIORITY_TOP-th largest


@dataclass(frozen=True)
class Path:
    """An execution path (SEP-Graph's): `rounds` "sync" (one local round per superstep) or
    "async" (local rounds until the partition's own work is done, then one exchange);
    `direction` "push" or "pull" (the mode's exchange); `worklist` "dd" (data-driven: the
    active vertices) or "td" (topology-driven: every vertex); `priority` (SEP-Graph's sampled
    priority): a round takes only the active vertices of highest priority, about PRIORITY_TOP
    of every PRIORITY_SAMPLE, and the others wait, still active. Named "sync-push-dd",
    "async-push-dd-prio" and so on."""
    rounds: str
    direction: str
    worklist: str
    priority: bool = False

    @cached_property
    def name(self):
        tail = "-prio" if self.priority else ""
        return f"{self.rounds}-{self.direction}-{self.worklist}{tail}"

    @cached_property
    def asynchronous(self):
        return self.rounds == "async"

    @classmethod
    def parse(cls, name):
        """The Path named `name`; ValueError if it names none. Memoised: every run parses
        its program's paths, and the same object keeps its `name`."""
        return _parse(cls, str(name))


@lru_cache(maxsize=None)
def _parse(cls, name):
    parts = name.split("-")
    priority = len(parts) == 4 and parts[3] == "prio"
    if priority:
        parts = parts[:3]
    if len(parts) != 3 or parts[0] not in ROUNDS or parts[1] not in DIRECTIONS \
            or parts[2] not in WORKLISTS:
        raise ValueError(f"a path is auto or {{sync,async}}-{{push,pull}}-{{dd,td}}, "
                         f"optionally -prio, not {name!r}")
    return cls(*parts, priority)


class Program:
    """Base class: subclasses set `name`, `modes` and implement the callbacks they use."""
    name = "program"
    modes = ()                 # Mode objects; the first is the default
    needs_weights = False      # the views carry edge weights
    direction_optimizing = False   # if True the engine picks "push"/"pull" modes per step
    # execution paths offered, by name ("sync-push-dd", "async-push-dd", ...); the engine
    # chooses one per superstep and partition (bsp/paths.py) and sets it as `part.path` before
    # compute; () offers none: `part.path` stays None and every superstep runs as before
    paths = ()
    auto_paths = None       # the paths `--path auto` chooses among (None: all of `paths`)
    iterative = False       # choose by SEP-Graph's Alg. 1 (measured costs), else Alg. 2

    def start(self):
        """Once per run, before any partition's `init`: set the run-wide control state (what
        `mode`, `finished` and `advance` keep between supersteps). Partition state belongs in
        `init`."""

    def views(self):
        return sorted({m.view for m in self.modes})

    def mode(self, step):
        """The mode of this superstep (algorithms with phases override)."""
        return self.modes[0]

    def init(self, part):
        raise NotImplementedError

    def compute(self, part, step, mode, box):
        raise NotImplementedError

    def gather(self, part, step, mode):
        raise NotImplementedError(f"{self.name} has no pull mode")

    def reads_ghosts(self, part, step, mode):
        """Pull: whether this step's compute on `part` reads its ghosts' values; a partition that
        will not is skipped by the exchange (within one process; across MPI ranks every ghost is
        sent). Its box then keeps stale values, which compute must not read."""
        return True

    def scatter(self, part, step, mode, inbox):
        raise NotImplementedError(f"{self.name} has no push mode")

    def next_round(self, part, step, mode):
        """An async path: after a local round of compute on `part`, make the local work it
        left the next round's (as `vote` does after an exchange, without one) and return
        whether there is any; the engine then calls compute again, with the same box, until
        this says no or ROUNDS rounds ran. Messages to ghosts combine in the box across the
        rounds and are exchanged once."""
        return False

    def vote(self, part, step):
        raise NotImplementedError

    def advance(self, key):
        """All partitions are idle: return True to go on (a new phase), False to finish."""
        return False

    def finished(self, total):
        """After a superstep, given the tally of every partition's vote (a Vote: active vertices
        and edges summed, the smallest key, `sums` added up): True to stop. By default, when no
        vertex is active and `advance(key)` starts no further phase."""
        return total.active == 0 and not self.advance(total.key)

    def collect(self, parts, n_vertices):
        raise NotImplementedError
