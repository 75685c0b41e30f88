"""LU with partial pivoting and what it gives: det, slogdet, solve, inv, lu_factor, lu, lu_solve,
lu_unpack; and the triangular solves (solve_triangular, triangular_solve).

The factorisation is LAPACK's getf2, one column at a time (unrolled over the static matrix
dimension; batch dimensions may be dynamic): the pivot is the first row of largest magnitude at
or below the diagonal, rows are swapped, the column below the pivot is divided by it and the
trailing matrix gets the rank-1 update. A zero pivot leaves its column alone and sets `info` to
its 1-based index, as LAPACK does, so singular inputs give torch's inf/nan and `info`. Pivots are
1-based int32, as torch returns them.

det and slogdet return the LU factors too. LAPACK is column-major, so for a contiguous
(row-major) A torch's det factors the memory it sees, which is Aᵀ; an exported graph knows no
strides, so these functions factor Aᵀ as torch does for contiguous inputs (the determinant is
the same either way).
"""

from __future__ import annotations

import functools

import numpy as np
import torch

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops.linalg._common import (
    check_matrix,
    check_square,
    col,
    cols,
    diagonal,
    empty,
    eye,
    reduce,
    row,
    rows,
    substitute,
    tr,
    tril,
    triu,
)
from torchlib.registry import aten_op


def _batch_zeros(x: Value, dtype: types.DType) -> Value:
    """Zeros of x's batch shape (all but the last two dimensions)."""
    return op.ConstantOfShape(op.Shape(x, end=-2), value=np.zeros(1, dtype.numpy))


def _swap_rows(x: Value, k: int, p: Value) -> Value:
    """x with rows k and p (an INT64 of shape (...), per matrix) swapped; batch dims broadcast."""
    m = x.static_dim(-2)
    is_p = op.Equal(rows(m), op.Unsqueeze(p, [-1, -2]))  # (..., m, 1)
    row_p = reduce("Sum", op.Where(is_p, x, op.CastLike(0, x)), [-2], keepdims=1)
    return op.Where((rows(m) == k), row_p, op.Where(is_p, row(x, k, keep=True), x))


def _lu(a: Value) -> tuple[Value, Value, Value]:
    """(LU, pivots, info) of a batch of m x n matrices: getf2 with partial pivoting."""
    m, n = a.static_dim(-2), a.static_dim(-1)
    info = _batch_zeros(a, types.INT32)
    pivots = []
    zero = op.CastLike(0, a)
    for k in range(min(m, n)):
        p = _pivot(col(a, k), k)
        pivots.append(op.Unsqueeze(op.Add(p, 1), [-1]))
        a = _swap_rows(a, k, p)
        pivot = op.Gather(row(a, k, keep=True), [k], axis=-1)  # (..., 1, 1)
        singular = op.Equal(pivot, zero)
        below = rows(m) > k
        column = col(a, k, keep=True)  # (..., m, 1)
        # a zero pivot leaves the column as it is (zeros, or a NaN idamax passed over) and the
        # update still runs with it, as getf2's dger does
        scaled = op.Where(below, op.Where(singular, column, op.Div(column, pivot)), zero)
        # only the trailing block is updated: 0 * inf elsewhere would put NaN where LAPACK writes nothing
        a = op.Where(
            op.And(below, (cols(n) == k)),
            scaled,
            op.Where(op.And(below, (cols(n) > k)), op.Sub(a, op.Mul(scaled, row(a, k, keep=True))), a),
        )
        first = op.And(op.Equal(info, 0), op.Squeeze(singular, [-1, -2]))
        info = op.Where(first, np.array(k + 1, np.int32), info)
    if pivots:
        piv = op.Cast(op.Concat(*pivots, axis=-1), to=types.INT32.onnx)
    else:
        piv = op.ConstantOfShape(op.Concat(op.Shape(a, end=-2), [0], axis=0), value=np.zeros(1, np.int32))
    return a, piv, info


def _pivot(x: Value, k: int) -> Value:
    """The pivot row (INT64, 0-based) of column x (..., m) at step k: reference BLAS idamax on
    x[k:], which keeps the first element of largest magnitude and compares with `>`, so a NaN is
    never taken over a number, and a NaN first element (the running maximum) is never replaced."""
    m = x.static_dim(-1)
    size = op.Abs(x)
    candidates = op.Where(op.And((np.arange(m) >= k), op.Not(op.IsNaN(size))), size, op.CastLike(-1, x))
    p = op.ArgMax(candidates, axis=x.known_rank - 1, keepdims=0)  # the first largest; positive axis: see reduce()
    first_nan = op.IsNaN(op.Gather(x, k, axis=-1))
    return op.Where(first_nan, np.array(k, np.int64), p)


def _permute(b: Value, pivots: Value, reverse: bool = False, count: int | None = None) -> Value:
    """The row swaps of the first `count` (default all) `pivots` (1-based, as LAPACK's) applied
    to b in order (Pᵀ b), or in reverse order (P b)."""
    k = pivots.static_dim(-1) if count is None else count
    order = reversed(range(k)) if reverse else range(k)
    for i in order:
        p = op.Sub(op.Cast(op.Gather(pivots, i, axis=-1), to=types.INT64.onnx), 1)
        b = _swap_rows(b, i, p)
    return b


def _lu_solve(lu: Value, pivots: Value, b: Value, adjoint: bool = False) -> Value:
    """X with A X = B (or Aᵀ X = B with adjoint) from A's LU factorisation; B is (..., n, k)."""
    if not adjoint:
        y = substitute(lu, _permute(b, pivots), upper=False, unit=True)
        return substitute(lu, y, upper=True)
    lu_t = tr(lu)
    y = substitute(lu_t, b, upper=False)
    return _permute(substitute(lu_t, y, upper=True, unit=True), pivots, reverse=True)


def _permutation_sign(pivots: Value, dtype: types.DType) -> Value:
    k = pivots.static_dim(-1)
    moved = op.Not(op.Equal(pivots, np.arange(1, k + 1, dtype=np.int32)))
    odd = op.Mod(reduce("Sum", op.Cast(moved, to=types.INT64.onnx), [-1], keepdims=0), 2)
    return op.Cast(op.Sub(1, op.Mul(odd, 2)), to=dtype.onnx)


def _is_vector_rhs(a: Value, b: Value) -> bool:
    """torch's rule: B is a (batch of) vector(s) when it is 1-D, or has one dimension less than
    A and A's shape without its last dimension."""
    return b.rank == 1 or (b.rank == (a.rank or 0) - 1 and tuple(b.shape or ()) == tuple((a.shape or ())[:-1]))


@aten_op("aten::linalg_lu_factor_ex")
def aten_linalg_lu_factor_ex(
    A: TFloat, *, pivot: bool = True, check_errors: bool = False
) -> tuple[TFloat, TFloat, TFloat]:
    """linalg_lu_factor_ex(Tensor A, *, bool pivot=True, bool check_errors=False) -> (Tensor LU, Tensor pivots, Tensor info)"""
    check_matrix("linalg_lu_factor_ex", A)
    if not pivot:
        raise ValueError("linalg_lu_factor_ex: LU without pivoting is not implemented on the CPU (torch raises too)")
    return _lu(A)


@aten_op("aten::linalg_lu")
def aten_linalg_lu(A: TFloat, *, pivot: bool = True) -> tuple[TFloat, TFloat, TFloat]:
    """linalg_lu(Tensor A, *, bool pivot=True) -> (Tensor P, Tensor L, Tensor U)"""
    check_matrix("linalg_lu", A)
    if not pivot:
        raise ValueError("linalg_lu: LU without pivoting is not implemented on the CPU (torch raises too)")
    lu, piv, _ = _lu(A)
    return aten_lu_unpack(lu, piv)


@functools.cache
def _pivots_must_be_min_m_n() -> bool:
    """Whether the installed torch requires LU_pivots of shape (..., min(m, n)) (torch 2.14 on)
    where earlier torch read the first min(m, n) of longer pivots. A probe of torch's kernel."""
    try:
        torch.lu_unpack(torch.zeros(1, 1), torch.ones(2, dtype=torch.int32))
    except (RuntimeError, ValueError):
        return True
    return False


@aten_op("aten::lu_unpack")
def aten_lu_unpack(
    LU_data: TFloat,
    LU_pivots: TInt,
    unpack_data: bool = True,
    unpack_pivots: bool = True,
) -> tuple[TFloat, TFloat, TFloat]:
    """lu_unpack(Tensor LU_data, Tensor LU_pivots, bool unpack_data=True, bool unpack_pivots=True) -> (Tensor P, Tensor L, Tensor U)"""
    m, n = check_matrix("lu_unpack", LU_data, "LU_data")
    k = min(m, n)
    count = LU_pivots.shape[-1] if LU_pivots.shape else None
    if isinstance(count, int) and count != k and _pivots_must_be_min_m_n():
        raise ValueError(
            f"aten::lu_unpack: LU_pivots must have min(m, n) = {k} entries in its last dim in the installed "
            f"torch {torch.__version__} (2.14 on; earlier torch reads the first {k}), got shape {list(LU_pivots.known_shape)} (torch raises too)"
        )
    if unpack_data:
        lower = op.Add(op.Slice(tril(LU_data, -1), [0], [k], [-1]), eye(m, k, LU_data.known_dtype))
        upper = op.Slice(triu(LU_data), [0], [k], [-2])
    else:
        lower, upper = empty(LU_data), empty(LU_data)
    if not unpack_pivots:
        return empty(LU_data), lower, upper
    # the row order after the swaps: perm[i] is the original row now at i; P[perm[i], i] = 1
    start = op.Expand(op.CastLike(np.arange(m)[:, None], LU_data), op.Concat(op.Shape(LU_data, end=-2), [m, 1], axis=0))
    perm = _permute(start, LU_pivots, count=k)  # (..., m, 1); torch reads the first min(m, n) pivots only
    x = op.CastLike(op.Equal(perm, op.CastLike(np.arange(m)[None, :], LU_data)), LU_data)
    return tr(x), lower, upper


@aten_op("aten::linalg_lu_solve")
def aten_linalg_lu_solve(LU: TFloat, pivots: TInt, B: TFloat, *, left: bool = True, adjoint: bool = False) -> TFloat:
    """linalg_lu_solve(Tensor LU, Tensor pivots, Tensor B, *, bool left=True, bool adjoint=False) -> Tensor"""
    check_square("linalg_lu_solve", LU, "LU")
    check_matrix("linalg_lu_solve", B, "B")
    if left:
        return _lu_solve(LU, pivots, B, adjoint)
    return tr(_lu_solve(LU, pivots, tr(B), not adjoint))


@aten_op("aten::_linalg_det")
def aten__linalg_det(A: TFloat) -> tuple[TFloat, TFloat, TFloat]:
    """_linalg_det(Tensor A) -> (Tensor result, Tensor LU, Tensor pivots)"""
    n = check_square("linalg.det", A)
    lu, piv, _ = _lu(tr(A))  # det(A) = det(Aᵀ); torch factors Aᵀ of a contiguous A (see the module doc)
    det = op.Mul(
        reduce("Prod", diagonal(lu, n), [-1], keepdims=0),
        _permutation_sign(piv, A.known_dtype),
    )
    return det, lu, piv


@aten_op("aten::_linalg_slogdet")
def aten__linalg_slogdet(A: TFloat) -> tuple[TFloat, TFloat, TFloat, TFloat]:
    """_linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)"""
    n = check_square("linalg.slogdet", A)
    lu, piv, _ = _lu(tr(A))
    d = diagonal(lu, n)
    zero = op.CastLike(0, d)
    # torch's sign of each pivot: (d > 0) - (d < 0), so 0 for a NaN pivot (onnx Sign gives NaN)
    signs = op.Sub(op.CastLike(op.Greater(d, zero), d), op.CastLike(op.Less(d, zero), d))
    sign = op.Mul(reduce("Prod", signs, [-1], keepdims=0), _permutation_sign(piv, A.known_dtype))
    logabsdet = reduce("Sum", op.Log(op.Abs(d)), [-1], keepdims=0)
    return sign, logabsdet, lu, piv


@functools.cache
def _solve_factors_transpose() -> bool:
    """Whether the installed torch's linalg.solve (and so linalg.inv) factors Aᵀ for a contiguous
    real A (torch 2.10: LAPACK sees the row-major memory as Aᵀ and solves the adjoint system);
    from 2.11 it factors A. The solution is the same either way; the LU, pivots and `info`
    (which zero pivot comes first) it returns differ. An exported graph knows no strides, so
    these functions follow torch for contiguous inputs. A probe of torch's kernel."""
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    lu = torch.ops.aten._linalg_solve_ex.default(a, torch.ones(2, 1, dtype=torch.float64))[1]
    return torch.equal(lu, torch.linalg.lu_factor(a.mT)[0])


def _solve(A: Value, B: Value, left: bool) -> tuple[Value, Value, Value, Value]:
    check_square("linalg.solve", A)
    if B.dtype is not A.dtype:
        raise TypeError(f"linalg.solve: A and B must have one dtype, got {A.dtype} and {B.dtype} (torch raises too)")
    transposed = _solve_factors_transpose()  # then lu, piv are Aᵀ's factors: A = (Aᵀ)ᵀ
    lu, piv, info = _lu(tr(A) if transposed else A)
    vector = _is_vector_rhs(A, B)
    b = op.Unsqueeze(B, [-1]) if vector else B
    check_matrix("linalg.solve", b, "B")
    if left:  # A X = B
        x = _lu_solve(lu, piv, b, adjoint=transposed)
    else:  # X A = B, i.e. Aᵀ Xᵀ = Bᵀ
        x = tr(_lu_solve(lu, piv, tr(b), adjoint=not transposed))
    return (op.Squeeze(x, [-1]) if vector else x), lu, piv, info


@aten_op("aten::_linalg_solve_ex")
def aten__linalg_solve_ex(
    A: TFloat, B: TFloat, *, left: bool = True, check_errors: bool = False
) -> tuple[TFloat, TFloat, TFloat, TFloat]:
    """_linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor LU, Tensor pivots, Tensor info)"""
    return _solve(A, B, left)


@aten_op("aten::linalg_solve_ex")
def aten_linalg_solve_ex(
    A: TFloat, B: TFloat, *, left: bool = True, check_errors: bool = False
) -> tuple[TFloat, TFloat]:
    """linalg_solve_ex(Tensor A, Tensor B, *, bool left=True, bool check_errors=False) -> (Tensor result, Tensor info)"""
    x, _, _, info = _solve(A, B, left)
    return x, info


@aten_op("aten::linalg_solve")
def aten_linalg_solve(A: TFloat, B: TFloat, *, left: bool = True) -> TFloat:
    """linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor"""
    return _solve(A, B, left)[0]


@aten_op("aten::linalg_inv_ex")
def aten_linalg_inv_ex(A: TFloat, *, check_errors: bool = False) -> tuple[TFloat, TFloat]:
    """linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)"""
    n = check_square("linalg.inv", A)
    identity = op.Expand(op.CastLike(eye(n, n, A.known_dtype), A), op.Shape(A))
    inverse, _, _, info = _solve(A, identity, left=True)  # torch's inv is solve(A, I)
    return inverse, info


def _triangular(fn: str, a: Value, b: Value, upper: bool, left: bool, unit: bool) -> Value:
    check_square(fn, a)
    check_matrix(fn, b, "B")
    if b.dtype is not a.dtype:
        raise TypeError(
            f"{fn}: the triangular matrix and B must have one dtype, got {a.dtype} and {b.dtype} (torch raises too)"
        )
    if left:
        return substitute(a, b, upper, unit)
    return tr(substitute(tr(a), tr(b), not upper, unit))


@aten_op("aten::linalg_solve_triangular")
def aten_linalg_solve_triangular(
    self: TFloat,
    B: TFloat,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> TFloat:
    """linalg_solve_triangular(Tensor self, Tensor B, *, bool upper, bool left=True, bool unitriangular=False) -> Tensor"""
    return _triangular("linalg.solve_triangular", self, B, upper, left, unitriangular)


@aten_op("aten::triangular_solve")
def aten_triangular_solve(
    self: TFloat,
    A: TFloat,
    upper: bool = True,
    transpose: bool = False,
    unitriangular: bool = False,
) -> tuple[TFloat, TFloat]:
    """triangular_solve(Tensor self, Tensor A, bool upper=True, bool transpose=False, bool unitriangular=False) -> (Tensor solution, Tensor cloned_coefficient)"""
    a = tr(A) if transpose else A
    x = _triangular("triangular_solve", a, self, upper != transpose, True, unitriangular)
    # the coefficient comes back broadcast to the batch shape of the solution
    coefficient = op.Expand(A, op.Concat(op.Shape(x, end=-2), op.Shape(A, start=-2), axis=0))
    return x, coefficient
