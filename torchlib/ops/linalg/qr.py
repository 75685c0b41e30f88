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
from graph_builder.type_constraints import TFloat
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


def _norm(x: Value, mask: np.ndarray) -> Value:
    """The 2-norm over axis -2 of x's entries in `mask`, keepdims, scaled as dnrm2 so that
    huge entries do not overflow: s * sqrt(sum((x / s)²)) with s = max |x|. An inf entry gives
    inf and a NaN entry NaN."""
    size = op.Where(mask, op.Abs(x), op.CastLike(0, x))
    s = reduce("Max", size, [-2], keepdims=1)
    safe = op.Where(op.Equal(s, op.CastLike(0, x)), op.CastLike(1, x), s)
    ratio = op.Where(op.IsInf(size), op.CastLike(1, x), op.Div(size, safe))  # inf / inf would be NaN
    return op.Mul(s, op.Sqrt(reduce("Sum", op.Mul(ratio, ratio), [-2], keepdims=1)))


def _lapy2(x: Value, y: Value) -> Value:
    """sqrt(x² + y²) for y >= 0 as dlapy2 without its NaN checks (the one torch's MKL runs):
    w = max, z = min, both compared with `>`/`<` so that a NaN x gives w = z = y, and
    w sqrt(1 + (z / w)²), or w when z is 0."""
    ax = op.Abs(x)
    w = op.Where(op.Greater(ax, y), ax, y)
    z = op.Where(op.Less(ax, y), ax, y)
    safe = op.Where(op.Equal(w, op.CastLike(0, w)), op.CastLike(1, w), w)
    q = op.Div(z, safe)
    scaled = op.Mul(w, op.Sqrt(op.Add(op.CastLike(1, w), op.Mul(q, q))))
    return op.Where(op.Equal(z, op.CastLike(0, z)), w, scaled)


def _geqrf(a: Value) -> tuple[Value, Value]:
    m, n = a.static_dim(-2), a.static_dim(-1)
    zero, one = op.CastLike(0, a), op.CastLike(1, a)
    taus = []
    for k in range(min(m, n)):
        x = col(a, k, keep=True)  # (..., m, 1)
        alpha = op.Gather(x, [k], axis=-2)  # (..., 1, 1)
        below = rows(m) > k
        xnorm = _norm(x, below)
        norm = _lapy2(alpha, xnorm)
        beta = op.Where(op.GreaterOrEqual(alpha, zero), op.Neg(norm), norm)  # -sign(alpha) norm; a NaN alpha gives +
        trivial = op.Equal(xnorm, zero)
        tau = op.Where(trivial, zero, op.Div(op.Sub(beta, alpha), beta))
        scale = op.Where(trivial, zero, op.Div(one, op.Sub(alpha, beta)))
        v = op.Where(below, op.Mul(x, scale), op.CastLike((rows(m) == k), a))
        w = mm(tr(v), op.Where(rows(m) >= k, a, zero))  # vᵀ A(k:m, :): R's rows above are not read
        update = op.Sub(a, op.Mul(v, op.Mul(tau, w)))
        # H applied to A(k:m, k+1:n) only (elsewhere it is the identity exactly), with tau = 0
        # too: MKL's geqrf does not skip it as reference dlarf does (an inf there gives NaN)
        a = op.Where((rows(m) >= k) & (cols(n) > k), update, a)
        diagonal = op.And(rows(m) == k, cols(n) == k)
        stored = op.And(below, cols(n) == k)
        a = op.Where(diagonal, op.Where(trivial, alpha, beta), op.Where(stored, v, a))
        taus.append(op.Squeeze(tau, [-1]))
    if taus:
        return a, op.Concat(*taus, axis=-1)
    return a, op.ConstantOfShape(op.Concat(op.Shape(a, end=-2), [0], axis=0), value=np.zeros(1, a.known_dtype.numpy))


def _apply_q(a: Value, tau: Value, c: Value | np.ndarray, transpose: bool = False, identity: bool = False) -> Value:
    """Q c (or Qᵀ c) with Q = H_0 ... H_(k-1), the reflectors stored below the diagonal of a
    (..., m, n) and in tau (..., k); c is (..., m, p). H_i is applied as reference LAPACK's
    dlarf (_dlarf) to C(i:m, :), as ormqr does; with `identity` (c is the identity: orgqr
    forming Q, as dorg2r) column i is (1 - tau, -tau v) directly and dlarf covers the columns
    after it. Elsewhere H_i is the identity exactly; leaving those entries alone keeps a NaN or
    inf tau (a huge or NaN input) to the entries LAPACK writes."""
    m = a.static_dim(-2)
    k = tau.static_dim(-1)
    c = op.Expand(c, op.Concat(op.Shape(a, end=-2), [1, 1], axis=0))  # a's batch, with no reflector too
    for i in range(k) if transpose else reversed(range(k)):
        v = op.Where(
            (rows(m) > i),
            col(a, i, keep=True),
            op.CastLike((rows(m) == i), a),
        )
        t = op.Unsqueeze(op.Gather(tau, [i], axis=-1), [-1])  # (..., 1, 1)
        if identity:  # dorg2r: column i is (1 - tau, -tau v) directly, dlarf on the columns after it
            direct = op.Sub(c, op.Mul(v, t))  # c's column i is e_i here
            c = op.Where((rows(m) >= i) & (cols(c.static_dim(-1)) == i), direct, _dlarf(v, t, c, i, i + 1))
        else:
            c = _dlarf(v, t, c, i, 0)
    return c


def _dlarf(v: Value, t: Value, c: Value, i: int, j: int) -> Value:
    """H = I - t v vᵀ applied from the left to C(i:, j:), as reference LAPACK's dlarf (which
    orgqr and ormqr call): nothing when t is 0, and only to the rows up to v's last nonzero and
    the columns up to the last one with a nonzero in those rows. Everywhere else H is the
    identity exactly; the scan matters when t is inf or NaN (a huge or NaN input), where a
    product 0 * t would make NaN of entries LAPACK does not write."""
    m, p = c.static_dim(-2), c.static_dim(-1)
    zero = op.CastLike(0, c)
    last_v = reduce("Max", op.Where(op.Not(op.Equal(v, zero)), rows(m), -1), [-2], keepdims=1)  # (..., 1, 1)
    in_rows = op.And(rows(m) >= i, op.LessOrEqual(rows(m), last_v))  # (..., m, 1)
    nonzero = op.And(op.And(in_rows, cols(p) >= j), op.Not(op.Equal(c, zero)))
    last_c = reduce("Max", op.Where(nonzero, cols(p), -1), [-2, -1], keepdims=1)
    block = op.And(op.And(in_rows, cols(p) >= j), op.LessOrEqual(cols(p), last_c))
    block = op.And(block, op.Not(op.Equal(t, zero)))
    w = mm(tr(v), op.Where(block, c, zero))
    return op.Where(block, op.Sub(c, op.Mul(v, op.Mul(t, w))), c)


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
        return _apply_q(a, tau, op.CastLike(np.eye(m), a), identity=True), triu(a)
    r = triu(op.Slice(a, [0], [k], [-2]))
    if mode == "r":
        return empty(A), r
    return _apply_q(a, tau, op.CastLike(np.eye(m, k), a), identity=True), r


@aten_op("aten::linalg_householder_product")
def aten_linalg_householder_product(input: TFloat, tau: TFloat) -> TFloat:
    """linalg_householder_product(Tensor input, Tensor tau) -> Tensor"""
    m, n = check_matrix("linalg.householder_product", input, "input")
    k = (tau.shape or [None])[-1]
    if n > m or not isinstance(k, int) or k > n:
        raise ValueError(f"linalg.householder_product: needs input (..., m, n) with m >= n and tau (..., k) with "
                         f"static k <= n, got {list(input.shape or [])} and {list(tau.shape or [])}")  # fmt: skip
    return _apply_q(input, tau, op.CastLike(np.eye(m, n), input), identity=True)


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
