"""Jacobi eigenvalue iteration for symmetric matrices (eigh) and one-sided Jacobi SVD (svd, pinv).

Both rotate pairs of indices (p, q) in the round-robin ("parallel") order: a sweep is n - 1
rounds, each of n // 2 disjoint pairs, so one round is one rotation matrix J built from the
pairs' cosines and sines and applied with MatMul to the whole batch. The rounds run in an ONNX
Loop until every matrix of the batch has converged (off-diagonal mass below 1e-14 of the
matrix's, checked after each round) or 30 sweeps have run; cyclic Jacobi converges
quadratically, so 6 to 10 sweeps is typical up to 64 x 64. The iteration runs in float64 for
float32 inputs too (then rounds the results), so both reach their dtype's accuracy.

- eigh: A <- Jᵀ A J zeroes A[p, q] (Golub and Van Loan's symmetric Schur rotation); the
  eigenvalues are the diagonal, sorted ascending, and the eigenvectors the accumulated V = J J ...
- svd (Hestenes): G <- G J orthogonalises the columns p and q of G = A (or Aᵀ when it is wider
  than tall); then S is the column norms (sorted descending), U = G / S and V = J J ... U is
  completed to an orthonormal basis (full_matrices, or columns of zero singular values) by
  Householder QR of U.

The eigenvectors and singular vectors are defined only up to sign (up to a rotation for
repeated values), and LAPACK's choice of sign is not reproducible from its inputs: they match
torch's up to sign (see the conformance entries' `canonical`).
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops.linalg._common import (
    check_matrix,
    check_square,
    diagonal,
    empty,
    loop,
    mm,
    reduce,
    tr,
)
from torchlib.ops.linalg.qr import _apply_q, _geqrf
from torchlib.registry import aten_op

TOL = 1e-14
EIGENVECTORS = "each eigenvector is defined up to its sign (a phase for complex input), more freely for equal eigenvalues"
SINGULAR_VECTORS = "each pair of singular vectors is defined up to a common sign, more freely for equal singular values"
MAX_SWEEPS = 30


def _schedule(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Round-robin pairs of n indices (a dummy one added when n is odd): one-hot P and Q of
    shape (rounds, pairs, n) for the pairs' first and second index (all zero for a pair with the
    dummy), and the (rounds, n, n) diagonal of the index left out of each round."""
    players = n + n % 2
    rounds, pairs = max(players - 1, 1), players // 2
    p = np.zeros((rounds, max(pairs, 1), n))
    q = np.zeros_like(p)
    rest = np.zeros((rounds, n, n))
    others = list(range(1, players))
    for r in range(rounds):
        order = [0] + others[r:] + others[:r] if others else [0]
        paired: set[int] = set()
        for k in range(pairs):
            a, b = order[k], order[players - 1 - k]
            if a < n and b < n:
                p[r, k, min(a, b)] = 1
                q[r, k, max(a, b)] = 1
                paired.update((a, b))
        for i in range(n):
            if i not in paired:
                rest[r, i, i] = 1
    return p, q, rest


def _rotation(p: Value, q: Value, rest: Value, c: Value, s: Value) -> Value:
    """J (..., n, n) with J[p, p] = J[q, q] = c, J[p, q] = s, J[q, p] = -s per pair, identity
    on the index left out."""
    c, s = op.Unsqueeze(c, [-1]), op.Unsqueeze(s, [-1])  # (..., pairs, 1)
    first = mm(tr(p), op.Add(op.Mul(c, p), op.Mul(s, q)))
    second = mm(tr(q), op.Sub(op.Mul(c, q), op.Mul(s, p)))
    return op.Add(op.Add(first, second), rest)


def _cos_sin(ratio_num: Value, ratio_den: Value) -> tuple[Value, Value]:
    """cos and sin of the rotation with t = sign(z) / (|z| + sqrt(1 + z²)), z = num / (2 den);
    no rotation where den is 0."""
    zero, one = op.CastLike(0, ratio_num), op.CastLike(1, ratio_num)
    skip = op.Equal(ratio_den, zero)
    z = op.Div(ratio_num, op.Mul(op.Where(skip, one, ratio_den), op.CastLike(2, ratio_num)))
    sign = op.Where(op.Less(z, zero), op.Neg(one), one)
    t = op.Div(sign, op.Add(op.Abs(z), op.Sqrt(op.Add(one, op.Mul(z, z)))))
    t = op.Where(op.Or(skip, op.IsInf(z)), zero, t)
    c = op.Div(one, op.Sqrt(op.Add(one, op.Mul(t, t))))
    return c, op.Mul(t, c)


def _not_converged(gram: Value, n: int) -> Value:
    """True while some matrix of the batch has off-diagonal mass above TOL of its total."""
    off = np.ones((n, n), dtype=bool) ^ np.eye(n, dtype=bool)
    squares = op.Mul(gram, gram)
    off_mass = reduce("Sum", op.Where(off, squares, op.CastLike(0, gram)), [-1, -2], keepdims=0)
    total = reduce("Sum", squares, [-1, -2], keepdims=0)
    bad = op.Cast(op.Greater(off_mass, op.Mul(total, TOL * TOL)), to=types.DOUBLE.onnx)
    return op.Greater(reduce("Max", op.Reshape(bad, [-1]), [0], keepdims=0), 0.0)


def _jacobi(x: Value, symmetric: bool) -> tuple[Value, Value]:
    """(X', V) after the Jacobi iteration: X' = Vᵀ X V diagonal (symmetric) or X' = X V with
    orthogonal columns (one-sided)."""
    n = x.static_dim(-1)
    schedule = _schedule(n)
    rounds = schedule[0].shape[0]
    p_all, q_all, rest_all = (op.CastLike(a, x) for a in schedule)
    identity = op.Expand(op.CastLike(np.eye(n), x), op.Concat(op.Shape(x, end=-2), [n, n], axis=0))

    def body(i: Value, carried: list[Value]) -> tuple[Value, list[Value]]:
        x, v = carried
        r = op.Mod(i, np.array(rounds, np.int64))
        p, q, rest = op.Gather(p_all, r), op.Gather(q_all, r), op.Gather(rest_all, r)
        if symmetric:
            d = op.Unsqueeze(diagonal(x, n), [-2])  # (..., 1, n)
            app = reduce("Sum", op.Mul(d, p), [-1], keepdims=0)
            aqq = reduce("Sum", op.Mul(d, q), [-1], keepdims=0)
            apq = reduce("Sum", op.Mul(mm(p, x), q), [-1], keepdims=0)
            c, s = _cos_sin(op.Sub(aqq, app), apq)
            j = _rotation(p, q, rest, c, s)
            x = mm(mm(tr(j), x), j)
            x = op.Mul(op.Add(x, tr(x)), op.CastLike(0.5, x))
            gram = x
        else:
            gp, gq = mm(x, tr(p)), mm(x, tr(q))  # (..., m, pairs)
            alpha = reduce("Sum", op.Mul(gp, gp), [-2], keepdims=0)
            beta = reduce("Sum", op.Mul(gq, gq), [-2], keepdims=0)
            gamma = reduce("Sum", op.Mul(gp, gq), [-2], keepdims=0)
            c, s = _cos_sin(op.Sub(beta, alpha), gamma)
            j = _rotation(p, q, rest, c, s)
            x = mm(x, j)
            norms = op.Sqrt(reduce("Sum", op.Mul(x, x), [-2], keepdims=0))
            safe = op.Where(op.Equal(norms, op.CastLike(0, x)), op.CastLike(1, x), norms)
            unit = op.Div(x, op.Unsqueeze(safe, [-2]))
            gram = mm(tr(unit), unit)
        return _not_converged(gram, n), [x, mm(v, j)]

    if n < 2:
        return x, identity
    x, v = loop(MAX_SWEEPS * rounds, [x, identity], body)
    return x, v


def _sort(values: Value, vectors: Value | None, descending: bool) -> tuple[Value, Value | None]:
    n = values.static_dim(-1)
    values, order = op.TopK(values, np.array([n], np.int64), axis=-1, largest=int(descending), sorted=1)
    if vectors is None:
        return values, None
    index = op.Expand(op.Unsqueeze(order, [-2]), op.Shape(vectors))
    return values, op.GatherElements(vectors, index, axis=-1)


def _symmetric_part(A: Value, uplo: str) -> Value:
    """The symmetric matrix of A's lower (or upper) triangle, picked, not summed (a sum of
    huge entries would overflow)."""
    if uplo not in ("L", "U", "l", "u"):
        raise ValueError(f"linalg.eigh: UPLO must be 'L' or 'U', got {uplo!r}")
    n = A.static_dim(-1)
    lower = np.arange(n)[:, None] >= np.arange(n)[None, :]
    return op.Where(lower if uplo in ("L", "l") else lower.T, A, tr(A))


def _scale(x: Value) -> tuple[Value, Value]:
    """(x / 2^e, 2^e) per matrix, scaling a matrix whose largest entry is beyond 2^±500 into
    that range (e = 0 otherwise, and when that entry is 0, inf or NaN): Jacobi squares the
    entries, which must neither overflow nor underflow. LAPACK's drivers scale the same way
    (dlascl) outside sqrt(underflow)..sqrt(overflow), into that range rather than down to 1, so
    that small singular values keep their precision; the values are scaled back at the end, and
    those beyond the dtype's range overflow there, as LAPACK's do. A power of two scales exactly.
    The iteration runs in float64: a float32 input never needs it."""
    size = reduce("Max", op.Abs(x), [-2, -1], keepdims=1)
    usable = op.And(op.Greater(size, op.CastLike(0, x)), op.Not(op.IsInf(size)))  # NaN: not greater
    exponent = op.Floor(op.Div(op.Log(op.Where(usable, size, op.CastLike(1, x))), op.CastLike(np.log(2.0), x)))
    bound = op.CastLike(500, x)
    shift = op.Where(
        op.Greater(exponent, bound),
        op.Sub(exponent, bound),
        op.Where(op.Less(exponent, op.Neg(bound)), op.Add(exponent, bound), op.CastLike(0, x)),
    )
    power = op.Pow(op.CastLike(2, x), shift)
    return op.Div(x, power), power


@aten_op("aten::_linalg_eigh", not_unique=EIGENVECTORS, free_outputs=(1,))
def aten__linalg_eigh(A: TFloat, UPLO: str = "L", compute_v: bool = True) -> tuple[TFloat, TFloat]:
    """_linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)"""
    n = check_square("linalg.eigh", A)
    if n == 0:
        return reduce("Sum", A, [-1]), (A if compute_v else empty(A))
    x, power = _scale(op.Cast(_symmetric_part(A, UPLO), to=types.DOUBLE.onnx))
    x, v = _jacobi(x, symmetric=True)
    w, vectors = _sort(op.Mul(diagonal(x, n), op.Squeeze(power, [-1])), v if compute_v else None, descending=False)
    w = op.CastLike(w, A)
    return (w, op.CastLike(vectors, A)) if vectors is not None else (w, empty(A))


def _svd(A: Value, full_matrices: bool, compute_uv: bool) -> tuple[Value, Value, Value]:
    """(U, S, Vh) in float64 for A of any dtype check_matrix accepts."""
    m, n = A.static_dim(-2), A.static_dim(-1)
    if m == 0 or n == 0:  # no singular values; U and Vh are identities (full) or empty
        batch = op.Shape(A, end=-2)
        a = op.Cast(A, to=types.DOUBLE.onnx)
        s = op.Slice(reduce("Sum", a, [-1]), [0], [0], [-1])
        if not compute_uv:
            return empty(a), s, empty(a)
        u = op.Expand(np.eye(m, m if full_matrices else 0), op.Concat(batch, [1, 1], axis=0))
        vh = op.Expand(np.eye(n if full_matrices else 0, n), op.Concat(batch, [1, 1], axis=0))
        return u, s, vh
    wide = m < n
    g, power = _scale(op.Cast(tr(A) if wide else A, to=types.DOUBLE.onnx))
    rows, cols = max(m, n), min(m, n)
    g, v = _jacobi(g, symmetric=False)
    s = op.Sqrt(reduce("Sum", op.Mul(g, g), [-2], keepdims=0))  # of the scaled matrix
    order = None
    if cols:
        s, order = op.TopK(s, np.array([cols], np.int64), axis=-1, largest=1, sorted=1)
    power = op.Squeeze(power, [-1])
    if not compute_uv:
        return empty(g), op.Mul(s, power), empty(g)
    if order is not None:  # cols > 0
        g = op.GatherElements(g, op.Expand(op.Unsqueeze(order, [-2]), op.Shape(g)), axis=-1)
        v = op.GatherElements(v, op.Expand(op.Unsqueeze(order, [-2]), op.Shape(v)), axis=-1)
    # U = G / S; columns of (numerically) zero singular values are left to the completion
    top = reduce("Max", s, [-1], keepdims=1) if cols else s
    tiny = op.Unsqueeze(op.LessOrEqual(s, op.Mul(top, 2.2e-16 * rows)), [-2])
    u = op.Where(tiny, 0.0, op.Div(g, op.Unsqueeze(op.Where(op.Equal(s, 0.0), 1.0, s), [-2])))
    # complete U to an orthonormal basis: Q of U's Householder QR, signs fixed to match U
    a, tau = _geqrf(u)
    u = _apply_q(a, tau, np.eye(rows, rows if full_matrices else cols))
    signs = op.Where(op.Less(diagonal(a, cols), 0.0), np.array(-1.0), np.array(1.0))  # (..., cols)
    if full_matrices and rows > cols:
        signs = op.Concat(
            signs,
            op.Expand(
                np.ones(rows - cols),
                op.Concat(op.Shape(signs, end=-1), [rows - cols], axis=0),
            ),
            axis=-1,
        )
    u = op.Mul(u, op.Unsqueeze(signs, [-2]))
    s = op.Mul(s, power)
    if wide:
        return v, s, tr(u)
    return u, s, tr(v)


@aten_op("aten::_linalg_svd", not_unique=SINGULAR_VECTORS, free_outputs=(0, 2))
def aten__linalg_svd(
    A: TFloat,
    full_matrices: bool = False,
    compute_uv: bool = True,
    *,
    driver: str | None = None,
) -> tuple[TFloat, TFloat, TFloat]:
    """_linalg_svd(Tensor A, bool full_matrices=False, bool compute_uv=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)"""
    check_matrix("linalg.svd", A)
    u, s, vh = _svd(A, full_matrices, compute_uv)
    return op.CastLike(u, A), op.CastLike(s, A), op.CastLike(vh, A)


def _pinv(A: Value, atol: Value | float | None, rtol: Value | float | None, hermitian: bool) -> Value:
    m, n = check_matrix("linalg.pinv", A)
    if hermitian:
        check_square("linalg.pinv", A)
        A = _symmetric_part(A, "L")
    if m == 0 or n == 0:
        return op.ConstantOfShape(
            op.Concat(op.Shape(A, end=-2), [n, m], axis=0),
            value=np.zeros(1, A.known_dtype.numpy),
        )
    u, s, vh = (op.CastLike(t, A) for t in _svd(A, False, True))  # then as torch, in A's dtype
    default_rtol = float(np.finfo(A.known_dtype.numpy).eps) * max(m, n)
    if rtol is None:  # torch: no relative tolerance when a positive atol is given
        if atol is None:
            rtol = default_rtol
        elif isinstance(atol, (int, float)):
            rtol = 0.0 if atol > 0 else default_rtol
        else:
            rtol = op.Where(
                op.Greater(atol, op.CastLike(0, atol)),
                op.CastLike(0, atol),
                op.CastLike(default_rtol, atol),
            )
    atol = op.Unsqueeze(op.CastLike(0.0 if atol is None else atol, A), [-1])
    rtol = op.Unsqueeze(op.CastLike(rtol, A), [-1])
    tol = op.Max(atol, op.Mul(rtol, op.Slice(s, [0], [1], [-1])))
    s_inv = op.Where(op.Greater(s, tol), op.Reciprocal(s), op.CastLike(0, s))
    return mm(op.Mul(tr(vh), op.Unsqueeze(s_inv, [-2])), tr(u))


@aten_op("aten::linalg_pinv.atol_rtol_tensor")
def aten_linalg_pinv_atol_rtol_tensor(
    self: TFloat,
    *,
    atol: TFloat | None = None,
    rtol: TFloat | None = None,
    hermitian: bool = False,
) -> TFloat:
    """linalg_pinv.atol_rtol_tensor(Tensor self, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor"""
    return _pinv(self, atol, rtol, hermitian)


@aten_op("aten::linalg_pinv.atol_rtol_float")
def aten_linalg_pinv_atol_rtol_float(
    self: TFloat,
    *,
    atol: float | None = None,
    rtol: float | None = None,
    hermitian: bool = False,
) -> TFloat:
    """linalg_pinv.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor"""
    return _pinv(self, atol, rtol, hermitian)
