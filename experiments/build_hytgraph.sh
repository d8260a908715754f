#!/bin/bash
# Build HyTGraph (iDC-NEU/HyTGraph: hybrid_bfs, hybrid_sssp, hybrid_pr, hybrid_cc) for Hopper
# GPUs (sm_90) with CUDA 13 and CMake 3.25-4:
#   bash experiments/build_hytgraph.sh HYTGRAPH_SRC BUILD
# HYTGRAPH_SRC: a checkout of iDC-NEU/HyTGraph (its deps/gflags and deps/json inside); the
# binaries land in BUILD/build/ (for `python -m experiments.baselines hytgraph --bin
# BUILD/build`).
# Changes for today's CUDA, made to a copy: sm_90 instead of sm_35-61; C++17 (CUDA 13's CUB and
# Thrust need it); the toolkit's CUB instead of the bundled one, with a grid barrier and three warp
# helpers that CUB has dropped (GridBarrier, LaneId, LaneMaskLt, WARP_SYNC) written here; NVTX 3's
# header-only nvToolsExt; no link to the driver stub or to libnvToolsExt. hybrid_cc's Single()
# returns HybridCC()'s result: it flowed off the end of a bool function, which GCC compiles into a
# fall through into the next function, a crash after the run that loses the buffered output.
set -euo pipefail
src=$1 build=$2
mkdir -p "$build"
cp -r "$src/." "$build/"
cd "$build"
mkdir -p compat/cub/grid
cat > compat/cub/grid/grid_barrier.cuh <<'H'
// A barrier across the blocks of a grid whose blocks are all resident at once: a count of the
// blocks arrived and a generation number that the last one to arrive advances.
#pragma once
#include <cuda_runtime.h>
namespace cub {
class GridBarrier {
 protected:
  unsigned int* d_sync = nullptr;   // [0] blocks arrived, [1] generation
 public:
  __device__ __forceinline__ void Sync() const {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
      unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
      unsigned int generation = atomicAdd(&d_sync[1], 0);
      __threadfence();
      if (atomicAdd(&d_sync[0], 1) == blocks - 1) {
        atomicExch(&d_sync[0], 0);
        __threadfence();
        atomicAdd(&d_sync[1], 1);
      } else {
        while (atomicAdd(&d_sync[1], 0) == generation) {}
      }
      __threadfence();
    }
    __syncthreads();
  }
};
class GridBarrierLifetime : public GridBarrier {
 public:
  cudaError_t HostReset() {
    cudaError_t err = d_sync ? cudaFree(d_sync) : cudaSuccess;
    d_sync = nullptr;
    return err;
  }
  ~GridBarrierLifetime() { HostReset(); }
  cudaError_t Setup(int) {
    if (d_sync) return cudaSuccess;
    cudaError_t err = cudaMalloc(&d_sync, 2 * sizeof(unsigned int));
    return err != cudaSuccess ? err : cudaMemset(d_sync, 0, 2 * sizeof(unsigned int));
  }
};
}  // namespace cub
H
cat > compat/cub_removed.cuh <<'H'
// Warp helpers that CUB no longer has, as HyTGraph calls them.
#pragma once
#ifdef __CUDACC__
namespace cub {
__device__ __forceinline__ unsigned int LaneId() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned int LaneMaskLt() {
  unsigned int r;
  asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void WARP_SYNC(unsigned int mask) { __syncwarp(mask); }
}  // namespace cub
#endif
H
python3 - <<'PY'
import re
from pathlib import Path
cm = Path("CMakeLists.txt")
text = cm.read_text()
text, n = re.subn(r"-gencode;arch=compute_35,code=sm_35;.*?code=sm_61",
                  "-gencode;arch=compute_90,code=sm_90;-include;${PROJECT_SOURCE_DIR}/compat/cub_removed.cuh",
                  text)
assert n == 2, "CMakeLists.txt's gencode lines changed"
text = text.replace("-std=c++11", "-std=c++17")
text = text.replace("include_directories(${PROJECT_SOURCE_DIR}/deps/cub)", "")
text = text.replace(" ${CUDA_TOOLKIT_TARGET_DIR}/lib64/stubs/libcuda.so", "")
text = text.replace(" ${CUDA_TOOLKIT_TARGET_DIR}/lib64/libnvToolsExt.so", "")
text = text.replace("include_directories(${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)",
                    "include_directories(${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)\n"
                    "include_directories(BEFORE ${PROJECT_SOURCE_DIR}/compat)")
assert "compat)" in text and "c++11" not in text and "libcuda.so" not in text
cm.write_text(text)
cc = Path("samples/hybrid_cc/main.cpp")
code = cc.read_text()
assert code.count("            HybridCC();") == 1, "hybrid_cc's main.cpp changed"
cc.write_text(code.replace("            HybridCC();", "            return HybridCC();"))
for path in Path("include").rglob("*.h"):
    code = path.read_text()
    if "nvToolsExt.h" in code:
        path.write_text(re.sub(r'[<"]nvToolsExt\.h[>"]', "<nvtx3/nvToolsExt.h>", code))
PY
mkdir -p build
cd build
cmake .. -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > cmake.log
make -j"$(nproc)" hybrid_bfs hybrid_sssp hybrid_pr hybrid_cc
ls -l hybrid_bfs hybrid_sssp hybrid_pr hybrid_cc
