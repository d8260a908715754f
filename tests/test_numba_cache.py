"""Compiled kernels outlive reinstalls: the cache is keyed by a file's place in the project and its
contents, not by where the package is installed (kernels_cpu/__init__.py)."""

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# compile (or load) one kernel and say where its cache is and whether it was found there
PROBE = """
import json, numpy as np
from kernels_cpu import csr
csr.csr_expand_rows(np.array([0, 2, 3]), np.empty(3, dtype=np.int64))
stats = csr.csr_expand_rows.serial.stats
print(json.dumps(dict(path=stats.cache_path, hits=sum(stats.cache_hits.values()),
                      misses=sum(stats.cache_misses.values()))))
"""


def probe(install, cache_home, **env):
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    environ.update(PYTHONPATH=str(install), XDG_CACHE_HOME=str(cache_home), **env)
    proc = subprocess.run([sys.executable, "-c", PROBE], cwd=install, env=environ,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def install_copy(where):
    for package in ("kernels_cpu", "bsp"):      # kernels_cpu lowers bsp's intrinsics
        shutil.copytree(ROOT / package, where / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return where


@pytest.mark.slow
def test_a_new_install_of_the_same_code_finds_the_compiled_kernels(tmp_path):
    first = install_copy(tmp_path / "editable")
    again = install_copy(tmp_path / "site-packages")
    home = tmp_path / "cache"
    a = probe(first, home)
    assert a["misses"] == 1 and a["path"].startswith(str(home / "totem_py" / "numba"))
    b = probe(again, home)              # another place, same contents: no compilation
    assert b["hits"] == 1 and b["misses"] == 0 and b["path"] == a["path"]
    with open(again / "kernels_cpu" / "csr.py", "a") as f:
        f.write("\n# changed\n")
    c = probe(again, home)              # changed contents: compiled again, elsewhere
    assert c["misses"] == 1 and c["path"] != a["path"]


@pytest.mark.slow
def test_numba_cache_dir_set_by_the_user_is_kept(tmp_path):
    mine = tmp_path / "mine"
    out = probe(install_copy(tmp_path / "inst"), tmp_path / "cache", NUMBA_CACHE_DIR=str(mine))
    assert out["path"].startswith(str(mine))


# compile (or load) three kernels after a start signal; say how many were compiled here
TOGETHER = """
import json, os, sys, time, numpy as np
from kernels_cpu import csr, sorting
open(sys.argv[1] + "." + sys.argv[2], "w").close()      # ready
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
src = np.array([0, 1, 1, 2])
csr.csr_degrees(src, 3)
csr.csr_expand_rows(np.array([0, 2, 3]), np.empty(3, dtype=np.int64))
sorting.sort_range(np.random.rand(50), 0, 50)
kernels = (csr.csr_degrees.serial, csr.csr_expand_rows.serial, sorting.sort_range)
print(json.dumps(sum(sum(k.stats.cache_misses.values()) for k in kernels)))
"""


@pytest.mark.slow
def test_processes_starting_together_compile_each_kernel_once(tmp_path):
    """Three processes need the same kernels at once on an empty cache: one compiles each, the
    others wait for it and load it (without the lock each compiled all three)."""
    install = install_copy(tmp_path / "inst")
    environ = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    environ.update(PYTHONPATH=str(install), XDG_CACHE_HOME=str(tmp_path / "cache"))
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-c", TOGETHER, str(go), str(i)], cwd=install,
                              env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i in range(3)]
    deadline = time.monotonic() + 300
    while not all((tmp_path / f"go.{i}").exists() for i in range(3)):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    go.touch()          # every process has imported Numba and the modules
    compiled = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        compiled.append(json.loads(out))
    assert sum(compiled) == 3, compiled
