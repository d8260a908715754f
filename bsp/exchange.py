"""Moving boxes between partitions at the end (push) or start (pull) of a superstep.

Push: each partition's box holds one slot per ghost, grouped by owner. Only the touched slots travel
when few are touched (index + value pairs), otherwise the whole box; the owner folds every peer's
slots into one inbox entry per boundary vertex with the message's combine operator. (TOTEM always
copied whole boxes; its paper names that as a limitation for frontier algorithms such as BFS.)
Pull: each owner's boundary values are copied into the ghost slots of every reader.

Copies between a GPU (or emulated GPU) partition and the host go through `to_host`/`to_device`, so
the bytes are counted where the real device transfers happen. The CPU partition's boxes are already
host memory.
"""

from typing import NamedTuple

import numpy as np

from kernels_cpu import boxes as _boxes

INDEX_BYTES = 8


class Inbox(NamedTuple):
    """Messages that arrived for a partition, folded per vertex: `values[i]` for local vertex
    `lvid[i]`. Only the vertices that received something when that is few, else every boundary
    vertex (with the identity where nothing came)."""
    lvid: object
    values: object

    @property
    def size(self):
        return len(self.values)


def _sparse_pays(n_touched, n_total, itemsize):
    return n_touched * (INDEX_BYTES + itemsize) < n_total * itemsize


def _pack(part, box, identity):
    """The box on the host as (indices or None, values): sparse when that is fewer bytes."""
    k = part.kernels("boxes")
    touched = k.box_touched(box, identity)
    n = int(touched.size)
    if _sparse_pays(n, box.size, box.dtype.itemsize):
        vals = part.xp.empty(n, dtype=box.dtype)
        k.box_gather(box, touched, vals)
        return part.to_host(touched), part.to_host(vals), n
    return None, part.to_host(box), n


def _inbox(buffers, key, size, dtype, identity):
    """A reused host inbox, reset to the identity."""
    buf = buffers.get(key)
    if buf is None or buf.size != size or buf.dtype != dtype:
        buf = buffers[key] = np.empty(size, dtype=dtype)
    _boxes.box_fill(buf, identity)
    return buf


def exchange_push(parts, host_views, mode, buffers):
    """Fold every partition's box into the owners' inboxes; returns the number of messages.
    `buffers` keeps the host inboxes between supersteps."""
    msg = mode.message
    combine = _boxes.COMBINE[msg.combine]
    identity = msg.dtype.type(msg.identity)
    inboxes = [_inbox(buffers, (mode.name, v_pid), v.boundary_lvid.size, msg.dtype, identity)
               for v_pid, v in enumerate(host_views)]
    messages = 0
    for p in parts:
        view = host_views[p.pid]
        if view.n_ghosts == 0:
            continue
        with p.context():
            idx, vals, n = _pack(p, p.boxes[mode.name], identity)
        messages += n
        for q in range(len(parts)):
            a, b = int(view.ghost_ptr[q]), int(view.ghost_ptr[q + 1])
            if a == b:
                continue
            pos = host_views[q].peer_pos[p.pid]
            if idx is None:
                combine(inboxes[q], pos, vals[a:b])
            else:
                lo, hi = np.searchsorted(idx, (a, b))
                at = np.empty(hi - lo, dtype=np.int64)
                _boxes.box_positions(pos, idx[lo:hi], a, at)
                combine(inboxes[q], at, vals[lo:hi])
    for q in parts:
        with q.context():
            q.inboxes[mode.name] = _deliver(q, host_views[q.pid], inboxes[q.pid], identity,
                                            mode.view)
    return messages


def _deliver(part, view, inbox, identity, view_name):
    """Put a host inbox on the partition's device: only the touched entries (with their local
    ids) when few are touched, else the whole inbox beside the boundary list."""
    touched = _boxes.box_touched(inbox, identity)
    if _sparse_pays(touched.size, inbox.size, inbox.dtype.itemsize):
        lvid = np.empty(touched.size, dtype=np.int64)
        vals = np.empty(touched.size, dtype=inbox.dtype)
        _boxes.box_gather(view.boundary_lvid, touched, lvid)
        _boxes.box_gather(inbox, touched, vals)
        return Inbox(part.to_device(lvid), part.to_device(vals))
    return Inbox(part.views[view_name].boundary_lvid, part.to_device(inbox))


def exchange_pull(parts, host_views, mode, values):
    """Copy each owner's boundary `values` (device arrays, per pid) into its readers' ghost slots
    (`part.boxes[mode.name]`)."""
    host_vals = [p.to_host(values[p.pid]) if host_views[p.pid].boundary_lvid.size else None
                 for p in parts]
    messages = 0
    for q in parts:
        view = host_views[q.pid]
        if view.n_ghosts == 0:
            continue
        box = q.boxes[mode.name]
        ghosts = box if q.device == "cpu" else np.empty(view.n_ghosts, dtype=box.dtype)
        for p in range(len(parts)):
            a, b = int(view.ghost_ptr[p]), int(view.ghost_ptr[p + 1])
            if a < b:
                _boxes.box_gather(host_vals[p], host_views[p].peer_pos[q.pid], ghosts[a:b])
        messages += view.n_ghosts
        if ghosts is not box:
            with q.context():
                box[:] = q.to_device(ghosts)
    return messages
