"""One MPI rank's share of a PartitionPlan (built by `partition(..., ranks=R)` on rank 0).

A `RankPlan` has the interface the engine, the partitions and the algorithms read from a
PartitionPlan, but holds only what its rank needs: the global shape of the plan (kinds and rank of
every pid, the graph's size), the vertex lists and out-degrees of its own partitions, and their
LocalViews. Lists indexed by pid (`gvids`, `views(name)`) hold None for other ranks' partitions.
The vertex lists arrive in the global plan's local-id order (its `hub_sort`, applied by
`local_order` in plan.py on rank 0), so a rank's partitions are laid out as in one process.
`owner[gvid]` and `lvid_of[gvid]` answer for the vertices of this rank's partitions; any other
vertex is owned by pid -1 ("elsewhere"), which is all an algorithm asks (`owned_lvid`).

Nothing here knows about MPI: bsp/mpi.py fills a RankPlan from what rank 0 sends.
"""

from dataclasses import dataclass

import numpy as np

from .plan import PlanShape


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

    @classmethod
    def of(cls, graph):
        w = None
        if graph.weights is not None:
            w = np.array([graph.weights.mean() if graph.n_edges else 1.0])
        return cls(graph.n_vertices, graph.n_edges, graph.directed, graph.spec, w)


class _LocalLookup:
    """owner[gvid] / lvid_of[gvid] for the vertices of this rank's partitions; -1 elsewhere."""

    def __init__(self, gvids, values):
        order = np.argsort(gvids, kind="stable")
        self._gvids = gvids[order]
        self._values = values[order]

    def __getitem__(self, gvid):
        i = int(np.searchsorted(self._gvids, gvid))
        if i < self._gvids.size and self._gvids[i] == gvid:
            return int(self._values[i])
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
        mine = [self.gvids[p] for p in self.local_pids]
        all_gvids = np.concatenate(mine) if mine else np.empty(0, np.int64)
        pids = np.concatenate([np.full(g.size, p, np.int64) for p, g in zip(self.local_pids, mine)]
                              ) if mine else np.empty(0, np.int64)
        lvids = np.concatenate([np.arange(g.size) for g in mine]) if mine else np.empty(0, np.int64)
        self.owner = _LocalLookup(all_gvids, pids)
        self.lvid_of = _LocalLookup(all_gvids, lvids)
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
            raise KeyError(f"view {name!r} has not been sent to rank {self.rank} "
                           "(bsp.mpi.MpiEngine.prepare sends the views an algorithm declares)")
        return self._views[key]


def rank_meta(plan):
    """The global facts every rank's RankPlan is built from (small: O(partitions))."""
    return dict(graph=GraphSummary.of(plan.graph), strategy=plan.strategy,
                cpu_share=plan.cpu_share, gpus=plan.gpus, seed=plan.seed, hub_sort=plan.hub_sort,
                kinds=list(plan.kinds), rank_of=list(plan.rank_of))
