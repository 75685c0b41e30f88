"""Cholesky factorisation (cholesky, linalg_cholesky_ex) and the solves it gives
(cholesky_solve, cholesky_inverse).

A = L Lᵀ, one column at a time (LAPACK's potf2, unrolled over the static matrix dimension;
batch dimensions may be dynamic): L[j, j] = sqrt(A[j, j] - |L[j, :j]|²) and the column below
is (A[j+1:, j] - L[j+1:, :j] L[j, :j]ᵀ) / L[j, j]. Only the lower triangle of A is read (the
upper one for upper=True, as torch). Where a pivot is not positive or NaN (A is not
positive-definite), `info` is its 1-based index and the factorisation stops there, as LAPACK's
potf2: that diagonal element holds the reduced pivot and the columns from there on hold A's
own; cholesky (no `_ex`) has no check to raise.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops.linalg._common import (
    check_matrix,
    check_square,
    col,
    mm,
    row,
    rows,
    substitute,
    tr,
    tril,
    zeros_like,
)
from torchlib.registry import aten_op


def _cholesky(a: Value, float32: bool = False) -> tuple[Value, Value]:
    """(L, info) for the lower triangle of a. With `float32` (a float32 input held in
    float64), every stored and reduced value is rounded to float32 (so a dot product beyond its
    range overflows, and inf - inf gives torch's NaN pivot), while the square root and the
    scaling are computed in float64 and rounded once; an inf pivot scales the column below it by
    NaN, as torch's float32 kernel does (MKL's spotrf: its float64 one gives 1/inf = 0)."""

    def rounded(x: Value) -> Value:
        return op.Cast(op.Cast(x, to=types.FLOAT.onnx), to=types.DOUBLE.onnx) if float32 else x

    n = a.static_dim(-1)
    a = tril(a)
    factor = zeros_like(a)
    info = op.ConstantOfShape(op.Shape(a, end=-2), value=np.zeros(1, np.int32))
    zero = op.CastLike(0, a)
    for j in range(n):
        done = row(factor, j, keep=True)  # (..., 1, n): L[j, :j], zeros after
        original = col(a, j, keep=True)  # (..., n, 1)
        column = rounded(op.Sub(original, rounded(mm(factor, tr(done)))))
        d = op.Gather(column, [j], axis=-2)  # (..., 1, 1)
        stopped = op.Unsqueeze(op.Not(op.Equal(info, 0)), [-1, -2])  # an earlier pivot failed
        bad = op.Not(op.Greater(d, zero))  # not positive, or NaN
        first = op.And(op.Equal(info, 0), op.Squeeze(bad, [-1, -2]))
        info = op.Where(first, np.array(j + 1, np.int32), info)
        # potf2 stops at the first bad pivot: it stores the reduced pivot there and leaves the
        # columns from there on as A's
        failed = op.Where(rows(n) == j, d, original)
        root = op.Sqrt(d)
        scale = op.Reciprocal(root)  # potf2: sqrt, then the column below scaled by 1 / it
        if float32:
            scale = op.Where(op.IsInf(root), op.CastLike(np.nan, root), scale)
        good = rounded(op.Where(rows(n) == j, root, op.Mul(column, scale)))
        new = op.Where(op.Or(stopped, bad), op.Where(stopped, original, failed), good)
        factor = op.Where(
            op.And((rows(n) >= j), np.arange(n)[None, :] == j),
            new,
            factor,
        )
    return factor, info


def _factor(fn: str, A: Value, upper: bool) -> tuple[Value, Value]:
    """float32 is held in float64 and rounded to float32 at each step (see _cholesky): torch's
    float32 L[j, i] = A[j, i] / sqrt(A[i, i]) of A[i, i] = A[j, i] = max is the float32 below
    2^64, whose square is representable; plain float32 rounds the quotient to 2^64, and the
    reduced pivot A[j, j] - L[j, i]² overflows to -inf where torch's is -max."""
    check_square(fn, A)
    a = op.Cast(A, to=types.DOUBLE.onnx) if A.dtype is types.FLOAT else A
    lower, info = _cholesky(tr(a) if upper else a, float32=A.dtype is types.FLOAT)
    return op.CastLike(tr(lower) if upper else lower, A), info


@aten_op("aten::linalg_cholesky_ex")
def aten_linalg_cholesky_ex(self: TFloat, *, upper: bool = False, check_errors: bool = False) -> tuple[TFloat, TFloat]:
    """linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)"""
    return _factor("linalg.cholesky_ex", self, upper)


@aten_op("aten::cholesky", if_torch_has=True)  # removed in torch 2.14 (torch.linalg.cholesky replaces it)
def aten_cholesky(self: TFloat, upper: bool = False) -> TFloat:
    """cholesky(Tensor self, bool upper=False) -> Tensor"""
    if self.shape is not None and 0 in self.shape:
        check_matrix("cholesky", self, "self")
        return op.Identity(self)  # torch returns an empty input as it is, before checking that it is square
    return _factor("cholesky", self, upper)[0]


def _cholesky_solve(b: Value, factor: Value, upper: bool) -> Value:
    """X with A X = B, A = L Lᵀ (or Uᵀ U with upper)."""
    lower = tr(factor) if upper else factor
    return substitute(tr(lower), substitute(lower, b, upper=False), upper=True)


@aten_op("aten::cholesky_solve")
def aten_cholesky_solve(self: TFloat, input2: TFloat, upper: bool = False) -> TFloat:
    """cholesky_solve(Tensor self, Tensor input2, bool upper=False) -> Tensor"""
    check_square("cholesky_solve", input2, "input2")
    check_matrix("cholesky_solve", self, "self")
    if self.dtype is not input2.dtype:
        raise TypeError(
            f"cholesky_solve: self and input2 must have one dtype, got {self.dtype} and {input2.dtype} (torch raises too)"
        )
    return _cholesky_solve(self, input2, upper)


@aten_op("aten::cholesky_inverse")
def aten_cholesky_inverse(self: TFloat, upper: bool = False) -> TFloat:
    """cholesky_inverse(Tensor self, bool upper=False) -> Tensor"""
    n = check_square("cholesky_inverse", self, "self")
    identity = op.CastLike(np.eye(n), self)
    x = _cholesky_solve(identity, op.Trilu(self, upper=int(upper)), upper)
    return op.Mul(op.Add(x, tr(x)), op.CastLike(0.5, x))  # exactly symmetric, as torch's
