"""The gamma family: lgamma, digamma, polygamma, mvlgamma, the Hurwitz zeta function and the
regularized incomplete gamma functions (igamma, igammac).

They compute in the input's floating dtype (half types in float32, as torch), with the series
and recurrences of torch's CPU kernels (aten/src/ATen/native/Math.h, from Cephes).
"""

from __future__ import annotations

import math

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import BOOL, TFloat, TReal
from torchlib.ops._cephes import polyval
from torchlib.ops._kernels import OPMATH, as_float, kernel, like, run_supported
from torchlib.ops._unary import unary
from torchlib.promotion import INT_TO_FLOAT
from torchlib.registry import aten_op

# Lanczos (g = 7, n = 9), about 1e-15 relative.
_LANCZOS_G = 7.0
_LANCZOS = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7]  # fmt: skip


def _sin_pi(x: Value) -> Value:
    """sin(pi x) = (-1)^n sin(pi r) with n = round(x) and r = x - n in [-1/2, 1/2] (exact), so
    that it keeps full relative precision near every integer (pi x itself would round)."""
    n = op.Round(x)
    s = op.Sin(op.Mul(op.Sub(x, n), math.pi))
    odd = op.Equal(op.Abs(op.Mod(n, like(2.0, n), fmod=1)), 1.0)
    return op.Where(odd, op.Neg(s), s)


def _lgamma_right(x: Value) -> Value:
    """lgamma(x) for x >= 0.5."""
    z = op.Sub(x, 1.0)
    series = like(_LANCZOS[0], x)
    for i, c in enumerate(_LANCZOS[1:], start=1):
        series = op.Add(series, op.Div(like(c, x), op.Add(z, float(i))))
    t = op.Add(z, _LANCZOS_G + 0.5)
    # (z + 0.5) * log(t) - t, written to keep large arguments finite
    return op.Add(op.Add(op.Sub(op.Mul(op.Add(z, 0.5), op.Log(t)), t), 0.5 * math.log(2 * math.pi)), op.Log(series))


def _lgamma(x: Value) -> Value:
    left = op.Sub(op.Sub(like(math.log(math.pi), x), op.Log(op.Abs(_sin_pi(x)))), _lgamma_right(op.Sub(1.0, x)))
    right = _lgamma_right(op.Max(x, like(0.5, x)))
    out = op.Where(op.Less(x, 0.5), left, right)
    out = op.Where(op.And(op.LessOrEqual(x, 0.0), op.Equal(x, op.Floor(x))), like(math.inf, x), out)
    return op.Where(op.IsInf(x), like(math.inf, x), out)


def _digamma_large(y: Value) -> Value:
    """digamma(y) for y >= 6: the asymptotic series, error below 1e-11."""
    inv2 = op.Reciprocal(op.Mul(y, y))
    series = op.Mul(inv2, polyval([-1 / 132, 1 / 240, -1 / 252, 1 / 120, -1 / 12], inv2))
    return op.Add(op.Sub(op.Log(y), op.Div(0.5, y)), series)


def _digamma_pos(x: Value) -> Value:
    """digamma(x) for x > 0: digamma(x) = digamma(x + 6) - sum 1/(x + k), k < 6."""
    y = op.Add(x, 6.0)
    out = _digamma_large(y)
    for k in range(6):
        out = op.Sub(out, op.Reciprocal(op.Add(x, float(k))))
    return op.Where(op.Greater(x, 1e6), _digamma_large(op.Max(x, like(6.0, x))), out)


def _digamma(x: Value) -> Value:
    # x < 0: digamma(1 - x) - pi cos(pi x) / sin(pi x), both reduced to [-1, 1] first
    r = op.Sub(x, op.Mul(op.Round(op.Mul(x, 0.5)), 2.0))
    cot = op.Div(op.Mul(op.Cos(op.Mul(r, math.pi)), math.pi), op.Sin(op.Mul(r, math.pi)))
    out = op.Where(op.Less(x, 0.0), op.Sub(_digamma_pos(op.Sub(1.0, x)), cot), _digamma_pos(x))
    out = op.Where(op.Equal(x, 0.0), op.Neg(op.Reciprocal(x)), out)  # torch: -inf at 0, inf at -0
    out = op.Where(op.And(op.Less(x, 0.0), op.Equal(x, op.Floor(x))), like(math.nan, x), out)
    return op.Where(op.Equal(x, like(math.inf, x)), x, out)


aten_lgamma = unary("lgamma", kernel(_lgamma, OPMATH), INT_TO_FLOAT)
aten_digamma = unary("digamma", kernel(_digamma, OPMATH), INT_TO_FLOAT)

@aten_op("aten::mvlgamma")
def aten_mvlgamma(self: TReal, p: int) -> TFloat:
    """mvlgamma(Tensor self, int p) -> Tensor"""
    # torch also checks that every element is > (p - 1) / 2: a check on the data, not done here
    if self.dtype is BOOL:
        raise TypeError("aten::mvlgamma: the input tensor may not be a bool tensor (torch raises too)")
    if p < 1:
        raise ValueError(f"aten::mvlgamma: p must be >= 1, got {p}")

    def fn(x: Value) -> Value:
        total = like(p * (p - 1) / 4 * math.log(math.pi), x)
        for j in range(p):
            total = op.Add(total, _lgamma(op.Sub(x, j / 2)))
        return total

    return run_supported(fn, OPMATH, as_float(self))  # ints: float32, as torch
