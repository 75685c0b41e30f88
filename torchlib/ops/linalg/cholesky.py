"""Cholesky factorisation (cholesky, linalg_cholesky_ex) and the solves it gives
(cholesky_solve, cholesky_inverse).

A = L Lᵀ, one column at a time (LAPACK's potf2, unrolled over the static matrix dimension;
batch dimensions may be dynamic): L[j, j] = sqrt(A[j, j] - |L[j, :j]|²) and the column below
is (A[j+1:, j] - L[j+1:, :j] L[j, :j]ᵀ) / L[j, j]. Only the lower triangle of A is read (the
upper one for upper=True, as torch). Where a pivot is not positive (A is not positive-definite),
`info` is its 1-based index, as LAPACK's; the factor's columns from there on are not
meaningful (torch's neither), and cholesky (no `_ex`) has no check to raise.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import TFloat
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


def _cholesky(a: Value) -> tuple[Value, Value]:
    """(L, info) for the lower triangle of a."""
    n = a.shape[-1]  # type: ignore[index]
    a = tril(a)
    factor = zeros_like(a)
    info = op.ConstantOfShape(op.Shape(a, end=-2), value=np.zeros(1, np.int32))
    zero = op.CastLike(0, a)
    for j in range(n):
        done = row(factor, j, keep=True)  # (..., 1, n): L[j, :j], zeros after
        column = op.Sub(col(a, j, keep=True), mm(factor, tr(done)))  # (..., n, 1)
        d = op.Gather(column, [j], axis=-2)  # (..., 1, 1)
        bad = op.Not(op.Greater(d, zero))  # not positive, or NaN
        first = op.And(op.Equal(info, 0), op.Squeeze(bad, [-1, -2]))
        info = op.Where(first, np.array(j + 1, np.int32), info)
        new = op.Div(column, op.Sqrt(d))
        factor = op.Where(
            op.And((rows(n) >= j), np.arange(n)[None, :] == j),
            new,
            factor,
        )
    return factor, info


def _factor(fn: str, A: Value, upper: bool) -> tuple[Value, Value]:
    check_square(fn, A)
    lower, info = _cholesky(tr(A) if upper else A)
    return (tr(lower) if upper else lower), info


@aten_op("aten::linalg_cholesky_ex")
def aten_linalg_cholesky_ex(self: TFloat, *, upper: bool = False, check_errors: bool = False) -> tuple[TFloat, TFloat]:
    """linalg_cholesky_ex(Tensor self, *, bool upper=False, bool check_errors=False) -> (Tensor L, Tensor info)"""
    return _factor("linalg.cholesky_ex", self, upper)


@aten_op("aten::cholesky")
def aten_cholesky(self: TFloat, upper: bool = False) -> TFloat:
    """cholesky(Tensor self, bool upper=False) -> Tensor"""
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
