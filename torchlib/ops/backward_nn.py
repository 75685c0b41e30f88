"""Backward ops of convolution, average pooling, group norm and batch norm, as they appear in exported
training graphs: convolution_backward, avg_pool2d/3d_backward, native_group_norm_backward,
native_batch_norm_backward.

- convolution_backward: the input gradient is the transposed convolution of the output
  gradient (a convolution for a transposed forward), the weight gradient one grouped
  convolution with batch and channels swapped (the input, shaped (C/G, G*N, *S), convolved with
  the output gradient, shaped (G*O/G, N, *S'), stride and dilation exchanged), cropped to the
  kernel. Both reuse conv_pool's convolution, so every dtype computes as the forward does;
  the float64 weight gradient is im2col of the input (one column per kernel offset) and MatMul.
- avg_pool backward: the output gradient divided by torch's divisor of each window (computed
  when the graph is built, the formula of torch's kernel) and spread back over the windows by a
  transposed convolution with a kernel of ones.
- native_group_norm_backward: the layer-norm gradient formula over each (n, group);
  native_batch_norm_backward the same over each channel (train), or a scale (eval).
Half types compute in float32 and round once; float64 stays float64.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops._helpers import as_shape
from torchlib.ops.backward import spread_windows
from torchlib.ops.conv_pool import _conv, _conv_dtype, _conv_transpose, _ints, _pad_spatial, _patches, _spatial_sizes
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _opmath(dtype: types.DType) -> types.DType:
    """torch's accumulation dtype: float64 stays, every other floating dtype sums in float32."""
    return types.DOUBLE if dtype is types.DOUBLE else types.FLOAT


def _crop(x: Value, sizes: Sequence[int], first_axis: int) -> Value:
    """x's axes first_axis.. cut to sizes (from the start)."""
    axes = list(range(first_axis, first_axis + len(sizes)))
    return op.Slice(x, [0] * len(sizes), list(sizes), axes)


# -- convolution --------------------------------------------------------------------------------


def _conv_weight_grad(
    x: Value, dy: Value, kernel: list[int], stride: list[int], padding: list[int], dilation: list[int], groups: int
) -> Value:
    """d(conv(x, w))/dw contracted with dy: (G*O/G, C/G, *kernel), for x (N, C, *S), dy (N, O, *S')."""
    n = len(kernel)
    c_in, c_out = x.known_shape[1], dy.known_shape[1]
    if not isinstance(c_in, int) or not isinstance(c_out, int):
        raise ValueError(f"aten::convolution_backward needs the channel counts known, got input {x.shape} and grad {dy.shape}")
    c_group, o_group = c_in // groups, c_out // groups
    if _conv_dtype(x.known_dtype) not in (types.FLOAT, types.FLOAT16):
        return _conv_weight_grad_as_matmul(x, dy, kernel, stride, padding, dilation, groups, c_group, o_group)
    batch = op.Shape(x, start=0, end=1)
    # x as (C/G, G*N, *S): batch c, channel (g, n); dy as (G*O/G, N, *S'): weight o, channel n
    xs = op.Reshape(x, op.Concat(batch, np.array([groups, c_group], np.int64), op.Shape(x, start=2), axis=0), allowzero=1)
    xs = op.Transpose(xs, perm=[2, 1, 0, *range(3, 3 + n)])
    xs = op.Reshape(xs, op.Concat(np.array([c_group, -1], np.int64), op.Shape(x, start=2), axis=0))
    ws = op.Transpose(dy, perm=[1, 0, *range(2, 2 + n)])
    grad = _conv(xs, ws, None, dilation, padding, padding, stride, groups)  # (C/G, O, *K')
    grad = _crop(grad, kernel, 2)
    return op.Transpose(grad, perm=[1, 0, *range(2, 2 + n)])


def _conv_weight_grad_as_matmul(
    x: Value, dy: Value, kernel: list[int], stride: list[int], padding: list[int], dilation: list[int], groups: int,
    c_group: int, o_group: int,
) -> Value:  # fmt: skip
    """The weight gradient as im2col + MatMul (double, integers: as conv_pool's convolution),
    one column per kernel offset: grad[g, o, (c, k)] = sum over (n, p) of dy[n, g, o, p] * cols[n, g, c, p, k]."""
    n = len(kernel)
    dtype = _conv_dtype(x.known_dtype)
    x, dy = cast_to(x, dtype), cast_to(dy, dtype)
    cols = _patches(_pad_spatial(x, padding, padding), kernel, stride, dilation)  # (N, C, *out', K)
    cols = _crop(cols, _spatial_sizes(dy, n, "aten::convolution_backward"), 2)  # a transposed forward has out' >= out
    k = math.prod(kernel)
    cols = op.Reshape(cols, [0, groups, c_group, -1, k])  # (N, G, C/G, P, K)
    cols = op.Reshape(op.Transpose(cols, perm=[1, 0, 3, 2, 4]), [groups, -1, c_group * k])  # (G, N*P, C/G*K)
    grads = op.Reshape(dy, [0, groups, o_group, -1])  # (N, G, O/G, P)
    grads = op.Reshape(op.Transpose(grads, perm=[1, 2, 0, 3]), [groups, o_group, -1])  # (G, O/G, N*P)
    return op.Reshape(op.MatMul(grads, cols), [groups * o_group, c_group, *kernel])


@aten_op("aten::convolution_backward")
def aten_convolution_backward(
    grad_output: TFloat, input: TFloat, weight: TFloat, bias_sizes: Sequence[int] | None, stride: Sequence[int],
    padding: Sequence[int], dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
    output_mask: Sequence[bool],
) -> tuple[TFloat | None, TFloat | None, TFloat | None]:  # fmt: skip
    """convolution_backward(Tensor grad_output, Tensor input, Tensor weight, SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)

    Inputs are batched (N, C, *spatial), as aten::convolution receives them; the spatial sizes
    of input, weight and grad_output must be known when the graph is built. A batch known to be
    empty gives zero gradients; a dynamic batch that is 0 only at run time is not supported
    (onnxruntime's Conv does not return on the weight gradient's 0 channels)."""
    n = weight.known_rank - 2
    if input.rank != n + 2 or grad_output.rank != n + 2:
        raise ValueError(f"aten::convolution_backward expects batched input and grad_output of rank {n + 2} "
                         f"for a weight of rank {n + 2}, got ranks {input.rank} and {grad_output.rank}")  # fmt: skip
    stride, padding, dilation = _ints(stride, n, "stride"), _ints(padding, n, "padding"), _ints(dilation, n, "dilation")
    in_sizes = _spatial_sizes(input, n, "aten::convolution_backward")
    out_sizes = _spatial_sizes(grad_output, n, "aten::convolution_backward")
    kernel = _spatial_sizes(weight, n, "aten::convolution_backward")
    grad_input = grad_weight = grad_bias = None
    if input.known_shape[0] == 0:  # no samples: zero gradients (onnxruntime's Conv does not return on 0 channels)
        grad_input = op.Expand(op.CastLike(0, input), op.Shape(input)) if output_mask[0] else None
        grad_weight = op.Expand(op.CastLike(0, weight), op.Shape(weight)) if output_mask[1] else None
    elif output_mask[0]:
        if transposed:  # the forward was a transposed convolution: its input gradient is a convolution
            grad_input = _crop(_conv(grad_output, weight, None, stride, padding, padding, dilation, groups), in_sizes, 2)
        else:
            reach = [(o - 1) * s - 2 * p + d * (k - 1) + 1 for o, s, p, d, k in zip(out_sizes, stride, padding, dilation, kernel)]
            extra = [size - r for size, r in zip(in_sizes, reach)]  # the rows no window reached
            grad_input = _conv_transpose(grad_output, weight, None, stride, padding, dilation, extra, groups)
    if output_mask[1] and grad_weight is None:
        if transposed:  # the roles of input and output gradient swap
            grad_weight = _conv_weight_grad(grad_output, input, kernel, stride, padding, dilation, groups)
        else:
            grad_weight = _conv_weight_grad(input, grad_output, kernel, stride, padding, dilation, groups)
        grad_weight = cast_to(grad_weight, weight.known_dtype)
    if output_mask[2]:
        dtype = _opmath(grad_output.known_dtype)
        axes = [0, *range(2, 2 + n)]
        grad_bias = cast_to(op.ReduceSum(cast_to(grad_output, dtype), axes, keepdims=0), grad_output.known_dtype)
    return grad_input, grad_weight, grad_bias


# -- average pooling ----------------------------------------------------------------------------


def _avg_divisors(
    sizes: list[int], out: list[int], kernel: list[int], strides: list[int], pads: list[int], count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray:  # fmt: skip
    """torch's divisor of every output window (shape out), as its CPU kernel computes it."""
    divisors = np.zeros(out, np.float64)
    for index in itertools.product(*(range(o) for o in out)):
        pool, clipped = 1, 1
        for i, size, k, s, p in zip(index, sizes, kernel, strides, pads):
            start = i * s - p
            end = min(start + k, size + p)
            pool *= end - start
            clipped *= min(end, size) - max(start, 0)
        divisors[index] = divisor_override if divisor_override is not None else pool if count_include_pad else clipped
    return divisors


def _avg_pool_backward(
    grad_output: Value, self: Value, n: int, kernel_size: Any, stride: Any, padding: Any, count_include_pad: bool,
    divisor_override: int | None, name: str,
) -> Value:  # fmt: skip
    kernel = _ints(kernel_size, n, "kernel_size")
    strides = _ints(stride, n, "stride") if isinstance(stride, int) or len(stride) > 0 else kernel
    pads = _ints(padding, n, "padding")
    sizes = _spatial_sizes(self, n, f"aten::{name}")
    out = _spatial_sizes(grad_output, n, f"aten::{name}")
    dtype = _opmath(self.known_dtype)
    divisors = _avg_divisors(sizes, out, kernel, strides, pads, count_include_pad, divisor_override)
    # torch's CPU kernel: for each window in row-major order, grad / divisor is added to every
    # input element of the window (clipped to the input). Separable here, the last axis first
    # (a row's windows are added before the next row's); only a window's own elements are read.
    grad = op.Div(cast_to(grad_output, dtype), op.Constant(value=divisors.astype(dtype.numpy)))
    for i in reversed(range(n)):
        size, s, k, p = sizes[i], strides[i], kernel[i], pads[i]
        windows = [(max(o * s - p, 0), min(o * s - p + k, size + p, size)) for o in range(out[i])]
        grad = spread_windows(grad, grad.known_rank - n + i, windows, size)
    leading_grad, leading_self = grad_output.known_shape[:-n], self.known_shape[:-n]
    static_grad = [d for d in leading_grad if isinstance(d, int)]
    static_self = [d for d in leading_self if isinstance(d, int)]
    if leading_grad != leading_self and len(static_grad) == len(leading_grad) and len(static_self) == len(leading_self):
        have, want = int(np.prod(static_grad)), int(np.prod(static_self))
        if n == 3 or have > want:  # torch's 3-d kernel reads past grad_output's end (its planes are self's)
            raise ValueError(f"aten::{name}: grad_output {grad_output.shape} and self {self.shape} have different batch or channel sizes")
        # torch's 2-d kernel runs over grad_output's planes, into zeros shaped like self
        flat = op.Reshape(grad, np.array([have, *sizes], np.int64), allowzero=1)
        pad = np.array([0] * (n + 1) + [want - have] + [0] * n, np.int64)
        grad = op.Reshape(op.Pad(flat, pad), np.array(self.shape, np.int64), allowzero=1)
    return cast_to(grad, self.known_dtype)


@aten_op("aten::avg_pool2d_backward")
def aten_avg_pool2d_backward(
    grad_output: TFloat, self: TFloat, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
    ceil_mode: bool, count_include_pad: bool, divisor_override: int | None,
) -> TFloat:  # fmt: skip
    """avg_pool2d_backward(Tensor grad_output, Tensor self, int[2] kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor

    ceil_mode shows in grad_output's size, which the windows are taken from."""
    return _avg_pool_backward(grad_output, self, 2, kernel_size, stride, padding, count_include_pad, divisor_override, "avg_pool2d_backward")


@aten_op("aten::avg_pool3d_backward")
def aten_avg_pool3d_backward(
    grad_output: TFloat, self: TFloat, kernel_size: Sequence[int], stride: Sequence[int], padding: Sequence[int],
    ceil_mode: bool, count_include_pad: bool, divisor_override: int | None,
) -> TFloat:  # fmt: skip
    """avg_pool3d_backward(Tensor grad_output, Tensor self, int[3] kernel_size, int[3] stride, int[3] padding, bool ceil_mode, bool count_include_pad, int? divisor_override) -> Tensor

    ceil_mode shows in grad_output's size, which the windows are taken from."""
    return _avg_pool_backward(grad_output, self, 3, kernel_size, stride, padding, count_include_pad, divisor_override, "avg_pool3d_backward")


# -- group norm ---------------------------------------------------------------------------------


@aten_op("aten::native_group_norm_backward")
def aten_native_group_norm_backward(
    grad_out: TFloat, input: TFloat, mean: TFloat, rstd: TFloat, weight: TFloat | None, N: int, C: int, HxW: int,
    group: int, output_mask: Sequence[bool],
) -> tuple[TFloat | None, TFloat | None, TFloat | None]:  # fmt: skip
    """native_group_norm_backward(Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight, SymInt N, SymInt C, SymInt HxW, int group, bool[3] output_mask) -> (Tensor, Tensor, Tensor)

    mean and rstd are native_group_norm's (N, group) statistics."""
    dtype = _opmath(input.known_dtype)
    if isinstance(C, int) and isinstance(HxW, int):
        per_group: Any = [C // group * HxW]
    else:
        per_group = op.Mul(op.Div(as_shape([C]), np.array([group], np.int64)), as_shape([HxW]))
    grouped = as_shape([N, group, per_group[0]]) if isinstance(per_group, list) else op.Concat(
        as_shape([N]), np.array([group], np.int64), per_group, axis=0)  # (N, G, C/G * HxW)
    channels = as_shape([N, C, HxW])  # (N, C, HxW)
    x, dy = cast_to(input, dtype), cast_to(grad_out, dtype)
    stats = [op.Unsqueeze(cast_to(s, dtype), [2]) for s in (mean, rstd)]  # (N, G, 1)
    x_hat = op.Mul(op.Sub(op.Reshape(x, grouped, allowzero=1), stats[0]), stats[1])  # (N, G, D)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        g = dy if weight is None else op.Mul(op.Reshape(dy, channels, allowzero=1), op.Reshape(cast_to(weight, dtype), [-1, 1]))
        g = op.Reshape(g, grouped, allowzero=1)
        count = np.array(per_group, dtype.numpy) if isinstance(per_group, list) else op.Cast(per_group, to=dtype.onnx)
        sum_g = op.ReduceSum(g, [2], keepdims=1)
        sum_gx = op.ReduceSum(op.Mul(g, x_hat), [2], keepdims=1)
        # dx = rstd / D * (D * g - sum(g) - x_hat * sum(g * x_hat)) over each (n, group) of D elements
        inside = op.Sub(op.Sub(op.Mul(g, count), sum_g), op.Mul(x_hat, sum_gx))
        grad_input = op.Mul(op.Div(stats[1], count), inside)
        grad_input = cast_to(op.Reshape(grad_input, op.Shape(input), allowzero=1), input.known_dtype)
    per_channel = [0, 2]
    if output_mask[1]:
        x_hat_channels = op.Reshape(x_hat, channels, allowzero=1)
        products = op.Mul(op.Reshape(dy, channels, allowzero=1), x_hat_channels)
        grad_weight = op.ReduceSum(products, per_channel, keepdims=0)
        grad_weight = cast_to(grad_weight, weight.known_dtype if weight is not None else input.known_dtype)
    if output_mask[2]:
        grad_bias = op.ReduceSum(op.Reshape(dy, channels, allowzero=1), per_channel, keepdims=0)
        grad_bias = cast_to(grad_bias, weight.known_dtype if weight is not None else input.known_dtype)
    return grad_input, grad_weight, grad_bias


# -- batch norm ---------------------------------------------------------------------------------


@aten_op("aten::native_batch_norm_backward")
def aten_native_batch_norm_backward(
    grad_out: TFloat, input: TFloat, weight: TFloat | None, running_mean: TFloat | None, running_var: TFloat | None,
    save_mean: TFloat | None, save_invstd: TFloat | None, train: bool, eps: float, output_mask: Sequence[bool],
) -> tuple[TFloat | None, TFloat | None, TFloat | None]:  # fmt: skip
    """native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) -> (Tensor, Tensor, Tensor)

    train: the batch statistics save_mean and save_invstd (native_batch_norm's outputs) over
    every dim but 1; else the running statistics, 1 / sqrt(running_var + eps)."""
    if input.rank is None or input.rank < 2:
        raise ValueError(f"aten::native_batch_norm_backward expects an input of rank >= 2 (N, C, ...), got rank {input.rank}")
    dtype = _opmath(input.known_dtype)
    rank = input.rank
    axes = [0, *range(2, rank)]

    def per_channel(v: Value) -> Value:
        return op.Reshape(cast_to(v, dtype), [1, -1] + [1] * (rank - 2))

    if train:
        if save_mean is None or save_invstd is None:
            raise ValueError("aten::native_batch_norm_backward with train=True needs save_mean and save_invstd")
        mean, invstd = per_channel(save_mean), per_channel(save_invstd)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("aten::native_batch_norm_backward with train=False needs running_mean and running_var")
        mean = per_channel(running_mean)
        invstd = op.Reciprocal(op.Sqrt(op.Add(per_channel(running_var), eps)))
    x, dy = cast_to(input, dtype), cast_to(grad_out, dtype)
    x_hat = op.Mul(op.Sub(x, mean), invstd)
    scale = invstd if weight is None else op.Mul(invstd, per_channel(weight))
    sum_dy = op.ReduceSum(dy, axes, keepdims=1)
    sum_dy_x_hat = op.ReduceSum(op.Mul(dy, x_hat), axes, keepdims=1)
    grad_input = grad_weight = grad_bias = None
    if output_mask[0]:
        if train:  # dx = w * invstd * (dy - mean(dy) - x_hat * mean(dy * x_hat)) over N * spatial elements
            count = op.Cast(op.Div(op.Size(x), op.Shape(x, start=1, end=2)), to=dtype.onnx)
            inside = op.Sub(op.Sub(dy, op.Div(sum_dy, count)), op.Mul(x_hat, op.Div(sum_dy_x_hat, count)))
            grad_input = op.Mul(inside, scale)
        else:
            grad_input = op.Mul(dy, scale)
        grad_input = cast_to(grad_input, input.known_dtype)
    stats_dtype = weight.known_dtype if weight is not None else input.known_dtype
    if output_mask[1]:
        grad_weight = cast_to(op.Reshape(sum_dy_x_hat, [-1]), stats_dtype)
    if output_mask[2]:
        grad_bias = cast_to(op.Reshape(sum_dy, [-1]), stats_dtype)
    return grad_input, grad_weight, grad_bias
