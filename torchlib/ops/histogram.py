"""Counting: bincount and histc.

Both add into a zero tensor with ScatterElements(reduction="add"); the number of bins of
bincount depends on the data (max(self) + 1), so its output shape is dynamic.
histc places x in bin floor((x - min) * bins / (max - min)) computed in the input's dtype as
torch's CPU kernel does, x == max in the last bin; values outside [min, max] and NaN are not
counted. With min == max the range is the data's [min, max] (widened by 1 each way when the
data is constant), as in torch.

histogram and histogramdd (torch's histogramdd kernel): the bin edges are torch's linspace over
the range (given, else the data's [min, max], [0, 1] for no data, widened by 0.5 each way when
empty), an element goes to bin (number of edges <= x) - 1, x == the last edge to the last bin,
and elements outside [first edge, last edge] in any dimension (and NaN) are not counted. Every
element is compared with every edge of its dimension (O(elements x bins)). density divides by
the total and then by each dimension's bin lengths, in torch's order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops.creation import _linspace
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _scatter_add(size: Value, index: Value, values: Value) -> Value:
    """zeros(size) with values added at index (size: an INT64 1-element vector)."""
    zeros = op.ConstantOfShape(size, value=np.zeros(1, values.known_dtype.numpy))
    return op.ScatterElements(zeros, index, values, reduction="add")


@aten_op("aten::bincount")
def aten_bincount(self: TInt, weights: TFloat | None = None, minlength: int = 0) -> TFloat | TInt:
    """bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor"""
    if self.rank != 1 or self.known_dtype.is_floating or self.dtype is types.BOOL:
        raise TypeError(f"aten::bincount expects a 1-D integer tensor, got {self.dtype} of rank {self.rank}")
    if self.shape is not None and self.shape[0] == 0:  # torch returns int64 zeros for no input, whatever the weights
        return op.ConstantOfShape(op.Constant(value=np.array([minlength], np.int64)), value=np.zeros(1, np.int64))
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
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::histc is defined for floating tensors only (on CPU), got {self.dtype}")
    if bins <= 0:
        raise ValueError(f"aten::histc: bins must be > 0, got {bins}")
    if min > max:
        raise ValueError(f"aten::histc: max must be larger than min, got min={min}, max={max}")
    dtype = self.known_dtype
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
    counts = _scatter_add(op.Constant(value=np.array([bins], np.int64)), position, cast_to(inside, x.known_dtype))
    return cast_to(counts, dtype)


def _points(self: Value, fn: str, dims: int) -> Value:
    """self as [points, dims] (histogram: one dim)."""
    if not self.known_dtype.is_floating or self.dtype in (types.FLOAT16, types.BFLOAT16):
        raise TypeError(f"aten::{fn} is defined for float32 and float64 tensors (on CPU), got {self.dtype}")
    return op.Reshape(self, [-1, dims])


def _bin_edges(points: Value, bins: Sequence[int], range: Sequence[float] | None, fn: str) -> list[Value]:
    """torch's select_outer_bin_edges, then linspace: the edges of each dimension."""
    if range is not None and len(range) != 2 * len(bins):
        raise ValueError(f"aten::{fn}: range needs {2 * len(bins)} values (a min and a max per dimension), got {len(range)}")
    edges = []
    for d, count in enumerate(bins):
        if count <= 0:
            raise ValueError(f"aten::{fn}: bins must be > 0, got {count} for dimension {d}")
        if range is not None:
            low, high = float(range[2 * d]), float(range[2 * d + 1])
            if low > high:
                raise ValueError(f"aten::{fn}: min {low} must not exceed max {high} for dimension {d}")
            if low == high:
                low, high = low - 0.5, high + 0.5
            first, last = op.CastLike(low, points), op.CastLike(high, points)
        else:  # the data's range: [0, 1] for no data, widened by 0.5 each way when constant
            column = op.Gather(points, np.array(d, np.int64), axis=1)
            none = op.Equal(op.Size(column), np.array(0, np.int64))
            smallest = op.Where(none, op.CastLike(0, points), op.ReduceMin(column, keepdims=0))  # (empty: +inf)
            largest = op.Where(none, op.CastLike(1, points), op.ReduceMax(column, keepdims=0))
            same = op.Equal(smallest, largest)
            first = op.Where(same, op.Sub(smallest, op.CastLike(0.5, smallest)), smallest)
            last = op.Where(same, op.Add(largest, op.CastLike(0.5, largest)), largest)
        edges.append(_linspace(first, last, count + 1, points.dtype))
    return edges


def _histogramdd(points: Value, edges: Sequence[Value], weight: Value | None, density: bool, fn: str) -> Value:
    """The histogram of points [n, dims] over the given edges (one 1-D Value per dim)."""
    inside = None
    flat = None
    sizes = []
    for d, e in enumerate(edges):
        column = op.Gather(points, np.array([d], np.int64), axis=1)  # [n, 1]
        count = op.Sub(op.Shape(e), np.array([1], np.int64))  # bins of this dim
        sizes.append(count)
        first, last = op.Gather(e, np.array([0], np.int64)), op.Gather(e, op.Sub(op.Shape(e), np.array([1], np.int64)))
        within = op.And(op.GreaterOrEqual(column, first), op.LessOrEqual(column, last))  # NaN: outside
        at_or_above = op.ReduceSum(op.Cast(op.LessOrEqual(op.Unsqueeze(e, [0]), column), to=types.INT64.onnx), [1], keepdims=1)
        position = op.Min(op.Sub(at_or_above, np.array(1, np.int64)), op.Sub(count, np.array(1, np.int64)))
        position = op.Max(position, np.array(0, np.int64))
        inside = within if inside is None else op.And(inside, within)
        flat = position if flat is None else op.Add(op.Mul(flat, count), position)
    assert inside is not None and flat is not None
    shape = op.Concat(*sizes, axis=0)
    ones = op.CastLike(op.Cast(inside, to=types.INT64.onnx), points)
    values = ones if weight is None else op.Mul(ones, op.Reshape(weight, [-1, 1]))
    total = op.ReduceProd(shape, keepdims=1)
    hist = _scatter_add(total, op.Reshape(flat, [-1]), op.Reshape(values, [-1]))  # outside: adds 0 to bin 0
    hist = op.Reshape(hist, shape)
    if density:
        hist = op.Div(hist, op.ReduceSum(hist, keepdims=0))
        for d, e in enumerate(edges):
            lengths = op.Sub(op.Slice(e, [1], [np.iinfo(np.int64).max]), op.Slice(e, [0], [-1]))
            view = [1] * len(edges)
            view[d] = -1
            hist = op.Div(hist, op.Reshape(lengths, view))
    return hist


def _check_weight(fn: str, self: Value, weight: Value | None) -> None:
    if weight is not None and weight.dtype != self.dtype:
        raise TypeError(f"aten::{fn}: weight must have the dtype of the input ({self.dtype}), got {weight.dtype}")


@aten_op("aten::histogram.bin_ct")
def aten_histogram_bin_ct(
    self: TFloat, bins: int = 100, *, range: Sequence[float] | None = None, weight: TFloat | None = None, density: bool = False
) -> tuple[TFloat, TFloat]:
    """histogram.bin_ct(Tensor self, int bins=100, *, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)"""
    _check_weight("histogram", self, weight)
    points = _points(self, "histogram", 1)
    edges = _bin_edges(points, [bins], range, "histogram")
    return _histogramdd(points, edges, weight, density, "histogram"), edges[0]


@aten_op("aten::histogram.bins_tensor")
def aten_histogram_bins_tensor(
    self: TFloat, bins: TFloat, *, weight: TFloat | None = None, density: bool = False
) -> tuple[TFloat, TFloat]:
    """histogram.bins_tensor(Tensor self, Tensor bins, *, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor bin_edges)"""
    _check_weight("histogram", self, weight)
    if bins.rank != 1 or bins.dtype != self.dtype:
        raise TypeError(f"aten::histogram: bins must be a 1-D tensor of the input's dtype, got rank {bins.rank} {bins.dtype}")
    points = _points(self, "histogram", 1)
    return _histogramdd(points, [bins], weight, density, "histogram"), bins


def _dims(self: Value, fn: str) -> int:
    if self.rank is None or self.rank < 1 or self.shape is None or not isinstance(self.shape[-1], int):
        raise ValueError(f"aten::{fn} needs an input of rank >= 1 whose last dimension (the number of dimensions) is static")
    return self.shape[-1]


@aten_op("aten::_histogramdd_bin_edges")
def aten__histogramdd_bin_edges(
    self: TFloat, bins: Sequence[int], *, range: Sequence[float] | None = None, weight: TFloat | None = None, density: bool = False
) -> list[TFloat]:
    """_histogramdd_bin_edges(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None, bool density=False) -> Tensor[]"""
    dims = _dims(self, "histogramdd")
    if len(bins) != dims:
        raise ValueError(f"aten::histogramdd: {len(bins)} bin counts for {dims} dimensions")
    return _bin_edges(_points(self, "histogramdd", dims), bins, range, "histogramdd")


@aten_op("aten::_histogramdd_from_bin_cts")
def aten__histogramdd_from_bin_cts(
    self: TFloat, bins: Sequence[int], *, range: Sequence[float] | None = None, weight: TFloat | None = None, density: bool = False
) -> TFloat:
    """_histogramdd_from_bin_cts(Tensor self, int[] bins, *, float[]? range=None, Tensor? weight=None, bool density=False) -> Tensor"""
    _check_weight("histogramdd", self, weight)
    edges = aten__histogramdd_bin_edges(self, bins, range=range)
    return _histogramdd(_points(self, "histogramdd", len(bins)), edges, weight, density, "histogramdd")


@aten_op("aten::_histogramdd_from_bin_tensors")
def aten__histogramdd_from_bin_tensors(
    self: TFloat, bins: Sequence[TFloat], *, weight: TFloat | None = None, density: bool = False
) -> TFloat:
    """_histogramdd_from_bin_tensors(Tensor self, Tensor[] bins, *, Tensor? weight=None, bool density=False) -> Tensor"""
    _check_weight("histogramdd", self, weight)
    dims = _dims(self, "histogramdd")
    if len(bins) != dims:
        raise ValueError(f"aten::histogramdd: {len(bins)} bin tensors for {dims} dimensions")
    return _histogramdd(_points(self, "histogramdd", dims), list(bins), weight, density, "histogramdd")


@aten_op("aten::histogramdd")
def aten_histogramdd(
    self: TFloat, bins: Sequence[int], range: Sequence[float] | None = None, weight: TFloat | None = None, density: bool = False
) -> tuple[TFloat, list[TFloat]]:
    """histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)"""
    _check_weight("histogramdd", self, weight)
    edges = aten__histogramdd_bin_edges(self, bins, range=range)
    return _histogramdd(_points(self, "histogramdd", len(bins)), edges, weight, density, "histogramdd"), edges
