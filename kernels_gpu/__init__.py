"""CUDA twins of kernels_cpu/ (CuPy): same module and function names and signatures, the CUDA
source of each beside its launchers, compiled with NVRTC on first use and memoised per device and
template instantiation (`_cuda.py`). GPU partitions (`bsp/gpu.py`) load them with `--device gpu`,
or `auto` when a CUDA device is present; without one, `auto` runs GPU partitions emulated on the
CPU with the kernels_cpu twins. Importing this package never imports CuPy: each module does, when
a GPU partition first asks for it.
"""
