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

Some cases interpolate exactly instead, per axis with torch's own taps and weights (Gather for
nearest; Gather, Mul and ReduceSum for the rest, reading the very taps torch's CPU kernel reads,
so that an inf next to a zero weight gives NaN where torch's does), when the spatial sizes are
known at build time:
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
from graph_builder.type_constraints import TReal
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


def _aa_taps(size: int, out: int, ratio: float, cubic: bool) -> tuple[np.ndarray, np.ndarray]:
    """torch's antialiased taps: the filter widened by the ratio when downsampling, cut at the
    borders and renormalized; output dst reads the inputs [start, end) of its support."""
    support = (2.0 if cubic else 1.0) * max(ratio, 1.0)
    inverse = 1.0 / ratio if ratio >= 1.0 else 1.0
    rows = []
    for dst in range(out):
        center = ratio * (dst + 0.5)
        start = max(int(center - support + 0.5), 0)
        end = min(int(center + support + 0.5), size)
        weights = np.array([_aa_filter((j - center + 0.5) * inverse, cubic) for j in range(start, end)])
        total = weights.sum()
        rows.append((list(range(start, end)), weights / total if total != 0 else weights))
    return _padded(rows)


def _padded(rows: list[tuple[list[int], np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Taps of different counts as (out, K) indices and weights, a missing tap as index -1."""
    k = max(len(indices) for indices, _ in rows)
    index = np.zeros((len(rows), k), np.int64)
    weight = np.zeros((len(rows), k))
    valid = np.zeros((len(rows), k), bool)
    for row, (indices, weights) in enumerate(rows):
        index[row, : len(indices)] = indices
        weight[row, : len(indices)] = weights
        valid[row, : len(indices)] = True
    return np.where(valid, index, -1), weight


def _source_taps(size: int, out: int, ratio: float, mode: str, align_corners: bool) -> tuple[np.ndarray, np.ndarray]:
    """The input positions each output reads along one axis and their weights, (out, K) each,
    exactly as torch's CPU kernels read them (UpSampleKernel.cpp). torch multiplies every tap it
    reads, a zero weight included, so an inf there gives NaN: mirroring its taps gives its NaN.
    A tap index of -1 is no tap (antialiased windows of different lengths)."""
    if mode.endswith("_aa"):
        return _aa_taps(size, out, ratio, mode == "cubic_aa")
    index = np.zeros((out, 2 if mode == "linear" else 4), np.int64)
    weight = np.zeros(index.shape)
    for dst in range(out):
        if mode == "linear" and out == size:  # torch's "scale 1, simply copy", still two taps
            index[dst] = [dst, dst]
            weight[dst] = [1.0, 0.0]
            continue
        src = dst * ratio if align_corners else (dst + 0.5) * ratio - 0.5
        if mode == "linear":
            src = max(src, 0.0)
        i = min(math.floor(src), size - 1)  # guard_index_and_lambda
        t = min(max(src - i, 0.0), 1.0)
        if mode == "linear":
            index[dst] = [i, i + 1 if i < size - 1 else i]
            weight[dst] = [1 - t, t]
            continue
        a = _CUBIC_A
        weight[dst] = [
            ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a,
            ((a + 2) * t - (a + 3)) * t * t + 1,
            ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1,
            ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a,
        ]
        index[dst] = [min(max(i - 1 + k, 0), size - 1) for k in range(4)]
    return index, weight


def _nearest_source(size: int, out: int, ratio: float, mode: str) -> np.ndarray:
    if mode == "nearest":
        return np.array([min(math.floor(dst * ratio), size - 1) for dst in range(out)], np.int64)
    return np.array([min(math.floor((dst + 0.5) * ratio), size - 1) for dst in range(out)], np.int64)


def _interpolate_exactly(x: Value, sizes: list[int], out: list[int], scales: list[float | None], mode: str, align_corners: bool) -> Value:
    """Separable interpolation in x's own dtype, one spatial axis at a time, the last axis first
    (torch's innermost sum): Gather for nearest; for linear and cubic, Gather torch's taps and
    sum them times their weights. Antialiasing, like torch's separable kernel, leaves an axis
    whose length does not change untouched."""
    rank = x.known_rank
    n = len(sizes)
    y = x
    for i in reversed(range(n)):
        size, length, scale = sizes[i], out[i], scales[i]
        if align_corners:
            ratio = (size - 1) / (length - 1) if length > 1 else 0.0
        else:
            ratio = 1.0 / scale if scale is not None and scale > 0 else size / length
        axis = rank - n + i
        if mode in ("nearest", "nearest_exact"):
            y = op.Gather(y, _nearest_source(size, length, ratio, mode), axis=axis)
            continue
        if mode.endswith("_aa") and size == length:
            continue
        index, weight = _source_taps(size, length, ratio, mode, align_corners)
        missing = index < 0
        taps = op.Gather(y, np.where(missing, 0, index), axis=axis)  # (..., length, K, ...)
        trailing = [1] * (rank - axis - 1)
        products = op.Mul(taps, weight.astype(x.known_dtype.numpy).reshape([*weight.shape, *trailing]))
        if missing.any():  # a tap torch does not read: its product must not carry an inf or NaN
            products = op.Where(missing.reshape([*missing.shape, *trailing]), op.CastLike(0, products), products)
        y = op.ReduceSum(products, [axis + 1], keepdims=0)
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
    dtype = x.known_dtype
    out = _output_lengths(sizes, output_size, scale_list)
    if sizes is not None and out is not None and (dtype is types.DOUBLE or mode.endswith("_aa")):
        # exact: double (Resize has no double kernel) and antialiasing (Resize's filter differs
        # from torch's in the last float32 digits, and has no align_corners). float32 antialiasing
        # sums its taps in float64 and rounds once: the taps of bicubic's negative lobes cancel,
        # and torch's float32 sums are then off by 1e-6 relative where ours are exact
        wide = dtype is types.DOUBLE or (dtype is types.FLOAT and mode.endswith("_aa"))
        compute = types.DOUBLE if wide else types.FLOAT
        y = _interpolate_exactly(cast_to(x, compute), sizes, out, scale_list, mode, align_corners)
        return _cast_back(y, dtype)
    native = dtype in (types.FLOAT, types.FLOAT16) or (dtype is types.UINT8 and mode.startswith("nearest"))
    y = cast_to(x, dtype if native else types.FLOAT)
    attrs = _attributes(mode, align_corners)
    axes = list(range(x.known_rank - n, x.known_rank))
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
