"""Counting: bincount and histc.

Both add into a zero tensor with ScatterElements(reduction="add"); the number of bins of
bincount depends on the data (max(self) + 1), so its output shape is dynamic.
histc places x in bin floor((x - min) * bins / (max - min)) computed in the input's dtype as
torch's CPU kernel does, x == max in the last bin; values outside [min, max] and NaN are not
counted. With min == max the range is the data's [min, max] (widened by 1 each way when the
data is constant), as in torch.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.types import TFloat, TInt
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _scatter_add(size: Value, index: Value, values: Value) -> Value:
    """zeros(size) with values added at index (size: an INT64 1-element vector)."""
    zeros = op.ConstantOfShape(size, value=np.zeros(1, values.dtype.numpy))
    return op.ScatterElements(zeros, index, values, reduction="add")


@aten_op("aten::bincount")
def aten_bincount(self: TInt, weights: TFloat | None = None, minlength: int = 0) -> TFloat | TInt:
    """bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor"""
    if self.rank != 1 or self.dtype.is_floating or self.dtype is types.BOOL:
        raise TypeError(f"aten::bincount expects a 1-D integer tensor, got {self.dtype} of rank {self.rank}")
    index = cast_to(self, types.INT64)
    largest = op.ReduceMax(op.Concat(index, op.Constant(value=np.array([-1], np.int64)), axis=0), keepdims=1)
    size = op.Max(op.Add(largest, 1), op.Constant(value=np.array([minlength], np.int64)))
    if weights is None:
        values = op.ConstantOfShape(op.Shape(index), value=np.ones(1, np.int64))
    else:  # torch: float32 weights give float32, any other weights float64
        values = cast_to(weights, types.FLOAT if weights.dtype is types.FLOAT else types.DOUBLE)
    return _scatter_add(size, index, values)


@aten_op("aten::histc")
def aten_histc(self: TFloat, bins: int = 100, min: float = 0, max: float = 0) -> TFloat:
    """histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor"""
    if not self.dtype.is_floating:
        raise TypeError(f"aten::histc is defined for floating tensors only (on CPU), got {self.dtype}")
    if bins <= 0:
        raise ValueError(f"aten::histc: bins must be > 0, got {bins}")
    if min > max:
        raise ValueError(f"aten::histc: max must be larger than min, got min={min}, max={max}")
    dtype = self.dtype
    half = dtype in (types.FLOAT16, types.BFLOAT16)  # computed in float32, rounded after each op

    def rounded(v: Value) -> Value:
        return cast_to(cast_to(v, dtype), types.FLOAT) if half else v

    x = op.Reshape(cast_to(self, types.FLOAT) if half else self, [-1])
    if min == max:  # the data's range, widened when the data is constant
        low, high = op.ReduceMin(x, keepdims=0), op.ReduceMax(x, keepdims=0)
        same = op.Equal(low, high)
        low = op.Where(same, rounded(op.Sub(low, op.CastLike(1, low))), low)
        high = op.Where(same, rounded(op.Add(high, op.CastLike(1, high))), high)
    else:
        low, high = rounded(op.CastLike(float(min), x)), rounded(op.CastLike(float(max), x))
    inside = op.And(op.GreaterOrEqual(x, low), op.LessOrEqual(x, high))  # NaN: outside
    scaled = rounded(op.Div(rounded(op.Mul(rounded(op.Sub(x, low)), op.CastLike(bins, x))), rounded(op.Sub(high, low))))
    position = cast_to(op.Floor(op.Where(inside, scaled, op.CastLike(0, x))), types.INT64)
    position = op.Min(position, op.Constant(value=np.array(bins - 1, np.int64)))  # x == max: the last bin
    counts = _scatter_add(op.Constant(value=np.array([bins], np.int64)), position, cast_to(inside, x.dtype))
    return cast_to(counts, dtype)
