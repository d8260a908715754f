"""BFS kernels, CUDA twins of kernels_cpu/bfs.py (same names, arguments and state encoding).

bfs_push: one warp per frontier vertex, lanes stride over its edges (a hub's edges spread over 32
lanes instead of serialising one thread); atomicMin claims a vertex and only the claimer appends it (to the queue, or a ghost to the outbox's
touched list).
bfs_pull: one thread per local vertex; the loop stops at the first parent found, so warps that
find parents early retire early. bfs_scatter: one thread per inbox entry.
"""

from ._cuda import WARP, function, i64, launch

SOURCE = r"""
template <typename I>
__global__ void totem_bfs_push(const i64* indptr, const I* indices, i64 n_local, int* level,
                               const i64* queue, i64 qlen, int depth, i64* next_queue,
                               i64* next_len, i64* touched, i64* touched_len) {
    i64 w = global_thread() / 32;
    int lane = threadIdx.x & 31;
    if (w >= qlen) return;
    i64 v = queue[w];
    for (i64 e = indptr[v] + lane; e < indptr[v + 1]; e += 32) {
        i64 t = indices[e];
        if (level[t] == UNVISITED && atomicMin(&level[t], depth + 1) == UNVISITED) {
            if (t < n_local) next_queue[atomicAdd((u64*)next_len, 1ULL)] = t;
            else touched[atomicAdd((u64*)touched_len, 1ULL)] = t - n_local;
        }
    }
}

template <typename I>
__global__ void totem_bfs_pull(const i64* indptr, const I* indices, i64 n_local, int* level,
                               int depth, i64* next_queue, i64* next_len) {
    i64 v = global_thread();
    if (v >= n_local || level[v] != UNVISITED) return;
    for (i64 e = indptr[v]; e < indptr[v + 1]; e++) {
        if (level[indices[e]] == depth) {
            level[v] = depth + 1;
            next_queue[atomicAdd((u64*)next_len, 1ULL)] = v;
            return;
        }
    }
}

__global__ void totem_bfs_scatter(const int* inbox, const i64* lvids, i64 n, int* level,
                                  i64* next_queue, i64* next_len) {
    i64 i = global_thread();
    if (i >= n || inbox[i] == UNVISITED) return;
    i64 v = lvids[i];
    if (atomicMin(&level[v], inbox[i]) == UNVISITED)
        next_queue[atomicAdd((u64*)next_len, 1ULL)] = v;
}
"""


def bfs_push(indptr, indices, n_local, level, queue, qlen, depth, next_queue, next_len,
             touched, touched_len):
    k = function(SOURCE, "totem_bfs_push", indices.dtype)
    launch(k, qlen * WARP, (indptr, indices, i64(n_local), level, queue, i64(qlen),
                            level.dtype.type(depth), next_queue, next_len, touched, touched_len))


def bfs_pull(indptr, indices, n_local, level, depth, next_queue, next_len):
    k = function(SOURCE, "totem_bfs_pull", indices.dtype)
    launch(k, n_local, (indptr, indices, i64(n_local), level, level.dtype.type(depth),
                        next_queue, next_len))


def bfs_scatter(inbox, lvids, level, next_queue, next_len):
    k = function(SOURCE, "totem_bfs_scatter")
    launch(k, inbox.size, (inbox, lvids, i64(inbox.size), level, next_queue, next_len))
