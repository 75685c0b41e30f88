"""The smaller elementwise math ops: logit, xlogy, xlog1py, sinc, entr, hypot, logaddexp,
copysign, heaviside, nan_to_num, signbit, frexp, float_power, floor_divide, ldexp, bitwise
shifts, ...
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal, TRealOrBool, TTensor
from graph_builder.types import BFLOAT16, BOOL, DOUBLE, FLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT64
from torchlib.ops import elementwise as ew
from torchlib.ops._kernels import FLOATS, MIN_MAX, NUMERIC, OPMATH, kernel, like, round_scalar, run_supported
from torchlib.ops._unary import unary
from torchlib.ops.special._common import rounding_to
from torchlib.promotion import INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op


@aten_op("aten::frexp.Tensor")
def aten_frexp(self: TFloat) -> tuple[TFloat, TTensor]:
    """frexp.Tensor(Tensor self) -> (Tensor mantissa, Tensor exponent)"""
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::frexp supports floating-point dtypes only (torch raises too), got {self.dtype}")
    x = op.Cast(self, to=DOUBLE.onnx)  # every float is exact in double, subnormals included
    finite = op.And(op.Not(op.IsInf(x)), op.Not(op.Equal(x, 0.0)))
    finite = op.And(finite, op.Not(op.IsNaN(x)))
    a = op.Where(finite, op.Abs(x), like(1.0, x))
    e = op.Add(op.Floor(op.Div(op.Log(a), math.log(2))), 1.0)

    def scaled(e: Value) -> Value:  # a / 2^e, in two halves: 2^-1074 and 2^1024 do not fit one double
        half = op.Floor(op.Div(e, 2.0))
        return op.Div(op.Div(a, op.Pow(like(2.0, half), half)), op.Pow(like(2.0, e), op.Sub(e, half)))

    # log2 may round across a power of two: put the mantissa into [0.5, 1)
    m = scaled(e)
    e = op.Add(e, op.Sub(op.Cast(op.GreaterOrEqual(m, 1.0), to=DOUBLE.onnx), op.Cast(op.Less(m, 0.5), to=DOUBLE.onnx)))
    m = scaled(e)
    mantissa = op.Where(finite, op.Mul(m, op.Sign(x)), x)
    exponent = op.Where(finite, e, like(0.0, e))
    return op.Cast(mantissa, to=self.known_dtype.onnx), op.Cast(exponent, to=INT32.onnx)


# -- simple unary math ---------------------------------------------------------------------------


def _sinc(x: Value) -> Value:
    px = op.Mul(x, math.pi)
    return op.Where(op.Equal(x, 0.0), like(1.0, x), op.Div(op.Sin(px), px))


def _entr(x: Value) -> Value:
    out = op.Neg(op.Mul(x, op.Log(x)))
    out = op.Where(op.Equal(x, 0.0), like(0.0, x), out)
    return op.Where(op.Less(x, 0.0), like(-math.inf, x), out)


aten_sinc = unary("sinc", kernel(_sinc, OPMATH), INT_TO_FLOAT)
aten_special_entr = unary("special_entr", kernel(_entr, OPMATH), INT_TO_FLOAT)
aten_deg2rad = unary("deg2rad", kernel(lambda x: op.Mul(x, math.pi / 180), FLOATS), INT_TO_FLOAT)
aten_rad2deg = unary("rad2deg", kernel(lambda x: op.Mul(x, 180 / math.pi), FLOATS), INT_TO_FLOAT)


@aten_op("aten::logit")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_logit(self: TReal, eps: float | None = None) -> TFloat:
    """logit(Tensor self, float? eps=None) -> Tensor"""

    r = rounding_to(self.known_dtype)  # torch: log(x / (1 - x)), step by step in self's dtype

    def fn(x: Value) -> Value:
        if eps is not None:
            x = op.Min(op.Max(x, r(like(eps, x))), r(like(1.0 - eps, x)))
        return r(op.Log(r(op.Div(x, r(op.Sub(1.0, x))))))

    return run_supported(fn, OPMATH, self)


@aten_op("aten::sgn")
def aten_sgn(self: TRealOrBool) -> TRealOrBool:
    """sgn(Tensor self) -> Tensor"""
    return ew.aten_sign(self)


@aten_op("aten::positive")
def aten_positive(self: TReal) -> TReal:
    """positive(Tensor(a) self) -> Tensor(a)"""
    if self.dtype is BOOL:
        raise TypeError("aten::positive: the `+` operator on a bool tensor is not supported (torch raises too)")
    return op.Identity(self)


def _float_signbit(x: Value) -> Value:
    """x < 0, or x is -0.0 (1/x is -inf). The sign of a NaN cannot be read in ONNX: False."""
    return op.Or(op.Less(x, 0.0), op.And(op.Equal(x, 0.0), op.Less(op.Reciprocal(x), 0.0)))


@aten_op("aten::signbit")
def aten_signbit(self: TRealOrBool) -> TRealOrBool:
    """signbit(Tensor self) -> Tensor"""
    if self.dtype is BOOL:
        return op.Xor(self, self)
    if self.known_dtype.is_floating:
        return run_supported(_float_signbit, FLOATS, self)
    return run_supported(lambda x: op.Less(x, 0), NUMERIC, self)


@aten_op("aten::nan_to_num")
def aten_nan_to_num(self: TRealOrBool, nan: float | None = None, posinf: float | None = None,
                    neginf: float | None = None) -> TRealOrBool:  # fmt: skip
    """nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"""
    if not self.known_dtype.is_floating:
        return op.Identity(self)
    import torch

    finfo = torch.finfo(self.known_dtype.to_torch())
    values = [0.0 if nan is None else nan, finfo.max if posinf is None else posinf, finfo.min if neginf is None else neginf]

    def fn(x: Value) -> Value:
        # the replacements are rounded to self's dtype first, as in torch
        nan_v, pos_v, neg_v = (op.Cast(op.Cast(np.asarray(v), to=self.known_dtype.onnx), to=x.known_dtype.onnx) for v in values)
        out = op.Where(op.IsNaN(x), nan_v, x)
        out = op.Where(op.IsInf(x, detect_negative=0), pos_v, out)
        return op.Where(op.IsInf(x, detect_positive=0), neg_v, out)

    return run_supported(fn, FLOATS, self)


# -- binary math ---------------------------------------------------------------------------------


def _both(a: Any, b: Any) -> tuple[Value, Value]:
    """Both operands as Values of one dtype (a Python scalar takes the other side's dtype)."""
    ref = a if isinstance(a, Value) else b
    return like(a, ref), like(b, ref)


def _x_times(log: Any, dtype: Any) -> Any:
    """(a, b) -> a * log(b), 0 where a is 0, NaN where b is: for float16 / bfloat16 (computed in
    float32) log(b) is rounded to the dtype first, as torch's kernels compute log of a half value."""

    def fn(a: Any, b: Any) -> Value:
        x, y = _both(a, b)
        logged = log(y)
        if dtype in (FLOAT16, BFLOAT16) and x.dtype is not dtype:
            logged = op.Cast(op.Cast(logged, to=dtype.onnx), to=x.known_dtype.onnx)
        out = op.Where(op.Equal(x, 0.0), like(0.0, x), op.Mul(x, logged))
        return op.Where(op.IsNaN(y), y, out)

    return fn


def _x_log(log: Any, self: Any, other: Any) -> Value:
    """x * log(y) for xlogy / xlog1py: a Python number rounded to the tensor's dtype (torch's
    wrapped number), half types in float32 with the log rounded (`_x_times`)."""
    dtype = (self if isinstance(self, Value) else other).known_dtype
    return run_supported(_x_times(log, dtype), OPMATH, round_scalar(self, dtype), round_scalar(other, dtype))


@aten_op("aten::xlogy.Tensor", "aten::xlogy.Scalar_Self", "aten::xlogy.Scalar_Other")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_xlogy(self: TReal, other: TReal) -> TFloat:
    """xlogy.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _x_log(op.Log, self, other)


@aten_op("aten::special_xlog1py", "aten::special_xlog1py.self_scalar", "aten::special_xlog1py.other_scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_special_xlog1py(self: TReal, other: TReal) -> TFloat:
    """special_xlog1py(Tensor self, Tensor other) -> Tensor"""
    return _x_log(ew.log1p, self, other)


def _floating_only(name: str, x: Value) -> None:
    if not x.known_dtype.is_floating:
        raise TypeError(f"aten::{name} is defined for floating tensors only (torch raises too), got {x.dtype}")


def _hypot(a: Value, b: Value) -> Value:
    """sqrt(a^2 + b^2) scaled by max(|a|, |b|) so that it neither overflows nor underflows."""
    a, b = op.Abs(a), op.Abs(b)
    big, small = op.Max(a, b), op.Min(a, b)
    ratio = op.Div(small, big)
    out = op.Mul(big, op.Sqrt(op.Add(op.Mul(ratio, ratio), 1.0)))
    out = op.Where(op.Equal(big, 0.0), big, out)
    return op.Where(op.Or(op.IsInf(a), op.IsInf(b)), like(math.inf, big), out)  # even with a nan


@aten_op("aten::hypot")
@elementwise("self", "other")
def aten_hypot(self: TFloat, other: TFloat) -> TFloat:
    """hypot(Tensor self, Tensor other) -> Tensor"""
    _floating_only("hypot", self)
    return run_supported(_hypot, OPMATH, self, other)


def _logaddexp(a: Value, b: Value, base2: bool) -> Value:
    big = op.Max(a, b)
    neg_gap = op.Neg(op.Abs(op.Sub(a, b)))
    if base2:
        out = op.Add(big, op.Div(ew.log1p(op.Pow(like(2.0, a), neg_gap)), math.log(2)))
        same = op.Add(a, 1.0)
    else:
        out = op.Add(big, ew.log1p(op.Exp(neg_gap)))
        same = op.Add(a, math.log(2))
    return op.Where(op.And(op.Equal(a, b), op.IsInf(a)), same, out)  # inf - inf is nan


@aten_op("aten::logaddexp")
@elementwise("self", "other")
def aten_logaddexp(self: TFloat, other: TFloat) -> TFloat:
    """logaddexp(Tensor self, Tensor other) -> Tensor"""
    _floating_only("logaddexp", self)
    return run_supported(lambda a, b: _logaddexp(a, b, base2=False), OPMATH, self, other)


@aten_op("aten::logaddexp2")
@elementwise("self", "other")
def aten_logaddexp2(self: TFloat, other: TFloat) -> TFloat:
    """logaddexp2(Tensor self, Tensor other) -> Tensor"""
    _floating_only("logaddexp2", self)
    return run_supported(lambda a, b: _logaddexp(a, b, base2=True), OPMATH, self, other)


def _copysign(a: Any, b: Any) -> Value:
    x, y = _both(a, b)
    magnitude = op.Abs(x)
    return op.Where(_float_signbit(y), op.Neg(magnitude), magnitude)


@aten_op("aten::copysign.Tensor", "aten::copysign.Scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_copysign(self: TReal, other: TReal) -> TFloat:
    """copysign.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(_copysign, FLOATS, self, other)


@aten_op("aten::heaviside")
def aten_heaviside(self: TRealOrBool, values: TRealOrBool) -> TRealOrBool:
    """heaviside(Tensor self, Tensor values) -> Tensor"""
    if self.dtype is not values.dtype:
        raise TypeError(f"aten::heaviside is not implemented for tensors with different dtypes ({self.dtype}, {values.dtype}), as in torch")
    if self.dtype is BOOL:
        return op.Or(self, op.And(op.Not(self), values))

    def fn(x: Value, v: Value) -> Value:
        return op.Where(op.Equal(x, 0), v, op.Cast(op.Greater(x, 0), to=x.known_dtype.onnx))

    return run_supported(fn, MIN_MAX, self, values)


@aten_op("aten::float_power.Tensor_Tensor", "aten::float_power.Tensor_Scalar", "aten::float_power.Scalar")
def aten_float_power(self: TReal, exponent: TReal) -> TFloat:
    """float_power.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""
    if any(isinstance(x, Value) and x.known_dtype.is_complex for x in (self, exponent)):
        raise TypeError("aten::float_power: complex tensors are not supported")
    base, power = (op.Cast(x, to=DOUBLE.onnx) if isinstance(x, Value) else float(x) for x in (self, exponent))
    return op.Pow(*_both(base, power))


@aten_op("aten::true_divide.Tensor", "aten::true_divide.Scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_true_divide(self: TReal, other: TReal) -> TFloat:
    """true_divide.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(op.Div, FLOATS, self, other)


@aten_op("aten::floor_divide", "aten::floor_divide.Scalar")
@elementwise("self", "other")
def aten_floor_divide(self: TReal, other: TReal) -> TReal:
    """floor_divide(Tensor self, Tensor other) -> Tensor"""
    if self.dtype is BOOL:
        raise TypeError("aten::floor_divide is not defined for bool tensors (torch raises too)")
    if self.known_dtype.is_floating:
        return run_supported(ew._div_floor_float, OPMATH, self, other)
    return run_supported(ew._div_floor_int, NUMERIC, self, other)


@aten_op("aten::ldexp.Tensor")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_ldexp(self: TReal, other: TReal) -> TFloat:
    """ldexp.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(lambda x, e: op.Mul(x, op.Pow(like(2.0, e), e)), OPMATH, self, other)


_SHIFT_TYPES = frozenset({UINT8, INT8, INT16, INT32, INT64})


def _shift(name: str, a: Any, b: Any, left: bool) -> Value:
    """torch's shifts: a shift by a negative amount or by the width or more gives 0 (left) or
    the sign fill (right); a right shift of a signed value is arithmetic. Computed on uint64
    (ONNX BitShift is unsigned only) from int64 values, then truncated back."""
    a, b = _both(a, b)
    if a.dtype not in _SHIFT_TYPES:
        raise TypeError(f"aten::{name} is defined for integer tensors only (torch raises too), got {a.dtype}")
    width = 8 * np.dtype(a.dtype.numpy).itemsize
    max_shift = width if left or a.dtype.kind == "u" else width - 1
    x = op.Cast(a, to=INT64.onnx)
    n = op.Cast(b, to=INT64.onnx)
    invalid = op.Or(op.Less(n, 0), op.GreaterOrEqual(n, max_shift))
    n = op.Cast(op.Where(invalid, like(max_shift if not left else 0, n), n), to=UINT64.onnx)
    if left:
        shifted = op.Cast(op.BitShift(op.Cast(x, to=UINT64.onnx), n, direction="LEFT"), to=INT64.onnx)
        out = op.Where(invalid, like(0, shifted), shifted)
    else:
        negative = op.Less(x, 0)
        magnitude = op.Where(negative, op.Sub(-1, x), x)  # ~x for negative x: a right shift of it is ~(x >> n)
        shifted = op.Cast(op.BitShift(op.Cast(magnitude, to=UINT64.onnx), n, direction="RIGHT"), to=INT64.onnx)
        out = op.Where(negative, op.Sub(-1, shifted), shifted)
    return op.Cast(out, to=a.dtype.onnx)


@aten_op("aten::bitwise_left_shift.Tensor", "aten::bitwise_left_shift.Tensor_Scalar", "aten::bitwise_left_shift.Scalar_Tensor",
         "aten::__lshift__.Tensor", "aten::__lshift__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_left_shift(self: TReal, other: TReal) -> TReal:
    """bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _shift("bitwise_left_shift", self, other, left=True)


@aten_op("aten::bitwise_right_shift.Tensor", "aten::bitwise_right_shift.Tensor_Scalar", "aten::bitwise_right_shift.Scalar_Tensor",
         "aten::__rshift__.Tensor", "aten::__rshift__.Scalar")  # fmt: skip
@elementwise("self", "other")
def aten_bitwise_right_shift(self: TReal, other: TReal) -> TReal:
    """bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor"""
    return _shift("bitwise_right_shift", self, other, left=False)
