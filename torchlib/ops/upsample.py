"""Upsampling (interpolation) to ONNX Resize: nearest, nearest-exact, linear, bilinear, trilinear,
bicubic, and the antialiased bilinear/bicubic.

torch maps output pixel `dst` to source coordinates as follows (ratio = 1/scale when a scale is
given, else in/out; align_corners uses (in - 1)/(out - 1) and ignores scales):

| torch mode     | source coordinate                        | ONNX Resize                                  |
| -------------- | ---------------------------------------- | -------------------------------------------- |
| nearest        | floor(dst * ratio)                       | asymmetric, nearest_mode=floor               |
| nearest-exact  | floor((dst + 0.5) * ratio)               | half_pixel, nearest_mode=round_prefer_ceil   |
| linear, cubic  | (dst + 0.5) * ratio - 0.5                | half_pixel (cubic_coeff_a=-0.75 for cubic)   |
| align_corners  | dst * (in - 1) / (out - 1)               | align_corners                                |
| antialias      | as linear/cubic, filter widened by ratio | half_pixel, antialias=1, exclude_outside=1   |

Linear and cubic use half_pixel, not pytorch_half_pixel: the two differ only for an output of
length 1, where pytorch_half_pixel maps to 0 but torch (and half_pixel) to (in - 1) / 2.

When scales are given they set the mapping, so they go to Resize as scales; Resize computes the
output length as floor(in * scale) in float32, so each scale is nudged by float32 ulps until that
equals torch's length (a no-op for the usual 2.0 or 0.5).

Some cases interpolate exactly instead, by per-axis matrices with torch's own weights (Gather
for nearest, MatMul for the rest), when the spatial sizes are known at build time:
- double, for which onnxruntime's Resize has no kernel;
- antialiasing: Resize's filter differs from torch's in the last float32 digits, and Resize has
  no antialiased align_corners. With dynamic sizes, antialiasing falls back to Resize
  (align_corners=False only) and double to float32.

Other dtypes: float32/float16 and uint8 (nearest) run natively; bfloat16 computes in float32;
uint8 linear/cubic compute in float32, then round and clamp (torch's uint8 kernels work in fixed
point: bilinear agrees within 1, bicubic differs at the borders, where torch renormalizes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.types import TReal
from torchlib.ops._helpers import as_shape
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_CUBIC_A = -0.75  # torch's bicubic coefficient; its antialiased bicubic uses -0.5 (PIL's)


def _attributes(mode: str, align_corners: bool) -> dict[str, Any]:
    if mode == "nearest":
        return dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor")
    if mode == "nearest_exact":
        return dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil")
    transform = "align_corners" if align_corners else "half_pixel"
    if mode == "linear":
        return dict(mode="linear", coordinate_transformation_mode=transform)
    if mode == "cubic":
        return dict(mode="cubic", coordinate_transformation_mode=transform, cubic_coeff_a=_CUBIC_A)
    if align_corners:
        raise ValueError(
            "antialiased upsampling with align_corners=True needs the spatial sizes known when the "
            "graph is built: ONNX Resize's antialias filter has no align_corners mapping"
        )
    return dict(mode=mode[: -len("_aa")], coordinate_transformation_mode="half_pixel", antialias=1, exclude_outside=1, cubic_coeff_a=-0.5)


def _static_sizes(x: Value, n: int) -> list[int] | None:
    sizes = list(x.shape[-n:]) if x.shape is not None else [None]
    return sizes if all(isinstance(s, int) for s in sizes) else None  # type: ignore[return-value]


def _float32_scales(sizes: list[int] | None, scales: list[float], output_size: Sequence[Any] | None) -> list[float]:
    """float32 scales for which Resize's floor(in * scale) is torch's output length."""
    if sizes is None:
        return [float(np.float32(s)) for s in scales]
    result = []
    for size, scale, i in zip(sizes, scales, range(len(sizes))):
        target = output_size[i] if output_size is not None else math.floor(size * scale)
        if not isinstance(target, int):
            target = math.floor(size * scale)
        s32 = np.float32(scale)
        for _ in range(64):
            got = math.floor(float(size) * float(s32))
            if got == target:
                break
            s32 = np.nextafter(s32, np.float32(np.inf if got < target else 0))
        else:
            raise ValueError(f"output size {target} does not follow from input size {size} and scale {scale}; Resize needs one or the other")
        result.append(float(s32))
    return result


def _aa_filter(x: float, cubic: bool) -> float:
    x = abs(x)
    if not cubic:
        return 1 - x if x < 1 else 0.0
    a = -0.5
    if x < 1:
        return ((a + 2) * x - (a + 3)) * x * x + 1
    return (((x - 5) * x + 8) * x - 4) * a if x < 2 else 0.0


def _aa_rows(matrix: np.ndarray, ratio: float, cubic: bool) -> None:
    """torch's antialiased weights: the filter widened by the ratio when downsampling, cut at the
    borders and renormalized."""
    out, size = matrix.shape
    support = (2.0 if cubic else 1.0) * max(ratio, 1.0)
    inverse = 1.0 / ratio if ratio >= 1.0 else 1.0
    for dst in range(out):
        center = ratio * (dst + 0.5)
        start = max(int(center - support + 0.5), 0)
        end = min(int(center + support + 0.5), size)
        weights = np.array([_aa_filter((j - center + 0.5) * inverse, cubic) for j in range(start, end)])
        total = weights.sum()
        matrix[dst, start:end] = weights / total if total != 0 else weights


def _source_matrix(size: int, out: int, ratio: float, mode: str, align_corners: bool) -> np.ndarray:
    """(out, size) float64 weights of torch's interpolation along one axis."""
    matrix = np.zeros((out, size))
    if mode.endswith("_aa"):
        _aa_rows(matrix, ratio, mode == "cubic_aa")
        return matrix
    for dst in range(out):
        if mode == "nearest":
            matrix[dst, min(math.floor(dst * ratio), size - 1)] = 1
            continue
        if mode == "nearest_exact":
            matrix[dst, min(math.floor((dst + 0.5) * ratio), size - 1)] = 1
            continue
        src = dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5
        if mode == "linear":
            src = max(src, 0.0)
            i0 = min(int(src), size - 1)
            i1 = min(i0 + 1, size - 1)
            frac = src - i0
            matrix[dst, i0] += 1 - frac
            matrix[dst, i1] += frac
            continue
        i = math.floor(src)
        t = src - i
        a = _CUBIC_A
        coeffs = [
            ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
        ]
        for k, c in enumerate(coeffs):
            matrix[dst, min(max(i - 1 + k, 0), size - 1)] += c
    return matrix


def _interpolate_exactly(x: Value, sizes: list[int], out: list[int], scales: list[float | None], mode: str, align_corners: bool) -> Value:
    """Separable interpolation in x's own dtype: Gather for nearest, MatMul with torch's weights
    for linear and cubic, one spatial axis at a time."""
    rank = x.rank
    n = len(sizes)
    y = x
    for i in range(n):
        size, length, scale = sizes[i], out[i], scales[i]
        if align_corners:
            ratio = (size - 1) / (length - 1) if length > 1 else 0.0
        else:
            ratio = 1.0 / scale if scale is not None and scale > 0 else size / length
        matrix = _source_matrix(size, length, ratio, mode, align_corners)
        axis = rank - n + i
        if mode in ("nearest", "nearest_exact"):
            y = op.Gather(y, matrix.argmax(axis=1).astype(np.int64), axis=axis)
            continue
        perm = list(range(rank))
        perm[axis], perm[-1] = perm[-1], perm[axis]
        moved = y if axis == rank - 1 else op.Transpose(y, perm=perm)
        moved = op.MatMul(moved, matrix.T.astype(x.dtype.numpy))
        y = moved if axis == rank - 1 else op.Transpose(moved, perm=perm)
    return y


def _upsample(
    x: Value, n: int, output_size: Sequence[Any] | None, scales: Sequence[float | None] | None, mode: str,
    align_corners: bool = False,
) -> Value:  # fmt: skip
    if output_size is None and scales is None:
        raise ValueError("upsampling needs output_size or scale_factors")
    scale_list: list[float | None] = list(scales) if scales is not None else [None] * n
    if len(scale_list) != n or (output_size is not None and len(output_size) != n):
        raise ValueError(f"upsampling {n} spatial dims needs {n} sizes or scales, got {output_size} and {scales}")
    sizes = _static_sizes(x, n)
    dtype = x.dtype
    out = _output_lengths(sizes, output_size, scale_list)
    if sizes is not None and out is not None and (dtype is types.DOUBLE or mode.endswith("_aa")):
        # exact: double (Resize has no double kernel) and antialiasing (Resize's filter differs
        # from torch's in the last float32 digits, and has no align_corners)
        compute = types.DOUBLE if dtype is types.DOUBLE else types.FLOAT
        y = _interpolate_exactly(cast_to(x, compute), sizes, out, scale_list, mode, align_corners)  # type: ignore[arg-type]
        return _cast_back(y, dtype)
    native = dtype in (types.FLOAT, types.FLOAT16) or (dtype is types.UINT8 and mode.startswith("nearest"))
    y = cast_to(x, dtype if native else types.FLOAT)
    attrs = _attributes(mode, align_corners)
    axes = list(range(x.rank - n, x.rank))
    if all(s is not None for s in scale_list):
        y = op.Resize(y, None, _float32_scales(sizes, scale_list, output_size), axes=axes, **attrs)  # type: ignore[arg-type]
    else:
        y = op.Resize(y, None, None, as_shape(output_size), axes=axes, **attrs)  # type: ignore[arg-type]
    return _cast_back(y, dtype)


def _cast_back(y: Value, dtype: types.DType) -> Value:
    """The result in the input's dtype; integers (uint8 images) rounded and clamped."""
    if y.dtype is dtype:
        return y
    if dtype.is_integer:
        info = np.iinfo(dtype.numpy)
        y = op.Clip(op.Round(y), float(info.min), float(info.max))
    return op.Cast(y, to=dtype.onnx)


def _output_lengths(sizes: list[int] | None, output_size: Sequence[Any] | None, scales: list[float | None]) -> list[int] | None:
    """torch's output lengths when known at build time: output_size, else floor(size * scale)."""
    if output_size is not None and all(isinstance(s, int) for s in output_size):
        return [int(s) for s in output_size]
    if sizes is not None and all(s is not None for s in scales):
        return [math.floor(size * s) for size, s in zip(sizes, scales)]  # type: ignore[operator]
    return None


# -- nearest ------------------------------------------------------------------------------------


@aten_op("aten::upsample_nearest1d")
def aten_upsample_nearest1d(self: TReal, output_size: Sequence[int], scales: float | None = None) -> TReal:
    """upsample_nearest1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor"""
    return _upsample(self, 1, output_size, [scales], "nearest")


@aten_op("aten::upsample_nearest2d")
def aten_upsample_nearest2d(
    self: TReal, output_size: Sequence[int], scales_h: float | None = None, scales_w: float | None = None
) -> TReal:
    """upsample_nearest2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 2, output_size, [scales_h, scales_w], "nearest")


@aten_op("aten::upsample_nearest3d")
def aten_upsample_nearest3d(
    self: TReal, output_size: Sequence[int], scales_d: float | None = None, scales_h: float | None = None,
    scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """upsample_nearest3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 3, output_size, [scales_d, scales_h, scales_w], "nearest")


@aten_op("aten::upsample_nearest1d.vec")
def aten_upsample_nearest1d_vec(input: TReal, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> TReal:
    """upsample_nearest1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 1, output_size, scale_factors, "nearest")


@aten_op("aten::upsample_nearest2d.vec")
def aten_upsample_nearest2d_vec(input: TReal, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> TReal:
    """upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 2, output_size, scale_factors, "nearest")


@aten_op("aten::upsample_nearest3d.vec")
def aten_upsample_nearest3d_vec(input: TReal, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> TReal:
    """upsample_nearest3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 3, output_size, scale_factors, "nearest")


@aten_op("aten::_upsample_nearest_exact1d")
def aten__upsample_nearest_exact1d(self: TReal, output_size: Sequence[int], scales: float | None = None) -> TReal:
    """_upsample_nearest_exact1d(Tensor self, SymInt[1] output_size, float? scales=None) -> Tensor"""
    return _upsample(self, 1, output_size, [scales], "nearest_exact")


@aten_op("aten::_upsample_nearest_exact2d")
def aten__upsample_nearest_exact2d(
    self: TReal, output_size: Sequence[int], scales_h: float | None = None, scales_w: float | None = None
) -> TReal:
    """_upsample_nearest_exact2d(Tensor self, SymInt[2] output_size, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 2, output_size, [scales_h, scales_w], "nearest_exact")


@aten_op("aten::_upsample_nearest_exact3d")
def aten__upsample_nearest_exact3d(
    self: TReal, output_size: Sequence[int], scales_d: float | None = None, scales_h: float | None = None,
    scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """_upsample_nearest_exact3d(Tensor self, SymInt[3] output_size, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 3, output_size, [scales_d, scales_h, scales_w], "nearest_exact")


@aten_op("aten::_upsample_nearest_exact1d.vec")
def aten__upsample_nearest_exact1d_vec(input: TReal, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> TReal:
    """_upsample_nearest_exact1d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 1, output_size, scale_factors, "nearest_exact")


@aten_op("aten::_upsample_nearest_exact2d.vec")
def aten__upsample_nearest_exact2d_vec(input: TReal, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> TReal:
    """_upsample_nearest_exact2d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 2, output_size, scale_factors, "nearest_exact")


@aten_op("aten::_upsample_nearest_exact3d.vec")
def aten__upsample_nearest_exact3d_vec(input: TReal, output_size: Sequence[int] | None, scale_factors: Sequence[float] | None) -> TReal:
    """_upsample_nearest_exact3d.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 3, output_size, scale_factors, "nearest_exact")


# -- linear, bilinear, trilinear, bicubic -------------------------------------------------------


@aten_op("aten::upsample_linear1d")
def aten_upsample_linear1d(self: TReal, output_size: Sequence[int], align_corners: bool, scales: float | None = None) -> TReal:
    """upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor"""
    return _upsample(self, 1, output_size, [scales], "linear", align_corners)


@aten_op("aten::upsample_bilinear2d")
def aten_upsample_bilinear2d(
    self: TReal, output_size: Sequence[int], align_corners: bool, scales_h: float | None = None,
    scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """upsample_bilinear2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 2, output_size, [scales_h, scales_w], "linear", align_corners)


@aten_op("aten::upsample_trilinear3d")
def aten_upsample_trilinear3d(
    self: TReal, output_size: Sequence[int], align_corners: bool, scales_d: float | None = None,
    scales_h: float | None = None, scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """upsample_trilinear3d(Tensor self, SymInt[3] output_size, bool align_corners, float? scales_d=None, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 3, output_size, [scales_d, scales_h, scales_w], "linear", align_corners)


@aten_op("aten::upsample_bicubic2d")
def aten_upsample_bicubic2d(
    self: TReal, output_size: Sequence[int], align_corners: bool, scales_h: float | None = None,
    scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """upsample_bicubic2d(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 2, output_size, [scales_h, scales_w], "cubic", align_corners)


@aten_op("aten::upsample_linear1d.vec")
def aten_upsample_linear1d_vec(
    input: TReal, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> TReal:
    """upsample_linear1d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 1, output_size, scale_factors, "linear", align_corners)


@aten_op("aten::upsample_bilinear2d.vec")
def aten_upsample_bilinear2d_vec(
    input: TReal, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> TReal:
    """upsample_bilinear2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 2, output_size, scale_factors, "linear", align_corners)


@aten_op("aten::upsample_trilinear3d.vec")
def aten_upsample_trilinear3d_vec(
    input: TReal, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> TReal:
    """upsample_trilinear3d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 3, output_size, scale_factors, "linear", align_corners)


@aten_op("aten::upsample_bicubic2d.vec")
def aten_upsample_bicubic2d_vec(
    input: TReal, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> TReal:
    """upsample_bicubic2d.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 2, output_size, scale_factors, "cubic", align_corners)


# -- antialiased --------------------------------------------------------------------------------


@aten_op("aten::_upsample_bilinear2d_aa")
def aten__upsample_bilinear2d_aa(
    self: TReal, output_size: Sequence[int], align_corners: bool, scales_h: float | None = None,
    scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """_upsample_bilinear2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 2, output_size, [scales_h, scales_w], "linear_aa", align_corners)


@aten_op("aten::_upsample_bicubic2d_aa")
def aten__upsample_bicubic2d_aa(
    self: TReal, output_size: Sequence[int], align_corners: bool, scales_h: float | None = None,
    scales_w: float | None = None,
) -> TReal:  # fmt: skip
    """_upsample_bicubic2d_aa(Tensor self, SymInt[2] output_size, bool align_corners, float? scales_h=None, float? scales_w=None) -> Tensor"""
    return _upsample(self, 2, output_size, [scales_h, scales_w], "cubic_aa", align_corners)


@aten_op("aten::_upsample_bilinear2d_aa.vec")
def aten__upsample_bilinear2d_aa_vec(
    input: TReal, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> TReal:
    """_upsample_bilinear2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 2, output_size, scale_factors, "linear_aa", align_corners)


@aten_op("aten::_upsample_bicubic2d_aa.vec")
def aten__upsample_bicubic2d_aa_vec(
    input: TReal, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> TReal:
    """_upsample_bicubic2d_aa.vec(Tensor input, SymInt[]? output_size, bool align_corners, float[]? scale_factors) -> Tensor"""
    return _upsample(input, 2, output_size, scale_factors, "cubic_aa", align_corners)
