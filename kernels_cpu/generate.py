"""Graph generators (Graph500 R-MAT, uniform random, road-like grids) and the weights of
generated edges.

Every edge draws its random numbers from its own stream, started from a hash (SplitMix64's
finaliser) of (seed, edge index), never from a per-thread stream, so a graph depends on its seed
only, not on the thread count. The generated edges become a CSR in kernels_cpu/buckets.py.
Graphs of at most jit.SMALL_GRAPH edges take every kernel's serial form (`graph_kernel`).
"""

import numpy as np
from numba import njit, prange

from .jit import graph_kernel

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_XS_MUL = np.uint64(0x2545F4914F6CDD1D)


@njit(cache=True, nogil=True)
def mix64(z):
    """SplitMix64 finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _xorshift_star(state):
    """One xorshift64* step: (new state, 64-bit output)."""
    state ^= state >> np.uint64(12)
    state ^= state << np.uint64(25)
    state ^= state >> np.uint64(27)
    return state, state * _XS_MUL


@njit(cache=True, nogil=True, inline="always")
def _rmat_level(u, v, r, t_a, t_ab, t_abc):
    """Descend one level: quadrant A (0,0) if r < t_a, B (0,1), C (1,0), else D (1,1).
    Branch-free: the quadrant is random, so branches would mispredict half the time."""
    bu = np.int64(r >= t_ab)
    bv = np.int64(r >= t_a) - bu + np.int64(r >= t_abc)
    return (u << 1) | bu, (v << 1) | bv


@njit(cache=True, nogil=True, inline="always")
def _scramble(v, mask, shift, keys):
    """A seeded bijection of [0, 2**scale) (as Graph500's scramble): rounds of add a key, multiply
    by an odd key and xor-shift, each invertible modulo 2**scale. No table, so no random reads."""
    x = np.uint64(v)
    for r in range(keys.size):
        x = ((x + (keys[r] >> np.uint64(17))) * keys[r]) & mask
        x ^= x >> shift
    return x


@njit(cache=True, nogil=True, inline="always")
def _rmat_block(u, v, r, table):
    """Descend four levels at once: one of the 256 outcomes drawn with Walker's alias method from
    a 32-bit draw (8 bits pick a bucket, 24 bits decide bucket or its alias). Branch free: the
    bucket's table entry holds its threshold and the row / column bits of both outcomes
    (`_alias_table`), and the comparison picks which byte to take."""
    t = table[r >> np.uint64(24)]
    alias = np.uint64((r & np.uint64(0xFFFFFF)) >= (t & np.uint64(0xFFFFFF)))
    uv = (t >> (np.uint64(24) + (alias << np.uint64(3)))) & np.uint64(0xFF)
    return (u << 4) | np.int64(uv >> np.uint64(4)), (v << 4) | np.int64(uv & np.uint64(15))


@njit(cache=True, nogil=True)
def _alias_table(keep, alias, block_u, block_v):
    """Per bucket b of the alias tables: keep[b] (24 bits), then the row and column bits of
    outcome b, then those of its alias (a byte each, row bits high)."""
    table = np.empty(256, np.uint64)
    for b in range(256):
        a = alias[b]
        own = np.uint64(block_u[b] * 16 + block_v[b])
        other = np.uint64(block_u[a] * 16 + block_v[a])
        table[b] = keep[b] | (own << np.uint64(24)) | (other << np.uint64(32))
    return table


@graph_kernel("src")
def rmat_edges(scale, seed, t_a, t_ab, t_abc, keep, alias, block_u, block_v, keys, src, dst,
               first=0):
    """Graph500 Kronecker edges with scrambled ids: edges first, first + 1, ... into src, dst
    (an MPI rank generates its own range of the edges).

    Levels go four at a time through the alias tables of the 4-level outcome distribution
    (keep, alias, and the 4 row / column bits block_u, block_v of each outcome), the last
    scale % 4 one at a time: a 32-bit draw against the cumulative thresholds t_a < t_ab < t_abc
    (the probabilities scaled by 2**32). Each edge has its own xorshift64* stream, started from a
    hash of (seed, edge index). keys: odd uint64 multipliers of the id scramble."""
    mask = np.uint64((1 << scale) - 1)
    shift = np.uint64((scale + 1) // 2)
    table = _alias_table(keep, alias, block_u, block_v)
    for i in prange(src.size):
        e = first + i
        state = mix64(seed ^ (np.uint64(e) * _GOLDEN)) | np.uint64(1)   # xorshift needs != 0
        u = 0
        v = 0
        for _ in range(scale // 8):
            state, x = _xorshift_star(state)
            u, v = _rmat_block(u, v, x & _LOW32, table)
            u, v = _rmat_block(u, v, x >> np.uint64(32), table)
        if scale % 8 >= 4:
            state, x = _xorshift_star(state)
            u, v = _rmat_block(u, v, x >> np.uint64(32), table)
        for _ in range(scale % 4):
            state, x = _xorshift_star(state)
            u, v = _rmat_level(u, v, x >> np.uint64(32), t_a, t_ab, t_abc)
        src[i] = _scramble(u, mask, shift, keys)
        dst[i] = _scramble(v, mask, shift, keys)


@graph_kernel("src")
def uniform_edges(n_vertices, seed, src, dst, first=0):
    """Uniform random edges first, first + 1, ... into src, dst."""
    n = np.uint64(n_vertices)
    for i in prange(src.size):
        x = mix64(seed ^ (np.uint64(first + i) * _GOLDEN))
        y = mix64(x + _GOLDEN)
        src[i] = x % n
        dst[i] = y % n


@graph_kernel("src")
def road_edges(scale, seed, keep, extra, reach, src, dst, first=0):
    """Road-like edges first, first + 1, ... into src, dst: vertex v = y x W + x of a W x H grid
    (W = 2**ceil(scale / 2)) has three edge slots, 3v + k: k = 0 to (x + 1, y) and k = 1 to
    (x, y + 1), each present with probability keep / 2**32, and k = 2 to a vertex at most
    `reach` steps away on each axis, present with probability extra / 2**32. A slot without an
    edge, or one leaving the grid, is the self-loop (v, v), which the cleanup removes."""
    width_bits = (scale + 1) // 2
    width = np.int64(1) << width_bits
    height = np.int64(1) << (scale - width_bits)
    span = np.uint64(2 * reach + 1)
    for i in prange(src.size):
        e = first + i
        h = mix64(seed ^ (np.uint64(e) * _GOLDEN))
        v = e // 3
        k = e - 3 * v
        x = v & (width - 1)
        y = v >> width_bits
        if k == 2:
            dx = np.int64((h >> np.uint64(32)) % span) - reach
            dy = np.int64((h >> np.uint64(48)) % span) - reach
            present = (h & _LOW32) < extra
        else:
            dx = np.int64(1 - k)
            dy = np.int64(k)
            present = (h & _LOW32) < keep
        tx = x + dx
        ty = y + dy
        src[i] = v
        dst[i] = ty * width + tx if present and 0 <= tx < width and 0 <= ty < height else v


@graph_kernel("indices")
def edge_weights(indptr, indices, seed, low, high, out, first=0):
    """Integer weights in [low, high] hashed from the unordered pair, so (u, v) and (v, u) agree.
    Row u is vertex first + u."""
    span = np.uint64(high - low + 1)
    for r in prange(indptr.size - 1):
        u = first + r
        for e in range(indptr[r], indptr[r + 1]):
            v = indices[e]
            a = np.uint64(min(u, v))
            b = np.uint64(max(u, v))
            h = mix64(mix64(seed ^ (a * _GOLDEN)) + b)
            out[e] = low + float(h % span)
