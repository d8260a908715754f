"""The layers import one way (DESIGN.md): kernels_cpu <- kernels_gpu <- bsp <- partitioners <-
totem_py <- experiments. Every import counts, a function's own included: a module imports only
from its own package or one below it, so no package cycle can form."""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERS = ["kernels_cpu", "kernels_gpu", "bsp", "partitioners", "totem_py", "experiments"]
RANK = {name: i for i, name in enumerate(LAYERS)}


def imported(tree, package):
    """(line, top-level package) of every import in a module of `package`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            yield node.lineno, package if node.level else (node.module or "").split(".")[0]


def upward(package):
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, top in imported(ast.parse(path.read_text()), package):
            if top in RANK and RANK[top] > RANK[package]:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {top}")
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_no_import_runs_up_the_stack(package):
    assert upward(package) == []


def test_the_check_sees_an_upward_import():
    tree = ast.parse("def f():\n    from totem_py import run\n")
    assert [top for _, top in imported(tree, "bsp")] == ["totem_py"]
