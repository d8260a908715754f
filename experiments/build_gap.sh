#!/bin/bash
# Build the GAP Benchmark Suite's kernels (bfs, sssp, pr, cc, bc, converter) with OpenMP:
#   bash experiments/build_gap.sh GAPBS_SRC BUILD
# GAPBS_SRC: a checkout of sbeamer/gapbs (git archive of it will do); BUILD: a folder for the
# copy and its binaries (for `python -m experiments.baselines gap --bin BUILD`). GAP builds as
# it is, with its Makefile's flags (-std=c++11 -O3 -fopenmp).
set -euo pipefail
src=$1 build=$2
mkdir -p "$build"
cp -r "$src/." "$build/"
cd "$build"
make -j"$(nproc)" bfs sssp pr cc bc converter
ls -l bfs sssp pr cc bc converter
