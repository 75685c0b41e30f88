"""Backward ops tagged core, as they appear in exported training graphs:
max_pool2d/3d_with_indices_backward, _adaptive_avg_pool2d/3d_backward, embedding_dense_backward.

Gradients are added into zeros with ScatterElements(reduction="add") (the half types add in
float32, their result rounded once) or, for adaptive average pooling, with one gather per
spatial dim: grad_input = sum over the output cells that hold an input element of
grad / cell size, the cells being [floor(i * in / out), ceil((i + 1) * in / out)) as in torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_ADD_DTYPES = (types.FLOAT, types.DOUBLE)  # ScatterElements(add) kernels in onnxruntime


def _compute_dtype(dtype: types.DType) -> types.DType:
    return dtype if dtype in _ADD_DTYPES else types.FLOAT


def _max_pool_backward(grad_output: Value, self: Value, indices: Value, spatial: int) -> Value:
    """grad_output added at the flat (per plane) indices of max pooling."""
    dtype = _compute_dtype(self.known_dtype)
    plane = op.Shape(self, end=-spatial)
    flat_shape = op.Concat(plane, op.Constant(value=np.array([-1], np.int64)), axis=0)
    zeros = op.Reshape(op.ConstantOfShape(op.Shape(self), value=np.zeros(1, dtype.numpy)), flat_shape)
    grad = op.Reshape(cast_to(grad_output, dtype), flat_shape)
    index = op.Reshape(cast_to(indices, types.INT64), flat_shape)
    result = op.ScatterElements(zeros, index, grad, axis=-1, reduction="add")
    return cast_to(op.Reshape(result, op.Shape(self)), self.known_dtype)


@aten_op("aten::max_pool2d_with_indices_backward")
def aten_max_pool2d_with_indices_backward(
    grad_output: TFloat, self: TFloat, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], ceil_mode: bool, indices: TInt,
) -> TFloat:  # fmt: skip
    """max_pool2d_with_indices_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode, Tensor indices) -> Tensor"""
    return _max_pool_backward(grad_output, self, indices, 2)


@aten_op("aten::max_pool3d_with_indices_backward")
def aten_max_pool3d_with_indices_backward(
    grad_output: TFloat, self: TFloat, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], ceil_mode: bool, indices: TInt,
) -> TFloat:  # fmt: skip
    """max_pool3d_with_indices_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, int[3] dilation, bool ceil_mode, Tensor indices) -> Tensor"""
    return _max_pool_backward(grad_output, self, indices, 3)


def _cell_bounds(size_in: int, size_out: int) -> list[tuple[int, int]]:
    """torch's adaptive cells: [floor(o * in / out), ceil((o + 1) * in / out))."""
    return [((o * size_in) // size_out, -((-(o + 1) * size_in) // size_out)) for o in range(size_out)]


def spread_windows(grad: Value, axis: int, windows: Sequence[tuple[int, int]], size_in: int) -> Value:
    """grad along `axis` (one entry per window [start, end)) spread over the size_in input
    elements: each element gets the sum, in window order, of the windows that hold it. Only
    those windows are read (a gather, not a matrix product: an inf reaches only its own
    window's elements, where 0 * inf would spread NaN)."""
    holders = [[o for o, (start, end) in enumerate(windows) if start <= i < end] for i in range(size_in)]
    most = max((len(h) for h in holders), default=0)
    if most == 0:  # no window holds any element
        shape = op.Concat(op.Shape(grad, end=axis), np.array([size_in], np.int64), op.Shape(grad, start=axis + 1), axis=0)
        return op.Expand(op.CastLike(0, grad), shape)
    index = np.array([h + [len(windows)] * (most - len(h)) for h in holders], np.int64)  # len(windows): the zero pad
    pads = [0] * (2 * grad.known_rank)
    pads[grad.known_rank + axis] = 1
    return op.ReduceSum(op.Gather(op.Pad(grad, np.array(pads, np.int64)), index, axis=axis), [axis + 1], keepdims=0)


def _spread(grad: Value, axis: int, size_in: int, size_out: int) -> Value:
    """Adaptive cells: grad / cell size spread over the cells' input elements."""
    bounds = _cell_bounds(size_in, size_out)
    sizes = np.array([end - start for start, end in bounds], grad.known_dtype.numpy).reshape([-1] + [1] * (grad.known_rank - 1 - axis))
    return spread_windows(op.Div(grad, sizes), axis, bounds, size_in)


def _adaptive_avg_backward(grad_output: Value, self: Value, spatial: int, name: str) -> Value:
    """torch's CPU kernel: for each cell in row-major order, grad / kh / kw is added to every
    input element of the cell. Separable here, the last axis first (a row's cells are added
    before the next row's). torch reads the planes of grad_output and writes them into the first
    planes of a zero tensor shaped like self: a grad with fewer planes leaves the rest zero."""
    dims_in, dims_out = self.shape[-spatial:] if self.shape else None, grad_output.shape[-spatial:] if grad_output.shape else None
    sizes_in = [s for s in dims_in or () if isinstance(s, int)]
    sizes_out = [s for s in dims_out or () if isinstance(s, int)]
    if dims_in is None or dims_out is None or len(sizes_in) < len(dims_in) or len(sizes_out) < len(dims_out):
        raise ValueError(f"aten::{name} needs static spatial sizes, got input {self.shape} and grad {grad_output.shape}")
    dtype = types.DOUBLE if self.dtype is types.DOUBLE else types.FLOAT
    grad = cast_to(grad_output, dtype)
    rank = grad_output.known_rank
    for k in reversed(range(spatial)):
        grad = _spread(grad, rank - spatial + k, sizes_in[k], sizes_out[k])
    planes_grad, planes_self = grad_output.known_shape[:-spatial], self.known_shape[:-spatial]
    static_grad = [s for s in planes_grad if isinstance(s, int)]
    static_self = [s for s in planes_self if isinstance(s, int)]
    if planes_grad != planes_self and len(static_grad) == len(planes_grad) and len(static_self) == len(planes_self):
        have, want = int(np.prod(static_grad)), int(np.prod(static_self))
        if have > want:
            raise ValueError(f"aten::{name}: grad_output {grad_output.shape} has more planes than self {self.shape}")
        flat = op.Reshape(grad, np.array([have, *sizes_in], np.int64), allowzero=1)
        pads = np.array([0] * (spatial + 1) + [want - have] + [0] * spatial, np.int64)
        grad = op.Reshape(op.Pad(flat, pads), np.array(self.static_shape, np.int64), allowzero=1)
    return cast_to(grad, self.known_dtype)


@aten_op("aten::_adaptive_avg_pool2d_backward")
def aten__adaptive_avg_pool2d_backward(grad_output: TFloat, self: TFloat) -> TFloat:
    """_adaptive_avg_pool2d_backward(Tensor grad_output, Tensor self) -> Tensor"""
    return _adaptive_avg_backward(grad_output, self, 2, "_adaptive_avg_pool2d_backward")


@aten_op("aten::_adaptive_avg_pool3d_backward")
def aten__adaptive_avg_pool3d_backward(grad_output: TFloat, self: TFloat) -> TFloat:
    """_adaptive_avg_pool3d_backward(Tensor grad_output, Tensor self) -> Tensor"""
    return _adaptive_avg_backward(grad_output, self, 3, "_adaptive_avg_pool3d_backward")


@aten_op("aten::embedding_dense_backward")
def aten_embedding_dense_backward(
    grad_output: TFloat, indices: TInt, num_weights: Any, padding_idx: Any, scale_grad_by_freq: bool
) -> TFloat:
    """embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, SymInt padding_idx, bool scale_grad_by_freq) -> Tensor

    As torch's CPU kernel, which adds each gradient row to the weight row its index names only
    when 0 <= index < num_weights (its loop over weight rows never meets another index): indices
    out of that range, and padding_idx, contribute nothing (no wrap-around of negative ones)."""
    dtype = _compute_dtype(grad_output.known_dtype)
    index = op.Reshape(cast_to(indices, types.INT64), [-1])
    width = op.Shape(grad_output, start=-1)
    grad = op.Reshape(cast_to(grad_output, dtype), op.Concat(op.Constant(value=np.array([-1], np.int64)), width, axis=0))
    rows = op.Reshape(cast_to(num_weights, types.INT64) if isinstance(num_weights, Value) else
                      op.Constant(value=np.array(num_weights, np.int64)), [1])  # fmt: skip
    valid = op.And(op.GreaterOrEqual(index, np.array(0, np.int64)), op.Less(index, rows))
    index = op.Where(valid, index, np.array(0, np.int64))  # a row that exists; its gradient is zeroed below
    if scale_grad_by_freq:  # each gradient divided by how often its index occurs
        ones = op.Cast(valid, to=dtype.onnx)
        counts = op.ScatterElements(op.ConstantOfShape(rows, value=np.zeros(1, dtype.numpy)), index, ones, reduction="add")
        grad = op.Div(grad, op.Unsqueeze(op.Gather(counts, index), [1]))
    keep = op.And(valid, op.Not(op.Equal(index, cast_to(padding_idx, types.INT64) if isinstance(padding_idx, Value) else padding_idx)))
    grad = op.Where(op.Unsqueeze(keep, [1]), grad, op.CastLike(0, grad))  # padding_idx and out-of-range rows get no gradient
    zeros = op.ConstantOfShape(op.Concat(rows, width, axis=0), value=np.zeros(1, dtype.numpy))
    scatter_index = op.Expand(op.Unsqueeze(index, [1]), op.Shape(grad))
    return cast_to(op.ScatterElements(zeros, scatter_index, grad, axis=0, reduction="add"), grad_output.known_dtype)


def _row_statistics(stat: Value, input: Value, outer: int) -> Value:
    """mean or rstd as torch's CPU kernel reads it: the first M = prod(input.shape[:outer])
    values of its (dense) data, one per row, shaped input.shape[:outer] + [1, ...]. The same
    as `stat` when it has the forward's shape; a larger one (mean of another batch) is cut,
    as torch reads it; a smaller one fails (torch reads past its end)."""
    rank = input.known_rank
    wanted = None if input.shape is None else [*input.shape[:outer], *([1] * (rank - outer))]
    if wanted is not None and stat.shape is not None and list(stat.shape) == wanted:
        return stat
    leading = op.Shape(input, start=0, end=outer)
    count = op.ReduceProd(leading, keepdims=1)
    shape = op.Concat(leading, op.Constant(value=np.ones(rank - outer, np.int64)), axis=0)
    return op.Reshape(op.Slice(op.Reshape(stat, [-1]), [0], count), shape)


@aten_op("aten::native_layer_norm_backward")
def aten_native_layer_norm_backward(
    grad_out: TFloat, input: TFloat, normalized_shape: Sequence[Any], mean: TFloat, rstd: TFloat,
    weight: TFloat | None, bias: TFloat | None, output_mask: Sequence[bool],
) -> tuple[TFloat | None, TFloat | None, TFloat | None]:  # fmt: skip
    """native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)"""
    dtype = types.DOUBLE if input.dtype is types.DOUBLE else types.FLOAT  # torch's opmath
    rank, k = input.known_rank, len(normalized_shape)
    inner = op.Constant(value=np.arange(rank - k, rank, dtype=np.int64))
    outer = op.Constant(value=np.arange(0, rank - k, dtype=np.int64))
    x, dy = cast_to(input, dtype), cast_to(grad_out, dtype)
    mean, rstd = _row_statistics(mean, input, rank - k), _row_statistics(rstd, input, rank - k)
    x_hat = op.Mul(op.Sub(x, cast_to(mean, dtype)), cast_to(rstd, dtype))
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        g = dy if weight is None else op.Mul(dy, cast_to(weight, dtype))
        n = op.Cast(op.ReduceProd(op.Shape(input, start=rank - k), keepdims=1), to=dtype.onnx)
        sum_g = op.ReduceSum(g, inner, keepdims=1)
        sum_gx = op.ReduceSum(op.Mul(g, x_hat), inner, keepdims=1)
        # dx = rstd / N * (N * g - sum(g) - x_hat * sum(g * x_hat))
        inside = op.Sub(op.Sub(op.Mul(g, n), sum_g), op.Mul(x_hat, sum_gx))
        grad_input = cast_to(op.Mul(op.Div(cast_to(rstd, dtype), n), inside), input.known_dtype)
    if output_mask[1] and weight is not None:
        grad_weight = cast_to(op.ReduceSum(op.Mul(dy, x_hat), outer, keepdims=0, noop_with_empty_axes=1), weight.known_dtype)
    if output_mask[2] and bias is not None:
        grad_bias = cast_to(op.ReduceSum(dy, outer, keepdims=0, noop_with_empty_axes=1), bias.known_dtype)
    return grad_input, grad_weight, grad_bias
