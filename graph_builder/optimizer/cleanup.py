"""Passes that remove work: dead nodes, repeated nodes, nodes that change nothing, and the
`kernel_shape` attribute that several runtimes want on Conv even though ONNX makes it optional."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeGuard, cast

import numpy as np
from onnx import defs

from graph_builder.builder import GraphBuilder
from graph_builder.ir import Node, Value, _freeze, is_check
from graph_builder.optimizer.editing import Uses, ints, subgraphs

_NONDETERMINISTIC = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial",
                     "Bernoulli", "Dropout"}


def dead_code(uses: Uses) -> int:
    """Remove nodes none of whose outputs is read or is a graph output."""
    removed = 0
    for node in reversed(list(uses.graph.nodes)):
        if uses.alive(node) and all(uses.count(o) == 0 for o in node.outputs) and node.op_type not in _NONDETERMINISTIC:
            uses.remove(node)
            removed += 1
    return removed


def _input_key(v: Value | None) -> object:
    """A value by identity, except a small constant (axes, shapes, scalars), by its contents:
    two Unsqueezes by the same axes made at different places are the same node."""
    if v is None:
        return None
    c = v.const_value
    if c is not None and c.size <= 16 and not v.is_parameter:
        return (c.dtype.str, c.shape, c.tobytes())
    return id(v)


def common_subexpressions(uses: Uses, merged: Callable[[Node, Node], None] | None = None) -> int:
    """Merge nodes that compute the same op on the same inputs with the same attributes;
    `merged(kept, dropped)` is told of each merge."""
    seen: dict[tuple, Node] = {}
    count = 0
    for node in list(uses.graph.nodes):
        if not uses.alive(node) or node.op_type in _NONDETERMINISTIC or any(True for _ in subgraphs(node)):
            continue
        key = (node.domain, node.op_type, len(node.outputs), tuple(_input_key(v) for v in node.inputs),
               tuple(sorted((k, _freeze(v)) for k, v in node.attributes.items())))
        first = seen.get(key)
        if first is None:
            seen[key] = node
            continue
        for old, new in zip(node.outputs, first.outputs):
            if id(old) in uses.outputs and id(new) in uses.outputs:
                break  # two graph outputs keep their own names
        else:
            for old, new in zip(node.outputs, first.outputs):
                uses.replace(old, new)
            if merged is not None:
                merged(first, node)
            uses.remove(node)
            count += 1
    return count


def _static(shape: tuple | None) -> TypeGuard[tuple[int, ...]]:
    return shape is not None and all(type(d) is int for d in shape)


def _known(shape: tuple | None) -> bool:
    return shape is not None and all(d is not None for d in shape)


def _and_true(node: Node) -> Value | None:
    """x when node is And(x, True) or And(True, x) with a one-element constant True that does
    not broadcast x (x's shape known and equal to the result's)."""
    if node.op_type != "And" or node.domain not in ("", "ai.onnx") or len(node.inputs) != 2:
        return None
    for x, c in (node.inputs, node.inputs[::-1]):
        if x is None or c is None or c.const_value is None or c.const_value.size != 1 or not bool(c.const_value.reshape(())):
            continue
        if _known(x.shape) and x.shape == node.outputs[0].shape and x.dtype is node.outputs[0].dtype:
            return x
    return None


def _empty_along(v: Value | None, axis: Any) -> bool:
    """Whether v has a static size 0 along `axis` (its rank known)."""
    if v is None or v.shape is None or not isinstance(axis, int) or not -len(v.shape) <= axis < len(v.shape):
        return False
    return v.shape[axis] == 0 and type(v.shape[axis]) is int


def _is_identity(node: Node) -> bool:
    x = node.inputs[0] if node.inputs else None
    if x is None:
        return False
    out = node.outputs[0]
    op = node.op_type
    if op == "Identity":
        return True
    if op == "Cast":
        return x.dtype is not None and x.dtype.onnx == node.attributes.get("to")
    if op == "CastLike":
        return x.dtype is not None and x.dtype is cast(Value, node.inputs[1]).dtype  # CastLike's input 1 is required
    if op == "Transpose":
        perm = node.attributes.get("perm")
        return perm is not None and list(perm) == list(range(len(perm)))
    if op in ("Reshape", "Expand"):  # the same shape, static or torch's symbolic dims (equal names, equal sizes)
        return _known(x.shape) and x.shape == out.shape and x.dtype is out.dtype and not is_check(node)
    if op == "Unsqueeze" and len(node.inputs) > 1:
        return ints(node.inputs[1]) == []
    if op == "Squeeze" and len(node.inputs) > 1:  # empty axes squeeze every dim of size 1
        return ints(node.inputs[1]) == [] and _static(x.shape) and 1 not in x.shape
    if op == "Concat":
        return len(node.inputs) == 1
    if op == "Relu":  # Relu(Relu(x)) is Relu(x), NaN and signed zeros included
        return x.producer is not None and x.producer.op_type == "Relu" and x.producer.domain in ("", "ai.onnx")
    if op == "Add":
        return _adds_zero(node)
    return False


def _adds_zero(node: Node) -> bool:
    """Add(x, 0) that returns x: the second input a one-element zero of x's dtype and of a rank
    no higher than x's (it broadcasts to x's shape), no parameter of the model, and
    - integer x, or a zero of -0.0 (x + -0.0 is x for every x, -0.0 included), or
    - float x + 0.0 (which turns -0.0 into 0.0) where x is never -0.0: computed by a Conv,
      ConvTranspose, Gemm (beta = 1) or inference BatchNormalization whose last step adds a
      constant bias without -0.0 (a sum that holds a 0.0 term is 0.0 when it is zero). timm's
      reparameterisable blocks (MobileOne, FastViT) add such zeros where a branch is absent
      (`identity_out = 0`): 17 Adds in fastvit_t8."""
    x, zero = node.inputs[0], node.inputs[1] if len(node.inputs) == 2 else None
    if x is None or zero is None or zero.const_value is None or zero.is_parameter or x.rank is None or zero.dtype is not x.dtype:
        return False  # a model's own parameter that holds 0 now stays
    c = zero.const_value
    if c.size != 1 or c.ndim > x.rank or c.reshape(()).item() != 0:
        return False
    if x.dtype is None or not x.dtype.is_floating:
        return x.dtype is not None and x.dtype.is_integer
    return bool(np.signbit(c).all()) or _never_negative_zero(x)


_BIAS_INPUT = {"Conv": 2, "ConvTranspose": 2, "Gemm": 2, "BatchNormalization": 2}


def _never_negative_zero(x: Value) -> bool:
    """x is computed by a node whose last step adds a constant bias without -0.0 (see _adds_zero)."""
    p = x.producer
    if p is None or p.domain not in ("", "ai.onnx") or p.op_type not in _BIAS_INPUT or x is not p.outputs[0]:
        return False
    if p.op_type == "Gemm" and float(p.attributes.get("beta", 1.0)) != 1.0:
        return False
    if p.op_type == "BatchNormalization" and p.attributes.get("training_mode", 0):
        return False
    index = _BIAS_INPUT[p.op_type]
    bias = p.inputs[index] if len(p.inputs) > index else None
    if bias is None or bias.const_value is None:
        return False
    b = np.asarray(bias.const_value)
    return not bool(((b == 0) & np.signbit(b)).any())


def _merged_reshape(inner: Node, outer: Node) -> list[int] | None:
    """The shape that makes `outer` = Reshape(inner's input) directly, or None. Reshape keeps the
    row-major order, so only the outer shape matters, except its 0s (allowzero=0: "this dim of
    the input"): each must name a dim of the inner Reshape's output known to equal the same dim
    of the inner input (the inner shape copied it with its own 0) or a static positive size."""
    shape = ints(outer.inputs[1])
    if shape is None:
        return None
    if outer.attributes.get("allowzero", 0) or 0 not in shape:
        return shape
    inner_shape = ints(inner.inputs[1]) if inner.op_type == "Reshape" else None  # an Unsqueeze's are axes
    copies = inner_shape is not None and not inner.attributes.get("allowzero", 0)
    mid = inner.outputs[0].shape
    merged = []
    for i, size in enumerate(shape):
        if size != 0:
            merged.append(size)
        elif copies and inner_shape is not None and i < len(inner_shape) and inner_shape[i] == 0:
            merged.append(0)  # both copy dim i of the inner input
        elif mid is not None and i < len(mid) and isinstance(static := mid[i], int) and static > 0:
            merged.append(static)
        else:
            return None
    return merged


def reshape_chains(builder: GraphBuilder, uses: Uses) -> int:
    """Reshape(Reshape(x, a), b) and Reshape(Unsqueeze(x, axes), b) read x directly: Reshape(x,
    b') with b's 0s resolved (`_merged_reshape`); the inner node goes when nothing else reads it
    (levit's `bn(x.flatten(0, 1)).reshape_as(x)` followed by a view into heads; repeat_kv of one
    copy per head, whose Expand `identities` removed). A Reshape that then gives x's own shape
    is an identity, for the `identities` pass that follows."""
    merged = 0
    for node in list(uses.graph.nodes):
        if not uses.alive(node) or node.op_type != "Reshape" or node.domain not in ("", "ai.onnx") or len(node.inputs) != 2:
            continue
        x = node.inputs[0]
        inner = x.producer if x is not None else None
        if inner is None or inner.domain not in ("", "ai.onnx") or not uses.alive(inner) or is_check(inner):
            continue
        if inner.op_type != "Reshape" and not (inner.op_type == "Unsqueeze" and len(inner.inputs) == 2
                                               and ints(inner.inputs[1]) is not None):
            continue
        shape = _merged_reshape(inner, node)
        source = inner.inputs[0]
        if shape is None or source is None:
            continue
        uses.set_input(node, 0, source)
        uses.set_input(node, 1, builder.constant(np.array(shape, np.int64)))
        merged += 1
    return merged


def identities(uses: Uses) -> int:
    """Drop nodes that return their input unchanged (Identity, Cast to the same type, identity
    Transpose, Reshape/Expand to the same shape (static, or torch's symbolic dims), Unsqueeze by
    no axes, Squeeze by no axes of a static shape without 1s, Concat of one input, Relu of a
    Relu, And with a one-element True that broadcasts nothing, Add of a zero that changes
    nothing: `_adds_zero`), drop Concat inputs with a static size 0 along the axis, and fold
    Transpose pairs into one."""
    removed = 0
    for node in list(uses.graph.nodes):
        if not uses.alive(node):
            continue
        if node.op_type == "Concat" and node.domain in ("", "ai.onnx") and len(node.inputs) > 1:
            kept = [v for v in node.inputs if not _empty_along(v, node.attributes.get("axis"))]
            if kept and len(kept) < len(node.inputs):  # an input with nothing along the axis adds nothing
                uses.set_inputs(node, kept)
                removed += 1
        same = _and_true(node)
        if same is not None and not (id(node.outputs[0]) in uses.outputs and (same.producer is None or id(same) in uses.outputs)):
            uses.replace(node.outputs[0], same)
            uses.remove(node)
            removed += 1
            continue
        if _is_identity(node):
            out, source = node.outputs[0], cast(Value, node.inputs[0])  # _is_identity checked it is not None
            if id(out) in uses.outputs and (source.producer is None or id(source) in uses.outputs):
                continue  # an input or weight returned as an output keeps its Identity
            uses.replace(out, source)
            uses.remove(node)
            removed += 1
        elif node.op_type == "Transpose":
            x = node.inputs[0]
            inner = x.producer if x is not None else None
            if inner is None or inner.op_type != "Transpose" or uses.count(cast(Value, x)) != 1:  # x has a producer
                continue
            p1, p2 = inner.attributes.get("perm"), node.attributes.get("perm")
            if p1 is None or p2 is None:
                continue
            composed = [int(p1[i]) for i in p2]
            if composed == list(range(len(composed))):
                if id(node.outputs[0]) in uses.outputs:
                    continue
                uses.replace(node.outputs[0], cast(Value, inner.inputs[0]))  # Transpose's input is required
                uses.remove(node)
            else:
                uses.set_input(node, 0, cast(Value, inner.inputs[0]))
                node.attributes = {**node.attributes, "perm": composed}
            uses.remove(inner)
            removed += 1
    return removed


def kernel_shapes(uses: Uses) -> int:
    """Conv and ConvTranspose carry kernel_shape whenever the weight's shape is static."""
    added = 0
    for node in uses.graph.nodes:
        if node.op_type in ("Conv", "ConvTranspose") and "kernel_shape" not in node.attributes:
            w = node.inputs[1]
            if w is not None and _static(w.shape) and len(w.shape) > 2:
                node.attributes = {**node.attributes, "kernel_shape": [int(d) for d in w.shape[2:]]}
                node.attr_types = {**node.attr_types, "kernel_shape": 7}  # AttributeProto.INTS
                added += 1
    return added


_REQUIRED_OUTPUTS: dict[tuple[str, int], int | None] = {}


def _required_outputs(op_type: str, opset: int) -> int | None:
    """How many leading outputs of `op_type` the spec requires (the rest are optional); None
    for ops with variadic outputs or no schema."""
    key = (op_type, opset)
    if key not in _REQUIRED_OUTPUTS:
        try:
            params = defs.get_schema(op_type, opset, "").outputs
        except defs.SchemaError:
            _REQUIRED_OUTPUTS[key] = None
        else:
            option = defs.OpSchema.FormalParameterOption
            if any(p.option == option.Variadic for p in params):  # Split: the count is the meaning
                _REQUIRED_OUTPUTS[key] = None
            else:
                required = [i for i, p in enumerate(params) if p.option != option.Optional]
                _REQUIRED_OUTPUTS[key] = required[-1] + 1 if required else 0
    return _REQUIRED_OUTPUTS[key]


def unused_outputs(uses: Uses, opset: int) -> int:
    """Drop the trailing optional outputs nothing reads (LayerNormalization's mean and inverse
    standard deviation, MaxPool's indices, ...): onnxruntime computes and writes every output a
    node names, so unread statistics cost time."""
    trimmed = 0
    for node in uses.graph.nodes:
        if node.domain not in ("", "ai.onnx") or len(node.outputs) < 2 or not uses.alive(node):
            continue
        keep = len(node.outputs)
        while keep > 1 and uses.count(node.outputs[keep - 1]) == 0:
            keep -= 1
        if keep == len(node.outputs):
            continue
        required = _required_outputs(node.op_type, opset)
        if required is None:
            continue
        keep = max(keep, required, 1)
        if keep < len(node.outputs):
            node.outputs = node.outputs[:keep]
            trimmed += 1
    return trimmed
