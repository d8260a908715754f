"""What the pull exchange moves: flags (a bool message, bottom-up BFS's "this ghost is in the
frontier") travel packed 8 to a byte between a device partition and the host, other values
(PageRank's float contributions) travel whole; and the kernels that pack flags and put them into
a reader's bitmap, CPU and CUDA twins, against NumPy's packbits. Byte counts are the partitions'
own counters (`h2d_bytes`, `d2h_bytes`), which count every copy to and from an emulated GPU
partition."""

import numpy as np
import pytest

import totem_py
from bsp import Engine, Message, Mode
from bsp.exchange import exchange_push, settle
from partitioners import partition
from totem_py.algorithms import bfs, pagerank
from totem_py.algorithms import BFS, PageRank
from totem_py.harness import default_source


class CountingEngine(Engine):
    """An Engine that records, per pull exchange, the bytes copied to and from the devices and
    the pids of the partitions that read their ghosts."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pulls = []
        self.peers = []
        self.readers = []

    def _exchange_pull(self, host_views, mode, values, readers):
        before = sum(p.h2d_bytes + p.d2h_bytes for p in self.parts)
        peer = sum(p.peer_bytes for p in self.parts)
        messages = super()._exchange_pull(host_views, mode, values, readers)
        self.pulls.append(sum(p.h2d_bytes + p.d2h_bytes for p in self.parts) - before)
        self.peers.append(sum(p.peer_bytes for p in self.parts) - peer)
        self.readers.append({p.pid for p, r in zip(self.parts, readers) if r})
        return messages


def pairs(plan, view):
    """(owner pid, reader pid, ghosts) for every pair where the reader holds ghosts of the
    owner."""
    out = []
    for q, v in enumerate(plan.views(view)):
        for p in range(plan.n_partitions):
            n = int(v.ghost_ptr[p + 1] - v.ghost_ptr[p])
            if n:
                out.append((p, q, n))
    return out


@pytest.fixture(scope="module")
def graph():
    return totem_py.generate("rmat:13", seed=3)


@pytest.mark.parametrize("strategy,share,gpus", [("HIGH", 0.5, 1), ("HIGH", 0.3, 2),
                                                 ("RAND", 0.5, 2)])
def test_hybrid_bfs_moves_frontier_bits(graph, strategy, share, gpus):
    """Every bottom-up step of a hybrid BFS on emulated GPUs copies, per (owner, reader) pair, the
    reader's ghosts / 8 bytes (rounded up) out of a GPU owner and into a GPU reader, nothing
    else (between two GPUs: once, device to device), and the levels are the reference's. A reader none of whose rows with in-edges is
    unvisited reads no ghosts and gets none; the others do."""
    source = default_source(graph)
    plan = partition(graph, strategy, share, gpus, seed=1)
    assert plan.kinds.count("gpu") == gpus and "cpu" in plan.kinds
    engine = CountingEngine(plan, "emulated")
    levels, records = engine.run(BFS(source))
    assert np.array_equal(levels, bfs.levels(graph, source))
    assert len(engine.pulls) == sum(r["mode"] == "pull" for r in records) >= 2
    for step, readers in enumerate(engine.readers):
        depth = [r["step"] for r in records if r["mode"] == "pull"][step]
        for q, v in enumerate(plan.views("in")):
            rows = np.flatnonzero(np.diff(v.indptr) > 0)
            waiting = np.count_nonzero(levels[plan.gvids[q][rows]] > depth)
            waiting += np.count_nonzero(levels[plan.gvids[q][rows]] < 0)
            assert (q in readers) == (waiting > 0)
    def crossings(p, q):        # through host memory
        both = plan.kinds[p] == plan.kinds[q] == "gpu"
        return 0 if both else (plan.kinds[p] == "gpu") + (plan.kinds[q] == "gpu")

    flags, bits = 0, 0
    for p, q, n in pairs(plan, "in"):
        flags += n * crossings(p, q)
        bits += (n + 7) // 8 * crossings(p, q)
    assert flags > 1000          # enough ghosts for the count to mean something
    assert engine.pulls[0] == bits      # the first bottom-up step: every reader waits
    for moved, peer, readers in zip(engine.pulls, engine.peers, engine.readers):
        assert moved == sum((n + 7) // 8 * crossings(p, q)
                            for p, q, n in pairs(plan, "in") if q in readers)
        assert peer == sum((n + 7) // 8 for p, q, n in pairs(plan, "in")
                           if q in readers and not crossings(p, q) and p != q)
    # one bit per ghost slot that crosses the bus, plus at most one byte of padding per crossing
    # (the int32 levels this exchange moved before were 32 bits per slot)
    assert flags / 8 <= bits <= flags / 8 + 2 * len(pairs(plan, "in"))


@pytest.mark.parametrize("records", [True, False])
@pytest.mark.parametrize("touched", [0.002, 0.05, 0.9])
@pytest.mark.parametrize("strategy,share,gpus", [("HIGH", 0.5, 1), ("RAND", 0.4, 2)])
def test_push_delivers_each_vertex_its_folded_messages(graph, strategy, share, gpus, touched,
                                                       records):
    """Random messages in every partition's push box (a few slots: each receiver of a 2-way
    plan has one sender, whose messages go as they are; most slots: whole boxes, folded on the
    host; 3 partitions: folded from two senders) arrive as one inbox entry per receiving vertex
    holding the min of what was sent to it, and every box is back at the identity."""
    plan = partition(graph, strategy, share, gpus, seed=1)
    mode = Mode("push", "out", "push", Message(np.int32, "min", 1 << 30), records=records)
    engine = Engine(plan, "emulated")
    views = plan.views("out")
    rng = np.random.default_rng(int(touched * 1000) + gpus)
    want, sent = {}, 0
    for part in engine.parts:
        part.view("out")
        Engine._place_box(part, mode)
        box = part.outboxes["push"]
        slots = np.flatnonzero(rng.random(box.values.size) < touched)
        box.values[slots] = rng.integers(0, 1000, slots.size)
        box.touched[:slots.size] = rng.permutation(slots)
        box.count[0] = slots.size
        sent += slots.size
        for g, x in zip(views[part.pid].ghost_gvid[slots], box.values[slots]):
            want[g] = min(want.get(g, x), x)
    buffers = {}
    messages = exchange_push(engine.parts, views, mode, buffers)
    assert messages + settle(engine.parts, buffers) == sent
    got = {}
    for part in engine.parts:
        inbox = part.inboxes["push"]
        if inbox.size:
            lvid = np.asarray(inbox.lvid)
            assert np.unique(lvid).size == lvid.size
            for lv, x in zip(lvid, np.asarray(inbox.values)):
                if x != 1 << 30:
                    got[int(plan.gvids[part.pid][lv])] = x
        box = part.outboxes["push"]
        assert np.all(box.values == 1 << 30) and box.count[0] == 0
    assert got == {int(g): x for g, x in want.items()}
    assert len(want) > 0


def test_pagerank_pull_still_moves_values(graph):
    """A float message keeps the value path: each GPU owner's boundary contributions out, each
    GPU reader's ghosts in, 4 bytes each."""
    plan = partition(graph, "HIGH", 0.5, 1, seed=1)
    engine = CountingEngine(plan, "emulated")
    ranks, _ = engine.run(PageRank(3))
    assert np.abs(ranks - pagerank.rounds(graph, 3)).sum() <= 1e-4
    views = plan.views("in")
    want = sum(4 * (views[p].boundary_lvid.size + views[p].n_ghosts)
               for p, kind in enumerate(plan.kinds) if kind == "gpu")
    assert engine.pulls == [want] * 3


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 63, 64, 65, 1000, 100_003])
@pytest.mark.parametrize("a", [0, 3, 8, 13])
def test_pack_put_bits(twins, n, a):
    """box_pack_bits gathers flags by position and packs them as np.packbits(bitorder="little")
    does (flag i in bit i & 7 of byte i >> 3, zero padding); box_put_bits writes them at bits
    a..a+n-1 of a reader's bitmap, at any bit offset, and leaves every other bit as it was."""
    rng = np.random.default_rng(n + a)
    flags = rng.random(n + 40) < 0.3
    pos = rng.permutation(n + 40)[:n].astype(np.int64)
    packed = twins.put(np.zeros((n + 7) // 8, np.uint8))
    twins.boxes.box_pack_bits(twins.put(flags), twins.put(pos), packed)
    assert np.array_equal(twins.get(packed), np.packbits(flags[pos], bitorder="little"))
    for fill in (0x00, 0xFF):
        size = a + n + 11
        bits = twins.put(np.full((size + 7) // 8, fill, np.uint8))
        twins.boxes.box_put_bits(packed, bits, a, a + n)
        got = np.unpackbits(twins.get(bits), bitorder="little")[:size].astype(bool)
        assert np.array_equal(got[a:a + n], flags[pos])
        assert (got[:a] == bool(fill)).all() and (got[a + n:] == bool(fill)).all()



@pytest.mark.parametrize("dtype", [np.int32, np.float64])
@pytest.mark.parametrize("size, n", [(1000, 0), (1000, 10), (1000, 600), (1000, 1000),
                                     (100_000, 5000), (100_000, 90_000)])
def test_box_pack(twins, dtype, size, n):
    """box_pack writes the n recorded slots' (slot, value) pairs when they are fewer bytes than
    the box, else the whole box; n_out says n; the box and its count go back to the identity
    and 0."""
    identity = np.iinfo(dtype).max if dtype == np.int32 else np.inf
    rng = np.random.default_rng(size + n)
    box = np.full(size, identity, dtype)
    touched = np.zeros(size, np.int64)
    touched[:n] = rng.permutation(size)[:n]
    box[touched[:n]] = rng.integers(0, 100, n)
    d_box, count, n_out = twins.put(box), twins.put(np.array([n])), twins.put(np.array([-1]))
    idx, vals = twins.put(np.full(size, -1, np.int64)), twins.put(np.zeros(size, dtype))
    twins.boxes.box_pack(d_box, twins.put(touched), count, identity, idx, vals, n_out)
    assert twins.get(n_out)[0] == n and twins.get(count)[0] == 0
    assert (twins.get(d_box) == identity).all()
    itemsize = np.dtype(dtype).itemsize
    if n * (8 + itemsize) < size * itemsize:
        assert np.array_equal(twins.get(idx)[:n], touched[:n])
        assert np.array_equal(twins.get(vals)[:n], box[touched[:n]])
    else:
        assert np.array_equal(twins.get(vals), box)
