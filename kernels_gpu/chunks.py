"""Chunk bookkeeping for streamed edges, CUDA twins of kernels_cpu/chunks.py (same names,
arguments and results; `chunk_copy` has none: compaction runs on the CPU).

chunk_stats: a grid-stride loop, one queue item per thread at a time; per-chunk totals gather in
shared memory and each block adds them to the global ones once (MAX_CHUNKS chunks at most, which
the stream guarantees by widening its chunks); a cached vertex takes the pseudo chunk `nchunks`,
which has no shared slot and adds to no total. chunk_hotness: one thread per queue item, a 64-bit
atomicAdd on the row's hotness. chunk_cache_load: the advance operator's load-balanced walk over
the edges of the rows gathered (kernels_gpu/operators.py's gather_rows), reading the source
array where it lies (the mapped host edges of a streamed partition); the stream calls it once for
the ids and once for the weights. chunk_row_stats: a grid-stride loop, one row per thread at a time
(rows are reads' length; a chunk may hold millions of empty rows); a warp whose rows lie in one
chunk sums them with shuffles first, then totals gather in shared memory as in chunk_stats
(counts must start at zero). chunk_split: one item per thread; a block counts
its items per segment in shared memory, reserves room for them with one atomic per segment, then
writes them. chunk_index: one thread per item.
"""

import numpy as np

from ._cuda import THREADS, function, i64, launch
from .operators import gather_rows

MAX_CHUNKS = 1024

SOURCE = r"""
#define MAX_CHUNKS 1024
__device__ __forceinline__ int chunk_of(const i64* starts, int nchunks, i64 v) {
    int lo = 0, hi = nchunks;          // the last c with starts[c] <= v
    while (hi - lo > 1) {
        int mid = (lo + hi) >> 1;
        if (starts[mid] <= v) lo = mid; else hi = mid;
    }
    return lo;
}
__device__ __forceinline__ u64 lines(i64 a, i64 b, i64 width) {
    return (u64)((b * width - 1) / 128 - (a * width) / 128 + 1);
}
// per-chunk totals of one block, in shared memory; every thread of the block calls both
// functions (they synchronise it): zero them, then add the nonzero ones to the global totals
struct Totals { u64 count[MAX_CHUNKS], edges[MAX_CHUNKS], lines[MAX_CHUNKS]; };
__device__ __forceinline__ void totals_zero(Totals& s, int nchunks) {
    for (int c = threadIdx.x; c < nchunks; c += blockDim.x) s.count[c] = s.edges[c] = s.lines[c] = 0;
    __syncthreads();
}
__device__ __forceinline__ void totals_flush(const Totals& s, int nchunks, u64* counts,
                                             u64* edges, u64* nlines) {
    __syncthreads();
    for (int c = threadIdx.x; c < nchunks; c += blockDim.x) {
        if (s.count[c]) {
            atomicAdd(&counts[c], s.count[c]);
            atomicAdd(&edges[c], s.edges[c]);
            atomicAdd(&nlines[c], s.lines[c]);
        }
    }
}
__global__ void totem_chunk_stats(const i64* indptr, const i64* queue, i64 qlen,
                                  const i64* starts, int nchunks, i64 width, i64 wwidth,
                                  const unsigned char* cached, i64* cid, u64* counts, u64* edges,
                                  u64* nlines) {
    __shared__ Totals s;
    totals_zero(s, nchunks);
    for (i64 i = global_thread(); i < qlen; i += (i64)gridDim.x * blockDim.x) {
        i64 v = queue[i];
        if (cached[v]) {
            cid[i] = nchunks;
            continue;
        }
        int c = chunk_of(starts, nchunks, v);
        cid[i] = c;
        atomicAdd(&s.count[c], 1ULL);
        i64 a = indptr[v], b = indptr[v + 1];
        if (b > a) {
            u64 l = lines(a, b, width);
            if (wwidth) l += lines(a, b, wwidth);
            atomicAdd(&s.edges[c], (u64)(b - a));
            atomicAdd(&s.lines[c], l);
        }
    }
    totals_flush(s, nchunks, counts, edges, nlines);
}

__global__ void totem_chunk_hotness(const i64* indptr, const i64* queue, i64 qlen, i64 first,
                                    i64* hot) {
    i64 i = global_thread();
    if (i >= qlen) return;
    i64 v = queue[i];
    if (v >= first) atomicAdd((u64*)&hot[v], (u64)(indptr[v + 1] - indptr[v]));
}

__global__ void totem_chunk_row_stats(const i64* indptr, const unsigned char* reads, i64 n,
                                      const i64* starts, int nchunks, i64 width, i64 wwidth,
                                      u64* counts, u64* edges, u64* nlines) {
    __shared__ Totals s;
    totals_zero(s, nchunks);
    const unsigned full = 0xffffffffu;
    for (i64 base = (i64)blockIdx.x * blockDim.x; base < n; base += (i64)gridDim.x * blockDim.x) {
        i64 v = base + threadIdx.x;          // the whole warp stays in the loop (shuffles below)
        u64 nv = 0, ne = 0, nl = 0;
        int c = 0;
        if (v < n) {
            c = chunk_of(starts, nchunks, v);
            unsigned char r = reads[v];
            i64 a = r ? indptr[v] : 0, b = r ? indptr[v + 1] : 0;
            if (b > a) {
                nv = 1;
                ne = r == 1 ? 1 : (u64)(b - a);
                nl = r == 1 ? (wwidth ? 2 : 1)
                            : lines(a, b, width) + (wwidth ? lines(a, b, wwidth) : 0);
            }
        }
        int c0 = __shfl_sync(full, c, 0);
        if (__all_sync(full, c == c0 || v >= n)) {     // one chunk: sum over the warp first
            for (int o = 16; o > 0; o >>= 1) {
                nv += __shfl_down_sync(full, nv, o);
                ne += __shfl_down_sync(full, ne, o);
                nl += __shfl_down_sync(full, nl, o);
            }
            c = c0;
            if ((threadIdx.x & 31) != 0) nv = 0;
        }
        if (nv) {
            atomicAdd(&s.count[c], nv);
            atomicAdd(&s.edges[c], ne);
            atomicAdd(&s.lines[c], nl);
        }
    }
    totals_flush(s, nchunks, counts, edges, nlines);
}

__global__ void totem_chunk_split(const i64* queue, i64 qlen, const i64* cid,
                                  const i64* seg_of_chunk, int nsegs, u64* pos, i64* out) {
    __shared__ unsigned int s_count[MAX_CHUNKS];
    __shared__ u64 s_base[MAX_CHUNKS];
    for (int s = threadIdx.x; s < nsegs; s += blockDim.x) s_count[s] = 0;
    __syncthreads();
    i64 i = global_thread();
    int seg = -1;
    unsigned int r = 0;
    if (i < qlen) {
        seg = (int)seg_of_chunk[cid[i]];
        r = atomicAdd(&s_count[seg], 1u);
    }
    __syncthreads();
    for (int s = threadIdx.x; s < nsegs; s += blockDim.x)
        if (s_count[s]) s_base[s] = atomicAdd(&pos[s], (u64)s_count[s]);
    __syncthreads();
    if (seg >= 0) out[s_base[seg] + r] = queue[i];
}

__global__ void totem_chunk_index(const i64* queue, i64 qlen, const i64* offsets, i64* index) {
    i64 i = global_thread();
    if (i >= qlen) return;
    i64 v = queue[i];
    index[v] = offsets[i];
    index[v + 1] = offsets[i + 1];
}
"""


def chunk_stats(indptr, queue, qlen, starts, width, wwidth, cached, cid, counts, edges, lines):
    nchunks = starts.size - 1
    assert nchunks <= MAX_CHUNKS
    blocks = max(1, min((int(qlen) + THREADS - 1) // THREADS, 1024))
    if qlen > 0:
        function(SOURCE, "totem_chunk_stats")(
            (blocks,), (THREADS,), (indptr, queue, i64(qlen), starts, np.int32(nchunks),
                                    i64(width), i64(wwidth), cached, cid, counts, edges, lines))


def chunk_hotness(indptr, queue, qlen, first, hot):
    launch(function(SOURCE, "totem_chunk_hotness"), qlen,
           (indptr, queue, i64(qlen), i64(first), hot))


def chunk_cache_load(indptr, src, rows, nrows, offsets, out):
    gather_rows(indptr, src, rows, int(nrows), offsets, out)


def chunk_row_stats(indptr, reads, starts, width, wwidth, counts, edges, lines):
    nchunks = starts.size - 1
    assert nchunks <= MAX_CHUNKS
    n = int(reads.size)
    blocks = max(1, min((n + THREADS - 1) // THREADS, 1024))
    if n > 0:
        function(SOURCE, "totem_chunk_row_stats")(
            (blocks,), (THREADS,), (indptr, reads, i64(n), starts, np.int32(nchunks), i64(width),
                                    i64(wwidth), counts, edges, lines))


def chunk_split(queue, qlen, cid, seg_of_chunk, pos, out):
    nsegs = int(pos.size)
    assert nsegs <= MAX_CHUNKS
    launch(function(SOURCE, "totem_chunk_split"), qlen,
           (queue, i64(qlen), cid, seg_of_chunk, np.int32(nsegs), pos, out))


def chunk_index(queue, qlen, offsets, index):
    launch(function(SOURCE, "totem_chunk_index"), qlen, (queue, i64(qlen), offsets, index))


