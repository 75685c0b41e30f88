"""The error function family: erfc, erfinv, ndtr, ndtri, log_ndtr, erfcx.

They compute in double for every dtype (onnxruntime's Erf has no double kernel): erf and erfc
are Cephes' rational approximations (torchlib/ops/_cephes.py); erfinv and ndtri start from
Giles' single-precision approximation and refine it by Newton steps on the double erf.
"""

from __future__ import annotations

import math

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal
from graph_builder.types import BFLOAT16, FLOAT16
from torchlib.ops import _cephes as cephes
from torchlib.ops import elementwise as ew
from torchlib.ops._cephes import polyval
from torchlib.ops._kernels import kernel, like, run_supported
from torchlib.ops._unary import unary
from torchlib.ops.special._common import D64, float32_or_64, rounding_to
from torchlib.promotion import INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op

# Giles, "Approximating the erfinv function" (GPU Computing Gems), single precision, refined
# below by Newton steps on the double erf (erfc near 1, where 1 - y is exact).
_ERFINV_CENTRAL = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]  # fmt: skip
_ERFINV_TAIL = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]  # fmt: skip


def _erfinv_abs(a: Value, c: Value) -> Value:
    """x >= 0 with erf(x) = a and erfc(x) = c = 1 - a, for 0 <= a < 1; c must be exact where
    a > 0.5 (the tail is solved from it)."""
    w = op.Neg(op.Log(op.Mul(c, op.Add(1.0, a))))
    central = polyval(_ERFINV_CENTRAL, op.Sub(w, 2.5))
    tail = polyval(_ERFINV_TAIL, op.Sub(op.Sqrt(op.Max(w, like(5.0, w))), 3.0))
    x = op.Mul(op.Where(op.Less(w, 5.0), central, tail), a)
    # beyond float32's range (w > 16): the asymptotic erfc(x) ~ exp(-x^2) / (x sqrt(pi))
    log_c = op.Neg(op.Log(op.Max(c, like(1e-300, c))))
    far = op.Sqrt(op.Sub(log_c, op.Mul(op.Log(op.Mul(log_c, math.pi)), 0.5)))
    x = op.Where(op.Greater(w, 16.0), far, x)
    near_one = op.Greater(a, 0.5)
    log_c = op.Log(c)
    for _ in range(3):
        # near 1: Newton on log(erfc(x)) = log(1 - a), nearly linear in the tail
        xs = op.Min(x, like(1.0, x))
        small = op.Sub(1.0, cephes.erf_small(xs))
        erfcx = op.Where(op.Less(x, 1.0), op.Mul(op.Exp(op.Mul(xs, xs)), small), cephes.erfcx_big(x))
        log_erfc = op.Where(op.Less(x, 1.0), op.Log(small), op.Sub(op.Log(erfcx), op.Mul(x, x)))
        tail_step = op.Mul(op.Sub(log_erfc, log_c), op.Mul(erfcx, math.sqrt(math.pi) / 2))
        central_step = op.Div(op.Sub(a, cephes.erf(x)), op.Mul(op.Exp(op.Neg(op.Mul(x, x))), cephes.TWO_OVER_SQRT_PI))
        x = op.Add(x, op.Where(near_one, tail_step, central_step))
    return x


def _erfinv(y: Value) -> Value:
    a = op.Abs(y)
    x = _erfinv_abs(a, op.Sub(1.0, a))  # 1 - a is exact for a >= 0.5
    x = op.Where(op.Equal(a, 1.0), like(math.inf, a), x)
    x = op.Where(op.Greater(a, 1.0), like(math.nan, a), x)
    return op.Where(op.Less(y, 0), op.Neg(x), x)


def _ndtri(p: Value) -> Value:
    """ndtri(p) = -sqrt(2) erfcinv(2p): solved from c = 2 min(p, 1 - p), exact, so that the
    tails keep full precision."""
    lower = op.Less(p, 0.5)
    c = op.Where(lower, op.Mul(p, 2.0), op.Mul(op.Sub(1.0, p), 2.0))
    x = _erfinv_abs(op.Sub(1.0, c), c)
    x = op.Where(op.Equal(c, 0.0), like(math.inf, c), x)
    x = op.Mul(op.Where(lower, op.Neg(x), x), math.sqrt(2))
    return op.Where(op.Or(op.Less(p, 0.0), op.Greater(p, 1.0)), like(math.nan, p), x)


def _ndtr(x: Value) -> Value:
    return op.Mul(cephes.erfc(op.Mul(x, -math.sqrt(0.5))), 0.5)


def _log_ndtr(x: Value) -> Value:
    # x < -1: log(erfc(z) / 2) with z = -x/sqrt(2) = log(erfcx(z) / 2) - z^2, no underflow
    z = op.Mul(x, -math.sqrt(0.5))
    left = op.Sub(op.Log(op.Mul(cephes.erfcx(op.Max(z, like(0.0, z))), 0.5)), op.Mul(z, z))
    # x > 0: log1p(-ndtr(-x)), accurate when ndtr(x) is close to 1
    right = ew.log1p(op.Neg(_ndtr(op.Neg(x))))
    middle = op.Log(_ndtr(x))
    return op.Where(op.Less(x, -1.0), left, op.Where(op.Greater(x, 0.0), right, middle))


@aten_op("aten::special_ndtr")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_ndtr(self: TReal) -> TFloat:
    """special_ndtr(Tensor self) -> Tensor"""
    if self.dtype not in (FLOAT16, BFLOAT16):
        return run_supported(_ndtr, D64, self)
    r = rounding_to(self.dtype)  # torch: (1 + erf(x / sqrt(2))) / 2, step by step in the half type
    return run_supported(lambda x: r(op.Mul(r(op.Add(r(cephes.erf(r(op.Mul(x, math.sqrt(0.5))))), 1.0)), 0.5)), D64, self)


aten_erfc = unary("erfc", kernel(cephes.erfc, D64), INT_TO_FLOAT)
aten_erfinv = unary("erfinv", kernel(_erfinv, D64), INT_TO_FLOAT)


@aten_op("aten::special_log_ndtr")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_log_ndtr(self: TFloat) -> TFloat:
    """special_log_ndtr(Tensor self) -> Tensor"""
    float32_or_64("special_log_ndtr", self)
    return run_supported(_log_ndtr, D64, self)


@aten_op("aten::special_ndtri")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_ndtri(self: TFloat) -> TFloat:
    """special_ndtri(Tensor self) -> Tensor"""
    float32_or_64("special_ndtri", self)
    return run_supported(_ndtri, D64, self)


@aten_op("aten::special_erfcx")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_special_erfcx(self: TFloat) -> TFloat:
    """special_erfcx(Tensor self) -> Tensor"""
    float32_or_64("special_erfcx", self)
    return run_supported(cephes.erfcx, D64, self)
