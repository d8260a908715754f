#!/bin/bash
# Build the original TOTEM's benchmark binary for Hopper GPUs (sm_90) with CUDA 12-13:
#   bash experiments/build_totem.sh TOTEM_SRC BUILD [TBB]
# TOTEM_SRC: a checkout of netsyslab/Totem (git archive of it will do); BUILD: a folder for the
# patched copy and its build; the binary is BUILD/src/build/bin/benchmark (for `python -m
# experiments.baselines totem --bin BUILD/src/build/bin`). TOTEM sorts with TBB: where the system
# has no TBB headers, TBB is a folder with include/tbb and lib/libtbb.so*, e.g. the wheels of
# `pip download tbb tbb-devel` unzipped, their *.data/data/ folders merged; the binary then
# finds the library through its run path.
# TOTEM's sources get three changes for today's CUDA: an sm_90 target in make.defs, TOTEM's own
# atomicAdd(double *) compiled only below sm_60 (CUDA has had it since), and
# cudaThreadSynchronize (removed) replaced by cudaDeviceSynchronize.
set -euo pipefail
src=$1 build=$2 tbb=${3:+$(cd "$3" && pwd)}
mkdir -p "$build"
cp -r "$src/src" "$build/"
cd "$build/src"
python3 - <<'PY'
import re
from pathlib import Path
defs = Path("make.defs")
text = defs.read_text()
text = text.replace("  else ifeq ($(GPU_ARCH), 35)", """  else ifeq ($(GPU_ARCH), 90)
    SM_TARGETS = -gencode=arch=compute_90,code=sm_90
    NVCCFLAGS += -dc
    LFLAGS    += $(SM_TARGETS) -rdc=true -lcudadevrt
    NVCCFLAGS += -DFEATURE_SM35
    CFLAGS += -DFEATURE_SM35
    BUILDPATH := $(BUILDPATH)_CC90
  else ifeq ($(GPU_ARCH), 35)""", 1)
text = text.replace("$(SM_TARGETS) \\", "$(SM_TARGETS) $(EXTRA_INC) \\", 1)
text = text.replace("-I$(CUDA_INSTALL_PATH)/include \\", "-I$(CUDA_INSTALL_PATH)/include $(EXTRA_INC) \\", 1)
text = text.replace("-L$(CUDA_INSTALL_PATH)/lib$(ARCH) -lm", "-L$(CUDA_INSTALL_PATH)/lib$(ARCH) $(EXTRA_LIB) -lm", 1)
assert text.count("EXTRA_INC") == 2 and "EXTRA_LIB" in text and "GPU_ARCH), 90" in text, "make.defs changed"
defs.write_text(text)
kernel = Path("totem/totem_comkernel.cuh")
text = kernel.read_text()
start = text.index("inline __device__ double atomicAdd(double* address, double val) {")
end = text.index("\n}\n", start) + 3
kernel.write_text(text[:start] + "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600\n"
                  + text[start:end] + "#endif\n" + text[end:])
for path in Path(".").rglob("*.cu"):
    code = path.read_text()
    if "cudaThreadSynchronize" in code:
        path.write_text(code.replace("cudaThreadSynchronize", "cudaDeviceSynchronize"))
PY
inc= lib=
if [ -n "$tbb" ]; then
    inc="-I$tbb/include" lib="-L$tbb/lib -Xlinker -rpath=$tbb/lib"
fi
make benchmark GPU_ARCH=90 EID=64 -j"$(nproc)" EXTRA_INC="$inc" EXTRA_LIB="$lib"
ls -l build/bin/benchmark
