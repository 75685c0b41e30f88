"""linalg_lstsq through the one-sided Jacobi SVD (spectral._svd, in float64), and gels through
Householder QR as LAPACK's gels (qr._geqrf, in float64).

Every SVD driver's solution is the minimum-norm least-squares solution V·diag(1/s)·Uᵀ·B over the
singular values s > rcond·max(s) (rcond: given, else eps(dtype)·max(m, n)): what gelsd and
gelss compute, and for full-rank inputs what gelsy computes too. gelsy decides the rank from a
pivoted QR instead of the singular values: for inputs whose rank is not clear-cut at rcond the
two may disagree. gels assumes full rank and solves with the QR (or the QR of Aᵀ when m < n),
so that a matrix of huge and ordinary entries gives LAPACK's solution, which an SVD of
condition number 1e308 cannot resolve. The outputs follow torch:
residuals (the squared residual norms of each column) only for m > n and drivers other than
gelsy, rank for all but gels, singular values for gelsd and gelss; the others are empty.
torch returns empty residuals for gelsd/gelss when a matrix is rank-deficient (an output shape
that depends on the data): here they are always computed.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops.linalg._common import check_matrix, mm, reduce, substitute, tr
from torchlib.ops.linalg.qr import _apply_q, _geqrf
from torchlib.ops.linalg.spectral import _svd
from torchlib.registry import aten_op

_DRIVERS = ("gelsy", "gelsd", "gelss", "gels")


def _empty(dtype: types.DType) -> Value:
    return op.Constant(value=np.zeros(0, dtype.numpy))


def _gels(a: Value, b: Value) -> tuple[Value, Value | None]:
    """(X, residuals or None) as LAPACK's gels (A and B scaled first as it does, see
    _gels_scale; X scaled back): for m >= n the QR of A, X = R⁻¹ (Qᵀ B)[:n] and
    the residuals |(Qᵀ B)[n:]|² (torch reads them from those rows); for m < n the QR of Aᵀ
    (A = Rᵀ Qᵀ), X = Q [R⁻ᵀ B; 0], the minimum-norm solution. Full rank is assumed, as gels
    does (a zero diagonal of R divides by zero)."""
    m, n = a.static_dim(-2), a.static_dim(-1)
    a_scale, b_scale = _gels_scale(a), _gels_scale(b)
    a, b = op.Mul(a, a_scale), op.Mul(b, b_scale)
    if m >= n:
        qr, tau = _geqrf(a)
        c = _apply_q(qr, tau, b, transpose=True)  # (..., m, p)
        x = substitute(op.Slice(qr, [0], [n], [-2]), op.Slice(c, [0], [n], [-2]), upper=True)
        x = op.Div(op.Mul(x, a_scale), b_scale)
        if m == n:
            return x, None
        rest = op.Slice(c, [n], [m], [-2])  # gels scales back the solution rows only: these stay in B's scale
        return x, reduce("Sum", op.Mul(rest, rest), [-2], keepdims=0)
    qr, tau = _geqrf(tr(a))  # (..., n, m)
    r = op.Slice(qr, [0], [m], [-2])  # (..., m, m), upper
    y = substitute(tr(r), b, upper=False)  # Rᵀ Y = B
    padded = op.Concat(y, op.ConstantOfShape(op.Concat(op.Shape(y, end=-2), [n - m], op.Shape(y, start=-1), axis=0),
                                             value=np.zeros(1, np.float64)), axis=-2)  # fmt: skip
    return op.Div(op.Mul(_apply_q(qr, tau, padded), a_scale), b_scale), None


_SMALL = float(np.finfo(np.float64).tiny / (2 * np.finfo(np.float64).eps))  # dlamch('S') / dlamch('P')
_BIG = 1.0 / _SMALL


def _gels_scale(x: Value) -> Value:
    """gels's scaling of a float64 matrix (..., 1, 1): to max |x| = 1/smlnum when it is larger,
    to smlnum when it is smaller but not 0 (smlnum = underflow / precision), else 1."""
    size = reduce("Max", op.Abs(x), [-2, -1], keepdims=1)
    big = op.Greater(size, np.array(_BIG))
    small = op.And(op.Greater(size, np.array(0.0)), op.Less(size, np.array(_SMALL)))
    safe = op.Where(op.Or(big, small), size, np.array(1.0))
    return op.Where(big, op.Div(np.array(_BIG), safe), op.Where(small, op.Div(np.array(_SMALL), safe), np.array(1.0)))


def _lstsq_empty(a: Value, rhs: Value, vector: bool, driver: str) -> tuple[Value, Value, Value, Value]:
    """torch's outputs for an m x n A with m or n 0: the zero solution (..., n, p); residuals
    for m > n as torch gives them (zeros for gels, B's squared column norms for gelsd/gelss,
    empty for gelsy and when m <= n); rank 0 (empty for gels); gelsd/gelss's singular values
    (..., 0)."""
    m, n = a.static_dim(-2), a.static_dim(-1)
    ones = [op.ConstantOfShape(op.Shape(x, end=-2), value=np.ones(1, np.int64)) for x in (a, rhs)]
    batch = op.Shape(op.Add(*ones))  # the batch shapes broadcast
    p = op.Shape(rhs, start=-1)
    zeros = np.zeros(1, a.known_dtype.numpy)
    solution = op.ConstantOfShape(op.Concat(batch, [n], p, axis=0), value=zeros)
    if vector:
        solution = op.Squeeze(solution, [-1])
    if m > n and driver in ("gelsd", "gelss"):
        residuals = reduce("Sum", op.Mul(rhs, rhs), [-2], keepdims=0)
    elif m > n and driver == "gels":
        residuals = op.ConstantOfShape(op.Concat(batch, p, axis=0), value=zeros)
    else:
        residuals = _empty(a.known_dtype)
    rank = _empty(types.INT64) if driver == "gels" else op.ConstantOfShape(batch, value=np.zeros(1, np.int64))
    if driver in ("gelsd", "gelss"):
        singular_values = op.ConstantOfShape(op.Concat(batch, [0], axis=0), value=zeros)
    else:  # empty, a value of its own (a graph output cannot repeat the residuals' constant)
        singular_values = op.Slice(op.Reshape(solution, [-1]), [0], [0])
    return solution, residuals, rank, singular_values


@aten_op("aten::linalg_lstsq")
def aten_linalg_lstsq(
    self: TFloat, b: TFloat, rcond: float | None = None, *, driver: str | None = None
) -> tuple[TFloat, TFloat, TInt, TFloat]:
    """linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None) -> (Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)"""
    driver = driver or "gelsy"
    if driver not in _DRIVERS:
        raise ValueError(f"aten::linalg_lstsq: driver must be one of {_DRIVERS} on CPU, got {driver!r}")
    m, n = check_matrix("linalg.lstsq", self)
    if b.dtype != self.dtype:
        raise TypeError(f"aten::linalg_lstsq: b must have the dtype of A ({self.dtype}), got {b.dtype}")
    vector = b.rank == self.known_rank - 1
    rhs = op.Unsqueeze(b, [-1]) if vector else b
    if m == 0 or n == 0:
        return _lstsq_empty(self, rhs, vector, driver)
    a64, b64 = op.Cast(self, to=types.DOUBLE.onnx), op.Cast(rhs, to=types.DOUBLE.onnx)
    if driver == "gels":
        x, residuals = _gels(a64, b64)
        solution = op.CastLike(op.Squeeze(x, [-1]) if vector else x, self)
        residuals = _empty(self.known_dtype) if residuals is None else op.CastLike(residuals, self)
        singular_values = op.Slice(op.Reshape(solution, [-1]), [0], [0])  # empty, a value of its own
        return solution, residuals, _empty(types.INT64), singular_values
    u, s, vh = _svd(a64, False, True)  # (..., m, k), (..., k), (..., k, n)
    if rcond is None or rcond < 0:  # torch: a negative rcond means machine precision too
        rcond = float(np.finfo(self.known_dtype.numpy).eps) * max(m, n)
    tol = op.Mul(reduce("Max", s, [-1], keepdims=1), np.array(rcond, np.float64))
    kept = op.Greater(s, tol)
    s_inv = op.Where(kept, op.Div(np.array(1.0), op.Where(kept, s, np.array(1.0))), np.array(0.0))
    x = mm(tr(vh), op.Mul(op.Unsqueeze(s_inv, [-1]), mm(tr(u), b64)))  # (..., n, p)
    solution = op.CastLike(op.Squeeze(x, [-1]) if vector else x, self)
    if m > n and driver != "gelsy":
        r = op.Sub(mm(a64, x), b64)
        residuals = op.CastLike(reduce("Sum", op.Mul(r, r), [-2], keepdims=0), self)
    else:
        residuals = _empty(self.known_dtype)
    rank = reduce("Sum", op.Cast(kept, to=types.INT64.onnx), [-1], keepdims=0)
    singular_values = op.CastLike(s, self)
    if driver not in ("gelsd", "gelss"):  # empty (a value of its own: a graph output cannot repeat the residuals' constant)
        singular_values = op.Slice(op.Reshape(singular_values, [-1]), [0], [0])
    return solution, residuals, rank, singular_values
