"""Each room imports only downward: no import circles inside a package, and graph_builder never
imports torchlib (it knows ONNX, not ATen)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path, package: str) -> set[str]:
    """Modules of `package` that `path` imports, at module level or inside functions."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == package:
                names.update(f"{package}.{a.name}" for a in node.names)
            elif node.module.startswith(package + "."):
                names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith(package + "."))
    return names


def _graph(package: str) -> dict[str, set[str]]:
    modules = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if "generated" in path.parts:
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    return {name: {m for m in _imports(path, package) if m in modules and m != name}
            for name, path in modules.items() if name != package}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (found := visit(m)):
                return found
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (found := visit(n)):
            return found
    return None


@pytest.mark.parametrize("package", ["graph_builder", "codegen"])
def test_no_import_circles(package):
    cycle = _cycle(_graph(package))
    assert cycle is None, " -> ".join(cycle or [])


def test_graph_builder_does_not_import_torchlib():
    for path in (ROOT / "graph_builder").rglob("*.py"):
        assert not _imports(path, "torchlib"), path
