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
match one-element constants of that value (equal in the constant's own dtype, and of a rank
that does not broadcast the node's result to a higher rank), and Add / Mul / Max / Min match
either input order. The replacement is called with the matched values under the graph's own
builder, so it is ordinary traced code: shapes are inferred and metadata is kept (the new nodes
take the matched root node's metadata).

Whatever a rule's own `check` says, a rewrite is made only when its replacement returns the
root's dtype and a shape of the root's rank that agrees with every static dim, the root's other
outputs are unread, and the builder's opset is at least the rule's `opset` (the opset of the
operators the replacement makes): otherwise the replacement's nodes are dropped and the match
stays as it was.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

import numpy as np

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
    (optional) says whether a match may be rewritten (e.g. the axis is the last one), and `opset`
    is the first opset that has every operator the replacement makes (RotaryEmbedding: 23)."""

    def __init__(self, name: str, pattern: Callable[..., Any], replacement: Callable[..., Any],
                 check: Callable[..., bool] | None = None, opset: int = 1):
        self.name = name
        self.opset = opset
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

    def apply(self, builder: GraphBuilder, uses: Uses, m: Match) -> bool:
        """Rewrite the match; False (and the graph as it was) when the replacement's results do
        not have the root's types."""
        made: list[Node] = []
        result = build_before(builder, uses, m.root, lambda op: self.replacement(op, **m.bindings), made)
        results = result if isinstance(result, (tuple, list)) else (result,)
        unread = all(uses.count(o) == 0 for o in m.root.outputs[len(results):])
        if not unread or not all(_same_type(old, new) for old, new in zip(m.root.outputs, results)):
            for node in made:
                uses.remove(node)
            return False
        for old, new in zip(m.root.outputs, results):
            if new.dtype is old.dtype and old.shape is not None:
                new.set_type(old.dtype, old.shape)  # keep torch's symbolic dim names
            uses.replace(old, new)
        for node in reversed(m.nodes):
            if uses.alive(node) and all(uses.count(o) == 0 for o in node.outputs):
                uses.remove(node)
        return True


def _same_type(old: Value, new: Value) -> bool:
    """The replacement's result has the dtype of the value it replaces and a shape that agrees
    with it: the same rank, the same size wherever both know it (a broadcast is never hidden)."""
    if new.dtype is not old.dtype:
        return False
    if old.shape is None:
        return True
    if new.shape is None or len(new.shape) != len(old.shape):
        return False
    return all(type(a) is not int or type(b) is not int or a == b for a, b in zip(old.shape, new.shape))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(b, (int, float)) and math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-12)
    return a == b


def _number(p: float, v: Value, node: Node) -> bool:
    """A Python number of a pattern matches a one-element constant equal to it in the constant's
    dtype (within 4 ulps), of no higher rank than the node's other inputs (so that it does not
    broadcast the result up: a (1, 1) 0.5 times a vector is a matrix)."""
    c = v.const_value
    if c is None or c.size != 1:
        return False
    if c.ndim:
        ranks = [u.rank for u in node.inputs if u is not None and u is not v]
        if not ranks or any(r is None for r in ranks) or c.ndim > max(cast("list[int]", ranks)):
            return False
    value = c.reshape(())
    if c.dtype.kind == "f":
        want = np.asarray(p, dtype=c.dtype)
        return bool(abs(value.astype(np.float64) - float(p)) <= 4 * float(np.spacing(abs(want))))
    if c.dtype.kind in "iu":
        return float(p).is_integer() and int(value) == int(p)
    return False


def _match_value(p: Any, v: Value | None, bindings: dict[str, Any], nodes: list[Node]):
    """Yield every (bindings, nodes) under which pattern input `p` matches value `v` (a number
    in `p` is checked by _match_inputs, which knows the node)."""
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
    if isinstance(p, PatternNode) and v.producer is not None and v.index == 0:
        yield from _match_node(p, v.producer, bindings, nodes)


def _match_node(p: PatternNode, node: Node, bindings: dict[str, Any], nodes: list[Node]):
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
        yield from _match_inputs(node, list(order), inputs, bindings, nodes + [node])


def _match_inputs(node: Node, ps: list[Any], vs: list[Value | None], bindings: dict[str, Any], nodes: list[Node]):
    if not ps:
        yield bindings, nodes
        return
    if isinstance(ps[0], (int, float)) and not isinstance(ps[0], bool):
        if vs[0] is not None and _number(ps[0], vs[0], node):
            yield from _match_inputs(node, ps[1:], vs[1:], bindings, nodes)
        return
    for b, n in _match_value(ps[0], vs[0], bindings, nodes):
        yield from _match_inputs(node, ps[1:], vs[1:], b, n)


def rewrite(builder: GraphBuilder, uses: Uses, rules: list[Rule]) -> dict[str, int]:
    """Apply every rule wherever it matches, in graph order; returns the count per rule. Rules
    whose operators the builder's opset does not have are left out."""
    rules = [r for r in rules if r.opset <= builder.opset]
    counts: dict[str, int] = {}
    for node in list(uses.graph.nodes):
        if not uses.alive(node):
            continue
        for rule in rules:
            m = rule.match(node, uses)
            if m is not None and rule.apply(builder, uses, m):
                counts[rule.name] = counts.get(rule.name, 0) + 1
                break
    return counts
