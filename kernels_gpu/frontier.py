"""Frontier helpers: `frontier_count`, CUDA twin of kernels_cpu/frontier.py (one grid-stride
kernel that reads the queue length on the device, so the host waits once per vote), and
`frontier_offsets`, the exclusive scan of a queue's degrees that the load-balanced push kernels
(lb_edge in _cuda.py) take."""

import cupy

from ._cuda import THREADS, function, i64, launch

SOURCE = r"""
__global__ void totem_frontier_degrees(const i64* indptr, const i64* queue, i64 qlen,
                                       i64* offs) {
    i64 i = global_thread();
    if (i == 0) offs[0] = 0;
    if (i < qlen) offs[i + 1] = indptr[queue[i] + 1] - indptr[queue[i]];
}

// counts (zeroed before) = (n, sum of degree[queue[:n]]) for n = *len; one atomic per warp
__global__ void totem_frontier_count(const i64* degree, const i64* queue, const i64* len,
                                     u64* counts) {
    i64 n = *len;
    u64 sum = 0;
    for (i64 i = global_thread(); i < n; i += (i64)gridDim.x * blockDim.x) sum += degree[queue[i]];
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0 && sum) atomicAdd(&counts[1], sum);
    if (global_thread() == 0) counts[0] = (u64)n;
}
"""

COUNT_BLOCKS = 264      # enough threads for a few per SM; each loops over its share


def frontier_offsets(indptr, queue, qlen):
    """(offs, total): offs[i] = edges of queue[:i], for i in 0..qlen; total = offs[qlen]."""
    offs = cupy.empty(qlen + 1, dtype=cupy.int64)
    launch(function(SOURCE, "totem_frontier_degrees"), max(qlen, 1),
           (indptr, queue, i64(qlen), offs))
    offs = cupy.cumsum(offs)
    return offs, int(offs[qlen])


def frontier_count(out_degree, queue, next_len, counts):
    """counts = (n, sum of out-degrees of queue[:n]) for n = next_len[0]; then next_len[0] = 0
    (all queued on the current stream: the caller reads counts after one copy)."""
    stream = cupy.cuda.get_current_stream().ptr
    cupy.cuda.runtime.memsetAsync(counts.data.ptr, 0, counts.nbytes, stream)
    function(SOURCE, "totem_frontier_count")((COUNT_BLOCKS,), (THREADS,),
                                             (out_degree, queue, next_len, counts))
    cupy.cuda.runtime.memsetAsync(next_len.data.ptr, 0, next_len.nbytes, stream)
