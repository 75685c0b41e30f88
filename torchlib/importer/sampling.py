"""GridSample, Col2Im and RoiAlign."""

from __future__ import annotations

import itertools
from typing import Any

import torch
import torch.nn.functional as F

from torchlib.importer._common import impl, ints

_MODES = {"linear": "bilinear", "bilinear": "bilinear", "nearest": "nearest", "cubic": "bicubic",
          "bicubic": "bicubic"}  # fmt: skip


def grid_sample(x: torch.Tensor, grid: torch.Tensor, align_corners: int, mode: str, padding_mode: str) -> torch.Tensor:
    """torch's grid_sample: the same grid convention (x, y[, z] in [-1, 1], last dim of grid),
    the same modes (bicubic on 4-D input only), padding modes and align_corners."""
    if mode not in _MODES:
        raise ValueError(f"GridSample mode {mode!r} is not one of {sorted(_MODES)}")
    if _MODES[mode] == "bicubic" and x.dim() != 4:
        raise ValueError(f"GridSample cubic mode on a {x.dim()}-D input: torch interpolates cubically in 2-D only")
    return F.grid_sample(x, grid.to(x.dtype), mode=_MODES[mode], padding_mode=padding_mode,
                         align_corners=bool(align_corners))


@impl("GridSample", since=16, until=20, align_corners=0, mode="bilinear", padding_mode="zeros")
def grid_sample_16(x: torch.Tensor, grid: torch.Tensor, *, align_corners: int, mode: str,
                   padding_mode: str) -> torch.Tensor:
    return grid_sample(x, grid, align_corners, mode, padding_mode)


@impl("GridSample", since=20, align_corners=0, mode="linear", padding_mode="zeros")
def grid_sample_20(x: torch.Tensor, grid: torch.Tensor, *, align_corners: int, mode: str,
                   padding_mode: str) -> torch.Tensor:
    return grid_sample(x, grid, align_corners, mode, padding_mode)


@impl("Col2Im", since=18, static=(1, 2), dilations=None, pads=None, strides=None)
def col2im(x: torch.Tensor, image_shape: torch.Tensor, block_shape: torch.Tensor, *,
           dilations: tuple[int, ...] | None, pads: tuple[int, ...] | None,
           strides: tuple[int, ...] | None) -> torch.Tensor:
    """x [N, C * prod(block), L] -> [N, C, *image]: each column's block values summed into the
    image at its place (any number of spatial dims; torch's fold is 2-D only)."""
    image, block = ints(image_shape), ints(block_shape)
    rank = len(image)
    dil = list(dilations or [1] * rank)
    stride = list(strides or [1] * rank)
    pad = list(pads or [0] * (2 * rank))
    padded = [image[i] + pad[i] + pad[i + rank] for i in range(rank)]
    counts = [(padded[i] - dil[i] * (block[i] - 1) - 1) // stride[i] + 1 for i in range(rank)]
    n = x.shape[0]
    cols = x.reshape(n, -1, *block, *counts)
    out = x.new_zeros(n, cols.shape[1], *padded)
    whole = (slice(None), slice(None))
    for offset in itertools.product(*[range(b) for b in block]):
        where = tuple(slice(offset[i] * dil[i], offset[i] * dil[i] + stride[i] * (counts[i] - 1) + 1, stride[i])
                      for i in range(rank))  # fmt: skip
        out[whole + where] += cols[whole + tuple(offset)]
    crop = tuple(slice(pad[i], pad[i] + image[i]) for i in range(rank))
    return out[whole + crop]


def _axis_samples(start: torch.Tensor, size: torch.Tensor, bins: int, grid: torch.Tensor, most: Any,
                  limit: int) -> tuple[torch.Tensor, ...]:
    """RoiAlign's sample points along one axis for every ROI ([R, bins * most]: `grid[r]` per bin,
    padded to `most`) as (low index, high index, low weight, high weight, inside, real): onnx's
    reference bilinear rule per axis; `real` is False on the padding."""
    step = (size / bins)[:, None, None]
    g = torch.arange(most, dtype=torch.float64)
    pos = start[:, None, None] + torch.arange(bins, dtype=torch.float64)[None, :, None] * step \
        + (g + 0.5)[None, None, :] * step / grid.to(torch.float64)[:, None, None]  # fmt: skip
    real = (g[None, None, :] < grid[:, None, None]).expand(pos.shape).reshape(pos.shape[0], -1)
    pos = pos.reshape(pos.shape[0], -1)
    inside = (pos >= -1.0) & (pos <= limit)
    pos = pos.clamp(min=0)
    low = pos.to(torch.int64)
    at_edge = low >= limit - 1
    low = torch.where(at_edge, torch.full_like(low, limit - 1), low)
    high = torch.where(at_edge, low, low + 1)
    frac = torch.where(at_edge, torch.zeros_like(pos), pos - low.to(torch.float64))
    return low, high, 1.0 - frac, frac, inside, real


def _grid(size: torch.Tensor, bins: int, sampling_ratio: int) -> tuple[torch.Tensor, Any]:
    """Samples per bin for every ROI (sampling_ratio, or ceil(roi size / bins)), and their most
    (a run-time value under torch.export when adaptive)."""
    if sampling_ratio > 0:
        return torch.full(size.shape, sampling_ratio, dtype=torch.int64), sampling_ratio
    grid = torch.ceil(size / bins).to(torch.int64)
    most = torch.cat([grid, torch.ones(1, dtype=torch.int64)]).max().item()  # at least 1, zero ROIs included
    torch._check(most >= 1)
    return grid, most


def roi_align(x: torch.Tensor, rois: torch.Tensor, batch_indices: torch.Tensor, half_pixel: bool, mode: str,
              output_height: int, output_width: int, sampling_ratio: int, spatial_scale: float) -> torch.Tensor:
    """onnx's reference RoiAlign, every ROI at once: per ROI, a grid of bilinear samples per output
    bin (sampling_ratio per axis, or ceil(roi size / bins), padded to the largest grid), averaged,
    or for "max" the largest of the samples' four weighted corner values (the reference's and
    onnxruntime's rule). No Python per ROI: torch.export keeps the number of ROIs dynamic."""
    height, width = x.shape[2], x.shape[3]
    data = x.to(torch.float64)
    x0, y0, x1, y1 = (rois.to(torch.float64) * spatial_scale - (0.5 if half_pixel else 0.0)).unbind(-1)
    roi_w, roi_h = x1 - x0, y1 - y0
    if not half_pixel:
        roi_w, roi_h = roi_w.clamp(min=1.0), roi_h.clamp(min=1.0)
    grid_h, most_h = _grid(roi_h, output_height, sampling_ratio)
    grid_w, most_w = _grid(roi_w, output_width, sampling_ratio)
    ylo, yhi, wylo, wyhi, yin, yreal = _axis_samples(y0, roi_h, output_height, grid_h, most_h, height)
    xlo, xhi, wxlo, wxhi, xin, xreal = _axis_samples(x0, roi_w, output_width, grid_w, most_w, width)
    real = yreal[:, :, None] & xreal[:, None, :]  # [R, Sy, Sx]: not padding
    mask = (yin[:, :, None] & xin[:, None, :] & real).to(torch.float64)
    b = batch_indices.to(torch.int64)[:, None, None]
    terms = [data[b, :, ya[:, :, None], xb[:, None, :]] * (wy[:, :, None] * wx[:, None, :] * mask)[..., None]
             for ya, wy in ((ylo, wylo), (yhi, wyhi)) for xb, wx in ((xlo, wxlo), (xhi, wxhi))]  # [R, Sy, Sx, C] each
    shape = (rois.shape[0], output_height, most_h, output_width, most_w, x.shape[1])
    if mode == "avg":
        count = (grid_h * grid_w).clamp(min=1).to(torch.float64)
        value = sum(terms).reshape(shape).sum(dim=(2, 4)) / count[:, None, None, None]  # type: ignore[union-attr]
    else:
        picked = torch.where(real[..., None], torch.stack(terms).amax(dim=0), -torch.inf)
        value = picked.reshape(shape).amax(dim=(2, 4))
        value = torch.where(torch.isinf(value), torch.zeros_like(value), value)  # a ROI with no samples
    return value.permute(0, 3, 1, 2).to(x.dtype)


_ROI_ATTRS: dict[str, Any] = dict(mode="avg", output_height=1, output_width=1, sampling_ratio=0, spatial_scale=1.0)


@impl("RoiAlign", since=10, until=16, **_ROI_ATTRS)
def roi_align_10(x: torch.Tensor, rois: torch.Tensor, batch_indices: torch.Tensor, *, mode: str,
                 output_height: int, output_width: int, sampling_ratio: int, spatial_scale: float) -> torch.Tensor:
    return roi_align(x, rois, batch_indices, False, mode, output_height, output_width, sampling_ratio, spatial_scale)


@impl("RoiAlign", since=16, coordinate_transformation_mode="half_pixel", **_ROI_ATTRS)
def roi_align_16(x: torch.Tensor, rois: torch.Tensor, batch_indices: torch.Tensor, *,
                 coordinate_transformation_mode: str, mode: str, output_height: int, output_width: int,
                 sampling_ratio: int, spatial_scale: float) -> torch.Tensor:
    return roi_align(x, rois, batch_indices, coordinate_transformation_mode == "half_pixel", mode, output_height,
                     output_width, sampling_ratio, spatial_scale)


@impl("DeformConv", since=19, dilations=None, group=1, kernel_shape=None, offset_group=1, pads=None, strides=None)
def deform_conv(x: torch.Tensor, w: torch.Tensor, offset: torch.Tensor, b: torch.Tensor | None = None,
                mask: torch.Tensor | None = None, *, dilations: tuple[int, ...] | None, group: int,
                kernel_shape: tuple[int, ...] | None, offset_group: int, pads: tuple[int, ...] | None,
                strides: tuple[int, ...] | None) -> torch.Tensor:
    """2-D deformable convolution as onnx's reference: each kernel tap reads the input bilinearly
    (zeros outside) at its place plus its offset (per offset group), times the mask, then the
    grouped convolution's weights."""
    if x.dim() != 4:
        raise ValueError(f"DeformConv on a {x.dim()}-D input: only 2-D (4-D input) is supported")
    n, ic, ih, iw = x.shape
    oc = w.shape[0]
    kh, kw = kernel_shape or w.shape[2:]
    dh, dw = dilations or (1, 1)
    sh, sw = strides or (1, 1)
    top, left = (pads or (0, 0, 0, 0))[:2]
    oh, ow = offset.shape[2:]
    taps = kh * kw
    off = offset.reshape(n, offset_group, kh, kw, 2, oh, ow).to(torch.float64)
    base_y = (torch.arange(kh, dtype=torch.float64) * dh).reshape(kh, 1, 1, 1) - top \
        + (torch.arange(oh, dtype=torch.float64) * sh).reshape(1, 1, oh, 1)  # fmt: skip
    base_x = (torch.arange(kw, dtype=torch.float64) * dw).reshape(1, kw, 1, 1) - left \
        + (torch.arange(ow, dtype=torch.float64) * sw).reshape(1, 1, 1, ow)  # fmt: skip
    py = base_y + off[:, :, :, :, 0]  # [n, G, kh, kw, oh, ow]
    px = base_x + off[:, :, :, :, 1]
    grid = torch.stack((px / (iw - 1) * 2 - 1, py / (ih - 1) * 2 - 1), dim=-1)  # (x, y) as grid_sample reads
    grid = grid.reshape(n * offset_group, taps * oh, ow, 2)
    per_group = x.to(torch.float64).reshape(n * offset_group, ic // offset_group, ih, iw)
    cols = F.grid_sample(per_group, grid, mode="bilinear", padding_mode="zeros", align_corners=True)
    cols = cols.reshape(n, offset_group, ic // offset_group, taps, oh, ow)
    if mask is not None:
        cols = cols * mask.reshape(n, offset_group, 1, taps, oh, ow).to(torch.float64)
    cols = cols.reshape(n, group, ic // group, taps, oh, ow)
    weights = w.to(torch.float64).reshape(group, oc // group, ic // group, taps)
    y = torch.einsum("ngckhw,gock->ngohw", cols, weights).reshape(n, oc, oh, ow)
    if b is not None:
        y = y + b.to(torch.float64).reshape(1, -1, 1, 1)
    return y.to(x.dtype)
