"""Elementwise arithmetic and math: add, sub, mul, div, pow, remainder, lerp, addcmul, ..., and
the one-to-one unary ops as a table of one line each.

Ops without an onnxruntime kernel for a dtype compute through `_kernels.run_supported`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from graph_builder import GraphBuilder, op
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt, TReal, TRealOrBool, TTensor
from graph_builder.types import BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, INT32, INT64, DType
from torchlib.ops import _cephes as cephes
from torchlib.ops._helpers import n_outputs
from torchlib.ops._kernels import (
    FLOAT32_16,
    FLOATS,
    NUMERIC,
    OPMATH,
    POW,
    SIGNED,
    as_float,
    float32_or_double,
    full_of,
    kernel,
    like,
    round_scalar,
    run_supported,
)
from torchlib.ops._unary import unary
from torchlib.promotion import BOOL_TO_LONG, DEFAULT, INT_TO_FLOAT, cast_to, elementwise, promote_all
from torchlib.registry import aten_op


def _no_bool(name: str, x: Value) -> None:
    if x.dtype is BOOL:
        raise TypeError(f"aten::{name} is not defined for bool tensors (torch raises too)")


def _no_float_alpha(name: str, x: Any, alpha: Any) -> None:
    if isinstance(x, Value) and not x.known_dtype.is_floating and isinstance(alpha, float):
        raise TypeError(f"aten::{name}: for integral input tensors, alpha must not be a floating point number")


def _times(x: Any, alpha: Any) -> Any:
    """alpha * x for a Value or a Python scalar x."""
    if alpha == 1:
        return x
    if isinstance(x, Value):
        return run_supported(op.Mul, NUMERIC, x, alpha)
    return x * alpha


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, Value) and a.dtype is BOOL:
        return op.Or(a, b)
    return run_supported(op.Add, NUMERIC, a, b)


def _plus_times(a: Any, b: Any, alpha: Any, subtract: bool) -> Any:
    """a + alpha * b (a - alpha * b) as torch's add / sub kernels compute a floating one: Python
    numbers and alpha rounded to the tensor's dtype, and the product not rounded before the sum
    (a vectorised fma): in float32 for float16 / bfloat16 (the product of two is exact there), in
    float64 for float32."""
    dtype = next(v.dtype for v in (a, b) if isinstance(v, Value))
    f = op.Sub if subtract else op.Add
    if dtype not in (FLOAT, FLOAT16, BFLOAT16):
        return run_supported(f, NUMERIC, a, _times(b, alpha))
    a, b, alpha = (round_scalar(v, dtype) for v in (a, b, alpha))
    compute = frozenset({FLOAT}) if dtype is not FLOAT or alpha == 1 else frozenset({DOUBLE})
    if not isinstance(b, Value):
        return run_supported(f, compute, a, b * alpha)  # b * alpha is exact in the compute dtype
    return run_supported(lambda x, y: f(x, y if alpha == 1 else op.Mul(y, alpha)), compute, a, b)


def _sub_operands(a: Any, b: Any) -> list[Any]:
    """torch refuses bool on either side of a subtraction, before promotion."""
    if any(x.dtype is BOOL if isinstance(x, Value) else isinstance(x, bool) for x in (a, b)):
        raise TypeError("aten::sub/rsub with a bool tensor is not supported (torch raises too); use logical_xor or logical_not")
    return promote_all([a, b])


@aten_op("aten::add.Tensor")
@elementwise("self", "other")
def aten_add(self: TRealOrBool, other: TRealOrBool, *, alpha: float = 1) -> TRealOrBool:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    _no_float_alpha("add", self, alpha)
    if self.dtype is BOOL:
        return _add(self, _times(other, alpha))
    return _plus_times(self, other, alpha, subtract=False)


@aten_op("aten::add.Scalar")
@elementwise("self", "other")
def aten_add_scalar(self: TRealOrBool, other: float, alpha: float = 1) -> TRealOrBool:
    """add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    _no_float_alpha("add", self, alpha)
    if self.dtype is BOOL:
        return _add(self, _times(other, alpha))
    return _plus_times(self, other, alpha, subtract=False)


# sub and rsub promote in the body: torch checks for bool operands before promotion.


@aten_op("aten::sub.Tensor")
def aten_sub(self: TReal, other: TReal, *, alpha: float = 1) -> TReal:
    """sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    self, other = _sub_operands(self, other)
    _no_float_alpha("sub", self, alpha)
    return _plus_times(self, other, alpha, subtract=True)


@aten_op("aten::sub.Scalar")
def aten_sub_scalar(self: TReal, other: float, alpha: float = 1) -> TReal:
    """sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    self, other = _sub_operands(self, other)
    _no_float_alpha("sub", self, alpha)
    return _plus_times(self, other, alpha, subtract=True)


@aten_op("aten::rsub.Tensor")
def aten_rsub(self: TReal, other: TReal, *, alpha: float = 1) -> TReal:
    """rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    self, other = _sub_operands(self, other)
    _no_float_alpha("rsub", self, alpha)
    return _plus_times(other, self, alpha, subtract=True)


@aten_op("aten::rsub.Scalar")
def aten_rsub_scalar(self: TReal, other: float, alpha: float = 1) -> TReal:
    """rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    self, other = _sub_operands(self, other)
    _no_float_alpha("rsub", self, alpha)
    return _plus_times(other, self, alpha, subtract=True)


@aten_op("aten::mul.Tensor", "aten::mul.Scalar")
@elementwise("self", "other")
def aten_mul(self: TRealOrBool, other: TRealOrBool | float) -> TRealOrBool:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype is BOOL:
        return op.And(self, other)
    return run_supported(op.Mul, _scalar_opmath(self, other), self, other)


def _scalar_opmath(a: Any, b: Any) -> frozenset:
    """Where mul / div compute: NUMERIC, but float32 for a half-precision tensor and a Python
    number, which torch's kernel takes unrounded in float32 (its CPU-scalar path), not rounded
    to float16 as an ONNX float16 constant would be."""
    value = a if isinstance(a, Value) else b
    python = not isinstance(a, Value) or not isinstance(b, Value)
    return OPMATH if python and value.dtype in (FLOAT16, BFLOAT16) else NUMERIC


def _true_divide(a: Any, b: Any) -> Any:
    return run_supported(op.Div, FLOATS, as_float(a), as_float(b))


def _trunc(x: Value) -> Value:
    return op.Where(op.Less(x, 0), op.Ceil(x), op.Floor(x))


def _div_trunc(a: Value, b: Any) -> Value:
    if a.known_dtype.is_floating:
        # torch: trunc(a / b), for half types in float32
        return run_supported(lambda x, y: _trunc(op.Div(x, y)), OPMATH, a, b)
    return run_supported(op.Div, NUMERIC, a, b)  # integer Div truncates


def _div_floor_float(a: Value, b: Any) -> Value:
    """c10's div_floor_floating: floor(a / b) from fmod, so that a == b * q + remainder(a, b)."""
    b = like(b, a)
    mod = op.Mod(a, b, fmod=1)
    div = op.Div(op.Sub(a, mod), b)
    div = op.Where(op.And(op.Not(op.Equal(mod, 0)), op.Xor(op.Less(b, 0), op.Less(mod, 0))), op.Sub(div, 1), div)
    floordiv = op.Floor(div)
    floordiv = op.Where(op.Greater(op.Sub(div, floordiv), 0.5), op.Add(floordiv, 1), floordiv)
    floordiv = op.Where(op.Equal(div, 0), op.Mul(op.Div(a, b), 0), floordiv)  # a signed zero
    return op.Where(op.Equal(b, 0), op.Div(a, b), floordiv)


def _div_floor_int(a: Value, b: Any) -> Value:
    """c10's div_floor_integer: truncating division, minus one when the signs differ and the
    remainder is not zero (the remainder a - q * b in exact integers: onnxruntime's integer Mod
    with fmod=1 goes through double)."""
    b = like(b, a)
    quot = op.Div(a, b)
    if a.known_dtype.kind == "u":
        return quot
    inexact = op.Not(op.Equal(op.Sub(a, op.Mul(quot, b)), like(0, a)))
    fix = op.And(inexact, op.Xor(op.Less(a, like(0, a)), op.Less(b, like(0, b))))
    return op.Sub(quot, op.Cast(fix, to=quot.known_dtype.onnx))


@aten_op("aten::div.Tensor", "aten::div.Scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_div(self: TReal, other: TReal) -> TFloat:
    """div.Tensor(Tensor self, Tensor other) -> Tensor"""
    return run_supported(op.Div, FLOATS & _scalar_opmath(self, other), self, other)


@aten_op("aten::div.Tensor_mode", "aten::div.Scalar_mode")
@elementwise("self", "other")
def aten_div_mode(self: TReal, other: TReal, *, rounding_mode: str | None) -> TReal:
    """div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"""
    if rounding_mode is None:
        return _true_divide(self, other)
    _no_bool(f"div(rounding_mode={rounding_mode!r})", self)
    if rounding_mode == "trunc":
        return _div_trunc(self, other)
    if rounding_mode == "floor":
        if self.known_dtype.is_floating:
            return run_supported(_div_floor_float, OPMATH, self, other)
        return run_supported(_div_floor_int, NUMERIC, self, other)
    raise ValueError(f"aten::div: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")


def int_power(x: Value, n: int) -> Value:
    """x ** n for an integer tensor by repeated squaring: exact, and wrapping like torch."""
    if n < 0:
        raise ValueError("aten::pow: integers to negative integer powers are not allowed")
    result = None
    square = x
    while n:
        if n & 1:
            result = square if result is None else run_supported(op.Mul, NUMERIC, result, square)
        n >>= 1
        if n:
            square = run_supported(op.Mul, NUMERIC, square, square)
    return result if result is not None else op.Expand(like(1, x), op.Shape(x))


INT32_64 = frozenset({INT32, INT64})  # the integer dtypes Where has kernels for, and BitwiseAnd


def int_pow(base: Value, exponent: Value) -> Value:
    """base ** exponent for int32 or int64 tensors (smaller ints compute in int32 and wrap the same), exact and wrapping like torch
    (onnxruntime's integer Pow goes through double: 3 ** 40 saturates): square and multiply
    over the exponent's bits in a Loop of one trip per bit. A negative exponent gives torch's
    1 for base 1, +-1 for base -1 and 0 otherwise."""
    from torchlib.ops.linalg._common import loop  # the Loop helper of the linalg package

    zero, one = like(0, base), like(1, base)
    bits = 8 * base.known_dtype.itemsize - 1
    positive = op.Where(op.Less(exponent, like(0, exponent)), like(0, exponent), exponent)

    def body(i: Value, values: list[Value]) -> tuple[None, list[Value]]:
        result, square, e = values
        bit = op.Equal(op.BitwiseAnd(e, like(1, e)), like(1, e))
        return None, [op.Where(bit, op.Mul(result, square), result), op.Mul(square, square), op.Div(e, like(2, e))]

    result = loop(bits, [op.Expand(one, op.Shape(base)), base, op.Expand(positive, op.Shape(base))], body)[0]
    odd = op.Equal(op.BitwiseAnd(exponent, like(1, exponent)), like(1, exponent))
    minus_one = like(-1, base)
    negative = op.Where(op.Equal(base, one), one, op.Where(op.Equal(base, minus_one), op.Where(odd, minus_one, one), zero))
    return op.Where(op.Less(exponent, like(0, exponent)), negative, result)


def _pow(base: Value, exponent: Value) -> Value:
    if base.dtype is BOOL:
        raise TypeError("aten::pow is not defined for bool tensors (torch raises too)")
    if not base.known_dtype.is_floating:
        return run_supported(int_pow, INT32_64, base, exponent)
    return run_supported(op.Pow, POW, base, exponent)


@aten_op("aten::pow.Tensor_Tensor")
@elementwise("self", "exponent")
def aten_pow(self: TReal, exponent: TReal) -> TReal:
    """pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor"""
    return _pow(self, exponent)


@aten_op("aten::pow.Tensor_Scalar")
@elementwise("self", "exponent")
def aten_pow_tensor_scalar(self: TReal, exponent: float) -> TReal:
    """pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor"""
    if not self.known_dtype.is_floating and isinstance(exponent, int):
        _no_bool("pow", self)
        return int_power(self, exponent)
    # torch: a float16 / bfloat16 tensor's exponent is rounded to its dtype; float32 and float64
    # use the formulas of pow_tensor_scalar_optimized_kernel (x * x, x * x * x, 1 / x, ...) and
    # pow otherwise, with the exponent rounded to float32 as its vectorised path does (its scalar
    # tail takes it in float64: pow(-2, 2 + 1e-9) is 4 in a long tensor, NaN in the last few
    # elements; float32 pow is within an ulp of either)
    exponent = round_scalar(exponent, self.dtype) if self.dtype in (FLOAT16, BFLOAT16) else exponent
    if exponent == 2:
        return run_supported(op.Mul, NUMERIC, self, self)
    if self.dtype in (FLOAT, DOUBLE) and exponent in _POW_FORMULAS:
        return _POW_FORMULAS[exponent](self)
    return run_supported(lambda x: op.Pow(x, like(exponent, x)), FLOATS, self)


_POW_FORMULAS: dict[float, Callable[[Value], Value]] = {
    3: lambda x: op.Mul(op.Mul(x, x), x),
    -1: lambda x: op.Div(like(1, x), x),
    -2: lambda x: op.Div(like(1, x), op.Mul(x, x)),
    0.5: op.Sqrt,
    -0.5: lambda x: op.Div(like(1, x), op.Sqrt(x)),
}


@aten_op("aten::pow.Scalar")
@elementwise("self", "exponent")
def aten_pow_scalar(self: float, exponent: TReal) -> TReal:
    """pow.Scalar(Scalar self, Tensor exponent) -> Tensor"""
    if not exponent.known_dtype.is_floating and not exponent.known_dtype.is_bool:
        return run_supported(lambda e: int_pow(op.Expand(like(self, e), op.Shape(e)), e), INT32_64, exponent)
    return run_supported(lambda e: op.Pow(like(self, e), e), POW, exponent)


def log1p(x: Value) -> Value:
    """log(1 + x), accurate near 0 (Kahan: log(u) * x / (u - 1) with u = 1 + x)."""
    u = op.Add(x, 1)
    near_zero = op.Where(op.Equal(u, 1), x, op.Div(op.Mul(op.Log(u), x), op.Sub(u, 1)))
    return op.Where(op.Less(op.Abs(x), 1), near_zero, op.Log(u))


def expm1(x: Value) -> Value:
    """exp(x) - 1, accurate near 0 (Kahan: (u - 1) * x / log(u) with u = exp(x))."""
    u = op.Exp(x)
    near_zero = op.Where(op.Equal(u, 1), x, op.Div(op.Mul(op.Sub(u, 1), x), op.Log(u)))
    return op.Where(op.Less(op.Abs(x), 1), near_zero, op.Sub(u, 1))


def _exp2(x: Value) -> Value:
    return op.Pow(like(2, x), x)


def _log2(x: Value) -> Value:
    return op.Div(op.Log(x), like(math.log(2), x))


def _log10(x: Value) -> Value:
    return op.Div(op.Log(x), like(math.log(10), x))


def _rsqrt(x: Value) -> Value:
    return op.Reciprocal(op.Sqrt(x))


def _tan(x: Value) -> Value:
    if x.dtype is DOUBLE:  # no double Tan kernel
        return op.Div(op.Sin(x), op.Cos(x))
    return run_supported(op.Tan, FLOAT32_16, x)


_LN2 = math.log(2)


def _half_exp(a: Value) -> Value:
    """exp(a) / 2 (inf from a = 709.78 on, where exp overflows, as in torch's own kernels)."""
    return op.Mul(op.Exp(a), 0.5)


def _sinh(x: Value) -> Value:
    if x.dtype is DOUBLE:  # no double Sinh kernel
        # |x| < 1: the Taylor series to x**19 (no cancellation; the next term is < 1e-17 of the
        # sum); else e**|x| / 2 - e**-|x| / 2
        x2 = op.Mul(x, x)
        series = like(1.0, x)
        for n in range(19, 1, -2):
            series = op.Add(op.Mul(series, op.Div(x2, like(float(n * (n - 1)), x))), like(1.0, x))
        small = op.Mul(x, series)
        a = op.Abs(x)
        large = op.Mul(op.Sign(x), op.Sub(_half_exp(a), _half_exp(op.Neg(a))))
        return op.Where(op.Less(a, like(1.0, x)), small, large)
    return run_supported(op.Sinh, FLOAT32_16, x)


def _cosh(x: Value) -> Value:
    if x.dtype is DOUBLE:  # no double Cosh kernel: e**|x| / 2 + e**-|x| / 2
        a = op.Abs(x)
        return op.Add(_half_exp(a), _half_exp(op.Neg(a)))
    return run_supported(op.Cosh, FLOAT32_16, x)


def _asinh(x: Value) -> Value:
    if x.dtype is DOUBLE:  # no double Asinh kernel: glibc's three ranges, on |x|, sign restored
        a = op.Abs(x)
        root = op.Sqrt(op.Add(op.Mul(a, a), 1.0))
        small = log1p(op.Add(a, op.Div(op.Mul(a, a), op.Add(root, 1.0))))  # |x| <= 2: no cancellation
        middle = op.Log(op.Add(op.Mul(a, 2.0), op.Div(1.0, op.Add(root, a))))
        large = op.Add(op.Log(a), _LN2)  # |x| > 2^28: sqrt(x^2 + 1) is |x|, and x^2 overflows near max
        y = op.Where(op.Greater(a, 2.0**28), large, op.Where(op.Greater(a, 2.0), middle, small))
        y = op.Where(op.Less(a, 2.0**-28), a, y)  # asinh(x) = x to double precision (and x^2 underflows)
        return op.Where(op.Less(x, 0.0), op.Neg(y), op.Where(op.Greater(x, 0.0), y, x))  # x: -0.0, NaN
    return run_supported(op.Asinh, FLOAT32_16, x)


def _acosh(x: Value) -> Value:
    if x.dtype is DOUBLE:  # no double Acosh kernel: glibc's ranges (x < 1 gives NaN from Sqrt)
        t = op.Sub(x, 1.0)
        small = log1p(op.Add(t, op.Sqrt(op.Add(op.Mul(t, 2.0), op.Mul(t, t)))))  # 1 <= x <= 2
        middle = op.Log(op.Sub(op.Mul(x, 2.0), op.Div(1.0, op.Add(x, op.Sqrt(op.Sub(op.Mul(x, x), 1.0))))))
        large = op.Add(op.Log(x), _LN2)  # x > 2^28: x^2 overflows near max
        y = op.Where(op.Greater(x, 2.0**28), large, op.Where(op.Greater(x, 2.0), middle, small))
        return op.Where(op.Less(x, 1.0), like(math.nan, x), y)
    return run_supported(op.Acosh, FLOAT32_16, x)


_LN2 = math.log(2.0)


def _atanh(x: Value) -> Value:
    if x.dtype is DOUBLE:  # no double Atanh kernel: sign(x) * log1p(2|x| / (1 - |x|)) / 2, accurate near 0 and +-1
        a = op.Abs(x)
        return op.Mul(op.Sign(x), op.Mul(log1p(op.Div(op.Mul(a, 2.0), op.Sub(1.0, a))), 0.5))
    return run_supported(op.Atanh, FLOAT32_16, x)


def _rounding(name: str, onnx_op: Callable[..., Any]) -> Callable[[Value], Value]:
    """floor/ceil/round/trunc: integers are already whole (a copy, as in torch)."""

    def fn(x: Value) -> Value:
        if x.known_dtype.is_floating:
            return run_supported(onnx_op, FLOATS, x)
        _no_bool(name, x)
        return op.Identity(x)

    return fn


def _abs(x: Value) -> Value:
    _no_bool("abs", x)
    return run_supported(op.Abs, NUMERIC, x)


def _neg(x: Value) -> Value:
    _no_bool("neg", x)
    return run_supported(op.Neg, SIGNED, x)


def _sign(x: Value) -> Value:
    if x.dtype is BOOL:
        return op.Identity(x)
    if x.known_dtype.is_floating:  # torch: sign(nan) is 0
        return run_supported(lambda y: op.Where(op.IsNaN(y), 0.0, op.Sign(y)), FLOATS, x)
    return run_supported(op.Sign, NUMERIC, x)


def _frac(x: Value) -> Value:
    if not x.known_dtype.is_floating:
        raise TypeError(f"aten::frac is defined for floating tensors only (torch raises too), got {x.dtype}")
    return run_supported(lambda y: op.Sub(y, _trunc(y)), FLOATS, x)


def _square(x: Value) -> Value:
    return run_supported(op.Mul, NUMERIC, x, x)


aten_abs = unary("abs", _abs, DEFAULT)
aten_neg = unary("neg", _neg, DEFAULT)
aten_sign = unary("sign", _sign, DEFAULT)
aten_square = unary("square", _square, BOOL_TO_LONG)
aten_floor = unary("floor", _rounding("floor", op.Floor), DEFAULT)
aten_ceil = unary("ceil", _rounding("ceil", op.Ceil), DEFAULT)
aten_round = unary("round", _rounding("round", op.Round), DEFAULT)
aten_trunc = unary("trunc", _rounding("trunc", _trunc), DEFAULT)
aten_frac = unary("frac", _frac, DEFAULT)
aten_exp = unary("exp", kernel(op.Exp, FLOATS), INT_TO_FLOAT)
aten_exp2 = unary("exp2", kernel(_exp2, OPMATH), INT_TO_FLOAT)
aten_expm1 = unary("expm1", kernel(expm1, OPMATH), INT_TO_FLOAT)
aten_log = unary("log", kernel(op.Log, FLOATS), INT_TO_FLOAT)
aten_log2 = unary("log2", kernel(_log2, OPMATH), INT_TO_FLOAT)
aten_log10 = unary("log10", kernel(_log10, OPMATH), INT_TO_FLOAT)
aten_log1p = unary("log1p", kernel(log1p, OPMATH), INT_TO_FLOAT)
aten_sqrt = unary("sqrt", kernel(op.Sqrt, FLOATS), INT_TO_FLOAT)
aten_rsqrt = unary("rsqrt", kernel(_rsqrt, OPMATH), INT_TO_FLOAT)
aten_reciprocal = unary("reciprocal", kernel(op.Reciprocal, FLOATS), INT_TO_FLOAT)
aten_sin = unary("sin", kernel(op.Sin, FLOATS), INT_TO_FLOAT)
aten_cos = unary("cos", kernel(op.Cos, FLOATS), INT_TO_FLOAT)
aten_tan = unary("tan", kernel(_tan, FLOATS), INT_TO_FLOAT)
aten_tanh = unary("tanh", kernel(op.Tanh, FLOATS), INT_TO_FLOAT)
aten_sinh = unary("sinh", kernel(_sinh, FLOATS), INT_TO_FLOAT)
aten_cosh = unary("cosh", kernel(_cosh, FLOATS), INT_TO_FLOAT)
aten_asinh = unary("asinh", kernel(_asinh, FLOATS), INT_TO_FLOAT)
aten_acosh = unary("acosh", kernel(_acosh, FLOATS), INT_TO_FLOAT)
aten_atanh = unary("atanh", kernel(_atanh, FLOATS), INT_TO_FLOAT)
# onnxruntime has no double kernel for these: double inputs compute with Cephes' rational
# approximations in double (torchlib/ops/_cephes.py).
aten_asin = unary("asin", float32_or_double(op.Asin, cephes.asin), INT_TO_FLOAT)
aten_acos = unary("acos", float32_or_double(op.Acos, cephes.acos), INT_TO_FLOAT)
aten_atan = unary("atan", float32_or_double(op.Atan, cephes.atan), INT_TO_FLOAT)
aten_erf = unary("erf", float32_or_double(op.Erf, cephes.erf), INT_TO_FLOAT)


@aten_op("aten::round.decimals")
@elementwise("self")
def aten_round_decimals(self: TFloat, *, decimals: int) -> TFloat:
    """round.decimals(Tensor self, *, int decimals) -> Tensor"""
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::round.decimals is defined for floating tensors only (torch raises too), got {self.dtype}")
    scale = 10.0 ** abs(decimals)

    def fn(x: Value) -> Value:  # torch: in float32 for the half types
        if decimals < 0:
            return op.Mul(op.Round(op.Div(x, scale)), scale)
        return op.Div(op.Round(op.Mul(x, scale)), scale)

    return run_supported(fn, OPMATH, self)


@aten_op("aten::atan2")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_atan2(self: TReal, other: TReal) -> TFloat:
    """atan2(Tensor self, Tensor other) -> Tensor"""

    def fn(y: Value, x: Value) -> Value:  # double: Cephes' atan in double (no double Atan kernel)
        return cephes.atan2(y, x, atan_fn=cephes.atan if y.dtype is DOUBLE else op.Atan)

    return run_supported(fn, frozenset({FLOAT, DOUBLE}), self, other)


def _remainder(a: Value, b: Any) -> Value:
    """Python's modulo: the result has the sign of the divisor."""
    if not a.known_dtype.is_floating:
        return op.Mod(a, b, fmod=0)
    b = like(b, a)
    mod = op.Mod(a, b, fmod=1)
    wrong_sign = op.And(op.Not(op.Equal(mod, 0)), op.Xor(op.Less(b, 0), op.Less(mod, 0)))
    return op.Where(wrong_sign, op.Add(mod, b), mod)


@aten_op("aten::remainder.Tensor", "aten::remainder.Scalar", "aten::remainder.Scalar_Tensor")
@elementwise("self", "other")
def aten_remainder(self: TReal, other: TReal) -> TReal:
    """remainder.Tensor(Tensor self, Tensor other) -> Tensor"""
    _no_bool("remainder", self if isinstance(self, Value) else other)
    self, other = _rounded_scalars(self, other)
    return run_supported(lambda a, b: _remainder(like(a, b), b), NUMERIC - {FLOAT16}, self, other)


@aten_op("aten::fmod.Tensor", "aten::fmod.Scalar")
@elementwise("self", "other")
def aten_fmod(self: TReal, other: TReal) -> TReal:
    """fmod.Tensor(Tensor self, Tensor other) -> Tensor"""
    _no_bool("fmod", self)
    if not (self if isinstance(self, Value) else other).known_dtype.is_floating:
        return run_supported(_int_fmod, INT32_64, self, other)
    self, other = _rounded_scalars(self, other)
    return run_supported(lambda a, b: op.Mod(a, b, fmod=1), NUMERIC, self, other)


def _rounded_scalars(a: Any, b: Any) -> tuple[Any, Any]:
    """A Python number operand rounded to the tensor operand's dtype, as torch's TensorIterator
    casts a wrapped number to the common dtype (remainder, fmod, comparisons)."""
    dtype = (a if isinstance(a, Value) else b).known_dtype
    return round_scalar(a, dtype), round_scalar(b, dtype)


def _int_fmod(a: Any, b: Any) -> Value:
    """C's a % b for integers, a - trunc(a / b) * b in exact integer Div (onnxruntime's integer
    Mod with fmod=1 goes through double: fmod(2**63 - 1, 6) gives 2, not 1). b = -1 and b = 0
    divide by 1 instead (fmod(MIN, -1) = 0 without the overflow; torch raises for b = 0)."""
    b = like(b, a if isinstance(a, Value) else b)
    a = like(a, b)
    unsafe = op.Equal(b, like(0, b))
    if b.dtype.kind != "u":
        unsafe = op.Or(unsafe, op.Equal(b, like(-1, b)))
    safe = op.Where(unsafe, like(1, b), b)
    return op.Sub(a, op.Mul(op.Div(a, safe), safe))


# -- gcd and lcm ---------------------------------------------------------------------------------

_EUCLID_STEPS = 100  # Euclid's algorithm takes at most 92 steps on int64 (consecutive Fibonacci numbers)


def _wrap(x: Value, dtype: DType) -> Value:
    """int64 x converted to dtype as C++ converts (wrapping around), back in int64."""
    return x if dtype is INT64 else op.Cast(op.Cast(x, to=dtype.onnx), to=INT64.onnx)


def _integers_only(name: str, x: Value) -> None:
    if not x.known_dtype.is_integer:
        raise TypeError(f"aten::{name} is only defined for integer tensors, got {x.dtype} (torch raises too)")


def _gcd(a: Value, b: Value, dtype: DType) -> Value:
    """torch's calc_gcd on int64 values of `dtype`: a, b = |a|, |b| converted back to the dtype
    (|MIN| is MIN again), then `while a != 0: a, b = b % a, a` with C's remainder; the result
    is b. Every element takes the steps together, those already done keep their values."""
    a, b = _wrap(op.Abs(a), dtype), _wrap(op.Abs(b), dtype)
    ev = current_evaluator()
    body = ev.subgraph("euclid") if isinstance(ev, GraphBuilder) else GraphBuilder(name="euclid")
    body.input("i", INT64, [])
    body.input("cond", BOOL, [])
    x = body.input("a", INT64, a.shape)
    y = body.input("b", INT64, b.shape)
    with body:
        done = op.Equal(x, like(0, x))
        next_a = _int_fmod(y, x)  # 0 where x is 0 (divides by 1 there)
        next_b = op.Where(done, y, x)
        left = op.Cast(op.Not(op.Equal(op.Reshape(next_a, [-1]), like(0, next_a))), to=INT64.onnx)
        body.output(op.Cast(op.ReduceMax(op.Concat(left, like(np.zeros(1, np.int64), left), axis=0), keepdims=0), to=BOOL.onnx))
        body.output(next_a)
        body.output(next_b)
    _, result = n_outputs(op.Loop(np.array(_EUCLID_STEPS, np.int64), np.array(True), a, b, body=body), 2)
    return result


def _broadcast_int64(self: Value, other: Value) -> tuple[Value, Value]:
    """Both as int64, of their broadcast shape (Expand broadcasts both ways)."""
    a, b = cast_to(self, INT64), cast_to(other, INT64)
    return op.Expand(a, op.Shape(b)), op.Expand(b, op.Shape(a))


@aten_op("aten::gcd")
@elementwise("self", "other")
def aten_gcd(self: TInt, other: TInt) -> TInt:
    """gcd(Tensor self, Tensor other) -> Tensor

    Non-negative except where torch's |MIN| wraps around: gcd(MIN, 0) is MIN, gcd(MIN, 7) is -1
    for int64 (torch's arithmetic, in the dtype). Computed in int64 with exact integer division."""
    _integers_only("gcd", self)
    dtype = self.known_dtype
    a, b = _broadcast_int64(self, other)
    return cast_to(_gcd(a, b, dtype), dtype)


@aten_op("aten::lcm")
@elementwise("self", "other")
def aten_lcm(self: TInt, other: TInt) -> TInt:
    """lcm(Tensor self, Tensor other) -> Tensor

    torch: g = gcd(a, b); 0 if g is 0, else |a / g * b|, computed in C++'s int for the types
    narrower than int32 and in the dtype otherwise, overflow wrapping around (lcm(0, x) = 0)."""
    _integers_only("lcm", self)
    dtype = self.known_dtype
    a, b = _broadcast_int64(self, other)
    g = _gcd(a, b, dtype)
    zero = op.Equal(g, like(0, g))
    minus_one = op.Equal(g, like(-1, g))
    quotient = op.Where(minus_one, op.Neg(a), op.Div(a, op.Where(op.Or(zero, minus_one), like(1, g), g)))
    narrow = INT64 if dtype is INT64 else INT32  # the width of torch's arithmetic
    product = _wrap(op.Mul(quotient, b), narrow)
    result = op.Where(zero, like(0, g), _wrap(op.Abs(product), narrow))
    return cast_to(result, dtype)


@aten_op("aten::clone")
def aten_clone(self: TTensor, *, memory_format: str | None = None) -> TTensor:
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    return op.Identity(self)


@aten_op("aten::fill.Scalar")
def aten_fill(self: TTensor, value: float) -> TTensor:
    """fill.Scalar(Tensor self, Scalar value) -> Tensor"""
    return full_of(op.Shape(self), value, self.known_dtype)


@aten_op("aten::fill.Tensor")
def aten_fill_tensor(self: TTensor, value: TTensor) -> TTensor:
    """fill.Tensor(Tensor self, Tensor value) -> Tensor"""
    return full_of(op.Shape(self), value, self.known_dtype)


def _lerp(start: Value, end: Value, weight: Any) -> Value:
    """torch's lerp: start + w * (end - start) for |w| < 0.5, else end - (end - start) * (1 - w)."""
    diff = op.Sub(end, start)
    if not isinstance(weight, Value):
        if abs(weight) < 0.5:
            return op.Add(start, op.Mul(diff, weight))
        return op.Sub(end, op.Mul(diff, 1.0 - weight))
    low = op.Add(start, op.Mul(weight, diff))
    high = op.Sub(end, op.Mul(diff, op.Sub(1.0, weight)))
    return op.Where(op.Less(op.Abs(weight), 0.5), low, high)


@aten_op("aten::lerp.Scalar")
@elementwise("self", "end")
def aten_lerp(self: TFloat, end: TFloat, weight: float) -> TFloat:
    """lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"""
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::lerp is defined for floating tensors only (torch raises too), got {self.dtype}")
    return run_supported(lambda s, e: _lerp(s, e, weight), OPMATH, self, end)


@aten_op("aten::lerp.Tensor")
@elementwise("self", "end", "weight")
def aten_lerp_tensor(self: TFloat, end: TFloat, weight: TFloat) -> TFloat:
    """lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor"""
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::lerp is defined for floating tensors only (torch raises too), got {self.dtype}")
    return run_supported(_lerp, OPMATH, self, end, weight)


@aten_op("aten::addcmul")
@elementwise("self", "tensor1", "tensor2")
def aten_addcmul(self: TReal, tensor1: TReal, tensor2: TReal, *, value: float = 1) -> TReal:
    """addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"""
    _no_bool("addcmul", self)

    def fn(s: Value, t1: Value, t2: Value) -> Value:
        product = op.Mul(t1, t2)
        return op.Add(s, product if value == 1 else op.Mul(product, value))

    return run_supported(fn, NUMERIC - {FLOAT16}, self, tensor1, tensor2)


@aten_op("aten::addcdiv")
@elementwise("self", "tensor1", "tensor2")
def aten_addcdiv(self: TFloat, tensor1: TFloat, tensor2: TFloat, *, value: float = 1) -> TFloat:
    """addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"""
    if not self.known_dtype.is_floating:
        raise TypeError("aten::addcdiv: integer division with addcdiv is not supported (torch raises too)")

    def fn(s: Value, t1: Value, t2: Value) -> Value:
        quotient = op.Div(t1, t2)
        return op.Add(s, quotient if value == 1 else op.Mul(quotient, value))

    return run_supported(fn, OPMATH, self, tensor1, tensor2)


# nextafter without a bit cast (opset 23 has none). For a normal x, d = |x|·2^-p·(1 + 2^-8) lies
# strictly between half and one and a half of the spacing of the floats on either side of x
# (p = significand bits), so the correctly rounded sum x ± d is the neighbour toward y. The sum
# is formed on x scaled by a power of two when |x| < 1, so that d is a normal number (a
# subnormal d would lose the 2^-8). A subnormal x (or the smallest normal) has neighbours at
# x ± the smallest subnormal, exactly. float16/bfloat16 add in float32 and round once in the
# final cast.
_NEXTAFTER = {  # dtype: (significand bits p, smallest subnormal, smallest normal, largest finite)
    FLOAT: (24, 2.0**-149, 2.0**-126, float(np.finfo(np.float32).max)),
    DOUBLE: (53, 2.0**-1074, 2.0**-1022, float(np.finfo(np.float64).max)),
    FLOAT16: (11, 2.0**-24, 2.0**-14, 65504.0),
    BFLOAT16: (8, 2.0**-133, 2.0**-126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
}


@aten_op("aten::nextafter")
@elementwise("self", "other")
def aten_nextafter(self: TFloat, other: TFloat) -> TFloat:
    """nextafter(Tensor self, Tensor other) -> Tensor"""
    if self.dtype not in _NEXTAFTER:
        raise TypeError(f"aten::nextafter is defined for float16, bfloat16, float32 and float64 (torch raises too), got {self.dtype}")
    bits, tiny, normal, largest = _NEXTAFTER[self.dtype]
    compute = DOUBLE if self.dtype is DOUBLE else FLOAT  # float16/bfloat16: float32, exactly
    x, y = cast_to(self, compute), cast_to(other, compute)
    magnitude = op.Abs(x)
    scale = op.Where(op.Less(magnitude, op.CastLike(1, x)), op.CastLike(2.0 ** (bits + 8), x), op.CastLike(1, x))
    scaled = op.Mul(x, scale)
    step = op.Mul(op.Abs(scaled), op.CastLike(2.0**-bits * (1 + 2.0**-8), x))
    up = op.Greater(y, x)
    normal_result = op.Div(op.Where(up, op.Add(scaled, step), op.Sub(scaled, step)), scale)
    tiny_step = op.CastLike(tiny, x)
    subnormal_result = op.Where(up, op.Add(x, tiny_step), op.Sub(x, tiny_step))
    result = op.Where(op.LessOrEqual(magnitude, op.CastLike(normal, x)), subnormal_result, normal_result)
    result = cast_to(cast_to(result, self.dtype), compute)  # one rounding
    finite_max = op.CastLike(largest, x)
    result = op.Where(op.IsInf(x), op.Where(op.Greater(x, op.CastLike(0, x)), finite_max, op.Neg(finite_max)), result)
    same = op.Equal(x, y)
    result = op.Where(same, y, result)
    result = op.Where(op.Or(op.IsNaN(x), op.IsNaN(y)), op.Add(x, y), result)
    # a zero result has the sign of y when x == y, else of x (onnxruntime's Where drops the sign
    # of a -0.0 it selects, so the sign is put back by a multiplication)
    zero = op.CastLike(0, x)
    negative_zero = op.And(op.Equal(result, zero), op.Or(op.And(same, cephes.signbit(y)), op.And(op.Not(same), cephes.signbit(x))))
    one = op.CastLike(1, x)
    sign = op.Where(op.Or(negative_zero, op.Less(result, zero)), op.Neg(one), one)
    return cast_to(op.Mul(op.Abs(result), sign), self.dtype)
