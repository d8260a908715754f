"""Frontier helpers: `frontier_count`, CUDA twin of kernels_cpu/frontier.py (one grid-stride
kernel that reads the queue length on the device, so the host waits once per vote), and
`frontier_offsets`, the exclusive scan of a queue's degrees that the load-balanced advance
(advance_lb in operators.py) takes (one block's scan for a short queue: CuPy's cumsum makes
several launches, which cost as much as a near-empty superstep's other GPU work)."""

import cupy

from ._cuda import function, i64, launch, launch_strided

SCAN_THREADS = 1024
ONE_BLOCK = 1 << 15     # queues up to this long are scanned by one block, in one launch

SOURCE = f"#define SCAN_THREADS {SCAN_THREADS}\n" + r"""
__global__ void totem_frontier_degrees(const i64* indptr, const i64* queue, i64 qlen,
                                       i64* offs) {
    i64 i = global_thread();
    if (i == 0) offs[0] = 0;
    if (i < qlen) offs[i + 1] = indptr[queue[i] + 1] - indptr[queue[i]];
}

// the same offsets from one block (a short queue): each thread sums the degrees of its run of
// items, the block scans the sums in shared memory, each thread writes its run's offsets
__global__ void totem_frontier_scan(const i64* indptr, const i64* queue, i64 qlen, i64* offs) {
    __shared__ i64 sums[SCAN_THREADS];
    i64 per = (qlen + SCAN_THREADS - 1) / SCAN_THREADS;
    i64 lo = min((i64)threadIdx.x * per, qlen), hi = min(lo + per, qlen);
    i64 s = 0;
    for (i64 i = lo; i < hi; i++) s += indptr[queue[i] + 1] - indptr[queue[i]];
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int o = 1; o < SCAN_THREADS; o <<= 1) {       // inclusive Hillis-Steele scan
        i64 x = threadIdx.x >= o ? sums[threadIdx.x - o] : 0;
        __syncthreads();
        sums[threadIdx.x] += x;
        __syncthreads();
    }
    i64 run = threadIdx.x ? sums[threadIdx.x - 1] : 0;
    for (i64 i = lo; i < hi; i++) {
        offs[i] = run;
        run += indptr[queue[i] + 1] - indptr[queue[i]];
    }
    if (threadIdx.x == SCAN_THREADS - 1) offs[qlen] = sums[threadIdx.x];
}

// out = (n, sum of degree[queue[:n]]) for n = *len, then *len = 0. `work` (zero on entry, and
// left so): the sum, one atomic per warp, and the count of blocks done; the last block done
// publishes the result, so `out` may be mapped host memory that the host reads after one wait
__global__ void totem_frontier_count(const i64* degree, const i64* queue, i64* len, u64* work,
                                     i64* out) {
    __shared__ bool last;
    i64 n = *len;
    u64 sum = 0;
    for (i64 i = global_thread(); i < n; i += (i64)gridDim.x * blockDim.x) sum += degree[queue[i]];
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0 && sum) atomicAdd(&work[0], sum);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(&work[1], 1ULL) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0) {
        out[0] = n;
        out[1] = (i64)atomicExch(&work[0], 0ULL);
        work[1] = 0;
        *len = 0;
    }
}
"""


def frontier_offsets(indptr, queue, qlen):
    """offs[i] = edges of queue[:i], for i in 0..qlen, left on the device (the load-balanced
    advance reads the total there); `offs` may be longer. An empty queue launches nothing (None: nothing
    is launched for it); a short one is scanned in one launch into a kept buffer, a long one by
    CuPy's cumsum."""
    if qlen == 0:
        return None
    if qlen <= ONE_BLOCK:
        offs = _short_offsets()
        function(SOURCE, "totem_frontier_scan")((1,), (SCAN_THREADS,),
                                                (indptr, queue, i64(qlen), offs))
        return offs
    offs = cupy.empty(qlen + 1, dtype=cupy.int64)
    launch(function(SOURCE, "totem_frontier_degrees"), qlen, (indptr, queue, i64(qlen), offs))
    return cupy.cumsum(offs)


_SHORT = {}         # (stream pointer, device) -> the short queues' offsets
_SHORT_STREAMS = 64     # at most this many kept (256 KB each); then they are all let go


def _short_offsets():
    """The offsets buffer of short queues on the current stream, allocated once (an allocation
    from CuPy's pool costs microseconds, a near-empty superstep's tens): the kernels that read
    it run before the next scan on the same stream overwrites it."""
    key = cupy.cuda.get_current_stream().ptr, cupy.cuda.runtime.getDevice()
    offs = _SHORT.get(key)
    if offs is None:
        if len(_SHORT) >= _SHORT_STREAMS:
            _SHORT.clear()
        offs = _SHORT[key] = cupy.empty(ONE_BLOCK + 1, dtype=cupy.int64)
    return offs


def frontier_count(out_degree, queue, next_len, work, out):
    """out = (n, sum of out-degrees of queue[:n]) for n = next_len[0]; then next_len[0] = 0, in
    one launch. `work`: two zeros, left so (the kernel's sum and its count of blocks done); `out`
    may be mapped host memory (the caller then reads it after one wait, without a copy)."""
    launch_strided(function(SOURCE, "totem_frontier_count"),
                   (out_degree, queue, next_len, work, out))
