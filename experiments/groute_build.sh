# Shell functions that build a Groute-derived system (HyTGraph, SEP-Graph) for Hopper GPUs (sm_90)
# with CUDA 13 and CMake 3.25-4, sourced by build_hytgraph.sh and build_sepgraph.sh:
#   groute_patched_copy SRC BUILD   # SRC copied into BUILD, patched; the shell left in BUILD
#   groute_return FILE CALL         # FILE's lone `CALL();` made `return CALL();`
#   groute_make TARGET...           # configured and built in BUILD/build
# The changes, made to the copy: sm_90 instead of sm_35-61; C++17 (CUDA 13's CUB and Thrust need
# it); the toolkit's CUB instead of the bundled one, with a grid barrier and three warp helpers
# that CUB has dropped (GridBarrier, LaneId, LaneMaskLt, WARP_SYNC) written here; NVTX 3's
# header-only nvToolsExt; no link to the driver stub or to libnvToolsExt (the CUDA runtime is
# linked statically, FindCUDA's default). groute_return mends a bool function that flows off its
# end, which GCC compiles into a fall through into the next function: a crash after the run that
# loses the buffered output.

groute_patched_copy() {
  local src=$1 build=$2
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
// Warp helpers that CUB no longer has, as Groute's code calls them.
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
for path in Path("include").rglob("*.h"):
    code = path.read_text()
    if "nvToolsExt.h" in code:
        path.write_text(re.sub(r'[<"]nvToolsExt\.h[>"]', "<nvtx3/nvToolsExt.h>", code))
PY
}

groute_return() {
  local file=$1 call=$2
  [ "$(grep -c "^ *$call();" "$file")" = 1 ] || { echo "$file: no lone $call();" >&2; return 1; }
  sed -i "s/^\( *\)$call();/\1return $call();/" "$file"
}

groute_make() {
  mkdir -p build
  cd build
  cmake .. -DCMAKE_BUILD_TYPE=Release -DCMAKE_POLICY_VERSION_MINIMUM=3.5 > cmake.log
  make -j"$(nproc)" "$@"
  ls -l "$@"
}
