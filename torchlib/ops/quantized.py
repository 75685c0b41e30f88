"""The decomposed quantization ops of PT2E (`torch.ops.quantized_decomposed.*`): quantize and
dequantize per tensor, per channel, per token and per channel group, and choose_qparams.

Exactness: each function follows the arithmetic of torch's reference implementation
(torch/ao/quantization/fx/_decomposed.py) in torch's computation dtype, so results match torch
bit for bit on int8 and uint8. torch quantizes as `round(x * (1 / scale)) + zero_point`, which
differs from ONNX QuantizeLinear's `round(x / scale)` in about one element in 10^5; so the
multiplication by the reciprocal is explicit and QuantizeLinear gets a scale of 1 (it then only
rounds, adds the zero point and saturates), followed by a Clip when quant_min/quant_max is
narrower than the dtype. DequantizeLinear `(q - zero_point) * scale` is torch's arithmetic when
the scale is float32, and is used with the real scale (and axis / block_size). Ops whose
arithmetic is in float64 (float64 scales) or that round after adding the zero point (per
token) are written with Mul / Add / Round / Clip / Cast in that order.
The quantized_decomposed library must be loaded for torch to know these ops
(`torch.ao.quantization.fx._decomposed`, imported here).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch.ao.quantization.fx._decomposed  # noqa: F401  (defines torch.ops.quantized_decomposed)

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.types import DType
from torchlib.promotion import promote_types
from torchlib.registry import aten_op


def _f32(v: float) -> np.ndarray:
    return np.array(v, np.float32)


def _f64(v: float) -> np.ndarray:
    return np.array(v, np.float64)


def _i32(v: int) -> np.ndarray:
    return np.array(v, np.int32)


_FLOAT_TYPES = (types.FLOAT16, types.BFLOAT16, types.FLOAT, types.DOUBLE)


def _bounds(dtype: DType) -> tuple[int, int]:
    info = np.iinfo(dtype.numpy)
    return int(info.min), int(info.max)


def _fits(zero_point: Any, dtype: DType) -> bool:
    """The zero point is known, at trace time, to be a value of dtype (a Python int or a constant
    tensor in range): only then can it be QuantizeLinear's / DequantizeLinear's zero point,
    which has the quantized dtype. Other zero points take the explicit arithmetic."""
    low, high = _bounds(dtype)
    if isinstance(zero_point, int):
        return low <= zero_point <= high
    if not zero_point.dtype.is_integer or zero_point.const_value is None:
        return False
    values = zero_point.const_value
    return values.size == 0 or (low <= int(values.min()) and int(values.max()) <= high)


def _check_range(name: str, quant_min: Any, quant_max: Any, dtype: DType) -> None:
    if dtype not in (types.INT8, types.UINT8, types.INT16, types.UINT16, types.INT32):
        raise ValueError(f"quantized_decomposed::{name}: dtype {dtype} is not an integer dtype ONNX can quantize to")
    low, high = _bounds(dtype)
    if isinstance(quant_min, int) and isinstance(quant_max, int) and not low <= quant_min <= quant_max <= high:
        raise ValueError(f"quantized_decomposed::{name}: [quant_min, quant_max] = [{quant_min}, {quant_max}] is outside {dtype}'s range [{low}, {high}]")


def _as(x: Any, dtype: DType) -> Any:
    return x if not isinstance(x, Value) or x.dtype is dtype else op.Cast(x, to=dtype.onnx)


def _clamp(q: Value, quant_min: Any, quant_max: Any, dtype: DType) -> Value:
    """q (of the quantized dtype, already saturated to its range) clamped to [quant_min, quant_max]."""
    if (quant_min, quant_max) == _bounds(dtype):
        return q
    if dtype.itemsize < 4:  # onnxruntime's Clip has no int16 kernel; int8 and uint8 clip exactly in int32
        return op.Cast(op.Clip(op.Cast(q, to=types.INT32.onnx), _as(quant_min, types.INT32), _as(quant_max, types.INT32)), to=dtype.onnx)
    return op.Clip(q, _as(quant_min, dtype), _as(quant_max, dtype))


def _quantize_scaled(scaled: Value, zero_point: Any, quant_min: Any, quant_max: Any, dtype: DType, axis: int | None = None) -> Value:
    """clamp(round(scaled) + zero_point, quant_min, quant_max).to(dtype): scaled is x * (1 / scale)
    already, in torch's computation dtype; zero_point a Python int, or a Value (1-D with axis)."""
    if scaled.dtype is types.FLOAT and dtype is not types.INT32 and _fits(zero_point, dtype):  # QuantizeLinear has no int32
        zp = op.Cast(zero_point, to=dtype.onnx) if isinstance(zero_point, Value) else np.array(zero_point, dtype.numpy)
        one = _f32(1.0) if axis is None else op.CastLike(op.ConstantOfShape(op.Shape(zp), value=np.array([1.0], np.float32)), scaled)
        # the zero point gives the output dtype (no output_dtype attribute: onnxruntime's int8-to-uint8
        # Q/DQ rewrite changes the zero point but not the attribute, and then rejects the graph)
        q = op.QuantizeLinear(scaled, one, zp, axis=1 if axis is None else axis)
        return _nan_as_torch(scaled, _clamp(q, quant_min, quant_max, dtype), dtype)
    if axis is not None:  # broadcast the per-channel zero point along `axis`
        zero_point = op.Reshape(zero_point, [-1] + [1] * (scaled.known_rank - 1 - axis))
    shifted = op.Add(op.Round(scaled), _as(zero_point, scaled.known_dtype))
    q = op.Cast(op.Clip(shifted, _as(quant_min, scaled.known_dtype), _as(quant_max, scaled.known_dtype)), to=dtype.onnx)
    return _nan_as_torch(scaled, q, dtype)


def _nan_as_torch(scaled: Value, q: Value, dtype: DType) -> Value:
    """torch's clamp keeps NaN and its .to(dtype) converts it as x86 does: to int32's minimum,
    whose low bits are 0 in the narrower dtypes (onnxruntime's QuantizeLinear saturates NaN to
    quant_min). inf is clamped to the bounds on both sides."""
    if dtype in (types.INT16, types.UINT16):  # onnxruntime's Where has no 16-bit kernels
        return op.Cast(op.Where(op.IsNaN(scaled), np.array(0, np.int32), op.Cast(q, to=types.INT32.onnx)), to=dtype.onnx)
    nan_value = np.iinfo(np.int32).min if dtype is types.INT32 else 0
    return op.Where(op.IsNaN(scaled), np.array(nan_value, dtype.numpy), q)


def _scalar(x: Value) -> Value:
    """A one-element tensor (scale or zero point of a .tensor overload) as a scalar."""
    return op.Reshape(x, np.array([], np.int64)) if x.rank != 0 else x


def _float_input(x: Value, name: str) -> Value:
    if x.dtype in (types.FLOAT16, types.BFLOAT16):
        return op.Cast(x, to=types.FLOAT.onnx)
    if x.dtype is not types.FLOAT:
        raise TypeError(f"quantized_decomposed::{name}: input must be float32 (or float16/bfloat16), got {x.dtype}")
    return x


# -- per tensor ---------------------------------------------------------------------------------
@aten_op("quantized_decomposed::quantize_per_tensor")
def quantized_decomposed_quantize_per_tensor(input: Value, scale: float, zero_point: int, quant_min: int, quant_max: int, dtype: DType) -> Value:
    """quantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"""
    _check_range("quantize_per_tensor", quant_min, quant_max, dtype)
    x = _float_input(input, "quantize_per_tensor")
    return _quantize_scaled(op.Mul(x, _f32(1.0 / scale)), zero_point, quant_min, quant_max, dtype)


@aten_op("quantized_decomposed::quantize_per_tensor.tensor", "quantized_decomposed::quantize_per_tensor.tensor2")
def quantized_decomposed_quantize_per_tensor_tensor(input: Value, scale: Value, zero_point: Value, quant_min: Any, quant_max: Any, dtype: DType) -> Value:
    """quantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor"""
    _check_range("quantize_per_tensor.tensor", quant_min, quant_max, dtype)
    x = _float_input(input, "quantize_per_tensor.tensor")
    # torch calls the float overload with scale.item(): 1 / scale in float64, then float32
    inv_scale = op.Cast(op.Div(_f64(1.0), _as(_scalar(scale), types.DOUBLE)), to=types.FLOAT.onnx)
    quant_min = _scalar(quant_min) if isinstance(quant_min, Value) else quant_min
    quant_max = _scalar(quant_max) if isinstance(quant_max, Value) else quant_max
    return _quantize_scaled(op.Mul(x, inv_scale), _as(_scalar(zero_point), types.INT64), quant_min, quant_max, dtype)


def _dequantize_float32(input: Value, scale: Any, zero_point: Any, out_dtype: DType | None, axis: int | None = None) -> Value:
    """(input.to(float32) - zero_point) * scale with a float32 scale: DequantizeLinear, then the
    output dtype (one rounding, as torch's half-precision ops compute in float32). A zero point
    not known to fit the quantized dtype is subtracted in float32 (exact) instead."""
    if not _fits(zero_point, input.known_dtype):
        zp_axis = zero_point if axis is None or not isinstance(zero_point, Value) else _along(zero_point, axis, input.known_rank)
        scale_axis = scale if axis is None or not isinstance(scale, Value) else _along(scale, axis, input.known_rank)
        shifted = op.Sub(op.Cast(input, to=types.FLOAT.onnx), _as(zp_axis, types.FLOAT))
        return _as(op.Mul(shifted, scale_axis), out_dtype or types.FLOAT)
    zp = op.Cast(zero_point, to=input.known_dtype.onnx) if isinstance(zero_point, Value) else np.array(zero_point, input.known_dtype.numpy)
    result = op.DequantizeLinear(input, scale, zp, axis=1 if axis is None else axis)
    return _as(result, out_dtype or types.FLOAT)


def _check_dequantize(name: str, input: Value, dtype: DType, out_dtype: DType | None) -> None:
    if input.dtype is not dtype:
        raise TypeError(f"quantized_decomposed::{name}: input has dtype {input.dtype}, but dtype={dtype} was given")
    if out_dtype is not None and out_dtype not in _FLOAT_TYPES:
        raise TypeError(f"quantized_decomposed::{name}: out_dtype {out_dtype} is not a floating dtype")




@aten_op("quantized_decomposed::dequantize_per_tensor")
def quantized_decomposed_dequantize_per_tensor(
    input: Value, scale: float, zero_point: int, quant_min: int, quant_max: int, dtype: DType, *, out_dtype: DType | None = None
) -> Value:
    """dequantize_per_tensor(Tensor input, float scale, int zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"""
    _check_dequantize("dequantize_per_tensor", input, dtype, out_dtype)
    return _dequantize_float32(input, _f32(scale), zero_point, out_dtype)


@aten_op("quantized_decomposed::dequantize_per_tensor.tensor", "quantized_decomposed::dequantize_per_tensor.tensor2")
def quantized_decomposed_dequantize_per_tensor_tensor(
    input: Value, scale: Value, zero_point: Value, quant_min: Any, quant_max: Any, dtype: DType, *, out_dtype: DType | None = None
) -> Value:
    """dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"""
    _check_dequantize("dequantize_per_tensor.tensor", input, dtype, out_dtype)
    # torch calls the float overload with scale.item(), zero_point.item()
    return _dequantize_float32(input, _as(_scalar(scale), types.FLOAT), _scalar(zero_point), out_dtype)


# -- per channel ----------------------------------------------------------------------------------
def _channel_axis(name: str, x: Value, axis: int) -> int:
    if not -x.known_rank <= axis < x.known_rank:
        raise IndexError(f"quantized_decomposed::{name}: axis {axis} is out of range for a tensor of rank {x.rank}")
    return axis % x.known_rank


def _along(v: Value, axis: int, rank: int) -> Value:
    """A 1-D per-channel tensor shaped to broadcast along `axis` of a rank-`rank` tensor."""
    return op.Reshape(v, [-1] + [1] * (rank - 1 - axis))


@aten_op("quantized_decomposed::quantize_per_channel")
def quantized_decomposed_quantize_per_channel(
    input: Value, scales: Value, zero_points: Value, axis: int, quant_min: int, quant_max: int, dtype: DType
) -> Value:
    """quantize_per_channel(Tensor input, Tensor scales, Tensor zero_points, int axis, int quant_min, int quant_max, ScalarType dtype) -> Tensor"""
    _check_range("quantize_per_channel", quant_min, quant_max, dtype)
    x = _float_input(input, "quantize_per_channel")
    axis = _channel_axis("quantize_per_channel", x, axis)
    compute = types.DOUBLE if scales.dtype is types.DOUBLE else types.FLOAT  # input * (1.0 / scales) promotes
    inv_scales = op.Div(np.array(1.0, compute.numpy), _as(scales, compute))
    scaled = op.Mul(_as(x, compute), _along(inv_scales, axis, x.known_rank))
    return _quantize_scaled(scaled, zero_points, quant_min, quant_max, dtype, axis=axis)


@aten_op("quantized_decomposed::dequantize_per_channel")
def quantized_decomposed_dequantize_per_channel(
    input: Value, scales: Value, zero_points: Value | None, axis: int, quant_min: int, quant_max: int, dtype: DType,
    *, out_dtype: DType | None = None,
) -> Value:  # fmt: skip
    """dequantize_per_channel(Tensor input, Tensor scales, Tensor? zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? out_dtype=None) -> Tensor"""
    _check_dequantize("dequantize_per_channel", input, dtype, out_dtype)
    axis = _channel_axis("dequantize_per_channel", input, axis)
    # a size-1 axis broadcasts against the channels, as torch's view(new_shape) does; DequantizeLinear's axis cannot
    broadcasts = input.shape is not None and input.shape[axis] == 1 and scales.shape != (1,)
    if scales.dtype is types.FLOAT and (zero_points is None or zero_points.known_dtype.is_integer) and not broadcasts:
        zp = zero_points if zero_points is not None else op.ConstantOfShape(op.Shape(scales), value=np.array([0], np.int64))
        return _dequantize_float32(input, scales, zp, out_dtype, axis=axis)
    # (input - zero_points) * scales in torch's promoted dtype (float64 scales), then out_dtype
    shifted: Any = input if zero_points is None else op.Sub(_as(input, types.INT64), _along(_as(zero_points, types.INT64), axis, input.known_rank)) if zero_points.known_dtype.is_integer else op.Sub(_as(input, zero_points.known_dtype), _along(zero_points, axis, input.known_rank))  # fmt: skip
    compute = promote_types(shifted.dtype, scales.known_dtype)
    result = op.Mul(_as(shifted, compute), _along(_as(scales, compute), axis, input.known_rank))
    return _as(result, out_dtype or types.FLOAT)


# -- choose_qparams -------------------------------------------------------------------------------
_HALF = (types.FLOAT16, types.BFLOAT16)


def _wide(dtype: DType) -> DType:
    """Where torch computes an op of `dtype`: float32 for the half types (then rounds)."""
    return types.FLOAT if dtype in _HALF else dtype


def _half_op(fn: Any, dtype: DType, *args: Any) -> Value:
    """fn(*args) as torch computes it in `dtype`. For the half types every Value here is a float32
    Value holding values of `dtype`: torch computes in float32 and rounds each result to dtype."""
    result = fn(*args)
    return op.Cast(op.Cast(result, to=dtype.onnx), to=types.FLOAT.onnx) if dtype in _HALF else result


def _min_max(x: Value, axes: list[int] | None = None, keepdims: int = 0) -> tuple[Value, Value]:
    """min and max of x, in _wide(x.dtype) (exact: they are values of x)."""
    wide = _as(x, _wide(x.known_dtype))
    if axes is None:
        return op.ReduceMin(wide, keepdims=keepdims), op.ReduceMax(wide, keepdims=keepdims)
    return op.ReduceMin(wide, axes, keepdims=keepdims), op.ReduceMax(wide, axes, keepdims=keepdims)


def _check_float(name: str, x: Value) -> None:
    if x.dtype not in (types.FLOAT, types.FLOAT16, types.BFLOAT16):
        raise TypeError(f"quantized_decomposed::{name}: input must be float32, float16 or bfloat16, got {x.dtype}")


@aten_op("quantized_decomposed::choose_qparams.tensor")
def quantized_decomposed_choose_qparams_tensor(input: Value, quant_min: int, quant_max: int, eps: float, dtype: DType) -> tuple[Value, Value]:
    """choose_qparams.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> (Tensor, Tensor)"""
    _check_float("choose_qparams.tensor", input)
    d = input.known_dtype
    low, high = _min_max(input)
    min_neg, max_pos = op.Min(low, _f32(0)), op.Max(high, _f32(0))
    width = _half_op(op.Sub, d, max_pos, min_neg)
    scale = _half_op(lambda a: op.Div(a, _f32(float(quant_max - quant_min))), d, width)
    scale = op.Max(scale, np.array([eps], np.float32))  # eps is a float32 tensor of shape [1]
    zero_point = op.Sub(_i32(quant_min), op.Cast(op.Round(op.Div(min_neg, scale)), to=types.INT32.onnx))
    zero_point = op.Clip(zero_point, _i32(quant_min), _i32(quant_max))
    return op.Cast(scale, to=types.DOUBLE.onnx), op.Cast(zero_point, to=types.INT64.onnx)


@aten_op("quantized_decomposed::choose_qparams_symmetric.tensor")
def quantized_decomposed_choose_qparams_symmetric_tensor(input: Value, quant_min: int, quant_max: int, eps: float, dtype: DType) -> tuple[Value, Value]:
    """choose_qparams_symmetric.tensor(Tensor input, int quant_min, int quant_max, float eps, ScalarType dtype) -> (Tensor, Tensor)"""
    _check_float("choose_qparams_symmetric.tensor", input)
    d = input.known_dtype
    low, high = _min_max(input)
    max_pos = op.Max(op.Neg(op.Min(low, _f32(0))), op.Max(high, _f32(0)))
    scale = _half_op(lambda a: op.Div(a, _f32(float(quant_max - quant_min) / 2)), d, max_pos)
    scale = op.Max(scale, np.array([eps], np.float32))
    zero_point = np.array([128 if dtype is types.UINT8 else 0], np.int64)
    return op.Cast(scale, to=types.DOUBLE.onnx), op.Constant(value=zero_point)


# -- per token ------------------------------------------------------------------------------------
@aten_op("quantized_decomposed::choose_qparams_per_token")
def quantized_decomposed_choose_qparams_per_token(input: Value, dtype: DType) -> tuple[Value, Value]:
    """choose_qparams_per_token(Tensor input, ScalarType dtype) -> (Tensor, Tensor)"""
    if dtype is not types.INT8:
        raise ValueError(f"quantized_decomposed::choose_qparams_per_token: dtype {dtype} is not supported (torch supports int8 only)")
    _check_float("choose_qparams_per_token", input)
    d = types.FLOAT if input.dtype is types.FLOAT16 else input.known_dtype  # torch widens float16 scales
    # a non-negative axis: onnxruntime's reductions of an empty tensor ignore a negative one
    scales = op.ReduceMax(op.Abs(_as(input, types.FLOAT)), [input.known_rank - 1], keepdims=1)
    scales = _half_op(lambda a: op.Max(a, _f32(1e-5)), d, scales)  # clamp(min=1e-5) in d
    scales = _as(_half_op(lambda a: op.Div(a, _f32(127)), d, scales), d)
    return scales, _as(op.ConstantOfShape(op.Shape(scales), value=np.array([0.0], np.float32)), d)


@aten_op("quantized_decomposed::choose_qparams_per_token_asymmetric", "quantized_decomposed::_choose_qparams_per_token_asymmetric_impl")
def quantized_decomposed_choose_qparams_per_token_asymmetric(input: Value, dtype: DType) -> tuple[Value, Value]:
    """choose_qparams_per_token_asymmetric(Tensor input, ScalarType dtype) -> (Tensor, Tensor)"""
    _check_float("choose_qparams_per_token_asymmetric", input)
    d = input.known_dtype
    qmin, qmax = -128, 127
    low, high = _min_max(input, [input.known_rank - 1], keepdims=1)  # not -1: see choose_qparams_per_token
    min_neg, max_pos = op.Min(low, _f32(0)), op.Max(high, _f32(0))
    width = _half_op(op.Sub, d, max_pos, min_neg)
    scale = _half_op(lambda a: op.Div(a, _f32(qmax - qmin)), d, width)
    scale = _half_op(lambda a: op.Max(a, _f32(float(np.finfo(np.float32).eps))), d, scale)
    descaled_min = _half_op(op.Div, d, min_neg, scale)
    descaled_max = _half_op(op.Div, d, max_pos, scale)
    from_min = _half_op(lambda a: op.Add(a, _f32(qmin)), d, descaled_min)
    from_max = _half_op(lambda a: op.Add(a, _f32(qmax)), d, descaled_max)
    # torch: where(from_min + from_max > 0, qmin - descaled_min, qmax - descaled_max)
    zero_point = op.Where(
        op.Greater(_half_op(op.Add, d, from_min, from_max), _f32(0)),
        _half_op(lambda a: op.Sub(_f32(qmin), a), d, descaled_min),
        _half_op(lambda a: op.Sub(_f32(qmax), a), d, descaled_max),
    )
    zero_point = op.Round(op.Clip(zero_point, _f32(qmin), _f32(qmax)))  # integers: exact in d
    return op.Cast(scale, to=types.DOUBLE.onnx), op.Cast(zero_point, to=types.INT64.onnx)


def _quantize_rounding_after_shift(input: Value, scales: Value, zero_points: Value, quant_min: int, quant_max: int, dtype: DType) -> Value:
    """input.mul(1.0 / scales).add(zero_points).round().clamp(quant_min, quant_max).to(dtype),
    in torch's promoted dtype (per token and per channel group round after the shift)."""
    compute = promote_types(promote_types(input.known_dtype, scales.known_dtype), zero_points.known_dtype)
    wide = _wide(compute)
    one = np.array(1.0, _wide(scales.known_dtype).numpy)
    inv = _half_op(lambda s: op.Div(one, s), scales.known_dtype, _as(scales, _wide(scales.known_dtype)))
    scaled = _half_op(op.Mul, compute, _as(input, wide), _as(inv, wide))
    shifted = _half_op(op.Add, compute, scaled, _as(zero_points, wide))
    bounds = [np.array(b, wide.numpy) for b in (quant_min, quant_max)]
    return op.Cast(op.Clip(op.Round(shifted), *bounds), to=dtype.onnx)  # integers: exact in compute


@aten_op("quantized_decomposed::quantize_per_token")
def quantized_decomposed_quantize_per_token(input: Value, scales: Value, zero_points: Value, quant_min: int, quant_max: int, dtype: DType) -> Value:
    """quantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype) -> Tensor"""
    _check_range("quantize_per_token", quant_min, quant_max, dtype)
    return _quantize_rounding_after_shift(input, scales, zero_points, quant_min, quant_max, dtype)


@aten_op("quantized_decomposed::dequantize_per_token")
def quantized_decomposed_dequantize_per_token(
    input: Value, scales: Value, zero_points: Value, quant_min: int, quant_max: int, dtype: DType, output_dtype: DType
) -> Value:
    """dequantize_per_token(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, ScalarType output_dtype) -> Tensor"""
    # (input - zero_points) * scales in torch's promoted dtypes, then output_dtype
    return _shift_and_scale(input, scales, zero_points, output_dtype)


def _shift_and_scale(input: Value, scales: Value, zero_points: Value | None, output_dtype: DType) -> Value:
    """((input - zero_points) * scales).to(output_dtype) with torch's promotions (scales and zero
    points broadcast against input)."""
    shifted_dtype = input.known_dtype if zero_points is None else promote_types(input.known_dtype, zero_points.known_dtype)
    shifted = _as(input, _wide(shifted_dtype))
    if zero_points is not None:
        shifted = _half_op(op.Sub, shifted_dtype, shifted, _as(zero_points, _wide(shifted_dtype)))
    compute = promote_types(shifted_dtype, scales.known_dtype)
    product = _half_op(op.Mul, compute, _as(shifted, _wide(compute)), _as(scales, _wide(compute)))
    return _as(product, output_dtype)


# -- per channel group (block quantization) -------------------------------------------------------
def _group_size(name: str, input: Value, scales: Value, group_size: int) -> int:
    if input.rank != 2:
        raise ValueError(f"quantized_decomposed::{name}: input must be 2-D, got rank {input.rank}")
    columns = input.known_shape[-1]
    if isinstance(columns, int) and group_size > columns and scales.shape is not None and scales.shape[-1] == 1:
        group_size = columns  # torch's rule for a single-column quantization
    if group_size <= 1 or (isinstance(columns, int) and columns % group_size):
        raise ValueError(f"quantized_decomposed::{name}: group_size {group_size} must be > 1 and divide the last dim {columns}")
    return group_size


@aten_op("quantized_decomposed::quantize_per_channel_group")
def quantized_decomposed_quantize_per_channel_group(
    input: Value, scales: Value, zero_points: Value, quant_min: int, quant_max: int, dtype: DType, group_size: int
) -> Value:
    """quantize_per_channel_group(Tensor input, Tensor scales, Tensor zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size) -> Tensor"""
    _check_range("quantize_per_channel_group", quant_min, quant_max, dtype)
    group_size = _group_size("quantize_per_channel_group", input, scales, group_size)
    grouped = op.Reshape(input, [-1, group_size])
    q = _quantize_rounding_after_shift(grouped, op.Reshape(scales, [-1, 1]), op.Reshape(zero_points, [-1, 1]), quant_min, quant_max, dtype)
    return op.Reshape(q, op.Shape(input))


@aten_op("quantized_decomposed::dequantize_per_channel_group")
def quantized_decomposed_dequantize_per_channel_group(
    input: Value, scales: Value, zero_points: Value | None, quant_min: int, quant_max: int, dtype: DType, group_size: int,
    output_dtype: DType,
) -> Value:  # fmt: skip
    """dequantize_per_channel_group(Tensor input, Tensor scales, Tensor? zero_points, int quant_min, int quant_max, ScalarType dtype, int group_size, ScalarType output_dtype) -> Tensor"""
    group_size = _group_size("dequantize_per_channel_group", input, scales, group_size)
    if scales.dtype is types.FLOAT and (zero_points is None or zero_points.known_dtype.is_integer):
        # DequantizeLinear with block_size along the last axis: scales [rows, columns / group_size]
        block_scales = op.Reshape(scales, [input.known_shape[0] if isinstance(input.known_shape[0], int) else -1, -1])
        zp = None if zero_points is None else op.Reshape(op.Cast(zero_points, to=input.known_dtype.onnx), op.Shape(block_scales))
        result = op.DequantizeLinear(input, block_scales, zp, axis=1, block_size=group_size)
        return _as(result, output_dtype)
    # w.reshape(-1, group_size).sub(zp).mul(scales) in torch's promoted dtypes
    grouped = op.Reshape(input, [-1, group_size])
    zp = op.Reshape(zero_points, [-1, 1]) if zero_points is not None else op.Constant(value=np.array(0, np.int32))
    product = _shift_and_scale(grouped, op.Reshape(scales, [-1, 1]), zp, output_dtype)
    return op.Reshape(product, op.Shape(input))
