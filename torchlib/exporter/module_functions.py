"""`export(..., functions="modules")`: each call of chosen nn.Module classes as an ONNX
model-local function (docs/exporter_front_end.md, "Modules as functions").

torch.export records, for every FX node, the module calls it was made in
(`meta["nn_module_stack"]`: call key -> (path, class), outermost first). While translating, each
ONNX node is tagged with the FX node it came from (`MODULE_CALL`, metadata removed again before
the graph is finished); after the optimizer, `graph_builder.functions.outline` turns each chosen
call into a function call node, nested calls into calls inside the function's body.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import torch

from graph_builder.functions import Scope, Stacks, common_stack, outline
from graph_builder.ir import Graph, Node
from graph_builder.optimizer.editing import subgraphs
from torchlib.exporter.source import _clean

MODULE_CALL = "pkg.torchlib.module_call"  # node metadata while translating: the top-level FX node's name

Translation = Callable[..., Any] | Sequence[Callable[..., Any]]
TranslationTable = Mapping[Any, Translation]
FunctionsPart = TranslationTable | Literal["modules"] | type[torch.nn.Module]
Functions = FunctionsPart | Sequence[FunctionsPart]


@dataclass(frozen=True)
class ModuleSelection:
    """Which module calls become functions: `classes` (qualified names, as torch.export writes
    them), or every module below the root when None."""

    classes: frozenset[str] | None
    root: torch.nn.Module | None = None  # the model, whose modules give the calls' attributes

    def chosen(self, qualified: str) -> bool:
        return self.classes is None or qualified in self.classes


def split(functions: Functions | None) -> tuple[dict[Any, Translation], ModuleSelection | None]:
    """The translation table and the module selection that `export(..., functions=...)` asks for."""
    if functions is None:
        return {}, None
    parts: Sequence[Any] = [functions] if isinstance(functions, (str, Mapping, type)) else list(functions)
    table: dict[Any, Translation] = {}
    every, classes = False, set()
    for part in parts:
        if isinstance(part, Mapping):
            table.update(part)
        elif part == "modules":
            every = True
        elif isinstance(part, type) and issubclass(part, torch.nn.Module):
            classes.add(class_path(part))
        else:
            raise TypeError(f"export(functions=...): {part!r} is not a translation table ({{torch op or 'ns::op': "
                            "function}), the string 'modules' or an nn.Module class; give one of them or a list of "
                            "them, e.g. functions=['modules', table] or functions=[EncoderBlock]")  # fmt: skip
    if every:
        return table, ModuleSelection(None)
    return table, ModuleSelection(frozenset(classes)) if classes else None


def class_path(cls: Any) -> str:
    """'package.module.Class', as torch.export's nn_module_stack writes a module's class."""
    return cls if isinstance(cls, str) else f"{cls.__module__}.{cls.__qualname__}"


def outline_modules(graph: Graph, fx_graph: torch.fx.Graph, selection: ModuleSelection,
                    merged: list[tuple[Node, Node]]) -> list[str]:
    """Turn the chosen module calls of `graph` (a translation of `fx_graph` made with MODULE_CALL
    tags) into local functions; returns notes for the diagnostics. `merged`: the (kept, dropped)
    nodes of the optimizer's common-subexpression pass; a kept node belongs to the calls it and
    the nodes merged into it have in common."""
    scopes = _fx_stacks(fx_graph, selection)

    def stack_of(node: Node) -> tuple[Scope, ...]:
        fx_name = node.metadata.get(MODULE_CALL)
        return () if fx_name is None else scopes[fx_name]

    stacks: Stacks = {id(node): stack_of(node) for node in graph.nodes}
    for kept, dropped in merged:
        if id(kept) in stacks:
            stacks[id(kept)] = common_stack(stacks[id(kept)], stack_of(dropped))
    for node in _all_nodes(graph.nodes):
        node.metadata.pop(MODULE_CALL, None)
    if selection.classes is not None:
        called = {class_path(cls) for n in fx_graph.nodes for _, cls in (n.meta.get("nn_module_stack") or {}).values()}
        missing = sorted(selection.classes - called)
        if missing:
            raise ValueError(f"export(functions=...) names {', '.join(missing)}, which the model never calls; its "
                             f"module classes are: {', '.join(sorted(called)) or 'none'}")  # fmt: skip
    return outline(graph, stacks)


def _fx_stacks(fx_graph: torch.fx.Graph, selection: ModuleSelection) -> dict[str, tuple[Scope, ...]]:
    """The chosen module calls each FX node belongs to. A symbolic scalar (a SymInt computed
    from shapes) belongs to the calls it and its users have in common: torch.export computes
    `batch * heads` once, in the first attention block, and every later block reads it."""
    stacks: dict[str, tuple[Scope, ...]] = {}
    attributes = functools.cache(functools.partial(_attributes, selection.root))
    for node in reversed(list(fx_graph.nodes)):
        stack = _scopes(node, selection, attributes)
        if isinstance(node.meta.get("val"), (torch.SymInt, torch.SymFloat, torch.SymBool)):
            for user in node.users:
                stack = common_stack(stack, stacks[user.name])
        stacks[node.name] = stack
    return stacks


def _attributes(root: torch.nn.Module | None, path: str) -> tuple[tuple[str, Any], ...]:
    """The module's own settings that an ONNX attribute can hold (`num_heads`, `eps`,
    `kernel_size`...): its public attributes that are numbers, strings, or tuples of numbers."""
    try:
        module = root.get_submodule(path) if root is not None else None
    except AttributeError:  # an ExportedProgram's module() has no such submodule
        module = None
    found: list[tuple[str, Any]] = []
    for key, value in vars(module).items() if module is not None else ():
        if key.startswith("_") or key == "training":
            continue
        if isinstance(value, list):
            value = tuple(value)
        if isinstance(value, bool):
            found.append((key, int(value)))
        elif type(value) in (int, float, str):
            found.append((key, value))
        elif isinstance(value, tuple) and {type(v) for v in value} in ({int}, {float}):
            found.append((key, value))
    return tuple(found)


def _scopes(fx_node: torch.fx.Node, selection: ModuleSelection,
            attributes: Callable[[str], tuple[tuple[str, Any], ...]]) -> tuple[Scope, ...]:
    found = []
    for key, (path, cls) in (fx_node.meta.get("nn_module_stack") or {}).items():
        path, qualified = _clean(str(path)), class_path(cls)
        if not path or path.startswith("_empty") or not selection.chosen(qualified):
            continue  # the root, or a class not chosen
        module, _, name = qualified.rpartition(".")
        module = module.replace(".<locals>", "")  # a class defined in a function
        call = key.rpartition("@")[2] if "@" in key else ""  # torch's suffix for a module's second, third... call
        node_name = f"{path}@{call}" if call else path
        found.append(Scope(key=key, domain=f"pkg.{module}", name=name, node_name=node_name,
                           metadata=(("pkg.torchlib.module", path), ("pkg.torchlib.module_class", name)),
                           attributes=attributes(path)))
    return tuple(found)


def _all_nodes(nodes: list[Node]) -> Iterator[Node]:
    for node in nodes:
        yield node
        for sub in subgraphs(node):
            yield from _all_nodes(sub.nodes)
