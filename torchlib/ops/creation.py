"""Tensor creation: full, zeros, ones, empty (zeros: ONNX has no uninitialized memory), the *_like
and new_* variants, scalar_tensor, arange, linspace.

Sizes are SymInt lists that may hold INT64 scalar Values (dynamic dims); `as_shape` turns them
into one INT64 shape. A dtype argument of None means torch's default: float32, except where
torch infers it from the fill value or the arange bounds.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from graph_builder.types import BOOL, DOUBLE, FLOAT, INT64, DType
from torchlib.ops._helpers import as_shape
from torchlib.ops._kernels import full_of
from torchlib.promotion import DEFAULT_FLOAT
from torchlib.registry import aten_op

Size = Sequence[int | Value]


def _scalar_dtype(value: Any) -> DType:
    """The dtype torch gives a tensor made from a Python scalar (or a SymInt/SymFloat Value)."""
    if isinstance(value, Value):
        return BOOL if value.dtype is BOOL else INT64 if value.known_dtype.is_integer else DEFAULT_FLOAT
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    return DEFAULT_FLOAT


@aten_op("aten::full")
def aten_full(
    size: Size, fill_value: float, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, fill_value, dtype or _scalar_dtype(fill_value))


@aten_op("aten::full_like")
def aten_full_like(
    self: TTensor, fill_value: float, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TTensor:  # fmt: skip
    """full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full_like(self, fill_value, dtype)


@aten_op("aten::zeros")
def aten_zeros(
    size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None
) -> TTensor:
    """zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, 0, dtype or DEFAULT_FLOAT)


@aten_op("aten::ones")
def aten_ones(
    size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None
) -> TTensor:
    """ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, 1, dtype or DEFAULT_FLOAT)


@aten_op("aten::empty.memory_format")
def aten_empty(
    size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TTensor:  # fmt: skip
    """empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full(size, 0, dtype or DEFAULT_FLOAT)


@aten_op("aten::empty_strided")
def aten_empty_strided(
    size: Size, stride: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, 0, dtype or DEFAULT_FLOAT)


@aten_op("aten::zeros_like")
def aten_zeros_like(
    self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TTensor:  # fmt: skip
    """zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full_like(self, 0, dtype)


@aten_op("aten::ones_like")
def aten_ones_like(
    self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TTensor:  # fmt: skip
    """ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full_like(self, 1, dtype)


@aten_op("aten::empty_like")
def aten_empty_like(
    self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TTensor:  # fmt: skip
    """empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _full_like(self, 0, dtype)


@aten_op("aten::new_zeros")
def aten_new_zeros(
    self: TTensor, size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, 0, dtype or self.known_dtype)


@aten_op("aten::new_ones")
def aten_new_ones(
    self: TTensor, size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, 1, dtype or self.known_dtype)


@aten_op("aten::new_empty")
def aten_new_empty(
    self: TTensor, size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, 0, dtype or self.known_dtype)


@aten_op("aten::new_full")
def aten_new_full(
    self: TTensor, size: Size, fill_value: float, *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _full(size, fill_value, dtype or self.known_dtype)


@aten_op("aten::scalar_tensor")
def aten_scalar_tensor(
    s: float, *, dtype: DType | None = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None
) -> TTensor:
    """scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return full_of([], s, dtype or DEFAULT_FLOAT)


def _full(size: Size, value: Any, dtype: DType) -> Value:
    """full_of a tensor of torch size `size` in `dtype`: a packed dtype's last dim counts its ONNX
    elements (float4_e2m1fn_x2: FLOAT4E2M1, twice as many; types.onnx_shape)."""
    n = dtype.per_torch_element
    if n != 1:
        _check_packed_fill(value, dtype)
        if not size:
            types.onnx_shape(dtype, size)  # raises: a 0-d tensor of a packed dtype has no ONNX shape
        *lead, last = size
        size = [*lead, op.Mul(last, n) if isinstance(last, Value) else last * n]
    return full_of(as_shape(size), value, dtype)


def _full_like(self: Value, value: Any, dtype: DType | None) -> Value:
    """full_of a tensor of self's torch size in `dtype` (self's when None): self's ONNX shape, its
    last dim rescaled where one of the two dtypes is packed and the other is not."""
    source = self.known_dtype
    dtype = dtype or source
    shape = op.Shape(self)
    if dtype.per_torch_element != 1:
        _check_packed_fill(value, dtype)
    if source.per_torch_element != dtype.per_torch_element:
        if self.rank == 0:
            types.onnx_shape(dtype, [])  # raises: a 0-d tensor of a packed dtype has no ONNX shape
        last = op.Slice(shape, [-1], [np.iinfo(np.int64).max])
        last = op.Mul(op.Div(last, source.per_torch_element), dtype.per_torch_element)
        shape = op.Concat(op.Slice(shape, [0], [-1]), last, axis=0)
    return full_of(shape, value, dtype)


def _check_packed_fill(value: Any, dtype: DType) -> None:
    """torch fills a packed dtype (float4_e2m1fn_x2) with zeros only: its fill kernels refuse it."""
    if isinstance(value, Value) or value != 0:
        raise ValueError(f"torch fills a torch.{dtype.torch_name} tensor with zeros only (its fill kernels refuse it), "
                         f"this call fills it with {value!r}")


# -- arange ---------------------------------------------------------------------------------------


def _is_float(x: Any) -> bool:
    return isinstance(x, float) or isinstance(x, Value) and x.known_dtype.is_floating


def _to_int(x: Any) -> Any:
    """Scalar::to<int64_t>: truncation toward zero."""
    if isinstance(x, Value):
        return x if x.dtype is INT64 else op.Cast(x, to=INT64.onnx)
    return int(x)


def _to_double(x: Any) -> Any:
    if isinstance(x, Value):
        return x if x.dtype is DOUBLE else op.Cast(x, to=DOUBLE.onnx)
    return float(x)


def _arange_size(start: Any, end: Any, step: Any) -> Any:
    """ceil((end - start) / step) in double, as torch counts for every result dtype but int64: a
    Python int when all bounds are Python numbers, else an INT64 scalar Value."""
    if not any(isinstance(x, Value) for x in (start, end, step)):
        return math.ceil((float(end) - float(start)) / float(step))
    quotient = op.Div(op.Sub(_to_double(end), _to_double(start)), _to_double(step))
    return op.Max(op.Cast(op.Ceil(quotient), to=INT64.onnx), 0)


def _check_bounds(start: Any, end: Any, step: Any) -> None:
    if any(isinstance(x, Value) for x in (start, end, step)):
        return
    if step == 0:
        raise ValueError("aten::arange: step must be nonzero")
    if (end - start) * step < 0:
        raise ValueError(f"aten::arange: upper bound and lower bound inconsistent with step sign ({start}, {end}, {step})")


@functools.cache
def _int64_arange_counts_in_double() -> bool:
    """Whether the installed torch counts an int64 arange like every other dtype, ceil((end -
    start) / step) in double, then start + i * step on the truncated bounds (torch 2.14 on:
    arange(0, 5, 2.5) is [0, 2]), or truncates the bounds to int64 first and counts those (2.13
    and earlier: [0, 2, 4]). A probe of torch's kernel, so the function follows the torch it
    exports for."""
    return torch.arange(0, 5, 2.5, dtype=torch.int64).numel() == 2


def _arange(start: Any, end: Any, step: Any, dtype: DType | None) -> Value:
    """start + i * step, computed in int64 for integer results and in double for floating ones
    (torch accumulates in its acc type and rounds once), so no error accumulates along the range."""
    if dtype is None:
        dtype = DEFAULT_FLOAT if any(_is_float(x) for x in (start, end, step)) else INT64
    if dtype is BOOL:
        raise TypeError("aten::arange is not implemented for bool (torch raises too)")
    _check_bounds(start, end, step)
    if dtype is INT64 and not _int64_arange_counts_in_double():  # truncate, count exactly as Range does
        return op.Range(_to_int(start), _to_int(end), _to_int(step))
    index = op.Range(0, _arange_size(start, end, step), 1)
    if dtype.is_floating:
        values = op.Add(op.Mul(op.Cast(index, to=DOUBLE.onnx), _to_double(step)), _to_double(start))
    else:
        values = op.Add(op.Mul(index, _to_int(step)), _to_int(start))
    return op.Cast(values, to=dtype.onnx)


@aten_op("aten::arange")
def aten_arange(
    end: float, *, dtype: DType | None = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None
) -> TTensor:
    """arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _arange(0, end, 1, dtype)


@aten_op("aten::arange.start")
def aten_arange_start(
    start: float, end: float, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _arange(start, end, 1, dtype)


@aten_op("aten::arange.start_step")
def aten_arange_start_step(
    start: float, end: float, step: float = 1, *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _arange(start, end, step, dtype)


# -- linspace -------------------------------------------------------------------------------------


def _split(a: Value) -> tuple[Value, Value]:
    """Dekker's split of a double into two halves of 26 bits: a = hi + lo exactly."""
    c = op.Mul(a, np.asarray(134217729.0))  # 2^27 + 1
    hi = op.Sub(c, op.Sub(c, a))
    return hi, op.Sub(a, hi)


def _fused_multiply_add(a: Value, b: Value, c: Any) -> Value:
    """a * b + c in double rounded once (as an FMA instruction): the product's exact error from
    Dekker's two-product, the sum's from Knuth's two-sum, added before the last rounding."""
    p = op.Mul(a, b)
    (ah, al), (bh, bl) = _split(a), _split(b)
    e = op.Add(op.Add(op.Add(op.Sub(op.Mul(ah, bh), p), op.Mul(ah, bl)), op.Mul(al, bh)), op.Mul(al, bl))
    s = op.Add(p, c)
    bb = op.Sub(s, p)
    t = op.Add(op.Sub(p, op.Sub(s, bb)), op.Sub(c, bb))
    return op.Add(s, op.Add(t, e))


def _linspace(start: Any, end: Any, steps: int, dtype: DType | None) -> Value:
    """torch's kernel: step = (end - start) / (steps - 1); the first half counts up from start,
    the second half down from end, so both ends are exact. Integer results compute in double
    from the bounds converted to the result dtype, and truncate."""
    dtype = dtype or DEFAULT_FLOAT
    if steps < 0:
        raise ValueError(f"aten::linspace: number of steps must be non-negative, got {steps}")
    if steps <= 1:
        return full_of([steps], start if steps else 0, dtype)
    compute = dtype if dtype in (FLOAT, DOUBLE) else DOUBLE if not dtype.is_floating else FLOAT

    def bound(x: Any) -> Any:
        if isinstance(x, Value):
            x = x if dtype.is_floating else op.Cast(x, to=dtype.onnx)  # Scalar::to<scalar_t>
            return op.Cast(x, to=compute.onnx)
        return np.asarray(x if dtype.is_floating else int(x), compute.numpy)

    first, last = bound(start), bound(end)
    step = op.Div(op.Sub(last, first), np.asarray(steps - 1, compute.numpy))
    index = op.Cast(op.Range(0, steps, 1), to=compute.onnx)
    if dtype.is_floating:
        up = op.Add(op.Mul(index, step), first)
        down = op.Sub(last, op.Mul(op.Sub(np.asarray(steps - 1, compute.numpy), index), step))
    else:  # torch's integer loop compiles to fused multiply-adds: each value rounded once
        up = _fused_multiply_add(index, step, first)
        down = _fused_multiply_add(op.Sub(index, np.asarray(steps - 1, compute.numpy)), step, last)
    values = op.Where(op.Less(index, float(steps // 2)), up, down)
    return values if compute is dtype else op.Cast(values, to=dtype.onnx)


@aten_op("aten::linspace")
def aten_linspace(
    start: float, end: float, steps: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """linspace(Scalar start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _linspace(start, end, steps, dtype)


@aten_op("aten::linspace.Tensor_Tensor")
def aten_linspace_tensor_tensor(
    start: TTensor, end: TTensor, steps: int, *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """linspace.Tensor_Tensor(Tensor start, Tensor end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _linspace(start, end, steps, dtype)


@aten_op("aten::linspace.Tensor_Scalar")
def aten_linspace_tensor_scalar(
    start: TTensor, end: float, steps: int, *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """linspace.Tensor_Scalar(Tensor start, Scalar end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _linspace(start, end, steps, dtype)


@aten_op("aten::linspace.Scalar_Tensor")
def aten_linspace_scalar_tensor(
    start: float, end: TTensor, steps: int, *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """linspace.Scalar_Tensor(Scalar start, Tensor end, int steps, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _linspace(start, end, steps, dtype)
