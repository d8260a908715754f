"""Which devices exist. Probing CUDA imports CuPy only when asked, never at package import."""

import importlib.util

DEVICES = ("auto", "gpu", "emulated", "cpu", "simulated")


def cuda_device_count():
    """Number of CUDA devices CuPy sees (0 without CuPy or a driver)."""
    if importlib.util.find_spec("cupy") is None:
        return 0
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def resolve_device(device):
    """Map --device to what GPU partitions run on: "gpu", "emulated" or "cpu"."""
    from .errors import InputError
    if device not in DEVICES:
        raise InputError(f"--device must be one of {', '.join(DEVICES)}, not {device!r}")
    if device == "gpu" and cuda_device_count() == 0:
        raise InputError("--device gpu: no CUDA device found (CuPy missing or no GPU); "
                         "use --device emulated or auto")
    if device == "auto":
        return "gpu" if cuda_device_count() > 0 else "emulated"
    if device == "simulated":
        use_cuda_simulator()
    return device


def use_cuda_simulator():
    """GPU partitions run the GPU operators under numba-cuda's simulator (`--device
    simulated`: emulated partitions whose functors and operator kernels execute as Python,
    thread by thread; for testing on small graphs). It must be chosen before numba.cuda loads.
    The kernels it runs are compiled for a GPU too, in a child process started here
    (kernels_gpu/ptx.py): a functor a GPU cannot compile is refused under the simulator too."""
    import os
    import sys
    from .errors import InputError
    if importlib.util.find_spec("numba_cuda") is None and importlib.util.find_spec("numba.cuda") is None:
        raise InputError("--device simulated needs numba-cuda (pip install numba-cuda)")
    if "numba.cuda" in sys.modules and os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
        raise InputError("--device simulated: numba.cuda is already loaded without its "
                         "simulator; set NUMBA_ENABLE_CUDASIM=1 before starting Python")
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    from numba import config
    config.ENABLE_CUDASIM = True
    from numba.cuda.cuda_paths import get_cuda_paths
    if get_cuda_paths()["nvvm"].info is None:
        raise InputError("--device simulated compiles every functor for a GPU too, which needs "
                         "NVVM (pip install nvidia-nvvm)")
    from kernels_gpu import ptx
    ptx.start()
