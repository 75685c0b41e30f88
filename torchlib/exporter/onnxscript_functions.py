"""Functions written for torch.onnx (with onnxscript's `op`) as torchlib functions.

A torch.onnx user's `custom_translation_table` holds functions written with onnxscript:

    from onnxscript import opset18 as op
    def custom_add(self, other):                       # trace-only: plain Python
        return op.Sub(self, other)

    @onnxscript.script()
    def custom_gelu(x: FLOAT) -> FLOAT: ...            # scripted: an ONNX FunctionProto

Both run in torchlib's graph unchanged. While such a function runs, onnxscript's default
evaluator is one that forwards each `op.Xxx(...)` to graph_builder's op of the same domain and
name, so a trace-only function records nodes in the graph being built like any torchlib
function. A scripted function is inlined: its FunctionProto's nodes are replayed through the
same ops, with its attribute parameters bound to the call's keyword arguments (or their
defaults). Ops run at the model's opset, not the one the function imported (ONNX keeps an op's
meaning across versions except where its schema changed; the checker sees the model's).

A list of functions for one op (torch.onnx's overloads) is dispatched on the inputs' element
types, read from onnxscript annotations (`self: BOOL`): the first function whose annotated
tensor parameters all match wins; a function without annotations matches anything.

onnxscript is never imported here unless the user's function came from it: a function is
adapted only when `onnxscript` is already in `sys.modules`.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import onnx
from onnx import numpy_helper

from graph_builder import types
from graph_builder.evaluator import current_opset
from graph_builder.ir import Value
from graph_builder.opset import custom_op, opset


class OnnxscriptFunctionError(TypeError):
    """A function written with onnxscript uses something torchlib cannot replay."""


def adapt(function: Any) -> Callable[..., Any]:
    """The function to register for an op: `function` itself, or, for functions written with
    onnxscript (or a list of them), one that runs them in torchlib's graph."""
    if isinstance(function, (list, tuple)):
        candidates = [adapt(f) for f in function]
        annotations = [_tensor_annotations(f) for f in function]
        if not candidates:
            raise ValueError("an empty list of functions for one op")
        return _dispatcher(candidates, annotations)
    if "onnxscript" not in sys.modules:
        return function
    onnxscript_values = sys.modules.get("onnxscript.values") or sys.modules.get("onnxscript._internal.values")
    if onnxscript_values is not None and isinstance(function, onnxscript_values.OnnxFunction):
        return _with_evaluator(function, _signature_of(function))
    return _with_evaluator(function, None)


def _with_evaluator(function: Any, signature: inspect.Signature | None) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        from onnxscript import evaluator

        with evaluator.default_as(_GraphEvaluator()):
            return function(*args, **kwargs)

    run.__name__ = str(getattr(function, "__name__", None) or getattr(function, "name", "onnxscript_function"))
    run.__doc__ = getattr(function, "__doc__", None)
    run.__wrapped__ = function  # type: ignore[attr-defined]  # what inspect.signature follows
    if signature is not None:
        run.__signature__ = signature  # type: ignore[attr-defined]
    return run


def _signature_of(function: Any) -> inspect.Signature | None:
    python_function = getattr(function, "function", None) or getattr(function, "func", None)
    return inspect.signature(python_function) if python_function is not None else None


class _GraphEvaluator:
    """onnxscript's Evaluator protocol, answered by graph_builder's ops."""

    def eval_op(self, op: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        return _op(op.opset.domain, op.name)(*args, **kwargs)

    def eval_function(self, function: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
        return inline(function.to_function_proto(), args, kwargs)


def _op(domain: str, name: str) -> Callable[..., Any]:
    if domain in ("", "ai.onnx"):
        return getattr(opset(current_opset()), name)
    try:
        return getattr(opset(1, domain), name)
    except AttributeError:
        # a domain onnx.defs does not know: declare the op the way graph_builder.custom_op does
        return custom_op(domain, name)


def inline(proto: onnx.FunctionProto, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Any:
    """Replay the nodes of `proto` through graph_builder's ops on `args` (its inputs, in order)
    and `kwargs` (its attribute parameters); returns its output(s)."""
    if len(args) > len(proto.input):
        raise OnnxscriptFunctionError(f"onnxscript function {proto.name!r} takes {len(proto.input)} inputs, got {len(args)}")
    env: dict[str, Any] = {name: value for name, value in zip(proto.input, args, strict=False)}
    attributes = {a.name: _attribute_value(a, proto.name) for a in proto.attribute_proto}
    unknown = set(kwargs) - set(attributes) - set(proto.attribute)
    if unknown:
        raise OnnxscriptFunctionError(f"onnxscript function {proto.name!r} has no attribute {sorted(unknown)}")
    attributes.update(kwargs)
    for node in proto.node:
        if node.domain not in ("", "ai.onnx") and node.domain == proto.domain:
            raise OnnxscriptFunctionError(
                f"onnxscript function {proto.name!r} calls the function {node.op_type!r} of its own domain; "
                "torchlib replays ONNX ops only: write that function trace-only (plain Python) instead")
        inputs = [env[name] if name else None for name in node.input]
        attrs = {}
        for a in node.attribute:
            if a.ref_attr_name:
                if a.ref_attr_name in attributes:
                    attrs[a.name] = attributes[a.ref_attr_name]
            else:
                attrs[a.name] = _attribute_value(a, proto.name)
        outputs = _op(node.domain, node.op_type)(*inputs, **attrs)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        env.update({name: value for name, value in zip(node.output, outputs, strict=False) if name})
    results = [env[name] for name in proto.output]
    return results[0] if len(results) == 1 else tuple(results)


def _attribute_value(a: onnx.AttributeProto, function: str) -> Any:
    if a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
        raise OnnxscriptFunctionError(
            f"onnxscript function {function!r} uses control flow (attribute {a.name!r} holds a graph); torchlib "
            "replays straight-line functions only: write it trace-only (plain Python with op.If on Values) instead")
    if a.type == onnx.AttributeProto.TENSOR:
        return numpy_helper.to_array(a.t)
    return onnx.helper.get_attribute_value(a)


def _tensor_annotations(function: Any) -> list[int | None]:
    """The ONNX element type each positional parameter is annotated with (onnxscript's FLOAT,
    BOOL, ...), or None where it has none."""
    python_function = getattr(function, "function", None) or getattr(function, "func", None) or function
    try:
        parameters = inspect.signature(python_function).parameters.values()
    except (TypeError, ValueError):
        return []
    onnx_types = sys.modules.get("onnxscript.onnx_types")
    found: list[int | None] = []
    for p in parameters:
        annotation = p.annotation
        if isinstance(annotation, str):  # `from __future__ import annotations`: onnxscript's type by its name
            annotation = getattr(onnx_types, annotation, None)
        dtype = getattr(annotation, "dtype", None)
        found.append(int(dtype) if dtype is not None else None)
    return found


def _dispatcher(candidates: list[Callable[..., Any]], annotations: list[list[int | None]]) -> Callable[..., Any]:
    def dispatch(*args: Any, **kwargs: Any) -> Any:
        for function, wanted in zip(candidates, annotations, strict=True):
            if all(w is None or not isinstance(a, Value) or (a.dtype is not None and a.dtype.onnx == w)
                   for a, w in zip(args, wanted, strict=False)):
                return function(*args, **kwargs)
        got = [a.dtype.name for a in args if isinstance(a, Value) and a.dtype is not None]
        offered = [[types.from_onnx(w).name if w is not None else "any" for w in ws] for ws in annotations]
        raise OnnxscriptFunctionError(f"none of the {len(candidates)} functions given for this op takes inputs of "
                                      f"types {got}; their annotations: {offered}")

    dispatch.__name__ = "overloads_of_" + getattr(candidates[0], "__name__", "op")
    return dispatch
