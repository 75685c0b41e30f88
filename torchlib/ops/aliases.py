"""Elementwise aliases: the NumPy-style and `special_` names torch gives to ops we already have.

Each function keeps its own ATen signature and schema and calls the function it aliases, which
does the type promotion and the computation (torch's CompositeImplicitAutograd kernels of these
overloads are the same one-line redirections).
"""

from __future__ import annotations

from collections.abc import Sequence

import ml_dtypes

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TBool, TFloat, TReal, TRealOrBool
from graph_builder.types import BOOL, DType
from torchlib.ops._kernels import full_of
from torchlib.ops.activations import (
    aten_clamp,
    aten_clamp_tensor,
    aten_log_softmax,
    aten_relu,
    aten_sigmoid,
    aten_softmax,
)
from torchlib.ops.comparison import _float_test, aten_ge, aten_gt, aten_le, aten_lt, aten_ne
from torchlib.ops.elementwise import (
    aten_acos,
    aten_acosh,
    aten_add,
    aten_asin,
    aten_asinh,
    aten_atan,
    aten_atan2,
    aten_atanh,
    aten_div,
    aten_div_mode,
    aten_erf,
    aten_exp2,
    aten_expm1,
    aten_log1p,
    aten_mul,
    aten_neg,
    aten_round,
    aten_round_decimals,
    aten_sub,
    aten_sub_scalar,
    aten_trunc,
)
from torchlib.ops.reductions import aten_logsumexp
from torchlib.ops.special.bessel import aten_i0
from torchlib.ops.special.erf import aten_erfc, aten_erfinv
from torchlib.ops.special.gamma import aten_digamma, aten_lgamma, aten_mvlgamma, aten_polygamma
from torchlib.ops.special.misc import aten_logit, aten_sinc, aten_xlogy
from torchlib.registry import aten_op

# -- NumPy names of the trigonometric functions ---------------------------------------------------


@aten_op("aten::arccos")
def aten_arccos(self: TReal) -> TFloat:
    """arccos(Tensor self) -> Tensor"""
    return aten_acos(self)


@aten_op("aten::arcsin")
def aten_arcsin(self: TReal) -> TFloat:
    """arcsin(Tensor self) -> Tensor"""
    return aten_asin(self)


@aten_op("aten::arctan")
def aten_arctan(self: TReal) -> TFloat:
    """arctan(Tensor self) -> Tensor"""
    return aten_atan(self)


@aten_op("aten::arccosh")
def aten_arccosh(self: TReal) -> TFloat:
    """arccosh(Tensor self) -> Tensor"""
    return aten_acosh(self)


@aten_op("aten::arcsinh")
def aten_arcsinh(self: TReal) -> TFloat:
    """arcsinh(Tensor self) -> Tensor"""
    return aten_asinh(self)


@aten_op("aten::arctanh")
def aten_arctanh(self: TReal) -> TFloat:
    """arctanh(Tensor self) -> Tensor"""
    return aten_atanh(self)


@aten_op("aten::arctan2")
def aten_arctan2(self: TReal, other: TReal) -> TFloat:
    """arctan2(Tensor self, Tensor other) -> Tensor"""
    return aten_atan2(self, other)


# -- arithmetic ----------------------------------------------------------------------------------


@aten_op("aten::negative")
def aten_negative(self: TReal) -> TReal:
    """negative(Tensor self) -> Tensor"""
    return aten_neg(self)


@aten_op("aten::fix")
def aten_fix(self: TReal) -> TReal:
    """fix(Tensor self) -> Tensor"""
    return aten_trunc(self)


@aten_op("aten::subtract.Tensor")
def aten_subtract(self: TReal, other: TReal, *, alpha: float = 1) -> TReal:
    """subtract.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    return aten_sub(self, other, alpha=alpha)


@aten_op("aten::subtract.Scalar")
def aten_subtract_scalar(self: TReal, other: float, alpha: float = 1) -> TReal:
    """subtract.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    return aten_sub_scalar(self, other, alpha)


@aten_op("aten::multiply.Tensor", "aten::multiply.Scalar")
def aten_multiply(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """multiply.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_mul(self, other)


@aten_op("aten::divide.Tensor", "aten::divide.Scalar")
def aten_divide(self: TReal, other: TReal) -> TFloat:
    """divide.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_div(self, other)


@aten_op("aten::divide.Tensor_mode", "aten::divide.Scalar_mode")
def aten_divide_mode(self: TReal, other: TReal, *, rounding_mode: str | None) -> TReal:
    """divide.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor"""
    return aten_div_mode(self, other, rounding_mode=rounding_mode)


@aten_op("aten::clip")
def aten_clip(self: TReal, min: float | None = None, max: float | None = None) -> TReal:
    """clip(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"""
    return aten_clamp(self, min, max)


@aten_op("aten::clip.Tensor")
def aten_clip_tensor(self: TReal, min: TReal | None = None, max: TReal | None = None) -> TReal:
    """clip.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"""
    return aten_clamp_tensor(self, min, max)


def _add_clamp(total: Value) -> Value:
    """torch's add_clamp kernel: the sum clamped to [0, the dtype's max], so +inf gives finfo.max.
    NaN stays NaN, as in its vectorised loop (the scalar tail of short tensors gives 0: torch
    depends on the length there)."""
    out = aten_relu(total)
    if not total.known_dtype.is_floating:
        return out
    biggest = op.CastLike(float(ml_dtypes.finfo(total.known_dtype.numpy).max), out)
    return op.Where(op.Greater(out, biggest), biggest, out)


@aten_op("aten::_add_relu.Tensor")
def aten__add_relu(self: TReal, other: TReal, *, alpha: float = 1) -> TReal:
    """_add_relu.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    return _add_clamp(aten_add(self, other, alpha=alpha))


@aten_op("aten::_add_relu.Scalar")
def aten__add_relu_scalar(self: TReal, other: float, alpha: float = 1) -> TReal:
    """_add_relu.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor"""
    return _add_clamp(aten_add(self, other, alpha=alpha))


# -- comparisons ---------------------------------------------------------------------------------


@aten_op("aten::greater.Tensor", "aten::greater.Scalar")
def aten_greater(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """greater.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_gt(self, other)


@aten_op("aten::greater_equal.Tensor", "aten::greater_equal.Scalar")
def aten_greater_equal(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """greater_equal.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_ge(self, other)


@aten_op("aten::less.Tensor", "aten::less.Scalar")
def aten_less(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """less.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_lt(self, other)


@aten_op("aten::less_equal.Tensor", "aten::less_equal.Scalar")
def aten_less_equal(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """less_equal.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_le(self, other)


@aten_op("aten::not_equal.Tensor", "aten::not_equal.Scalar")
def aten_not_equal(self: TRealOrBool, other: TRealOrBool) -> TBool:
    """not_equal.Tensor(Tensor self, Tensor other) -> Tensor"""
    return aten_ne(self, other)


@aten_op("aten::isposinf")
def aten_isposinf(self: TRealOrBool) -> TBool:
    """isposinf(Tensor self) -> Tensor"""
    return _float_test(self, lambda x: op.IsInf(x, detect_negative=0), False)


@aten_op("aten::isneginf")
def aten_isneginf(self: TRealOrBool) -> TBool:
    """isneginf(Tensor self) -> Tensor"""
    return _float_test(self, lambda x: op.IsInf(x, detect_positive=0), False)


@aten_op("aten::isreal")
def aten_isreal(self: TRealOrBool) -> TBool:
    """isreal(Tensor self) -> Tensor"""
    return full_of(op.Shape(self), True, BOOL)  # a real tensor (complex ones reach the complex variants)


# -- torch.special names -------------------------------------------------------------------------


@aten_op("aten::special_expit")
def aten_special_expit(self: TReal) -> TFloat:
    """special_expit(Tensor self) -> Tensor"""
    return aten_sigmoid(self)


@aten_op("aten::special_exp2")
def aten_special_exp2(self: TReal) -> TFloat:
    """special_exp2(Tensor self) -> Tensor"""
    return aten_exp2(self)


@aten_op("aten::special_expm1")
def aten_special_expm1(self: TReal) -> TFloat:
    """special_expm1(Tensor self) -> Tensor"""
    return aten_expm1(self)


@aten_op("aten::special_erf")
def aten_special_erf(self: TReal) -> TFloat:
    """special_erf(Tensor self) -> Tensor"""
    return aten_erf(self)


@aten_op("aten::special_erfc")
def aten_special_erfc(self: TReal) -> TFloat:
    """special_erfc(Tensor self) -> Tensor"""
    return aten_erfc(self)


@aten_op("aten::special_erfinv")
def aten_special_erfinv(self: TReal) -> TFloat:
    """special_erfinv(Tensor self) -> Tensor"""
    return aten_erfinv(self)


@aten_op("aten::special_gammaln")
def aten_special_gammaln(self: TReal) -> TFloat:
    """special_gammaln(Tensor self) -> Tensor"""
    return aten_lgamma(self)


@aten_op("aten::special_digamma")
def aten_special_digamma(self: TReal) -> TFloat:
    """special_digamma(Tensor self) -> Tensor"""
    return aten_digamma(self)


@aten_op("aten::special_psi")
def aten_special_psi(self: TReal) -> TFloat:
    """special_psi(Tensor self) -> Tensor"""
    return aten_digamma(self)


@aten_op("aten::special_i0")
def aten_special_i0(self: TReal) -> TFloat:
    """special_i0(Tensor self) -> Tensor"""
    return aten_i0(self)


@aten_op("aten::special_log1p")
def aten_special_log1p(self: TReal) -> TFloat:
    """special_log1p(Tensor self) -> Tensor"""
    return aten_log1p(self)


@aten_op("aten::special_sinc")
def aten_special_sinc(self: TReal) -> TFloat:
    """special_sinc(Tensor self) -> Tensor"""
    return aten_sinc(self)


@aten_op("aten::special_logit")
def aten_special_logit(self: TReal, eps: float | None = None) -> TFloat:
    """special_logit(Tensor self, float? eps=None) -> Tensor"""
    return aten_logit(self, eps)


@aten_op("aten::special_round")
def aten_special_round(self: TReal, *, decimals: int = 0) -> TReal:
    """special_round(Tensor self, *, int decimals=0) -> Tensor"""
    if decimals == 0:
        return aten_round(self)
    return aten_round_decimals(self, decimals=decimals)


@aten_op("aten::special_softmax")
def aten_special_softmax(self: TFloat, dim: int, dtype: DType | None = None) -> TFloat:
    """special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return aten_softmax(self, dim, dtype)


@aten_op("aten::special_log_softmax")
def aten_special_log_softmax(self: TFloat, dim: int, *, dtype: DType | None = None) -> TFloat:
    """special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"""
    return aten_log_softmax(self, dim, dtype)


@aten_op("aten::special_logsumexp")
def aten_special_logsumexp(self: TRealOrBool, dim: Sequence[int], keepdim: bool = False) -> TFloat:
    """special_logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor"""
    return aten_logsumexp(self, dim, keepdim)


@aten_op("aten::special_polygamma")
def aten_special_polygamma(n: int, self: TReal) -> TFloat:
    """special_polygamma(int n, Tensor self) -> Tensor"""
    return aten_polygamma(n, self)


@aten_op("aten::special_multigammaln")
def aten_special_multigammaln(self: TReal, p: int) -> TFloat:
    """special_multigammaln(Tensor self, int p) -> Tensor"""
    return aten_mvlgamma(self, p)


@aten_op("aten::special_xlogy", "aten::special_xlogy.self_scalar", "aten::special_xlogy.other_scalar")
def aten_special_xlogy(self: TReal, other: TReal) -> TFloat:
    """special_xlogy(Tensor self, Tensor other) -> Tensor"""
    return aten_xlogy(self, other)
