"""Each room imports only downward: no import cycle among the modules of graph_builder, torchlib
and codegen (found by reading the sources), and graph_builder never imports torchlib (it knows
ONNX, not ATen)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


LIBRARY = ["graph_builder", "torchlib", "codegen"]


def _modules() -> dict[str, Path]:
    """Every module of the library's packages, generated ones included: dotted name -> file."""
    modules = {}
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            modules[".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")] = path
    return modules


MODULES = _modules()


def _imported(path: Path) -> dict[str, int]:
    """The library's modules that the file at `path` imports, each with the line of its first
    import: at module level, inside functions and inside `if TYPE_CHECKING:` blocks alike (a
    circle of type-only imports is still two modules that each need the other). `from pkg import
    mod` imports the submodule pkg.mod, `from pkg import name` the package pkg itself. A package's
    `__init__`, which Python runs before each of its submodules, is no edge of its own: that
    is a package re-exporting its submodules, not a circle."""
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    found: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the package of this module, `level - 1` packages up
                base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in MODULES else module for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for target in targets:
            if target in MODULES and target != name:
                found.setdefault(target, node.lineno)
    return found


def _imports(path: Path, package: str) -> set[str]:
    """Modules of `package` that the file at `path` imports (anywhere in it, type-only included)."""
    return {m for m in _imported(path) if m == package or m.startswith(package + ".")}


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One circle through each strongly connected group of modules (Tarjan's algorithm), as the
    list of modules around it, the first repeated at the end."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while (w := stack.pop()) != v:
                group.add(w)
            if group:
                groups.append(group | {v})

    for v in sorted(graph):
        if v not in index:
            connect(v)
    cycles = []
    for group in groups:  # a shortest way back to the group's first module, by breadth-first search
        start = min(group)
        came_from: dict[str, str] = {}
        frontier = [start]
        while start not in came_from:
            reached = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w in group and w not in came_from:
                        came_from[w] = v
                        reached.append(w)
            frontier = reached
        back = [start]
        while (v := came_from[back[-1]]) != start:
            back.append(v)
        cycles.append([start, *reversed(back[1:]), start])
    return cycles


def _describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    steps = [f"  {a.replace('.', '/')}.py:{graph[a][b]} imports {b}" for a, b in zip(cycle, cycle[1:])]
    return " -> ".join(cycle) + "\n" + "\n".join(steps)


def test_no_import_cycles():
    """No module of graph_builder, torchlib or codegen imports itself through others, however
    the imports are written (inside functions, under TYPE_CHECKING): each room imports only
    downward. Move what two modules share to the one below both."""
    graph = {name: _imported(path) for name, path in MODULES.items()}
    cycles = [_describe(c, graph) for c in _cycles(graph)]
    assert not cycles, f"{len(cycles)} import cycle(s):\n" + "\n".join(cycles)


def test_cycle_finder_names_the_cycle():
    graph = {"a": {"b": 3}, "b": {"c": 5}, "c": {"a": 7, "d": 1}, "d": {}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
    assert _describe(["a", "b", "c", "a"], graph).splitlines() == [
        "a -> b -> c -> a", "  a.py:3 imports b", "  b.py:5 imports c", "  c.py:7 imports a"]
    assert _cycles({"a": {"b": 1}, "b": {}}) == []


def test_graph_builder_does_not_import_torchlib():
    for path in (ROOT / "graph_builder").rglob("*.py"):
        assert not _imports(path, "torchlib"), path


def test_function_library_does_not_import_the_exporter():
    """torchlib/ops/ is the library; the exporter sits above it and passes what a function needs
    (a higher-order op's bodies) through the registry's `Body` protocol. Type-only imports count."""
    offenders = [str(path.relative_to(ROOT)) for path in (ROOT / "torchlib" / "ops").rglob("*.py")
                 if any(m.startswith("torchlib.exporter") for m in _imports(path, "torchlib"))]
    assert offenders == []


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
