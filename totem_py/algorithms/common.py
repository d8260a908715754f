"""Small helpers shared by the algorithm callbacks (state placement, queues, collection)."""

import numpy as np

from kernels_cpu.boxes import box_fill, box_scatter


def owned_lvid(part, gvid):
    """Local id of global vertex `gvid` if this partition owns it, else None."""
    if gvid is None or part.plan.owner[gvid] != part.pid:
        return None
    return int(part.plan.lvid_of[gvid])


def collect(parts, n_vertices, name, dtype, fill, unset=None):
    """Scatter each partition's state array `name` into one global array of `dtype`, in one
    parallel pass per partition (a single-threaded fancy-indexed store took 0.2 s on 16.7M
    vertices, and its memory traffic slowed the next run's first launches); entries equal to
    `unset` become `fill`, as do vertices no partition here holds (other ranks' under MPI)."""
    out = np.empty(n_vertices, dtype=dtype)
    if sum(p.n_local for p in parts) < n_vertices:
        box_fill(out, fill)
    for p in parts:
        values = p.to_host(getattr(p.state, name)[:p.n_local], count=False)
        box_scatter(values, p.gvids, out, fill if unset is None else unset, fill)
    return out
