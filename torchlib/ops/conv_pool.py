"""Convolution and pooling: convolution, conv1d/2d/3d, conv_transpose*, max/avg/adaptive pools.

onnxruntime's Conv and ConvTranspose run float32 and float16 only, its AveragePool float32 and
float16, its MaxPool float32/float16/double/int8/uint8. Other dtypes torch accepts take these
routes:
- bfloat16 computes in float32 and casts back.
- double and integer convolution (and transposed convolution) is written as im2col + MatMul
  (`_conv_as_matmul`), so double stays double and integers stay exact.
- double and int64 average pooling, and `divisor_override`, sum the pooling windows
  (`_avg_pool_by_sum`) and divide by torch's divisor.
- int16/int32/int64 max pooling compares in double (exact for int64 only up to 2**53).

Pooling indices follow torch: the flat index inside each (n, c) plane, where ONNX MaxPool counts
over the whole N*C*H*W tensor.

NaN and inf: onnxruntime's MaxPool skips NaN, torch's max of a window holding one is NaN (at the
window's last NaN): float32 2-D max pooling multiplies by 1-or-NaN per window, from ops that run
in onnxruntime's NCHWc layout (`_ones_or_nan_per_window`); other floating max pooling adds a
second MaxPool over a NaN mask (with indices: over "position + 1 where NaN") and a Where. Adaptive average pooling sums each window's own elements
(an averaging matrix would multiply inf by the zeros outside the window).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import current_exact_nan, op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal
from torchlib.ops._helpers import n_outputs, one_output
from torchlib.ops.reductions import int64_sum
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_END = 2**63 - 1  # Slice end meaning "to the end of the axis"
_START_REVERSED = -(2**63)  # Slice end meaning "to the start" with a negative step


def _ints(values: Any, n: int, what: str) -> list[int]:
    """torch's int[n] argument (an int, one int to repeat, or n ints) as n Python ints."""
    if isinstance(values, (int, np.integer)):
        values = [values]
    values = list(values)
    if len(values) == 1:
        values = values * n
    if len(values) != n or not all(isinstance(v, (int, np.integer)) for v in values):
        raise ValueError(f"{what} must be {n} ints known when the graph is built, got {values!r}")
    return [int(v) for v in values]


def _given(stride: Any) -> bool:
    """Pooling's stride=[] means "the kernel size"."""
    return isinstance(stride, (int, np.integer)) or len(stride) > 0


def _spatial_sizes(x: Value, n: int, what: str) -> list[int]:
    sizes = list(x.shape[-n:]) if x.shape is not None else [None] * n
    if not all(isinstance(s, int) for s in sizes):
        raise ValueError(f"{what} needs the spatial sizes known when the graph is built, got {sizes}")
    return sizes  # type: ignore[return-value]


def _batched(x: Value, n: int) -> tuple[Value, bool]:
    """Inputs without a batch dim (C, *spatial) get one, as torch does for unbatched inputs."""
    if x.rank == n + 1:
        return op.Unsqueeze(x, [0]), True
    return x, False


def _unbatched(y: Value, squeeze: bool) -> Value:
    return op.Squeeze(y, [0]) if squeeze else y


# -- im2col: every window of a pooling or convolution as a trailing axis -----------------------


def _patches(x: Value, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int]) -> Value:
    """The windows over the last len(kernel) axes of an already padded x: shape (..., *out, K),
    K = prod(kernel), the kernel offsets in row-major order."""
    return op.Concat(*(op.Unsqueeze(c, [-1]) for c in _window_columns(x, kernel, stride, dilation)), axis=-1)


def _window_columns(x: Value, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int]) -> list[Value]:
    """For each kernel offset in row-major order, the input element it meets in every window:
    K tensors of shape (..., *out)."""
    n = len(kernel)
    axes = list(range(x.known_rank - n, x.known_rank))
    columns = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        starts = [o * d for o, d in zip(offsets, dilation)]
        ends = [-(k - 1 - o) * d if o < k - 1 else _END for o, k, d in zip(offsets, kernel, dilation)]
        columns.append(op.Slice(x, starts, ends, axes, list(stride)))
    return columns


def _pad_spatial(x: Value, begin: Sequence[int], end: Sequence[int], value: Any = 0) -> Value:
    if not any(begin) and not any(end):
        return x
    lead = [0] * (x.known_rank - len(begin))
    return op.Pad(x, lead + list(begin) + lead + list(end), value)


def _spread(x: Value, axis: int, step: int) -> Value:
    """step - 1 zeros between neighbours along axis: length L becomes (L - 1) * step + 1."""
    rank = x.known_rank
    if x.is_static:
        dims = x.static_shape
        shape: Any = [*dims[:axis], dims[axis] * step, *dims[axis + 1 :]]
    else:
        spread = op.Mul(op.Shape(x, start=axis, end=axis + 1), step)
        shape = op.Concat(op.Shape(x, end=axis), spread, op.Shape(x, start=axis + 1), axis=0)
    pads = [0] * (2 * (rank + 1))
    pads[rank + 1 + axis + 1] = step - 1
    y = op.Pad(op.Unsqueeze(x, [axis + 1]), pads)
    return op.Slice(op.Reshape(y, shape), [0], [-(step - 1)], [axis])


def _conv_as_matmul(
    x: Value, w: Value, b: Value | None, stride: list[int], pads_begin: list[int], pads_end: list[int],
    dilation: list[int], groups: int,
) -> Value:  # fmt: skip
    """Convolution as im2col + MatMul, for dtypes onnxruntime's Conv lacks (double, integers)."""
    n = w.known_rank - 2
    kernel = _spatial_sizes(w, n, "convolution in this dtype")
    c_out, c_group = w.known_shape[0], w.known_shape[1]
    if not isinstance(c_out, int) or not isinstance(c_group, int):
        raise ValueError(f"convolution in {x.dtype} needs the weight's shape known, got {w.shape}")
    k = math.prod(kernel) * c_group
    cols = _patches(_pad_spatial(x, pads_begin, pads_end), kernel, stride, dilation)  # (N, C, *out, K)
    # every size explicit (a -1 cannot be inferred from an empty batch), static where known
    batch: list[int] | Value
    out: list[int] | Value
    if cols.is_static:
        batch, out = list(cols.static_shape[:1]), list(cols.static_shape[2 : 2 + n])
        rows: Any = [math.prod(batch + out)]

        def shape(*parts: Any) -> Any:
            return [d for part in parts for d in part]
    else:
        batch, out = op.Shape(cols, end=1), op.Shape(cols, start=2, end=2 + n)
        rows = op.ReduceProd(op.Concat(batch, out, axis=0), keepdims=1)

        def shape(*parts: Any) -> Any:
            return op.Concat(*parts, axis=0)

    cols = op.Reshape(cols, shape(batch, [groups, c_group], out, [math.prod(kernel)]), allowzero=1)  # (N, g, C/g, *out, K)
    cols = op.Transpose(cols, perm=[1, 0, *range(3, 3 + n), 2, 3 + n])  # (g, N, *out, C/g, K)
    # one batch dim on both sides: onnxruntime's MatMul cannot broadcast a batch holding 0
    cols = op.Reshape(cols, shape([groups], rows, [k]), allowzero=1)  # (g, N * out, C/g * K)
    weights = op.Transpose(op.Reshape(w, [groups, -1, k]), perm=[0, 2, 1])  # (g, C/g * K, O/g)
    y = op.Reshape(op.MatMul(cols, weights), shape([groups], batch, out, [c_out // groups]), allowzero=1)  # (g, N, *out, O/g)
    y = op.Transpose(y, perm=[1, 0, n + 2, *range(2, n + 2)])  # (N, g, O/g, *out)
    y = op.Reshape(y, shape(batch, [c_out], out), allowzero=1)
    if b is not None:
        y = op.Add(y, op.Reshape(b, [-1] + [1] * n))
    return y


def _conv_transpose_as_matmul(
    x: Value, w: Value, b: Value | None, stride: list[int], padding: list[int], dilation: list[int],
    output_padding: list[int], groups: int,
) -> Value:  # fmt: skip
    """Transposed convolution as a convolution: spread the input by the stride, pad it by
    dilation * (kernel - 1) - padding, and convolve with the flipped, transposed kernel."""
    n = w.known_rank - 2
    if not w.is_static:
        raise ValueError(f"transposed convolution in {x.dtype} needs the weight's shape known, got {w.shape}")
    c_in, c_out_group, *kernel = w.static_shape
    for i, s in enumerate(stride):
        if s > 1:
            x = _spread(x, 2 + i, s)
    w = op.Reshape(w, [groups, c_in // groups, c_out_group, *kernel])
    w = op.Transpose(w, perm=[0, 2, 1, *range(3, 3 + n)])
    w = op.Reshape(w, [groups * c_out_group, c_in // groups, *kernel])
    spatial = list(range(2, 2 + n))
    w = op.Slice(w, [-1] * n, [_START_REVERSED] * n, spatial, [-1] * n)
    begin = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding)]
    end = [e + o for e, o in zip(begin, output_padding)]
    return _conv_as_matmul(x, w, b, [1] * n, begin, end, dilation, groups)


# -- convolution --------------------------------------------------------------------------------


def _conv_dtype(dtype: types.DType) -> types.DType:
    """The dtype a convolution computes in: onnxruntime's Conv and ConvTranspose run float32 and
    float16; bfloat16 goes through float32, double and integers through im2col + MatMul."""
    if dtype in (types.FLOAT, types.FLOAT16, types.DOUBLE):
        return dtype
    return types.FLOAT if dtype is types.BFLOAT16 else types.INT64


def _conv(
    input: Value, weight: Value, bias: Value | None, stride: list[int], begin: list[int], end: list[int],
    dilation: list[int], groups: int,
) -> Value:  # fmt: skip
    compute = _conv_dtype(input.known_dtype)
    x, w, b = cast_to(input, compute), cast_to(weight, compute), cast_to(bias, compute)
    if compute in (types.FLOAT, types.FLOAT16):
        y = op.Conv(x, w, b, strides=stride, pads=begin + end, dilations=dilation, group=groups)
    else:
        y = _conv_as_matmul(x, w, b, stride, begin, end, dilation, groups)
    return cast_to(y, input.known_dtype)


def _conv_transpose(
    input: Value, weight: Value, bias: Value | None, stride: list[int], padding: list[int], dilation: list[int],
    output_padding: list[int], groups: int,
) -> Value:  # fmt: skip
    compute = _conv_dtype(input.known_dtype)
    x, w, b = cast_to(input, compute), cast_to(weight, compute), cast_to(bias, compute)
    if all(o < s for o, s in zip(output_padding, stride)):
        end, extra = padding, output_padding
    else:
        # torch allows output_padding up to max(stride, dilation) - 1, onnxruntime only below the
        # stride: take it from the end padding first (the same output, fewer rows cropped)
        end = [max(p - o, 0) for p, o in zip(padding, output_padding)]
        extra = [max(o - p, 0) for p, o in zip(padding, output_padding)]
    if compute in (types.FLOAT, types.FLOAT16) and all(e < s for e, s in zip(extra, stride)):
        y = op.ConvTranspose(x, w, b, pads=padding + end, output_padding=extra, strides=stride, dilations=dilation, group=groups)
    else:
        y = _conv_transpose_as_matmul(x, w, b, stride, padding, dilation, output_padding, groups)
    return cast_to(y, input.known_dtype)


def _convolution(
    input: Value, weight: Value, bias: Value | None, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int,
) -> Value:  # fmt: skip
    n = weight.known_rank - 2
    stride = _ints(stride, n, "stride")
    padding = _ints(padding, n, "padding")
    dilation = _ints(dilation, n, "dilation")
    if transposed:
        output_padding = _ints(output_padding, n, "output_padding")
        return _conv_transpose(input, weight, bias, stride, padding, dilation, output_padding, groups)
    return _conv(input, weight, bias, stride, padding, padding, dilation, groups)


def _conv_maybe_unbatched(
    input: Value, weight: Value, bias: Value | None, stride: Any, padding: Any, dilation: Any,
    transposed: bool, output_padding: Any, groups: int,
) -> Value:  # fmt: skip
    x, squeeze = _batched(input, weight.known_rank - 2)
    y = _convolution(x, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
    return _unbatched(y, squeeze)


def _same_padding(weight: Value, stride: Any, padding: str, dilation: Any) -> tuple[list[int], list[int]]:
    """torch's padding="same" / "valid" as (begin, end) pads; odd totals pad one more at the end."""
    n = weight.known_rank - 2
    if padding == "valid":
        return [0] * n, [0] * n
    if padding != "same":
        raise ValueError(f'padding must be "same" or "valid", got {padding!r}')
    if any(s != 1 for s in _ints(stride, n, "stride")):
        raise ValueError('padding="same" is not supported for strided convolutions (torch rejects it too)')
    kernel = _spatial_sizes(weight, n, 'padding="same"')
    total = [d * (k - 1) for d, k in zip(_ints(dilation, n, "dilation"), kernel)]
    begin = [t // 2 for t in total]
    return begin, [t - b for t, b in zip(total, begin)]


def _conv_padding_mode(
    input: Value, weight: Value, bias: Value | None, stride: Any, padding: str, dilation: Any, groups: int
) -> Value:
    n = weight.known_rank - 2
    begin, end = _same_padding(weight, stride, padding, dilation)
    x, squeeze = _batched(input, n)
    y = _conv(x, weight, bias, _ints(stride, n, "stride"), begin, end, _ints(dilation, n, "dilation"), groups)
    return _unbatched(y, squeeze)


@aten_op("aten::convolution")
def aten_convolution(
    input: TReal, weight: TReal, bias: TReal | None, stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
) -> TReal:  # fmt: skip
    """convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor"""
    return _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@aten_op("aten::_convolution")
def aten__convolution(
    input: TReal, weight: TReal, bias: TReal | None, stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
    benchmark: bool, deterministic: bool, cudnn_enabled: bool, allow_tf32: bool,
) -> TReal:  # fmt: skip
    """_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor"""
    return _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@aten_op("aten::_convolution.deprecated")
def aten__convolution_deprecated(
    input: TReal, weight: TReal, bias: TReal | None, stride: Sequence[int], padding: Sequence[int],
    dilation: Sequence[int], transposed: bool, output_padding: Sequence[int], groups: int,
    benchmark: bool, deterministic: bool, cudnn_enabled: bool,
) -> TReal:  # fmt: skip
    """_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, int[] output_padding, SymInt groups, bool benchmark, bool deterministic, bool cudnn_enabled) -> Tensor"""
    return _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)


@aten_op("aten::_convolution_mode")
def aten__convolution_mode(
    input: TReal, weight: TReal, bias: TReal | None, stride: Sequence[int], padding: str,
    dilation: Sequence[int], groups: int,
) -> TReal:  # fmt: skip
    """_convolution_mode(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, str padding, SymInt[] dilation, SymInt groups) -> Tensor"""
    return _conv_padding_mode(input, weight, bias, stride, padding, dilation, groups)


@aten_op("aten::conv1d")
def aten_conv1d(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,), dilation: Sequence[int] = (1,), groups: int = 1,
) -> TReal:  # fmt: skip
    """conv1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv_maybe_unbatched(input, weight, bias, stride, padding, dilation, False, [0], groups)


@aten_op("aten::conv2d")
def aten_conv2d(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0), dilation: Sequence[int] = (1, 1), groups: int = 1,
) -> TReal:  # fmt: skip
    """conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv_maybe_unbatched(input, weight, bias, stride, padding, dilation, False, [0], groups)


@aten_op("aten::conv3d")
def aten_conv3d(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1, 1, 1),
    padding: Sequence[int] = (0, 0, 0), dilation: Sequence[int] = (1, 1, 1), groups: int = 1,
) -> TReal:  # fmt: skip
    """conv3d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv_maybe_unbatched(input, weight, bias, stride, padding, dilation, False, [0], groups)


@aten_op("aten::conv1d.padding")
def aten_conv1d_padding(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1,),
    padding: str = "valid", dilation: Sequence[int] = (1,), groups: int = 1,
) -> TReal:  # fmt: skip
    """conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, str padding="valid", SymInt[1] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv_padding_mode(input, weight, bias, stride, padding, dilation, groups)


@aten_op("aten::conv2d.padding")
def aten_conv2d_padding(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1, 1),
    padding: str = "valid", dilation: Sequence[int] = (1, 1), groups: int = 1,
) -> TReal:  # fmt: skip
    """conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, str padding="valid", SymInt[2] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv_padding_mode(input, weight, bias, stride, padding, dilation, groups)


@aten_op("aten::conv3d.padding")
def aten_conv3d_padding(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1, 1, 1),
    padding: str = "valid", dilation: Sequence[int] = (1, 1, 1), groups: int = 1,
) -> TReal:  # fmt: skip
    """conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, str padding="valid", SymInt[3] dilation=1, SymInt groups=1) -> Tensor"""
    return _conv_padding_mode(input, weight, bias, stride, padding, dilation, groups)


@aten_op("aten::conv_transpose1d")
def aten_conv_transpose1d(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1,),
    padding: Sequence[int] = (0,), output_padding: Sequence[int] = (0,), groups: int = 1,
    dilation: Sequence[int] = (1,),
) -> TReal:  # fmt: skip
    """conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[1] stride=1, SymInt[1] padding=0, SymInt[1] output_padding=0, SymInt groups=1, SymInt[1] dilation=1) -> Tensor"""
    return _conv_maybe_unbatched(input, weight, bias, stride, padding, dilation, True, output_padding, groups)


@aten_op("aten::conv_transpose2d.input")
def aten_conv_transpose2d(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0), output_padding: Sequence[int] = (0, 0), groups: int = 1,
    dilation: Sequence[int] = (1, 1),
) -> TReal:  # fmt: skip
    """conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] output_padding=0, SymInt groups=1, SymInt[2] dilation=1) -> Tensor"""
    return _conv_maybe_unbatched(input, weight, bias, stride, padding, dilation, True, output_padding, groups)


@aten_op("aten::conv_transpose3d.input")
def aten_conv_transpose3d(
    input: TReal, weight: TReal, bias: TReal | None = None, stride: Sequence[int] = (1, 1, 1),
    padding: Sequence[int] = (0, 0, 0), output_padding: Sequence[int] = (0, 0, 0), groups: int = 1,
    dilation: Sequence[int] = (1, 1, 1),
) -> TReal:  # fmt: skip
    """conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, SymInt[3] stride=1, SymInt[3] padding=0, SymInt[3] output_padding=0, SymInt groups=1, SymInt[3] dilation=1) -> Tensor"""
    return _conv_maybe_unbatched(input, weight, bias, stride, padding, dilation, True, output_padding, groups)


# -- max pooling --------------------------------------------------------------------------------

# MaxPool dtypes onnxruntime lacks, and the dtype they compare in (exact but for int64 > 2**53, which
# _max_pool_int64 computes exactly, except with ceil_mode and spatial sizes unknown at build time).
_MAX_POOL_COMPUTE = {types.BFLOAT16: types.FLOAT, types.INT16: types.DOUBLE, types.INT32: types.DOUBLE, types.INT64: types.DOUBLE}


def _plane_size(x: Value, n: int) -> Any:
    """Elements in one (n, c) plane: prod of the last n dims, an int or an INT64 scalar Value."""
    sizes = x.shape[-n:] if x.shape is not None else [None]
    if all(isinstance(s, int) for s in sizes):
        return math.prod(sizes)
    return op.ReduceProd(op.Shape(x, start=-n), keepdims=0)


def _max_pool(
    self: Value, n: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any, ceil_mode: bool,
    with_indices: bool,
) -> Any:  # fmt: skip
    kernel = _ints(kernel_size, n, "kernel_size")
    strides = _ints(stride, n, "stride") if _given(stride) else kernel
    pads = _ints(padding, n, "padding")
    x, squeeze = _batched(self, n)
    dtype = x.known_dtype
    sizes = x.shape[2:] if x.shape is not None else [None]
    if dtype is types.INT64 and (not ceil_mode or all(isinstance(d, int) for d in sizes)):
        y, indices = _max_pool_int64(x, kernel, strides, pads, _ints(dilation, n, "dilation"), ceil_mode)
        return (_unbatched(y, squeeze), _unbatched(indices, squeeze)) if with_indices else _unbatched(y, squeeze)
    x = cast_to(x, _MAX_POOL_COMPUTE.get(dtype, dtype))
    attrs: dict[str, Any] = dict(kernel_shape=kernel, strides=strides, pads=pads + pads, dilations=_ints(dilation, n, "dilation"),
                 ceil_mode=int(ceil_mode))  # fmt: skip
    if not with_indices:
        y = one_output(op.MaxPool(x, **attrs))
        # onnxruntime's MaxPool skips NaN; torch's max of a window holding a NaN is NaN (unless
        # the export opted out: exact_nan=False)
        channels = x.shape[1] if x.shape is not None else None
        if x.dtype.is_floating and current_exact_nan():
            if x.dtype is types.FLOAT and n == 2 and isinstance(channels, int) and (not ceil_mode or all(isinstance(d, int) for d in sizes)):
                y = op.Mul(y, _ones_or_nan_per_window(x, channels, kernel, strides, pads, attrs["dilations"], ceil_mode))
            else:
                has_nan = op.Cast(one_output(op.MaxPool(op.Cast(op.IsNaN(x), to=x.dtype.onnx), **attrs)), to=types.BOOL.onnx)
                y = op.Where(has_nan, op.CastLike(np.nan, y), y)
        return _unbatched(cast_to(y, dtype), squeeze)
    y, flat = n_outputs(op.MaxPool(x, **attrs, _outputs=2), 2)
    indices = op.Mod(flat, _plane_size(x, n))  # ONNX counts over N*C*H*W, torch inside each plane
    if x.dtype.is_floating and current_exact_nan():
        y, indices = _nan_in_windows(x, y, indices, n, attrs)
    return _unbatched(cast_to(y, dtype), squeeze), _unbatched(indices, squeeze)


def _ones_or_nan_per_window(
    x: Value, channels: int, kernel: list[int], strides: list[int], pads: list[int], dilation: list[int], ceil_mode: bool,
) -> Value:  # fmt: skip
    """Per max pooling window of a float32 (N, C, H, W) x: 1 where the window holds no NaN, NaN
    where it holds one; `MaxPool(x) * this` is torch's max pooling exactly (y * 1 is y, signed
    zeros included). The window sums of Relu(x) (NaN stays NaN, -inf goes, so no inf - inf) are
    NaN exactly where a NaN is, else in [0, inf]; Sigmoid makes them finite, and a 1x1 Conv with
    weight 0 and bias 1 gives 1 + 0 * s. Depthwise Conv, Relu, Sigmoid and Mul all run in
    onnxruntime's blocked NCHWc layout next to its MaxPool, where IsNaN/Cast/Where would reorder
    the tensors back and forth: SmallCNN in bench/bench_latency.py runs at 1.07-1.08x the
    reference's latency, 1.21-1.29x with IsNaN/MaxPool/Where; a MaxPool alone, 0.62-1.07x the
    latency of that form (docs/nan_latency.md, bench/bench_nan_forms.py)."""
    n = len(kernel)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    extra = _ceil_overhang(_spatial_sizes(x, n, "max_pool with ceil_mode"), span, strides, pads) if ceil_mode else [0] * n
    ones = np.ones((channels, 1, *kernel), np.float32)
    sums = op.Conv(op.Relu(x), ones, kernel_shape=kernel, strides=strides, dilations=dilation,
                   pads=pads + [p + e for p, e in zip(pads, extra)], group=channels)  # fmt: skip
    return op.Conv(op.Sigmoid(sums), np.zeros((channels, 1) + (1,) * n, np.float32), np.ones(channels, np.float32),
                   kernel_shape=[1] * n, group=channels)  # fmt: skip


def _nan_in_windows(x: Value, y: Value, indices: Value, n: int, attrs: dict[str, Any]) -> tuple[Value, Value]:
    """torch's max pooling of a window holding a NaN: NaN, at the window's last NaN in row-major
    order (its kernel takes `val > max || isnan(val)`). onnxruntime's MaxPool skips NaN: pool
    the key "flat position + 1 where x is NaN, else 0" (float32 when every position is exact in
    it, else double) and take the NaN and its position where the key's max is positive."""
    plane = _plane_size(x, n)
    exact = types.FLOAT if isinstance(plane, int) and plane < 2**24 else types.DOUBLE  # positions exact
    positions = op.Reshape(op.Range(op.Cast(1, to=exact.onnx), op.Cast(op.Add(plane, 1), to=exact.onnx), op.Cast(1, to=exact.onnx)),
                           op.Shape(x, start=-n))  # fmt: skip
    key = op.Where(op.IsNaN(x), positions, op.CastLike(0, positions))
    last_nan = one_output(op.MaxPool(key, **attrs))
    has_nan = op.Greater(last_nan, op.CastLike(0, last_nan))
    y = op.Where(has_nan, op.CastLike(np.nan, y), y)
    indices = op.Where(has_nan, op.Sub(op.Cast(last_nan, to=types.INT64.onnx), 1), indices)
    return y, indices
def _max_pool_int64(
    x: Value, kernel: list[int], strides: list[int], pads: list[int], dilation: list[int], ceil_mode: bool,
) -> tuple[Value, Value]:  # fmt: skip
    """Max pooling of an INT64 (N, C, *spatial) tensor, exact: onnxruntime's MaxPool has no int64
    kernel, and double loses values above 2**53. The windows (padded with int64's minimum, the
    ceil_mode overhang included) are gathered by _patches; ReduceMax and ArgMax over them are
    exact for int64. ArgMax gives the first maximum in the window's row-major order, as torch;
    it becomes the index inside the input plane, torch's."""
    n = len(kernel)
    span = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]  # a dilated window's extent
    extra = _ceil_overhang(_spatial_sizes(x, n, "max_pool with ceil_mode"), span, strides, pads) if ceil_mode else [0] * n
    lowest = np.array(np.iinfo(np.int64).min, np.int64)
    padded = _pad_spatial(x, pads, [p + e for p, e in zip(pads, extra)], lowest) if any(pads) or any(extra) else x
    patches = _patches(padded, kernel, strides, dilation)
    y = op.ReduceMax(patches, [x.known_rank], keepdims=0)
    k = op.ArgMax(patches, axis=x.known_rank, keepdims=0)
    index: Any = None
    for i in range(n):
        offset = op.Mod(op.Div(k, np.array(math.prod(kernel[i + 1 :]), np.int64)), np.array(kernel[i], np.int64))
        out_i = op.Squeeze(op.Shape(k, start=2 + i, end=3 + i), np.array([0], np.int64))
        start = op.Sub(op.Mul(op.Range(np.array(0, np.int64), out_i, np.array(1, np.int64)), np.array(strides[i], np.int64)),
                       np.array(pads[i], np.int64))
        start = op.Unsqueeze(start, np.arange(1, n - i, dtype=np.int64)) if i < n - 1 else start
        position = op.Add(start, op.Mul(offset, np.array(dilation[i], np.int64)))
        index = position if index is None else op.Add(op.Mul(index, op.Shape(x, start=2 + i, end=3 + i)), position)
    return y, index


@aten_op("aten::max_pool1d")
def aten_max_pool1d(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,), ceil_mode: bool = False,
) -> TReal:  # fmt: skip
    """max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(self, 1, kernel_size, stride, padding, dilation, ceil_mode, False)


@aten_op("aten::max_pool2d")
def aten_max_pool2d(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1), ceil_mode: bool = False,
) -> TReal:  # fmt: skip
    """max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(self, 2, kernel_size, stride, padding, dilation, ceil_mode, False)


@aten_op("aten::max_pool3d")
def aten_max_pool3d(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0, 0, 0),
    dilation: Sequence[int] = (1, 1, 1), ceil_mode: bool = False,
) -> TReal:  # fmt: skip
    """max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor"""
    return _max_pool(self, 3, kernel_size, stride, padding, dilation, ceil_mode, False)


@aten_op("aten::max_pool1d_with_indices")
def aten_max_pool1d_with_indices(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,), ceil_mode: bool = False,
) -> tuple[TReal, Value]:  # fmt: skip
    """max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, int[1] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return _max_pool(self, 1, kernel_size, stride, padding, dilation, ceil_mode, True)


@aten_op("aten::max_pool2d_with_indices")
def aten_max_pool2d_with_indices(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1), ceil_mode: bool = False,
) -> tuple[TReal, Value]:  # fmt: skip
    """max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return _max_pool(self, 2, kernel_size, stride, padding, dilation, ceil_mode, True)


@aten_op("aten::max_pool3d_with_indices")
def aten_max_pool3d_with_indices(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0, 0, 0),
    dilation: Sequence[int] = (1, 1, 1), ceil_mode: bool = False,
) -> tuple[TReal, Value]:  # fmt: skip
    """max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"""
    return _max_pool(self, 3, kernel_size, stride, padding, dilation, ceil_mode, True)


# -- average pooling ----------------------------------------------------------------------------


def _ceil_overhang(sizes: list[int], kernel: list[int], strides: list[int], pads: list[int]) -> list[int]:
    """How far torch's ceil_mode windows reach past the right padding, per spatial dim."""
    extra = []
    for size, k, s, p in zip(sizes, kernel, strides, pads):
        out = -(-(size + 2 * p - k) // s) + 1
        if (out - 1) * s >= size + p:  # the last window must start inside the input or left padding
            out -= 1
        extra.append(max(0, (out - 1) * s + k - (size + 2 * p)))
    return extra


def _avg_pool_by_sum(
    x: Value, kernel: list[int], strides: list[int], pads: list[int], ceil_mode: bool,
    count_include_pad: bool, divisor_override: int | None,
) -> Value:  # fmt: skip
    """Window sums divided by torch's divisor: the window clipped to input + padding (or to the
    input alone without count_include_pad), never counting the ceil_mode overhang."""
    n = len(kernel)
    ones_dims = [1] * n
    extra = _ceil_overhang(_spatial_sizes(x, n, "avg_pool with ceil_mode"), kernel, strides, pads) if ceil_mode else [0] * n
    padded = _pad_spatial(x, pads, [p + e for p, e in zip(pads, extra)])
    # each window summed in torch's order (row-major offsets, one after the other): with values
    # near finfo.max, max + (-max) + 1.5 is 1.5 but max + 1.5 + (-max) is 0
    if x.dtype is types.INT64:  # wrapping like torch (onnxruntime's int64 ReduceSum goes through double)
        sums = int64_sum(_patches(padded, kernel, strides, ones_dims), [x.known_rank], False)
    else:
        columns = _window_columns(padded, kernel, strides, ones_dims)
        sums = columns[0]
        for column in columns[1:]:
            sums = op.Add(sums, column)
    if divisor_override is not None:
        return op.Div(sums, divisor_override)
    ones = op.Expand(op.CastLike(1, x), op.Shape(x, start=-n))
    if count_include_pad:
        ones = _pad_spatial(_pad_spatial(ones, pads, pads, 1), [0] * n, extra)
    else:
        ones = _pad_spatial(ones, pads, [p + e for p, e in zip(pads, extra)])
    counts = op.ReduceSum(_patches(ones, kernel, strides, ones_dims), [n], keepdims=0)
    return op.Div(sums, counts)


def _avg_pool(
    self: Value, n: int, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool,
    divisor_override: int | None,
) -> Value:  # fmt: skip
    kernel = _ints(kernel_size, n, "kernel_size")
    strides = _ints(stride, n, "stride") if _given(stride) else kernel
    pads = _ints(padding, n, "padding")
    x, squeeze = _batched(self, n)
    dtype = x.dtype
    if dtype in (types.FLOAT, types.FLOAT16, types.BFLOAT16) and divisor_override is None:
        y = op.AveragePool(cast_to(x, types.FLOAT16 if dtype is types.FLOAT16 else types.FLOAT), kernel_shape=kernel,
                           strides=strides, pads=pads + pads, ceil_mode=int(ceil_mode),
                           count_include_pad=int(count_include_pad))  # fmt: skip
    else:
        compute = dtype if dtype in (types.DOUBLE, types.INT64) else types.FLOAT
        y = _avg_pool_by_sum(cast_to(x, compute), kernel, strides, pads, ceil_mode, count_include_pad, divisor_override)
    return _unbatched(cast_to(y, dtype), squeeze)  # type: ignore[arg-type]


@aten_op("aten::avg_pool1d")
def aten_avg_pool1d(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0,),
    ceil_mode: bool = False, count_include_pad: bool = True,
) -> TReal:  # fmt: skip
    """avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=0, bool ceil_mode=False, bool count_include_pad=True) -> Tensor"""
    return _avg_pool(self, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None)


@aten_op("aten::avg_pool2d")
def aten_avg_pool2d(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0, 0),
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None,
) -> TReal:  # fmt: skip
    """avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(self, 2, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@aten_op("aten::avg_pool3d")
def aten_avg_pool3d(
    self: TReal, kernel_size: Sequence[int], stride: Sequence[int] = (), padding: Sequence[int] = (0, 0, 0),
    ceil_mode: bool = False, count_include_pad: bool = True, divisor_override: int | None = None,
) -> TReal:  # fmt: skip
    """avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"""
    return _avg_pool(self, 3, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


# -- adaptive pooling ---------------------------------------------------------------------------


def _adaptive_windows(size: int, out: int) -> list[tuple[int, int]]:
    """torch's adaptive windows: [floor(i * size / out), ceil((i + 1) * size / out))."""
    return [((i * size) // out, -(-((i + 1) * size) // out)) for i in range(out)]


class _Windows:
    """The out windows of one spatial axis of size `size` (an int, or symbolic: read from x's
    shape at run time), padded to the longest: `index` [out, longest] (past a window's end:
    `past_end`, or the window's last element), `starts` and `lengths` [out], `keys`
    [out, longest] (j + 1 for a window's own elements, 0 for its padding). NumPy arrays for a
    static size, INT64 Values computed the same way for a symbolic one."""

    def __init__(self, x: Value, axis: int, size: int | str | None, out: int, past_end: bool) -> None:
        if isinstance(size, int):
            windows = _adaptive_windows(size, out)
            longest = max(end - start for start, end in windows)
            j: Any = np.arange(longest, dtype=np.int64)
            self.starts: Any = np.array([start for start, _ in windows], dtype=np.int64)
            ends: Any = np.array([end for _, end in windows], dtype=np.int64)
            self.lengths: Any = ends - self.starts
            index: Any = self.starts[:, None] + j
            own: Any = index < ends[:, None]
            self.index: Any = np.where(own, index, size if past_end else ends[:, None] - 1)
            self.keys: Any = np.where(own, j + 1, 0)
            self.size: Any = size
            return
        # the same integers in the graph: i * size // out and ceil((i + 1) * size / out), size >= 0
        self.size = op.Shape(x, start=axis, end=axis + 1)  # [1]
        i = np.arange(out, dtype=np.int64)
        self.starts = op.Div(op.Mul(i, self.size), np.array(out, np.int64))
        ends = op.Div(op.Add(op.Mul(i + 1, self.size), np.array(out - 1, np.int64)), np.array(out, np.int64))
        self.lengths = op.Sub(ends, self.starts)
        j = op.Range(np.array(0, np.int64), op.ReduceMax(self.lengths, keepdims=0), np.array(1, np.int64))  # [longest]
        index = op.Add(op.Unsqueeze(self.starts, [1]), op.Unsqueeze(j, [0]))
        own = op.Less(index, op.Unsqueeze(ends, [1]))
        last = op.Sub(op.Unsqueeze(ends, [1]), np.array(1, np.int64))
        self.index = op.Where(own, index, self.size if past_end else last)
        self.keys = op.Where(own, op.Add(op.Unsqueeze(j, [0]), np.array(1, np.int64)), np.array(0, np.int64))


def _reshape_axis(values: Any, trailing: int) -> Any:
    """[out] values as [out, 1 * trailing], to broadcast along one axis of a tensor."""
    shape = [-1] + [1] * trailing
    return values.reshape(shape) if isinstance(values, np.ndarray) else op.Reshape(values, shape)


def _output_sizes(self: Value, output_size: Any, n: int) -> list[int]:
    """output_size as n ints; None (as F.adaptive_*_pool take it) keeps the input's size."""
    sizes = [output_size] if isinstance(output_size, int) or output_size is None else list(output_size)
    sizes = sizes * n if len(sizes) == 1 else sizes
    if any(s is None for s in sizes):
        spatial = _spatial_sizes(self, n, "output_size None")
        sizes = [spatial[i] if s is None else s for i, s in enumerate(sizes)]
    return _ints(sizes, n, "output_size")


def _adaptive_avg_pool(self: Value, output_size: Any, n: int) -> Value:
    out = _output_sizes(self, output_size, n)
    dtype = self.known_dtype
    x = cast_to(self, types.FLOAT if dtype in (types.BFLOAT16, types.FLOAT16) else dtype)  # sums in float32
    assert x is not None and x.shape is not None
    rank = x.rank
    if any(d == 0 for d in x.shape[: rank - n]):
        # empty: nothing to average (and onnxruntime's fused Transpose+MatMul rejects empty inputs)
        return cast_to(op.Reshape(x, [0] * (rank - n) + out), dtype)
    if all(o == 1 for o in out):
        if rank == n + 2 and x.dtype is types.FLOAT:
            return cast_to(op.GlobalAveragePool(x), dtype)
        return cast_to(op.ReduceMean(x, list(range(rank - n, rank)), keepdims=1), dtype)
    sizes = list(x.shape[-n:])  # ints, or names of symbolic sizes
    static = all(isinstance(s, int) for s in sizes)
    if static and rank == n + 2 and x.dtype is types.FLOAT and all(s % o == 0 for s, o in zip(sizes, out)):
        kernel = [s // o for s, o in zip(sizes, out)]
        return cast_to(op.AveragePool(x, kernel_shape=kernel, strides=kernel), dtype)
    # torch sums each window, then divides by its size. The sum over a box is separable: per
    # spatial axis, gather every window (padded to the longest with a zero past the end of the
    # axis) and sum it. Only the window's own elements are read, so an inf or NaN reaches only
    # the outputs whose window holds it, as in torch. The last axis is summed first: torch adds
    # each window in row-major order, so a row's max and -max cancel before the next row comes.
    # A symbolic size computes the same windows in the graph.
    y = x
    counts: Any = np.ones([1] * n, dtype=x.dtype.numpy)
    for i in reversed(range(n)):
        axis = rank - n + i
        windows = _Windows(x, axis, sizes[i], out[i], past_end=True)
        padded = _pad_spatial(y, [0] * n, [1 if k == i else 0 for k in range(n)])
        y = op.ReduceSum(op.Gather(padded, windows.index, axis=axis), [axis + 1], keepdims=0)
        lengths = _reshape_axis(windows.lengths, n - 1 - i)
        if isinstance(lengths, np.ndarray):
            counts = counts * lengths.astype(x.dtype.numpy)
        else:
            counts = op.Mul(counts, op.Cast(lengths, to=x.dtype.onnx))
    return cast_to(op.Div(y, counts), dtype)


def _adaptive_max_pool(self: Value, output_size: Any, n: int) -> tuple[Value, Value]:
    """Separable: per spatial axis (last first), gather each window (padded to the longest by
    repeating its last element), take the max and the first argmax, and carry the flat index.
    A symbolic size computes the same windows in the graph."""
    out = _output_sizes(self, output_size, n)
    dtype = self.known_dtype
    y = cast_to(self, types.FLOAT if dtype is types.BFLOAT16 else dtype)
    assert y is not None and y.shape is not None
    sizes = list(y.shape[-n:])  # ints, or names of symbolic sizes
    x = y
    rank = y.rank
    index: Value | None = None
    plane_stride: Any = 1
    for i in reversed(range(n)):
        axis = rank - n + i
        windows = _Windows(x, axis, sizes[i], out[i], past_end=False)
        starts = _reshape_axis(windows.starts, rank - axis - 1)
        values = op.Gather(y, windows.index, axis=axis)  # (..., out, longest, ...)
        y = op.ReduceMax(values, [axis + 1], keepdims=0)
        choice = op.ArgMax(values, axis=axis + 1, keepdims=1)
        if y.known_dtype.is_floating:
            y, choice = _last_nan_in_windows(values, y, choice, windows.keys, axis, rank)
        position = op.Mul(op.Add(op.Squeeze(choice, [axis + 1]), starts), plane_stride)
        if index is not None:
            carried = op.GatherElements(op.Gather(index, windows.index, axis=axis), choice, axis=axis + 1)
            position = op.Add(position, op.Squeeze(carried, [axis + 1]))
        index = position
        plane_stride = plane_stride * windows.size if isinstance(windows.size, int) else op.Mul(windows.size, plane_stride)
    assert index is not None
    return cast_to(y, dtype), index


def _last_nan_in_windows(values: Value, y: Value, choice: Value, keys: Any, axis: int, rank: int) -> tuple[Value, Value]:
    """torch's adaptive max of a window holding a NaN is NaN, at the window's last NaN (its kernel
    takes `val > max || isnan(val)`); onnxruntime's ReduceMax and ArgMax skip NaN. Along one axis
    of the gathered windows (..., out, longest, ...): the largest "j + 1 where NaN" among the
    window's own elements (`keys`, 0 for the padding) picks it. Applied axis by axis, last axis
    first, that is the last NaN in row-major order, as torch scans the window."""
    trailing = [1] * (rank - axis - 1)
    keys = keys.reshape(list(keys.shape) + trailing) if isinstance(keys, np.ndarray) else op.Reshape(keys, [0, 0] + trailing)
    last = op.ReduceMax(op.Where(op.IsNaN(values), keys, np.array(0, np.int64)), [axis + 1], keepdims=1)
    has_nan = op.Greater(last, np.array(0, np.int64))
    y = op.Where(op.Squeeze(has_nan, [axis + 1]), op.CastLike(np.nan, y), y)
    return y, op.Where(has_nan, op.Sub(last, np.array(1, np.int64)), choice)


@aten_op("aten::adaptive_avg_pool1d")
def aten_adaptive_avg_pool1d(self: TFloat, output_size: Sequence[int]) -> TFloat:
    """adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor"""
    return _adaptive_avg_pool(self, output_size, 1)


@aten_op("aten::adaptive_avg_pool2d")
def aten_adaptive_avg_pool2d(self: TFloat, output_size: Sequence[int]) -> TFloat:
    """adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"""
    return _adaptive_avg_pool(self, output_size, 2)


@aten_op("aten::_adaptive_avg_pool2d")
def aten__adaptive_avg_pool2d(self: TFloat, output_size: Sequence[int]) -> TFloat:
    """_adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"""
    return _adaptive_avg_pool(self, output_size, 2)


@aten_op("aten::adaptive_avg_pool3d")
def aten_adaptive_avg_pool3d(self: TFloat, output_size: Sequence[int]) -> TFloat:
    """adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor"""
    return _adaptive_avg_pool(self, output_size, 3)


@aten_op("aten::_adaptive_avg_pool3d")
def aten__adaptive_avg_pool3d(self: TFloat, output_size: Sequence[int]) -> TFloat:
    """_adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor"""
    return _adaptive_avg_pool(self, output_size, 3)


@aten_op("aten::adaptive_max_pool1d")
def aten_adaptive_max_pool1d(self: TFloat, output_size: Sequence[int]) -> tuple[TFloat, Value]:
    """adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(self, output_size, 1)


@aten_op("aten::adaptive_max_pool2d")
def aten_adaptive_max_pool2d(self: TFloat, output_size: Sequence[int]) -> tuple[TFloat, Value]:
    """adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(self, output_size, 2)


@aten_op("aten::adaptive_max_pool3d")
def aten_adaptive_max_pool3d(self: TFloat, output_size: Sequence[int]) -> tuple[TFloat, Value]:
    """adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)"""
    return _adaptive_max_pool(self, output_size, 3)
