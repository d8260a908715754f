"""Which devices exist. Probing CUDA imports CuPy only when asked, never at package import."""

import importlib.util

DEVICES = ("auto", "gpu", "emulated", "cpu")


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
    return device
