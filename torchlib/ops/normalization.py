"""Normalization: batch norm (inference, training, functional variants), layer norm, group norm,
RMS norm.

Dtypes follow torch's CPU kernels: float16/bfloat16 inputs are normalized in float32 and the
output is cast back to the input dtype. The statistics (mean, rstd/invstd) come out in float32
when a reduced-precision input meets float32 parameters ("mixed dtype"), else in the input
dtype; `_fused_rms_norm`'s rstd is in float32 for reduced-precision inputs.

Batch norm in training mode uses the batch statistics. ONNX graphs are functional, so the ops
that update running statistics in place (`_native_batch_norm_legit`, `_batch_norm_with_update`)
return their outputs without the update; `_native_batch_norm_legit_functional` returns the
updated running statistics as outputs, which is how torch.export hands training graphs over.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from graph_builder import current_exact_nan, current_opset, op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TTensor
from graph_builder.types import DType
from torchlib.ops._helpers import as_shape, dim_size, n_outputs
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_REDUCED = (types.FLOAT16, types.BFLOAT16)


def _compute_dtype(input: Value) -> DType:
    if not input.known_dtype.is_floating:
        raise TypeError(f"normalization expects a floating point input, got {input.dtype}")
    return types.FLOAT if input.known_dtype in _REDUCED else input.known_dtype


def _stats_dtype(input: Value, *params: Value | None) -> DType:
    """float32 for a reduced-precision input with float32 parameters (torch's mixed dtype), else
    the input dtype."""
    if input.dtype in _REDUCED and any(p is not None and p.dtype is types.FLOAT for p in params):
        return types.FLOAT
    return input.known_dtype


def _filled(shape: Sequence[Any], fill: float, dtype: DType) -> Any:
    """A constant tensor of `shape` (ints, or SymInt Values) filled with `fill`."""
    if all(isinstance(s, int) for s in shape):
        return np.full(tuple(shape), fill, dtype.numpy)
    return op.ConstantOfShape(as_shape(shape), value=np.full(1, fill, dtype.numpy))


def _param(p: Value | None, shape: Sequence[Any], fill: float, dtype: DType) -> Any:
    """An optional weight or bias in dtype; ones or zeros of `shape` when absent."""
    return _filled(shape, fill, dtype) if p is None else cast_to(p, dtype)


def _empty(input: Value, dtype: DType) -> Value:
    """A 1-D tensor with no elements (torch's placeholder for statistics it did not compute)."""
    zero = op.Mul(op.Shape(input, start=0, end=1), np.array(0, np.int64))
    return op.ConstantOfShape(zero, value=np.zeros(1, dtype.numpy))


def _per_channel(p: Value, dtype: DType, rank: int) -> Value:
    """A (C,) weight or bias in dtype, shaped (C, 1, ..., 1) to broadcast against (N, C, ...)."""
    p = cast_to(p, dtype)
    return op.Unsqueeze(p, list(range(1, rank - 1))) if rank > 2 else p


def _channels(input: Value) -> Any:
    if input.rank is None or input.rank < 2:
        raise ValueError(f"batch norm expects an input of rank >= 2 (N, C, ...), got rank {input.rank}")
    return dim_size(input, 1)


# -- batch norm ----------------------------------------------------------------------------------
def _bn_inference(
    input: Value, weight: Value | None, bias: Value | None, running_mean: Value | None, running_var: Value | None,
    eps: float,
) -> tuple[Value, Value, Value]:
    """One ONNX BatchNormalization with the running statistics; the saved statistics are
    empty, as in torch."""
    if running_mean is None or running_var is None:
        raise ValueError("batch norm outside training needs running_mean and running_var")
    dtype = _compute_dtype(input)
    stats = _stats_dtype(input, weight, bias, running_mean, running_var)
    c = _channels(input)
    y = op.BatchNormalization(
        cast_to(input, dtype), _param(weight, [c], 1, dtype), _param(bias, [c], 0, dtype),
        cast_to(running_mean, dtype), cast_to(running_var, dtype), epsilon=eps,
    )  # fmt: skip
    return cast_to(y, input.known_dtype), _empty(input, stats), _empty(input, stats)


def _bn_training(
    input: Value, weight: Value | None, bias: Value | None, eps: float, *params: Value | None
) -> tuple[Value, Value, Value, Value, Any]:
    """Normalize with the batch statistics. Returns (output, mean, invstd, biased variance,
    elements per channel); mean and invstd in the statistics dtype, the variance in the
    computation dtype."""
    c = _channels(input)
    dtype = _compute_dtype(input)
    stats = _stats_dtype(input, weight, bias, *params)
    x = cast_to(input, dtype)
    axes = [0, *range(2, input.known_rank)]
    mean = op.ReduceMean(x, axes, keepdims=1)
    centered = op.Sub(x, mean)
    var = op.ReduceMean(op.Mul(centered, centered), axes, keepdims=1)
    if dtype is types.FLOAT:  # torch: 1 / sqrt(var + eps) in double (its accumulate type), eps not rounded to float
        invstd = op.Cast(op.Reciprocal(op.Sqrt(op.Add(op.Cast(var, to=types.DOUBLE.onnx), eps))), to=types.FLOAT.onnx)
    else:
        invstd = op.Reciprocal(op.Sqrt(op.Add(var, eps)))
    # torch's CPU kernel: x * alpha + beta with alpha = invstd * weight, beta = bias - mean * alpha
    # (so a variance that overflows, invstd 0, gives the bias, not (x - mean) * 0 = NaN)
    alpha = invstd if weight is None else op.Mul(invstd, _per_channel(weight, dtype, input.known_rank))
    bias_c = _per_channel(bias, dtype, input.known_rank) if bias is not None else None
    if dtype is types.FLOAT:
        # both multiply-adds are compiled to fused ones in torch's kernel: the exact product,
        # rounded once with the addend (double holds a float32 product exactly). It matters
        # where x - mean cancels: one element per channel, where alpha = weight / sqrt(eps) is
        # large and the output is the bias up to those roundings
        def wide(v: Value) -> Value:
            return op.Cast(v, to=types.DOUBLE.onnx)

        minus = op.Neg(op.Mul(wide(mean), wide(alpha)))
        beta = op.Cast(minus if bias_c is None else op.Add(wide(bias_c), minus), to=types.FLOAT.onnx)
        y = op.Cast(op.Add(op.Mul(wide(x), wide(alpha)), wide(beta)), to=types.FLOAT.onnx)
    else:
        beta = op.Neg(op.Mul(mean, alpha))
        if bias_c is not None:
            beta = op.Add(bias_c, beta)
        y = op.Add(op.Mul(x, alpha), beta)
    mean, var, invstd = (op.Squeeze(v, axes) for v in (mean, var, invstd))
    assert input.shape is not None
    sizes = [input.shape[a] for a in axes]
    if all(isinstance(s, int) for s in sizes):
        count: Any = int(np.prod(sizes))
    else:
        count = op.Div(op.Size(input), c)
    return cast_to(y, input.known_dtype), cast_to(mean, stats), cast_to(invstd, stats), var, count


@aten_op("aten::_native_batch_norm_legit_no_training")
def aten__native_batch_norm_legit_no_training(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat, running_var: TFloat,
    momentum: float, eps: float,
) -> tuple[TFloat, TFloat, TFloat]:
    """_native_batch_norm_legit_no_training(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor)"""
    return _bn_inference(input, weight, bias, running_mean, running_var, eps)


@aten_op("aten::_native_batch_norm_legit")
def aten__native_batch_norm_legit(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat, running_var: TFloat,
    training: bool, momentum: float, eps: float,
) -> tuple[TFloat, TFloat, TFloat]:
    """_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)

    In training the running statistics are not updated (see the module docstring)."""
    if not training:
        return _bn_inference(input, weight, bias, running_mean, running_var, eps)
    return _bn_training(input, weight, bias, eps, running_mean, running_var)[:3]


@aten_op("aten::_native_batch_norm_legit.no_stats")
def aten__native_batch_norm_legit_no_stats(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, training: bool, momentum: float, eps: float
) -> tuple[TFloat, TFloat, TFloat]:
    """_native_batch_norm_legit.no_stats(Tensor input, Tensor? weight, Tensor? bias, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"""
    if not training:
        raise ValueError("_native_batch_norm_legit.no_stats without training has no statistics to normalize with")
    return _bn_training(input, weight, bias, eps)[:3]


@aten_op("aten::native_batch_norm")
def aten_native_batch_norm(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat | None,
    running_var: TFloat | None, training: bool, momentum: float, eps: float,
) -> tuple[TFloat, TFloat, TFloat]:
    """native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"""
    if not training:
        return _bn_inference(input, weight, bias, running_mean, running_var, eps)
    return _bn_training(input, weight, bias, eps, running_mean, running_var)[:3]


@aten_op("aten::batch_norm")
def aten_batch_norm(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat | None,
    running_var: TFloat | None, training: bool, momentum: float, eps: float, cudnn_enabled: bool,
) -> TFloat:
    """batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor

    torch returns an input of no elements as it is, whatever its rank (a 1-D one included)."""
    if input.rank == 1 and input.shape == (0,):
        return op.Identity(input)
    if not training:
        return _bn_inference(input, weight, bias, running_mean, running_var, eps)[0]
    return _bn_training(input, weight, bias, eps, running_mean, running_var)[0]


@aten_op("aten::_batch_norm_with_update")
def aten__batch_norm_with_update(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat, running_var: TFloat,
    momentum: float, eps: float,
) -> tuple[TFloat, TFloat, TFloat, TTensor]:
    """_batch_norm_with_update(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor)

    The running statistics are not updated (see the module docstring); the fourth output is
    torch's empty uint8 `reserve`."""
    y, mean, invstd = _bn_training(input, weight, bias, eps, running_mean, running_var)[:3]
    return y, mean, invstd, _empty(input, types.UINT8)


@aten_op("aten::_batch_norm_no_update")
def aten__batch_norm_no_update(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat | None,
    running_var: TFloat | None, momentum: float, eps: float,
) -> tuple[TFloat, TFloat, TFloat, TTensor]:
    """_batch_norm_no_update(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor)"""
    y, mean, invstd = _bn_inference(input, weight, bias, running_mean, running_var, eps)
    return y, mean, invstd, _empty(input, types.UINT8)


@aten_op("aten::_native_batch_norm_legit_functional")
def aten__native_batch_norm_legit_functional(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, running_mean: TFloat, running_var: TFloat,
    training: bool, momentum: float, eps: float,
) -> tuple[TFloat, TFloat, TFloat, TFloat, TFloat]:
    """_native_batch_norm_legit_functional(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor running_mean_out, Tensor running_var_out)

    In training, running_mean_out = (1 - momentum) * running_mean + momentum * mean and
    running_var_out likewise with the unbiased batch variance; else they are the inputs."""
    if not training:
        y, mean, invstd = _bn_inference(input, weight, bias, running_mean, running_var, eps)
        return y, mean, invstd, op.Identity(running_mean), op.Identity(running_var)
    y, mean, invstd, var, count = _bn_training(input, weight, bias, eps, running_mean, running_var)
    dtype = var.known_dtype
    if isinstance(count, int):  # one element per channel: 0 / 0 = NaN, as in torch
        unbiased = op.Div(op.Mul(var, float(count)), float(count - 1))
    else:
        count = op.CastLike(count, var)
        unbiased = op.Div(op.Mul(var, count), op.Sub(count, op.CastLike(1, var)))
    new_mean = op.Add(op.Mul(cast_to(running_mean, dtype), 1 - momentum), op.Mul(cast_to(mean, dtype), momentum))
    new_var = op.Add(op.Mul(cast_to(running_var, dtype), 1 - momentum), op.Mul(unbiased, momentum))
    return y, mean, invstd, cast_to(new_mean, running_mean.known_dtype), cast_to(new_var, running_var.known_dtype)


# -- layer norm, RMS norm, group norm ----------------------------------------------------------
def _normalized_axis(input: Value, normalized_shape: Sequence[Any]) -> int:
    if input.rank is None or not 1 <= len(normalized_shape) <= input.rank:
        raise ValueError(
            f"normalized_shape {list(normalized_shape)} must be non-empty and match the trailing dims of the input (rank {input.rank})"
        )
    return input.rank - len(normalized_shape)


@aten_op("aten::native_layer_norm")
def aten_native_layer_norm(
    input: TFloat, normalized_shape: Sequence[int], weight: TFloat | None, bias: TFloat | None, eps: float
) -> tuple[TFloat, TFloat, TFloat]:
    """native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)

    ONNX LayerNormalization gives the output, the mean and the inverse standard deviation with
    torch's shapes (the normalized dims kept as 1). It computes its statistics in float32 at
    best, so float64 is written out with Reduce ops to keep float64 precision."""
    return _layer_norm(input, normalized_shape, weight, bias, eps)


def _layer_norm(
    input: Value, normalized_shape: Sequence[Any], weight: Value | None, bias: Value | None, eps: float
) -> tuple[Value, Value, Value]:
    axis = _normalized_axis(input, normalized_shape)
    dtype = _compute_dtype(input)
    stats = _stats_dtype(input, weight, bias)
    if any(isinstance(d, int) and d == 0 for d in normalized_shape):  # nothing to normalize (onnxruntime refuses it): mean 0, rstd NaN as in torch
        shape = op.Concat(op.Shape(input, end=axis), np.ones(input.known_rank - axis, np.int64), axis=0)
        return (op.Identity(input), op.ConstantOfShape(shape, value=np.zeros(1, stats.numpy)),
                op.ConstantOfShape(shape, value=np.full(1, np.nan, stats.numpy)))
    x = cast_to(input, dtype)
    if dtype is types.DOUBLE:
        axes = list(range(axis, input.known_rank))
        mean = op.ReduceMean(x, axes, keepdims=1)
        centered = op.Sub(x, mean)
        rstd = op.Reciprocal(op.Sqrt(op.Add(op.ReduceMean(op.Mul(centered, centered), axes, keepdims=1), eps)))
        y = op.Mul(centered, rstd)
        if weight is not None:
            y = op.Mul(y, cast_to(weight, dtype))
        if bias is not None:
            y = op.Add(y, cast_to(bias, dtype))
    else:
        scale = _param(weight, normalized_shape, 1, dtype)
        b = None if bias is None else cast_to(bias, dtype)
        y, mean, rstd = n_outputs(op.LayerNormalization(x, scale, b, axis=axis, epsilon=eps, stash_type=1, _outputs=3), 3)
    return cast_to(y, input.known_dtype), cast_to(mean, stats), cast_to(rstd, stats)


@aten_op("aten::layer_norm")
def aten_layer_norm(
    input: TFloat, normalized_shape: Sequence[int], weight: TFloat | None = None, bias: TFloat | None = None,
    eps: float = 1e-05, cudnn_enable: bool = True,
) -> TFloat:
    """layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor"""
    return _layer_norm(input, normalized_shape, weight, bias, eps)[0]


def _rms_eps(dtype: DType, eps: float | None) -> float:
    """torch's default: the machine epsilon of the computation dtype."""
    return float(np.finfo(dtype.numpy).eps) if eps is None else eps


@aten_op("aten::rms_norm")
def aten_rms_norm(
    input: TFloat, normalized_shape: Sequence[int], weight: TFloat | None = None, eps: float | None = None
) -> TFloat:
    """rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor

    One ONNX RMSNormalization (opset 23), statistics in float32 (float64 for float64 input)."""
    axis = _normalized_axis(input, normalized_shape)
    if any(isinstance(d, int) and d == 0 for d in normalized_shape):  # nothing to normalize (onnxruntime refuses it)
        return op.Identity(input)
    dtype = _compute_dtype(input)
    scale = _param(weight, normalized_shape, 1, dtype)
    stash = types.DOUBLE if dtype is types.DOUBLE else types.FLOAT
    x = cast_to(input, dtype)
    if current_opset() < 23:  # ONNX RMSNormalization is new in opset 23: write its formula
        axes = list(range(axis, input.known_rank))
        mean_square = op.ReduceMean(op.Mul(x, x), axes, keepdims=1)
        y = op.Mul(op.Div(x, op.Sqrt(op.Add(mean_square, _rms_eps(dtype, eps)))), scale)
    else:
        y = op.RMSNormalization(x, scale, axis=axis, epsilon=_rms_eps(dtype, eps), stash_type=stash.onnx)
    return cast_to(y, input.known_dtype)


@aten_op("aten::_fused_rms_norm")
def aten__fused_rms_norm(
    input: TFloat, normalized_shape: Sequence[int], weight: TFloat | None, eps: float | None
) -> tuple[TFloat, TFloat]:
    """_fused_rms_norm(Tensor input, int[] normalized_shape, Tensor? weight, float? eps) -> (Tensor, Tensor)

    Returns (output, rstd); rstd keeps the normalized dims as 1 and is float32 for float16 and
    bfloat16 inputs. RMSNormalization does not output rstd, so this one is written out."""
    axis = _normalized_axis(input, normalized_shape)
    dtype = _compute_dtype(input)
    x = cast_to(input, dtype)
    mean_square = op.ReduceMean(op.Mul(x, x), list(range(axis, input.known_rank)), keepdims=1)
    rstd = op.Reciprocal(op.Sqrt(op.Add(mean_square, _rms_eps(dtype, eps))))
    y = op.Mul(x, rstd)
    if weight is not None:
        y = op.Mul(y, cast_to(weight, dtype))
    return cast_to(y, input.known_dtype), rstd


@aten_op("aten::native_group_norm")
def aten_native_group_norm(
    input: TFloat, weight: TFloat | None, bias: TFloat | None, N: int, C: int, HxW: int, group: int, eps: float
) -> tuple[TFloat, TFloat, TFloat]:
    """native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N, SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor, Tensor)

    Returns (output, mean, rstd), the statistics of shape (N, group). N, C and HxW are implied
    by the input's shape and not needed."""
    return _group_norm(input, weight, bias, group, eps)


@functools.cache
def _empty_hxw_raises() -> bool:
    """Whether the installed torch refuses a group norm over empty spatial dims (HxW = 0; torch
    2.14 on) where earlier torch returned NaN statistics. A probe of torch's kernel, so the
    function follows the torch it exports for."""
    try:
        torch.ops.aten.native_group_norm(torch.zeros(1, 1, 0), None, None, 1, 1, 0, 1, 1e-5)
    except RuntimeError:
        return True
    return False


def _group_norm(
    input: Value, weight: Value | None, bias: Value | None, group: int, eps: float
) -> tuple[Value, Value, Value]:
    """Statistics over a (N, group, -1) view of the input (ONNX GroupNormalization does not
    output them), then the per-channel affine transform."""
    if input.rank is None or input.rank < 2:
        raise ValueError(f"group norm expects an input of rank >= 2 (N, C, ...), got rank {input.rank}")
    if input.shape is not None and 0 in input.shape[2:] and _empty_hxw_raises():
        raise ValueError(
            f"group norm over empty spatial dims (input shape {list(input.shape)}, HxW = 0) is an error in the "
            f"installed torch {torch.__version__} (2.14 on; earlier torch gives NaN statistics): torch raises too"
        )
    dtype = _compute_dtype(input)
    stats = _stats_dtype(input, weight, bias)
    x = cast_to(input, dtype)
    dims = input.known_shape[1:]
    sizes = [d for d in dims if isinstance(d, int)]
    static = len(sizes) == len(dims)
    if static and math.prod(sizes) > 0 and sizes[0] % group == 0:
        y, mean, rstd = _group_norm_static(x, weight, bias, group, eps, sizes)
        return cast_to(y, input.known_dtype), cast_to(mean, stats), cast_to(rstd, stats)
    # (N, group, C / group * HxW), spelled out (Reshape cannot infer a -1 when N is 0, and with
    # allowzero a 0 is a size, not "copy this dimension")
    if static:
        per_group: Any = math.prod(sizes) // group
        grouped_shape = op.Concat(op.Shape(x, start=0, end=1), np.array([group, per_group], np.int64), axis=0)
    else:
        per_group = op.Div(op.ReduceProd(op.Shape(x, start=1), keepdims=1), np.array([group], np.int64))
        grouped_shape = op.Concat(op.Shape(x, start=0, end=1), np.array([group], np.int64), per_group, axis=0)
    # statistics in float64 (torch's float Welford statistics overflow to NaN near finfo.max,
    # where the float64 ones are the exact ones), the output in dtype
    grouped = cast_to(op.Reshape(x, grouped_shape, allowzero=1), types.DOUBLE)
    mean = op.ReduceMean(grouped, [2], keepdims=1)
    centered = op.Sub(grouped, mean)
    squares = op.Mul(centered, centered)
    if isinstance(per_group, int) and per_group > 0:
        var = op.ReduceMean(squares, [2], keepdims=1)
    else:  # a group of no elements: the variance is 0 / 0 = NaN, as in torch (ReduceMean gives 0)
        count = per_group if isinstance(per_group, int) else op.Cast(per_group, to=types.DOUBLE.onnx)
        var = op.Div(op.ReduceSum(squares, [2], keepdims=1), op.CastLike(count, squares))
    rstd = op.Reciprocal(op.Sqrt(op.Add(var, eps)))
    mean = op.Squeeze(mean, [2])
    rstd = op.Squeeze(rstd, [2])
    # torch's form: y = x * alpha + beta per (sample, channel), alpha = rstd * weight and
    # beta = bias - mean * alpha (a variance that overflows, rstd 0, gives the bias, not NaN)
    channels = op.Shape(x, start=1, end=2)
    per_channel_shape = op.Concat(op.Shape(x, start=0, end=1), channels, np.ones(input.rank - 2, np.int64), axis=0)

    def per_channel(v: Value) -> Value:  # (N, group) -> (N, C, 1, ...), each group's value repeated
        repeated = op.Expand(op.Unsqueeze(v, [2]), op.Concat(op.Shape(v), op.Div(channels, np.array([group], np.int64)), axis=0))
        return op.Reshape(repeated, per_channel_shape, allowzero=1)

    alpha, shift = per_channel(rstd), per_channel(mean)
    if weight is not None:
        alpha = op.Mul(alpha, _per_channel(cast_to(weight, types.DOUBLE), types.DOUBLE, input.rank))
    beta = op.Neg(op.Mul(shift, alpha))
    if bias is not None:
        beta = op.Add(_per_channel(cast_to(bias, types.DOUBLE), types.DOUBLE, input.rank), beta)
    y = op.Add(op.Mul(x, cast_to(alpha, dtype)), cast_to(beta, dtype))
    return cast_to(y, input.known_dtype), cast_to(mean, stats), cast_to(rstd, stats)


def _group_norm_static(
    x: Value, weight: Value | None, bias: Value | None, group: int, eps: float, sizes: list[int]
) -> tuple[Value, Value, Value]:
    """Group norm of x (in its computation dtype) whose sizes past the batch are static and
    non-empty, in a (N, group, C / group, HxW) view: every reshape is one constant ([0, ...]
    copies the batch, however large or empty), the statistics broadcast over the view with no
    Expand, and the weight and bias are reshaped to (group, C / group, 1) constants.
    Statistics in float64 (torch's float Welford overflows to NaN near finfo.max, where these are
    the exact ones), then torch's own form in dtype: alpha = rstd * weight, beta = bias -
    mean * alpha, y = x * alpha + beta (a float64 variance that overflows, rstd 0, gives the
    bias, not NaN). With `exact_nan=False` a float32 x's output is `_group_norm_instance`'s; the
    statistics outputs stay these."""
    channels, hxw = sizes[0], math.prod(sizes[1:])
    grouped = op.Reshape(x, [0, group, channels // group, hxw])
    wide = cast_to(grouped, types.DOUBLE)
    mean = op.ReduceMean(wide, [2, 3], keepdims=1)
    centered = op.Sub(wide, mean)
    rstd = op.Reciprocal(op.Sqrt(op.Add(op.ReduceMean(op.Mul(centered, centered), [2, 3], keepdims=1), eps)))
    dtype = x.known_dtype
    if dtype is types.FLOAT and not current_exact_nan():
        return _group_norm_instance(x, weight, bias, group, eps, sizes), op.Squeeze(mean, [2, 3]), op.Squeeze(rstd, [2, 3])
    alpha = cast_to(rstd, dtype)
    if weight is not None:
        alpha = op.Mul(alpha, op.Reshape(cast_to(weight, dtype), [group, channels // group, 1]))
    shift = op.Mul(cast_to(mean, dtype), alpha)
    if bias is None:
        beta = op.Neg(shift)
    else:
        beta = op.Sub(op.Reshape(cast_to(bias, dtype), [group, channels // group, 1]), shift)
    y = op.Reshape(op.Add(op.Mul(grouped, alpha), beta), [0, *sizes])
    return y, op.Squeeze(mean, [2, 3]), op.Squeeze(rstd, [2, 3])


def _group_norm_instance(
    x: Value, weight: Value | None, bias: Value | None, group: int, eps: float, sizes: list[int]
) -> Value:
    """`exact_nan=False`'s group norm of a float32 x with static non-empty sizes past the batch:
    onnxruntime's InstanceNormalization over the (N, group, C / group * HxW) view, then the
    per-channel weight and bias (5 nodes, against 17). Its statistics are float32, as torch's:
    for |x| near finfo.max (about 1e38) its x - mean overflows and it gives NaN where torch gives
    the bias (docs/nan_latency.md); elsewhere it agrees with torch within float32 rounding
    (between 1e19 and 1e37 both give the bias, where the exact form's float64 statistics
    normalize)."""
    channels, hxw = sizes[0], math.prod(sizes[1:])
    ones, zeros = np.ones(group, np.float32), np.zeros(group, np.float32)
    y = op.Reshape(op.InstanceNormalization(op.Reshape(x, [0, group, channels // group * hxw]), ones, zeros, epsilon=eps), [0, *sizes])
    per_channel = [channels] + [1] * (len(sizes) - 1)
    if weight is not None:
        y = op.Mul(y, op.Reshape(cast_to(weight, types.FLOAT), per_channel))
    if bias is not None:
        y = op.Add(y, op.Reshape(cast_to(bias, types.FLOAT), per_channel))
    return y


@aten_op("aten::group_norm")
def aten_group_norm(
    input: TFloat, num_groups: int, weight: TFloat | None = None, bias: TFloat | None = None,
    eps: float = 1e-05, cudnn_enabled: bool = True,
) -> TFloat:
    """group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor

    native_group_norm's output. (ONNX GroupNormalization would be one node, but ONNX shape
    inference gives its output no shape.)"""
    return _group_norm(input, weight, bias, num_groups, eps)[0]
