"""Every CUDA source in kernels_gpu/ compiles, with NVRTC from the pip wheel and no GPU: a typo in
a kernel fails here, in CI, not first on the GPU machine. Each template kernel is instantiated
with every type its launchers may give it, by the parameter's name: I, an index (int32 or int64
CSR), W, a weight (float32 or float64), T, any type of kernels_gpu/_cuda.py's CTYPES (box
values, cached edges). The kernels' results are tested on the GPU machine (-m gpu)."""

import ctypes
import glob
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the modules of kernels_gpu/ with CUDA C (a SOURCE string); the operators' kernels are numba-cuda
# Python, compiled in tests/test_operators.py and tests/test_gpu_backend.py
MODULES = tuple(sorted(p.stem for p in (ROOT / "kernels_gpu").glob("*.py")
                       if re.search(r"^SOURCE = ", p.read_text(), re.M)))
TYPES = {"I": ("int", "i64"), "W": ("float", "double"),
         "T": ("int", "i64", "float", "double", "unsigned char", "bool")}

# the sources, read in a child process with a stand-in for cupy (kernels_gpu imports it; the
# stand-in must not leak into this process's other tests)
_DUMP = f"""
import json, sys, types
sys.modules["cupy"] = types.SimpleNamespace(cuda=None)
sys.path.insert(0, {str(ROOT)!r})
from kernels_gpu import _cuda
import importlib
print(json.dumps({{m: _cuda.PRELUDE + importlib.import_module("kernels_gpu." + m).SOURCE
                  for m in {MODULES!r}}}))
"""


def _nvrtc():
    """(libnvrtc, CCCL include folder) from the nvidia-cuda-nvrtc and nvidia-cuda-cccl wheels."""
    for base in map(Path, sys.path):
        libs = sorted(glob.glob(str(base / "nvidia" / "cu*" / "lib" / "libnvrtc.so.*")))
        headers = sorted(glob.glob(str(base / "nvidia" / "cu*" / "include" / "cccl")))
        if libs and headers:
            return ctypes.CDLL(libs[-1]), headers[-1]
    pytest.skip("NVRTC not installed (pip install -e '.[test]' brings nvidia-cuda-nvrtc)")


def _instances(source):
    """Name expressions for every kernel: plain names, and each template instantiated with every
    combination of its parameters' TYPES."""
    out = []
    for params, name in re.findall(
            r"(?:template\s*<([^>]*)>\s*)?__global__\s+void\s+(totem_\w+)", source):
        names = re.findall(r"typename\s+(\w+)", params)
        out += [f"{name}<{', '.join(c)}>" if c else name
                for c in itertools.product(*(TYPES[n] for n in names))]
    return out


def _compile(lib, include, name, source):
    """NVRTC's (status, log) for `source` with all its kernel instances."""
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), f"{name}.cu".encode(),
                                  0, None, None) == 0
    for expr in _instances(source):
        lib.nvrtcAddNameExpression(prog, expr.encode())
    opts = [b"-std=c++17", b"-arch=compute_90", f"-I{include}".encode()]
    status = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return status, log.value.decode(errors="replace")


@pytest.fixture(scope="module")
def sources():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _DUMP], capture_output=True, text=True, env=env,
                         check=True)
    return json.loads(out.stdout)


def test_modules_are_found():
    assert {"frontier", "boxes", "chunks"} <= set(MODULES)


def test_instances_cover_every_kernel():
    src = """template <typename I, typename W>
    __global__ void totem_a(const I* x, W* y) {}
    __global__ void totem_b() {}"""
    assert _instances(src) == ["totem_a<int, float>", "totem_a<int, double>",
                               "totem_a<i64, float>", "totem_a<i64, double>", "totem_b"]


@pytest.mark.parametrize("module", MODULES)
def test_kernels_compile(sources, module):
    lib, include = _nvrtc()
    assert _instances(sources[module]), module
    status, log = _compile(lib, include, module, sources[module])
    assert status == 0, log
