"""Reductions: sum, mean, prod, amax/amin, max/min, argmax/argmin, any/all, cumsum/cumprod,
logsumexp, var/std (and their _mean variants), norm and linalg_vector_norm; also max.other and
min.other, which are torch.maximum/minimum under the names of max/min.

Conventions shared by every function here:
- `dim=None` and `dim=[]` reduce over every dimension (except any/all.dims, where torch reads
  `dim=[]` as "reduce nothing"); a 0-d tensor accepts dim 0 and -1 and reduces to a 0-d tensor.
- float16 and bfloat16 accumulate in float32 and are cast back, as torch's CPU kernels do
  (onnxruntime has no bfloat16 kernels for these ops).
- NaN: onnxruntime's ReduceMax/ReduceMin/ArgMax/ArgMin skip NaN where torch propagates it
  (`torch.amax([1, nan]) == nan`, `argmax` gives the first NaN): floating inputs get a NaN mask.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TBool, TFloat, TInt, TReal, TRealOrBool
from graph_builder.types import DType
from torchlib.ops._helpers import dim_size
from torchlib.ops._kernels import MIN_MAX, nearest_supported, run_supported
from torchlib.promotion import cast_to, elementwise
from torchlib.registry import aten_op

_REDUCED_FLOATS = (types.FLOAT16, types.BFLOAT16)


def _dims(self: Value, dim: int | Sequence[int] | None) -> list[int]:
    """The reduced axes, non-negative; every axis for None or []; [] for a 0-d tensor."""
    rank = self.rank
    if rank is None:
        raise ValueError(f"reductions need the rank of {self.name!r} to be known")
    if isinstance(dim, int):
        dim = [dim]
    if rank == 0:
        for d in dim or []:
            if d not in (0, -1):
                raise IndexError(f"dim {d} is out of range for a 0-d tensor")
        return []
    if not dim:
        return list(range(rank))
    return sorted({d + rank if d < 0 else d for d in dim})


def _accumulate(x: Value) -> Value:
    """float16/bfloat16 -> float32, the accumulation type torch uses; other dtypes unchanged."""
    return op.Cast(x, to=types.FLOAT.onnx) if x.dtype in _REDUCED_FLOATS else x


def _reduce(reduce_op: Any, x: Value, axes: list[int], keepdim: bool) -> Value:
    """ReduceX over `axes` ([] with a 0-d input reduces it to itself)."""
    if not axes:
        return reduce_op(x, keepdims=int(keepdim))
    return reduce_op(x, axes, keepdims=int(keepdim))


def _reduced_last(x: Value, axes: list[int]) -> tuple[Value, Any, Value]:
    """x with the reduced axes moved last and flattened into one: (that [..., k] tensor, the
    kept dims' shape, k as an INT64 [1])."""
    kept = [d for d in range(x.known_rank) if d not in axes]
    moved = x if kept + axes == list(range(x.known_rank)) else op.Transpose(x, perm=kept + axes)
    shape = op.Shape(x)
    kept_shape = op.Gather(shape, np.array(kept, np.int64)) if kept else np.zeros(0, np.int64)
    count = op.ReduceProd(op.Gather(shape, np.array(axes, np.int64)), keepdims=1)
    return op.Reshape(moved, op.Concat(kept_shape, count, axis=0), allowzero=1), kept_shape, count


def int64_sum(x: Value, axes: list[int], keepdim: bool) -> Value:
    """ReduceSum of an INT64 tensor that wraps around on overflow as torch does: onnxruntime's
    int64 ReduceSum (and ReduceProd) go through double, so sum([MAX, MIN]) is 0 there, not -1.
    A MatMul with a vector of ones is exact int64 arithmetic. The reduced dims move last and are
    flattened; a zero column keeps the contracted dim non-empty (a MatMul over an empty dim can
    return stale memory in onnxruntime), and the ones are a [k + 1, 1] matrix (onnxruntime's
    MatMul rejects an empty matrix times a vector)."""
    if not axes:
        return x
    flat, kept_shape, count = _reduced_last(x, axes)
    zero = op.ConstantOfShape(op.Concat(kept_shape, np.array([1], np.int64), axis=0), value=np.array([0], np.int64))
    ones = op.ConstantOfShape(op.Concat(op.Add(count, np.array([1], np.int64)), np.array([1], np.int64), axis=0),
                              value=np.array([1], np.int64))
    total = op.Squeeze(op.MatMul(op.Concat(flat, zero, axis=-1), ones), np.array([-1], np.int64))
    return op.Unsqueeze(total, axes) if keepdim else total


def int64_prod(x: Value, axes: list[int], keepdim: bool) -> Value:
    """ReduceProd of an INT64 tensor that wraps around on overflow as torch does (onnxruntime's
    goes through double): Mul of the even and odd halves, halving until one column is left, when
    the reduced size is static; a Loop of Mul over it when it is not."""
    if not axes:
        return x
    flat, kept_shape, count = _reduced_last(x, axes)
    one_column = op.ConstantOfShape(op.Concat(kept_shape, np.array([1], np.int64), axis=0), value=np.array([1], np.int64))
    k = flat.shape[-1] if flat.shape is not None else None
    if isinstance(k, int):
        flat = op.Concat(flat, one_column, axis=-1) if k == 0 else flat
        k = max(k, 1)
        while k > 1:
            if k % 2:
                flat, k = op.Concat(flat, one_column, axis=-1), k + 1
            flat = op.Mul(op.Slice(flat, [0], [k], [-1], [2]), op.Slice(flat, [1], [k], [-1], [2]))
            k //= 2
        total = op.Squeeze(flat, np.array([-1], np.int64))
    else:
        from torchlib.ops.linalg._common import loop  # the Loop helper of the linalg package

        def body(i: Value, values: list[Value]) -> tuple[None, list[Value]]:
            product, columns = values
            return None, [op.Mul(product, op.Gather(columns, op.Reshape(i, np.array([1], np.int64)), axis=-1)), columns]

        product = loop(op.Squeeze(count, np.array([0], np.int64)), [one_column, flat], body)[0]
        total = op.Squeeze(product, np.array([-1], np.int64))
    return op.Unsqueeze(total, axes) if keepdim else total


def _count(x: Value, axes: list[int]) -> int | Value:
    """How many elements each reduction sees: an int when the dims are static, else INT64 scalar."""
    assert x.shape is not None
    sizes = [x.shape[a] for a in axes]
    if all(isinstance(s, int) for s in sizes):
        return math.prod(sizes)  # type: ignore[arg-type]
    if not axes:
        return 1
    return op.ReduceProd(op.Gather(op.Shape(x), axes), keepdims=0)


def _mean(x: Value, axes: list[int], keepdim: bool) -> Value:
    """ReduceMean, except that a reduction over no elements gives NaN as in torch (ReduceMean
    gives 0): when the count may be 0 the sum is divided by it."""
    n = _count(x, axes)
    if isinstance(n, int) and n > 0:
        return _reduce(op.ReduceMean, x, axes, keepdim)
    return op.Div(_reduce(op.ReduceSum, x, axes, keepdim), op.CastLike(n, x))


def _sum_dtype(self: Value, dtype: DType | None) -> DType:
    if dtype is not None:
        return dtype
    return types.INT64 if self.known_dtype.is_bool or self.known_dtype.is_integer else self.known_dtype


def _sum(self: Value, dim: int | Sequence[int] | None, keepdim: bool, dtype: DType | None) -> Value:
    out_dtype = _sum_dtype(self, dtype)
    x = cast_to(self, out_dtype)
    if x.dtype.is_integer or x.dtype.is_bool:  # int64 arithmetic, wrapping (bool: any != 0)
        return cast_to(int64_sum(cast_to(x, types.INT64), _dims(self, dim), keepdim), out_dtype)
    x = _accumulate(x)
    return cast_to(_reduce(op.ReduceSum, x, _dims(self, dim), keepdim), out_dtype)


@aten_op("aten::sum")
def aten_sum(self: TRealOrBool, *, dtype: DType | None = None) -> TReal:
    """sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    return _sum(self, None, False, dtype)


@aten_op("aten::sum.dim_IntList")
def aten_sum_dim_IntList(
    self: TRealOrBool, dim: Sequence[int] | None, keepdim: bool = False, *, dtype: DType | None = None
) -> TReal:
    """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _sum(self, dim, keepdim, dtype)


def _mean_checked(self: Value, dim: int | Sequence[int] | None, keepdim: bool, dtype: DType | None, name: str) -> Value:
    x = cast_to(self, dtype) if dtype is not None else self
    if not x.known_dtype.is_floating:
        raise TypeError(f"{name}(): input dtype must be floating point (got {x.dtype}); pass dtype= to compute in one")
    return cast_to(_mean(_accumulate(x), _dims(self, dim), keepdim), x.known_dtype)


@aten_op("aten::mean")
def aten_mean(self: TFloat, *, dtype: DType | None = None) -> TFloat:
    """mean(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    return _mean_checked(self, None, False, dtype, "mean")


@aten_op("aten::mean.dim")
def aten_mean_dim(
    self: TFloat, dim: Sequence[int] | None, keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _mean_checked(self, dim, keepdim, dtype, "mean")


def _extremum(reduce_op: Any, self: Value, dim: int | Sequence[int] | None, keepdim: bool) -> Value:
    """ReduceMax/ReduceMin, with NaN propagated as torch does (onnxruntime skips NaN)."""
    x = cast_to(self, nearest_supported(self.known_dtype, MIN_MAX.__contains__))  # ReduceMax/Min, ArgMax/Min, Where
    axes = _dims(self, dim)
    result = _reduce(reduce_op, x, axes, keepdim)
    if x.dtype.is_floating:
        has_nan = _reduce(op.ReduceMax, op.Cast(op.IsNaN(x), to=types.UINT8.onnx), axes, keepdim)
        result = op.Where(op.Cast(has_nan, to=types.BOOL.onnx), op.CastLike(math.nan, result), result)
    return cast_to(result, self.known_dtype)


@aten_op("aten::amax")
def aten_amax(self: TRealOrBool, dim: Sequence[int] = (), keepdim: bool = False) -> TRealOrBool:
    """amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"""
    return _extremum(op.ReduceMax, self, dim, keepdim)


@aten_op("aten::amin")
def aten_amin(self: TRealOrBool, dim: Sequence[int] = (), keepdim: bool = False) -> TRealOrBool:
    """amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor"""
    return _extremum(op.ReduceMin, self, dim, keepdim)


@aten_op("aten::max")
def aten_max(self: TRealOrBool) -> TRealOrBool:
    """max(Tensor self) -> Tensor"""
    return _extremum(op.ReduceMax, self, None, False)


@aten_op("aten::min")
def aten_min(self: TRealOrBool) -> TRealOrBool:
    """min(Tensor self) -> Tensor"""
    return _extremum(op.ReduceMin, self, None, False)


@aten_op("aten::max.other")
@elementwise("self", "other")
def aten_max_other(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """max.other(Tensor self, Tensor other) -> Tensor

    torch.maximum under another name: elementwise, NaN propagates (ONNX Max does too)."""
    if self.known_dtype.is_bool:
        return op.Or(self, other)
    return run_supported(op.Max, MIN_MAX, self, other)


@aten_op("aten::min.other")
@elementwise("self", "other")
def aten_min_other(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """min.other(Tensor self, Tensor other) -> Tensor

    torch.minimum under another name: elementwise, NaN propagates (ONNX Min does too)."""
    if self.known_dtype.is_bool:
        return op.And(self, other)
    return run_supported(op.Min, MIN_MAX, self, other)


def _arg(arg_op: Any, self: Value, dim: int | None, keepdim: bool) -> Value:
    """ArgMax/ArgMin along one dim (first index on ties, as torch); dim=None flattens. A NaN
    is the extremum, as in torch: the index of the first NaN wins (onnxruntime skips NaN)."""
    x = cast_to(self, nearest_supported(self.known_dtype, MIN_MAX.__contains__))  # ReduceMax/Min, ArgMax/Min, Where
    if dim is None or self.rank == 0:
        _dims(self, dim)  # validates dim for 0-d tensors
        flat = _arg_nan(arg_op, op.Reshape(x, [-1]), 0, False)
        if keepdim and self.rank:
            return op.Reshape(flat, [1] * self.rank)
        return flat
    (axis,) = _dims(self, dim)
    return _arg_nan(arg_op, x, axis, keepdim)


def _arg_nan(arg_op: Any, x: Value, axis: int, keepdim: bool) -> Value:
    index = arg_op(x, axis=axis, keepdims=int(keepdim))
    if not x.known_dtype.is_floating:
        return index
    nan = op.Cast(op.IsNaN(x), to=types.UINT8.onnx)
    first_nan = op.ArgMax(nan, axis=axis, keepdims=int(keepdim))
    has_nan = op.Cast(op.ReduceMax(nan, [axis], keepdims=int(keepdim)), to=types.BOOL.onnx)
    return op.Where(has_nan, first_nan, index)


@aten_op("aten::max.dim")
def aten_max_dim(self: TRealOrBool, dim: int, keepdim: bool = False) -> tuple[TRealOrBool, TInt]:
    """max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    return _extremum(op.ReduceMax, self, dim, keepdim), _arg(op.ArgMax, self, dim, keepdim)


@aten_op("aten::min.dim")
def aten_min_dim(self: TRealOrBool, dim: int, keepdim: bool = False) -> tuple[TRealOrBool, TInt]:
    """min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"""
    return _extremum(op.ReduceMin, self, dim, keepdim), _arg(op.ArgMin, self, dim, keepdim)


@aten_op("aten::argmax")
def aten_argmax(self: TRealOrBool, dim: int | None = None, keepdim: bool = False) -> TInt:
    """argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
    return _arg(op.ArgMax, self, dim, keepdim)


@aten_op("aten::argmin")
def aten_argmin(self: TRealOrBool, dim: int | None = None, keepdim: bool = False) -> TInt:
    """argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor"""
    return _arg(op.ArgMin, self, dim, keepdim)


def _any_all(reduce_op: Any, self: Value, axes: list[int] | None, keepdim: bool) -> Value:
    """Reduce `self != 0` as uint8 (ReduceMax of nothing is 0: any() is False; ReduceMin of
    nothing is 255: all() is True). uint8 input gives uint8 output, every other dtype bool."""
    if self.known_dtype.is_bool:
        nonzero = self
    else:
        x = cast_to(self, types.FLOAT) if self.dtype is types.BFLOAT16 else self
        nonzero = op.Not(op.Equal(x, op.CastLike(0, x)))
    out_dtype = types.UINT8 if self.dtype is types.UINT8 else types.BOOL
    if axes is None:  # any.dims with dim=[]: nothing is reduced
        return cast_to(nonzero, out_dtype)
    return cast_to(_reduce(reduce_op, op.Cast(nonzero, to=types.UINT8.onnx), axes, keepdim), out_dtype)


@aten_op("aten::any")
def aten_any(self: TRealOrBool) -> TBool:
    """any(Tensor self) -> Tensor"""
    return _any_all(op.ReduceMax, self, _dims(self, None), False)


@aten_op("aten::any.dim")
def aten_any_dim(self: TRealOrBool, dim: int, keepdim: bool = False) -> TBool:
    """any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor"""
    return _any_all(op.ReduceMax, self, _dims(self, dim), keepdim)


@aten_op("aten::any.dims")
def aten_any_dims(self: TRealOrBool, dim: Sequence[int] | None = None, keepdim: bool = False) -> TBool:
    """any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor"""
    axes = None if dim is not None and len(dim) == 0 else _dims(self, dim)
    return _any_all(op.ReduceMax, self, axes, keepdim)


@aten_op("aten::all")
def aten_all(self: TRealOrBool) -> TBool:
    """all(Tensor self) -> Tensor"""
    return _any_all(op.ReduceMin, self, _dims(self, None), False)


@aten_op("aten::all.dim")
def aten_all_dim(self: TRealOrBool, dim: int, keepdim: bool = False) -> TBool:
    """all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor"""
    return _any_all(op.ReduceMin, self, _dims(self, dim), keepdim)


@aten_op("aten::all.dims")
def aten_all_dims(self: TRealOrBool, dim: Sequence[int] | None = None, keepdim: bool = False) -> TBool:
    """all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor"""
    axes = None if dim is not None and len(dim) == 0 else _dims(self, dim)
    return _any_all(op.ReduceMin, self, axes, keepdim)


@aten_op("aten::_is_all_true")
def aten_is_all_true(self: TRealOrBool) -> TBool:
    """_is_all_true(Tensor self) -> Tensor"""
    return _any_all(op.ReduceMin, self, _dims(self, None), False)  # torch.all of a bool tensor (an assert's test)


@aten_op("aten::_is_any_true")
def aten_is_any_true(self: TRealOrBool) -> TBool:
    """_is_any_true(Tensor self) -> Tensor"""
    return _any_all(op.ReduceMax, self, _dims(self, None), False)


def _product_input(self: Value, dtype: DType | None) -> tuple[Value, DType]:
    """self cast to the result dtype of prod/cumprod, then to a dtype ReduceProd has a kernel
    for (float32/float64/int64: integers compute in int64, which wraps around like torch);
    returns (that tensor, the result dtype)."""
    out_dtype = _sum_dtype(self, dtype)
    x = cast_to(self, out_dtype)
    if x.dtype.is_integer or x.dtype.is_bool:
        x = cast_to(x, types.INT64)  # bool: the product of 0/1 cast back is all()
    return _accumulate(x), out_dtype


def _product(x: Value, axes: list[int], keepdim: bool) -> Value:
    """ReduceProd; int64 through int64_prod, which wraps around like torch; floats in float64,
    where a product that is not finite or is 0 from nonzero finite factors (onnxruntime's order
    underflowed tiny * tiny to 0 before meeting an inf, or overflowed) is taken again as
    sign * exp(sum(log|x|)), close to the exact product."""
    if x.dtype is types.INT64:
        return int64_prod(x, axes, keepdim)
    if not x.known_dtype.is_floating:
        return _reduce(op.ReduceProd, x, axes, keepdim)
    x = cast_to(x, types.DOUBLE)
    direct = _reduce(op.ReduceProd, x, axes, keepdim)
    magnitude = op.Exp(_reduce(op.ReduceSum, op.Log(op.Abs(x)), axes, keepdim))
    logged = op.Mul(_reduce(op.ReduceProd, op.Sign(x), axes, keepdim), magnitude)
    # a zero or a NaN factor: the direct product is right (0, or NaN with an inf, or NaN)
    exact_zero_or_nan = _reduce(op.ReduceMax, op.Cast(op.Or(op.Equal(x, 0.0), op.IsNaN(x)), to=types.DOUBLE.onnx), axes, keepdim)
    lost = op.And(op.Or(op.Or(op.IsInf(direct), op.IsNaN(direct)), op.Equal(direct, 0.0)), op.Equal(exact_zero_or_nan, 0.0))
    return op.Where(lost, logged, direct)


@aten_op("aten::prod")
def aten_prod(self: TRealOrBool, *, dtype: DType | None = None) -> TReal:
    """prod(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    x, out_dtype = _product_input(self, dtype)
    return cast_to(_product(x, _dims(self, None), False), out_dtype)


@aten_op("aten::prod.dim_int")
def aten_prod_dim_int(self: TRealOrBool, dim: int, keepdim: bool = False, *, dtype: DType | None = None) -> TReal:
    """prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    x, out_dtype = _product_input(self, dtype)
    return cast_to(_product(x, _dims(self, dim), keepdim), out_dtype)


@aten_op("aten::cumsum")
def aten_cumsum(self: TRealOrBool, dim: int, *, dtype: DType | None = None) -> TReal:
    """cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"""
    x, out_dtype = _product_input(self, dtype)  # CumSum has the kernels ReduceProd has
    axes = _dims(self, dim)
    if not axes:  # 0-d: the cumulative sum of one element is that element
        return cast_to(x, out_dtype)
    return cast_to(op.CumSum(x, np.array(axes[0], np.int64)), out_dtype)


@aten_op("aten::cumprod")
def aten_cumprod(self: TRealOrBool, dim: int, *, dtype: DType | None = None) -> TReal:
    """cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor

    ONNX has no CumProd: out[i] = prod_j x[j] * (j <= i) is a ReduceProd over a lower-triangular
    mask, which costs n*n elements per slice for a dim of size n (exact for zeros, negatives
    and integers, unlike exp(cumsum(log)))."""
    x, out_dtype = _product_input(self, dtype)
    axes = _dims(self, dim)
    if not axes:
        return cast_to(x, out_dtype)
    axis = axes[0]
    n = op.Shape(x, start=axis, end=axis + 1)
    steps = op.Range(np.array(0, np.int64), op.Squeeze(n, [0]), np.array(1, np.int64))
    mask = op.LessOrEqual(op.Unsqueeze(steps, [0]), op.Unsqueeze(steps, [1]))  # [i, j]: j <= i
    trailing = x.known_rank - 1 - axis
    if trailing:
        mask = op.Unsqueeze(mask, list(range(2, 2 + trailing)))
    rows = op.Where(mask, op.Unsqueeze(x, [axis]), op.CastLike(1, x))  # [..., i, j, ...]
    if rows.dtype is types.INT64:  # wrapping like torch (onnxruntime's int64 ReduceProd goes through double)
        return cast_to(int64_prod(rows, [axis + 1], False), out_dtype)
    return cast_to(_reduce(op.ReduceProd, rows, [axis + 1], False), out_dtype)


@aten_op("aten::logsumexp")
def aten_logsumexp(self: TRealOrBool, dim: Sequence[int], keepdim: bool = False) -> TFloat:
    """logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor"""
    out_dtype = self.known_dtype if self.known_dtype.is_floating else types.FLOAT
    x = _accumulate(cast_to(self, out_dtype))
    return cast_to(_reduce(op.ReduceLogSumExp, x, _dims(self, dim), keepdim), out_dtype)


def _var_mean(
    self: Value, dim: int | Sequence[int] | None, correction: float | None, keepdim: bool, sqrt: bool = False
) -> tuple[Value, Value]:
    """(variance, or its square root with sqrt=True, and the mean), in self's dtype. The divisor
    is max(count - correction, 0) as in torch, so too few elements give inf or NaN.

    Two passes (mean, then the sum of squared deviations), accumulated in float64 as torch's
    CPU kernel does for every float dtype, so the squares of values near finfo(float32).max
    (std of [1e38, -1e38, ...] in float32 or bfloat16) stay finite."""
    if not self.known_dtype.is_floating:
        raise TypeError(f"var/std support floating point dtypes only, got {self.dtype}")
    correction = 1 if correction is None else correction
    x = cast_to(self, types.DOUBLE)
    axes = _dims(self, dim)
    n = _count(x, axes)
    mean = _mean(x, axes, True)
    centered = op.Sub(x, mean)
    sum_sq = _reduce(op.ReduceSum, op.Mul(centered, centered), axes, keepdim)
    if isinstance(n, int):
        divisor: Any = float(max(n - correction, 0))
    else:
        divisor = op.Max(op.Sub(op.CastLike(n, x), op.CastLike(correction, x)), op.CastLike(0, x))
    var = op.Div(sum_sq, divisor)
    if sqrt:
        var = op.Sqrt(var)
    mean = _welford_mean(x, mean, axes)
    if not keepdim and axes:
        mean = op.Squeeze(mean, axes)
    return cast_to(var, self.known_dtype), cast_to(mean, self.known_dtype)


def _welford_mean(x: Value, mean: Value, axes: list[int]) -> Value:
    """The mean var_mean/std_mean return as torch's Welford pass gives it: an inf followed by any
    element makes it NaN (mean + (x - inf) / n), an inf only at the last element gives inf.
    mean + sum of (x - x) over all but the last element: NaN there, else + 0."""
    if not axes:
        return mean
    last: Any = None
    for axis in axes:
        n = dim_size(x, axis)
        positions = op.Range(np.array(0, np.int64), n if isinstance(n, Value) else np.array(n, np.int64), np.array(1, np.int64))
        at_end = op.Equal(positions, op.Sub(n, np.array(1, np.int64)) if isinstance(n, Value) else np.array(n - 1, np.int64))
        at_end = op.Reshape(at_end, [-1] + [1] * (x.known_rank - axis - 1))
        last = at_end if last is None else op.And(last, at_end)
    earlier = op.Where(last, op.CastLike(0, x), op.Sub(x, x))
    return op.Add(mean, op.ReduceSum(earlier, axes, keepdims=1))


@aten_op("aten::var")
def aten_var(self: TFloat, unbiased: bool = True) -> TFloat:
    """var(Tensor self, bool unbiased=True) -> Tensor"""
    return _var_mean(self, None, int(unbiased), False)[0]


@aten_op("aten::var.dim")
def aten_var_dim(self: TFloat, dim: Sequence[int] | None, unbiased: bool = True, keepdim: bool = False) -> TFloat:
    """var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor"""
    return _var_mean(self, dim, int(unbiased), keepdim)[0]


@aten_op("aten::var.correction")
def aten_var_correction(
    self: TFloat, dim: Sequence[int] | None = None, *, correction: float | None = None, keepdim: bool = False
) -> TFloat:
    """var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"""
    return _var_mean(self, dim, correction, keepdim)[0]


@aten_op("aten::std")
def aten_std(self: TFloat, unbiased: bool = True) -> TFloat:
    """std(Tensor self, bool unbiased=True) -> Tensor"""
    return _var_mean(self, None, int(unbiased), False, sqrt=True)[0]


@aten_op("aten::std.dim")
def aten_std_dim(self: TFloat, dim: Sequence[int] | None, unbiased: bool = True, keepdim: bool = False) -> TFloat:
    """std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor"""
    return _var_mean(self, dim, int(unbiased), keepdim, sqrt=True)[0]


@aten_op("aten::std.correction")
def aten_std_correction(
    self: TFloat, dim: Sequence[int] | None = None, *, correction: float | None = None, keepdim: bool = False
) -> TFloat:
    """std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> Tensor"""
    return _var_mean(self, dim, correction, keepdim, sqrt=True)[0]


@aten_op("aten::var_mean")
def aten_var_mean(self: TFloat, unbiased: bool = True) -> tuple[TFloat, TFloat]:
    """var_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)"""
    return _var_mean(self, None, int(unbiased), False)


@aten_op("aten::var_mean.dim")
def aten_var_mean_dim(
    self: TFloat, dim: Sequence[int] | None, unbiased: bool = True, keepdim: bool = False
) -> tuple[TFloat, TFloat]:
    """var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)"""
    return _var_mean(self, dim, int(unbiased), keepdim)


@aten_op("aten::var_mean.correction")
def aten_var_mean_correction(
    self: TFloat, dim: Sequence[int] | None = None, *, correction: float | None = None, keepdim: bool = False
) -> tuple[TFloat, TFloat]:
    """var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    return _var_mean(self, dim, correction, keepdim)


@aten_op("aten::std_mean")
def aten_std_mean(self: TFloat, unbiased: bool = True) -> tuple[TFloat, TFloat]:
    """std_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)"""
    return _var_mean(self, None, int(unbiased), False, sqrt=True)


@aten_op("aten::std_mean.dim")
def aten_std_mean_dim(
    self: TFloat, dim: Sequence[int] | None, unbiased: bool = True, keepdim: bool = False
) -> tuple[TFloat, TFloat]:
    """std_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)"""
    return _var_mean(self, dim, int(unbiased), keepdim, sqrt=True)


@aten_op("aten::std_mean.correction")
def aten_std_mean_correction(
    self: TFloat, dim: Sequence[int] | None = None, *, correction: float | None = None, keepdim: bool = False
) -> tuple[TFloat, TFloat]:
    """std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, bool keepdim=False) -> (Tensor, Tensor)"""
    return _var_mean(self, dim, correction, keepdim, sqrt=True)


def _vector_norm(
    self: Value, ord: float, dim: int | Sequence[int] | None, keepdim: bool, dtype: DType | None
) -> Value:
    """The `ord`-norm over `dim` of self (cast to dtype first), in self's (or dtype's) dtype."""
    x = cast_to(self, dtype) if dtype is not None else self
    if not x.known_dtype.is_floating:
        raise TypeError(f"norm: expected a floating point tensor, got {x.dtype}")
    out_dtype = x.known_dtype
    x = _accumulate(x)
    axes = _dims(self, dim)
    ord = float(ord)
    if ord == 2:
        result = _reduce(op.ReduceL2, x, axes, keepdim)
    elif ord == 1:
        result = _reduce(op.ReduceL1, x, axes, keepdim)
    elif ord == math.inf:
        result = _reduce(op.ReduceMax, op.Abs(x), axes, keepdim)
    elif ord == -math.inf:
        result = _reduce(op.ReduceMin, op.Abs(x), axes, keepdim)
    elif ord == 0:
        nonzero = op.Cast(op.Not(op.Equal(x, op.CastLike(0, x))), to=x.known_dtype.onnx)
        result = _reduce(op.ReduceSum, nonzero, axes, keepdim)
    else:
        powered = _reduce(op.ReduceSum, op.Pow(op.Abs(x), op.CastLike(ord, x)), axes, keepdim)
        result = op.Pow(powered, op.CastLike(1.0 / ord, x))
    return cast_to(result, out_dtype)


@aten_op("aten::linalg_vector_norm")
def aten_linalg_vector_norm(
    self: TFloat, ord: float = 2, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _vector_norm(self, ord, dim, keepdim, dtype)


@aten_op("aten::linalg__powsum", if_torch_has=True)  # new in torch 2.11
def aten_linalg__powsum(
    self: TFloat, ord: float = 2, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """linalg__powsum(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor

    sum(|x| ** ord) over dim, the power sum under a p-norm (pow's rules: 0 ** 0 = 1, 0 ** -1 = inf),
    float16/bfloat16 accumulated in float32 and rounded once, as torch."""
    x = cast_to(self, dtype) if dtype is not None else self
    if not x.known_dtype.is_floating:
        raise TypeError(f"linalg__powsum: expected a floating point tensor, got {x.dtype} (torch raises too)")
    out_dtype = x.known_dtype
    x = _accumulate(x)
    powered = op.Pow(op.Abs(x), op.CastLike(float(ord), x))
    return cast_to(_reduce(op.ReduceSum, powered, _dims(self, dim), keepdim), out_dtype)


@aten_op("aten::norm.Scalar")
def aten_norm_Scalar(self: TFloat, p: float = 2) -> TFloat:
    """norm.Scalar(Tensor self, Scalar p=2) -> Tensor"""
    return _vector_norm(self, p, None, False, None)


@aten_op("aten::norm.ScalarOpt_dim")
def aten_norm_ScalarOpt_dim(self: TFloat, p: float | None, dim: Sequence[int], keepdim: bool = False) -> TFloat:
    """norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor"""
    return _vector_norm(self, 2 if p is None else p, dim, keepdim, None)


@aten_op("aten::norm.ScalarOpt_dim_dtype")
def aten_norm_ScalarOpt_dim_dtype(
    self: TFloat, p: float | None, dim: Sequence[int], keepdim: bool, *, dtype: DType
) -> TFloat:
    """norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor"""
    return _vector_norm(self, 2 if p is None else p, dim, keepdim, dtype)


@aten_op("aten::norm.ScalarOpt_dtype")
def aten_norm_ScalarOpt_dtype(self: TFloat, p: float | None, *, dtype: DType) -> TFloat:
    """norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor"""
    return _vector_norm(self, 2 if p is None else p, None, False, dtype)
