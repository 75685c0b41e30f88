"""Sums and reductions over a batch or along a dim: index_reduce (prod, mean, amax, amin), addbmm (the sum of a batch of matrix products, added to
self as addmm does) and diff (n-th forward differences along a dim, with prepend/append)."""

from __future__ import annotations

from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TInt, TReal, TRealOrBool
from torchlib.ops._helpers import normalize_dim
from torchlib.ops.elementwise import _div_floor_int, aten_sub
from torchlib.ops.linalg.products import aten_addmm
from torchlib.promotion import cast_to, promote_all
from torchlib.registry import aten_op


@aten_op("aten::addbmm")
def aten_addbmm(self: TReal, batch1: TReal, batch2: TReal, *, beta: float = 1, alpha: float = 1) -> TReal:
    """addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    if batch1.rank != 3 or batch2.rank != 3:
        raise ValueError(f"aten::addbmm expects 3-D batch1 and batch2, got ranks {batch1.rank} and {batch2.rank}")
    if self.dtype in (types.FLOAT16, types.BFLOAT16):
        return _addbmm_half(self, batch1, batch2, beta, alpha)
    # sum_b batch1[b] @ batch2[b] is one product: (n, B*m) @ (B*m, p)
    n, p = op.Shape(batch1, start=1, end=2), op.Shape(batch2, start=2, end=3)
    minus_one = op.Constant(value=np.array([-1], np.int64))
    mat1 = op.Reshape(op.Transpose(batch1, perm=[1, 0, 2]), op.Concat(n, minus_one, axis=0))
    mat2 = op.Reshape(batch2, op.Concat(minus_one, p, axis=0))
    return aten_addmm(self, mat1, mat2, beta=beta, alpha=alpha)


def _addbmm_half(self: Value, batch1: Value, batch2: Value, beta: float, alpha: float) -> Value:
    """torch's CPU kernel for the half types: one addmm per batch element, each computed in
    float32 and rounded to the half type once (the batch size must be static)."""
    count = batch1.shape[0] if batch1.shape else None
    if not isinstance(count, int):
        raise ValueError(f"aten::addbmm on {self.dtype} needs a static batch size (torch rounds after each "
                         f"batch element), got shape {batch1.shape}")  # fmt: skip
    dtype = self.known_dtype
    products = op.MatMul(cast_to(batch1, types.FLOAT), cast_to(batch2, types.FLOAT))  # (B, n, p), exact sums
    out_shape = op.Shape(op.Gather(products, 0, axis=0))
    acc = op.Expand(cast_to(self, types.FLOAT), out_shape)
    acc = op.Mul(acc, op.Constant(value=np.array(beta, np.float32)))
    if beta == 0:  # torch ignores self (NaN included) when beta is 0
        acc = op.ConstantOfShape(out_shape, value=np.zeros(1, np.float32))
    if count == 0:
        return cast_to(acc, dtype)
    for b in range(count):
        step = op.Mul(op.Gather(products, b, axis=0), op.Constant(value=np.array(alpha, np.float32)))
        acc = cast_to(cast_to(op.Add(acc, step), dtype), types.FLOAT)
    return cast_to(acc, dtype)


def _difference(x: Value, axis: int) -> Value:
    big = np.iinfo(np.int64).max
    later, earlier = op.Slice(x, [1], [big], [axis]), op.Slice(x, [0], [-1], [axis])
    if x.dtype is types.BOOL:  # torch: a bool difference is a logical xor
        return op.Xor(later, earlier)
    if x.dtype in (types.FLOAT16, types.BFLOAT16):  # each difference rounded to the half type, as torch
        return cast_to(op.Sub(cast_to(later, types.FLOAT), cast_to(earlier, types.FLOAT)), x.dtype)
    return aten_sub(later, earlier)


@aten_op("aten::diff")
def aten_diff(
    self: TRealOrBool, n: int = 1, dim: int = -1, prepend: TRealOrBool | None = None, append: TRealOrBool | None = None
) -> TRealOrBool:
    """diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor"""
    if self.rank is None or self.rank == 0:
        raise ValueError(f"aten::diff needs an input of rank >= 1, got rank {self.rank}")
    axis = normalize_dim(dim, self.rank)
    if n == 0:  # torch: self unchanged, prepend and append ignored
        return op.Identity(self)
    parts: list[Any] = [t for t in (prepend, self, append) if t is not None]
    x = op.Concat(*promote_all(parts), axis=axis) if len(parts) > 1 else self
    for _ in range(n):
        x = _difference(x, axis)
    return x


def _expanded_index(index: Value, source: Value, axis: int) -> Value:
    """A 1-D index along axis, broadcast to source's shape (for ScatterElements)."""
    shape = [1] * source.known_rank
    shape[axis] = -1
    return op.Expand(op.Reshape(cast_to(index, types.INT64), shape), op.Shape(source))


_IDENTITY = {"prod": 1, "amax": -np.inf, "amin": np.inf}


@aten_op("aten::index_reduce")
def aten_index_reduce(
    self: TReal, dim: int, index: TInt, source: TReal, reduce: str, *, include_self: bool = True
) -> TReal:
    """index_reduce(Tensor self, int dim, Tensor index, Tensor source, str reduce, *, bool include_self=True) -> Tensor"""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"aten::index_reduce: reduce must be prod, mean, amax or amin, got {reduce!r}")
    dtype, scalar = self.known_dtype, self.rank == 0
    # integers in int64 (exact; a product or sum wrapped to the dtype is the int64 one wrapped),
    # the half types in float32
    wide = types.DOUBLE if dtype is types.DOUBLE else types.FLOAT if dtype.is_floating else types.INT64
    self, source = cast_to(self, wide), cast_to(source, wide)
    if scalar:
        self, source = op.Reshape(self, [1]), op.Reshape(source, [1])
    result = _index_reduce(self, dim, index, source, reduce, include_self, dtype)
    return cast_to(op.Reshape(result, []) if scalar else result, dtype)


def _index_reduce(self: Value, dim: int, index: Value, source: Value, reduce: str, include_self: bool,
                  dtype: types.DType) -> Value:  # fmt: skip
    integer = not dtype.is_floating
    axis = normalize_dim(dim, self.known_rank)
    idx = _expanded_index(index, source, axis)
    ones = op.ConstantOfShape(op.Shape(source), value=np.ones(1, self.known_dtype.numpy))
    zeros = op.ConstantOfShape(op.Shape(self), value=np.zeros(1, self.known_dtype.numpy))
    hits = op.ScatterElements(zeros, idx, ones, axis=axis, reduction="add")
    touched = op.Greater(hits, op.CastLike(0, hits))
    if reduce == "mean":
        start = self if include_self else op.Where(touched, op.CastLike(0, self), self)
        total = op.ScatterElements(start, idx, source, axis=axis, reduction="add")
        count = op.Add(hits, op.CastLike(1 if include_self else 0, hits))
        if integer:  # torch sums in the dtype (wrapping), then floor-divides
            total = cast_to(cast_to(total, dtype), types.INT64)
            count = op.Max(count, op.CastLike(1, count))  # untouched slots keep self below
        mean = _div_floor_int(total, count) if integer else op.Div(total, count)
        return op.Where(touched, mean, self)
    identity = _IDENTITY[reduce]
    if integer and reduce != "prod":
        identity = np.iinfo(np.int64).min if reduce == "amax" else np.iinfo(np.int64).max
    start = self if include_self else op.Where(touched, op.CastLike(identity, self), self)
    onnx_reduction = {"prod": "mul", "amax": "max", "amin": "min"}[reduce]
    result = op.ScatterElements(start, idx, source, axis=axis, reduction=onnx_reduction)
    if reduce == "prod" or integer:
        return result
    # onnxruntime's max/min skip NaN; torch's amax/amin propagate it
    nan_hits = op.ScatterElements(zeros, idx, cast_to(op.IsNaN(source), self.known_dtype), axis=axis, reduction="add")
    has_nan = op.Or(op.Greater(nan_hits, op.CastLike(0, nan_hits)), op.IsNaN(start))
    return op.Where(has_nan, op.CastLike(float("nan"), result), result)
