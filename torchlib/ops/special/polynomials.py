"""Orthogonal polynomials of tensor degree: Chebyshev T, U, V, W and their shifted forms,
Hermite H and He, Laguerre L and Legendre P.

torch's kernels (aten/src/ATen/native/Math.h) take the degree n per element: special values
first (n < 0 gives 0, x = +-1, ...), a closed form in acos(x) for |x| < 1 and large n
(Chebyshev), else the three-term recurrence run n - 1 times. Here the recurrence is one ONNX
`Loop` for the whole tensor, as many steps as the largest degree that needs it, each element
masked to its own degree and the loop stopped once every element is done or NaN (as torch's
loop stops at NaN). The same operations in the same order and dtype as torch, so results agree
to the last bits; a degree that is NaN, infinite or beyond int64 counts as negative (0), and
Hermite degrees above 128 (float32) or 512 (float64) give NaN, as in torch. The running time
grows with the largest degree, as torch's.
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
from torchlib.ops._helpers import n_outputs
from torchlib.ops._kernels import like
from torchlib.ops.special._common import float32_or_64, loop_builder
from torchlib.promotion import INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op

Step = Callable[..., Value]  # (k, p, q, rnd, *captures) -> the next value
Round = Callable[[Value], Value]  # rounds an intermediate to the dtype torch computes in


def _degree(n: Value) -> Value:
    """torch's static_cast<int64_t>(n), as a whole number in n's dtype: truncated; NaN, inf and
    values beyond int64 (undefined in C++, INT64_MIN on x86) become -1."""
    invalid = op.Or(op.IsNaN(n), op.GreaterOrEqual(op.Abs(n), 2.0**63))
    return op.Where(invalid, like(-1.0, n), op.Where(op.Less(n, 0.0), op.Ceil(n), op.Floor(n)))


def _even(n: Value) -> Value:
    return op.Equal(op.Mod(n, like(2.0, n), fmod=1), 0.0)


def _recurrence(n: Value, needed: Value, q0: Value, step: Step, k_of_j: Callable[[Value], Value], rnd: Round,
                *captures: Value) -> Value:  # fmt: skip
    """q after torch's loop `p, q = 1, q0; for j in 1 .. n-1: p, q = q, step(k(j), p, q, rnd, *captures)`
    for the elements where `needed` (others: q0). n, needed, q0 and captures share one shape."""
    steps = op.Where(needed, op.Min(op.Sub(n, 1.0), like(2.0**62, n)), like(0.0, n))
    trips = op.Cast(op.ReduceMax(op.Concat(op.Reshape(steps, [-1]), like(np.zeros(1), steps), axis=0), keepdims=0), to=INT64.onnx)
    body = loop_builder("recurrence")
    i = body.input("i", INT64, [])
    body.input("cond", BOOL, [])
    p = body.input("p", q0.known_dtype, q0.shape)
    q = body.input("q", q0.known_dtype, q0.shape)
    with body:
        j = op.Add(op.Cast(i, to=q0.known_dtype.onnx), 1.0)
        active = op.LessOrEqual(j, steps)
        r = rnd(step(k_of_j(j), p, q, rnd, *captures))
        new_p = op.Where(active, q, p)
        new_q = op.Where(active, r, q)
        # go on while an element has steps left and is not NaN (torch's loop stops at NaN)
        going = op.And(op.Less(j, steps), op.Not(op.IsNaN(new_q)))
        body.output(op.Cast(op.ReduceMax(op.Cast(op.Reshape(going, [-1]), to=INT64.onnx), keepdims=0), to=BOOL.onnx))
        body.output(new_p)
        body.output(new_q)
    _, q_final = n_outputs(op.Loop(trips, np.array(True), op.Expand(like(1.0, q0), op.Shape(q0)), q0, body=body), 2)
    return q_final


def _chebyshev(x: Value, n: Value, rnd: Round, kind: str, shifted: bool, closed_from: int) -> Value:
    """Chebyshev polynomials of the first to fourth kind (T, U, V, W) at x, or at 2x - 1."""
    y = rnd(op.Sub(op.Add(x, x), 1.0)) if shifted else x
    two_n_1 = op.Add(op.Add(n, n), 1.0)
    sign_n = op.Where(_even(n), like(1.0, n), like(-1.0, n))
    # the values at y = 1 and y = -1 (x = 1 and x = 0 when shifted)
    at_one = {"t": like(1.0, x), "u": op.Add(n, 1.0), "v": like(1.0, x), "w": two_n_1}[kind]
    at_minus_one = op.Mul(sign_n, {"t": like(1.0, x), "u": op.Add(n, 1.0), "v": two_n_1, "w": like(1.0, x)}[kind])
    # the closed forms in theta = acos(y) for |y| < 1
    theta = rnd(cephes.acos(op.Max(op.Min(y, like(1.0, y)), like(-1.0, y))))
    if kind == "t":
        closed = op.Cos(rnd(op.Mul(n, theta)))
    elif kind == "u":
        n1 = rnd(op.Add(n, 1.0))
        sin_t = rnd(op.Sin(theta))
        degenerate = op.Div(rnd(op.Mul(n1, rnd(op.Cos(rnd(op.Mul(n1, theta)))))), y)
        closed = op.Where(op.Equal(sin_t, 0.0), degenerate, op.Div(rnd(op.Sin(rnd(op.Mul(n1, theta)))), sin_t))
    else:
        half = op.Div(theta, 2.0)
        angle = rnd(op.Mul(rnd(op.Add(n, 0.5)), theta))
        if kind == "v":
            degenerate, base = op.Equal(rnd(op.Sin(half)), 1.0), op.Mul(sign_n, two_n_1)
            value = op.Div(rnd(op.Cos(angle)), rnd(op.Cos(half)))
        else:
            degenerate, base = op.Equal(rnd(op.Cos(half)), 1.0), sign_n
            if not shifted:
                base = op.Where(op.Greater(y, 0.0), two_n_1, sign_n)
            value = op.Div(rnd(op.Sin(angle)), rnd(op.Sin(half)))
        closed = op.Where(degenerate, base, value)
    use_closed = op.And(op.Greater(n, float(closed_from)), op.Less(op.Abs(y), 1.0))
    two_y = op.Add(y, y)
    q0 = {"t": y, "u": two_y, "v": rnd(op.Sub(two_y, 1.0)), "w": rnd(op.Add(two_y, 1.0))}[kind]
    is_one, is_minus_one = op.Equal(x, 1.0), op.Equal(x, 0.0 if shifted else -1.0)  # torch tests x itself
    special = op.Or(op.Or(is_one, is_minus_one), op.Less(n, 0.0))
    needed = op.And(op.And(op.Not(special), op.Not(use_closed)), op.GreaterOrEqual(n, 2.0))
    rec = _recurrence(n, needed, q0, lambda k, p, q, rnd, two_y: op.Sub(op.Mul(two_y, q), p), lambda j: j, rnd, two_y)
    out = op.Where(op.Equal(n, 0.0), like(1.0, x), rec)
    out = op.Where(use_closed, closed, out)
    out = op.Where(is_minus_one, at_minus_one, out)
    out = op.Where(is_one, at_one, out)
    return op.Where(op.Less(n, 0.0), like(0.0, x), out)


def _hermite(x: Value, n: Value, rnd: Round, physicists: bool) -> Value:
    """Hermite H (physicists: r = 2x q - 2k p) or He (r = x q - k p); NaN above torch's limit
    (degree 128 in float32, 512 in float64)."""
    limit = 512 if rnd is _exact else 128
    needed = op.And(op.GreaterOrEqual(n, 2.0), op.LessOrEqual(n, float(limit)))
    if physicists:
        two_x = op.Add(x, x)
        rec = _recurrence(n, needed, two_x, lambda k, p, q, rnd, two_x: op.Sub(op.Mul(two_x, q), op.Mul(k, p)),
                          lambda j: op.Add(j, j), rnd, two_x)  # fmt: skip
    else:
        rec = _recurrence(n, needed, x, lambda k, p, q, rnd, x: op.Sub(op.Mul(x, q), op.Mul(k, p)), lambda j: j, rnd, x)
    out = op.Where(op.Greater(n, float(limit)), like(math.nan, x), rec)
    out = op.Where(op.Equal(n, 0.0), like(1.0, x), out)
    return op.Where(op.Less(n, 0.0), like(0.0, x), out)


def _laguerre(x: Value, n: Value, rnd: Round) -> Value:
    one_minus_x = rnd(op.Sub(1.0, x))

    def step(k: Value, p: Value, q: Value, rnd: Round, one_minus_x: Value) -> Value:
        numerator = rnd(op.Sub(op.Mul(rnd(op.Add(op.Add(k, k), one_minus_x)), q), op.Mul(k, p)))
        return op.Div(numerator, op.Add(k, 1.0))

    needed = op.And(op.GreaterOrEqual(n, 2.0), op.Not(op.Equal(x, 0.0)))
    rec = _recurrence(n, needed, one_minus_x, step, lambda j: j, rnd, one_minus_x)
    out = op.Where(op.Or(op.Equal(n, 0.0), op.Equal(x, 0.0)), like(1.0, x), rec)
    return op.Where(op.Less(n, 0.0), like(0.0, x), out)


def _legendre(x: Value, n: Value, rnd: Round) -> Value:
    def step(k: Value, p: Value, q: Value, rnd: Round, x: Value) -> Value:
        numerator = rnd(op.Sub(op.Mul(rnd(op.Mul(op.Add(op.Add(k, k), 1.0), x)), q), op.Mul(k, p)))
        return op.Div(numerator, op.Add(k, 1.0))

    at_one = op.Equal(op.Abs(x), 1.0)
    rec = _recurrence(n, op.And(op.GreaterOrEqual(n, 2.0), op.Not(at_one)), x, step, lambda j: j, rnd, x)
    out = op.Where(op.Equal(n, 0.0), like(1.0, x), rec)
    signed_one = op.Where(op.Or(op.Greater(x, 0.0), _even(n)), like(1.0, x), like(-1.0, x))
    out = op.Where(at_one, signed_one, out)
    return op.Where(op.Less(n, 0.0), like(0.0, x), out)


def _exact(v: Value) -> Value:
    return v


def _to_float32(v: Value) -> Value:
    return op.Cast(op.Cast(v, to=FLOAT.onnx), to=DOUBLE.onnx)


def _register(name: str, fn: Callable[..., Value], **options: Any) -> Callable[..., Any]:
    """aten::name(Tensor x, Tensor n) and its .x_scalar and .n_scalar overloads: float32 and
    float64 (integer and bool inputs promote to float32, as in torch).

    float32 computes in double, rounded to float32 where torch's float32 kernel rounds: after
    each step of a recurrence (torch's kernels are compiled with fused multiply-add, one
    rounding where separate float32 Mul and Sub would round twice, which a long recurrence
    amplifies), and after each libm call of a closed form (glibc's float32 acos, sin and cos
    are correctly rounded, onnxruntime's float32 kernels not always). Overflow to inf and the
    NaN that follows it happen at the same step as in torch."""

    def aten_fn(x: TReal, n: TReal) -> TFloat:
        ref = x if isinstance(x, Value) else n
        float32_or_64(name, ref)
        x, n = like(x, ref), like(n, ref)
        shape = op.Shape(op.Add(x, n))
        x, n = op.Expand(x, shape), op.Expand(n, shape)
        if ref.dtype is DOUBLE:
            return fn(x, _degree(n), _exact, **options)
        x, n = op.Cast(x, to=DOUBLE.onnx), op.Cast(n, to=DOUBLE.onnx)
        return op.Cast(fn(x, _degree(n), _to_float32, **options), to=FLOAT.onnx)

    aten_fn.__name__ = aten_fn.__qualname__ = f"aten_{name}"
    aten_fn.__doc__ = f"{name}(Tensor x, Tensor n) -> Tensor"
    return aten_op(f"aten::{name}", f"aten::{name}.x_scalar", f"aten::{name}.n_scalar")(
        elementwise("x", "n", kind=INT_TO_FLOAT)(aten_fn)
    )


aten_special_chebyshev_polynomial_t = _register("special_chebyshev_polynomial_t", _chebyshev, kind="t", shifted=False, closed_from=6)
aten_special_chebyshev_polynomial_u = _register("special_chebyshev_polynomial_u", _chebyshev, kind="u", shifted=False, closed_from=8)
aten_special_chebyshev_polynomial_v = _register("special_chebyshev_polynomial_v", _chebyshev, kind="v", shifted=False, closed_from=8)
aten_special_chebyshev_polynomial_w = _register("special_chebyshev_polynomial_w", _chebyshev, kind="w", shifted=False, closed_from=8)
aten_special_shifted_chebyshev_polynomial_t = _register("special_shifted_chebyshev_polynomial_t", _chebyshev, kind="t", shifted=True, closed_from=6)
aten_special_shifted_chebyshev_polynomial_u = _register("special_shifted_chebyshev_polynomial_u", _chebyshev, kind="u", shifted=True, closed_from=6)
aten_special_shifted_chebyshev_polynomial_v = _register("special_shifted_chebyshev_polynomial_v", _chebyshev, kind="v", shifted=True, closed_from=6)
aten_special_shifted_chebyshev_polynomial_w = _register("special_shifted_chebyshev_polynomial_w", _chebyshev, kind="w", shifted=True, closed_from=4)
aten_special_hermite_polynomial_h = _register("special_hermite_polynomial_h", _hermite, physicists=True)
aten_special_hermite_polynomial_he = _register("special_hermite_polynomial_he", _hermite, physicists=False)
aten_special_laguerre_polynomial_l = _register("special_laguerre_polynomial_l", _laguerre)
aten_special_legendre_polynomial_p = _register("special_legendre_polynomial_p", _legendre)
