"""The engine across MPI processes (mpi4py): each rank runs its own partitions (a CPU partition and
GPU partitions, real or emulated) and the ranks exchange aggregated boxes every superstep.

Imported only by MPI runs (`totem_py.distributed`, tests/mpi_driver.py); importing bsp or totem_py
never imports mpi4py.

Plan once, execute many (as mpi4py-fft does):

* Every rank builds its own RankPlan from its share of the graph (partitioners/distributed.py); no rank holds
  the whole graph.
* `ExchangePlan` (one per CSR view, built on first use): for every peer rank the counts and
  displacements of the `Alltoallv` and the index maps - which slots of which local box go to a
  peer, and at which inbox positions (the plan's `peer_pos`) or ghost slots what a peer sends
  lands. A superstep only packs typed NumPy buffers and calls `Ialltoallv`.
* Push (ghost -> owner): a box's slots for another rank's partitions travel dense (all slots) or
  sparse (touched slots as index + value), whichever is fewer bytes, decided per pair of ranks
  from the touched counts that go first in a small `Ialltoall`; the receiver folds them into its
  host inboxes with the message's combine operator, exactly as the in-process exchange folds a
  local peer's box (`kernels_cpu/boxes.py`). Partitions on the same rank exchange as in
  bsp/exchange.py, while the remote messages are in flight.
* Pull (owner -> ghost): owners gather their boundary values for each peer rank's readers, dense;
  one `Ialltoallv`; the readers copy them into their ghost slots. Flags (a bool message) travel as
  bits, as in bsp/exchange.py: one byte-aligned run of packed bits per (owner, reader) pair, packed
  on the owner's device and put into the reader's bitmap, both sides walking the pairs in the same
  order (owner pid, then reader pid).
* Vote: `Iallreduce` of (active vertices, frontier edges) with SUM, of the advance key with
  MIN and, when the votes carry `sums`, of those with SUM, so every rank sees the global totals
  and takes the same decisions (direction switches, phase changes, the finish) in the same
  superstep.
* Results: each rank's values, in the order of its vertices (`Engine.local_gvids`), or with
  `gather`, a `Gatherv` of every rank's values to rank 0 (the global ids are gathered once).

Failures: with `timeout` set, every wait on another rank is bounded (`Waiter`): a superstep's
collectives are polled with `Testall`, and every blocking call made through a `Guarded`
communicator (loading, partitioning, gathering) is watched by the rank's watchdog process
(bsp/watchdog.py; a blocking call may hold the GIL, so a thread could not watch it); past the
deadline (staggered by half a second per rank, so that the first rank to give up stops the rest
before they print) the rank prints one line and stops. `TOTEM_MPI_FAULT=RANK:WHEN:KIND`
(bsp/watchdog.py) injects a failure for the tests.
"""

import contextlib
import os
import sys
import time

import numpy as np
from mpi4py import MPI

from kernels_cpu import boxes as _boxes
from .errors import InputError

from .api import Vote
from .watchdog import STAGGER_S, inject, parse_fault, watchdog
from .exchange import (_HostInbox, _deliver, _inbox, _pack, _reset, _split, bitmap_bytes,
                       device_inbox, pack_bits, pull_bits_local, put_bits, put_runs)


def world():
    return MPI.COMM_WORLD


def node_place(comm):
    """(this rank's place among the ranks on its node, ranks on the node)."""
    node = comm.Split_type(MPI.COMM_TYPE_SHARED, key=comm.rank)
    place = node.rank, node.size
    node.Free()
    return place


def _mpi_type(dtype):
    return MPI._typedict[np.dtype(dtype).char]


def abort(comm, line, code=1):
    """Print one line on this rank and stop every rank of `comm`."""
    print(line, file=sys.stderr, flush=True)
    comm.Abort(code)


# ---- waiting with a deadline ------------------------------------------------------------------

SPIN_POLLS = 50     # a wait tests this many times before it sleeps between tests


def complete(requests, late=None):
    """Test nonblocking `requests` until all are complete: SPIN_POLLS tests, then with sleeps
    growing to 0.1 ms (`late()` called before each), so that a rank waiting for a slower one
    leaves the cores to it."""
    polls = 0
    while not MPI.Request.Testall(requests):
        polls += 1
        if polls > SPIN_POLLS:
            if late is not None:
                late()
            time.sleep(min(1e-4, 1e-7 * polls))


class Waiter:
    """Bounds every wait on another rank by `timeout` seconds (None: no bound): past it, the
    rank prints one line and every rank stops (a peer is stuck, stopped, dead or out of step).
    A superstep's nonblocking collectives are polled with `wait`, which `Abort`s; a blocking call
    (loading, partitioning, gathering), which may hold the GIL while it waits, runs under
    `guard`, kept by the rank's watchdog process (bsp/watchdog.py), which kills the rank. The
    deadline is staggered by STAGGER_S per rank, so that the first rank to give up stops the rest
    before they print."""

    def __init__(self, comm, timeout=None):
        self.comm = comm
        self.timeout = timeout
        self.step = None

    def _deadline(self, t0):
        return t0 + self.timeout + STAGGER_S * self.comm.rank

    def _line(self, what, elapsed):
        where = f"superstep {self.step}: " if self.step is not None else ""
        return (f"error: rank {self.comm.rank}: {where}{what} not complete after {elapsed} s "
                f"(--mpi-timeout {self.timeout:g}); a peer rank is stuck or gone, stopping all "
                f"ranks")

    def give_up(self, what, t0):
        abort(self.comm, self._line(what, f"{time.monotonic() - t0:.1f}"))

    def wait(self, requests, what):
        """Poll `requests` until complete: SPIN_POLLS tests, then with sleeps growing to 0.1 ms,
        so that a rank waiting for a slower one leaves the cores to it. Open MPI's Waitall spins,
        taking cores from the ranks it waits for where ranks share cores; a short spin before the
        sleeps keeps quick waits quick. Past the timeout (if any), every rank is stopped."""
        t0 = time.monotonic()
        deadline = self._deadline(t0) if self.timeout else None

        def late():
            if time.monotonic() > deadline:
                self.give_up(what, t0)
        complete(requests, late if deadline is not None else None)

    @contextlib.contextmanager
    def guard(self, what):
        """Stop every rank if the block (a blocking call on the communicator) outlasts the
        timeout."""
        if not self.timeout:
            yield
            return
        dog = watchdog()
        dog.arm(self.timeout + STAGGER_S * self.comm.rank, self._line(what, "{elapsed}"))
        try:
            yield
        finally:
            dog.disarm()

    def wait_for_root(self):
        """Wait, unbounded and sleeping, until rank 0 reaches the same call: rank 0 working
        alone (its serial --verify) is not a peer that is stuck, and the ranks waiting for it
        leave it the cores. Rank 0 dying still stops every rank (the launcher sees it)."""
        complete([self.comm.Ibarrier()])


GUARDED = frozenset(("Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Barrier",
                     "Bcast", "Gatherv", "Split_type", "allgather", "allreduce", "alltoall",
                     "bcast", "exscan", "gather", "scan"))


class Guarded:
    """A communicator whose blocking collectives (GUARDED) run under its Waiter's `guard`; every
    other attribute is the communicator's own."""

    def __init__(self, comm, timeout=None):
        self.comm = comm
        self.waiter = Waiter(comm, timeout)
        self.phase = "starting"         # what the ranks are doing, for the timeout's message

    def __getattr__(self, name):
        attr = getattr(self.comm, name)
        if name not in GUARDED:
            return attr

        def call(*args, **kwargs):
            with self.waiter.guard(f"{self.phase}: {name}"):
                return attr(*args, **kwargs)
        return call


def guarded(comm, timeout=None):
    return comm if isinstance(comm, Guarded) else Guarded(comm, timeout)


# ---- GPU to GPU across ranks -------------------------------------------------------------------

class Lane:
    """The boxes between GPU partitions on two ranks, moved device to device, as bsp/exchange.py
    moves them between the GPUs of one process: a push box split by owner on the sender's device
    (`box_split`: the touched slots as pairs, or the run of slots whole), the counts first (one
    small Ialltoallv), then each pair's run straight from the sender's device memory into a
    buffer on the receiver's, which folds it into its device inbox; a pull's values gathered on
    the owner's device and received into the reader's ghost slots; flags packed to bits. The
    runs travel through NCCL (`NcclLink`, bootstrapped from the communicator, one GPU per rank)
    or, without it (or on the emulated device), through MPI from host copies (`MpiLink`): the
    same plan, the same folds. Pairs are walked in (sender pid, receiver pid) order on both
    sides, so the runs between two ranks match in order."""

    def __init__(self, comm, plan, views, first):
        self.comm, self.plan, self.views = comm, plan, views
        kinds, rank_of, me = plan.kinds, plan.rank_of, comm.rank
        self.gpu = [k == "gpu" for k in kinds]
        local = [p for p in plan.local_pids if self.gpu[p]]
        remote = [q for q in range(len(kinds)) if self.gpu[q] and rank_of[q] != me]
        # push: (local sender p, remote owner q, slots a:b of p's box) ...
        self.sends = [(p, q, int(views[p].ghost_ptr[q]), int(views[p].ghost_ptr[q + 1]))
                      for p in local for q in remote
                      if views[p].ghost_ptr[q + 1] > views[p].ghost_ptr[q]]
        # ... and (remote sender p, local owner q, the inbox positions of p's slots): the
        # sender's first slot a comes with the plan, once
        starts = comm.alltoall([[a for p, q, a, _ in self.sends if rank_of[q] == r]
                                for r in range(comm.size)])
        self.recvs = []
        for r in range(comm.size):
            if r == me:
                continue
            pairs = [(p, q) for p in range(first[r], first[r + 1]) if self.gpu[p]
                     for q in local if views[q].peer_pos[p].size]
            if len(pairs) != len(starts[r]):
                raise RuntimeError(f"rank {me}: lane plan mismatch with rank {r}")
            self.recvs += [(p, q, a, views[q].peer_pos[p].size) for (p, q), a
                           in zip(pairs, starts[r])]
        self.recvs.sort()
        # the counts of a push travel grouped by peer rank, in the order of the pairs
        self.send_by_rank = [i for r in range(comm.size) for i, x in enumerate(self.sends)
                             if rank_of[x[1]] == r]
        self.recv_by_rank = [i for r in range(comm.size) for i, x in enumerate(self.recvs)
                             if rank_of[x[0]] == r]
        self.count_layout = [_layout([rank_of[q] for _, q, _, _ in self.sends], comm.size),
                             _layout([rank_of[p] for p, _, _, _ in self.recvs], comm.size)]
        self.link = None

    def pair(self, p, q):
        return self.gpu[p] and self.gpu[q] and self.plan.rank_of[p] != self.plan.rank_of[q]

    def _link(self, parts):
        if self.link is None:
            self.link = link_for(self.comm, parts)
        return self.link

    def push(self, parts, mode, identity, waiter):
        """Start a push: split every local GPU box that has lane pairs, exchange the counts and
        the runs; returns (fold: the device-inbox folds per local pid, boxes to put back with
        `box_unsplit`, messages, bytes sent)."""
        by_pid = {p.pid: p for p in parts}
        splits, counts = {}, {}
        for p in {by_pid[s] for s, _, _, _ in self.sends}:
            with p.context():
                splits[p.pid] = _split(p, mode, p.outboxes[mode.name], self.views[p.pid],
                                       identity)
                counts[p.pid] = p.peek(splits[p.pid][3], ("lane", mode.name))
        for p in splits:
            by_pid[p].synchronize()
        rank_of = self.plan.rank_of
        send_n = [int(counts[p][q]) for p, q, _, _ in self.sends]
        out = np.array(send_n, np.int64)[self.send_by_rank]
        got = np.empty(len(self.recvs), np.int64)
        (sc, sd), (rc, rd) = self.count_layout
        waiter.wait([self.comm.Ialltoallv([out, (sc, sd), MPI.INT64_T],
                                          [got, (rc, rd), MPI.INT64_T])], "exchanging counts")
        recv_n = {self.recvs[i][:2]: int(n) for i, n in zip(self.recv_by_rank, got)}
        link = self._link(parts)
        moves, sent = [], 0
        for (p, q, a, b), n in zip(self.sends, send_n):
            idx, vals, box, _ = splits[p]
            runs = (idx[a:a + n], vals[a:a + n]) if n >= 0 else (box[a:b],)
            moves += [("send", rank_of[q], by_pid[p], run) for run in runs if run.size]
            sent += sum(run.nbytes for run in runs)
        folds = {}
        for p, q, a, size in self.recvs:
            n = recv_n[p, q]
            part = by_pid[q]
            with part.context():
                ridx = part.held(("lane slots", p), size, np.int64)[:max(n, 0)]
                rvals = part.held(("lane values", p), size, mode.message.dtype)
            rvals = rvals[:n] if n >= 0 else rvals
            moves += [("recv", rank_of[p], part, run) for run in ((ridx, rvals) if n >= 0
                                                                   else (rvals,)) if run.size]
            folds.setdefault(q, []).append((p, ridx if n >= 0 else None, rvals, a))
        link.move(moves, waiter)
        messages = sum(int(counts[p][-1]) for p in splits)
        return folds, [(by_pid[p], splits[p]) for p in splits], messages, sent

    def pull(self, parts, mode, values, waiter, bits=False):
        """A pull's runs between GPU partitions on two ranks: each owner's values at the
        reader's positions (or, `bits`, packed 8 to a byte), received into the reader's ghost
        slots (or put into its bitmap). Returns the bytes sent."""
        by_pid = {p.pid: p for p in parts}
        rank_of = self.plan.rank_of
        link = self._link(parts)
        moves, puts, sent = [], [], 0
        # owner p sends to reader q what a push from q to p would carry: the same pairs reversed
        for q, p, _, _ in self.recvs:        # local owner p (a receiver of pushes), remote q
            owner = by_pid[p]
            pos = owner.views[mode.view].peer_pos[q]
            with owner.context():
                k = owner.kernels("boxes")
                if bits:
                    run = owner.held(("lane bits to", q), bitmap_bytes(pos.size), np.uint8)
                    k.box_pack_bits(values[parts.index(owner)], pos, run)
                else:
                    run = owner.held(("lane values to", q), pos.size, values[0].dtype)
                    k.box_gather(values[parts.index(owner)], pos, run)
            moves.append(("send", rank_of[q], owner, run))
            sent += run.nbytes
        for p, q, a, b in self.sends:        # local reader p of remote owner q
            reader = by_pid[p]
            box = reader.boxes[mode.name]
            if bits:
                with reader.context():
                    run = reader.held(("lane bits from", q), bitmap_bytes(b - a), np.uint8)
                puts.append((reader, run, box, a, b))
            else:
                run = box[a:b]
            moves.append(("recv", rank_of[q], reader, run))
        link.move(sorted(moves, key=lambda m: m[0] == "recv"), waiter)
        for reader, run, box, a, b in puts:
            with reader.context():
                reader.kernels("boxes").box_put_bits(run, box, a, b)
        return sent


def _layout(ranks, size):
    """(counts, displacements) per rank of items grouped by their peer rank."""
    counts = np.bincount(np.asarray(ranks, np.int64), minlength=size)
    return counts, np.concatenate(([0], np.cumsum(counts)[:-1]))


def link_for(comm, parts):
    """NCCL between the ranks' GPUs when every rank runs one real GPU partition, on a device of
    its own, and CuPy has NCCL, else MPI. Collective."""
    gpus = [p for p in parts if p.kind == "gpu"]
    mine = None
    if len(gpus) == 1 and gpus[0].device == "gpu" and os.environ.get("TOTEM_NCCL", "1") != "0":
        try:
            from cupy.cuda import nccl
            import cupy
            mine = (MPI.Get_processor_name(), cupy.cuda.Device(gpus[0].device_id).pci_bus_id)
        except ImportError:
            pass
    devices = comm.allgather(mine)
    if None not in devices and len(set(devices)) == len(devices):
        return NcclLink(comm, gpus[0], nccl)
    return MpiLink(comm)


class MpiLink:
    """Runs between ranks through MPI: device arrays go through host copies."""

    def __init__(self, comm):
        self.comm = comm

    def move(self, moves, waiter):
        """`moves`: ("send" | "recv", peer rank, partition, array) in the order both sides
        agree on; returns once every run has arrived."""
        requests, landing = [], []
        for kind, peer, part, run in moves:
            if kind == "send":
                host = np.ascontiguousarray(part.to_host(run))
                requests.append(self.comm.Isend([host.view(np.uint8), MPI.BYTE], dest=peer,
                                                tag=LANE_TAG))
                landing.append(host)        # kept alive until sent
            else:
                host = np.empty(run.nbytes, np.uint8)
                requests.append(self.comm.Irecv([host, MPI.BYTE], source=peer, tag=LANE_TAG))
                landing.append((part, run, host))
        waiter.wait(requests, "exchanging device runs")
        for item in landing:
            if isinstance(item, tuple):
                part, run, host = item
                with part.context():
                    run[...] = part.to_device(host.view(run.dtype).reshape(run.shape))


LANE_TAG = 71


class NcclLink:
    """Runs between ranks' GPUs through NCCL: one communicator over the ranks (each rank's one
    GPU), its unique id broadcast through MPI; a superstep's runs are one group of sends and
    receives on the partition's stream, which the rank's next kernels follow."""

    def __init__(self, comm, part, nccl):
        self.nccl, self.part = nccl, part
        uid = comm.bcast(nccl.get_unique_id() if comm.rank == 0 else None)
        with part.context():
            self.comm = nccl.NcclCommunicator(comm.size, uid, comm.rank)

    def move(self, moves, waiter):
        nccl, stream = self.nccl, self.part.stream.ptr
        with self.part.context():
            nccl.groupStart()
            for kind, peer, part, run in moves:
                if kind == "send":
                    self.comm.send(run.data.ptr, run.nbytes, nccl.NCCL_UINT8, peer, stream)
                else:
                    self.comm.recv(run.data.ptr, run.nbytes, nccl.NCCL_UINT8, peer, stream)
            nccl.groupEnd()


# ---- the exchange plan ------------------------------------------------------------------------

class ExchangePlan:
    """Counts, displacements and index maps of one CSR view's exchange between ranks; built once
    (collectively: the counts are checked against what the peers expect), used every superstep."""

    def __init__(self, comm, plan, views, lanes=False):
        size, me = comm.size, comm.rank
        self.comm, self.size, self.me = comm, size, me
        rank_of = np.asarray(plan.rank_of)
        first = np.searchsorted(rank_of, np.arange(size + 1))   # rank r: pids first[r]:first[r+1]
        local = plan.local_pids
        self.local = local
        self.peers = [r for r in range(size) if r != me]
        # pairs of GPU partitions on two ranks move device to device (`Lane`), not through here
        self.lane = Lane(comm, plan, views, first) if lanes and "gpu" in plan.kinds else None
        host = self.host_pair = (lambda p, q: self.lane is None or not self.lane.pair(p, q))
        # push, send side: rank s gets box slots A:B (its partitions' ghosts) of every local box
        self.push_send = {}            # s -> [(local index, A, B, offset in s's chunk)]
        push_send_n = np.zeros(size, np.int64)
        for s in self.peers:
            segs, off = [], 0
            for i, p in enumerate(local):
                for q in range(first[s], first[s + 1]):
                    a, b = int(views[p].ghost_ptr[q]), int(views[p].ghost_ptr[q + 1])
                    if a < b and host(p, q):
                        segs.append((i, a, b, off))
                        off += b - a
            self.push_send[s], push_send_n[s] = segs, off
        # push, receive side: from rank r, per partition p of r, per local q: |peer_pos_q[p]|
        # values landing at positions inbox_off[q] + peer_pos_q[p] of the concatenated inbox
        self.inbox_off = np.concatenate([[0], np.cumsum([views[q].boundary_lvid.size
                                                         for q in local])]).astype(np.int64)
        self.push_recv = {}            # r -> [(offset in r's chunk, length, inbox positions)]
        push_recv_n = np.zeros(size, np.int64)
        for r in self.peers:
            segs, off = [], 0
            for p in range(first[r], first[r + 1]):
                dest = [self.inbox_off[i] + views[q].peer_pos[p] for i, q in enumerate(local)
                        if host(p, q)]
                dest = np.concatenate(dest).astype(np.int64) if dest else np.empty(0, np.int64)
                if dest.size:
                    segs.append((off, dest.size, dest))
                    off += dest.size
            self.push_recv[r], push_recv_n[r] = segs, off
        # pull, send side: rank s's readers get, from each local owner p, the values at
        # peer_pos_p[q] for each q of s (the mirror image of push)
        self.pull_send = {}            # s -> [(local index, boundary positions, offset)]
        pull_send_n = np.zeros(size, np.int64)
        for s in self.peers:
            segs, off = [], 0
            for i, p in enumerate(local):
                pos = [views[p].peer_pos[q] for q in range(first[s], first[s + 1])
                       if host(p, q)]
                pos = np.concatenate(pos).astype(np.int64) if pos else np.empty(0, np.int64)
                if pos.size:
                    segs.append((i, pos, off))
                    off += pos.size
            self.pull_send[s], pull_send_n[s] = segs, off
        # r -> [(local index, ghost slots a:b, offset)]
        self.pull_recv, pull_recv_n = self._ghost_runs(first, views, lambda n: n)
        # one local partition whose ghost slots hold the peers' runs in rank order: a pull
        # can receive straight into its ghost values (no copy out of a receive buffer)
        slots = [(a, b) for r in self.peers for _, a, b, _ in self.pull_recv[r]]
        self.pull_direct = (len(local) == 1 and bool(slots)
                            and [a for a, _ in slots] == [0] + [b for _, b in slots[:-1]]
                            and slots[-1][1] == views[local[0]].n_ghosts)
        # pull of flags: the same pairs, each its own run of (slots + 7) // 8 bytes
        self.bits_send = {}            # s -> [(local index, reader pid, byte offset)]
        bits_send_n = np.zeros(size, np.int64)
        for s in self.peers:
            segs, off = [], 0
            for i, p in enumerate(local):
                for q in range(first[s], first[s + 1]):
                    n = views[p].peer_pos[q].size
                    if n and host(p, q):
                        segs.append((i, q, off))
                        off += bitmap_bytes(n)
            self.bits_send[s], bits_send_n[s] = segs, off
        # r -> [(local index, ghost slots a:b, byte offset)]
        self.bits_recv, bits_recv_n = self._ghost_runs(first, views, bitmap_bytes)
        # check the two sides agree (once, cheap), and pick the sparse index type
        expect = np.empty(size, np.int64)
        comm.Alltoall([push_send_n, MPI.INT64_T], [expect, MPI.INT64_T])
        if not np.array_equal(expect, push_recv_n):
            raise RuntimeError(f"rank {me}: exchange plan mismatch: peers send {expect.tolist()}, "
                               f"this rank expects {push_recv_n.tolist()}")
        comm.Alltoall([bits_send_n, MPI.INT64_T], [expect, MPI.INT64_T])
        if not np.array_equal(expect, bits_recv_n):
            raise RuntimeError(f"rank {me}: exchange plan mismatch: peers send {expect.tolist()} "
                               f"bytes of flags, this rank expects {bits_recv_n.tolist()}")
        # which local boxes the host path reads (pairs with the same rank's partitions, or
        # through MPI), and which owners' values it needs on the host
        self.host_box = [any(i == j for s in self.peers for j, _, _, _ in self.push_send[s])
                         or any(views[p].ghost_ptr[q + 1] > views[p].ghost_ptr[q]
                                for q in local if q != p) for i, p in enumerate(local)]
        self.host_owner = [any(i == j for s in self.peers for j, _, _ in self.pull_send[s])
                           or any(views[p].peer_pos[q].size for q in local if q != p)
                           for i, p in enumerate(local)]
        widest = comm.allreduce(int(max(push_send_n.max(initial=0), 1)), op=MPI.MAX)
        self.index_dtype = np.dtype(np.int32 if widest < 2**31 else np.int64)
        self.push_send_n, self.push_recv_n = push_send_n, push_recv_n
        self.pull_send_n, self.pull_recv_n = pull_send_n, pull_recv_n
        self.bits_send_n, self.bits_recv_n = bits_send_n, bits_recv_n
        self._buffers = {}

    def _ghost_runs(self, first, views, length):
        """Receive side of a pull: per peer rank r, [(local index, ghost slots a:b, offset)] for
        the ghosts each local partition holds of r's partitions, in r's send order, each run
        taking `length(b - a)` items of r's message; and the message lengths per rank."""
        runs, total = {}, np.zeros(self.size, np.int64)
        for r in self.peers:
            segs, off = [], 0
            for p in range(first[r], first[r + 1]):
                for i, q in enumerate(self.local):
                    a, b = int(views[q].ghost_ptr[p]), int(views[q].ghost_ptr[p + 1])
                    if a < b and self.host_pair(p, q):
                        segs.append((i, a, b, off))
                        off += length(b - a)
            runs[r], total[r] = segs, off
        return runs, total

    @staticmethod
    def _displ(counts):
        return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)

    def _buffer(self, key, size, dtype):
        buf = self._buffers.get(key)
        if buf is None or buf.size < size or buf.dtype != dtype:
            buf = self._buffers[key] = np.empty(max(int(size), 1), dtype=dtype)
        return buf

    def _sparse(self, touched, dense, itemsize):
        """Per peer: whether touched slots travel as index + value (fewer bytes) or all slots."""
        isz = self.index_dtype.itemsize
        return [int(t) * (isz + itemsize) < int(d) * itemsize for t, d in zip(touched, dense)]

    # -- push --------------------------------------------------------------------------------
    def push(self, parts, host_views, mode, buffers, waiter):
        """Fold every local box into the owners' inboxes, local or remote; returns (messages,
        bytes sent to other ranks)."""
        msg = mode.message
        combine = _boxes.COMBINE[msg.combine]
        dtype, identity = msg.dtype, msg.dtype.type(msg.identity)
        inbox_all = _inbox(buffers, (mode.name, "ranks"), int(self.inbox_off[-1]), dtype,
                           identity)
        subs = [_HostInbox(0, dtype, identity,
                           inbox_all.values[self.inbox_off[i]:self.inbox_off[i + 1]])
                for i in range(len(self.local))]
        for sub in subs:
            sub.dense = True
        inboxes = [sub.values for sub in subs]
        packed, sent_boxes, messages = [], [], 0
        for j, p in enumerate(parts):
            if host_views[p.pid].n_ghosts == 0 or not self.host_box[j]:
                packed.append(None)
                continue
            outbox = p.outboxes[mode.name]
            with p.context():
                idx, vals, n, dev_idx = _pack(p, mode, outbox, identity)
            packed.append((idx, vals))
            sent_boxes.append((p, outbox, n, dev_idx))
            messages += n
        # touched slots per peer rank: (their positions in the piece, the piece's offset in
        # that peer's dense chunk, their values), or (None, offset, None, the piece) for a
        # piece of a whole box: its slots are found only if the peer gets them sparse
        size, peers = self.size, self.peers
        touched = {s: [] for s in peers}
        n_touched = np.zeros(size, np.int64)
        for s in peers:
            for i, a, b, off in self.push_send[s]:
                idx, vals = packed[i]
                if idx is None:
                    t, v, whole = None, None, vals[a:b]
                    n = _boxes.box_count(whole, identity)
                else:
                    lo, hi = np.searchsorted(idx, (a, b))
                    t, v, whole = idx[lo:hi] - a, vals[lo:hi], None
                    n = t.size
                if n:
                    touched[s].append((t, off, v, whole))
                    n_touched[s] += n
        lane = self.lane.push(parts, mode, identity, waiter) if self.lane else ({}, [], 0, 0)
        n_in = np.empty(size, np.int64)
        waiter.wait([self.comm.Ialltoall([n_touched, MPI.INT64_T], [n_in, MPI.INT64_T])],
                    "exchanging message counts")
        send_sparse = self._sparse(n_touched, self.push_send_n, dtype.itemsize)
        recv_sparse = self._sparse(n_in, self.push_recv_n, dtype.itemsize)
        # typed send buffers: indices for sparse peers, values for every peer
        s_icount = np.array([n_touched[s] if s != self.me and send_sparse[s] else 0
                             for s in range(size)], np.int64)
        s_vcount = np.array([0 if s == self.me else (n_touched[s] if send_sparse[s] else
                                                      self.push_send_n[s]) for s in range(size)],
                            np.int64)
        r_icount = np.array([n_in[r] if r != self.me and recv_sparse[r] else 0
                             for r in range(size)], np.int64)
        r_vcount = np.array([0 if r == self.me else (n_in[r] if recv_sparse[r] else
                                                      self.push_recv_n[r]) for r in range(size)],
                            np.int64)
        s_idispl, s_vdispl = self._displ(s_icount), self._displ(s_vcount)
        r_idispl, r_vdispl = self._displ(r_icount), self._displ(r_vcount)
        sidx = self._buffer("push_sidx", s_icount.sum(), self.index_dtype)
        sval = self._buffer(("push_sval", dtype.str), s_vcount.sum(), dtype)
        for s in peers:
            if send_sparse[s]:
                ki, kv = s_idispl[s], s_vdispl[s]     # the two buffers' displacements differ
                for t, off, v, whole in touched[s]:
                    if v is None:
                        t = _boxes.box_touched(whole, identity)
                        _boxes.box_gather(whole, t, sval[kv:kv + t.size])
                    else:
                        sval[kv:kv + t.size] = v
                    np.add(t, off, out=sidx[ki:ki + t.size], casting="unsafe")
                    ki += t.size
                    kv += t.size
            elif s_vcount[s]:
                chunk = sval[s_vdispl[s]:s_vdispl[s] + s_vcount[s]]
                _boxes.box_fill(chunk, identity)
                for t, off, v, whole in touched[s]:
                    if v is None:       # untouched slots hold the identity: copy the piece
                        chunk[off:off + whole.size] = whole
                    else:
                        chunk[t + off] = v
        ridx = self._buffer("push_ridx", r_icount.sum(), self.index_dtype)
        rval = self._buffer(("push_rval", dtype.str), r_vcount.sum(), dtype)
        itype, vtype = _mpi_type(self.index_dtype), _mpi_type(dtype)
        requests = [self.comm.Ialltoallv([sidx, (s_icount, s_idispl), itype],
                                         [ridx, (r_icount, r_idispl), itype]),
                    self.comm.Ialltoallv([sval, (s_vcount, s_vdispl), vtype],
                                         [rval, (r_vcount, r_vdispl), vtype])]
        # partitions of this rank, while the remote boxes travel (as bsp.exchange does it)
        for j, p in enumerate(parts):
            if packed[j] is None:
                continue
            idx, vals = packed[j]
            view = host_views[p.pid]
            for i, q in enumerate(self.local):
                a, b = int(view.ghost_ptr[q]), int(view.ghost_ptr[q + 1])
                if a == b:
                    continue
                pos = host_views[q].peer_pos[p.pid]
                if idx is None:
                    combine(inboxes[i], pos, vals[a:b])
                else:
                    lo, hi = np.searchsorted(idx, (a, b))
                    at = np.empty(hi - lo, dtype=np.int64)
                    _boxes.box_positions(pos, idx[lo:hi], a, at)
                    combine(inboxes[i], at, vals[lo:hi])
        waiter.wait(requests, "exchanging boxes")
        for r in peers:
            segs = self.push_recv[r]
            if recv_sparse[r]:
                idx = ridx[r_idispl[r]:r_idispl[r] + r_icount[r]]
                vals = rval[r_vdispl[r]:r_vdispl[r] + r_vcount[r]]
                starts = np.array([off for off, _, _ in segs], dtype=np.int64)
                cuts = np.searchsorted(idx, starts)
                cuts = np.append(cuts, idx.size)
                for k, (off, _, dest) in enumerate(segs):
                    lo, hi = cuts[k], cuts[k + 1]
                    if lo == hi:
                        continue
                    at = np.empty(hi - lo, dtype=np.int64)
                    _boxes.box_positions(dest, idx[lo:hi].astype(np.int64), off, at)
                    combine(inbox_all.values, at, vals[lo:hi])
            else:
                base = r_vdispl[r]
                for off, n, dest in segs:       # one segment per sending partition: distinct
                    combine(inbox_all.values, dest, rval[base + off:base + off + n])
        for p, outbox, n, dev_idx in sent_boxes:
            with p.context():
                _reset(p, outbox, n, dev_idx, identity)
        folds, splits, lane_messages, lane_sent = lane
        for p, (_, _, box, counts) in splits:     # a box the lane alone read goes back now
            if not self.host_box[parts.index(p)]:
                with p.context():
                    p.kernels("boxes").box_unsplit(box, counts, identity)
                messages += int(counts[-1])
        for i, q in enumerate(parts):
            with q.context():
                if q.pid in folds:
                    q.inboxes[mode.name] = device_inbox(
                        q, mode, host_views[q.pid], subs[i], identity,
                        lambda inbox, q=q: self._fold_lane(q, mode, folds[q.pid], inbox))
                else:
                    q.inboxes[mode.name] = _deliver(q, host_views[q.pid], subs[i], identity,
                                                    mode.view)
        inbox_all.dirty = any(sub.dirty for sub in subs)
        isz = self.index_dtype.itemsize
        sent = int(s_icount.sum() * isz + s_vcount.sum() * dtype.itemsize + 8 * (size - 1))
        return messages, sent + lane_sent

    @staticmethod
    def _fold_lane(q, mode, folds, inbox):
        """Fold what arrived through the lane into q's device inbox."""
        k, pos = q.kernels("boxes"), q.views[mode.view].peer_pos
        for p, idx, vals, a in folds:
            k.box_fold(inbox, pos[p], vals, mode.message.combine, idx, a)

    # -- pull --------------------------------------------------------------------------------
    def pull(self, parts, host_views, mode, values, waiter):
        """Copy every owner's boundary values into its readers' ghost slots, local or remote;
        returns (messages, bytes sent to other ranks). `values` is aligned with `parts`. Flags
        (a bool message) travel as bits (`pull_bits`)."""
        if mode.message.dtype == np.bool_:
            return self.pull_bits(parts, host_views, mode, values, waiter)
        lane_sent = self.lane.pull(parts, mode, values, waiter) if self.lane else 0
        host_vals = [p.to_host(values[j]) if host_views[p.pid].boundary_lvid.size
                     and self.host_owner[j] else None for j, p in enumerate(parts)]
        dtype = np.dtype(values[0].dtype) if values else np.dtype(mode.message.dtype)
        scount = self.pull_send_n.copy()
        rcount = self.pull_recv_n.copy()
        sdispl, rdispl = self._displ(scount), self._displ(rcount)
        sbuf = self._buffer(("pull_s", dtype.str), scount.sum(), dtype)
        direct = None       # a CPU partition's box (a GPU partition's ghosts go through rbuf)
        if self.pull_direct and parts[0].device == "cpu":
            direct = parts[0].boxes[mode.name]
            if direct.dtype != dtype:
                direct = None
        rbuf = (direct if direct is not None else
                self._buffer(("pull_r", dtype.str), rcount.sum(), dtype))
        for s in self.peers:
            for i, pos, off in self.pull_send[s]:
                k = sdispl[s] + off
                _boxes.box_gather(host_vals[i], pos, sbuf[k:k + pos.size])
        vtype = _mpi_type(dtype)
        requests = [self.comm.Ialltoallv([sbuf, (scount, sdispl), vtype],
                                         [rbuf, (rcount, rdispl), vtype])]
        messages, ghosts, runs = 0, [], [[] for _ in parts]
        for j, q in enumerate(parts):
            view = host_views[q.pid]
            if view.n_ghosts == 0:
                ghosts.append(None)
                continue
            box = q.boxes[mode.name]
            g = box if q.device == "cpu" else np.empty(view.n_ghosts, dtype=box.dtype)
            ghosts.append(g)
            for i, p in enumerate(self.local):
                a, b = int(view.ghost_ptr[p]), int(view.ghost_ptr[p + 1])
                if a < b:
                    _boxes.box_gather(host_vals[i], host_views[p].peer_pos[q.pid], g[a:b])
                    runs[j].append((a, b))
            messages += view.n_ghosts
        waiter.wait(requests, "exchanging boundary values")
        for r in self.peers:
            for i, a, b, off in self.pull_recv[r]:
                if direct is None:
                    k = rdispl[r] + off
                    ghosts[i][a:b] = rbuf[k:k + b - a]
                runs[i].append((a, b))
        for j, q in enumerate(parts):
            box = q.boxes[mode.name]
            if ghosts[j] is not None and ghosts[j] is not box and runs[j]:
                with q.context():
                    put_runs(q, box, ghosts[j], sorted(runs[j]))
        sent = int(scount.sum() - scount[self.me]) * dtype.itemsize
        return messages, sent + lane_sent

    def pull_bits(self, parts, host_views, mode, values, waiter):
        """`pull` for flags: each (owner, reader) pair's flags packed to bits on the owner's
        device (bsp.exchange.pack_bits); remote pairs in one `Ialltoallv` of bytes, local ones
        put into the readers' bitmaps while it travels."""
        scount, rcount = self.bits_send_n, self.bits_recv_n
        sdispl, rdispl = self._displ(scount), self._displ(rcount)
        sbuf = self._buffer("bits_s", scount.sum(), np.uint8)
        rbuf = self._buffer("bits_r", rcount.sum(), np.uint8)
        for s in self.peers:
            for i, q, off in self.bits_send[s]:
                p = parts[i]
                with p.context():
                    packed = pack_bits(p, mode.view, values[i], q)
                k = sdispl[s] + off
                sbuf[k:k + packed.size] = packed
        requests = [self.comm.Ialltoallv([sbuf, (scount, sdispl), MPI.BYTE],
                                         [rbuf, (rcount, rdispl), MPI.BYTE])]
        lane_sent = self.lane.pull(parts, mode, values, waiter, bits=True) if self.lane else 0
        messages = pull_bits_local(parts, host_views, mode, values)
        waiter.wait(requests, "exchanging boundary flags")
        for r in self.peers:
            for i, a, b, off in self.bits_recv[r]:
                q = parts[i]
                k = rdispl[r] + off
                with q.context():
                    put_bits(q, rbuf[k:k + bitmap_bytes(b - a)], q.boxes[mode.name], a, b)
        return messages, int(scount.sum() - scount[self.me]) + lane_sent


# ---- the engine's part across ranks ---------------------------------------------------------

class Ranks:
    """What an Engine (bsp/engine.py) does across the ranks of `comm` besides what it does in
    one process: exchange plans per view, the ranks' exchange, the votes' Iallreduce, the
    gathered result, the deadline on every wait, the injected faults of the tests. The rank's
    partitions are those of a RankPlan, which must hold every view the algorithm walks
    (partitioners.distributed.plan_ranks builds them)."""

    def __init__(self, comm, plan, timeout=None, lanes=True):
        self.comm = guarded(comm, timeout)
        self.lanes = lanes      # GPU partitions on two ranks exchange device to device
        self.waiter = self.comm.waiter
        self.plan = plan
        self.node_rank, self.node_size = node_place(self.comm)
        self._exchanges = {}
        self._fault = parse_fault(comm.rank)
        self._record = None
        self._gvids = None

    def prepare(self, engine, algorithm):
        missing = sorted({self.plan.canonical_view(v) for v in algorithm.views()
                          if not self.plan.has_view(v)})
        if missing:
            raise ValueError(f"{algorithm.name} walks the view(s) {', '.join(missing)}, which "
                             "the rank plan was not built with (plan_ranks(views=...))")
        try:
            engine._prepare(algorithm)
            failed = None
        except InputError as exc:
            failed = f"rank {self.comm.rank}: {exc}"
        failed = next(filter(None, self.comm.allgather(failed)), None)
        if failed:
            raise InputError(failed)
        for name in algorithm.views():
            self._exchange(name)

    def _exchange(self, view):
        key = self.plan.canonical_view(view)
        if key not in self._exchanges:
            self._exchanges[key] = ExchangePlan(self.comm, self.plan, self.plan.views(key),
                                                lanes=self.lanes)
        return self._exchanges[key]

    @contextlib.contextmanager
    def running(self):
        try:
            yield
        finally:
            self.waiter.step = None

    def superstep(self, step):
        """A superstep starts: its number for the timeout's message, the injected fault."""
        self.waiter.step = step
        if self._fault and self._fault[0] == step:
            inject(self._fault[1], self.comm.rank, step)
        self._sent, self._compute_wall, self._t0 = 0, 0.0, time.perf_counter()

    def computed(self, parts):
        """The rank's compute wall, its GPUs' kernels included."""
        for p in parts:
            p.synchronize()
        self._compute_wall += time.perf_counter() - self._t0

    def record(self, record):
        record.update(rank_compute_s=self._compute_wall, bytes_sent=self._sent, vote_s=0.0)
        self._record = record

    def push(self, parts, host_views, mode, inboxes):
        messages, sent = self._exchange(mode.view).push(parts, host_views, mode, inboxes,
                                                        self.waiter)
        self._sent += sent
        return messages

    def pull(self, parts, host_views, mode, values):
        messages, sent = self._exchange(mode.view).pull(parts, host_views, mode, values,
                                                        self.waiter)
        self._sent += sent
        return messages

    def tally(self, mine):
        """Every rank's tally from this rank's (`mine`, a Vote)."""
        t0 = time.perf_counter()
        counts = np.array([mine.active, mine.edges], dtype=np.int64)
        total = np.empty(2, dtype=np.int64)
        keys = np.array([mine.key], dtype=np.float64)
        smallest = np.empty(1, dtype=np.float64)
        requests = [self.comm.Iallreduce([counts, MPI.INT64_T], [total, MPI.INT64_T], op=MPI.SUM),
                    self.comm.Iallreduce([keys, MPI.DOUBLE], [smallest, MPI.DOUBLE], op=MPI.MIN)]
        if mine.sums:       # every rank runs the same algorithm: as many sums on each
            sums = np.array(mine.sums, dtype=np.float64)
            summed = np.empty_like(sums)
            requests.append(self.comm.Iallreduce([sums, MPI.DOUBLE], [summed, MPI.DOUBLE],
                                                 op=MPI.SUM))
        self.waiter.wait(requests, "the finish vote")
        if self._record is not None:
            self._record["vote_s"] = time.perf_counter() - t0
        return Vote(int(total[0]), int(total[1]), float(smallest[0]),
                    tuple(summed.tolist()) if mine.sums else ())

    def everywhere(self, flag):
        """Whether `flag` holds on every rank (collective)."""
        return bool(self.comm.allreduce(bool(flag), op=MPI.LAND))

    def release(self):
        """Drop the exchange's buffers (Engine.release)."""
        for exchange in self._exchanges.values():
            exchange._buffers.clear()

    @staticmethod
    def collect(engine, algorithm):
        """This rank's values in `local_gvids` order: the algorithm's collect over its
        partitions, renumbered (no array of the whole graph's size)."""
        places = [_Renumbered(p, start) for p, start in zip(
            engine.parts, np.cumsum([0] + [p.n_local for p in engine.parts]))]
        return algorithm.collect(places, engine.local_gvids.size)

    def gathered(self, local_gvids, values):
        """The whole result on rank 0 from every rank's `values` (in its `local_gvids` order),
        None elsewhere. Collective."""
        comm, root = self.comm, self.comm.rank == 0
        if self._gvids is None:     # who holds which vertices, gathered once
            self._counts = np.array(comm.allgather(local_gvids.size), dtype=np.int64)
            self._displs = np.concatenate([[0], np.cumsum(self._counts)[:-1]]).astype(np.int64)
            self._gvids = np.empty(int(self._counts.sum()), np.int64) if root else False
            comm.Gatherv([local_gvids, MPI.INT64_T],
                         [self._gvids, (self._counts, self._displs), MPI.INT64_T] if root
                         else None, root=0)
        values = np.ascontiguousarray(values)
        recv = np.empty(int(self._counts.sum()), dtype=values.dtype) if root else None
        vtype = _mpi_type(values.dtype)
        comm.Gatherv([values, vtype], [recv, (self._counts, self._displs), vtype] if root
                     else None, root=0)
        if not root:
            return None
        out = np.empty(self.plan.graph.n_vertices, dtype=values.dtype)
        out[self._gvids] = recv     # every vertex is some rank's
        return out


class _Renumbered:
    """A partition as `Program.collect` sees it, its vertices numbered by their place in the
    rank's concatenated vertex list (start, start + 1, ...) instead of their global ids."""

    def __init__(self, part, start):
        self._part = part
        self.gvids = np.arange(start, start + part.n_local, dtype=np.int64)

    def __getattr__(self, name):
        return getattr(self._part, name)
