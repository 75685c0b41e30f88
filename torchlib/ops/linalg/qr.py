"""Householder QR the LAPACK way: geqrf, linalg_qr, householder_product (orgqr), ormqr.

geqrf is LAPACK's geqr2 step by step (unrolled over the static matrix dimensions; batch
dimensions may be dynamic). Column k gets the reflector of dlarfg: with alpha = A[k, k] and
xnorm = |A[k+1:, k]|, beta = -sign(alpha) hypot(alpha, xnorm), tau = (beta - alpha) / beta and
v = (1, A[k+1:, k] / (alpha - beta)); when xnorm is 0 the reflector is the identity (tau = 0)
and alpha stays. H = I - tau v vᵀ is applied to the trailing columns, R's diagonal gets beta and
v is stored below it. Q is the product H_0 H_1 ... H_(k-1), formed by applying the reflectors to
the identity (orgqr), so Q and R are torch's, signs included, not only up to sign.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import TFloat
from torchlib.ops.linalg._common import (
    check_matrix,
    col,
    cols,
    empty,
    mm,
    reduce,
    rows,
    tr,
    triu,
)
from torchlib.registry import aten_op


def _geqrf(a: Value) -> tuple[Value, Value]:
    m, n = a.shape[-2], a.shape[-1]  # type: ignore[index]
    zero, one = op.CastLike(0, a), op.CastLike(1, a)
    taus = []
    for k in range(min(m, n)):
        x = col(a, k, keep=True)  # (..., m, 1)
        alpha = op.Gather(x, [k], axis=-2)  # (..., 1, 1)
        below = rows(m) > k
        xnorm = op.Sqrt(reduce("Sum", op.Where(below, op.Mul(x, x), zero), [-2], keepdims=1))
        norm = op.Sqrt(op.Add(op.Mul(alpha, alpha), op.Mul(xnorm, xnorm)))
        beta = op.Where(op.Less(alpha, zero), norm, op.Neg(norm))
        trivial = op.Equal(xnorm, zero)
        tau = op.Where(trivial, zero, op.Div(op.Sub(beta, alpha), beta))
        scale = op.Where(trivial, zero, op.Div(one, op.Sub(alpha, beta)))
        v = op.Where(below, op.Mul(x, scale), op.CastLike((rows(m) == k), a))
        update = op.Sub(a, op.Mul(v, op.Mul(tau, mm(tr(v), a))))
        a = op.Where((cols(n) > k), update, a)
        diagonal = op.And(rows(m) == k, cols(n) == k)
        stored = op.And(below, cols(n) == k)
        a = op.Where(diagonal, op.Where(trivial, alpha, beta), op.Where(stored, v, a))
        taus.append(op.Squeeze(tau, [-1]))
    if taus:
        return a, op.Concat(*taus, axis=-1)
    return a, op.ConstantOfShape(op.Concat(op.Shape(a, end=-2), [0], axis=0), value=np.zeros(1, a.dtype.numpy))  # type: ignore[union-attr]


def _apply_q(a: Value, tau: Value, c: Value, transpose: bool = False) -> Value:
    """Q c (or Qᵀ c) with Q = H_0 ... H_(k-1), the reflectors stored below the diagonal of a
    (..., m, n) and in tau (..., k); c is (..., m, p)."""
    m = a.shape[-2]  # type: ignore[index]
    k = tau.shape[-1]  # type: ignore[index]
    c = op.Expand(c, op.Concat(op.Shape(a, end=-2), [1, 1], axis=0))  # a's batch, with no reflector too
    for i in range(k) if transpose else reversed(range(k)):
        v = op.Where(
            (rows(m) > i),
            col(a, i, keep=True),
            op.CastLike((rows(m) == i), a),
        )
        t = op.Unsqueeze(op.Gather(tau, [i], axis=-1), [-1])  # (..., 1, 1)
        c = op.Sub(c, op.Mul(v, op.Mul(t, mm(tr(v), c))))
    return c


@aten_op("aten::geqrf")
def aten_geqrf(self: TFloat) -> tuple[TFloat, TFloat]:
    """geqrf(Tensor self) -> (Tensor a, Tensor tau)"""
    check_matrix("geqrf", self, "self")
    return _geqrf(self)


@aten_op("aten::linalg_qr")
def aten_linalg_qr(A: TFloat, mode: str = "reduced") -> tuple[TFloat, TFloat]:
    """linalg_qr(Tensor A, str mode='reduced') -> (Tensor Q, Tensor R)"""
    m, n = check_matrix("linalg.qr", A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"linalg.qr: mode must be 'reduced', 'complete' or 'r', got {mode!r}")
    k = min(m, n)
    a, tau = _geqrf(A)
    if mode == "complete":
        return _apply_q(a, tau, op.CastLike(np.eye(m), a)), triu(a)
    r = triu(op.Slice(a, [0], [k], [-2]))
    if mode == "r":
        return empty(A), r
    return _apply_q(a, tau, op.CastLike(np.eye(m, k), a)), r


@aten_op("aten::linalg_householder_product")
def aten_linalg_householder_product(input: TFloat, tau: TFloat) -> TFloat:
    """linalg_householder_product(Tensor input, Tensor tau) -> Tensor"""
    m, n = check_matrix("linalg.householder_product", input, "input")
    k = (tau.shape or [None])[-1]
    if n > m or not isinstance(k, int) or k > n:
        raise ValueError(f"linalg.householder_product: needs input (..., m, n) with m >= n and tau (..., k) with "
                         f"static k <= n, got {list(input.shape or [])} and {list(tau.shape or [])}")  # fmt: skip
    return _apply_q(input, tau, op.CastLike(np.eye(m, n), input))


@aten_op("aten::ormqr")
def aten_ormqr(
    self: TFloat,
    input2: TFloat,
    input3: TFloat,
    left: bool = True,
    transpose: bool = False,
) -> TFloat:
    """ormqr(Tensor self, Tensor input2, Tensor input3, bool left=True, bool transpose=False) -> Tensor"""
    check_matrix("ormqr", self, "self")
    check_matrix("ormqr", input3, "input3")
    if left:
        return _apply_q(self, input2, input3, transpose)
    return tr(_apply_q(self, input2, tr(input3), not transpose))
