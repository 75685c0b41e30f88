"""QDQ: QuantizeLinear / DequantizeLinear (per tensor, per axis, blocked), DynamicQuantizeLinear,
and the integer ops (MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv)."""

from __future__ import annotations

from typing import Any

import torch

from torchlib.importer._common import impl
from torchlib.importer.conv_pool import conv
from torchlib.importer.converter import ONNX_TO_TORCH, Ctx
from torchlib.importer.registry import onnx_op


def _expand_param(p: torch.Tensor, x: torch.Tensor, axis: int, block_size: int) -> torch.Tensor:
    """A scale or zero point broadcast to x: scalar, 1-D along `axis`, or blocked along `axis`."""
    if p.dim() == 0 or p.numel() == 1 and x.dim() != p.dim():
        return p.reshape(())
    axis = axis + x.dim() if axis < 0 else axis
    if p.dim() == 1 and not block_size:
        return p.reshape([-1 if d == axis else 1 for d in range(x.dim())])
    return p.repeat_interleave(block_size, dim=axis).narrow(axis, 0, x.shape[axis])


def _saturate(y: torch.Tensor, dtype: torch.dtype, saturate: int) -> torch.Tensor:
    if dtype.is_floating_point:
        if saturate:
            info = torch.finfo(dtype)
            y = torch.where(torch.isinf(y) | torch.isnan(y), y, y.clamp(info.min, info.max))
        return y.to(dtype)
    bounds = torch.iinfo(dtype)
    return torch.round(y).clamp(bounds.min, bounds.max).to(torch.int64).to(dtype)


def quantize(x: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor | None, axis: int, block_size: int,
             saturate: int, out_dtype: torch.dtype) -> torch.Tensor:
    s = _expand_param(scale, x, axis, block_size).to(torch.float32)
    y = x.to(torch.float32) / s
    if not out_dtype.is_floating_point:
        y = torch.round(y)
    if zero_point is not None:
        y = y + _expand_param(zero_point, x, axis, block_size).to(torch.float32)
    return _saturate(y, out_dtype, saturate)


@onnx_op("", "QuantizeLinear", since=10)
def quantize_linear(ctx: Ctx, x: Any, scale: Any, zero_point: Any = None) -> Any:
    types = ctx.builder.importer.types()
    out_type = ctx.attr("output_dtype", 0)
    if not out_type and len(ctx.node.input) > 2 and ctx.node.input[2] in types:
        out_type = types[ctx.node.input[2]].tensor_type.elem_type
    if not out_type and ctx.node.output[0] in types:
        out_type = types[ctx.node.output[0]].tensor_type.elem_type
    if out_type and out_type not in ONNX_TO_TORCH:
        raise ctx.error(f"quantizes to ONNX type {out_type}, which torch has no tensor type for")
    dtype = ONNX_TO_TORCH[out_type] if out_type else torch.uint8
    return ctx.call(quantize, x, scale, zero_point, ctx.attr("axis", 1), ctx.attr("block_size", 0),
                    ctx.attr("saturate", 1), dtype)


def dequantize(x: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor | None, axis: int, block_size: int,
               out_dtype: torch.dtype | None) -> torch.Tensor:
    y = x.to(torch.float32)
    if zero_point is not None:
        y = y - _expand_param(zero_point, x, axis, block_size).to(torch.float32)
    y = y * _expand_param(scale, x, axis, block_size).to(torch.float32)
    return y.to(out_dtype or scale.dtype)


@onnx_op("", "DequantizeLinear", since=10)
def dequantize_linear(ctx: Ctx, x: Any, scale: Any, zero_point: Any = None) -> Any:
    out = ONNX_TO_TORCH.get(ctx.attr("output_dtype", 0))
    return ctx.call(dequantize, x, scale, zero_point, ctx.attr("axis", 1), ctx.attr("block_size", 0), out)


@impl("DynamicQuantizeLinear", multi=True)
def dynamic_quantize_linear(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    lo = torch.clamp(x.min(), max=0)
    hi = torch.clamp(x.max(), min=0)
    scale = (hi - lo) / 255
    zp = torch.round(-lo / scale).clamp(0, 255).to(torch.uint8)
    y = (torch.round(x / scale) + zp.to(x.dtype)).clamp(0, 255).to(torch.uint8)
    return y, scale.to(x.dtype), zp


def _centered(x: torch.Tensor, zp: torch.Tensor | None, axis: int = 1) -> torch.Tensor:
    y = x.to(torch.float64)
    if zp is not None:
        y = y - (zp.to(torch.float64).reshape([-1] + [1] * (x.dim() - axis - 1)) if zp.dim() == 1 and zp.numel() > 1
                 and axis != x.dim() - 1 else zp.to(torch.float64))
    return y


@impl("MatMulInteger")
def matmul_integer(a: torch.Tensor, b: torch.Tensor, a_zp: torch.Tensor | None = None,
                   b_zp: torch.Tensor | None = None) -> torch.Tensor:
    a64 = a.to(torch.float64) - (a_zp.to(torch.float64).reshape(-1, 1) if a_zp is not None and a_zp.numel() > 1
                                 else (a_zp.to(torch.float64) if a_zp is not None else 0))
    b64 = b.to(torch.float64) - (b_zp.to(torch.float64) if b_zp is not None else 0)
    return torch.matmul(a64, b64).to(torch.int32)


@impl("QLinearMatMul")
def qlinear_matmul(a: torch.Tensor, a_scale: torch.Tensor, a_zp: torch.Tensor, b: torch.Tensor, b_scale: torch.Tensor,
                   b_zp: torch.Tensor, y_scale: torch.Tensor, y_zp: torch.Tensor) -> torch.Tensor:
    fa = (a.to(torch.float64) - a_zp.to(torch.float64)) * a_scale.to(torch.float64)
    fb = (b.to(torch.float64) - b_zp.to(torch.float64)) * b_scale.to(torch.float64)
    y = torch.matmul(fa, fb) / y_scale.to(torch.float64)
    return _saturate(torch.round(y) + y_zp.to(torch.float64), y_zp.dtype, 1)


@impl("ConvInteger", auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None)
def conv_integer(x: torch.Tensor, w: torch.Tensor, x_zp: torch.Tensor | None = None, w_zp: torch.Tensor | None = None,
                 **attrs: Any) -> torch.Tensor:
    xf = x.to(torch.float64) - (x_zp.to(torch.float64) if x_zp is not None else 0)
    wf = w.to(torch.float64) - (w_zp.to(torch.float64).reshape((-1,) + (1,) * (w.dim() - 1))
                                if w_zp is not None and w_zp.numel() > 1 else (w_zp.to(torch.float64) if w_zp is not None else 0))
    return conv(xf, wf, None, **attrs).to(torch.int32)


@impl("QLinearConv", auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None)
def qlinear_conv(x: torch.Tensor, x_scale: torch.Tensor, x_zp: torch.Tensor, w: torch.Tensor, w_scale: torch.Tensor,
                 w_zp: torch.Tensor, y_scale: torch.Tensor, y_zp: torch.Tensor, bias: torch.Tensor | None = None,
                 **attrs: Any) -> torch.Tensor:
    per_channel = (-1,) + (1,) * (w.dim() - 1)
    xf = (x.to(torch.float64) - x_zp.to(torch.float64)) * x_scale.to(torch.float64)
    wf = (w.to(torch.float64) - w_zp.to(torch.float64).reshape(per_channel if w_zp.numel() > 1 else ())) * \
        w_scale.to(torch.float64).reshape(per_channel if w_scale.numel() > 1 else ())
    b = bias.to(torch.float64) * x_scale.to(torch.float64) * w_scale.to(torch.float64) if bias is not None else None
    y = conv(xf, wf, b, **attrs) / y_scale.to(torch.float64)
    return _saturate(torch.round(y) + y_zp.to(torch.float64), y_zp.dtype, 1)
