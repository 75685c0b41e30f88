"""The gamma family: lgamma, digamma, polygamma, mvlgamma, the Hurwitz zeta function and the
regularized incomplete gamma functions (igamma, igammac).

They compute in the input's floating dtype (half types in float32, as torch), with the series
and recurrences of torch's CPU kernels (aten/src/ATen/native/Math.h, from Cephes).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal
from graph_builder.types import BOOL, DOUBLE, FLOAT, INT64
from torchlib.ops import _cephes as cephes
from torchlib.ops._cephes import polyval
from torchlib.ops._helpers import n_outputs
from torchlib.ops._kernels import OPMATH, as_float, kernel, like, run_supported
from torchlib.ops._unary import unary
from torchlib.ops.special._common import float32_or_64, loop_builder
from torchlib.promotion import INT_TO_FLOAT, elementwise
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


# -- Hurwitz zeta and polygamma (torch's Cephes zeta, computed in double as torch's CPU kernel) ----

# Euler-Maclaurin coefficients (2k)! / B_2k
_ZETA_A = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10, -2.950130727918164224e12,
           1.1646782814350067249e14, -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18]  # fmt: skip
_MACHEP = 1.11022302462515654042e-16


def _zeta(x: Value, q: Value) -> Value:
    """zeta(x, q) = sum over k >= 0 of (k + q)^-x, in double: torch's loop sums terms (at least
    9, until the term index passes 9, or until a term is below MACHEP of the sum: one ONNX Loop,
    masked per element), then adds the Euler-Maclaurin tail (12 terms, unrolled, masked)."""
    # torch returns before its loop where x <= 1 or q is a pole (q <= 0 whole) or q <= 0 meets a
    # fractional x; those elements sum from q = 2 instead (their result is replaced below), so
    # that q = -finfo.max (where a + 1 == a) cannot keep the loop running
    q_in = q
    q_pole = op.And(op.LessOrEqual(q, 0.0), op.Equal(q, op.Floor(q)))
    q_nan = op.And(op.LessOrEqual(q, 0.0), op.Not(op.Equal(x, op.Floor(x))))
    q = op.Where(op.Or(op.LessOrEqual(x, 1.0), op.Or(q_pole, q_nan)), like(2.0, q), q)
    s0 = op.Pow(q, op.Neg(x))
    # the direct sum: each element runs while (i < 9 or a <= 9) and its terms are not negligible
    body = loop_builder("zeta")
    body.input("i", INT64, [])
    body.input("cond", BOOL, [])
    a = body.input("a", q.known_dtype, q.shape)
    s = body.input("s", q.known_dtype, q.shape)
    b = body.input("b", q.known_dtype, q.shape)
    count = body.input("count", q.known_dtype, q.shape)
    early = body.input("early", BOOL, q.shape)
    with body:
        active = op.And(op.Not(early), op.Or(op.Less(count, 9.0), op.LessOrEqual(a, 9.0)))
        a1 = op.Add(a, 1.0)
        b1 = op.Pow(a1, op.Neg(x))
        s1 = op.Add(s, b1)
        small = op.And(op.Less(op.Mul(s1, -_MACHEP), b1), op.Less(b1, op.Mul(s1, _MACHEP)))
        new = [op.Where(active, v1, v) for v1, v in ((a1, a), (s1, s), (b1, b), (op.Add(count, 1.0), count))]
        new_early = op.Or(early, op.And(active, small))
        still = op.And(op.Not(new_early), op.Or(op.Less(new[3], 9.0), op.LessOrEqual(new[0], 9.0)))
        body.output(op.Cast(op.ReduceMax(op.Cast(op.Reshape(still, [-1]), to=INT64.onnx), keepdims=0), to=BOOL.onnx))
        for v in (*new, new_early):
            body.output(v)
    # at most max(9, 10 - min(q)) steps; NaN and inf q take none beyond the 9th
    finite_q = op.Where(op.IsInf(q), like(0.0, q), op.Where(op.IsNaN(q), like(0.0, q), q))
    lowest = op.ReduceMin(op.Concat(op.Reshape(finite_q, [-1]), like(np.zeros(1), q), axis=0), keepdims=0)
    trips = op.Cast(op.Max(op.Sub(10.0, op.Floor(op.Max(lowest, like(-2.0**62, q)))), like(9.0, q)), to=INT64.onnx)
    zeros = op.Expand(like(0.0, q), op.Shape(q))
    a, s_sum, b, _, early = n_outputs(op.Loop(trips, np.array(True), q, s0, zeros, zeros, op.Cast(zeros, to=BOOL.onnx), body=body), 5)
    # the Euler-Maclaurin tail
    w = a
    s = op.Sub(op.Add(s_sum, op.Div(op.Mul(b, w), op.Sub(x, 1.0))), op.Mul(b, 0.5))
    fac, k, done = like(1.0, q), like(0.0, q), op.Cast(zeros, to=BOOL.onnx)
    for coef in _ZETA_A:
        fac = op.Mul(fac, op.Add(x, k))
        b = op.Div(b, w)
        t = op.Div(op.Mul(fac, b), coef)
        s_new = op.Add(s, t)
        s = op.Where(done, s, s_new)
        done = op.Or(done, op.Less(op.Abs(op.Div(t, s_new)), _MACHEP))
        k = op.Add(k, 1.0)
        fac = op.Mul(fac, op.Add(x, k))
        b = op.Div(b, w)
        k = op.Add(k, 1.0)
    out = op.Where(early, s_sum, s)
    # the domain: inf at x = 1, NaN below; q <= 0: inf at the integers, NaN unless x is whole
    out = op.Where(q_nan, like(math.nan, q_in), out)
    out = op.Where(q_pole, like(math.inf, q_in), out)
    out = op.Where(op.Less(x, 1.0), like(math.nan, q), out)
    return op.Where(op.Equal(x, 1.0), like(math.inf, q), out)


def _trigamma(x: Value, rnd: Callable[[Value], Value]) -> Value:
    """torch's trigamma: the reflection below 1/2 (with sin(pi x) as torch writes it), six steps
    of the recurrence, then the asymptotic series. `rnd` rounds to the dtype torch computes in
    (float32 computes in double, rounded where torch's float32 kernel rounds)."""
    pi = rnd(like(math.pi, x))
    reflect = op.Less(x, 0.5)
    sin_pi_x = rnd(cephes.sin(rnd(op.Mul(pi, x))))
    result = op.Where(reflect, op.Neg(rnd(op.Div(rnd(op.Mul(pi, pi)), rnd(op.Mul(sin_pi_x, sin_pi_x))))), like(0.0, x))
    x = op.Where(reflect, rnd(op.Sub(1.0, x)), x)
    for _ in range(6):
        result = rnd(op.Add(result, rnd(op.Reciprocal(rnd(op.Mul(x, x))))))
        x = rnd(op.Add(x, 1.0))
    ixx = rnd(op.Reciprocal(rnd(op.Mul(x, x))))
    series = rnd(op.Mul(ixx, rnd(op.Sub(rnd(like(1 / 30, x)), rnd(op.Mul(ixx, rnd(like(1 / 42, x))))))))
    series = rnd(op.Mul(ixx, rnd(op.Sub(rnd(like(1 / 6, x)), series))))
    series = rnd(op.Add(rnd(op.Add(rnd(op.Reciprocal(rnd(op.Mul(x, 2.0)))), 1.0)), series))
    result = rnd(op.Add(result, rnd(op.Div(series, x))))
    return op.Where(reflect, op.Neg(result), result)


def _in_double(fn: Callable[..., Value], x: Value, *args: Any) -> Value:
    """fn(x in double, *args, rnd) cast back to x's dtype, where rnd rounds to x's dtype (or to
    float32 for the half types, which torch computes in float32)."""
    target = x.dtype if x.dtype in (FLOAT, DOUBLE) else FLOAT
    if x.dtype is DOUBLE:
        return fn(x, *args, lambda v: v)
    out = fn(op.Cast(x, to=DOUBLE.onnx), *args, lambda v: op.Cast(op.Cast(v, to=target.onnx), to=DOUBLE.onnx))
    return op.Cast(out, to=x.known_dtype.onnx)


@aten_op("aten::polygamma")
@elementwise("self", kind=INT_TO_FLOAT)
def aten_polygamma(n: int, self: TReal) -> TFloat:
    """polygamma(int n, Tensor self) -> Tensor"""
    if n < 0:
        raise ValueError(f"aten::polygamma: n must be >= 0, got {n} (torch raises too)")
    if n == 0:
        return run_supported(_digamma, OPMATH, self)
    if n == 1:
        return _in_double(_trigamma, self)
    # (-1)^(n+1) n! zeta(n + 1, x); zeta in double (torch's CPU accumulates in double too)
    factor = (1.0 if n % 2 else -1.0) * math.exp(math.lgamma(n + 1))

    def fn(x: Value, rnd: Callable[[Value], Value]) -> Value:
        return rnd(op.Mul(rnd(like(factor, x)), rnd(_zeta(like(float(n + 1), x), x))))

    return _in_double(fn, self)


@aten_op("aten::special_zeta", "aten::special_zeta.self_scalar", "aten::special_zeta.other_scalar")
@elementwise("self", "other", kind=INT_TO_FLOAT)
def aten_special_zeta(self: TReal, other: TReal) -> TFloat:
    """special_zeta(Tensor self, Tensor other) -> Tensor"""
    ref = self if isinstance(self, Value) else other
    float32_or_64("special_zeta", ref)
    x, q = like(self, ref), like(other, ref)
    shape = op.Shape(op.Add(x, q))
    x, q = op.Expand(x, shape), op.Expand(q, shape)
    if ref.dtype is DOUBLE:
        return _zeta(x, q)
    return op.Cast(_zeta(op.Cast(x, to=DOUBLE.onnx), op.Cast(q, to=DOUBLE.onnx)), to=ref.known_dtype.onnx)
