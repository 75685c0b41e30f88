"""Declarative rewrite rules: a pattern function and a replacement function, both written with an
`op` namespace.

    def rms_norm(op, x, w, eps):
        mean_square = op.ReduceMean(op.Mul(x, x), Var("axes"), keepdims=1)
        return op.Mul(w, op.Mul(x, op.Reciprocal(op.Sqrt(op.Add(mean_square, eps)))))

    def rms_norm_fused(op, x, w, eps, axes):
        return op.RMSNormalization(x, w, axis=-1, epsilon=eps)

    RMS_NORM = Rule("RMSNorm", rms_norm, rms_norm_fused, check=...)

The pattern function is called once with a recording namespace, which turns it into a small
graph of `PatternNode`s; its parameters (and `Var`s inside) match any value, Python numbers
match one-element constants of that value, and Add / Mul / Max / Min match either input order.
The replacement is called with the matched values under the graph's own builder, so it is
ordinary traced code: shapes are inferred and metadata is kept (the new nodes take the matched
root node's metadata).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from graph_builder.ir import Node, Value
from graph_builder.optimizer.editing import Uses, build_before

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

_COMMUTATIVE = {"Add", "Mul", "Max", "Min", "Sum", "And", "Or", "Equal"}


_REQUIRED = object()


class Var:
    """A named placeholder: matches any value (the same one wherever the name recurs), or any
    attribute value when used as an attribute; `constant=True` requires a constant. As an
    attribute, `default=` also matches a node without that attribute, bound to the default (the
    spec's default value, so that the check sees every attribute that changes the result)."""

    def __init__(self, name: str, constant: bool = False, default: Any = _REQUIRED):
        self.name = name
        self.constant = constant
        self.default = default

    def __repr__(self) -> str:
        return f"Var({self.name!r})"


class PatternNode:
    def __init__(self, op_type: str, inputs: tuple[Any, ...], attributes: dict[str, Any], domain: str = ""):
        self.op_type = op_type
        self.inputs = inputs
        self.attributes = attributes
        self.domain = domain

    def __repr__(self) -> str:
        return f"{self.op_type}({', '.join(map(repr, self.inputs))})"


class _Recorder:
    """The `op` namespace a pattern function is called with: op.X(...) records a PatternNode."""

    def __getattr__(self, op_type: str) -> Callable[..., PatternNode]:
        if op_type.startswith("__"):
            raise AttributeError(op_type)
        return lambda *inputs, **attributes: PatternNode(op_type, inputs, attributes)


class Match:
    def __init__(self, root: Node, nodes: list[Node], bindings: dict[str, Any]):
        self.root = root
        self.nodes = nodes
        self.bindings = bindings


class Rule:
    """One rewrite: `pattern(op, *vars)` -> `replacement(op, **bindings)`, where `check(**bindings)`
    (optional) says whether a match may be rewritten (e.g. the axis is the last one)."""

    def __init__(self, name: str, pattern: Callable[..., Any], replacement: Callable[..., Any],
                 check: Callable[..., bool] | None = None):
        self.name = name
        params = list(inspect.signature(pattern).parameters)[1:]
        self.root = pattern(_Recorder(), *(Var(p) for p in params))
        if not isinstance(self.root, PatternNode):
            raise TypeError(f"rule {name}: the pattern must return an op.X(...) call")
        self.replacement = replacement
        self.check = check

    def match(self, node: Node, uses: Uses) -> Match | None:
        if node.op_type != self.root.op_type:
            return None
        for bindings, nodes in _match_node(self.root, node, {}, []):
            # inner nodes whose results are read outside the match stay (the rewrite reads only
            # the matched inputs), so a match is always safe to rewrite
            if self.check is not None and not self.check(**bindings):
                continue
            return Match(node, nodes, bindings)
        return None

    def apply(self, builder: GraphBuilder, uses: Uses, m: Match) -> None:
        result = build_before(builder, uses, m.root, lambda op: self.replacement(op, **m.bindings))
        results = result if isinstance(result, (tuple, list)) else (result,)
        for old, new in zip(m.root.outputs, results):
            if new.dtype is old.dtype and old.shape is not None:
                new.set_type(old.dtype, old.shape)  # keep torch's symbolic dim names
            uses.replace(old, new)
        for node in reversed(m.nodes):
            if uses.alive(node) and all(uses.count(o) == 0 for o in node.outputs):
                uses.remove(node)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, (int, float)) and math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-12)
    return a == b


def _match_value(p: Any, v: Value | None, bindings: dict[str, Any], nodes: list[Node]):  # type: ignore[no-untyped-def]
    """Yield every (bindings, nodes) under which pattern input `p` matches value `v`."""
    if v is None:
        if p is None:
            yield bindings, nodes
        return
    if isinstance(p, Var):
        bound = bindings.get(p.name)
        if bound is None:
            if p.constant and v.const_value is None:
                return
            yield {**bindings, p.name: v}, nodes
        elif bound is v:
            yield bindings, nodes
        return
    if isinstance(p, (int, float)):
        c = v.const_value
        if c is not None and c.size == 1 and _same(float(c.reshape(())), float(p)):
            yield bindings, nodes
        return
    if isinstance(p, PatternNode):
        if v.producer is not None and v.index == 0:
            yield from _match_node(p, v.producer, bindings, nodes)


def _match_node(p: PatternNode, node: Node, bindings: dict[str, Any], nodes: list[Node]):  # type: ignore[no-untyped-def]
    if node.op_type != p.op_type or node.domain != p.domain or node in nodes:
        return
    for key, want in p.attributes.items():
        have = node.attributes.get(key)
        if isinstance(want, Var):
            if have is None:
                if want.default is _REQUIRED:
                    return
                have = want.default
            if want.name in bindings and not _same(bindings[want.name], have):
                return
            bindings = {**bindings, want.name: have}
        elif have is None or not _same(want, have):
            return
    inputs = list(node.inputs)
    while inputs and inputs[-1] is None:
        inputs.pop()
    if len(inputs) != len(p.inputs):
        return
    orders = [p.inputs]
    if p.op_type in _COMMUTATIVE and len(p.inputs) == 2:
        orders.append(p.inputs[::-1])
    for order in orders:
        yield from _match_inputs(list(order), inputs, bindings, nodes + [node])


def _match_inputs(ps: list[Any], vs: list[Value | None], bindings: dict[str, Any], nodes: list[Node]):  # type: ignore[no-untyped-def]
    if not ps:
        yield bindings, nodes
        return
    for b, n in _match_value(ps[0], vs[0], bindings, nodes):
        yield from _match_inputs(ps[1:], vs[1:], b, n)


def rewrite(builder: GraphBuilder, uses: Uses, rules: list[Rule]) -> dict[str, int]:
    """Apply every rule wherever it matches, in graph order; returns the count per rule."""
    counts: dict[str, int] = {}
    for node in list(uses.graph.nodes):
        if not uses.alive(node):
            continue
        for rule in rules:
            m = rule.match(node, uses)
            if m is not None:
                rule.apply(builder, uses, m)
                counts[rule.name] = counts.get(rule.name, 0) + 1
                break
    return counts
