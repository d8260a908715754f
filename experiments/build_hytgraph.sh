#!/bin/bash
# Build HyTGraph (iDC-NEU/HyTGraph: hybrid_bfs, hybrid_sssp, hybrid_pr, hybrid_cc) for Hopper
# GPUs (sm_90) with CUDA 13 and CMake 3.25-4:
#   bash experiments/build_hytgraph.sh HYTGRAPH_SRC BUILD
# HYTGRAPH_SRC: a checkout of iDC-NEU/HyTGraph (its deps/gflags and deps/json inside); the
# binaries land in BUILD/build/ (for `python -m experiments.baselines hytgraph --bin
# BUILD/build`). The changes to a copy of the source are groute_build.sh's, and hybrid_cc's
# Single() returns HybridCC()'s result.
set -euo pipefail
source "$(dirname "$0")/groute_build.sh"
groute_patched_copy "$1" "$2"
groute_return samples/hybrid_cc/main.cpp HybridCC
groute_make hybrid_bfs hybrid_sssp hybrid_pr hybrid_cc
