"""Graph forms that keep their meaning through onnxruntime's own graph optimizations.

A saved model is run with onnxruntime's default session options (every graph optimization on),
and two of its rewrites change what some exact graphs compute. `guard(builder)` rewrites those
graphs into equal forms the rewrites do not match; `torchlib.export` runs it on every export,
optimized or not (docs/optimizer.md, "onnxruntime's rewrites").

1. NoopElimination (onnxruntime/core/optimizer/noop_elimination.cc) removes `x + c`, `c + x`,
   `x - c` when c cast to float32 is 0, and `x * c`, `c * x`, `x / c` when it is 1, for a
   one-element constant c whose rank is at most x's. A float64 c is not exact there: `x + 1e-300`
   and `x * (1 + 1e-12)` lose their constant. Such a node reads c at x's rank + 1 (the rule
   rejects a constant of higher rank) and a Squeeze takes the added leading axis away.
2. On CPU a float16 node without a float16 kernel runs in float32 between Casts that
   onnxruntime inserts, and it removes an inserted Cast to float16 followed by a Cast back to
   float32 as free of precision loss: between two such nodes (or before a Cast to float32) the
   float16 rounding is lost (`(x * x).float()` at x = 300 gives 90000, not inf; `x * x / 300`
   gives 300, not inf). Such a node is written in float32 between Casts of the graph's own,
   which onnxruntime keeps (a Cast to float16 then back is a loss it respects), so every value
   is rounded to float16 as in torch. Data-movement ops, which have float16 kernels, stay.
   Nodes with several outputs or with subgraphs are left as they are; If / Loop / Scan bodies
   are rewritten like the main graph. An Add, Sub, Mul or Div of the main graph that reads no
   other node's output and whose output no node reads is left in float16: there is no pair of
   inserted Casts to merge, and float16 arithmetic rounded once (a float16 kernel, or float32
   and one Cast: 24 >= 2 * 11 + 2 bits, so the double rounding is innocuous) is torch's answer
   (`x ** 2.0` stays one float16 Mul; other ops, whose float16 kernels may accumulate in float16,
   are still written in float32).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np

from graph_builder import types
from graph_builder.ir import Graph, Node, Value
from graph_builder.optimizer.editing import Uses, build_before, subgraphs

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

# onnxruntime's NoopElimination: the neutral element it looks for, compared after a cast to float32.
_NEUTRAL = {"Add": 0.0, "Sub": 0.0, "Mul": 1.0, "Div": 1.0}

# Ops onnxruntime's CPU runs in float16 itself (measured, onnxruntime 1.31), and ops whose
# output type an attribute gives: both stay as they are.
_KEPT = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Gather", "Expand",
         "Split", "Identity", "Shape", "Size", "Cast", "CastLike", "EyeLike", "RandomNormalLike",
         "RandomUniformLike", "Bernoulli", "Multinomial", "Dropout"}


def guard(builder: GraphBuilder) -> dict[str, int]:
    """Rewrite, in place, the nodes of `builder.graph` that onnxruntime's default graph
    optimizations would compute differently; returns how many of each were rewritten."""
    report = {"constants kept from NoopElimination": 0, "float16 nodes written in float32": 0}
    for graph in _graphs(builder.graph):  # onnxruntime rewrites If / Loop / Scan bodies too
        owner = builder if graph is builder.graph else builder._root.subgraphs.get(id(graph))
        if owner is None:  # a body read from a model, not built here: no builder to add nodes with
            continue
        uses = Uses(graph)
        report["constants kept from NoopElimination"] += _near_neutral_constants(owner, uses)
        uses.commit()
        report["float16 nodes written in float32"] += _float16_roundings(owner, uses, top=graph is builder.graph)
        uses.commit()
    return {k: v for k, v in report.items() if v}


def _graphs(graph: Graph) -> list[Graph]:
    """The graph and every subgraph inside it."""
    found = [graph]
    for node in graph.nodes:
        for sub in subgraphs(node):
            found.extend(_graphs(sub))
    return found


def _fooled(node: Node, i: int) -> bool:
    """Whether NoopElimination would take input i of `node` for the neutral element although it
    is not exactly that."""
    value = node.inputs[i]
    if value is None or value.const_value is None or value.const_value.size != 1 or value.dtype != types.DOUBLE:
        return False
    if i == 0 and node.op_type in ("Sub", "Div"):
        return False
    exact = float(value.const_value.reshape(()))
    neutral = _NEUTRAL[node.op_type]
    return exact != neutral and float(np.float32(exact)) == neutral


def _near_neutral_constants(builder: GraphBuilder, uses: Uses) -> int:
    rewritten = 0
    for node in list(uses.graph.nodes):
        if node.op_type not in _NEUTRAL or node.domain not in ("", "ai.onnx") or len(node.inputs) != 2:
            continue
        fooled = [i for i in (0, 1) if _fooled(node, i)]
        other = node.inputs[1 - fooled[0]] if len(fooled) == 1 else None
        if other is None or other.rank is None:
            continue
        i = fooled[0]
        # _fooled(node, i) established that input i is a Value with a one-element const_value.
        constant = cast(np.ndarray, cast(Value, node.inputs[i]).const_value).reshape((1,) * (other.rank + 1))

        def build(op, node=node, i=i, constant=constant):
            pair = [node.inputs[0], node.inputs[1]]
            pair[i] = builder.constant(constant)
            return op.Squeeze(getattr(op, node.op_type)(*pair), [0])

        uses.replace(node.outputs[0], build_before(builder, uses, node, build))
        uses.remove(node)
        rewritten += 1
    return rewritten


def _alone(uses: Uses) -> set[int]:
    """The Add / Sub / Mul / Div nodes that read no other node's output and whose output no
    node reads (it only leaves the graph), decided before any rewrite."""
    produced = {id(v) for n in uses.graph.nodes for v in n.outputs}
    return {id(n) for n in uses.graph.nodes if n.op_type in _NEUTRAL and len(n.outputs) == 1
            and not uses.of(n.outputs[0]) and not any(v is not None and id(v) in produced for v in n.inputs)}


def _float16_roundings(builder: GraphBuilder, uses: Uses, top: bool) -> int:
    rewritten = 0
    alone = _alone(uses) if top else set()
    widened: dict[int, Value] = {}  # float16 value -> its Cast to float32 (one per value)
    for node in list(uses.graph.nodes):
        if (node.op_type in _KEPT or node.domain not in ("", "ai.onnx") or len(node.outputs) != 1
                or any(True for _ in subgraphs(node)) or node.outputs[0].dtype != types.FLOAT16
                or not any(v is not None and v.dtype == types.FLOAT16 for v in node.inputs)
                or id(node) in alone):
            continue

        def build(op, node=node):
            inputs = []
            for v in node.inputs:
                if v is not None and v.dtype == types.FLOAT16:
                    if id(v) not in widened:
                        widened[id(v)] = op.Cast(v, to=types.FLOAT.onnx)
                    v = widened[id(v)]
                inputs.append(v)
            return op.Cast(getattr(op, node.op_type)(*inputs, **node.attributes), to=types.FLOAT16.onnx)

        uses.replace(node.outputs[0], build_before(builder, uses, node, build))
        uses.remove(node)
        rewritten += 1
    return rewritten
