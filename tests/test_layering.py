"""Each room imports only downward: no import circles inside a package, and graph_builder never
imports torchlib (it knows ONNX, not ATen)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _type_only(tree: ast.Module) -> set[ast.AST]:
    """The statements inside `if TYPE_CHECKING:` blocks."""
    inside: set[ast.AST] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                inside.update(ast.walk(stmt))
    return inside


def _imports(path: Path, package: str, type_only: bool = True) -> set[str]:
    """Modules of `package` that `path` imports, at module level or inside functions, and (with
    `type_only`) inside `if TYPE_CHECKING:` blocks."""
    names: set[str] = set()
    tree = ast.parse(path.read_text())
    skip = set() if type_only else _type_only(tree)
    for node in ast.walk(tree):
        if node in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == package or node.module.startswith(package + "."):
                # `from pkg import mod` imports pkg.mod (after pkg's __init__, which is no circle
                # when pkg.mod is a submodule of pkg); `from pkg.mod import name` imports pkg.mod
                submodules = [f"{node.module}.{a.name}" for a in node.names if _is_module(f"{node.module}.{a.name}")]
                names.update(submodules or [node.module])
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.startswith(package + "."))
    return names


def _graph(package: str, type_only: bool = False) -> dict[str, set[str]]:
    """Who imports whom inside `package`. A circle is about import order, so type-only imports
    (which never run) are left out unless asked for."""
    modules = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        if "generated" in path.parts:
            continue
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        modules[name] = path
    return {name: {m for m in _imports(path, package, type_only) if m in modules and m != name}
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


def test_function_library_does_not_import_the_exporter():
    """torchlib/ops/ is the library; the exporter sits above it and passes what a function needs
    (a higher-order op's bodies) through the registry's `Body` protocol. Type-only imports count."""
    offenders = [str(path.relative_to(ROOT)) for path in (ROOT / "torchlib" / "ops").rglob("*.py")
                 if any(m.startswith("torchlib.exporter") for m in _imports(path, "torchlib"))]
    assert offenders == []


def test_no_import_circles_in_torchlib():
    """The library, the registry and the exporter form no circle (lazy imports inside functions
    included)."""
    cycle = _cycle(_graph("torchlib"))
    assert cycle is None, " -> ".join(cycle or [])


def test_importer_layering():
    """The importer (ONNX -> torch) sits beside the exporter: it may use graph_builder and torch,
    never the exporter; the library and the exporter never import it."""
    importer = ROOT / "torchlib" / "importer"
    offenders = [str(p.relative_to(ROOT)) for p in importer.rglob("*.py")
                 if any(m.startswith("torchlib.exporter") for m in _imports(p, "torchlib"))]
    assert offenders == []
    users = [str(p.relative_to(ROOT)) for p in (ROOT / "torchlib").rglob("*.py")
             if importer not in p.parents and p.parent != ROOT / "torchlib"
             and any(m.startswith("torchlib.importer") for m in _imports(p, "torchlib"))]
    assert users == [], f"the library / exporter import the importer: {users}"
