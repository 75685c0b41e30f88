"""Dtype conversion and copies: _to_copy, to (every overload), copy, type_as, lift_fresh(_copy),
and view.dtype (a bitcast: folded on constants only, as ONNX has none).

Layout, device, pin_memory, non_blocking and memory_format have no meaning in ONNX: only the
dtype matters. Casts follow ONNX Cast, which agrees with torch: float to integer truncates toward
zero, nonzero (and NaN) to bool is True.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.arrays import unpack_nibbles
from graph_builder.ir import Value, raw_bytes
from graph_builder.type_constraints import TTensor
from graph_builder.types import DType
from torchlib.ops.shape import aten_expand_as
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _copy(x: Value, dtype: DType | None) -> Value:
    """A new Value (a copy is never its input): x cast to dtype, or its Identity."""
    return op.Identity(x) if dtype is None or dtype is x.dtype else cast_to(x, dtype)


@aten_op("aten::_to_copy")
def aten__to_copy(
    self: TTensor,
    *,
    dtype: DType | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    memory_format: Any = None,
) -> TTensor:
    """_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor"""
    return _copy(self, dtype)


@aten_op("aten::to.dtype")
def aten_to_dtype(
    self: TTensor, dtype: DType, non_blocking: bool = False, copy: bool = False, memory_format: Any = None
) -> TTensor:
    """to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    return _copy(self, dtype)


@aten_op("aten::to.dtype_layout")
def aten_to_dtype_layout(
    self: TTensor,
    *,
    dtype: DType | None = None,
    layout: Any = None,
    device: Any = None,
    pin_memory: bool | None = None,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: Any = None,
) -> TTensor:
    """to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    return _copy(self, dtype)


@aten_op("aten::to.device")
def aten_to_device(
    self: TTensor,
    device: Any,
    dtype: DType,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: Any = None,
) -> TTensor:
    """to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    return _copy(self, dtype)


@aten_op("aten::to.other")
def aten_to_other(
    self: TTensor, other: TTensor, non_blocking: bool = False, copy: bool = False, memory_format: Any = None
) -> TTensor:
    """to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"""
    return _copy(self, other.dtype)


@aten_op("aten::copy")
def aten_copy(self: TTensor, src: TTensor, non_blocking: bool = False) -> TTensor:
    """copy(Tensor self, Tensor src, bool non_blocking=False) -> Tensor

    The functional form of `self.copy_(src)`: `src` cast to self's dtype and broadcast to
    self's shape."""
    return aten_expand_as(cast_to(src, self.known_dtype), self)


@aten_op("aten::type_as")
def aten_type_as(self: TTensor, other: TTensor) -> TTensor:
    """type_as(Tensor self, Tensor other) -> Tensor"""
    return _copy(self, other.dtype)


@aten_op("aten::lift_fresh")
def aten_lift_fresh(self: TTensor) -> TTensor:
    """lift_fresh(Tensor(a) self) -> Tensor(a)"""
    return op.Identity(self)


@aten_op("aten::lift_fresh_copy")
def aten_lift_fresh_copy(self: TTensor) -> TTensor:
    """lift_fresh_copy(Tensor self) -> Tensor"""
    return op.Identity(self)


@aten_op("aten::view.dtype")
def aten_view_dtype(self: TTensor, dtype: DType) -> TTensor:
    """view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)"""
    if dtype is self.dtype:
        return op.Identity(self)
    if self.const_value is None or self.is_parameter:
        what = (
            "a weight (kept as an initializer under its name)" if self.is_parameter else "a tensor computed at run time"
        )
        raise TypeError(
            f"viewing the bits of a {self.dtype} tensor as {dtype} (x.view(torch.{dtype.torch_name})) has no ONNX "
            f"equivalent: ONNX has no bitcast, and this is {what}, not a constant to fold at export. Hold the tensor "
            f"in the dtype the model reads it in (a weight stored as torch.float4_e2m1fn_x2 and read as uint8: "
            f"register it as uint8)"
        )
    return op.Identity(_bitcast(self.const_value, self.known_dtype, dtype))


def _bitcast(array: np.ndarray, source: DType, target: DType) -> np.ndarray:
    """The bytes of `array` as ONNX stores them (4-bit types two a byte, the first in the low
    nibble, as torch packs float4_e2m1fn_x2) read as `target`: the last dim scales by the ratio
    of the element widths, as torch's view(dtype) does."""
    data = np.frombuffer(raw_bytes(array), np.uint8)
    flat = unpack_nibbles(data, target) if target.bits == 4 else data.view(target.numpy)
    return flat.reshape(*array.shape[:-1], array.shape[-1] * source.bits // target.bits)
