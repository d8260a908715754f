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


def experiment_imports(path):
    """The experiments modules a module of experiments/ imports (absolute or relative)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or node.module == "experiments"):
            module = node.module if not node.level else f"experiments.{node.module or ''}"
            if module.rstrip(".") == "experiments":
                yield from (alias.name for alias in node.names)
            else:
                yield module.split(".")[1]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""]
            yield from (n.split(".")[1] for n in names if n.startswith("experiments."))


def cycle(graph):
    """A list of modules that import each other in a ring, or None."""
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in graph.get(node, ()):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt, path + [nxt])):
                return found
        state[node] = "done"
        return None
    for node in sorted(graph):
        if node not in state and (found := visit(node, [node])):
            return found
    return None


def test_experiments_import_no_ring():
    graph = {p.stem: set(experiment_imports(p)) - {p.stem}
             for p in (ROOT / "experiments").glob("*.py")}
    assert cycle(graph) is None


def test_the_ring_check_sees_a_ring():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None
