#!/bin/bash
# Build SEP-Graph (SEP-Graph/sep-graph: hybrid_bfs, hybrid_sssp, hybrid_pr, hybrid_bc) for Hopper
# GPUs (sm_90) with CUDA 13 and CMake 3.25-4:
#   bash experiments/build_sepgraph.sh SEP_SRC BUILD
# SEP_SRC: a checkout of SEP-Graph/sep-graph with its gflags submodule inside
# (`git -C SEP_SRC submodule update --init deps/gflags`, or a gflags/gflags archive at the
# commit that `git ls-tree HEAD deps/gflags` names in SEP-Graph's repository, unpacked into
# SEP_SRC/deps/gflags); its cub submodule is not needed (the toolkit's CUB serves). The binaries land in BUILD/build/ (for `python -m experiments.baselines sepgraph
# --bin BUILD/build`). The changes to a copy of the source are groute_build.sh's, and
# hybrid_bc's Single() returns HybridBC()'s result.
set -euo pipefail
[ -f "$1/deps/gflags/CMakeLists.txt" ] || { echo "$1/deps/gflags: gflags missing" >&2; exit 2; }
source "$(dirname "$0")/groute_build.sh"
groute_patched_copy "$1" "$2"
groute_return samples/hybrid_bc/main.cpp HybridBC
groute_make hybrid_bfs hybrid_sssp hybrid_pr hybrid_bc
