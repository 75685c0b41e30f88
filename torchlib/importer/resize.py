"""Resize and Upsample: each resized axis is a (output x input) weight matrix built the way
onnx's reference computes its coefficients (coordinate transformation, nearest rounding, linear,
cubic with its coefficient and exclude_outside, antialias, tf_crop_and_resize extrapolation),
applied one axis after another."""

from __future__ import annotations

import math

import numpy as np
import torch

from torchlib.importer._common import impl, ints


def _source(x: int, n_in: int, n_out: int, scale: float, mode: str, roi: tuple[float, float]) -> float:
    width = scale * n_in
    if mode == "align_corners":
        return 0.0 if width == 1 else x * (n_in - 1) / (width - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_crop_and_resize":
        if width == 1:
            return (roi[1] - roi[0]) * (n_in - 1) / 2 + roi[0] * (n_in - 1)
        return x * (roi[1] - roi[0]) * (n_in - 1) / (width - 1) + roi[0] * (n_in - 1)
    if mode == "pytorch_half_pixel":
        return -0.5 if width == 1 else (x + 0.5) / scale - 0.5
    if mode == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / width)
        return offset + (x + 0.5) / scale - 0.5
    return (x + 0.5) / scale - 0.5  # half_pixel


def _coeffs(ratio: float, scale: float, interp: str, nearest: str, cubic_a: float, antialias: int) -> list[float]:
    if interp == "nearest":
        if ratio == 1:
            return [0.0, 1.0]
        pick = {"round_prefer_floor": ratio > 0.5, "round_prefer_ceil": ratio >= 0.5, "floor": False,
                "ceil": True}[nearest]
        return [0.0, 1.0] if pick else [1.0, 0.0]
    if interp == "linear":
        if antialias and scale < 1:
            start = math.floor(-1 / scale) + 1
            c = [min(max(1 - abs((i - ratio) * scale), 0.0), 1.0) for i in range(start, start + 2 - 2 * start)]
            return [v / sum(c) for v in c]
        return [1 - ratio, ratio]
    a = cubic_a
    if antialias and scale < 1:
        def k(x: float) -> float:
            x = abs(x)
            if x <= 1:
                return (a + 2) * x**3 - (a + 3) * x**2 + 1
            return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a if x < 2 else 0.0

        start = math.floor(-2 / scale) + 1
        c = [k(scale * (i - ratio)) for i in range(start, 2 - start)]
        return [v / sum(c) for v in c]
    r = ratio
    return [((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * (1 - r) - (a + 3)) * (1 - r) * (1 - r) + 1,
            ((a * ((1 - r) + 1) - 5 * a) * ((1 - r) + 1) + 8 * a) * ((1 - r) + 1) - 4 * a]


def axis_weights(n_in: int, n_out: int, scale: float, mode: str, interp: str, nearest: str, cubic_a: float,
                 exclude_outside: int, antialias: int, roi: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """(weights [n_out, n_in], outside [n_out] bool: tf_crop_and_resize points outside the input)."""
    w = np.zeros((n_out, n_in), np.float64)
    outside = np.zeros(n_out, bool)
    for x in range(n_out):
        src = _source(x, n_in, n_out, scale, mode, roi)
        if mode == "tf_crop_and_resize" and (src < 0 or src > n_in - 1):
            outside[x] = True
            continue
        base = math.floor(src)
        ratio = 1.0 if float(src).is_integer() else src - base
        c = _coeffs(ratio, scale, interp, nearest, cubic_a, antialias)
        n = len(c)
        candidates = sorted(range(base - n - 1, base + n + 2), key=lambda i: (abs(src - i), i))[:n]
        idx = sorted(candidates)
        if exclude_outside:
            c = [v if 0 <= i < n_in else 0.0 for v, i in zip(c, idx)]
            total = sum(c)
            c = [v / total for v in c]
        for v, i in zip(c, idx):
            w[x, min(max(i, 0), n_in - 1)] += v
    return w, outside


def resize_nd(x: torch.Tensor, roi: list[float], scales: list[float], sizes: list[int], axes: list[int] | None,
              mode: str, coordinate_transformation_mode: str, nearest_mode: str, cubic_coeff_a: float,
              exclude_outside: int, extrapolation_value: float, antialias: int,
              keep_aspect_ratio_policy: str) -> torch.Tensor:
    rank = x.dim()
    axes_l = [a + rank if a < 0 else a for a in axes] if axes else list(range(rank))
    shape = list(x.shape)
    if sizes:
        ratios = [sizes[i] / shape[a] for i, a in enumerate(axes_l)]
        if keep_aspect_ratio_policy != "stretch":
            r = min(ratios) if keep_aspect_ratio_policy == "not_larger" else max(ratios)
            ratios = [r] * len(axes_l)
            out = [int(r * shape[a] + 0.5) for a in axes_l]
        else:
            out = list(sizes)
        scale_l = ratios
    else:
        scale_l = list(scales)
        out = [int(math.floor(shape[a] * s)) for a, s in zip(axes_l, scale_l)]
    n = len(axes_l)
    rois = [(roi[i], roi[i + n]) if roi else (0.0, 1.0) for i in range(n)]
    y = x if x.is_floating_point() else x.to(torch.float64)
    mask = None
    for i, a in enumerate(axes_l):
        w, outside = axis_weights(shape[a], out[i], scale_l[i], coordinate_transformation_mode, mode, nearest_mode,
                                  cubic_coeff_a, exclude_outside, antialias, rois[i])
        weights = torch.from_numpy(w).to(torch.float64 if y.dtype == torch.float64 else torch.float32)
        y = torch.tensordot(y.to(weights.dtype), weights, dims=([a], [1])).movedim(-1, a)
        if outside.any():
            m = torch.from_numpy(outside).reshape([-1 if d == a else 1 for d in range(rank)])
            mask = m if mask is None else (mask | m)
    if mask is not None:
        y = torch.where(mask, torch.tensor(extrapolation_value, dtype=y.dtype), y)
    if not x.is_floating_point():
        return torch.round(y).clamp(*_range(x.dtype)).to(x.dtype)
    return y.to(x.dtype)


def _range(dtype: torch.dtype) -> tuple[int, int]:
    info = torch.iinfo(dtype)
    return info.min, info.max


def _floats(t: torch.Tensor | tuple[float, ...] | None) -> list[float]:
    """roi / scales: a constant's floats (given at import), or a run-time tensor's."""
    if isinstance(t, tuple):
        return list(t)
    return [float(v) for v in t.reshape(-1).tolist()] if t is not None and t.numel() else []


@impl("Resize", since=11, static=(3,), floats=(1, 2), antialias=0, axes=None, coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75,
      exclude_outside=0, extrapolation_value=0.0, keep_aspect_ratio_policy="stretch", mode="nearest",
      nearest_mode="round_prefer_floor")
def resize(x: torch.Tensor, roi: torch.Tensor | tuple[float, ...] | None = None,
           scales: torch.Tensor | tuple[float, ...] | None = None, sizes: torch.Tensor | tuple[int, ...] | None = None, *, antialias: int, axes: tuple[int, ...] | None,
           coordinate_transformation_mode: str, cubic_coeff_a: float, exclude_outside: int,
           extrapolation_value: float, keep_aspect_ratio_policy: str, mode: str, nearest_mode: str) -> torch.Tensor:
    return resize_nd(x, _floats(roi), _floats(scales), ints(sizes),
                     list(axes) if axes else None, mode, coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
                     exclude_outside, extrapolation_value, antialias, keep_aspect_ratio_policy)


@impl("Resize", since=10, until=11, floats=(1,), mode="nearest")
def resize_10(x: torch.Tensor, scales: torch.Tensor | tuple[float, ...], *, mode: str) -> torch.Tensor:
    return resize_nd(x, [], _floats(scales), [], None, mode, "asymmetric", "floor", -0.75, 0, 0.0, 0, "stretch")


@impl("Upsample", since=9, until=10, floats=(1,), mode="nearest")
def upsample(x: torch.Tensor, scales: torch.Tensor | tuple[float, ...], *, mode: str) -> torch.Tensor:
    return resize_nd(x, [], _floats(scales), [], None, mode, "asymmetric", "floor", -0.75, 0, 0.0, 0, "stretch")


@impl("Upsample", since=7, until=9, mode="nearest", scales=())
def upsample_7(x: torch.Tensor, *, mode: str, scales: tuple[float, ...]) -> torch.Tensor:
    return resize_nd(x, [], list(scales), [], None, mode, "asymmetric", "floor", -0.75, 0, 0.0, 0, "stretch")
