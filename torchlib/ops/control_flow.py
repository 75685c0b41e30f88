"""Higher-order ops: torch.cond -> If, while_loop -> Loop, scan / associative_scan / map -> Scan,
and the regions torch.export wraps (`torch.no_grad()`, autocast) inlined.

Each function receives its branches and bodies as `Body` objects (the protocol in
torchlib/registry.py; the exporter passes FX sub-GraphModules, torchlib/exporter/subgraph.py),
which translate themselves, node by node through the registry, into the graph being built (`body.inline(*args)`). For a Loop or Scan body the function makes a subgraph
builder, gives it formal inputs typed like the body's placeholders (`body.input_like`), and
inlines the body inside `with sub:`. Operands that torch lifted out of a closure (weights, outer
tensors, symbolic sizes) are bound to the Values of the outer graph, which ONNX subgraphs may use
directly. These functions only trace: there is no eager meaning for a graph-valued argument.

Limits: a while_loop's carried values keep their dtype and rank across iterations (torch
requires it too); associative_scan needs at least one element along the scanned dim (it seeds
the Scan with the first element).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graph_builder import GraphBuilder, op, types
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from torchlib.registry import Body, aten_op

INT64_MAX = 2**63 - 1


def _builder(name: str) -> GraphBuilder:
    builder = current_evaluator()
    if not isinstance(builder, GraphBuilder):
        raise TypeError(f"{name} takes FX graph bodies: it runs only while exporting (inside a graph being built), not eagerly")
    return builder


def _flat(values: Any) -> list[Any]:
    out: list[Any] = []
    for v in values:
        out.extend(_flat(v) if isinstance(v, (list, tuple)) else [v])
    return out


def _tensor(builder: GraphBuilder, x: Any) -> Value:
    """A Python int/float/bool operand (a specialized SymInt, a constant carry) as a Value."""
    if isinstance(x, Value):
        return x
    if isinstance(x, bool):
        return builder.constant(x, types.BOOL)
    if isinstance(x, int):
        return builder.constant(x, types.INT64)
    if isinstance(x, float):
        return builder.constant(x, types.DOUBLE)
    raise TypeError(f"operand {x!r} of type {type(x).__name__} is neither a tensor nor a Python number")


def _outputs(result: Any) -> list[Value]:
    return list(result) if isinstance(result, tuple) else [result]


@aten_op("higher_order::wrap_with_set_grad_enabled")
def higher_order_wrap_with_set_grad_enabled(enable_grad: bool, wrapped_func: Body, *args: Any) -> list[Any]:
    """wrap_with_set_grad_enabled(bool enable_grad, GraphModule wrapped_func, *args) -> Any[]"""
    return wrapped_func.inline(*args)  # gradients do not exist in the exported graph


@aten_op("higher_order::wrap_with_autocast")
def higher_order_wrap_with_autocast(
    device_type: str, dtype: Any, enabled: bool, cache_enabled: bool | None, wrapped_func: Body, *args: Any
) -> list[Any]:
    """wrap_with_autocast(str device_type, ScalarType? dtype, bool enabled, bool? cache_enabled, GraphModule wrapped_func, *args) -> Any[]"""
    # torch recorded, for every op of the region, the dtype autocast gave its result (the
    # lower-precision dtype for matmul/conv/linear, float32 for the ops autocast keeps wide,
    # the widest input for promoting ops): each op computes in that dtype.
    return wrapped_func.inline(*args, autocast=enabled)


@aten_op("higher_order::cond")
def higher_order_cond(pred: Any, true_fn: Body, false_fn: Body, operands: Sequence[Any]) -> list[Value]:
    """cond(Tensor pred, GraphModule true_fn, GraphModule false_fn, Any[] operands) -> Tensor[]"""
    operands = _flat(operands)
    if isinstance(pred, bool):  # torch specialized the predicate
        return (true_fn if pred else false_fn).inline(*operands)
    builder = _builder("higher_order::cond")
    if pred.dtype is not types.BOOL:
        pred = op.Cast(pred, to=types.BOOL.onnx)
    if pred.rank != 0:
        pred = op.Reshape(pred, op.Constant(value_ints=[]))  # a one-element tensor, as torch accepts
    branches = []
    for body, name in ((true_fn, "then_branch"), (false_fn, "else_branch")):
        sub = builder.subgraph(name)
        with sub:
            for value in body.inline(*operands):
                sub.output(_tensor(sub, value))
        branches.append(sub)
    return _outputs(op.If(pred, then_branch=branches[0], else_branch=branches[1]))


@aten_op("higher_order::while_loop")
def higher_order_while_loop(cond_fn: Body, body_fn: Body, carried_inputs: Sequence[Any], additional_inputs: Sequence[Any]) -> list[Value]:
    """while_loop(GraphModule cond_fn, GraphModule body_fn, Any[] carried_inputs, Any[] additional_inputs) -> Tensor[]"""
    builder = _builder("higher_order::while_loop")
    carried = [_tensor(builder, x) for x in _flat(carried_inputs)]
    extra = _flat(additional_inputs)
    (keep_going,) = cond_fn.inline(*carried, *extra)
    body = builder.subgraph("loop_body")
    body.input("iteration", types.INT64, [])
    body.input("condition", types.BOOL, [])
    formal = [body_fn.input_like(body, i) for i in range(len(carried))]
    with body:
        new = [_tensor(body, v) for v in body_fn.inline(*formal, *extra)]
        (again,) = cond_fn.inline(*new, *extra)
        body.output(_tensor(body, again))
        for v in new:
            body.output(v)
    return _outputs(op.Loop(None, _tensor(builder, keep_going), *carried, body=body))


@aten_op("higher_order::scan")
def higher_order_scan(combine_fn: Body, init: Sequence[Any], xs: Sequence[Any], additional_inputs: Sequence[Any]) -> list[Value]:
    """scan(GraphModule combine_fn, Tensor[] init, Tensor[] xs, Any[] additional_inputs) -> Tensor[]"""
    builder = _builder("higher_order::scan")
    init, xs = [_tensor(builder, x) for x in _flat(init)], _flat(xs)
    body = builder.subgraph("scan_body")
    formal = [combine_fn.input_like(body, i) for i in range(len(init) + len(xs))]
    with body:
        for v in combine_fn.inline(*formal, *_flat(additional_inputs)):  # (next carry..., y...)
            body.output(_tensor(body, v))
    return _outputs(op.Scan(*init, *xs, body=body, num_scan_inputs=len(xs)))


@aten_op("higher_order::map_impl")
def higher_order_map_impl(f: Body, xs: Sequence[Any], pos_args: Sequence[Any]) -> list[Value]:
    """map_impl(GraphModule f, Tensor[] xs, Any[] pos_args) -> Tensor[]"""
    builder = _builder("higher_order::map_impl")
    xs = _flat(xs)
    body = builder.subgraph("map_body")
    formal = [f.input_like(body, i) for i in range(len(xs))]
    with body:
        for v in f.inline(*formal, *_flat(pos_args)):
            body.output(_tensor(body, v))
    return _outputs(op.Scan(*xs, body=body, num_scan_inputs=len(xs)))


@aten_op("higher_order::associative_scan")
def higher_order_associative_scan(combine_fn: Body, xs: Sequence[Any], additional_inputs: Sequence[Any]) -> list[Value]:
    """associative_scan(GraphModule combine_fn, Tensor[] xs, Any[] additional_inputs) -> Tensor[]"""
    # An inclusive scan along dim 0 (torch moved the user's dim there): y[0] = x[0],
    # y[i] = combine(y[i-1], x[i]), as a Scan whose state starts at x[0] and runs over x[1:].
    builder = _builder("higher_order::associative_scan")
    xs = _flat(xs)
    n = len(xs)
    first = [op.Gather(x, op.Constant(value_int=0), axis=0) for x in xs]
    rest = [op.Slice(x, [1], [INT64_MAX], [0]) for x in xs]
    body = builder.subgraph("associative_scan_body")
    formal = [combine_fn.input_like(body, i) for i in range(2 * n)]
    with body:
        combined = [_tensor(body, v) for v in combine_fn.inline(*formal, *_flat(additional_inputs))]
        for v in combined + combined:  # the state, and the scanned output
            body.output(v)
    results = _outputs(op.Scan(*first, *rest, body=body, num_scan_inputs=n))
    return [op.Concat(op.Unsqueeze(x0, [0]), y, axis=0) for x0, y in zip(first, results[n:])]
