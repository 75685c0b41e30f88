"""Comparison, logical and bitwise ops, minimum/maximum, where, isnan/isinf/isfinite, masked_fill.

Comparisons promote both sides to torch's common dtype and return bool. onnxruntime has no
Less/Greater kernel for bool and nothing for bfloat16: those compare in uint8 and float32.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TBool, TReal, TRealOrBool, TTensor
from graph_builder.types import BOOL, UINT8
from torchlib.ops._kernels import FLOATS, MIN_MAX, NUMERIC, full_of, like, round_scalar, run_supported
from torchlib.promotion import ALWAYS_BOOL, elementwise, promote_all, result_type
from torchlib.registry import aten_op

_EQUAL = NUMERIC | {BOOL}
_BITWISE = frozenset({UINT8}) | {d for d in NUMERIC if d.is_integer}


def _compare(onnx_op: Callable[..., Any], a: Any, b: Any, supported: frozenset = NUMERIC) -> Value:
    # torch compares with a Python number rounded to the tensor's dtype (bfloat16 x <= 0.3 is
    # x <= 0.30078125); bfloat16 computes in float32, where the constant would not be rounded
    dtype = (a if isinstance(a, Value) else b).known_dtype
    return run_supported(onnx_op, supported, round_scalar(a, dtype), round_scalar(b, dtype))


@aten_op("aten::eq.Tensor", "aten::eq.Scalar")
@elementwise("self", "other", kind=ALWAYS_BOOL)
def aten_eq(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """eq.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare(op.Equal, self, other, _EQUAL)


@aten_op("aten::ne.Tensor", "aten::ne.Scalar")
@elementwise("self", "other", kind=ALWAYS_BOOL)
def aten_ne(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """ne.Tensor(Tensor self, Tensor other) -> Tensor"""
    return op.Not(_compare(op.Equal, self, other, _EQUAL))


@aten_op("aten::lt.Tensor", "aten::lt.Scalar")
@elementwise("self", "other", kind=ALWAYS_BOOL)
def aten_lt(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """lt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare(op.Less, self, other)


@aten_op("aten::le.Tensor", "aten::le.Scalar")
@elementwise("self", "other", kind=ALWAYS_BOOL)
def aten_le(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """le.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare(op.LessOrEqual, self, other)


@aten_op("aten::gt.Tensor", "aten::gt.Scalar")
@elementwise("self", "other", kind=ALWAYS_BOOL)
def aten_gt(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """gt.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare(op.Greater, self, other)


@aten_op("aten::ge.Tensor", "aten::ge.Scalar")
@elementwise("self", "other", kind=ALWAYS_BOOL)
def aten_ge(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """ge.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _compare(op.GreaterOrEqual, self, other)


def _as_bool(x: Value) -> Value:
    """torch's truth value: nonzero (NaN included) is True."""
    return x if x.dtype is BOOL else op.Cast(x, to=BOOL.onnx)


@aten_op("aten::logical_not")
def aten_logical_not(self: TTensor) -> TBool:
    """logical_not(Tensor self) -> Tensor"""
    return op.Not(_as_bool(self))


@aten_op("aten::logical_and")
def aten_logical_and(self: TTensor, other: TTensor) -> TBool:
    """logical_and(Tensor self, Tensor other) -> Tensor"""
    return op.And(_as_bool(self), _as_bool(other))


@aten_op("aten::logical_or")
def aten_logical_or(self: TTensor, other: TTensor) -> TBool:
    """logical_or(Tensor self, Tensor other) -> Tensor"""
    return op.Or(_as_bool(self), _as_bool(other))


@aten_op("aten::logical_xor")
def aten_logical_xor(self: TTensor, other: TTensor) -> TBool:
    """logical_xor(Tensor self, Tensor other) -> Tensor"""
    return op.Xor(_as_bool(self), _as_bool(other))


def _bitwise(name: str, bool_op: Callable[..., Any], int_op: Callable[..., Any], a: Any, b: Any) -> Value:
    """A bitwise op after promotion; either side may be a Python scalar (.Scalar, .Scalar_Tensor)."""
    tensor = a if isinstance(a, Value) else b
    if tensor.known_dtype.is_floating:
        raise TypeError(f"aten::{name} is defined for integer and bool tensors only (torch raises too), got {tensor.dtype}")
    if tensor.dtype is BOOL:
        return bool_op(like(a, tensor), like(b, tensor))
    return run_supported(lambda x, y: int_op(like(x, y), like(y, x)), _BITWISE, a, b)


@aten_op("aten::bitwise_and.Tensor", "aten::bitwise_and.Scalar", "aten::bitwise_and.Scalar_Tensor",
         "aten::__and__.Tensor", "aten::__and__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_and(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """bitwise_and.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _bitwise("bitwise_and", op.And, op.BitwiseAnd, self, other)


@aten_op("aten::bitwise_or.Tensor", "aten::bitwise_or.Scalar", "aten::bitwise_or.Scalar_Tensor",
         "aten::__or__.Tensor", "aten::__or__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_or(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """bitwise_or.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _bitwise("bitwise_or", op.Or, op.BitwiseOr, self, other)


@aten_op("aten::bitwise_xor.Tensor", "aten::bitwise_xor.Scalar", "aten::bitwise_xor.Scalar_Tensor",
         "aten::__xor__.Tensor", "aten::__xor__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_xor(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """bitwise_xor.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _bitwise("bitwise_xor", op.Xor, op.BitwiseXor, self, other)


@aten_op("aten::bitwise_not")
def aten_bitwise_not(self: TRealOrBool) -> TRealOrBool:
    """bitwise_not(Tensor self) -> Tensor"""
    if self.known_dtype.is_floating:
        raise TypeError(f"aten::bitwise_not is defined for integer and bool tensors only (torch raises too), got {self.dtype}")
    if self.dtype is BOOL:
        return op.Not(self)
    return run_supported(op.BitwiseNot, _BITWISE, self)


def _min_max(onnx_op: Callable[..., Any], bool_op: Callable[..., Any], a: Value, b: Value) -> Value:
    if a.dtype is BOOL:
        return bool_op(a, b)
    return run_supported(onnx_op, MIN_MAX, a, b)  # NaN propagates, as in torch


@aten_op("aten::minimum")
@elementwise("self", "other")
def aten_minimum(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """minimum(Tensor self, Tensor other) -> Tensor"""
    return _min_max(op.Min, op.And, self, other)


@aten_op("aten::maximum")
@elementwise("self", "other")
def aten_maximum(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """maximum(Tensor self, Tensor other) -> Tensor"""
    return _min_max(op.Max, op.Or, self, other)


def _nan_ignoring(onnx_op: Callable[..., Any], bool_op: Callable[..., Any], a: Value, b: Value) -> Value:
    """fmin/fmax: a NaN on one side gives the other side."""
    if a.dtype is BOOL:
        return bool_op(a, b)
    if not a.known_dtype.is_floating:
        return run_supported(onnx_op, MIN_MAX, a, b)

    def fn(x: Value, y: Value) -> Value:
        return op.Where(op.IsNaN(x), y, op.Where(op.IsNaN(y), x, onnx_op(x, y)))

    return run_supported(fn, FLOATS, a, b)


@aten_op("aten::fmin")
@elementwise("self", "other")
def aten_fmin(self: TReal, other: TReal) -> TReal:
    """fmin(Tensor self, Tensor other) -> Tensor"""
    return _nan_ignoring(op.Min, op.And, self, other)


@aten_op("aten::fmax")
@elementwise("self", "other")
def aten_fmax(self: TReal, other: TReal) -> TReal:
    """fmax(Tensor self, Tensor other) -> Tensor"""
    return _nan_ignoring(op.Max, op.Or, self, other)


def _where(condition: Value, a: Any, b: Any) -> Value:
    """Where after promotion; a Python scalar branch takes the dtype of the other branch."""
    return run_supported(lambda x, y: op.Where(_as_bool(condition), x, y), MIN_MAX, a, b)


@aten_op("aten::where.self")
@elementwise("self", "other")
def aten_where(condition: TBool, self: TTensor, other: TTensor) -> TTensor:
    """where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"""
    return _where(condition, self, other)


@aten_op("aten::where.ScalarSelf")
@elementwise("self", "other")
def aten_where_scalar_self(condition: TBool, self: float, other: TTensor) -> TTensor:
    """where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor"""
    return _where(condition, self, other)


@aten_op("aten::where.ScalarOther")
@elementwise("self", "other")
def aten_where_scalar_other(condition: TBool, self: TTensor, other: float) -> TTensor:
    """where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor"""
    return _where(condition, self, other)


@aten_op("aten::where.Scalar")
def aten_where_scalar(condition: TBool, self: float, other: float) -> TTensor:
    """where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor"""
    if isinstance(self, Value) or isinstance(other, Value):  # SymInt/SymFloat scalars
        return _where(condition, *promote_all([self, other]))
    dtype = result_type(self, other)  # int64, float32 or bool, as torch gives two Python scalars
    compute = dtype if dtype in MIN_MAX else UINT8
    result = op.Where(_as_bool(condition), np.asarray(self, compute.numpy), np.asarray(other, compute.numpy))
    return result if compute is dtype else op.Cast(result, to=dtype.onnx)


def _float_test(x: Value, test: Callable[[Value], Value], for_integers: bool) -> Value:
    """isnan/isinf/isfinite: integer and bool tensors hold only finite numbers."""
    if not x.known_dtype.is_floating:
        return full_of(op.Shape(x), for_integers, BOOL)
    return run_supported(test, FLOATS, x)


@aten_op("aten::isnan")
def aten_isnan(self: TTensor) -> TBool:
    """isnan(Tensor self) -> Tensor"""
    return _float_test(self, op.IsNaN, False)


@aten_op("aten::isinf")
def aten_isinf(self: TTensor) -> TBool:
    """isinf(Tensor self) -> Tensor"""
    return _float_test(self, op.IsInf, False)


@aten_op("aten::isfinite")
def aten_isfinite(self: TTensor) -> TBool:
    """isfinite(Tensor self) -> Tensor"""
    return _float_test(self, lambda x: op.Not(op.Or(op.IsNaN(x), op.IsInf(x))), True)


@aten_op("aten::masked_fill.Scalar")
def aten_masked_fill(self: TTensor, mask: TBool, value: float) -> TTensor:
    """masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor"""
    if isinstance(value, Value):  # a SymInt or SymFloat
        value = op.Cast(value, to=self.dtype.onnx)
        return run_supported(lambda x, v: op.Where(mask, v, x), MIN_MAX, self, value)
    return run_supported(lambda x: op.Where(mask, value, x), MIN_MAX, self)


@aten_op("aten::masked_fill.Tensor")
def aten_masked_fill_tensor(self: TTensor, mask: TBool, value: TTensor) -> TTensor:
    """masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor"""
    value = op.Cast(value, to=self.known_dtype.onnx) if value.dtype is not self.dtype else value
    return run_supported(lambda x, v: op.Where(mask, v, x), MIN_MAX, self, value)
