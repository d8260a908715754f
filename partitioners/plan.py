"""HIGH / LOW / RAND / BLOCK partitioning and the PartitionPlan.

TOTEM section 6: order the vertices by degree (HIGH: highest first, LOW: lowest first) or randomly
(RAND) and give the CPU partition the shortest prefix of that order that holds `cpu_share` of the
edges. The rest are dealt to the GPU partitions in out-degree order, highest first, serpentine
(0, 1, .., G-1, G-1, .., 0, 0, ..): each GPU gets the same number of vertices (within one) and of
edges (within the largest degree), hubs and low-degree vertices alike, so that the GPUs finish
their supersteps together (consecutive runs of the degree order, equal in edges, would give one
GPU a few hubs and another most of the vertices). Degrees are out-degrees: a partition owns its
vertices' out-edges.

BLOCK keeps runs of consecutive ids together (Gunrock's static partitioner, the 1D blocks of
distributed graph libraries): the CPU partition takes the lowest ids up to `cpu_share` of the
edges, and the GPU partitions (and, under MPI, the ranks) take consecutive ranges of equal
vertices + edges (`block_parts`). Where ids follow geometry, as in road networks and meshes,
few edges cross between blocks, and a shortest path crosses partitions a few times instead of
every other hop (road-usroads, two partitions: the fewest supersteps an exact run can take are 8
under BLOCK, 303 under HIGH; `experiments.crossings`), so the asynchronous paths' local rounds
cover most of the distance between exchanges (bsp/paths.py). On a graph whose ids are random
(R-MAT) BLOCK cuts as many edges as RAND.

Inside a partition, local ids follow `hub_sort` (`local_order`); the order only changes speed, never
results. Rows are laid out in local-id order, so on a GPU partition that streams its edges
(bsp/stream.py) the leading chunks, which stay resident, hold the first local ids' rows.
  - "degree" (default): every vertex by out-degree, highest first, ties by global id (hubs first;
    a full sort, O(Vp log Vp)).
  - "hytgraph": HyTGraph's hub sorting (ICDE'23, section VI-A, eq. 4): the top 8% (rounded up) of
    the partition's vertices by out-degree x in-degree (in the whole graph) move to the front,
    highest product first, ties by global id; the others keep their global-id order.
  - "off": global-id order.

For each CSR view an algorithm needs ("out", "in" or "both"), every partition gets a LocalView:
its rows, whose boundary edges point at ghost slots (one slot per distinct remote target, so
messages to one remote vertex aggregate), grouped by owning partition, plus the tables the exchange
uses. Each row lists its local targets, then its remote ones, or the other way round, each group
by degree, highest first (ties in a fixed order), the group whose first target has the higher
degree first: a bottom-up BFS step stops at a row's first neighbour in the frontier, and hubs are
the likeliest ones, local or not (on a GPU partition under HIGH the hubs are ghosts, which
local edges first would check last; docs/results/ab/row_order_rmat24_h100.txt). The
plan is built once and serves every algorithm and trial; messaging reads these tables and never
changes them.

Cost: O(V log V) for the degree order (and "degree"'s local order; "hytgraph" adds an O(E) pass
for in-degrees and sorts only the hubs), O(V + E) per view for the local CSRs and O(E log d) for
ordering their rows (Numba, parallel).
"""

import functools
from dataclasses import dataclass, field

import numpy as np

from kernels_cpu import order as _o
from kernels_cpu import plan as _k
from kernels_cpu import plan_stats as _ks
from bsp.errors import InputError
from kernels_cpu.csr import csr_row_sums, index_dtype, weights_dtype

STRATEGIES = ("HIGH", "LOW", "RAND", "BLOCK")
HUB_SORTS = ("degree", "hytgraph", "off")    # local order inside a partition (`local_order`)
HUB_PERCENT = 8                              # HyTGraph's hubs: the top 8% by D_o x D_i


@dataclass
class LocalView:
    """One partition's rows of one CSR view, and its boundary tables.

    indices < n_local are local ids; indices >= n_local are n_local + ghost slot. Ghost slots are
    grouped by owner: slots ghost_ptr[q]:ghost_ptr[q+1] stand for vertices of partition q.
    boundary_lvid lists (sorted) this partition's vertices that are ghosts in some peer, and
    peer_pos[q] maps the ghost slots peer q holds for us, in q's slot order, to positions in
    boundary_lvid: it is how a push box from q is folded in and how a pull box for q is filled.
    """
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray | None
    n_local: int
    ghost_gvid: np.ndarray
    ghost_ptr: np.ndarray
    boundary_edges: int
    boundary_lvid: np.ndarray = None
    peer_pos: list = field(default_factory=list)
    edge_file: object = None    # the edges stay in this file (bsp.stream.EdgeFile): spill.py

    @property
    def n_ghosts(self):
        return self.ghost_gvid.size

    @functools.cached_property
    def owners(self):
        """How many peers own ghost slots here (counted once: the exchange asks each step)."""
        return int(np.count_nonzero(np.diff(self.ghost_ptr)))

    def peer_lvid(self, q):
        """Local ids of the vertices peer q holds ghost slots of, in q's slot order."""
        cache = self.__dict__.setdefault("_peer_lvid", {})
        if q not in cache:
            cache[q] = self.boundary_lvid[self.peer_pos[q]]
        return cache[q]

    @property
    def nbytes(self):
        return (self.indptr.nbytes + self.indices.nbytes
                + (0 if self.weights is None else self.weights.nbytes))


class PlanShape:
    """What a PartitionPlan and one MPI rank's RankPlan (partitioners/ranks.py) answer alike."""

    @property
    def n_partitions(self):
        return len(self.kinds)

    @property
    def ranks(self):
        return max(self.rank_of, default=0) + 1

    def canonical_view(self, name):
        """In an undirected graph in-edges and both directions are the out-edges."""
        return name if self.graph.directed else "out"

    def out_weight(self, pid):
        """The sums of the out-edge weights of partition `pid`'s vertices, in local-id order
        (from its out view), or None for a graph without weights."""
        if getattr(self.graph, "weights", 0) is None:     # no out view built to learn it
            return None
        view = self.views("out")[pid]
        if view.weights is None:
            return None
        out = np.empty(view.n_local, dtype=np.float64)
        csr_row_sums(view.indptr, view.weights, out)
        return out

    def sorted_rows(self, name, pid):
        """The rows the intersect operator merges (PartitionPlan's); an MPI rank has no other
        rank's rows to give its ghosts."""
        raise InputError("intersect needs the rows of other partitions' vertices, which MPI "
                         "ranks do not exchange: run it in one process")

    def rows(self, view="out"):
        """Per partition of this process: pid, kind, vertices, edges, boundary edges (to other
        partitions' vertices) and remote vertices (its ghosts)."""
        views = self.views(view)
        return [dict(pid=p, kind=self.kinds[p], vertices=int(views[p].n_local),
                     edges=int(views[p].indices.size),
                     boundary_edges=int(views[p].boundary_edges),
                     remote_vertices=int(views[p].n_ghosts)) for p in self.local_pids]


class PartitionPlan(PlanShape):
    """The graph split into partitions; views are built on first use and cached."""

    def __init__(self, graph, strategy, cpu_share, gpus, seed, kinds, owner, gvids,
                 hub_sort="degree"):
        self.graph = graph
        self.strategy = strategy
        self.cpu_share = cpu_share
        self.gpus = gpus
        self.seed = seed
        self.hub_sort = hub_sort      # the local order inside partitions (`local_order`)
        self.engines = {}             # device -> bsp.Engine built on this plan (harness cache)
        self.kinds = kinds            # per pid: "cpu" or "gpu"
        self.owner = owner            # gvid -> pid
        self.gvids = gvids            # pid -> global ids in local-id order (by hub_sort)
        self.lvid_of = np.empty(graph.n_vertices, dtype=index_dtype(graph.n_vertices))
        for g in gvids:
            _o.set_positions(self.lvid_of, g)
        self.rank_of = [0] * len(kinds)   # per pid: the MPI rank that runs it (partition(ranks=))
        self.spill = None     # a spill.Spill: the edges stay in a file (--host-memory)
        self._views = {}

    @property
    def local_pids(self):
        """The partitions an Engine on this process instantiates: all of them."""
        return list(range(self.n_partitions))

    def out_degree(self, pid):
        """Out-degrees of partition `pid`'s vertices, in local-id order."""
        return self.graph.out_degree[self.gvids[pid]]

    def view_graph(self, name):
        g = self.graph
        if name == "out":
            return g
        if name == "in":
            return g.reverse()
        if name == "both":
            if not g.directed:
                return g
            if "_both" not in self.__dict__:
                self._both = g.to_undirected()
            return self._both
        raise ValueError(f"unknown view {name!r}")

    def views(self, name):
        """The LocalView of every partition for CSR view `name`."""
        name = self.canonical_view(name)
        if name not in self._views and self.spill is not None:     # edges in a file
            from .spill import spill_views
            self._views[name] = _owner_side(spill_views(self, name, LocalView), self)
        if name not in self._views:
            self._views[name] = _build_views(self, self.view_graph(name))
        return self._views[name]

    def sorted_rows(self, name, pid):
        """(indptr, indices) of partition `pid`'s nodes in CSR view `name`: its local vertices'
        rows, then its ghost slots' (a ghost's row is its row in the graph), every entry a node
        id of the partition (local id, or n_local + slot), each row ascending and without
        repeats. A ghost's neighbours that are neither local nor ghosts here are left out. What
        the intersect operator merges (bsp.operators.intersect). O((E_p + D) log(E_p + D)),
        D the degrees of the ghosts summed."""
        view = self.views(name)[pid]
        graph = self.view_graph(self.canonical_view(name))
        n_local, ghosts = view.n_local, view.ghost_gvid.astype(np.int64)
        starts, degree = graph.indptr[ghosts], np.diff(graph.indptr)[ghosts]
        at = np.arange(int(degree.sum())) + np.repeat(starts - np.cumsum(degree) + degree, degree)
        remote = graph.indices[at].astype(np.int64)
        node = np.full(remote.size, -1, np.int64)
        mine = self.owner[remote] == pid
        node[mine] = self.lvid_of[remote[mine]]
        if ghosts.size:
            order = np.argsort(ghosts)
            slot = np.minimum(np.searchsorted(ghosts[order], remote), ghosts.size - 1)
            held = ~mine & (ghosts[order][slot] == remote)
            node[held] = n_local + order[slot[held]]
        kept = node >= 0
        src = np.concatenate([np.repeat(np.arange(n_local), np.diff(view.indptr)),
                              np.repeat(np.arange(ghosts.size) + n_local, degree)[kept]])
        dst = np.concatenate([view.indices.astype(np.int64), node[kept]])
        order = np.lexsort((dst, src))
        src, dst = src[order], dst[order]
        first = np.ones(src.size, bool)
        first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
        src, dst = src[first], dst[first]
        indptr = np.zeros(n_local + ghosts.size + 1, np.int64)
        np.cumsum(np.bincount(src, minlength=n_local + ghosts.size), out=indptr[1:])
        return indptr, dst.astype(view.indices.dtype)

    def stats(self, view="out"):
        """Per-partition vertices, edges, boundary edges, remote vertices, and TOTEM's beta."""
        rows = self.rows(view)
        total = max(self.graph.n_edges, 1)
        boundary = sum(r["boundary_edges"] for r in rows)
        remote = sum(r["remote_vertices"] for r in rows)
        return dict(partitions=rows, beta=boundary / total, beta_aggregated=remote / total)


def _order(graph, strategy, seed):
    return _order_members(graph, np.arange(graph.n_vertices), strategy, seed)


def by_degree(degree, descending=True):
    """np.argsort(-degree or degree, kind="stable"), by a parallel counting sort
    (kernels_cpu/order.py); by np.argsort itself where the largest degree is beyond
    max(4 n, 2**20) (its table would outgrow the degrees)."""
    degree = np.asarray(degree)
    if degree.size and int(degree.max()) > max(4 * degree.size, 1 << 20):
        return np.argsort(-degree if descending else degree, kind="stable")
    return _o.degree_order(degree, descending)


def _at(values, ids):
    """values[ids]: a parallel gather for an array, the lookup of a ByGvid (ranks) otherwise."""
    return _o.take(values, ids) if isinstance(values, np.ndarray) else values[ids]


def check_gpus(gpus, n_vertices):
    """`gpus` if it is from 0 to the vertex count (at least 1), else an InputError naming --gpus:
    more GPU partitions than vertices could only be empty, and splitting costs time per GPU
    partition (the command checks it; `partition` itself drops empty partitions)."""
    if gpus < 0:
        raise InputError(f"--gpus must be >= 0, got {gpus}")
    if gpus > max(n_vertices, 1):
        raise InputError(f"--gpus {gpus} is more than the graph's {n_vertices} vertices")
    return gpus


def auto_share(graph, strategy, gpus, budget, bytes_per_edge, seed=0):
    """TOTEM's rule: the smallest CPU share that leaves each of `gpus` GPU partitions at most
    `budget` bytes of graph data (rows of 8 bytes, edges of `bytes_per_edge`), so the GPUs take
    as many edges as fit. Returns a share in [0, 1]."""
    n = graph.n_vertices
    if n == 0 or gpus == 0:
        return 1.0
    cum = np.concatenate([[0], np.cumsum(graph.out_degree[_order(graph, strategy, seed)])])
    k = np.arange(n + 1)                     # vertices kept on the CPU
    per_gpu = (8 * ((n - k) / gpus + 1) + bytes_per_edge * (cum[-1] - cum) / gpus)
    fits = np.flatnonzero(per_gpu <= budget)
    if fits.size == 0:
        return 1.0
    return float(cum[fits[0]] / cum[-1]) if cum[-1] else 0.0


def check_hub_sort(hub_sort):
    """`hub_sort` if it is one of HUB_SORTS, else an InputError naming --hub-sort."""
    if hub_sort not in HUB_SORTS:
        raise InputError(f"--hub-sort must be one of {', '.join(HUB_SORTS)}, not {hub_sort!r}")
    return hub_sort


def hub_scores(graph):
    """HyTGraph's hub importance up to its constant denominator (eq. 4: D_o(v) x D_i(v) over
    D_omax x D_imax): out-degree x in-degree per vertex, in-degrees of the whole graph (equal to
    the out-degrees for an undirected graph). int64, or float64 where a product could overflow."""
    out = graph.out_degree
    if not graph.directed:
        indeg = out
    else:
        indeg = np.bincount(graph.indices, minlength=graph.n_vertices)
    return hub_product(out, indeg)


def hub_product(out, indeg):
    """out x indeg per vertex, int64, or float64 where a product could overflow."""
    if out.size and int(out.max()) * int(indeg.max()) >= 2 ** 63:
        return out.astype(np.float64) * indeg
    return out.astype(np.int64) * indeg


def hytgraph_order(members, scores, percent=HUB_PERCENT):
    """HyTGraph's hub sorting (ICDE'23, section VI-A, "Hub-vertex-driven priority scheduling":
    "gather and sort the top 8% important vertices at the beginning of the CSR structure" by
    H(v), eq. 4, while "the non-hub-vertices remain their natural order") applied to one
    partition: the top ceil(percent% of `members`) by `scores` (per global id) first, highest
    first, ties by global id, then every other member in global-id order. HyTGraph sorts its
    whole CSR once while preparing the data; here each partition's rows are sorted once, when
    partitioning. O(Vp) selection plus a sort of the hubs only."""
    members = np.sort(members)
    n = members.size
    k = -(-percent * n // 100)            # ceil, in integers
    if k == 0:
        return members
    score = scores[members]
    if k < n:
        threshold = np.partition(score, n - k)[n - k]           # the k-th largest score
        above = np.flatnonzero(score > threshold)
        tied = np.flatnonzero(score == threshold)[:k - above.size]   # lowest global ids
        top = np.concatenate([above, tied])
    else:
        top = np.arange(n)
    top = top[np.lexsort((top, -score[top]))]   # score descending, then global id
    rest = np.ones(n, dtype=bool)
    rest[top] = False
    return np.concatenate([members[top], members[rest]])


def local_order(graph, members, hub_sort="degree", scores=None):
    """A partition's vertices (`members`, global ids) in local-id order under `hub_sort`:
    "degree": by out-degree, highest first, ties by global id, so the few vertices most edges
    point at share a few cache lines (PageRank's and bottom-up BFS's random reads mostly hit
    them) and their rows come first; "hytgraph": `hytgraph_order` by `scores` (`hub_scores`,
    computed here when not given); "off": global-id order. Only speed depends on the order."""
    if hub_sort == "hytgraph":
        return hytgraph_order(members, hub_scores(graph) if scores is None else scores)
    members = _o.sorted_ids(members)
    if hub_sort == "degree":
        return _o.take(members, by_degree(_at(graph.out_degree, members)))
    if hub_sort == "off":
        return members
    raise ValueError(f"unknown hub_sort {hub_sort!r}")


def _order_members(graph, members, strategy, seed):
    """`members` in HIGH / LOW / RAND / BLOCK order (with every vertex as members, `_order`'s
    order)."""
    if strategy in ("HIGH", "LOW"):
        return _o.take(members, by_degree(_at(graph.out_degree, members), strategy == "HIGH"))
    if strategy == "BLOCK":
        return _o.sorted_ids(members)
    return members[np.random.default_rng(seed).permutation(members.size)]


def check_options(strategy, cpu_share, gpus, hub_sort):
    """The strategy (upper case) if the options are valid, else an InputError naming the option."""
    strategy = strategy.upper() if isinstance(strategy, str) else strategy
    if strategy not in STRATEGIES:
        raise InputError(f"--partition must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if not 0.0 <= cpu_share <= 1.0:
        raise InputError(f"--cpu-share must be in [0, 1], got {cpu_share}")
    if gpus < 0 or (gpus == 0 and cpu_share < 1.0):
        raise InputError(f"--gpus must be >= 1 when cpu-share < 1 (got {gpus})")
    check_hub_sort(hub_sort)
    return strategy


def _split(graph, members, strategy, cpu_share, gpus, seed, hub_sort="degree", scores=None):
    """[(kind, vertices in local-id order)]: one CPU partition holding `cpu_share` of the edges of
    `members` and `gpus` GPU partitions sharing the rest evenly, each in `local_order`; empty
    ones dropped, except that at least one partition is kept."""
    order = _order_members(graph, members, strategy, seed)
    degree = _at(graph.out_degree, order)       # in the order
    cut = _cpu_cut(degree, cpu_share, gpus)
    rest = order[cut:]
    deal = block_ranges if strategy == "BLOCK" else deal_to_gpus
    groups = [("cpu", order[:cut])] + [("gpu", v) for v in deal(
        degree[cut:], rest, gpus)] if gpus else [("cpu", order)]
    parts = []
    for k, (kind, vertices) in enumerate(groups):
        if vertices.size or (not parts and k == len(groups) - 1):
            parts.append((kind, local_order(graph, vertices, hub_sort, scores)))
    if not parts:  # no vertices: one partition of the first kind
        parts = [("cpu" if cpu_share > 0 else "gpu", np.empty(0, np.int64))]
    return parts


def serpentine(n, parts):
    """The part each of n items in order goes to: 0, 1, .., parts-1, parts-1, .., 0, 0, .."""
    k = np.arange(n)
    part = k % parts
    odd = (k // parts) % 2 == 1
    part[odd] = parts - 1 - part[odd]
    return part


def deal_to_ranks(graph, ranks, strategy="HIGH"):
    """Vertices per MPI rank, edge-balanced and degree-aware: the vertices in out-degree order
    (highest first) are dealt to the ranks in serpentine order, so every rank gets the same
    number of vertices (within one), the same mix of hubs and low-degree vertices, and the same
    number of edges within the largest degree; under BLOCK, consecutive ranges of ids
    (`block_ranges`). Each rank then splits its share between its CPU and GPU partitions as one
    process would."""
    if strategy == "BLOCK":
        return block_ranges(graph.out_degree, np.arange(graph.n_vertices), ranks)
    dealt, ptr = _o.serpentine_deal(by_degree(graph.out_degree), ranks)
    return [_o.sorted_ids(dealt[ptr[r]:ptr[r + 1]]) for r in range(ranks)]


def block_parts(degree, parts, before=0, total=None):
    """The part (0 .. parts-1, ascending) of each item of a run of items in order, cut into
    `parts` consecutive ranges of about equal weight, an item weighing 1 + its degree: an item
    goes to the part of how many of the cuts total * k / parts (k = 1 .. parts-1) the weight
    before it reaches. `before` and `total`: the weight before the run and of every item, for
    a run that is one piece of the items (an MPI rank's block); by default the run is all."""
    weight = np.asarray(degree, dtype=np.int64) + 1
    prefix = np.cumsum(weight) - weight + before
    total = block_weight(degree) if total is None else total
    return np.searchsorted(total * np.arange(1, parts) / parts, prefix, side="right")


def block_weight(degree):
    """The weight `block_parts` gives a run of items: how many they are plus their degrees."""
    return int(np.sum(degree, dtype=np.int64)) + len(degree)


def block_ranges(degree, vertices, parts):
    """`vertices` (in order; `degree`, theirs) cut into `parts` consecutive ranges
    (`block_parts`)."""
    bounds = np.searchsorted(block_parts(degree, parts), np.arange(parts + 1))
    return [vertices[bounds[k]:bounds[k + 1]] for k in range(parts)]


def deal_to_gpus(degree, vertices, gpus):
    """`vertices` (the ones the CPU does not keep) per GPU partition: dealt in out-degree order
    (`degree`, theirs), highest first, serpentine."""
    dealt, ptr = _o.serpentine_deal(_o.take(vertices, by_degree(degree)), max(gpus, 1))
    return [dealt[ptr[k]:ptr[k + 1]] for k in range(max(gpus, 1))]


def partition(graph, strategy="HIGH", cpu_share=0.5, gpus=1, seed=0, ranks=1,
              hub_sort="degree"):
    """Split `graph` into one CPU partition holding `cpu_share` of the edges and `gpus` GPU
    partitions sharing the rest evenly. Empty partitions are dropped (cpu_share 1 is the single
    CPU partition; cpu_share 0 has no CPU partition). Local ids inside each partition follow
    `hub_sort` ("degree", "hytgraph" or "off"; the module docstring), chosen once here.

    With `ranks` > 1 (an MPI run) the vertices are first dealt to the ranks (`deal_to_ranks`) and
    each rank's share is split as above; rank r's partitions get consecutive pids, after rank
    r-1's, and `plan.rank_of[pid]` names the rank. Every rank keeps at least one partition (an
    empty one if it has no vertices)."""
    strategy = check_options(strategy, cpu_share, gpus, hub_sort)
    if ranks < 1:
        raise ValueError(f"ranks must be >= 1, got {ranks}")
    n = graph.n_vertices
    shares = [np.arange(n)] if ranks == 1 else deal_to_ranks(graph, ranks, strategy)
    scores = hub_scores(graph) if hub_sort == "hytgraph" else None
    kinds, owner_parts, rank_of = [], [], []
    for r, members in enumerate(shares):
        for kind, vertices in _split(graph, members, strategy, cpu_share, gpus, seed,
                                     hub_sort, scores):
            kinds.append(kind)
            owner_parts.append(vertices)
            rank_of.append(r)
    owner = np.empty(n, dtype=np.int32)
    for pid, members in enumerate(owner_parts):
        _o.set_value(owner, members, pid)
    plan = PartitionPlan(graph, strategy, cpu_share, gpus, seed, kinds, owner, owner_parts,
                         hub_sort)
    plan.rank_of = rank_of
    return plan


def _cpu_cut(degree, cpu_share, gpus):
    """How many vertices of an order the CPU partition keeps: the shortest prefix holding
    `cpu_share` of the edges (`degree`: the vertices' degrees in the order)."""
    n = degree.size
    total = int(degree.sum()) if n else 0
    if cpu_share >= 1.0 or gpus == 0:
        return n
    if cpu_share <= 0.0 or total == 0:
        return 0 if cpu_share <= 0.0 else n
    return min(_o.prefix_reaching(degree, cpu_share * total), n)


def estimate_stats(graph, strategy, cpu_shares, gpus=1, seed=0):
    """What `partition(graph, strategy, share, gpus, seed).stats()` reports, for each share in
    `cpu_shares`, without building any local CSR: one degree order for all shares, then per share
    one parallel pass over the edges in vertex order (kernels_cpu/plan_stats.py). For the performance
    model's --cpu-share model, which needs beta at many candidate shares.
    Returns one dict per share: cpu_share, alpha (the CPU partition's actual share of the edges),
    partitions [{kind, vertices, edges, boundary_edges, remote_vertices}], beta, beta_aggregated."""
    strategy = strategy.upper() if isinstance(strategy, str) else strategy
    if strategy not in STRATEGIES:
        raise InputError(f"--partition must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    g, n = graph, graph.n_vertices
    order = _order(g, strategy, seed)
    degree = g.out_degree
    in_order = degree[order]
    total = max(g.n_edges, 1)
    by = order[by_degree(degree[order])]       # the GPUs' deal, for any cut
    owner = np.empty(n, dtype=np.int32)
    mark = np.zeros((gpus + 1, n), dtype=np.uint8)
    out = []
    for share in cpu_shares:
        if not 0.0 <= share <= 1.0:
            raise InputError(f"--cpu-share must be in [0, 1], got {share}")
        if gpus < 1 and share < 1.0:
            raise InputError(f"--gpus must be >= 1 when cpu-share < 1 (got {gpus})")
        cut = _cpu_cut(in_order, share, gpus)
        groups = [order[:cut]]
        if gpus and strategy == "BLOCK":
            groups += block_ranges(in_order[cut:], order[cut:], gpus)
        elif gpus:
            rest = np.zeros(n, bool)
            rest[order[cut:]] = True
            kept = by[rest[by]]                 # the rest in the deal's order
            gpu = serpentine(kept.size, gpus)
            groups += [kept[gpu == k] for k in range(gpus)]
        # the same partitions partition() keeps: empty ones dropped, except a lone one
        spans = [(k, v) for k, v in enumerate(groups) if v.size] or [(0, groups[0])]
        for pid, (_, members) in enumerate(spans):
            owner[members] = pid
        boundary = _ks.plan_cut_stats(g.indptr, g.indices, owner, len(spans), mark)
        rows = []
        for pid, (k, members) in enumerate(spans):
            rows.append(dict(kind="cpu" if k == 0 else "gpu", vertices=int(members.size),
                             edges=int(degree[members].sum()),
                             boundary_edges=int(boundary[pid]),
                             remote_vertices=int(np.count_nonzero(mark[pid]))))
        mark[:len(spans)] = 0
        cpu_edges = sum(r["edges"] for r in rows if r["kind"] == "cpu")
        out.append(dict(cpu_share=share, alpha=cpu_edges / total, partitions=rows,
                        beta=sum(r["boundary_edges"] for r in rows) / total,
                        beta_aggregated=sum(r["remote_vertices"] for r in rows) / total))
    return out


def check_degrees(degree, ids=None):
    """An InputError if a vertex has 2**31 edges or more (`ids[i]` names vertex i, if given)."""
    if degree.size and degree.max() >= 2 ** 31:
        i = int(np.argmax(degree))
        raise InputError(f"vertex {i if ids is None else int(ids[i])} has {int(degree[i])} "
                         f"edges: the partitioner supports degrees below 2**31")


def narrow_owners(owner, n_partitions):
    """`owner` as uint8 when the pids fit: the marking pass reads one per edge, at random, and
    a quarter of the bytes stay in cache longer."""
    return owner.astype(np.uint8) if n_partitions <= 255 else owner


def check_codes(n_codes):
    """An InputError if a partition and its ghosts have 2**32 vertices or more (a view's table
    holds a code in 32 bits)."""
    if n_codes > _k.CODE_MASK:
        raise InputError(f"a partition with its ghosts has {n_codes} vertices: the partitioner "
                         f"supports fewer than 2**32")


def view_tables(plan, indptr):
    """What building a plan's views takes from the graph's row offsets: a mark per vertex, the
    per-vertex table (its sort key by degree, then its code in the partition being built), the
    partitions' vertices one after another with their offsets, and the owners narrowed."""
    degree = np.diff(indptr)
    check_degrees(degree)
    table = np.empty(degree.size, dtype=np.int64)
    _k.plan_keys(degree, table)
    order = np.concatenate(plan.gvids)
    part_ptr = np.concatenate([[0], np.cumsum([v.size for v in plan.gvids])]).astype(np.int64)
    return (np.zeros(degree.size, dtype=np.uint8), table, order, part_ptr,
            narrow_owners(plan.owner, plan.n_partitions))


def _build_views(plan, g):
    n = g.n_vertices
    idx_dtype = index_dtype(n)
    mark, table, order, part_ptr, owner = view_tables(plan, g.indptr)
    has_w = g.weights is not None
    w_dtype = weights_dtype(g.weights)    # float32 where that holds them exactly
    views = []
    for pid, gvids in enumerate(plan.gvids):
        by_id = _o.sorted_ids(gvids)       # the rows in the graph's order: read front to back
        boundary = _k.plan_mark_remote(g.indptr, g.indices, by_id, owner, pid, mark,
                                       _k.ID_ORDER_RUN)
        _k.plan_codes(table, gvids, 0)
        # ghosts grouped by owner, each group in the owner's local order (its inbox is then
        # walked in order): each owner's vertices filtered by the marks, no sort
        ghost_ptr = np.empty(len(plan.gvids) + 1, dtype=np.int64)
        ghosts = _k.plan_ghosts(mark, order, part_ptr, table, gvids.size, ghost_ptr)
        check_codes(gvids.size + ghosts.size)
        indptr = np.zeros(gvids.size + 1, dtype=np.int64)
        _k.plan_row_degrees(g.indptr, gvids, indptr)
        np.cumsum(indptr, out=indptr)
        # local ids of ghosts are offset by n_local, so they need room beyond the vertex count
        local_dtype = np.int32 if gvids.size + ghosts.size <= np.iinfo(np.int32).max else np.int64
        indices = np.empty(int(indptr[-1]), dtype=local_dtype)
        weights = np.empty(indices.size if has_w else 0, dtype=w_dtype)
        dest = _o.take(indptr, _o.take(plan.lvid_of, by_id))
        _k.plan_fill(g.indptr, g.indices, g.weights if has_w else weights, has_w, by_id, dest,
                     table, gvids.size, indices, weights, _k.ID_ORDER_RUN)
        views.append(LocalView(indptr, indices, weights if has_w else None, gvids.size,
                               ghosts.astype(idx_dtype), ghost_ptr, int(boundary)))
    return _owner_side(views, plan)


def _owner_side(views, plan):
    """Which of its vertices peers hold as ghosts, and where each peer's slots land, in every
    view of `views` (their `boundary_lvid` and `peer_pos`); returns `views`."""
    for q, view in enumerate(views):
        mine = [plan.lvid_of[v.ghost_gvid[v.ghost_ptr[q]:v.ghost_ptr[q + 1]]] for v in views]
        held = np.zeros(view.n_local, dtype=bool)      # marks, not np.unique: O(n), no sort
        for m in mine:
            held[m] = True
        view.boundary_lvid = np.flatnonzero(held).astype(np.int64)
        rank = np.cumsum(held, dtype=np.int64) - 1     # position of a held vertex in the list
        view.peer_pos = [rank[m] for m in mine]
    return views
