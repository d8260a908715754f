"""Single-source shortest paths: distances from one source (+inf unreachable).

Delta-stepping with Davidson et al.'s near-far lists: a step relaxes the near list (the vertices
lowered below the bucket's bound and not relaxed since) and lowered vertices go onto the near list
or, at or above the bound, onto the far list (the later buckets), each at most once, as a `pending`
flag per vertex says: FAR, or the mark of the near list it was put on (each step's list has a new
mark, so the step's queue needs no pass to take its vertices off the list; when the flags' type
runs out of marks, one pass over the vertices starts them over). When no partition has near
vertices the bound moves to the bucket of the smallest pending distance (`finished`; buckets
widen while the far lists shrink), found without a scan: `far_min` is a lower bound of the far
distances kept by the writers in slots on their own cache lines: 64 on a CPU (one slot, a hot
address for every thread, took CPU-only SSSP on rmat:24 with 16 threads to 2627 ms against 558
for per-block minima on one host; 64 slots: 603 against 674 on another), one on a GPU, whose
atomics resolve in L2 and whose threads skip most of them after a plain read of the one slot;
the far list is split once per bucket.
delta = inf is plain frontier Bellman-Ford. Messages are tentative distances, min-combined.
Paths: sync-push-dd (a step relaxes the near list once) and async-push-dd (`--path auto`'s): a
partition relaxes its near list round after round and, when it empties, moves on to its own next
bucket (the one of its far lists' smallest distance, `next_round`), until its lists are empty;
then it exchanges. Each partition keeps its own bound, never below the run's (`finished`'s), so
a message below it joins the near list and one above the far list: distances are corrected
wherever they drop (label-correcting), and the run ends, with Dijkstra's distances, when no list
holds a vertex anywhere. One partition then takes one superstep; several take about as many as
shortest paths cross between them.
Races: distances drop through atomic_min; the writer that lowers a local vertex claims its list
with atomic_max on its flag (0 -> FAR, or anything -> the mark), and only the claimer appends it; a
vertex moved from far to near leaves a stale far entry that the next split drops. The plain reads
before the atomics only skip updates that cannot win: distances never grow.
Result: the distance of every vertex from the source (float64, +inf unreachable); weights from
the graph, else 1, never negative. Serial reference: Dijkstra with a binary heap (parallel edges:
the lightest counts; self-loops never shorten a path). Verifier: dist(source) = 0; no edge can
still be relaxed; every other finite vertex has a tight in-edge, and the tight edges reach every
finite vertex from the source (which rules out zero-weight cycles holding each other's distances
down); unreachable is +inf (parallel passes, kernels_cpu/checks.py). The engine and the verifier
add a weight to a float64 distance alike, so "relaxes" and "tight" compare dist(u) + w with
dist(v) exactly where the weights are whole numbers (or absent): the distances must then equal
the reference's; with other weights within ULPS units in the last place, so one wrong vertex
fails all the same.
"""

import heapq
import math

import numpy as np

from bsp import (Message, Mode, Vote, advance, atomic_max, atomic_min, device_function, put,
                 receive, vertex_map)
from kernels_cpu import checks

from ..errors import VerificationError
from .base import Algorithm, register
from .common import (SOURCE, as_result, checked_source, collect, edge_ends, first, owned_lvid,
                     source_vertex)

DIST = Message(np.float64, "min", np.inf)
FAR, FIRST_MARK = 1, 2     # pending flags: on the far list; near lists' marks from 2 (0: neither)
GPU_WIDER = 2
SPARSE = 16     # mean degree below which buckets widen (default_delta)
ULPS = 4        # the verifier's slack for fractional weights, in units in the last place
CPU_SLOTS, LINE = 64, 8     # far_min: slots of LINE float64 (a 64-byte line each); 1 on a GPU


@device_function
def lower_far_min(v, d, far_min):
    """far_min's slot of vertex v (v modulo the slots, a power of two) drops to d if d is below
    it."""
    slot = (v & (far_min.size // LINE - 1)) * LINE
    if d < far_min[slot]:
        atomic_min(far_min, slot, d)


@device_function
def listed(v, d, pending, mark, bound, far_min):
    """Vertex v's distance dropped to d: 1 to append it to the near list of `mark` (d < bound,
    not there yet), 2 to the far list (on neither), 0 for neither; lowers far_min for
    d >= bound. (A vertex once near is never lowered to a later bucket: its old marks, below
    `mark`, never meet the far test.)"""
    if d < bound:
        if pending[v] != mark and atomic_max(pending, v, mark) != mark:
            return 1
        return 0
    lower_far_min(v, d, far_min)
    if pending[v] == 0 and atomic_max(pending, v, FAR) == 0:
        return 2
    return 0


def relax(s, t, w, dist, pending, mark, bound, far_min, n_local):
    """`mark`: a one-element array holding the near list's mark."""
    nd = dist[s] + w
    if nd < dist[t]:
        old = atomic_min(dist, t, nd)
        if nd < old:
            if t >= n_local:
                return old == np.inf        # the ghost slot's first message this step
            return listed(t, nd, pending, mark[0], bound, far_min)
    return 0


def relax_message(v, m, dist, pending, mark, bound, far_min):
    if m < dist[v] and m < atomic_min(dist, v, m):
        return listed(v, m, pending, mark[0], bound, far_min)
    return 0


def split(v, dist, pending, mark, bound, far_min):
    """A far-list entry at a new bucket: 1 to the near list of `mark` (claimed FAR -> mark), 2
    to stay on the far list (lowering far_min), 0 to drop (stale: it left the far list)."""
    if pending[v] != FAR:
        return 0
    d = dist[v]
    if d < bound:
        return 1 if atomic_max(pending, v, mark) == FAR else 0
    lower_far_min(v, d, far_min)
    return 2


def unmarked(v, pending):
    """Marks start over: every vertex but the far list's is on no near list."""
    if pending[v] != FAR:
        pending[v] = 0
    return False


def widened(width, far_seen, far, delta):
    """The next bucket's width and the far length to compare with after it: twice the last
    while the far lists (`far` entries now, `far_seen` at the last bucket) shrink, else delta."""
    return (width * 2 if far < far_seen else delta), far


def default_delta(graph, gpus=False):
    """Bucket width: mean weight x 2 / mean degree (Meyer and Sanders' Theta(1/d), scaled to the
    weights; 2 was fastest among factors 1/64..64 on rmat:20-24), times SPARSE / mean degree
    where the mean degree is below SPARSE: a sparse graph of high diameter (a road network)
    would otherwise take thousands of buckets of a few vertices each (road:18-22, CPU: 4-8x
    wider took about half the time). GPUs want more work per
    superstep: GPU_WIDER times wider when every partition is a GPU (`experiments.sssp_delta`,
    docs/results/sssp_delta_h100.txt; wider buckets cost more relaxations than the supersteps
    they save, and more streamed edge bytes). A hybrid run keeps
    the CPU's width: its CPU partition holds the hubs (HIGH), and wide buckets relax each hub's
    row again each time a bucket lowers it."""
    if graph.n_edges == 0:
        return 1.0
    with np.errstate(over="ignore"):       # weights near the largest double: an infinite mean
        mean_w = float(graph.weights.mean()) if graph.weights is not None else 1.0
    mean_deg = graph.n_edges / max(graph.n_vertices, 1)
    width = mean_w * 2.0 / mean_deg * max(SPARSE / mean_deg, 1.0) * (GPU_WIDER if gpus else 1)
    return max(width, 1e-9)


def distances(graph, source):
    """The serial reference: Dijkstra (binary heap, lazy deletion) distances from `source`
    (float64, +inf unreachable); weights graph.weights (>= 0), or 1 for an unweighted graph.
    Every parallel edge is relaxed, so the lightest one wins."""
    n = graph.n_vertices
    if n == 0:
        return np.empty(0, dtype=np.float64)
    source = checked_source(graph, source, "sssp", ValueError)
    if graph.weights is not None and graph.n_edges and not (graph.weights >= 0).all():
        raise ValueError("Dijkstra needs non-negative weights")
    indptr = graph.indptr.tolist()
    indices = graph.indices.tolist()
    weights = graph.weights.tolist() if graph.weights is not None else [1.0] * graph.n_edges
    dist = [math.inf] * n
    done = [False] * n
    dist[source] = 0.0
    heap = [(0.0, source)]
    while heap:
        d, u = heapq.heappop(heap)
        if done[u]:
            continue  # a stale entry: u was settled with a smaller distance
        done[u] = True
        for e in range(indptr[u], indptr[u + 1]):
            v = indices[e]
            nd = d + weights[e]
            if nd < dist[v]:
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return np.array(dist, dtype=np.float64)


def verify_distances(graph, source, dist, rtol=None):
    """The verifier (the module docstring): None, or VerificationError naming the first bad
    vertex or edge. `rtol`: the relative slack of dist(u) + w against dist(v); by default 0
    where the weights are whole numbers, else ULPS units in the last place."""
    dist = as_result(graph, dist, "sssp")
    if graph.n_vertices == 0:
        return
    source = checked_source(graph, source, "sssp")
    dist = dist.astype(np.float64)
    if dist[source] != 0:
        raise VerificationError(f"sssp: source {source} has distance {dist[source]}, expected 0")
    bad = np.isnan(dist) | (dist < 0)
    if bad.any():
        w = first(bad)
        raise VerificationError(f"sssp: vertex {w} has distance {dist[w]}")
    finite = np.isfinite(dist)
    # edges out of +inf vertices constrain nothing
    weights = graph.weights if graph.weights is not None else np.empty(0)
    if rtol is None:
        rtol = 0.0 if checks.integral(weights) else ULPS * 2.0 ** -52
    args = (graph.indptr, graph.indices, weights, graph.weights is not None, dist, rtol)
    has_tight = np.zeros(graph.n_vertices, dtype=np.uint8)
    e = checks.distance_edges(*args, has_tight)
    if e >= 0:
        u, v = edge_ends(graph, e)
        via = dist[u] + (weights[e] if graph.weights is not None else 1.0)
        raise VerificationError(f"sssp: vertex {v} has distance {dist[v]} but the edge from "
                                f"{u} gives {via}")
    has_tight[source] = 1
    bad = finite & (has_tight == 0)
    if bad.any():
        x = first(bad)
        raise VerificationError(f"sssp: vertex {x} has distance {dist[x]} but no in-edge gives it")
    on_tree = np.zeros(graph.n_vertices, dtype=np.uint8)
    checks.tight_reach(*args, source, on_tree)
    bad = finite & (on_tree == 0)
    if bad.any():
        x = first(bad)
        raise VerificationError(f"sssp: vertex {x} has distance {dist[x]} that no path from the "
                                f"source gives (a zero-weight cycle holds it down)")


@register
class SSSP(Algorithm):
    name = "sssp"
    modes = (Mode("push", "out", "push", DIST, state="dist", records=True),)
    paths = ("async-push-dd", "sync-push-dd")
    needs_weights = True
    nonnegative_weights = True      # Dijkstra's and delta-stepping's premise
    options = (SOURCE,)
    isolated = math.inf
    memory = (((160, 29, 0), (146, 29)), ((124, 9, 0), (110, 9)))

    def __init__(self, source, delta=None):
        self.source = source
        self.delta = delta

    @classmethod
    def from_options(cls, graph, source=None, seed=0, **_):
        return cls(source_vertex(graph, source, seed, cls.name))

    def traversed_edges(self, graph, values, records):
        return int(graph.out_degree[np.isfinite(values)].sum())

    def reference(self, graph):
        return distances(graph, self.source)

    def verify(self, graph, values):
        return verify_distances(graph, self.source, values)

    def start(self):
        self.bound = self.width = self.delta    # None until the first init chooses it
        self.far = 0.0          # the far lists' length at the last bucket

    def init(self, part):
        if self.delta is None:  # the default width, chosen once: it depends on the plan
            self.delta = self.bound = self.width = default_delta(part.plan.graph,
                                                                 part.gpus_only)
        s, n = part.state, part.n_local
        s.dist = part.alloc(np.float64, np.inf, ("out",))
        s.pending = part.flags(n)
        s.queue, s.queue_len = part.empty(n, np.int64), part.full(1, 0, np.int64)
        s.near, s.near_len = part.empty(n, np.int64), part.full(1, 0, np.int64)
        s.mark = FIRST_MARK     # the near list's, and on the device for the functors
        s.marks = part.full(1, FIRST_MARK, np.int64)
        s.last_mark = int(np.iinfo(s.pending.dtype).max)
        # a vertex enters the far list once at most (once near, its distance stays below every
        # later bound), so n entries are room enough, stale ones included
        s.far = part.empty(n, np.int64)
        s.far_len = part.full(1, 0, np.int64)
        s.keep = part.empty(n, np.int64)
        s.keep_len = part.full(1, 0, np.int64)
        slots = 1 if part.operator_package == "kernels_gpu" else CPU_SLOTS
        s.far_min = part.full(slots * LINE, np.inf, np.float64)
        s.bound = s.split_bound = self.bound    # this partition's: at least the run's
        s.width, s.far_seen = self.width, 0.0   # its own buckets' (async rounds), as the run's
        s.near_count = -1       # the near list's length when the last vote read it, else -1
        lv = owned_lvid(part, self.source)
        if lv is not None:
            put(part, s.dist, lv, 0.0)
            put(part, s.pending, lv, s.mark)
            put(part, s.near, 0, lv)
            put(part, s.near_len, 0, 1)

    def compute(self, part, step, mode, box):
        s = part.state
        s.bound = max(s.bound, self.bound)
        if s.split_bound != s.bound:     # a new bucket: its vertices come off the far list
            far_len = int(part.to_host(s.far_len, count=False)[0])
            put(part, s.keep_len, 0, 0)
            put(part, s.far_min, slice(None), np.inf)
            # both arrays the split reads are prefetched (their reads are random)
            vertex_map(part, split, s.dist, s.pending, s.mark, s.bound, s.far_min,
                       vertices=s.far, length=far_len, prefetch=(s.pending, s.dist),
                       out=((s.near, s.near_len), (s.keep, s.keep_len)))
            s.far, s.keep, s.far_len, s.keep_len = s.keep, s.far, s.keep_len, s.far_len
            s.split_bound = s.bound
            s.near_count = -1
        qlen = s.near_count
        if qlen < 0:
            qlen = int(part.to_host(s.near_len, count=False)[0])
        if s.mark == s.last_mark:
            vertex_map(part, unmarked, s.pending)
            s.mark = FIRST_MARK - 1
        s.mark += 1
        put(part, s.marks, 0, s.mark)
        s.queue, s.queue_len, s.near, s.near_len = s.near, s.near_len, s.queue, s.queue_len
        # async: the near list's small rounds go on in the same launch, each with the next mark
        rounds = ((s.marks, s.last_mark - s.mark) if part.path is not None
                  and part.path.asynchronous else None)
        more = advance(part, "out", s.queue, relax, s.dist, s.pending, s.marks, s.bound,
                       s.far_min, part.n_local, length=qlen, consume=s.queue_len,
                       out=((s.near, s.near_len), (s.far, s.far_len)), outbox=box,
                       rounds=rounds)
        s.mark += more
        if more % 2:        # the last round appended to the array the queue was in
            s.queue, s.near = s.near, s.queue

    def next_round(self, part, step, mode):
        """Async: the near list again while it holds vertices; else this partition's next
        bucket, the one of its far lists' smallest distance (far_min, a lower bound of them:
        the bucket may be empty, and its split gives the exact value); none when the far list
        holds no live vertex."""
        s = part.state
        near_len, far_min, far_len = part.to_host_all(s.near_len, s.far_min, s.far_len,
                                                      count=False, reuse="round")
        s.near_count = int(near_len[0])
        if s.near_count:
            return True
        key = float(far_min.min())
        if far_len[0] == 0 or not math.isfinite(key):
            return False
        s.width, s.far_seen = widened(s.width, s.far_seen, float(far_len[0]), self.delta)
        s.bound = (math.floor(key / s.width) + 1) * s.width
        return True

    def scatter(self, part, step, mode, inbox):
        s = part.state
        receive(part, inbox, relax_message, s.dist, s.pending, s.marks, s.bound, s.far_min,
                out=((s.near, s.near_len), (s.far, s.far_len)))

    def vote(self, part, step):
        """Active: the near list (the next step's queue); the key, once it is empty: far_min,
        the smallest far distance or below it (then the next bucket may be empty, and its split
        gives the exact value)."""
        s = part.state
        near_len, far_min, far_len = part.to_host_all(s.near_len, s.far_min, s.far_len,
                                                      count=False, reuse="vote")
        active = s.near_count = int(near_len[0])
        return Vote(active, 0, float(far_min.min()) if active == 0 else np.inf,
                    (float(far_len[0]),))

    def finished(self, total):
        """Go on while a partition has near vertices; then to the next bucket, the one holding
        the smallest far distance (the key), or stop when there is none. While the far lists
        (their lengths' total, the votes' `sums`) shrink from one bucket to the next, each is
        twice as wide as the last, back to delta when they grow: the distances' tail, a few
        vertices in each of many buckets, would otherwise take two supersteps per bucket
        (rmat:20 at the CPU's width: 94 supersteps, 26 with the doubling, the rows relaxed
        1.28 n and 1.27 n)."""
        if total.active:
            return False
        if not math.isfinite(total.key):
            return True
        self.width, self.far = widened(self.width, self.far, total.sums[0], self.delta)
        self.bound = (math.floor(total.key / self.width) + 1) * self.width
        return False

    def collect(self, parts, n_vertices):
        return collect(parts, n_vertices, "dist", np.float64, np.inf)
