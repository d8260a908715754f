"""The superstep loop.

    compute (every partition) -> exchange boxes -> reduce inbox (push)     or
    gather -> exchange -> compute (pull);  then vote; stop when the algorithm's `finished` says
    so, given the votes' tally (by default: no partition is active and no further phase).

Direction-optimising traversal is an engine decision (Beamer et al., as GAP does it): for an
algorithm that offers "push" (top-down) and "pull" (bottom-up) modes, the engine switches to pull
when the frontier's edges exceed the edges left to check / ALPHA (edges left to check drop by the
frontier's edges after each top-down step), and back to push once the frontier stops growing and
is below n / BETA. Every choice is recorded in the superstep's record and shown as progress.

A program that offers execution paths (`Program.paths`) gets one chosen per superstep and
partition (bsp/paths.py), recorded as the record's `path`; a partition on an async path runs
local rounds of compute (`Program.next_round`) before the one exchange of the superstep.

A run returns one record per superstep for its first KEPT supersteps; the later ones are summed
into one record per mode and path (`keep`), so memory stays bounded however long a run goes
(PageRank for millions of rounds).
"""

import contextlib
import gc
import time
from types import SimpleNamespace


import numpy as np

from .api import Outbox, Vote
from .exchange import bitmap_bytes, exchange_pull, exchange_push, settle
from .partition import EdgeOptions, make_partition
from .paths import ROUNDS, Paths, offer_note

ALPHA = 15
BETA = 18
KEPT = 10_000       # supersteps recorded one by one; later ones are summed per mode


def tally(votes):
    """Votes as one Vote: active vertices and frontier edges summed, the smallest key, the sums
    added up element by element."""
    return Vote(sum(v.active for v in votes), sum(v.edges for v in votes),
                min((v.key for v in votes), default=float("inf")),
                tuple(float(sum(x)) for x in zip(*(v.sums for v in votes))))


def switched_back(records):
    """True right after a bottom-up run ends: like GAP, the frontier of the first top-down step
    then counts as one edge, so the engine does not switch straight back."""
    return len(records) > 1 and records[-1]["mode"] == "push" and records[-2]["mode"] == "pull"


def keep(records, record, summed):
    """Append a superstep's record to `records` while they are fewer than KEPT; after that,
    add it into the record of its mode and path that sums the later supersteps (`summed`, by
    mode and path; the first of each is appended to `records`), whose `steps` counts them and
    `step` is the first of them. Numbers add up, lists of them element by element, dicts of them key by key;
    anything else (chunk letters) is left out."""
    if len(records) < KEPT and not summed:
        records.append(record)
        return
    group = (record["mode"], record.get("path"))
    total = summed.get(group)
    if total is None:
        total = summed[group] = dict(step=record["step"], mode=record["mode"], steps=0)
        if "path" in record:
            total["path"] = record["path"]
        records.append(total)
    total["steps"] += 1
    for key, value in record.items():
        if key in ("step", "mode", "path"):
            continue
        if isinstance(value, (int, float)):
            total[key] = total.get(key, 0) + value
        elif isinstance(value, list):
            total[key] = [a + b for a, b in zip(total.get(key, [0] * len(value)), value)]
        elif isinstance(value, dict):
            into = total.setdefault(key, {})
            for k, v in value.items():
                if isinstance(v, (int, float)):
                    into[k] = into.get(k, 0) + v


def supersteps(records):
    """How many supersteps `records` (as `keep` keeps them) stand for."""
    return sum(r.get("steps", 1) for r in records)


@contextlib.contextmanager
def paused_gc():
    """Python's cyclic collector off for a run (as timeit times code): a collection that lands
    in a superstep stalls it while it walks the run's many live objects, and a run makes few
    cycles; they are collected after it, when the collector is back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class Engine:
    """Runs algorithms on a plan's partitions; the partitions are built once and reused across
    runs. One process is a world of one rank: `comm` (an mpi4py communicator) of several ranks
    makes this process run the partitions of its rank of a RankPlan and exchange with the other
    ranks (bsp/mpi.py); the loop is the same. Every rank calls `run` with an equal algorithm.
    With `gather` (the default) rank 0's `run` returns the whole result by global id and the
    other ranks' return None; without, every rank's returns the values of its own vertices, in
    the order of `local_gvids`. After a run `values` holds this rank's values (in
    `local_gvids` order)."""

    def __init__(self, plan, device="emulated", progress=None, edges=EdgeOptions(), comm=None,
                 gather=True, timeout=None):
        self.plan = plan
        self.device = device
        self.gather = gather
        self.ranks = None
        node_rank = 0
        if comm is not None and comm.size > 1:
            from .mpi import Ranks
            self.ranks = Ranks(comm, plan, timeout, lanes=device != "cpu")
            node_rank = self.ranks.node_rank
        self.comm = self.ranks.comm if self.ranks is not None else comm
        gpus = [pid for pid in plan.local_pids if plan.kinds[pid] == "gpu"]
        # GPU partitions take devices by the rank's place on its node: local rank k's j-th GPU
        # partition gets device (k x GPU partitions per rank + j) modulo the device count
        self.parts = [make_partition(plan, pid, device, edges, gpu_index=node_rank * max(
            plan.gpus, 1) + gpus.index(pid) if pid in gpus else None) for pid in plan.local_pids]
        self.local_gvids = np.concatenate([p.gvids for p in self.parts]).astype(np.int64) \
            if self.parts else np.empty(0, np.int64)
        self.progress = progress
        self._inboxes = {}      # host inbox buffers reused across supersteps
        self._path = "auto"     # the run's path: "auto" or a forced one (`run`)

    def prepare(self, algorithm):
        """Build and place the CSR views the algorithm walks (once per view, not timed); a GPU
        partition's budget (and its cache) is shared by the views the algorithm walks. Over
        ranks, a rank's bad input (a budget too small to stream its edges) stops every rank."""
        if self.ranks is None:
            self._prepare(algorithm)
        else:
            self.ranks.prepare(self, algorithm)

    def _prepare(self, algorithm):
        names = algorithm.views()
        for part in self.parts:
            if part.edges.budget is not None:
                views = {self.plan.canonical_view(name) for name in names}
                part.view_budget = part.edges.budget // max(len(views), 1)
                part.view_cache = part.edges.cache // max(len(views), 1)
        if self.parts and self.parts[0].edges.host_memory is not None:
            self._share_host_memory(names)
        for name in names:
            self.plan.views(name)
            for part in self.parts:
                part.view(name, algorithm.needs_weights).prepare(algorithm.needs_weights)
        # whether every GPU partition holds these views' edges in device memory (none streamed
        # or read from mapped host memory): algorithms may choose their way by it
        resident = all(v.host_bytes == 0 for p in self.parts if p.kind == "gpu"
                       for v in p.placed_views())
        for part in self.parts:
            part.edges_resident = resident

    def _share_host_memory(self, names):
        """--host-memory among the views `names` and the partitions, by their edges."""
        views = {self.plan.canonical_view(name) for name in names}
        sizes = [sum(self.plan.views(v)[p.pid].indices.size for v in views) for p in self.parts]
        total = max(sum(sizes), 1)
        for part, size in zip(self.parts, sizes):
            part.view_host = part.edges.host_memory * max(size, 1) // total // max(len(views), 1)

    def run(self, algorithm, path="auto"):
        """Run `algorithm` to completion; returns (per-vertex result, per-superstep records, the
        supersteps after the first KEPT summed per mode and path: `keep`). `path`: "auto" (the
        controllers choose, bsp/paths.py) or the name of a path the algorithm offers, taken in
        every superstep (ValueError for one it does not offer).
        `self.timings` then holds the seconds spent in init, supersteps and collect."""
        if path not in (None, "auto") and not algorithm.paths:
            raise ValueError(offer_note(algorithm, path))
        self.prepare(algorithm)
        self._path = path
        with paused_gc():
            if self.ranks is None:
                return self._run(algorithm)
            with self.ranks.running():
                return self._run(algorithm)

    def _run(self, algorithm):
        t0 = time.perf_counter()
        parts = self.parts
        self._streams = [(p, view.stream) for p in parts for view in p.placed_views()
                         if view.stream is not None]       # the views whose edges stream
        everywhere = bool if self.ranks is None else self.ranks.everywhere
        paths = Paths(algorithm, parts, self._path, everywhere) if algorithm.paths else None
        forced = paths.forced if paths is not None else None
        algorithm.start()
        for part in parts:
            part.path = None
            part.recycle()
            part.state = SimpleNamespace()
            part.clean_box = None
            part.outboxes.clear()
            part.boxes.clear()
            part.inboxes.clear()
            with part.context():
                algorithm.init(part)
            part.clean_tail = None          # used by init's alloc or not at all
            part.clean_box = self._clean_after_init(algorithm, part)
        modes = {m.name: m for m in algorithm.modes}
        # a forced path's direction picks the mode of that exchange, where modes go both ways
        directions = {m.exchange: m for m in algorithm.modes}
        if forced is None or len(directions) < 2 or forced.direction not in directions:
            directions = None
        records, summed, recent = [], {}, []     # recent: the last two supersteps' records
        step = 0
        bottom_up = False
        frontier = None
        explored = 0
        votes = None
        while True:
            if directions is not None:
                mode = directions[forced.direction]
            elif algorithm.direction_optimizing and frontier is not None:
                # after an async superstep a frontier holds several levels: top-down from then
                deep = paths is not None and paths.deep
                switched = not deep and bottom_up != self._bottom_up(bottom_up, frontier,
                                                                     explored, recent)
                bottom_up ^= switched
                mode = modes["pull" if bottom_up else "push"]
                if switched and self.progress:
                    self.progress.phase(f"superstep {step}: frontier {frontier[0]} vertices, "
                                        f"{frontier[1]} edges: switching to {mode.name}")
                if not bottom_up:
                    explored += frontier[1]   # the edges this top-down step checks
            else:
                mode = algorithm.mode(step)
            t_step = time.perf_counter()
            chosen = paths.choose(mode, votes) if paths is not None else None
            record = self._superstep(algorithm, mode, step)
            votes = [self._call(algorithm.vote, p, step) for p in parts]
            record["messages"] += settle(parts, self._inboxes)
            self._gpu_times(record["compute_s"])
            record["wall_s"] = time.perf_counter() - t_step
            if paths is not None:
                record["path"] = chosen
                rounds = [0] * self.plan.n_partitions
                for p in parts:
                    rounds[p.pid] = p.rounds
                record["rounds"] = rounds
                paths.measured()
            total = self._tally(votes)
            active = total.active
            record["active_vertices"] = int(active)
            record["frontier_edges"] = int(total.edges)
            keep(records, record, summed)
            recent = [*recent[-1:], record]
            if self.progress:
                self.progress.step(step, mode.name, active)
            # a bottom-up step's frontier counts as one edge, as GAP's scout count after one
            frontier = (active, 1 if bottom_up or switched_back(recent) else total.edges)
            step += 1
            if algorithm.finished(total):
                break
            if active == 0:
                frontier = None
        for p in parts:
            p.synchronize()
            p.clean_tail = self._clean_tail(p, modes)
        t1 = time.perf_counter()
        result = self._collect(algorithm)
        self.timings = dict(run_s=t1 - t0, collect_s=time.perf_counter() - t1)
        return result, records

    def release(self):
        """Drop what the runs so far keep for the next (the partitions' state arrays, boxes and
        inboxes, the exchange's buffers): before running another algorithm, whose arrays differ
        (the default source's components, then the command's algorithm)."""
        for p in self.parts:
            p.recycle()
            p.recycle()             # the second time, nothing was lent since: nothing kept
            p.state = SimpleNamespace()
            p.boxes.clear()
            p.inboxes.clear()
            p.outboxes.clear()
            p.clean_box = p.clean_tail = None
            for view in p.placed_views():
                view.__dict__.pop("node_gvid", None)      # as large as the view: made on use
                for rows in view.__dict__.pop("sorted_rows", ()):       # the same
                    p.graph_bytes -= rows.nbytes
        self._inboxes.clear()
        if self.ranks is not None:
            self.ranks.release()

    def _bottom_up(self, bottom_up, frontier, explored, recent):
        active, edges = frontier
        n, m = self.plan.graph.n_vertices, self.plan.graph.n_edges
        if not bottom_up:
            return edges > (m - explored) / ALPHA
        previous = recent[-2]["active_vertices"] if len(recent) > 1 else 0
        return active >= previous or active > n / BETA

    def _superstep(self, algorithm, mode, step):
        if self.ranks is not None:
            self.ranks.superstep(step)
        parts = self.parts
        h2d0, peer0 = sum(p.h2d_bytes for p in parts), sum(p.peer_bytes for p in parts)
        compute_s = [0.0] * len(parts)
        t0 = time.perf_counter()
        host_views = self.plan.views(mode.view)
        for p in parts:
            with p.context():
                self._place_box(p, mode)
        if mode.exchange == "pull":
            readers = [self._call(algorithm.reads_ghosts, p, step, mode) for p in parts]
            values = [self._call(algorithm.gather, p, step, mode) if read else None
                      for p, read in zip(parts, self._owners_read(host_views, readers))]
            messages = self._exchange_pull(host_views, mode, values, readers)
            exchange_s = time.perf_counter() - t0
            compute_s = self._compute(algorithm, mode, step)
        else:
            compute_s = self._compute(algorithm, mode, step)
            t1 = time.perf_counter()
            messages = self._exchange_push(host_views, mode)
            for p in parts:
                if p.inboxes[mode.name].size:   # skip partitions nothing was sent to
                    self._call(algorithm.scatter, p, step, mode, p.inboxes[mode.name])
            exchange_s = time.perf_counter() - t1
        record = dict(step=step, mode=mode.name, compute_s=compute_s, exchange_s=exchange_s,
                      messages=int(messages), h2d_bytes=int(sum(p.h2d_bytes for p in parts) - h2d0),
                      peer_bytes=int(sum(p.peer_bytes for p in parts) - peer0))
        record.update(self._transfers())
        if self.ranks is not None:
            self.ranks.record(record)
        return record

    def _transfers(self):
        """The superstep's streamed-edge statistics: chunks served per engine (and, per
        streaming partition, one letter per chunk: R resident, F filter, C compaction, Z
        zero-copy, . idle), bytes copied and read in place, queue vertices served from the GPU
        cache and bytes loaded into it; for edges read from a file, the pages and bytes read and
        the pages found in the GPU's page cache."""
        engines = dict(resident=0, filter=0, compaction=0, zerocopy=0)
        moved = dict(filter_bytes=0, compaction_bytes=0, zerocopy_bytes=0, cache=0,
                     cache_bytes=0)
        chunks, paged = {}, {}
        for p, stream in self._streams:
            s = stream.take_stats()
            for key in ("pages", "read_bytes", "cached_pages"):   # edges in a file
                if key in s:
                    paged[key] = paged.get(key, 0) + s[key]
            for key in engines:
                engines[key] += s[key]
            for key in moved:
                moved[key] += s[key]
            if s["chunks"]:
                chunks[str(p.pid)] = chunks.get(str(p.pid), "") + s["chunks"]
        out = dict(engines=engines, **paged)
        if chunks:
            out.update(moved, chunks=chunks)
        return out

    # Where the ranks (bsp.mpi.Ranks) take part: which owners publish, how boxes move, how
    # votes add up, how results come together.

    def _owners_read(self, host_views, readers):
        """Per partition, whether some reader will read its boundary values (a reader that holds
        ghosts of it and whose `reads_ghosts` said yes); gather runs only for those. Remote
        readers may read any owner's values."""
        if self.ranks is not None:
            return [True] * len(self.parts)
        return [any(want and q != p and host_views[q].ghost_ptr[p + 1] > host_views[q].ghost_ptr[p]
                    for q, want in enumerate(readers))
                for p in range(len(readers))]

    def _exchange_push(self, host_views, mode):
        if self.ranks is not None:
            return self.ranks.push(self.parts, host_views, mode, self._inboxes)
        return exchange_push(self.parts, host_views, mode, self._inboxes)

    def _exchange_pull(self, host_views, mode, values, readers):
        """Over ranks every ghost travels (remote owners cannot see `readers`)."""
        if self.ranks is not None:
            return self.ranks.pull(self.parts, host_views, mode, values)
        return exchange_pull(self.parts, host_views, mode, values, readers)

    def _tally(self, votes):
        """The partitions' votes, every rank's, as one Vote (`tally`)."""
        mine = tally(votes)
        return mine if self.ranks is None else self.ranks.tally(mine)

    def _collect(self, algorithm):
        """The whole result by global id; over ranks, this rank's values in `local_gvids` order
        (its partitions renumbered: no array of the whole graph's size), gathered to rank 0
        with `gather`."""
        if self.ranks is None:
            self._whole = algorithm.collect(self.parts, self.plan.graph.n_vertices)
            self._values = None
            return self._whole
        self._values = self.ranks.collect(self, algorithm)
        return self.ranks.gathered(self.local_gvids, self._values) if self.gather \
            else self._values

    @property
    def values(self):
        """This rank's values of the last run, in `local_gvids` order."""
        if self._values is None:
            self._values = self._whole[self.local_gvids]
        return self._values

    @staticmethod
    def _clean_after_init(algorithm, part):
        """The push mode whose box (a state array's tail) init left at the message identity:
        the state was made by `part.alloc` with the identity as its fill (init writes no ghost
        slot), so the first superstep need not fill it again."""
        for m in algorithm.modes:
            if m.exchange == "push" and m.state is not None:
                arr = getattr(part.state, m.state, None)
                if id(arr) in part.filled and part.filled[id(arr)] == m.message.identity:
                    return m.name
        return None

    @staticmethod
    def _clean_tail(part, modes):
        """After a run: the state array whose push box the exchange left at the identity (every
        push exchange resets what it sent), for the next run's `alloc` (Partition.clean_tail)."""
        mode = modes.get(part.clean_box)
        if mode is None or mode.state is None:
            return None
        end = part.n_local + part.views[mode.view].n_ghosts
        return getattr(part.state, mode.state), mode.message.identity, end

    @staticmethod
    def _place_box(part, mode):
        """The mode's box: the tail of its state array, or an array of its own. A push box
        starts at the identity: the exchange resets what it sent, so only the first push step
        of a run, or after a pull mode that writes a state array's tail, fills it."""
        n = part.views[mode.view].n_ghosts
        box = part.boxes.get(mode.name)
        if mode.state is not None:
            state = getattr(part.state, mode.state)
            # slicing a device array costs host time: the box is kept while the state stays
            if box is None or box.base is not state:
                box = state[part.n_local:part.n_local + n]
        elif mode.message.dtype == np.bool_:        # flags: a bitmap (bsp/exchange.py)
            if box is None or box.size != bitmap_bytes(n):
                box = part.empty(bitmap_bytes(n), np.uint8)
        elif box is None or box.dtype != mode.message.dtype or box.size != n:
            box = part.empty(n, mode.message.dtype)
        part.boxes[mode.name] = box
        if mode.exchange == "pull":
            clean = part.boxes.get(part.clean_box)
            if mode.state is not None and (clean is None or clean.base is box.base):
                part.clean_box = None       # it writes a state array's tail: the push box's
            return
        outbox = part.outboxes.get(mode.name)
        if outbox is None or outbox.touched.size != n:
            outbox = part.outboxes[mode.name] = Outbox(box, part.empty(n, np.int64),
                                                       part.full(1, 0, np.int64))
        elif outbox.values is not box:
            part.outboxes[mode.name] = outbox = outbox._replace(values=box)
        if part.clean_box != mode.name:
            k = part.kernels("boxes")
            k.box_fill(box, mode.message.dtype.type(mode.message.identity))
            k.box_fill(outbox.count, 0)
            part.clean_box = mode.name

    @staticmethod
    def _box(part, mode):
        """What compute gets: the Outbox of a push mode, the ghost values of a pull mode."""
        return part.outboxes[mode.name] if mode.exchange == "push" else part.boxes[mode.name]

    @staticmethod
    def _call(callback, part, *args):
        with part.context():
            return callback(part, *args)

    def _compute(self, algorithm, mode, step):
        """Queue the GPU partitions' kernels first (timed by events on their streams), then run
        the host partitions, which so overlap the GPUs. Nothing waits for the GPUs here: what
        reads their results next (the exchange's pack, the vote's copy) waits on their streams,
        and the host partitions' exchange work runs meanwhile; their times are read once the
        superstep is over (`_gpu_times`)."""
        times = [0.0] * self.plan.n_partitions
        gpus = [p for p in self.parts if p.device == "gpu"]
        for p in gpus:
            with p.context():
                p.start_timer()
                p.rounds = 0
                self._round(algorithm, p, step, mode, self._box(p, mode))
                p.stop_timer()
        for p in self.parts:
            if p.device != "gpu":
                _, times[p.pid] = p.timed(self._rounds, algorithm, p, step, mode, True)
        for p in gpus:      # an async GPU partition's later rounds, after the host's work
            if p.path is None or not p.path.asynchronous:
                continue
            with p.context():
                p.start_timer()     # a span of its own: the stream idled through the host's
                self._rounds(algorithm, p, step, mode, False)
                p.stop_timer()
        if self.ranks is not None:
            self.ranks.computed(self.parts)
        return times

    def _rounds(self, algorithm, p, step, mode, first):
        """Compute's round on `p` (with `first`), then, on an async path, more local rounds
        while `next_round` finds local work, ROUNDS at most; `p.rounds` counts them, and the
        rounds an operator ran within a compute (advance's `rounds`)."""
        box = self._box(p, mode)
        if first:
            p.rounds = 0
            self._round(algorithm, p, step, mode, box)
        if p.path is None or not p.path.asynchronous:
            return
        while p.rounds < ROUNDS and algorithm.next_round(p, step, mode):
            self._round(algorithm, p, step, mode, box)

    @staticmethod
    def _round(algorithm, p, step, mode, box):
        algorithm.compute(p, step, mode, box)
        p.rounds += 1

    def _gpu_times(self, times):
        """The GPU partitions' compute times of the superstep just done, into `times`."""
        for p in self.parts:
            if p.device == "gpu":
                times[p.pid] = p.elapsed()
