"""Scans and selections: cummax, cummin, logcumsumexp, nansum, nanmean, aminmax, kthvalue,
median, nanmedian, msort, count_nonzero.

cummax/cummin/logcumsumexp compare every position of the scanned dim with every earlier one (an
[n, n] lower-triangular mask): memory O(numel x n), fine for the sizes models scan.
NaN: cummax/cummin hold the NaN from its position on, at the last NaN's index, as torch does.
Indices of equal values: cummax/cummin give the last index of the running extreme,
as torch does; kthvalue/median give the first among equal values, torch's choice may differ.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt, TReal, TRealOrBool
from graph_builder.types import DType
from torchlib.ops._helpers import dim_size, normalize_dim
from torchlib.ops.reductions import aten_amax, aten_amin, aten_sum_dim_IntList
from torchlib.ops.sort_topk import _sort, _topk
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

# onnxruntime's ReduceMax/ReduceMin/Where/Equal lack these dtypes; each is computed exactly in another
_SCAN_DTYPE = {types.BOOL: types.INT32, types.BFLOAT16: types.FLOAT, types.FLOAT16: types.FLOAT,
               types.INT8: types.INT32, types.INT16: types.INT32, types.UINT8: types.INT32}  # fmt: skip


def _last(x: Value, axis: int) -> Value:
    """x with `axis` moved to the end."""
    perm = [i for i in range(x.known_rank) if i != axis] + [axis]
    return op.Transpose(x, perm=perm)


def _back(x: Value, axis: int) -> Value:
    """The inverse of _last."""
    rank = x.known_rank
    perm = list(range(rank - 1))
    perm.insert(axis, rank - 1)
    return op.Transpose(x, perm=perm)


def _scan_axis(self: Value, dim: int) -> int:
    if self.rank is None:
        raise ValueError(f"scans need the rank of {self.name!r} to be known")
    if self.rank == 0:
        if dim not in (0, -1):
            raise IndexError(f"dim {dim} is out of range for a 0-d tensor")
        return 0
    if not -self.rank <= dim < self.rank:
        raise IndexError(f"dim {dim} is out of range for a tensor of rank {self.rank}")
    return normalize_dim(dim, self.rank)


def _earlier(x: Value) -> tuple[Value, Value]:
    """For x [..., n]: the mask [n(i), n(j)] of i <= j, and the positions 0..n-1 as [n, 1]."""
    n = dim_size(x, x.known_rank - 1)
    positions = op.Range(np.array(0, np.int64), n if isinstance(n, Value) else np.array(n, np.int64), np.array(1, np.int64))
    i, j = op.Unsqueeze(positions, [1]), op.Unsqueeze(positions, [0])
    return op.LessOrEqual(i, j), i


def _cum_extreme(self: Value, dim: int, largest: bool) -> tuple[Value, Value]:
    axis = _scan_axis(self, dim)
    if self.rank == 0:
        return op.Identity(self), op.ConstantOfShape(op.Shape(self), value=np.zeros(1, np.int64))
    compute = _SCAN_DTYPE.get(self.known_dtype, self.known_dtype)
    x = _last(cast_to(self, compute), axis)  # [..., n]
    mask, i = _earlier(x)
    xi = op.Unsqueeze(x, [-1])  # [..., n(i), 1]
    info = np.finfo if compute.is_floating else np.iinfo
    fill = -np.inf if compute.is_floating and largest else np.inf if compute.is_floating else \
        (info(compute.numpy).min if largest else info(compute.numpy).max)  # fmt: skip
    candidates = op.Where(mask, xi, op.CastLike(np.array(fill, compute.numpy), x))  # [..., n(i), n(j)]
    reduce = op.ReduceMax if largest else op.ReduceMin
    # the reductions are reshaped to x's shape: onnxruntime keeps the reduced dim of an empty input
    values = op.Reshape(reduce(candidates, [-2], keepdims=0), op.Shape(x), allowzero=1)  # [..., n]
    reached = op.And(mask, op.Equal(xi, op.Unsqueeze(values, [-2])))
    indices = op.Reshape(op.ReduceMax(op.Where(reached, i, np.array(-1, np.int64)), [-2], keepdims=0), op.Shape(x), allowzero=1)
    if compute.is_floating:
        # torch takes every NaN it meets (`isnan(x) || (!isnan(out) && x >= out)`): from the first
        # NaN on, the value is NaN and the index the last NaN's so far
        nan_at = op.Where(op.And(mask, op.IsNaN(xi)), i, np.array(-1, np.int64))
        last_nan = op.Reshape(op.ReduceMax(nan_at, [-2], keepdims=0), op.Shape(x), allowzero=1)
        seen = op.GreaterOrEqual(last_nan, np.array(0, np.int64))
        values = op.Where(seen, op.CastLike(np.nan, values), values)
        indices = op.Where(seen, last_nan, indices)
    return cast_to(_back(values, axis), self.known_dtype), _back(indices, axis)


@aten_op("aten::cummax")
def aten_cummax(self: TRealOrBool, dim: int) -> tuple[TRealOrBool, TInt]:
    """cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)"""
    return _cum_extreme(self, dim, largest=True)


@aten_op("aten::cummin")
def aten_cummin(self: TRealOrBool, dim: int) -> tuple[TRealOrBool, TInt]:
    """cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)"""
    return _cum_extreme(self, dim, largest=False)


@aten_op("aten::logcumsumexp")
def aten_logcumsumexp(self: TFloat, dim: int) -> TFloat:
    """logcumsumexp(Tensor self, int dim) -> Tensor"""
    axis = _scan_axis(self, dim)
    if self.rank == 0:
        return op.Identity(self)
    compute = types.FLOAT if self.dtype in (types.FLOAT16, types.BFLOAT16) else self.known_dtype
    x = _last(cast_to(self, compute), axis)
    mask, _ = _earlier(x)
    candidates = op.Where(mask, op.Unsqueeze(x, [-1]), op.CastLike(-np.inf, x))  # [..., n(i), n(j)]
    # logsumexp over i <= j, shifted by the running maximum so that exp cannot overflow
    top = op.ReduceMax(candidates, [-2], keepdims=1)
    safe_top = op.Where(op.IsInf(top), op.CastLike(0, top), top)
    total = op.ReduceSum(op.Exp(op.Sub(candidates, safe_top)), [-2], keepdims=1)
    result = op.Reshape(op.Add(op.Log(total), safe_top), op.Shape(x), allowzero=1)  # drops the reduced dim
    return cast_to(_back(result, axis), self.known_dtype)


@aten_op("aten::nansum")
def aten_nansum(
    self: TRealOrBool, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: DType | None = None
) -> TReal:
    """nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    x = self
    if self.known_dtype.is_floating:
        x = op.Where(op.IsNaN(self), op.CastLike(0, self), self) if self.dtype is not types.BFLOAT16 else \
            cast_to(op.Where(op.IsNaN(cast_to(self, types.FLOAT)), 0.0, cast_to(self, types.FLOAT)), types.BFLOAT16)  # fmt: skip
    return aten_sum_dim_IntList(x, dim, keepdim, dtype=dtype)


@aten_op("aten::nanmean")
def aten_nanmean(
    self: TFloat, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    if not self.known_dtype.is_floating:
        raise TypeError(f"nanmean expects a floating point input, got {self.dtype}")
    total = aten_nansum(self, dim, keepdim, dtype=dtype)
    present = op.Not(op.IsNaN(cast_to(self, types.FLOAT) if self.dtype is types.BFLOAT16 else self))
    count = aten_sum_dim_IntList(op.Cast(present, to=types.INT64.onnx), dim, keepdim)
    compute = types.FLOAT if total.dtype in (types.FLOAT16, types.BFLOAT16) else total.known_dtype
    return cast_to(op.Div(cast_to(total, compute), cast_to(count, compute)), total.known_dtype)


@aten_op("aten::aminmax")
def aten_aminmax(self: TRealOrBool, *, dim: int | None = None, keepdim: bool = False) -> tuple[TRealOrBool, TRealOrBool]:
    """aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)"""
    dims = [] if dim is None else [dim]
    low, high = aten_amin(self, dims, keepdim), aten_amax(self, dims, keepdim)
    if dim is None and keepdim and self.known_rank > 0:  # torch keeps every dim as 1
        return op.Reshape(low, [1] * self.known_rank), op.Reshape(high, [1] * self.known_rank)
    return low, high


def _kth(self: Value, k: Any, dim: int, keepdim: bool) -> tuple[Value, Value]:
    """The k-th smallest (1-based) along dim, and its index."""
    axis = _scan_axis(self, dim)
    if self.rank == 0:
        return op.Identity(self), op.ConstantOfShape(op.Shape(self), value=np.zeros(1, np.int64))
    values, indices = _topk(self, k, axis, False, True)
    last = op.Reshape(op.Sub(cast_to(k, types.INT64) if isinstance(k, Value) else np.array(k, np.int64), 1), [1])
    values, indices = op.Gather(values, last, axis=axis), op.Gather(indices, last, axis=axis)
    if not keepdim:
        values, indices = op.Squeeze(values, [axis]), op.Squeeze(indices, [axis])
    return values, indices


@aten_op("aten::kthvalue", not_unique="the index of a value that occurs more than once may be any of its positions", free_outputs=(1,))
def aten_kthvalue(self: TReal, k: int, dim: int = -1, keepdim: bool = False) -> tuple[TReal, TInt]:
    """kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    return _kth(self, k, dim, keepdim)


def _lower_median_k(x: Value, axis: int) -> Any:
    """(n - 1) // 2 + 1: the 1-based rank of torch's (lower) median along axis."""
    n = dim_size(x, axis)
    if isinstance(n, int):
        return (n - 1) // 2 + 1
    return op.Add(op.Div(op.Sub(n, 1), 2), 1)


def _median(self: Value, axis: int, keepdim: bool) -> tuple[Value, Value]:
    """The lower median along axis; NaN (at the first NaN's index) where the values hold a NaN,
    as in torch (use nanmedian to skip them)."""
    values, indices = _kth(self, _lower_median_k(self, axis), axis, keepdim)
    if not self.known_dtype.is_floating:
        return values, indices
    nan = op.Cast(op.IsNaN(self), to=types.UINT8.onnx)
    has_nan = op.Cast(op.ReduceMax(nan, [axis], keepdims=int(keepdim)), to=types.BOOL.onnx)
    first_nan = op.ArgMax(nan, axis=axis, keepdims=int(keepdim))
    wide = cast_to(values, types.FLOAT) if values.dtype is types.BFLOAT16 else values  # no bfloat16 Where
    values = cast_to(op.Where(has_nan, op.CastLike(math.nan, wide), wide), values.known_dtype)
    return values, op.Where(has_nan, first_nan, indices)


def _flat_or_nan(self: Value) -> Value:
    """self flattened; for an empty self, one NaN cast to self's dtype instead, which is torch's
    median of no values (NaN for floats; for ints the cast's result: MIN for int32/int64, 0 for
    the narrower ints), never an out-of-bounds Gather."""
    flat = op.Reshape(self, np.array([-1], np.int64))
    nan = op.Cast(np.array([math.nan], np.float32), to=self.known_dtype.onnx)
    count = op.Max(op.Shape(flat), np.array([1], np.int64))
    return op.Slice(op.Concat(flat, nan, axis=0), np.array([0], np.int64), count)


@aten_op("aten::median")
def aten_median(self: TReal) -> TReal:
    """median(Tensor self) -> Tensor"""
    return _median(_flat_or_nan(self), 0, False)[0]


@aten_op("aten::median.dim")
def aten_median_dim(self: TReal, dim: int, keepdim: bool = False) -> tuple[TReal, TInt]:
    """median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    axis = _scan_axis(self, dim)
    if self.rank == 0:
        return _kth(self, 1, dim, keepdim)
    return _median(self, axis, keepdim)


@aten_op("aten::msort")
def aten_msort(self: TRealOrBool) -> TRealOrBool:
    """msort(Tensor self) -> Tensor"""
    return _sort(self, 0, False)[0]


def _count_nonzero(self: Value, dims: list[int]) -> Value:
    nonzero = op.Cast(self if self.dtype is types.BOOL else op.Cast(self, to=types.BOOL.onnx), to=types.INT64.onnx)
    return aten_sum_dim_IntList(nonzero, dims, False)


@aten_op("aten::count_nonzero")
def aten_count_nonzero(self: TRealOrBool, dim: int | None = None) -> TInt:
    """count_nonzero(Tensor self, int? dim=None) -> Tensor"""
    return _count_nonzero(self, [] if dim is None else [dim])


@aten_op("aten::count_nonzero.dim_IntList")
def aten_count_nonzero_dim_IntList(self: TRealOrBool, dim: Sequence[int]) -> TInt:
    """count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor"""
    return _count_nonzero(self, list(dim))


def _nanmedian(self: Value, axis: int, keepdim: bool) -> tuple[Value, Value]:
    """The lower median of the non-NaN values along axis (NaN where every value is NaN)."""
    x = cast_to(self, types.FLOAT) if self.dtype is types.BFLOAT16 else self
    nan = op.IsNaN(x)
    values, indices = _sort(op.Where(nan, op.CastLike(np.inf, x), x), axis, False)  # NaN sorts last
    # ... but ties with a real +inf keep the input's order: a second stable sort on "is NaN"
    # moves every NaN after the +infs (the index of a +inf median is then a +inf's)
    flags = op.GatherElements(op.Cast(nan, to=types.INT64.onnx), indices, axis=axis)
    _, order = _sort(flags, axis, False)
    values, indices = op.GatherElements(values, order, axis=axis), op.GatherElements(indices, order, axis=axis)
    present = op.ReduceSum(op.Cast(op.Not(nan), to=types.INT64.onnx), [axis], keepdims=1)
    position = op.Max(op.Div(op.Sub(present, 1), 2), np.array(0, np.int64))
    value = op.Where(op.Equal(present, 0), op.CastLike(np.nan, x), op.GatherElements(values, position, axis=axis))
    index = op.GatherElements(indices, position, axis=axis)
    if not keepdim:
        value, index = op.Squeeze(value, [axis]), op.Squeeze(index, [axis])
    return cast_to(value, self.known_dtype), index


@aten_op("aten::nanmedian")
def aten_nanmedian(self: TReal) -> TReal:
    """nanmedian(Tensor self) -> Tensor"""
    if not self.known_dtype.is_floating:
        return aten_median(self)
    return _nanmedian(_flat_or_nan(self), 0, False)[0]


@aten_op("aten::nanmedian.dim")
def aten_nanmedian_dim(self: TReal, dim: int, keepdim: bool = False) -> tuple[TReal, TInt]:
    """nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)

    Known gap: where every value along dim is NaN, the value is NaN as in torch but the index
    may differ from torch's."""
    axis = _scan_axis(self, dim)
    if not self.known_dtype.is_floating or self.rank == 0:
        return aten_median_dim(self, dim, keepdim)
    return _nanmedian(self, axis, keepdim)
