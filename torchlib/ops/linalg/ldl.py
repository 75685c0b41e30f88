"""LDLᵀ with Bunch-Kaufman diagonal pivoting: linalg_ldl_factor(_ex) and linalg_ldl_solve.

torch calls LAPACK's ?sytrf with uplo='L' (?hetrf for hermitian=True, the same for real input).
This is its unblocked form, ?sytf2, step by step. At column k, with colmax the largest
|A[i, k]| below the diagonal (first at row imax) and rowmax the largest off-diagonal |A[imax, j]|
of the trailing matrix, alpha = (1 + sqrt(17)) / 8:
- |A[k, k]| >= alpha colmax, or >= alpha colmax (colmax / rowmax): a 1x1 pivot, no interchange;
- |A[imax, imax]| >= alpha rowmax: a 1x1 pivot, rows and columns k and imax interchanged;
- otherwise a 2x2 pivot block (k, k+1), rows and columns k+1 and imax interchanged.
The interchange only touches the trailing matrix (the columns of L already computed stay as they
are; ?sytrs applies the interchanges in the same interleaved order). A column that is zero is
left alone and sets `info` to its 1-based index, as LAPACK does.
LD holds L (unit diagonal not stored) below the diagonal and D on the diagonal and, for a 2x2
block, the subdiagonal; its upper triangle is zero. Pivots are 1-based int32: kp for a 1x1 block,
-kp on both rows of a 2x2 block.

NaN and inf follow torch's MKL (checked against it on random matrices with NaN, ±inf and zeros
put in): its idamax takes the first NaN of a column; its MAX(a, b) is b when a is NaN, so a NaN
diagonal entry sets `info` only when the rest of its column is zero (reference LAPACK's DISNAN
test would stop at any NaN diagonal entry); dsyr does nothing when its alpha, -1/d, is 0 (an
infinite 1x1 pivot leaves the trailing matrix alone) while dscal still multiplies by it.

The steps run in one ONNX Loop over k; each step advances every matrix of the batch by one
column, and a matrix whose column k was the second of a 2x2 block it took at k-1 skips the step
(the matrices of a batch may take different pivots). The trailing matrix is kept as a full
symmetric matrix (mirrored from its lower triangle after each update, which is the triangle
LAPACK updates), so that a symmetric interchange is a gather of rows and columns.

A graph cannot raise: check_errors=True and linalg_ldl_factor on a singular matrix (torch raises)
return the factors as they are, like the other factorisations here.

For larger n ?sytrf factors panels with the blocked ?lasyf: the same pivots and the same
arithmetic up to rounding order (measured against torch's MKL in float64: 64x64 and 65x65 equal
bit for bit, 100x100 and 130x130 within 7e-13 with the same pivots).
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops.linalg._common import (
    broadcast_batch,
    check_matrix,
    check_square,
    loop,
    reduce,
    tr,
    tril,
)
from torchlib.registry import aten_op


def _alpha(dtype: types.DType) -> np.ndarray:
    """LAPACK's ALPHA = (ONE + SQRT(SEVTEN)) / EIGHT, in the precision of the factorisation."""
    t = np.dtype(dtype.numpy).type
    return np.array((t(1) + np.sqrt(t(17))) / t(8), dtype=t)


def _last(x: Value) -> Value:
    """x (...) as (..., 1): to broadcast a per-matrix value over a vector."""
    return op.Unsqueeze(x, [-1])


def _last2(x: Value) -> Value:
    """x (...) as (..., 1, 1): to broadcast a per-matrix value over a matrix."""
    return op.Unsqueeze(x, [-1, -2])


def _at(x: Value, i: Value) -> Value:
    """x[..., i[...]] for x (..., n) and a per-matrix INT64 index i (...): (...)."""
    return op.Squeeze(op.GatherElements(x, _last(i), axis=-1), [-1])


def _rows_at(x: Value, i: Value) -> Value:
    """Row i[...] of each matrix x (..., m, n): (..., n)."""
    n = x.static_dim(-1)
    index = op.Expand(_last2(i), op.Concat(op.Shape(i), [1, n], axis=0))
    return op.Squeeze(op.GatherElements(x, index, axis=-2), [-2])


def _swap_index(n: int, a: Value, b: Value) -> Value:
    """0..n-1 with a[...] and b[...] exchanged: (..., n)."""
    ar = np.arange(n)
    a, b = _last(a), _last(b)
    return op.Where(op.Equal(ar, a), b, op.Where(op.Equal(ar, b), a, ar))


def _permute_rows(x: Value, index: Value) -> Value:
    """x (..., m, r) with row i taken from row index[..., i]."""
    return op.GatherElements(x, op.Expand(op.Unsqueeze(index, [-1]), op.Shape(x)), axis=-2)


def _permute_cols(x: Value, index: Value) -> Value:
    return op.GatherElements(x, op.Expand(op.Unsqueeze(index, [-2]), op.Shape(x)), axis=-1)


def _outer(u: Value, v: Value) -> Value:
    """u (..., m) ⊗ v (..., n): (..., m, n), elementwise products (no summation)."""
    return op.Mul(op.Unsqueeze(u, [-1]), op.Unsqueeze(v, [-2]))


def _zeros(shape: Value, dtype: types.DType) -> Value:
    return op.ConstantOfShape(shape, value=np.zeros(1, dtype.numpy))


def _idamax(x: Value, mask: Value, axis: int) -> tuple[Value, Value]:
    """(index, value) of MKL's idamax over the entries of x (..., n) (absolute values) that mask
    keeps: the first NaN if there is one, else the first largest (-1 when mask keeps nothing)."""
    nan = op.And(mask, op.IsNaN(x))
    clean = op.Where(op.And(mask, op.Not(nan)), x, -1)
    first_nan = op.ArgMax(op.Cast(nan, to=types.INT32.onnx), axis=axis, keepdims=0)
    any_nan = reduce("Max", op.Cast(nan, to=types.INT32.onnx), [-1])
    index = op.Where(op.Greater(any_nan, np.array(0, np.int32)), first_nan, op.ArgMax(clean, axis=axis, keepdims=0))
    return index, _at(op.Where(mask, x, -1), index)


def _max(a: Value, b: Value) -> Value:
    """MAX(a, b) as MKL has it: b when a is NaN (its max(NaN, 0) is 0)."""
    return op.Where(op.Greater(a, b), a, b)


def _ldl(a: Value) -> tuple[Value, Value, Value]:
    """(LD, pivots, info) of a batch of symmetric n x n matrices (only the lower triangle is read)."""
    n = a.static_dim(-1)
    batch = op.Shape(a, end=-2)
    info = _zeros(batch, types.INT32)
    if n == 0:
        return a, _zeros(op.Concat(batch, [0], axis=0), types.INT32), info
    alpha = _alpha(a.known_dtype)
    zero, one = np.zeros((), a.known_dtype.numpy), np.ones((), a.known_dtype.numpy)
    ar = np.arange(n)
    rows, cols = ar[:, None], ar[None, :]
    last_axis = a.rank - 2  # type: ignore[operator]  # ArgMax with a positive axis: see _common.reduce

    def step(k: Value, carried: list[Value]) -> tuple[None, list[Value]]:
        m, piv, info, skip = carried
        active = op.Not(skip)
        # the pivot search, on the trailing matrix m[k:, k:] (symmetric)
        colk = op.Gather(m, k, axis=-1)  # (..., n)
        absakk = op.Abs(op.Gather(colk, k, axis=-1))  # (...)
        imax, colmax = _idamax(op.Abs(colk), op.Greater(ar, k), last_axis)
        colmax = op.Max(colmax, zero)  # 0 at the last column
        # rowmax: LAPACK's two idamax, on row imax left of the diagonal and column imax below it
        row_imax = op.Abs(_rows_at(m, imax))
        last_imax = _last(imax)
        _, left = _idamax(row_imax, op.And(op.GreaterOrEqual(ar, k), op.Less(ar, last_imax)), last_axis)
        _, below = _idamax(row_imax, op.Greater(ar, last_imax), last_axis)
        rowmax = op.Where(op.Less(imax, np.array(n - 1, np.int64)), _max(left, below), left)
        singular = op.Equal(_max(absakk, colmax), zero)
        alpha_colmax = op.Mul(alpha, colmax)
        keep_k = op.Or(
            op.GreaterOrEqual(absakk, alpha_colmax),
            op.GreaterOrEqual(absakk, op.Mul(alpha_colmax, op.Div(colmax, rowmax))),
        )
        take_imax = op.GreaterOrEqual(_at(row_imax, imax), op.Mul(alpha, rowmax))
        one_by_one = op.And(active, op.And(op.Not(singular), op.Or(keep_k, take_imax)))
        two = op.And(active, op.Not(op.Or(op.Or(singular, keep_k), take_imax)))
        kk = op.Add(k, op.Cast(two, to=types.INT64.onnx))  # the row that takes the pivot: k, or k+1 of a 2x2
        kp = op.Where(op.And(active, op.Not(op.Or(singular, keep_k))), imax, kk)
        # the symmetric interchange of rows and columns kk and kp of the trailing matrix
        index = _swap_index(n, kk, kp)
        trailing = op.And(op.GreaterOrEqual(rows, k), op.GreaterOrEqual(cols, k))
        m = op.Where(trailing, _permute_cols(_permute_rows(m, index), index), m)
        # a 1x1 block: m[k+1:, k+1:] -= w (1/d) wᵀ with w = m[k+1:, k] (dsyr), then L = w (1/d) (dscal)
        colk = op.Gather(m, k, axis=-1)
        below = op.Greater(ar, k)
        w = op.Where(below, colk, zero)
        d11 = op.Div(one, op.Gather(colk, k, axis=-1))
        m1 = op.Add(m, _outer(w, op.Mul(op.Neg(_last(d11)), w)))
        update = op.And(op.Greater(rows, k), op.Greater(cols, k))
        update = op.And(update, _last2(op.Not(op.Equal(d11, zero))))  # dsyr returns at once when alpha is 0 (d = ±inf)
        m1 = op.Where(update, m1, m)
        m1 = op.Where(op.And(op.Greater(rows, k), op.Equal(cols, k)), op.Unsqueeze(op.Mul(w, _last(d11)), [-1]), m1)
        # a 2x2 block (k, k+1): dsytf2's rank-2 update of m[k+2:, k+2:] and L's two columns
        k1 = op.Min(op.Add(k, 1), np.array(n - 1, np.int64))
        colk1 = op.Gather(m, k1, axis=-1)
        d21 = op.Gather(colk, k1, axis=-1)
        d11 = op.Div(op.Gather(colk1, k1, axis=-1), d21)
        d22 = op.Div(op.Gather(colk, k, axis=-1), d21)
        t = op.Div(one, op.Sub(op.Mul(d11, d22), one))
        d21 = op.Div(t, d21)
        below2 = op.Greater(ar, k1)
        ck, ck1 = op.Where(below2, colk, zero), op.Where(below2, colk1, zero)
        wk = op.Mul(_last(d21), op.Sub(op.Mul(_last(d11), ck), ck1))
        wkp1 = op.Mul(_last(d21), op.Sub(op.Mul(_last(d22), ck1), ck))
        m2 = op.Sub(op.Sub(m, _outer(ck, wk)), _outer(ck1, wkp1))
        m2 = op.Where(op.And(op.Greater(rows, k1), op.Greater(cols, k1)), m2, m)
        m2 = op.Where(op.And(op.Greater(rows, k1), op.Equal(cols, k)), op.Unsqueeze(wk, [-1]), m2)
        m2 = op.Where(op.And(op.Greater(rows, k1), op.Equal(cols, k1)), op.Unsqueeze(wkp1, [-1]), m2)
        m = op.Where(_last2(one_by_one), m1, op.Where(_last2(two), m2, m))
        # the trailing matrix symmetric again, from the lower triangle LAPACK updated
        mirrored = op.Add(tril(m), tr(tril(m, -1)))
        m = op.Where(op.And(op.Greater(rows, k), op.Greater(cols, k)), mirrored, m)
        # 1-based pivots: kp at k, or -kp at k and k+1 for a 2x2 block
        kp1 = op.Add(kp, 1)
        value = _last(op.Where(two, op.Neg(kp1), kp1))
        piv = op.Where(op.And(_last(active), op.Equal(ar, k)), value, piv)
        piv = op.Where(op.And(_last(two), op.Equal(ar, op.Add(k, 1))), value, piv)
        first = op.And(op.And(active, singular), op.Equal(info, np.array(0, np.int32)))
        info = op.Where(first, op.Cast(op.Add(k, 1), to=types.INT32.onnx), info)
        return None, [m, piv, info, two]

    symmetric = op.Add(tril(a), tr(tril(a, -1)))
    piv = _zeros(op.Concat(batch, [n], axis=0), types.INT64)
    skip = _zeros(batch, types.BOOL)
    m, piv, info, _ = loop(n, [symmetric, piv, info, skip], step)
    return tril(m), op.Cast(piv, to=types.INT32.onnx), info


def _ldl_solve(ld: Value, piv: Value, b: Value) -> Value:
    """X with A X = B from A's factorisation (LD, pivots): LAPACK's ?sytrs, lower. B is
    (..., n, r); LD (..., n, n) and pivots (..., n) share their batch shape, broadcast with B's."""
    n = ld.static_dim(-1)
    if n == 0:
        return b
    ar = np.arange(n)
    rows = ar[:, None]
    zero, one = np.zeros((), ld.known_dtype.numpy), np.ones((), ld.known_dtype.numpy)
    piv = op.Cast(piv, to=types.INT64.onnx)
    batch = op.Shape(ld, end=-2)
    skip = _zeros(batch, types.BOOL)

    def forward(k: Value, carried: list[Value]) -> tuple[None, list[Value]]:
        """Solve L D Y = B, one block of D at a time from the top."""
        b, skip = carried
        active = op.Not(skip)
        p = op.Gather(piv, k, axis=-1)  # (...)
        positive = op.Greater(p, np.array(0, np.int64))
        one_by_one, two = op.And(active, positive), op.And(active, op.Not(positive))
        # interchange rows k (k+1 of a 2x2 block) and |p| - 1
        kk = op.Add(k, op.Cast(two, to=types.INT64.onnx))
        kp = op.Where(active, op.Sub(op.Abs(p), 1), kk)
        b = _permute_rows(b, _swap_index(n, kk, kp))
        colk = op.Gather(ld, k, axis=-1)  # (..., n)
        bk = op.Gather(b, k, axis=-2)  # (..., r)
        # 1x1: B[k+1:] -= L[k+1:, k] B[k] (dger), then B[k] *= 1 / D[k, k] (dscal)
        below = op.Greater(ar, k)
        b1 = op.Where(op.Greater(rows, k), op.Sub(b, _outer(op.Where(below, colk, zero), bk)), b)
        dkk = op.Gather(colk, k, axis=-1)
        b1 = op.Where(op.Equal(rows, k), op.Unsqueeze(op.Mul(bk, _last(op.Div(one, dkk))), [-2]), b1)
        # 2x2 (k, k+1): B[k+2:] -= L[k+2:, k] B[k], then -= L[k+2:, k+1] B[k+1]; then D's block
        k1 = op.Min(op.Add(k, 1), np.array(n - 1, np.int64))
        colk1 = op.Gather(ld, k1, axis=-1)
        bk1 = op.Gather(b, k1, axis=-2)
        below2 = op.Greater(ar, k1)
        b2 = op.Sub(op.Sub(b, _outer(op.Where(below2, colk, zero), bk)), _outer(op.Where(below2, colk1, zero), bk1))
        b2 = op.Where(op.Greater(rows, k1), b2, b)
        akm1k = op.Gather(colk, k1, axis=-1)
        akm1 = _last(op.Div(dkk, akm1k))
        ak = _last(op.Div(op.Gather(colk1, k1, axis=-1), akm1k))
        denom = op.Sub(op.Mul(akm1, ak), one)
        bkm1, bk_ = op.Div(bk, _last(akm1k)), op.Div(bk1, _last(akm1k))
        xk = op.Div(op.Sub(op.Mul(ak, bkm1), bk_), denom)
        xk1 = op.Div(op.Sub(op.Mul(akm1, bk_), bkm1), denom)
        b2 = op.Where(op.Equal(rows, k), op.Unsqueeze(xk, [-2]), b2)
        b2 = op.Where(op.Equal(rows, k1), op.Unsqueeze(xk1, [-2]), b2)
        b = op.Where(_last2(one_by_one), b1, op.Where(_last2(two), b2, b))
        return None, [b, two]

    def backward(i: Value, carried: list[Value]) -> tuple[None, list[Value]]:
        """Solve Lᵀ X = Y, one block of D at a time from the bottom."""
        b, skip = carried
        k = op.Sub(np.array(n - 1, np.int64), i)
        active = op.Not(skip)
        p = op.Gather(piv, k, axis=-1)
        two = op.And(active, op.Not(op.Greater(p, np.array(0, np.int64))))
        # B[k] -= B[k+1:]ᵀ L[k+1:, k] (dgemv); for a 2x2 block (k-1, k) B[k-1] too, with L[k+1:, k-1]
        below = op.Unsqueeze(op.Greater(ar, k), [-1])  # (n, 1)
        bk = op.Sub(op.Gather(b, k, axis=-2), _dot(op.Gather(ld, k, axis=-1), b, below))
        km1 = op.Max(op.Sub(k, 1), np.array(0, np.int64))
        bkm1 = op.Sub(op.Gather(b, km1, axis=-2), _dot(op.Gather(ld, km1, axis=-1), b, below))
        updated = op.Where(op.Equal(rows, k), op.Unsqueeze(bk, [-2]), b)
        updated = op.Where(op.And(_last2(two), op.Equal(rows, km1)), op.Unsqueeze(bkm1, [-2]), updated)
        b = op.Where(_last2(active), updated, b)
        # interchange rows k and |p| - 1
        kp = op.Where(active, op.Sub(op.Abs(p), 1), k)
        b = _permute_rows(b, _swap_index(n, op.Expand(k, op.Shape(kp)), kp))
        return None, [b, two]

    b, _ = loop(n, [b, skip], forward)
    b, _ = loop(n, [b, skip], backward)
    return b


def _dot(column: Value, b: Value, mask: np.ndarray | Value) -> Value:
    """Σ_i column[..., i] b[..., i, :] over the rows the (n, 1) mask keeps: (..., r)."""
    terms = op.Where(mask, op.Mul(op.Unsqueeze(column, [-1]), b), 0)
    return reduce("Sum", terms, [-2])


@aten_op("aten::linalg_ldl_factor_ex")
def aten_linalg_ldl_factor_ex(
    self: TFloat, *, hermitian: bool = False, check_errors: bool = False
) -> tuple[TFloat, TInt, TInt]:
    """linalg_ldl_factor_ex(Tensor self, *, bool hermitian=False, bool check_errors=False) -> (Tensor LD, Tensor pivots, Tensor info)"""
    check_square("linalg.ldl_factor_ex", self, "self")  # real input: hermitian is symmetric
    return _ldl(self)


@aten_op("aten::linalg_ldl_factor")
def aten_linalg_ldl_factor(self: TFloat, *, hermitian: bool = False) -> tuple[TFloat, TInt]:
    """linalg_ldl_factor(Tensor self, *, bool hermitian=False) -> (Tensor LD, Tensor pivots)"""
    check_square("linalg.ldl_factor", self, "self")
    ld, piv, _ = _ldl(self)
    return ld, piv


@aten_op("aten::linalg_ldl_solve")
def aten_linalg_ldl_solve(LD: TFloat, pivots: TInt, B: TFloat, *, hermitian: bool = False) -> TFloat:
    """linalg_ldl_solve(Tensor LD, Tensor pivots, Tensor B, *, bool hermitian=False) -> Tensor"""
    n = check_square("linalg.ldl_solve", LD, "LD")
    check_matrix("linalg.ldl_solve", B, "B")
    if B.dtype is not LD.dtype:
        raise TypeError(
            f"linalg.ldl_solve: LD and B must have one dtype, got {LD.dtype} and {B.dtype} (torch raises too)"
        )
    ld, b = broadcast_batch(LD, B)
    piv = op.Expand(pivots, op.Concat(op.Shape(ld, end=-2), [n], axis=0))
    return _ldl_solve(ld, piv, b)
