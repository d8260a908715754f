"""Generated graphs: `rmat:SCALE[:EDGEFACTOR]` (Graph500 Kronecker), `uniform:SCALE[:EDGEFACTOR]`
and `road:SCALE` (a road-like grid).

n = 2**SCALE vertices and EDGEFACTOR * n generated edges (default 16). R-MAT uses the Graph500
parameters A=.57 B=.19 C=.19 D=.05 and, like Graph500, permutes the vertex ids with a seeded
scramble (otherwise vertex 0 is always the hub). Self-loops and duplicate edges are removed
afterwards, so a graph has fewer edges than were generated; `undirected` symmetrises first and
then removes duplicates.
A road graph has the high diameter and low degree of a road network: the vertices form a grid
of 2**ceil(SCALE/2) columns, each joined to its right and lower neighbour with probability
ROAD_KEEP, plus, with probability ROAD_EXTRA, one edge to a vertex at most ROAD_REACH steps away
on each axis (average degree about 3). Road graphs are undirected whatever `undirected` says,
and their ids follow the grid's rows, as road files' ids follow geography.
A given seed gives the same graph whatever the thread count.
"""

import os
import re

import numpy as np

from kernels_cpu import buckets as _buckets
from kernels_cpu import generate as _gen

from .errors import InputError, check_count, check_memory
from .graph import Graph, csr_bytes, index_dtype

GENERATORS = ("rmat", "uniform", "road")
DEFAULT_EDGE_FACTOR = 16
MAX_SCALE = 40
RMAT_ABCD = (0.57, 0.19, 0.19, 0.05)
WEIGHT_RANGE = (1, 255)
ROAD_KEEP, ROAD_EXTRA, ROAD_REACH = 0.7, 0.1, 3
# independent hash streams for the parts drawn from one user seed
_EDGE_STREAM, _WEIGHT_STREAM = 0x5EED0001, 0x5EED0002


def parse_spec(spec):
    """'rmat:20' -> ('rmat', 20, 16); bad specs raise InputError naming the spec."""
    usage = "expected rmat:SCALE[:EDGEFACTOR], uniform:SCALE[:EDGEFACTOR] or road:SCALE"
    parts = str(spec).split(":")
    kind = parts[0].lower()
    if kind not in GENERATORS:
        raise InputError(f"unknown graph generator '{parts[0]}' in '{spec}': {usage}")
    if len(parts) not in ((2,) if kind == "road" else (2, 3)):
        raise InputError(f"bad graph spec '{spec}': {usage}")
    if not all(re.fullmatch(r"[0-9]+", p) for p in parts[1:]):
        raise InputError(f"bad graph spec '{spec}': SCALE and EDGEFACTOR must be integers "
                         f"({usage})")
    scale = int(parts[1])
    edge_factor = int(parts[2]) if len(parts) == 3 else 3 if kind == "road" else \
        DEFAULT_EDGE_FACTOR
    if not 1 <= scale <= MAX_SCALE:
        raise InputError(f"bad graph spec '{spec}': SCALE must be from 1 to {MAX_SCALE}")
    if edge_factor < 1:
        raise InputError(f"bad graph spec '{spec}': EDGEFACTOR must be at least 1")
    return kind, scale, edge_factor


def rmat_tables(a, b, c, d):
    """The alias tables of `rmat_edges` for quadrant probabilities a, b, c, d (four levels)."""
    quadrant = np.array([a, b, c, d])
    outcomes = np.arange(256)
    digits = [(outcomes >> (2 * (3 - k))) & 3 for k in range(4)]   # first level in the high bits
    prob = np.prod([quadrant[q] for q in digits], axis=0)
    block_u = sum(((q >> 1) << (3 - k)) for k, q in enumerate(digits)).astype(np.int64)
    block_v = sum(((q & 1) << (3 - k)) for k, q in enumerate(digits)).astype(np.int64)
    # Vose's alias method
    scaled = prob / prob.sum() * 256
    keep = np.ones(256)
    alias = outcomes.copy()
    small = [i for i in range(256) if scaled[i] < 1]
    large = [i for i in range(256) if scaled[i] >= 1]
    while small and large:
        s, g = small.pop(), large.pop()
        keep[s], alias[s] = scaled[s], g
        scaled[g] -= 1 - scaled[s]
        (small if scaled[g] < 1 else large).append(g)
    keep_24 = np.minimum(np.round(keep * 2**24), 2**24).astype(np.uint64)
    return keep_24, alias.astype(np.uint64), block_u, block_v


_RMAT_TABLES = rmat_tables(*RMAT_ABCD)


def check_seed(seed):
    """`seed` as an int in [0, 2**64), the seeds that give different graphs (InputError
    otherwise: a larger one would give the graph of the seed it equals modulo 2**64)."""
    seed = check_count(seed, "--seed")
    if seed >= 2**64:
        raise InputError(f"--seed must be below 2**64, got {seed}")
    return seed


def _stream_seed(seed, stream):
    return np.uint64(_gen.mix64(np.uint64((int(seed) * 0x100000001B3 + stream) % 2**64)))


def generate(spec, seed=0, undirected=False, weighted=False):
    """The graph of a generator spec; weighted attaches integer weights in [1, 255] (float64)."""
    kind, scale, edge_factor = parse_spec(spec)
    seed = check_seed(seed)
    undirected = undirected or kind == "road"
    n_vertices = 1 << scale
    n_generated = edge_factor * n_vertices
    idx = index_dtype(n_vertices)
    rows = n_generated * (2 if undirected else 1)
    # edge arrays + their entries bucketed (8 bytes each) + the CSR (upper bound) + weights
    check_memory(2 * n_generated * idx.itemsize + 8 * rows + csr_bytes(n_vertices, rows)
                 + (8 * rows if weighted else 0), f"graph '{spec}'")
    indptr, indices = _clean_csr(kind, scale, edge_factor, seed, undirected)
    weights = edge_weights(indptr, indices, seed) if weighted else None
    return Graph(indptr, indices, weights, spec=str(spec), directed=not undirected, checked=False)


def edge_weights(indptr, indices, seed, first=0):
    """The weights of generated edges (rows first, first + 1, ... of the graph): integers in
    WEIGHT_RANGE hashed from the seed and the unordered pair, so any block of rows gets the same
    weights as the whole graph does."""
    weights = np.empty(indices.size, dtype=np.float64)
    _gen.edge_weights(indptr, indices, _stream_seed(seed, _WEIGHT_STREAM), WEIGHT_RANGE[0],
                      WEIGHT_RANGE[1], weights, first)
    return weights


def raw_edges(kind, scale, edge_factor, seed, first=0, count=None):
    """The generated (src, dst) arrays of edges first .. first + count - 1 (by default all
    edge_factor x 2**scale of them), before cleanup (self-loops and duplicates included). Every
    edge has its own random stream, so any range is the same as that slice of the whole."""
    n_vertices = 1 << scale
    idx = index_dtype(n_vertices)
    if count is None:
        count = edge_factor * n_vertices - first
    src = np.empty(count, dtype=idx)
    dst = np.empty(count, dtype=idx)
    edge_seed = _stream_seed(seed, _EDGE_STREAM)
    if kind == "rmat":
        a, b, c, _ = RMAT_ABCD
        t_a, t_ab, t_abc = (np.uint64(round(p * 2**32)) for p in (a, a + b, a + b + c))
        keys = np.random.default_rng(int(seed) % 2**64).integers(0, 2**63, 3, dtype=np.uint64)
        keys = keys * np.uint64(2) + np.uint64(1)      # odd: multiplication is then invertible
        _gen.rmat_edges(scale, edge_seed, t_a, t_ab, t_abc, *_RMAT_TABLES, keys, src, dst,
                        first)
    elif kind == "road":
        keep, extra = (np.uint64(round(p * 2**32)) for p in (ROAD_KEEP, ROAD_EXTRA))
        _gen.road_edges(scale, edge_seed, keep, extra, ROAD_REACH, src, dst, first)
    else:
        _gen.uniform_edges(n_vertices, edge_seed, src, dst, first)
    return src, dst


class Generator:
    """A generator spec with its seed, as the ranks' loader takes it
    (partitioners.distributed.generate_share): the graph's size, any range of its raw edges, the
    weights of any block of rows, and whether its edges go both ways whatever the run asks
    (`symmetric`: road graphs)."""

    def __init__(self, spec, seed=0):
        self.kind, self.scale, self.edge_factor = parse_spec(spec)
        self.spec, self.seed = str(spec), check_seed(seed)
        self.n_vertices = 1 << self.scale
        self.n_raw_edges = self.edge_factor * self.n_vertices
        self.symmetric = self.kind == "road"

    def edges(self, first, count):
        return raw_edges(self.kind, self.scale, self.edge_factor, self.seed, first, count)

    def weights(self, indptr, indices, first_row):
        return edge_weights(indptr, indices, self.seed, first_row)


def _clean_csr(kind, scale, edge_factor, seed, undirected):
    """CSR of the generated edges (with undirected, of both directions), rows sorted, without
    self-loops or duplicates (kernels_cpu/buckets.py)."""
    src, dst = raw_edges(kind, scale, edge_factor, seed)
    buckets = _buckets.bucketed(src, dst, 1 << scale, scale, mirror=undirected)
    del src, dst
    return _buckets.sorted_csr(buckets)


def is_generator(spec):
    """Whether `--graph SPEC` names a generator rather than a file: a spec with a colon is a file
    when it names one or ends in a graph file's extension (`my:graph.txt`), else a generator; a
    generator's name with numbers (`rmat:3:8`) is a generator even where such a file exists, an
    existing file with other text after the name (`rmat:3.txt`) is that file."""
    from .io import FORMATS
    from .store import EXTENSION
    spec = os.fspath(spec)
    head, _, rest = spec.partition(":")
    looks_like_file = os.path.exists(spec) or "/" in spec or any(
        spec.lower().removesuffix(".gz").endswith(ext) for ext in (*FORMATS, EXTENSION))
    if ":" in spec and head.lower() in GENERATORS:
        return not (os.path.exists(spec) and not rest.replace(":", "").isdigit())
    return ":" in spec and not looks_like_file


def graph_from_spec(spec, seed=0, undirected=False, weighted=False, **load_options):
    """`--graph SPEC`: a generator spec (rmat:..., uniform:..., road:...) or a file (`is_generator`).
    `weighted` applies to generated graphs; a file's weights come from the file, read by
    `totem_py.io.load` (or `totem_py.store.load`, a .tcsr file) with `load_options`."""
    spec = os.fspath(spec)
    if is_generator(spec):
        return generate(spec, seed=seed, undirected=undirected, weighted=weighted)
    from . import store
    from .io import load
    if store.is_store(spec):
        return store.load(spec, undirected=undirected, **load_options)
    return load(spec, undirected=undirected, **load_options)
