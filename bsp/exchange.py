"""Moving boxes between partitions at the end (push) or start (pull) of a superstep.

Push: each partition's box holds one slot per ghost, grouped by owner. Only the touched slots travel
when few are touched (index + value pairs), otherwise the whole box; the owner folds every peer's
slots into one inbox entry per boundary vertex with the message's combine operator. (TOTEM always
copied whole boxes; its paper names that as a limitation for frontier algorithms such as BFS.)
Boxes and inboxes stay at the identity between supersteps and only what was written is reset, so
with recording modes (the kernels list the slots they touch) a superstep that sends k messages
costs O(k), not O(ghosts).
Pull: each owner's boundary values are copied into the ghost slots of every reader. Values of a
numeric message (PageRank's contributions, BC's backward sums) travel whole: the owner's boundary
array goes to the host once and is gathered into each reader's slots there. Flags (a bool message,
such as bottom-up BFS's "this vertex is in the frontier") travel and stay as bits, as TOTEM's
bitmaps do: the reader's box is a bitmap, bit s for ghost slot s. For each reader the owner
gathers the flags of the ghosts that reader holds, in the reader's slot order (the view's
`peer_pos`, kept on the owner's device), and packs them 8 to a byte on its own device; only those
bytes cross to the host, and (for a GPU reader) back to the reader's device, where they are put
into the reader's bitmap at its slots of that owner: n_ghosts / 8 bytes each way, and the
reader's kernel tests the bits (no flag array is rebuilt).

Between a GPU partition and the host most of a superstep's messages are not copied: the device's
kernels write what it sends into mapped host memory (a push box in one pass that also resets it,
`box_pack`; flags packed to bits) and read what it gets from there (the scatter reads its inbox,
the bitmap put reads the packed bytes), so each costs one kernel and at most one wait. Copies
remain between two devices, for numeric pulls and under MPI, through `to_host`/`to_device`. Every
byte that crosses is counted, the emulated partition's too. The CPU partition's boxes are already
host memory.
"""

from typing import NamedTuple

import numpy as np

from kernels_cpu import boxes as _boxes
from kernels_cpu.chunks import chunk_copy

INDEX_BYTES = 8
SORT_BELOW = 32      # sort a recorded touched list shorter than 1/32 of the box, else scan
_NONE = np.empty(0, dtype=np.int64)


class Inbox(NamedTuple):
    """Messages that arrived for a partition, folded per vertex: `values[i]` for local vertex
    `lvid[i]`. Only the vertices that received something when that is few, else every boundary
    vertex (with the identity where nothing came)."""
    lvid: object
    values: object

    @property
    def size(self):
        return len(self.values)


_EMPTY = Inbox(None, np.empty(0))   # nothing arrived (the engine skips scatter)


def _sparse_pays(n_touched, n_total, itemsize):
    return n_touched * (INDEX_BYTES + itemsize) < n_total * itemsize


def _pack(part, mode, outbox, identity, ordered=True):
    """The box on the host as (indices or None, values, messages, what _reset puts back: the
    device indices, None for the whole box, or _CLEAN): sparse when that is fewer bytes.
    Recording modes list their touched slots; for the others the box is scanned. The indices
    come sorted (split by owner with a binary search) unless not `ordered` (a box whose ghosts
    all have one owner)."""
    k = part.kernels("boxes")
    box = outbox.values
    if mode.records and not ordered:
        return _pack_one_owner(part, k, outbox, identity)
    n = int(outbox.count[0]) if mode.records else box.size
    if n == 0:
        return _NONE, _NONE.astype(box.dtype), 0, None
    if mode.records and not _sparse_pays(n, box.size, box.dtype.itemsize):
        return None, part.to_host(box), n, None     # the recorded count says: whole box
    if n * SORT_BELOW < box.size:
        touched = k.box_sort(outbox.touched[:n]) if ordered else outbox.touched[:n]
    else:       # many: a scan of the box finds them in order faster than a sort
        touched = k.box_touched(box, identity)
        n = int(touched.size)
    if touched is not None and _sparse_pays(n, box.size, box.dtype.itemsize):
        vals = part.xp.empty(n, dtype=box.dtype)
        k.box_gather(box, touched, vals)
        # (the arrays hold until the partition's next pack: the exchange is done with them)
        return (*part.to_host_all(touched, vals, reuse="pack"), n, touched)
    return None, part.to_host(box), n, None


def _pack_one_owner(part, k, outbox, identity):
    """_pack of a recording box whose ghosts have one owner (so it goes to one partition): one
    pass writes the touched slots' pairs, or the whole box, into a kept buffer and resets what
    it read (kernels_cpu.boxes.box_pack). A device writes it in mapped host memory: one kernel,
    one wait, no copy."""
    box = outbox.values
    size, itemsize = box.size, box.dtype.itemsize
    (idx, vals, n_out), dev = part.mapped_all((size, np.int64), (size, box.dtype),
                                              (1, np.int64), reuse="pack")
    k.box_pack(box, outbox.touched, outbox.count, identity, *dev)
    part.synchronize()
    n = int(n_out[0])
    sparse = _sparse_pays(n, size, itemsize)
    if part.kind == "gpu":
        part.d2h_bytes += n * (INDEX_BYTES + itemsize) if sparse else box.nbytes
    return (idx[:n], vals[:n], n, _CLEAN) if sparse else (None, vals, n, _CLEAN)


_CLEAN = "clean"        # _pack's word that the box is back at the identity already


def _reset(part, outbox, n, touched, identity):
    """Put the box back to the identity after the exchange: the slots sent, or all of it."""
    if n == 0 or touched is _CLEAN:
        return
    k = part.kernels("boxes")
    if touched is None:
        k.box_fill(outbox.values, identity)
    else:
        k.box_set(outbox.values, touched, identity)
    k.box_fill(outbox.count, 0)


class _HostInbox:
    """A host inbox kept at the identity between supersteps: after a sparse delivery only the
    positions that were written are reset."""

    def __init__(self, size, dtype, identity, values=None, part=None, key=None):
        """A new inbox (in `part`'s mapped memory under `key` when a partition is given, so that
        its kernels read it in place; else plain host memory), or with `values` one over part of
        another's (taken as written all over: its delivery scans it)."""
        self.device = None      # the device's view of the values, when it has one
        if values is None:
            if part is None:
                values = np.empty(size, dtype)
            else:
                (values,), (self.device,) = part.mapped_all((size, dtype), reuse=key)
            _boxes.box_fill(values, identity)
        self.values = values
        self.identity = identity
        self.dirty = False      # delivered whole: reset before the next use
        self.dense = False      # a peer sent its whole box this superstep
        self.least = 0          # entries written at least (from the dense peers' counts)
        self.first = []         # positions written first this superstep, per sparse peer


def _inbox(buffers, key, size, dtype, identity, part=None):
    buf = buffers.get(key)
    if buf is None or buf.values.size != size or buf.values.dtype != dtype:
        buf = buffers[key] = _HostInbox(size, dtype, identity, part=part, key=("inbox",) + key)
    elif buf.dirty or buf.identity != identity:    # another algorithm's mode of the same name
        _boxes.box_fill(buf.values, identity)
        buf.identity = identity
    buf.dirty = buf.dense = False
    buf.least = 0
    buf.first = []
    return buf


def direct_pairs(parts):
    """Whether this process's GPU partitions exchange device to device (`send`: a copy between
    two GPUs, peer to peer where the hardware allows): when it has two or more of them, real or
    emulated. Pairs with the CPU partition go through mapped host memory."""
    devices = [p for p in parts if p.kind == "gpu"]
    if len(devices) < 2:
        return False
    if devices[0].device == "gpu":
        from .gpu import enable_peer_access
        enable_peer_access(sorted({p.device_id for p in devices}))
    return True


def _peers(p, parts, view, direct):
    """The partitions `p` sends its box to device to device: other GPU partitions it holds
    ghosts of, when the exchange is direct."""
    if not direct or p.kind != "gpu":
        return []
    return [q for q in parts if q.kind == "gpu" and q is not p
            and view.ghost_ptr[q.pid + 1] > view.ghost_ptr[q.pid]]


def exchange_push(parts, host_views, mode, buffers):
    """Fold every partition's box into the owners' inboxes and reset the boxes to the
    identity; returns the number of messages known now (`settle` adds the rest once the
    partitions are synchronised). `buffers` keeps the host inboxes between supersteps. A
    partition that one peer alone sent messages to gets them as they came (a peer's slots stand
    for distinct vertices, so there is nothing to fold): only their local ids are looked up.
    Between GPU partitions (`direct_pairs`) nothing waits for the host: the sender splits its
    box by owner on its device (`box_split`: touched slots as pairs, or the box whole when that
    is fewer bytes, decided on the device) and each GPU owner folds its part into an inbox on
    its own device, reading the sender's memory over the link (`box_fold_peer`)."""
    if all(host_views[p.pid].n_ghosts == 0 for p in parts):    # no partition sends anything
        for p in parts:
            p.inboxes[mode.name] = _EMPTY
        return 0
    msg = mode.message
    identity = msg.dtype.type(msg.identity)
    direct = direct_pairs(parts)
    sent, pieces, split, known = [], [[] for _ in host_views], [], 0
    arrived = {q.pid: [] for q in parts}       # device to device: what each receiver folds
    for p in parts:
        view = host_views[p.pid]
        if view.n_ghosts == 0:
            continue
        outbox = p.outboxes[mode.name]
        owners = view.owners
        peers = _peers(p, parts, view, direct)
        skip = {p.pid, *(r.pid for r in peers)}
        ptr = view.ghost_ptr
        via_host = [q for q in range(len(host_views)) if q not in skip and ptr[q + 1] > ptr[q]]
        n, touched = 0, None
        if via_host:
            with p.context():
                idx, vals, n, touched = _pack(p, mode, outbox, identity, owners > 1)
            known += n
            if not peers:
                sent.append((p, outbox, n, touched))
        if peers:
            with p.context():
                out = _split(p, mode, outbox, view, identity)
                mark = p.event()
            split.append((p, outbox, out, peers, not via_host))
            for q in peers:
                arrived[q.pid].append((p.pid, mark, *out, int(view.ghost_ptr[q.pid]),
                                       int(view.ghost_ptr[q.pid + 1])))
        live = p.kind == "cpu" and touched is None      # vals is the box itself, reset below
        for q in via_host if n else ():
            a, b = int(view.ghost_ptr[q]), int(view.ghost_ptr[q + 1])
            if idx is None:         # of the box's n touched slots, at least this many in [a, b)
                pieces[q].append((p.pid, a, None, vals[a:b], n - (view.n_ghosts - (b - a)),
                                  live))
                continue
            lo, hi = np.searchsorted(idx, (a, b)) if owners > 1 else (0, idx.size)
            if lo < hi:
                pieces[q].append((p.pid, a, idx[lo:hi], vals[lo:hi], 0, False))
    folded = {}
    for q in parts:
        got, view = pieces[q.pid], host_views[q.pid]
        with q.context():
            if direct and q.kind == "gpu":
                inbox = _fold_direct(q, mode, view, arrived[q.pid], got, buffers, identity)
                folded[q.pid] = q.event()
            elif len(got) == 1 and not got[0][5]:
                inbox = _deliver_one(q, view, mode.view, *got[0][:4])
            else:
                inbox = _deliver(q, view, _fold(buffers, mode, q, view, got), identity,
                                 mode.view)
        q.inboxes[mode.name] = inbox
    for p, outbox, n, touched in sent:      # after the folds: a CPU's whole box is its values
        with p.context():
            _reset(p, outbox, n, touched, identity)
    pending = buffers.setdefault(PENDING, [])
    for p, outbox, (_, _, _, counts), peers, unknown in split:
        with p.context():
            for q in peers:         # the box read whole goes back to the identity after that
                p.wait(folded[q.pid])
            p.kernels("boxes").box_unsplit(outbox.values, counts, identity)
            if unknown:
                pending.append((p, p.peek(counts, mode.name)))
    return known


PENDING = ("pending",)      # buffers' key: the direct senders' counts, read by `settle`


def settle(parts, buffers):
    """The messages of the last superstep's direct sends, counted on the devices: read once
    their partitions are synchronised."""
    total = 0
    for p, counts in buffers.pop(PENDING, ()):
        p.synchronize()
        total += int(counts[-1])
    return total


def _split(p, mode, outbox, view, identity):
    """Split p's box by owner on its device for peers that read it in place (`box_split`), or
    (a mode that does not record its touched slots) leave it whole; returns (slots, values, box,
    counts), the arrays the peers read."""
    box = outbox.values
    k = p.kernels("boxes")
    parts = len(view.ghost_ptr) - 1
    idx = p.held(("split slots", mode.name), box.size, np.int64)
    vals = p.held(("split values", mode.name), box.size, box.dtype)
    counts = p.held(("split counts", mode.name), parts + 1, np.int64)
    if mode.records:
        k.box_split(box, outbox.touched, outbox.count, p.views[mode.view].ghost_ptr, identity,
                    idx, vals, counts)
    else:
        k.box_fill(counts[:parts], -1)
        k.box_fill(counts[parts:], box.size)
        k.box_fill(outbox.count, 0)
    return idx, vals, box, counts


def _fold_direct(q, mode, view, arrived, got, buffers, identity):
    """The inbox of a GPU partition under direct pairs (`device_inbox`): what its GPU peers
    split for it (`arrived`: read from their memory once their marks are passed) and what came
    through the host (`got`, folded on the host first)."""
    k = q.kernels("boxes")
    dview = q.views[mode.view]

    def fold(inbox):
        for sender, mark, idx, vals, box, counts, a, b in arrived:
            q.wait(mark)
            k.box_fold_peer(inbox, dview.peer_pos[sender], idx, vals, box, counts, q.pid, a, b,
                            mode.message.combine)
    return device_inbox(q, mode, view, _fold(buffers, mode, q, view, got) if got else None,
                        identity, fold)


def device_inbox(q, mode, view, hin, identity, fold):
    """A GPU partition's inbox as an array over its boundary vertices on its device, at the
    identity, into which `fold(inbox)` folds what came device to device, and then the host
    inbox `hin` (what came through the host, folded there; or None), read from mapped
    memory."""
    msg = mode.message
    k = q.kernels("boxes")
    dview = q.views[mode.view]
    inbox = q.held(("inbox", mode.name), view.boundary_lvid.size, msg.dtype)
    k.box_fill(inbox, identity)
    fold(inbox)
    if hin is not None:
        written = _written(hin, identity)
        if written is None:         # the whole host inbox, read in place from mapped memory
            hin.dirty = True
            _crossed(q, hin.values.nbytes)
            k.box_fold(inbox, dview.iota, hin.device if hin.device is not None
                       else q.to_device(hin.values), msg.combine)
        elif written.size:
            (pos, vals), dev = q.mapped_all((written.size, np.int64),
                                            (written.size, msg.dtype), reuse="deliver")
            pos[:] = written
            _boxes.box_gather(hin.values, written, vals)
            _boxes.box_set(hin.values, written, identity)
            _crossed(q, pos.nbytes + vals.nbytes)
            k.box_fold(inbox, dev[0], dev[1], msg.combine)
    return Inbox(dview.boundary_lvid, inbox)


def _fold(buffers, mode, part, view, pieces):
    """The partition's host inbox with every peer's `pieces` (peer, first slot, slots or None
    for a whole box, values, least written, whether the values are the peer's live box) folded
    in by the message's combine."""
    msg = mode.message
    identity = msg.dtype.type(msg.identity)
    combine = _boxes.COMBINE[msg.combine]
    inbox = _inbox(buffers, (mode.name, part.pid), view.boundary_lvid.size, msg.dtype, identity,
                   part)
    for peer, a, idx, vals, least, _ in pieces:
        pos = view.peer_pos[peer]
        if idx is None:
            combine(inbox.values, pos, vals)
            inbox.dense = True
            inbox.least = max(inbox.least, least)
            continue
        at = np.empty(idx.size, dtype=np.int64)
        _boxes.box_positions(pos, idx, a, at)
        if not inbox.dense:
            inbox.first.append(_boxes.box_first(inbox.values, at, identity))
        combine(inbox.values, at, vals)
    return inbox


def _crossed(part, nbytes):
    """Count `nbytes` read by a device partition's kernels from mapped host memory."""
    if part.kind == "gpu":
        part.h2d_bytes += nbytes


def _deliver_one(part, view, view_name, peer, a, idx, vals):
    """The inbox of a partition whose messages all came from `peer`: its slots `idx` (numbered
    from `a`), or all of its slots in order (idx None), with `vals` (a copy of the peer's box:
    _pack_one_owner's). A peer's slots stand for distinct vertices, so nothing is folded: the
    entries go as they are with their local ids, a device partition's into mapped memory that
    its scatter reads once."""
    if idx is None:
        if part.kind == "cpu":
            return Inbox(view.peer_lvid(peer), vals)
        (out,), (dev,) = part.mapped_all((vals.size, vals.dtype), reuse="deliver")
        chunk_copy(vals, 0, vals.size, out)
        _crossed(part, vals.nbytes)
        return Inbox(part.views[view_name].peer_lvid[peer], dev)
    if part.kind == "cpu":
        (lvid,), _ = part.mapped_all((idx.size, np.int64), reuse="deliver")
        _boxes.box_positions(view.peer_lvid(peer), idx, a, lvid)
        return Inbox(lvid, vals)
    (lvid, out), dev = part.mapped_all((idx.size, np.int64), (idx.size, vals.dtype),
                                       reuse="deliver")
    _boxes.box_place(view.peer_lvid(peer), idx, a, vals, lvid, out)
    _crossed(part, lvid.nbytes + out.nbytes)
    return Inbox(*dev)


def _written(inbox, identity):
    """The positions of a host inbox that messages were written to, when so few that listing
    them pays (else None: take it whole)."""
    size, itemsize = inbox.values.size, inbox.values.dtype.itemsize
    if inbox.dense and not _sparse_pays(inbox.least, size, itemsize):
        return None
    if inbox.dense:
        written = _boxes.box_touched(inbox.values, identity)
    elif not inbox.first:
        return np.empty(0, np.int64)
    else:
        written = np.concatenate(inbox.first)
    return written if _sparse_pays(written.size, size, itemsize) else None


def _deliver(part, view, inbox, identity, view_name):
    """Put a host inbox where the partition's kernels read it: only the written entries (with
    their local ids) when few are written, else the whole inbox beside the boundary list
    (without a scan when the dense peers' counts already say so). A device partition reads
    them from mapped host memory."""
    written = _written(inbox, identity)
    if written is not None and not written.size:
        return _EMPTY
    if written is not None:
        (lvid, vals), dev = part.mapped_all((written.size, np.int64),
                                            (written.size, inbox.values.dtype), reuse="deliver")
        _boxes.box_gather(view.boundary_lvid, written, lvid)
        _boxes.box_gather(inbox.values, written, vals)
        _boxes.box_set(inbox.values, written, identity)
        _crossed(part, lvid.nbytes + vals.nbytes)
        return Inbox(*dev)
    inbox.dirty = True      # the device reads it (or, on the CPU, it is the inbox itself)
    if inbox.device is None:
        return Inbox(part.views[view_name].boundary_lvid, part.to_device(inbox.values))
    _crossed(part, inbox.values.nbytes)
    return Inbox(part.views[view_name].boundary_lvid, inbox.device)


def exchange_pull(parts, host_views, mode, values, readers=None):
    """Copy each owner's boundary `values` (device arrays, per pid) into its readers' ghost slots
    (`part.boxes[mode.name]`); flags (a bool message) travel packed to bits into the readers'
    bitmaps. `readers[i]` False skips parts[i] as a reader (its compute will not read its
    ghosts); an owner none of whose readers reads may have None as its values. Between GPU
    partitions (`direct_pairs`) the owner gathers the reader's values on its device and sends
    them into the reader's ghost slots."""
    readers = readers or [True] * len(parts)
    direct = direct_pairs(parts)
    if mode.message.dtype == np.bool_:
        return pull_bits_local(parts, host_views, mode, values, readers, direct)
    peer = [[direct and p.kind == q.kind == "gpu" and p is not q for q in parts] for p in parts]
    host_vals = [p.to_host(values[i])
                 if values[i] is not None and host_views[p.pid].boundary_lvid.size and any(
                     want and not peer[i][j] and host_views[q.pid].ghost_ptr[p.pid + 1]
                     > host_views[q.pid].ghost_ptr[p.pid]
                     for j, (q, want) in enumerate(zip(parts, readers))) else None
                 for i, p in enumerate(parts)]
    if direct:
        _pull_direct(parts, host_views, mode, values, readers, peer)
    messages = 0
    for j, (q, wanted) in enumerate(zip(parts, readers)):
        view = host_views[q.pid]
        if view.n_ghosts == 0 or not wanted:
            continue
        box = q.boxes[mode.name]
        ghosts = box if q.device == "cpu" else \
            q.pinned_all((view.n_ghosts, box.dtype), reuse="ghosts")[0]
        runs = []
        for i, p in enumerate(parts):
            a, b = int(view.ghost_ptr[p.pid]), int(view.ghost_ptr[p.pid + 1])
            if a == b or peer[i][j]:
                continue
            _boxes.box_gather(host_vals[i], host_views[p.pid].peer_pos[q.pid], ghosts[a:b])
            runs.append((a, b))
        messages += view.n_ghosts
        if ghosts is not box and runs:
            with q.context():
                put_runs(q, box, ghosts, runs)
    return messages


def put_runs(part, box, ghosts, runs):
    """The runs a..b-1 of host array `ghosts` into the device box `box` (one copy when they
    cover it)."""
    if runs == [(0, box.size)]:
        box[:] = part.to_device(ghosts)
        return
    for a, b in runs:
        box[a:b] = part.to_device(ghosts[a:b])


def _pull_direct(parts, host_views, mode, values, readers, peer):
    """The GPU to GPU pairs of a pull: each owner gathers the values of all its GPU readers in
    one pass (their positions, `DeviceView.reader_positions`) and sends each reader its run of
    ghost slots, once the reader's last reads of them are done; the readers' next kernels wait
    for the owners' marks."""
    wanted = [j for j, (q, want) in enumerate(zip(parts, readers)) if want and q.kind == "gpu"]
    free = {j: parts[j].event() for j in wanted}
    marks = []
    for i, p in enumerate(parts):
        runs = [(j, int(host_views[parts[j].pid].ghost_ptr[p.pid]),
                 int(host_views[parts[j].pid].ghost_ptr[p.pid + 1])) for j in wanted
                if peer[i][j]]
        runs = [(j, a, b) for j, a, b in runs if b > a]
        if not runs:
            continue
        with p.context():
            pos, offsets = p.views[mode.view].reader_positions(
                tuple(parts[j].pid for j, _, _ in runs))
            send = p.held(("pull to",), pos.size, values[i].dtype)
            p.kernels("boxes").box_gather(values[i], pos, send)
            for (j, a, b), o in zip(runs, offsets):
                q = parts[j]
                p.wait(free[j])
                p.send(q, q.boxes[mode.name][a:b], send[o:o + b - a])
            marks.append((p.event(), [j for j, _, _ in runs]))
    for mark, readers_of in marks:
        for j in readers_of:
            parts[j].wait(mark)


def pack_bits(part, view_name, flags, reader):
    """Owner side of a pull of flags: the flags (`flags`: one per boundary vertex, on the
    partition's device) of the ghosts partition `reader` holds of this one, in its slot order,
    packed 8 to a byte on the device; returns the bytes on the host (a device partition writes
    them into mapped host memory, kept per reader: they hold until its next pack for that
    reader)."""
    pos = part.views[view_name].peer_pos[reader]
    (host,), (dev,) = part.mapped_all((bitmap_bytes(pos.size), np.uint8), reuse=("bits", reader))
    part.kernels("boxes").box_pack_bits(flags, pos, dev)
    if part.kind == "gpu":
        part.synchronize()
        part.d2h_bytes += host.nbytes
    return host


def put_bits(part, packed, bits, a, b):
    """Reader side: `packed` (host bytes from pack_bits) into bits a..b-1 of the reader's bitmap
    `bits` (its box, on its device); a device partition gets the bytes, not flags."""
    part.kernels("boxes").box_put_bits(part.to_device(packed), bits, a, b)


def bitmap_bytes(n):
    """Bytes of a pull box of `n` flags (one bit each)."""
    return (n + 7) // 8


def pull_bits_local(parts, host_views, mode, values, readers=None, direct=False):
    """exchange_pull for flags between the partitions of this process (`values[i]` is
    parts[i]'s): per (owner, reader) pair the packed bits of the reader's ghost slots from that
    owner. A device owner writes them into mapped host memory, a host owner into the reader's,
    where the reader's kernel reads them: no copy, except between two devices; a host reader
    whose ghosts all have one device owner takes that owner's bytes as its bitmap. With
    `direct` pairs, a GPU owner packs them on its device and sends them to a GPU reader's.
    Returns the number of ghost slots the readers hold (the messages)."""
    messages = 0
    for q, wanted in zip(parts, readers or [True] * len(parts)):
        view = host_views[q.pid]
        if view.n_ghosts == 0 or not wanted:
            continue
        box = q.boxes[mode.name]
        free = q.event() if direct else None
        for i, p in enumerate(parts):
            a, b = int(view.ghost_ptr[p.pid]), int(view.ghost_ptr[p.pid + 1])
            if a == b:
                continue
            if direct and p.kind == q.kind == "gpu" and p is not q:
                pos = p.views[mode.view].peer_pos[q.pid]
                with q.context():
                    got = q.held(("bits from", p.pid), bitmap_bytes(pos.size), np.uint8)
                with p.context():
                    packed = p.held(("bits to", q.pid), bitmap_bytes(pos.size), np.uint8)
                    p.kernels("boxes").box_pack_bits(values[i], pos, packed)
                    p.wait(free)
                    p.send(q, got, packed)
                    mark = p.event()
                with q.context():
                    q.wait(mark)
                    q.kernels("boxes").box_put_bits(got, box, a, b)
                continue
            if p.kind == "gpu":
                with p.context():
                    packed = pack_bits(p, mode.view, values[i], q.pid)
                if q.kind == "cpu" and (a, b) == (0, view.n_ghosts):
                    # every ghost slot is this owner's: the packed bytes are the host reader's
                    # bitmap as they are (they hold until the owner packs for it again)
                    box = q.boxes[mode.name] = packed
                    continue
                with q.context():
                    put_bits(q, packed, box, a, b)
                continue
            # a host owner packs into the reader's mapped memory, where its kernel reads them
            (packed,), (dev,) = q.mapped_all((bitmap_bytes(b - a), np.uint8),
                                             reuse=("bits from", p.pid))
            p.kernels("boxes").box_pack_bits(values[i], p.views[mode.view].peer_pos[q.pid],
                                             packed)
            with q.context():
                q.kernels("boxes").box_put_bits(dev, box, a, b)
            _crossed(q, packed.nbytes)
        messages += view.n_ghosts
    return messages
