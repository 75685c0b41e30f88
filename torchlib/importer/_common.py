"""Helpers shared by the converter modules.

`impl(op_type, ...)` registers a torch function as the whole converter of an ONNX op: the FX node
calls it with the node's inputs (tensors, None for an omitted optional one) and its attributes
(keyword arguments, with the ONNX defaults given here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from torchlib.importer.converter import Ctx
from torchlib.importer.registry import onnx_op


def impl(op_type: str, since: int = 1, until: int | None = None, domain: str = "", multi: bool = False,
         static: tuple[int, ...] = (), floats: tuple[int, ...] = (), **attr_defaults: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated torch function as op_type's converter; it gets the node's inputs
    positionally and the attributes named in `attr_defaults` as keywords. A function returning a
    tuple (declared with multi=True) gives one output per element. The inputs at positions
    `static` (shapes, axes, sizes: integer lists) are passed as Python ints when they are
    constants at import time (initializers, Constant nodes), so that torch.export never reads
    a tensor's data for them; likewise the float constants at positions `floats` (scales, roi)
    as tuples of Python floats."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        def convert(ctx: Ctx, *inputs: Any) -> Any:
            inputs = tuple(static_input(ctx, i, x) if i in static else float_input(ctx, i, x) if i in floats else x
                           for i, x in enumerate(inputs))
            kwargs = {k: _attr(ctx, k, d) for k, d in attr_defaults.items()}
            count = len(ctx.node.output)
            if count > 1 or multi:
                return ctx.call_multi(fn, count, *inputs, **kwargs)
            return ctx.call(fn, *inputs, **kwargs)

        convert.__qualname__ = f"convert_{op_type}"
        onnx_op(domain, op_type, since, until)(convert)
        return fn

    return register


def static_input(ctx: Ctx, index: int, node: Any) -> Any:
    """Input `index` as Python ints when it is an integer constant (a tuple) or a shape value (the
    node computing the ints at run time: SymInts under torch.export), else its FX node."""
    if index < len(ctx.node.input) and ctx.node.input[index] in ctx.builder.shape_values:
        return ctx.builder.shape_values[ctx.node.input[index]][0]
    value = ctx.const(index)
    if value is None or value.dtype.kind not in "iub" or value.ndim > 1:
        return node
    return tuple(int(v) for v in value.reshape(-1))


def float_input(ctx: Ctx, index: int, node: Any) -> Any:
    """Input `index` as a tuple of Python floats when it is a constant at import time, else its FX node."""
    value = ctx.const(index)
    if value is None or value.ndim > 1:
        return node
    return tuple(float(v) for v in value.reshape(-1))


def _attr(ctx: Ctx, name: str, default: Any) -> Any:
    value = ctx.attr(name, default)
    if isinstance(value, Sequence) and not isinstance(value, str):
        return tuple(value)
    return value


def ints(value: torch.Tensor | Sequence[int] | int | None) -> list[int]:
    """A shape-like input (1-D int64 tensor at run time) as Python ints."""
    if value is None:
        return []
    if isinstance(value, (int, torch.SymInt)):
        return [value]  # type: ignore[list-item]
    if isinstance(value, torch.Tensor):
        return [int(v) for v in value.reshape(-1).tolist()]
    return [v if isinstance(v, torch.SymInt) else int(v) for v in value]  # type: ignore[misc]


def axis(a: int, rank: int) -> int:
    return a + rank if a < 0 else a
