"""CUDA twins of kernels_cpu/ (CuPy): not implemented yet.

Real GPU partitions arrive with the GPU-partitions issue; until then `--device gpu` reports that
they are not implemented and `--device auto` runs GPU partitions emulated on the CPU. Importing
this package never imports CuPy.
"""
