"""Editing a graph being built: who uses a value, replacing a value everywhere, removing nodes.

The optimizer works on the `GraphBuilder`'s graph before `to_model()`: weights stay the arrays
the builder holds, and new nodes and constants are made by the same builder (unique names,
shape inference), so a rewrite is written with the ordinary `op` namespace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from graph_builder.ir import Graph, Node, Value
from graph_builder.opset import opset

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder


def subgraphs(node: Node) -> Iterator[Graph]:
    for attr in node.attributes.values():
        if type(attr) is Graph:
            yield attr
        elif type(attr) is list and attr and type(attr[0]) is Graph:
            yield from attr


class Uses:
    """value -> the nodes that read it (subgraph bodies count as readers through their node),
    kept current by `replace` and `remove`."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.removed: set[int] = set()  # ids of removed nodes, dropped from graph.nodes by commit()
        self.before: dict[int, list[Node]] = {}  # new nodes to place before a node, by commit()
        self.readers: dict[int, list[Node]] = {}
        self.outputs = {id(v) for v in graph.outputs}
        for node in graph.nodes:
            self._add(node)

    def _add(self, node: Node) -> None:
        for v in self._read_by(node):
            self.readers.setdefault(id(v), []).append(node)

    @staticmethod
    def _read_by(node: Node) -> list[Value]:
        values = [v for v in node.inputs if v is not None]
        for sub in subgraphs(node):
            values.extend(_captured(sub))
        return values

    def of(self, value: Value) -> list[Node]:
        return self.readers.get(id(value), [])

    def count(self, value: Value) -> int:
        return len(self.of(value)) + (id(value) in self.outputs)

    def only_reader(self, value: Value) -> Node | None:
        readers = self.of(value)
        return readers[0] if len(readers) == 1 and id(value) not in self.outputs else None

    def alive(self, node: Node) -> bool:
        return id(node) not in self.removed

    def insert(self, node: Node, before: Node) -> None:
        self.before.setdefault(id(before), []).append(node)
        self._add(node)

    def commit(self) -> None:
        """Apply the insertions and removals to graph.nodes (in one pass: edits are O(1) each)."""
        if not self.removed and not self.before:
            return
        nodes: list[Node] = []
        for node in self.graph.nodes:
            nodes.extend(n for n in self.before.get(id(node), ()) if id(n) not in self.removed)
            if id(node) not in self.removed:
                nodes.append(node)
        self.graph.nodes = nodes
        self.removed.clear()
        self.before.clear()

    def replace(self, old: Value, new: Value) -> None:
        """Every reader of `old` reads `new`; a graph output `old` becomes `new` under old's name."""
        for node in self.readers.pop(id(old), []):
            node.inputs = [new if v is old else v for v in node.inputs]
            for sub in subgraphs(node):
                _replace_in(sub, old, new)
            self.readers.setdefault(id(new), []).append(node)
        if id(old) in self.outputs:
            outputs = self.graph.outputs
            for i, v in enumerate(outputs):
                if v is old:
                    if new.producer is not None and id(new) not in self.outputs and new.graph is self.graph:
                        new.name = old.name
                        new.set_type(old.dtype, old.shape)
                        new.complex_dtype = old.complex_dtype  # the output's ValueInfo: still a complex view
                        new.metadata.update(old.metadata)
                    outputs[i] = new
            self.outputs.discard(id(old))
            self.outputs.add(id(new))

    def set_input(self, node: Node, index: int, value: Value) -> None:
        old = node.inputs[index]
        node.inputs[index] = value
        if old is not None and old not in node.inputs:
            readers = self.readers.get(id(old))
            if readers and node in readers:
                readers.remove(node)
        self.readers.setdefault(id(value), []).append(node)

    def set_inputs(self, node: Node, inputs: list[Value | None]) -> None:
        """Give `node` these inputs (readers kept current)."""
        for old in node.inputs:
            if old is not None and not any(old is v for v in inputs):
                readers = self.readers.get(id(old))
                if readers and node in readers:
                    readers.remove(node)
        for v in inputs:
            if v is not None and not any(v is old for old in node.inputs):
                self.readers.setdefault(id(v), []).append(node)
        node.inputs = list(inputs)

    def remove(self, node: Node) -> None:
        self.removed.add(id(node))
        for v in self._read_by(node):
            readers = self.readers.get(id(v))
            if readers and node in readers:
                readers.remove(node)


def build_before(builder: GraphBuilder, uses: Uses, node: Node, build: Callable[[Any], Any],
                 made: list[Node] | None = None) -> Any:
    """Call `build(op)` with the op namespace of the graph's opset and place the nodes it makes
    before `node`, with `node`'s metadata (the ATen op, module and source line it came from);
    they are appended to `made` when given (to take them out again)."""
    sub = builder.subgraph("rewrite")
    with sub, builder.metadata(**node.metadata):
        result = build(opset(builder.opset))
    for new in sub.graph.nodes:
        for o in new.outputs:
            o.graph = uses.graph
        uses.insert(new, node)
        if made is not None:
            made.append(new)
    for c in sub.graph.initializers.values():
        c.graph = uses.graph
        uses.graph.initializers[c.name] = c
    del builder._root.subgraphs[id(sub.graph)]
    return result


def _captured(graph: Graph) -> list[Value]:
    """Values of outer graphs that a subgraph (or its subgraphs) reads."""
    own = {id(v) for v in graph.inputs} | {id(v) for v in graph.initializers.values()}
    for node in graph.nodes:
        own.update(id(o) for o in node.outputs)
    found: list[Value] = []
    for node in graph.nodes:
        values = [v for v in node.inputs if v is not None]
        for sub in subgraphs(node):
            values.extend(_captured(sub))
        found.extend(v for v in values if id(v) not in own)
    found.extend(v for v in graph.outputs if id(v) not in own)
    return found


def _replace_in(graph: Graph, old: Value, new: Value) -> None:
    for node in graph.nodes:
        if any(v is old for v in node.inputs):
            node.inputs = [new if v is old else v for v in node.inputs]
        for sub in subgraphs(node):
            _replace_in(sub, old, new)
    graph.outputs = [new if v is old else v for v in graph.outputs]


def scalar(value: Value | None) -> float | None:
    """The number a one-element constant holds, else None."""
    if value is None or value.const_value is None or value.const_value.size != 1:
        return None
    return float(value.const_value.reshape(()))


def ints(value: Value | None) -> list[int] | None:
    if value is None or value.const_value is None or value.const_value.dtype.kind not in "iu":
        return None
    return [int(i) for i in value.const_value.reshape(-1)]


def same_attrs(a: dict[str, Any], b: dict[str, Any]) -> bool:
    from graph_builder.ir import _freeze

    return a.keys() == b.keys() and all(_freeze(a[k]) == _freeze(b[k]) for k in a)
