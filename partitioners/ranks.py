"""One MPI rank's share of a partition plan: what `partition(graph, ..., ranks=R)` would give
that rank, built by the ranks together from their shares of the graph (partitioners/distributed.py), without
any rank holding the whole graph.

A `RankPlan` has the interface the engine, the partitions and the algorithms read from a
PartitionPlan, but holds only what its rank needs: the global shape of the plan (kinds and rank of
every pid, the graph's size), the vertex lists and out-degrees of its own partitions, and their
LocalViews. Lists indexed by pid (`gvids`, `views(name)`) hold None for other ranks' partitions.
The vertex lists are in local-id order (`hub_sort`, applied by `local_order` in plan.py), so a
rank's partitions are laid out as in one process. `owner[gvid]` and `lvid_of[gvid]` answer for
the vertices of this rank's partitions; any other vertex is owned by pid -1 ("elsewhere"), which
is all an algorithm asks (`owned_lvid`).

`local_views` builds a rank's LocalViews of one CSR view from the rows of its vertices and what
the rank knows of the vertices they reach, as `plan._build_views` builds them from the whole
graph; `boundary_tables` completes them with what the other ranks hold. Nothing here knows about
MPI.
"""

from dataclasses import dataclass

import numpy as np

from kernels_cpu import order as _o
from kernels_cpu import plan as _k
from kernels_cpu import ranks as _kr
from kernels_cpu.csr import index_dtype

from .plan import LocalView, PlanShape, check_codes, check_degrees, narrow_owners


@dataclass
class GraphSummary:
    """The global facts about the graph a rank needs without its edges. `weights` stands in for
    the weight array where callbacks size something by the mean weight (SSSP's bucket width): a
    one-element array holding the mean weight, or None for an unweighted graph."""
    n_vertices: int
    n_edges: int
    directed: bool
    spec: str
    weights: np.ndarray | None
    ids = None      # as a Graph's: the ranks' graph is never compacted

    @property
    def n_ids(self):
        return self.n_vertices

    @classmethod
    def of(cls, graph):
        w = None
        if graph.weights is not None:
            w = np.array([graph.weights.mean() if graph.n_edges else 1.0])
        return cls(graph.n_vertices, graph.n_edges, graph.directed, graph.spec, w)


class ByGvid:
    """values[i] belongs to global id gvids[i] (gvids sorted): indexing with global ids of those
    vertices looks their values up, as a per-vertex array of the whole graph would answer."""

    def __init__(self, gvids, values):
        self.gvids, self.values = gvids, values

    def __getitem__(self, gvid):
        return self.values[_kr.searchsorted(self.gvids, gvid)]


class _LocalLookup:
    """owner[gvid] (pid) or lvid_of[gvid] (local id) for the vertices of this rank's partitions,
    -1 elsewhere, by a scan of the partitions' vertex lists: algorithms ask about one vertex per
    run (a source), so no per-vertex table is kept for it."""

    def __init__(self, plan, local_id):
        self.plan, self.local_id = plan, local_id

    def __getitem__(self, gvid):
        for pid in self.plan.local_pids:
            hit = np.flatnonzero(self.plan.gvids[pid] == gvid)
            if hit.size:
                return int(hit[0]) if self.local_id else pid
        return -1


class RankPlan(PlanShape):
    """A rank's partitions of a global plan; see the module docstring."""

    def __init__(self, meta, rank, gvids, out_degrees):
        """`meta`: the global facts (`rank_meta`); `gvids` / `out_degrees`: per local pid, in
        local-id order."""
        self.graph = meta["graph"]
        self.strategy, self.cpu_share = meta["strategy"], meta["cpu_share"]
        self.gpus, self.seed = meta["gpus"], meta["seed"]
        self.hub_sort = meta["hub_sort"]
        self.kinds = list(meta["kinds"])
        self.rank_of = list(meta["rank_of"])
        self.rank = rank
        self.engines = {}
        self.local_pids = [pid for pid, r in enumerate(self.rank_of) if r == rank]
        self.gvids = [None] * self.n_partitions
        self._degrees = {}
        for pid, g, d in zip(self.local_pids, gvids, out_degrees):
            self.gvids[pid] = g
            self._degrees[pid] = d
        self.owner = _LocalLookup(self, False)
        self.lvid_of = _LocalLookup(self, True)
        self._views = {}

    def out_degree(self, pid):
        return self._degrees[pid]

    def has_view(self, name):
        return self.canonical_view(name) in self._views

    def set_views(self, name, local_views):
        """Install this rank's LocalViews of view `name` (per local pid, in order)."""
        views = [None] * self.n_partitions
        for pid, v in zip(self.local_pids, local_views):
            views[pid] = v
        self._views[self.canonical_view(name)] = views

    def views(self, name):
        key = self.canonical_view(name)
        if key not in self._views:
            raise KeyError(f"rank {self.rank}'s plan has no view {name!r} (partitioners.distributed."
                           "plan_ranks builds the views it is asked for)")
        return self._views[key]



def rank_meta(plan):
    """The global facts every rank's RankPlan is built from (small: O(partitions))."""
    return dict(graph=GraphSummary.of(plan.graph), strategy=plan.strategy,
                cpu_share=plan.cpu_share, gpus=plan.gpus, seed=plan.seed, hub_sort=plan.hub_sort,
                kinds=list(plan.kinds), rank_of=list(plan.rank_of))


def local_views(indptr, ids, weights, parts, known, n_partitions, n_vertices):
    """The LocalViews of this rank's partitions for one CSR view, as `plan._build_views` builds
    them, without their boundary tables; and, per partition, the ghost groups it holds:
    [(owner pid, the owner's local ids of those ghosts, ascending)].

    The rows come laid out as the views will hold them: partition after partition (`parts`:
    [(pid, global ids in local order)]), each in local order; `indptr` (their offsets), `ids`
    (renamed to positions in `known`) and `weights` (or None) become the views' arrays, in place.
    known: (gvid, pid, lvid, degree), aligned arrays describing every vertex the rows reach and
    every vertex of the rank, gvid ascending; degree is the vertex's row length in the view."""
    gvid, pid_k, lvid_k, degree = known
    check_degrees(degree, gvid)
    has_w = weights is not None
    no_w = np.empty(0, np.float64)
    mark = np.zeros(gvid.size, np.uint8)
    table = np.empty(gvid.size, np.int64)       # per known vertex: sort key and code
    _k.plan_keys(degree, table)
    lvid_bits = int(lvid_k.max()).bit_length() if lvid_k.size else 0
    owner = narrow_owners(pid_k, n_partitions)
    views, groups, start = [], [], 0
    for pid, gvids in parts:
        n_local = gvids.size
        ptr = indptr[start:start + n_local + 1] - indptr[start]
        a, b = int(indptr[start]), int(indptr[start + n_local])
        start += n_local
        rows, w = ids[a:b], weights[a:b] if has_w else no_w
        local_rows = np.arange(n_local)
        boundary = _k.plan_mark_remote(ptr, rows, local_rows, owner, pid, mark)
        ghosts = _o.marked(mark)
        key = _o.pair_keys(pid_k, lvid_k, ghosts, lvid_bits)    # by owner, in its order
        by = _o.key_order(key, lvid_bits + max(1, n_partitions - 1).bit_length())
        ghosts = _o.take(ghosts, by)
        ghost_ptr = np.searchsorted(_o.take(key, by), np.arange(n_partitions + 1) << lvid_bits)
        counts = np.diff(ghost_ptr)
        check_codes(n_local + ghosts.size)
        local_dtype = np.int32 if n_local + ghosts.size <= np.iinfo(np.int32).max else np.int64
        _k.plan_codes(table, _kr.searchsorted(gvid, gvids), 0)
        _k.plan_codes(table, ghosts, n_local)
        _k.plan_fill(ptr, rows, w, has_w, local_rows, ptr, table, n_local, rows, w)
        rows = rows.astype(local_dtype, copy=False)
        views.append(LocalView(ptr, rows, w if has_w else None, n_local,
                               _o.take(gvid, ghosts).astype(index_dtype(n_vertices)),
                               ghost_ptr, int(boundary)))
        groups.append([(q, _o.take(lvid_k, ghosts[ghost_ptr[q]:ghost_ptr[q + 1]]))
                       for q in np.flatnonzero(counts)])
    return views, groups


def boundary_tables(view, n_local, held_by, n_partitions):
    """Set `view`'s boundary_lvid and peer_pos (plan._build_views' owner side) from `held_by`:
    peer pid -> the local ids of this partition's vertices that peer holds ghosts of, in the
    peer's slot order (ascending)."""
    empty = np.empty(0, np.int64)
    mine = [np.asarray(held_by.get(q, empty), dtype=np.int64) for q in range(n_partitions)]
    held = np.zeros(n_local, dtype=bool)
    for m in mine:
        held[m] = True
    view.boundary_lvid = np.flatnonzero(held).astype(np.int64)
    rank = np.cumsum(held, dtype=np.int64) - 1
    view.peer_pos = [rank[m] for m in mine]
