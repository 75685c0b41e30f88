"""Tables of one-to-one ops: one line registers a real function with its ATen signature and
schema docstring, instead of forty copies of the same three lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torchlib.promotion import DEFAULT, elementwise
from torchlib.registry import aten_op


def unary(name: str, onnx_op: Callable[..., Any], kind: str = DEFAULT) -> Callable[..., Any]:
    """Register `aten::name(Tensor self) -> Tensor` as `onnx_op(self)` after promotion `kind`."""

    def fn(self: Any) -> Any:
        return onnx_op(self)

    fn.__name__ = fn.__qualname__ = f"aten_{name}"
    fn.__doc__ = f"{name}(Tensor self) -> Tensor"
    return aten_op(f"aten::{name}")(elementwise("self", kind=kind)(fn))
