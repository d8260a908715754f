"""The GPU backend of the operators without a GPU, with every shipped algorithm against the
references: compiled to PTX for sm_90 by numba-cuda (tests/ptxcheck, in this process: a functor
or template numba-cuda cannot compile fails here), and run under numba-cuda's simulator
(tests/sim_driver.py, in a process of its own: the simulator must be chosen before numba.cuda is
first imported, and the other tests import it without). On a real device, `pytest -m gpu`."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bsp.partition import EmulatedGpuPartition
from tests.support.matrix import algorithms, check_matrix
from tests.support.toys import toy_graphs, with_random_weights

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ["advance_lb", "advance_rounds", "bitmap", "pull_thread", "pull_warp", "scatter", "vertex_map",
             "vertex_values"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rmat_small"] + [pytest.param(n, marks=pytest.mark.extended)
                                                   for n in ("star", "disconnected")])
def test_algorithms_compile_for_the_gpu(name, monkeypatch):
    """GPU partitions' operator calls compiled by the GPU backend and computed by the CPU's, at
    cpu shares 0 and 0.5, with one and two GPU partitions; results against the references.
    rmat_small is made undirected, for PageRank's split rounds."""
    import kernels_gpu.operators as gpu
    monkeypatch.setattr(EmulatedGpuPartition, "operator_package", "tests.ptxcheck")
    monkeypatch.setattr(gpu, "_KERNELS", {})
    graph = toy_graphs()[name]
    if name == "rmat_small":
        graph = graph.to_undirected()
    check_matrix(with_random_weights(graph, seed=3), "HIGH", devices=("emulated",),
                 shares=(0.0, 0.5), gpus_list=(1, 2))
    compiled = {key[0].__name__ for key, kernel in gpu._KERNELS.items() if kernel.launches}
    if name == "rmat_small":        # BFS goes bottom-up there: every template is used
        assert sorted(compiled) == TEMPLATES
        assert any(kernel.launches and "push_partial" in [getattr(f, "__name__", "") for f in key]
                   for key, kernel in gpu._KERNELS.items()), "split rounds: not compiled"
    else:
        assert compiled


@pytest.mark.parametrize("body, words", [
    ("    return reached[t] == widht and atomic_max(reached, t, 1) == 0",
     ["NameError: name 'widht' is not defined"]),
    ("    z = np.zeros(3)\n    return reached[t] == z[0] and atomic_max(reached, t, 1) == 0",
     ["zeros(", "cannot compile"]),
    ("    z = [0, 1]\n    return reached[t] == z[0] and atomic_max(reached, t, 1) == 0",
     ["allocates memory (a list"])])
def test_a_gpu_functor_that_does_not_compile_names_its_file_and_line(body, words, tmp_path,
                                                                     monkeypatch):
    """A user functor numba-cuda cannot compile (a misspelt name; np.zeros and a list, which a
    GPU has not): an InputError naming the file, the line that fails, the functor and the
    reason."""
    import kernels_gpu.operators as gpu
    import totem_py
    from totem_py.algorithms.base import find
    from totem_py.errors import InputError
    monkeypatch.setattr(EmulatedGpuPartition, "operator_package", "tests.ptxcheck")
    monkeypatch.setattr(gpu, "_KERNELS", {})
    source = (ROOT / "examples" / "khop.py").read_text().replace('name = "khop"',
                                                               f'name = "{tmp_path.name}"')
    good = "    return reached[t] == 0 and atomic_max(reached, t, 1) == 0"
    path = tmp_path / "gpu_typo.py"
    path.write_text(source.replace(good, body))
    line = source.splitlines().index(good) + 1
    with pytest.raises(InputError) as caught:
        totem_py.run(totem_py.generate("rmat:6"), find(str(path)), source=3,
                     device="emulated", cpu_share=0.0)
    message = str(caught.value)
    for w in [f"{path}:{line}: functor claim (line ", *words]:
        assert w in message and "\n" not in message, message


KHOP = (ROOT / "examples" / "khop.py").read_text()
GOOD = "    return reached[t] == 0 and atomic_max(reached, t, 1) == 0"


def simulated(*args):
    """The command with --device simulated, in a process of its own."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-m", "totem_py.run", *map(str, args), "--device",
                           "simulated", "--quiet"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_the_simulated_gpu_refuses_a_functor_a_gpu_cannot_compile(tmp_path):
    """np.zeros in a GPU functor: Numba compiles it for the CPU and the simulator runs it as
    Python, so cpu and emulated run it; simulated compiles each kernel for a GPU too
    (kernels_gpu/ptx.py) and refuses it: exit 2, one line at the file and line."""
    import totem_py
    from totem_py.algorithms.base import find
    path = tmp_path / "zeros.py"
    zeros = "    z = np.zeros(3)\n" + GOOD.replace("== 0 and", "== z[0] and")
    path.write_text(KHOP.replace('name = "khop"', f'name = "{tmp_path.name}"').replace(GOOD, zeros))
    line = KHOP.splitlines().index(GOOD) + 1
    first = KHOP.splitlines().index("def claim(s, t, w, reached):") + 1
    graph = totem_py.generate("rmat:6")
    for device in ("cpu", "emulated"):
        totem_py.run(graph, find(str(path)), source=3, device=device, cpu_share=0.25,
                     verify=True)
    proc = simulated("--graph", "rmat:6", "--algorithm", path, "--source", 3)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr[-2000:]
    assert proc.stderr.startswith(f"error: {path}:{line}: functor claim (line {first}) does "
                                  "not compile: it calls zeros(") \
        and proc.stderr.count("\n") == 1, proc.stderr[-2000:]


@pytest.mark.slow
def test_the_simulated_gpu_runs_a_functor_a_gpu_compiles():
    proc = simulated("--graph", "rmat:6", "--algorithm", ROOT / "examples" / "khop.py",
                     "--source", 3, "--verify")
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.slow
def test_algorithms_run_on_the_simulated_gpu(tmp_path):
    report = tmp_path / "report.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "sim_driver.py"), str(report)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-4000:]
    r = json.loads(report.read_text())
    assert not r["failures"], "\n".join(r["failures"])
    matrix = algorithms(toy_graphs()["star"], 0)     # the registry's, PageRank's forms too
    assert r["runs"] == 3 * 2 * len(matrix)         # 3 graphs x 2 configurations
    assert r["templates"] == TEMPLATES
    assert r["modes"]["bfs"] == ["pull", "push"]
    assert r["modes"]["pagerank"] == ["partials", "pull"]      # split rounds on rmat6, hybrid



@pytest.mark.slow
def test_operators_on_the_simulated_gpu():
    """test_operators' edge spans (every pull form), the cache load, pull's reductions and
    types, intersect and the min reduction run end to end on the GPU backend under numba-cuda's
    simulator, in one process of its own (the `backend` fixture's `simulated`; the `simulated`
    device), the extended tier's reductions included (they are quick there)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p",
                           "no:cacheprovider", "tests/test_operators.py", "-m", "not gpu", "-k",
                           "simulated and (edge_span or gather_rows or reduction or intersect)"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "\n49 passed" in proc.stdout, proc.stdout[-2000:]

_LAUNCHER = r"""
import struct, sys, types
import numpy as np
launched = []
class Array:                        # what the launcher reads of a CuPy array
    def __init__(self, n, dtype):
        self.host = np.zeros(n, dtype)
        self.dtype, self.size, self.itemsize = self.host.dtype, n, self.host.itemsize
        self.data = types.SimpleNamespace(ptr=self.host.ctypes.data)
class Module:
    def load(self, cubin): pass
    def get_function(self, name): return types.SimpleNamespace(ptr=1234)
cupy = types.ModuleType("cupy")
cupy.ndarray = Array
cupy.cuda = types.SimpleNamespace(function=types.SimpleNamespace(Module=Module),
                                  get_current_stream=lambda: types.SimpleNamespace(ptr=7),
                                  runtime=types.SimpleNamespace(getDevice=lambda: 0))
driver = types.ModuleType("cupy_backends.cuda.api.driver")
driver.launchKernel = lambda *a: launched.append(a)
sys.modules.update({"cupy": cupy, "cupy.cuda": cupy.cuda, "cupy_backends": types.ModuleType("x"),
                    "cupy_backends.cuda": types.ModuleType("x"),
                    "cupy_backends.cuda.api": types.ModuleType("x"),
                    "cupy_backends.cuda.api.driver": driver})
from numba.cuda import types as nt
import kernels_gpu.operators as gpu
gpu._driver()
class Compiled:                     # numba-cuda's compile result, without compiling
    _codelibrary = types.SimpleNamespace(get_cubin=lambda: b"", _entry_name="k")
class Kernel(gpu.Kernel):
    def __init__(self):
        self.dispatcher = types.SimpleNamespace(compile=lambda sig: Compiled())
        self.launches, self.current = {}, {}

def words(args):
    '''The parameter words a launch of args must carry, packed afresh.'''
    out = []
    for a in gpu._leaves(args, []):
        if isinstance(a, Array):
            out += [0, 0, a.size, a.itemsize, a.data.ptr, a.size, a.itemsize]
        else:
            ty = gpu._numba_type(a)
            raw = struct.pack("<" + gpu._SLOT[str(ty)], a).ljust(8, b"\0")
            out.append(int.from_bytes(raw, "little", signed=True))
    return out

k = Kernel()
a, b, b2, c = Array(5, np.int64), Array(9, np.float64), Array(4, np.float64), Array(3, np.int32)
calls = [(a, 3, (b, 1.5, c)), (a, 3, (b, 2.5, c)), (a, 4, (b2, 2.5, c)),    # scalars, a swap
         (a, 4, (c, 2.5, c)), (a, 4.0, (b, 2.5, c)),         # a dtype, then int -> float: new
         (a, 3, (b, 1.5, c)), (a, 3, (b, 1.5, c))]           # the first instance again
for args in calls:
    k(2, 32, *args)
    fn, grid, _, _, block, _, _, _, stream, pointers, extra = launched[-1]
    launch = k.current[0]
    assert (fn, grid, block, stream, extra) == (1234, 2, 32, 7, 0) and pointers == launch.pointers
    assert launch.buffer.tolist() == words(args), args
    assert np.array_equal(launch.words, launch.buffer.ctypes.data + 8 * np.arange(launch.buffer.size))
print(len(k.launches), "instances")

# a numba-cuda whose compile result has no code library: the public dispatcher, every launch
dispatched = []
class Dispatcher:
    def compile(self, sig): return object()
    def __getitem__(self, config):
        return lambda *args: dispatched.append((config, args))
gpu._stream = lambda: "stream"
k.dispatcher, k.launches, k.current = Dispatcher(), {}, {}
for args in calls:
    k(2, 32, *args)
    assert dispatched[-1] == ((2, 32, "stream"), args)
print(len(dispatched), "dispatched")
"""


@pytest.mark.slow
def test_gpu_launcher_packs_the_arguments_of_every_launch():
    """The GPU backend's launcher (kernels_gpu.operators.Kernel with CuPy's pieces stood in for,
    in a child process): over launches whose scalars change, arrays swap, an array's dtype and a
    scalar's type change, the parameter buffer handed to cuLaunchKernel holds exactly the words
    a fresh packing of the arguments gives, and a type change makes another instance. Where
    numba-cuda's compile result has no code library to read, each launch goes through its
    dispatcher on the current stream, with the arguments as given."""
    proc = subprocess.run([sys.executable, "-c", _LAUNCHER], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["3", "instances", "7", "dispatched"]
