"""Outlining: calls (of a model's modules, say) kept as ONNX model-local functions.

    >>> outline(graph, stacks)   # stacks: id(node) -> the Scopes it was made in, outermost first

Each `Scope` is one call: the nodes whose stack holds it become the body of a FunctionProto
(`scope.domain`, `scope.name`) and one node calling it takes their place. Scopes nested in a
scope become function calls inside its body. Values the body reads from outside (activations,
weights, constants) are the function's inputs, in the order the body first reads them; values
it makes that anything outside reads are its outputs, in the order they are made. Calls whose
bodies compute the same thing (graph_builder.compare: equal up to value names and node order)
share one FunctionProto; a call that differs gets its own, named `name_1`, `name_2`, ...

Inlining the functions (onnx.inliner.inline_local_functions) gives back the nodes the graph
had before outlining, up to value names and order: outlining moves nodes, it never changes one.

Work that several calls share belongs to their closest common caller: when the optimizer's
common-subexpression pass merges the same computation of several calls (the shape arithmetic of
every attention block, a mask every layer prepares alike), the exporter gives the kept node the
stack the calls have in common (`common_stack`), so that the calls stay alike and share one
function.

A call that cannot become one node (a path leaves its nodes and comes back in, which a fusion
across calls can make) stays inline, and `outline` returns a note naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import onnx

from graph_builder.compare import difference
from graph_builder.ir import Graph, Node, Value
from graph_builder.optimizer.editing import Uses

FUNCTION_VERSION = 1  # the opset version a model imports each function domain at


@dataclass(frozen=True)
class Scope:
    """One call: `key` is unique to it; calls of one (domain, name) may share a function."""

    key: str
    domain: str
    name: str
    node_name: str = ""  # the calling node's name (e.g. the module's path); unique in the graph
    metadata: tuple[tuple[str, str], ...] = ()  # the calling node's metadata_props
    # the calling node's attributes (ints, floats, strings, tuples of ints or floats), declared
    # by the function and not read by its body: what the call was made with, for people to read
    attributes: tuple[tuple[str, Any], ...] = ()


Stacks = dict[int, Sequence[Scope]]  # id(node) -> its scopes, outermost first


def outline(graph: Graph, stacks: Stacks) -> list[str]:
    """Replace each scope's nodes in `graph` by a call of a local function (added to
    `graph.functions`, its domain to `graph.opset_imports`). Returns notes on calls left inline."""
    state = _State(graph, dict(stacks))
    needed = {id(v) for v in graph.outputs}
    graph.nodes = state.level(graph.nodes, 0, needed)
    kept = {id(v) for v in graph.inputs} | {id(v) for v in graph.initializers.values()}
    for node in graph.nodes:
        kept.update(id(v) for v in node.outputs)
    graph.value_info = [v for v in graph.value_info if id(v) in kept]
    return state.notes


def common_stack(a: Sequence[Scope], b: Sequence[Scope]) -> tuple[Scope, ...]:
    """The calls two stacks have in common: their longest common prefix."""
    common = []
    for x, y in zip(a, b):
        if x != y:
            break
        common.append(x)
    return tuple(common)


def _reads(node: Node) -> list[Value]:
    return Uses._read_by(node)  # inputs, and the outer values its subgraphs read


class _State:
    def __init__(self, graph: Graph, stacks: Stacks):
        self.graph = graph
        self.stacks = stacks
        self.notes: list[str] = []
        self.variants: dict[tuple[str, str], list[tuple[onnx.FunctionProto, onnx.FunctionProto]]] = {}  # (body, emitted)

    def _scope(self, node: Node, depth: int) -> Scope | None:
        stack = self.stacks.get(id(node), ())
        return stack[depth] if len(stack) > depth else None

    def _truncate(self, node: Node, depth: int) -> None:
        stack = self.stacks.get(id(node), ())
        if len(stack) > depth:
            self.stacks[id(node)] = stack[:depth]

    def level(self, nodes: list[Node], depth: int, needed: set[int]) -> list[Node]:
        """`nodes` (topologically sorted) with each call at `depth` replaced by its calling node.
        `needed`: ids of the values read after `nodes` (by the enclosing graph or call)."""
        readers: dict[int, list[Node]] = {}
        for node in nodes:
            for v in _reads(node):
                readers.setdefault(id(v), []).append(node)
        calls: dict[int, Node] = {}  # id(first member) -> the calling node
        replaced: set[int] = set()
        for scope, members in self._groups(nodes, depth).items():
            member_ids = {id(n) for n in members}
            outputs = [v for n in members for v in n.outputs
                       if id(v) in needed or any(id(r) not in member_ids for r in readers.get(id(v), ()))]
            if not outputs:  # nothing reads it: leave it to dead-code removal
                for n in members:
                    self._truncate(n, depth)
                continue
            if not _convex(nodes, member_ids):
                self.notes.append(f"{scope.node_name or scope.key} ({scope.name}) stays inline: a path leaves its nodes "
                                  "and comes back in (a fusion across calls?)")  # fmt: skip
                for n in members:
                    self._truncate(n, depth)
                continue
            body = self.level(members, depth + 1, {id(v) for v in outputs})
            calls[id(members[0])] = self._call(scope, body, outputs)
            replaced.update(member_ids)
        if not calls:
            return nodes
        placed = [calls.get(id(n), n) for n in nodes if id(n) not in replaced or id(n) in calls]
        return _topological(placed)

    def _groups(self, nodes: list[Node], depth: int) -> dict[Scope, list[Node]]:
        groups: dict[Scope, list[Node]] = {}
        for node in nodes:
            scope = self._scope(node, depth)
            if scope is not None:
                groups.setdefault(scope, []).append(node)
        return groups

    def _call(self, scope: Scope, body: list[Node], outputs: list[Value]) -> Node:
        made = {id(v) for n in body for v in n.outputs}
        inputs: list[Value] = []
        seen: set[int] = set()
        for n in body:
            for v in _reads(n):
                if id(v) not in made and id(v) not in seen:
                    seen.add(id(v))
                    inputs.append(v)
        name = self._function(scope, body, inputs, outputs)
        attributes = {k: list(v) if isinstance(v, tuple) else v for k, v in scope.attributes}
        call = Node(scope.domain, name, inputs, attributes, {}, scope.node_name or None)
        call.metadata = dict(scope.metadata)
        call.outputs = list(outputs)
        for i, v in enumerate(outputs):
            v.producer, v.index = call, i
        self.graph.opset_imports.setdefault(scope.domain, FUNCTION_VERSION)
        return call

    def _function(self, scope: Scope, body: list[Node], inputs: list[Value], outputs: list[Value]) -> str:
        """The name of a function of `scope`'s (domain, name) computing `body`: an existing one
        when one computes the same, else a new one."""
        proto = onnx.FunctionProto(domain=scope.domain, name=scope.name, input=[v.name for v in inputs],
                                   output=[v.name for v in outputs])  # fmt: skip
        for node in body:
            node._add_to(proto.node)
        proto.opset_import.extend(_imports(self.graph.opset_imports, (n.domain for n in body)))
        variants = self.variants.setdefault((scope.domain, scope.name), [])
        for body_proto, emitted in variants:
            proto.name = body_proto.name
            if difference(proto, body_proto) is None:
                break
        else:
            proto.name = scope.name if not variants else f"{scope.name}_{len(variants)}"
            emitted = onnx.FunctionProto()
            emitted.CopyFrom(proto)
            variants.append((proto, emitted))
            self.graph.functions.append(emitted)
        emitted.attribute.extend(k for k, _ in scope.attributes if k not in emitted.attribute)
        return emitted.name


def _imports(graph_imports: Mapping[str, int], domains: Iterable[str]) -> list[onnx.OperatorSetIdProto]:
    versions = dict(graph_imports)
    for d in domains:
        versions.setdefault(d, FUNCTION_VERSION)  # a nested call's function domain
    return [onnx.OperatorSetIdProto(domain=d, version=v) for d, v in versions.items()]


def _convex(nodes: list[Node], member_ids: set[int]) -> bool:
    """No path from a member through a non-member back to a member (then the members can be
    one node)."""
    positions = [i for i, n in enumerate(nodes) if id(n) in member_ids]
    downstream: set[int] = set()  # values computed from the members' outputs
    outside: set[int] = set()  # ... by non-members
    for n in nodes[positions[0]:positions[-1] + 1]:
        reads = {id(v) for v in _reads(n)}
        if id(n) in member_ids:
            if reads & outside:
                return False
            downstream.update(id(v) for v in n.outputs)
        elif reads & downstream:
            ids = {id(v) for v in n.outputs}
            downstream |= ids
            outside |= ids
    return True


def _topological(nodes: list[Node]) -> list[Node]:
    """`nodes` in their order, except that a node's producers (in the list) come before it."""
    producer = {id(v): n for n in nodes for v in n.outputs}
    done: set[int] = set()
    visiting: set[int] = set()
    order: list[Node] = []
    for start in nodes:
        stack = [(start, False)]
        while stack:
            n, expanded = stack.pop()
            if id(n) in done:
                continue
            if expanded:
                done.add(id(n))
                order.append(n)
                continue
            if id(n) in visiting:
                raise ValueError(f"outlining made a cycle through {n}")  # _convex rules this out
            visiting.add(id(n))
            stack.append((n, True))
            for v in reversed(_reads(n)):
                p = producer.get(id(v))
                if p is not None and id(p) not in done:
                    stack.append((p, False))
    return order
