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

Copies between a GPU (or emulated GPU) partition and the host go through `to_host`/`to_device`, so
the bytes are counted where the real device transfers happen. The CPU partition's boxes are already
host memory.
"""

from typing import NamedTuple

import numpy as np

from kernels_cpu import boxes as _boxes

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
    """The box on the host as (indices or None, values, messages, device indices or None):
    sparse when that is fewer bytes. Recording modes list their touched slots; for the others
    the box is scanned. The indices come sorted (split by owner with a binary search) unless
    not `ordered` (a box whose ghosts all have one owner)."""
    k = part.kernels("boxes")
    box = outbox.values
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


def _reset(part, outbox, n, touched, identity):
    """Put the box back to the identity after the exchange: the slots sent, or all of it."""
    if n == 0:
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

    def __init__(self, size, dtype, identity, values=None, alloc=np.empty):
        """A new inbox (its memory from `alloc(size, dtype)`: pinned for a GPU partition's, so
        that its delivery copies straight from it), or with `values` one over part of another's
        (taken as written all over: its delivery scans it)."""
        if values is None:
            values = alloc(size, dtype)
            _boxes.box_fill(values, identity)
        self.values = values
        self.dirty = False      # delivered whole: reset before the next use
        self.dense = False      # a peer sent its whole box this superstep
        self.least = 0          # entries written at least (from the dense peers' counts)
        self.first = []         # positions written first this superstep, per sparse peer


def _inbox(buffers, key, size, dtype, identity, alloc=np.empty):
    buf = buffers.get(key)
    if buf is None or buf.values.size != size or buf.values.dtype != dtype:
        buf = buffers[key] = _HostInbox(size, dtype, identity, alloc=alloc)
    elif buf.dirty:
        _boxes.box_fill(buf.values, identity)
    buf.dirty = buf.dense = False
    buf.least = 0
    buf.first = []
    return buf


def exchange_push(parts, host_views, mode, buffers):
    """Fold every partition's box into the owners' inboxes and reset the boxes to the
    identity; returns the number of messages. `buffers` keeps the host inboxes between
    supersteps. A partition that one peer alone sent messages to, few of them, gets them as
    they came (a peer's slots stand for distinct vertices, so there is nothing to fold): only
    their local ids are looked up."""
    msg = mode.message
    identity = msg.dtype.type(msg.identity)
    sent, pieces = [], [[] for _ in host_views]
    for p in parts:
        view = host_views[p.pid]
        if view.n_ghosts == 0:
            continue
        outbox = p.outboxes[mode.name]
        owners = np.count_nonzero(np.diff(view.ghost_ptr))
        with p.context():
            idx, vals, n, touched = _pack(p, mode, outbox, identity, owners > 1)
        sent.append((p, outbox, n, touched))
        for q in range(len(host_views)) if n else ():
            a, b = int(view.ghost_ptr[q]), int(view.ghost_ptr[q + 1])
            if a == b:
                continue
            if idx is None:         # of the box's n touched slots, at least this many in [a, b)
                pieces[q].append((p.pid, a, None, vals[a:b], n - (view.n_ghosts - (b - a))))
                continue
            lo, hi = np.searchsorted(idx, (a, b)) if owners > 1 else (0, idx.size)
            if lo < hi:
                pieces[q].append((p.pid, a, idx[lo:hi], vals[lo:hi], 0))
    for q in parts:
        got, view = pieces[q.pid], host_views[q.pid]
        with q.context():
            if len(got) == 1 and got[0][2] is not None:
                inbox = _deliver_one(q, view, *got[0][:4])
            else:
                inbox = _deliver(q, view, _fold(buffers, mode, q, view, got), identity,
                                 mode.view)
        q.inboxes[mode.name] = inbox
    for p, outbox, n, touched in sent:      # after the folds: a CPU's whole box is its values
        with p.context():
            _reset(p, outbox, n, touched, identity)
    return sum(n for _, _, n, _ in sent)


def _fold(buffers, mode, part, view, pieces):
    """The partition's host inbox with every peer's `pieces` (peer, first slot, slots or None
    for a whole box, values, least written) folded in by the message's combine."""
    msg = mode.message
    identity = msg.dtype.type(msg.identity)
    combine = _boxes.COMBINE[msg.combine]
    inbox = _inbox(buffers, (mode.name, part.pid), view.boundary_lvid.size, msg.dtype, identity,
                   part.pinned)
    for peer, a, idx, vals, least in pieces:
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


def _deliver_one(part, view, peer, a, idx, vals):
    """The inbox of a partition whose messages all came from `peer`'s slots `idx` (numbered
    from `a`) with `vals`: each slot's vertex once, so they go to the device as they are."""
    lvid, = part.pinned_all((idx.size, np.int64), reuse="deliver")
    _boxes.box_positions(view.peer_lvid(peer), idx, a, lvid)
    return Inbox(*part.to_device_all(lvid, vals))


def _deliver(part, view, inbox, identity, view_name):
    """Put a host inbox on the partition's device: only the written entries (with their local
    ids) when few are written, else the whole inbox beside the boundary list (without a scan
    when the dense peers' counts already say so)."""
    size, itemsize = inbox.values.size, inbox.values.dtype.itemsize
    if inbox.dense and not _sparse_pays(inbox.least, size, itemsize):
        written = None
    elif inbox.dense:
        written = _boxes.box_touched(inbox.values, identity)
    elif not inbox.first:
        return _EMPTY
    else:
        written = np.concatenate(inbox.first)
    if written is not None and _sparse_pays(written.size, size, itemsize):
        lvid, vals = part.pinned_all((written.size, np.int64), (written.size, inbox.values.dtype),
                                     reuse="deliver")
        _boxes.box_gather(view.boundary_lvid, written, lvid)
        _boxes.box_gather(inbox.values, written, vals)
        _boxes.box_set(inbox.values, written, identity)
        return Inbox(*part.to_device_all(lvid, vals))
    inbox.dirty = True      # the device copy (or, on the CPU, the buffer itself) is in use
    return Inbox(part.views[view_name].boundary_lvid, part.to_device(inbox.values))


def exchange_pull(parts, host_views, mode, values, readers=None):
    """Copy each owner's boundary `values` (device arrays, per pid) into its readers' ghost slots
    (`part.boxes[mode.name]`); flags (a bool message) travel packed to bits into the readers'
    bitmaps. `readers[i]` False skips parts[i] as a reader (its compute will not read its
    ghosts); an owner none of whose readers reads may have None as its values."""
    readers = readers or [True] * len(parts)
    if mode.message.dtype == np.bool_:
        return pull_bits_local(parts, host_views, mode, values, readers)
    host_vals = [p.to_host(values[i])
                 if values[i] is not None and host_views[p.pid].boundary_lvid.size else None
                 for i, p in enumerate(parts)]
    messages = 0
    for q, wanted in zip(parts, readers):
        view = host_views[q.pid]
        if view.n_ghosts == 0 or not wanted:
            continue
        box = q.boxes[mode.name]
        ghosts = box if q.device == "cpu" else \
            q.pinned_all((view.n_ghosts, box.dtype), reuse="ghosts")[0]
        for p in range(len(parts)):
            a, b = int(view.ghost_ptr[p]), int(view.ghost_ptr[p + 1])
            if a < b:
                _boxes.box_gather(host_vals[p], host_views[p].peer_pos[q.pid], ghosts[a:b])
        messages += view.n_ghosts
        if ghosts is not box:
            with q.context():
                box[:] = q.to_device(ghosts)
    return messages


def pack_bits(part, view_name, flags, reader):
    """Owner side of a pull of flags: the flags (`flags`: one per boundary vertex, on the
    partition's device) of the ghosts partition `reader` holds of this one, in its slot order,
    packed 8 to a byte on the device; returns the bytes on the host (counted)."""
    pos = part.views[view_name].peer_pos[reader]
    packed = part.xp.empty(bitmap_bytes(pos.size), dtype=np.uint8)
    part.kernels("boxes").box_pack_bits(flags, pos, packed)
    return part.to_host(packed)


def put_bits(part, packed, bits, a, b):
    """Reader side: `packed` (host bytes from pack_bits) into bits a..b-1 of the reader's bitmap
    `bits` (its box, on its device); a device partition gets the bytes, not flags."""
    part.kernels("boxes").box_put_bits(part.to_device(packed), bits, a, b)


def bitmap_bytes(n):
    """Bytes of a pull box of `n` flags (one bit each)."""
    return (n + 7) // 8


def pull_bits_local(parts, host_views, mode, values, readers=None):
    """exchange_pull for flags between the partitions of this process (`values[i]` is
    parts[i]'s): per (owner, reader) pair the packed bits of the reader's ghost slots from that
    owner. Returns the number of ghost slots the readers hold (the messages)."""
    messages = 0
    for q, wanted in zip(parts, readers or [True] * len(parts)):
        view = host_views[q.pid]
        if view.n_ghosts == 0 or not wanted:
            continue
        box = q.boxes[mode.name]
        for i, p in enumerate(parts):
            a, b = int(view.ghost_ptr[p.pid]), int(view.ghost_ptr[p.pid + 1])
            if a == b:
                continue
            with p.context():
                packed = pack_bits(p, mode.view, values[i], q.pid)
            with q.context():
                put_bits(q, packed, box, a, b)
        messages += view.n_ghosts
    return messages
