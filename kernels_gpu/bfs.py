"""BFS kernels, CUDA twins of kernels_cpu/bfs.py (same names, arguments and state encoding).

bfs_push: one thread per frontier edge (load-balanced, lb_edges in _cuda.py: a hub's edges spread
over as many threads as it has edges); atomicMin claims a vertex and only the claimer appends it
(to the queue, or a ghost to the outbox's touched list).
bfs_pull: one thread per local vertex of rows [first, n_local) (thread i takes vertex first + i);
the loop stops at the first parent found, so warps that find parents early retire early. A
target below n_level (level's size, the local vertex count) is in the frontier when its level is
the depth, ghost slot s when bit s of the bitmap `ghosts` is set (bit s & 7 of byte s >> 3).
bfs_flags, bfs_scatter: one thread per boundary vertex, per inbox entry.
"""

from ._cuda import function, i64, launch, launch_edges
from .frontier import frontier_offsets

SOURCE = r"""
template <typename I>
__global__ void totem_bfs_push(const i64* indptr, const I* indices, i64 n_local, int* level,
                               const i64* queue, const i64* offs, i64 qlen, int depth,
                               i64* next_queue, i64* next_len, i64* touched, i64* touched_len) {
    lb_edges(indptr, queue, offs, qlen, [&](i64, i64 e, i64) {
        i64 t = indices[e];
        if (level[t] == UNVISITED && atomicMin(&level[t], depth + 1) == UNVISITED) {
            if (t < n_local) next_queue[atomicAdd((u64*)next_len, 1ULL)] = t;
            else touched[atomicAdd((u64*)touched_len, 1ULL)] = t - n_local;
        }
    });
}

template <typename I>
__global__ void totem_bfs_pull(const i64* indptr, const I* indices, i64 n_local, int* level,
                               const unsigned char* ghosts, i64 n_level, int depth,
                               i64* next_queue,
                               i64* next_len, i64 first) {
    i64 v = first + global_thread();
    if (v >= n_local || level[v] != UNVISITED) return;
    for (i64 e = indptr[v]; e < indptr[v + 1]; e++) {
        i64 t = indices[e];
        if (t < n_level ? level[t] == depth
                        : (ghosts[(t - n_level) >> 3] >> ((t - n_level) & 7)) & 1) {
            level[v] = depth + 1;
            next_queue[atomicAdd((u64*)next_len, 1ULL)] = v;
            return;
        }
    }
}

__global__ void totem_bfs_flags(const int* level, const i64* lvids, i64 n, int depth,
                                bool* out) {
    i64 i = global_thread();
    if (i < n) out[i] = level[lvids[i]] == depth;
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
    offs = frontier_offsets(indptr, queue, qlen)
    k = function(SOURCE, "totem_bfs_push", indices.dtype)
    launch_edges(k, qlen, (indptr, indices, i64(n_local), level, queue, offs, i64(qlen),
                      level.dtype.type(depth), next_queue, next_len, touched, touched_len))


def bfs_pull(indptr, indices, n_local, level, ghosts, depth, next_queue, next_len, first=0):
    k = function(SOURCE, "totem_bfs_pull", indices.dtype)
    launch(k, n_local - first, (indptr, indices, i64(n_local), level, ghosts, i64(level.size),
                                level.dtype.type(depth), next_queue, next_len, i64(first)))


def bfs_flags(level, lvids, depth, out):
    launch(function(SOURCE, "totem_bfs_flags"), lvids.size,
           (level, lvids, i64(lvids.size), level.dtype.type(depth), out))


def bfs_scatter(inbox, lvids, level, next_queue, next_len):
    k = function(SOURCE, "totem_bfs_scatter")
    launch(k, inbox.size, (inbox, lvids, i64(inbox.size), level, next_queue, next_len))
