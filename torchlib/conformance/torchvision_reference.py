"""torchvision's CPU kernels for its detection ops, ported to torch, as the reference the
conformance harness checks torchlib/ops/torchvision.py against (torchvision's compiled ops do
not load beside torch's CPU wheel, and a user may not have torchvision at all).

Each function follows its kernel in torchvision/csrc/ops/cpu line by line, in the input's
dtype, with Python loops: clear rather than fast, for the small samples of the tests.
`register()` defines the `torchvision::` operators with these as their CPU implementations
when torchvision's own are not loaded, so that models calling torchvision.ops can be traced
(and torch.export records the same ops it records with torchvision installed).
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import torch

SCHEMAS = {
    "nms": "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "roi_align": "roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width, "
                 "int sampling_ratio, bool aligned) -> Tensor",
    "roi_pool": "roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, SymInt pooled_width) "
                "-> (Tensor, Tensor)",
    "ps_roi_align": "ps_roi_align(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                    "SymInt pooled_width, int sampling_ratio) -> (Tensor, Tensor)",
    "ps_roi_pool": "ps_roi_pool(Tensor input, Tensor rois, float spatial_scale, SymInt pooled_height, "
                   "SymInt pooled_width) -> (Tensor, Tensor)",
    "deform_conv2d": "deform_conv2d(Tensor input, Tensor weight, Tensor offset, Tensor mask, Tensor bias, "
                     "SymInt stride_h, SymInt stride_w, SymInt pad_h, SymInt pad_w, SymInt dilation_h, "
                     "SymInt dilation_w, SymInt groups, SymInt offset_groups, bool use_mask) -> Tensor",
}


def nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    # nms_kernel.cpp's checks
    torch._check(dets.dim() == 2, lambda: f"boxes should be a 2d tensor, got {dets.dim()}D")
    torch._check(dets.size(1) == 4, lambda: f"boxes should have 4 elements in dimension 1, got {dets.size(1)}")
    torch._check(scores.dim() == 1, lambda: f"scores should be a 1d tensor, got {scores.dim()}D")
    torch._check(dets.size(0) == scores.size(0), lambda: "boxes and scores should have same number of elements in "
                 f"dimension 0, got {dets.size(0)} and {scores.size(0)}")
    if dets.numel() == 0:
        return torch.empty(0, dtype=torch.long)
    x1, y1, x2, y2 = dets.unbind(1)
    areas = (x2 - x1) * (y2 - y1)
    order = scores.sort(dim=0, descending=True, stable=True).indices
    suppressed = torch.zeros(len(order), dtype=torch.bool)
    keep = []
    zero = torch.zeros((), dtype=dets.dtype)
    for a, i in enumerate(order.tolist()):
        if suppressed[i]:
            continue
        keep.append(i)
        later = order[a + 1:]  # each later box's IoU with box i, as the kernel computes it one by one
        w = torch.maximum(zero, torch.minimum(x2[i], x2[later]) - torch.maximum(x1[i], x1[later]))
        h = torch.maximum(zero, torch.minimum(y2[i], y2[later]) - torch.maximum(y1[i], y1[later]))
        inter = w * h
        overlap = inter / (areas[i] + areas[later] - inter)
        suppressed[later] |= overlap.double() > iou_threshold  # the kernel compares in double
    return torch.tensor(keep, dtype=torch.long)


def _bilinear(plane: torch.Tensor, y: float, x: float, height: int, width: int) -> torch.Tensor:
    """roi_align_common.h's bilinear tap (the weights in the input's dtype), of every plane of
    `plane` [..., height, width] at once (each plane's arithmetic is the kernel's)."""
    dtype = plane.dtype
    if not (-1.0 <= y <= height and -1.0 <= x <= width):
        return torch.zeros(plane.shape[:-2], dtype=dtype)
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= height - 1:
        y_high = y_low = height - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= width - 1:
        x_high = x_low = width - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly = torch.tensor(y, dtype=dtype) - y_low
    lx = torch.tensor(x, dtype=dtype) - x_low
    hy, hx = 1 - ly, 1 - lx
    return (hy * hx * plane[..., y_low, x_low] + hy * lx * plane[..., y_low, x_high]
            + ly * hx * plane[..., y_high, x_low] + ly * lx * plane[..., y_high, x_high])


def _align_bins(roi: torch.Tensor, spatial_scale: float, pooled_height: int, pooled_width: int,
                sampling_ratio: int, aligned: bool, clamp: bool) -> tuple:
    dtype = roi.dtype
    offset = 0.5 if aligned else 0.0
    scale = torch.tensor(spatial_scale, dtype=dtype)
    start_w, start_h, end_w, end_h = (roi[k] * scale - offset for k in (1, 2, 3, 4))
    roi_w, roi_h = end_w - start_w, end_h - start_h
    if clamp:
        roi_w, roi_h = torch.clamp(roi_w, min=1.0), torch.clamp(roi_h, min=1.0)
    bin_h, bin_w = roi_h / pooled_height, roi_w / pooled_width
    grid_h = sampling_ratio if sampling_ratio > 0 else int(math.ceil((roi_h / pooled_height).item()))
    grid_w = sampling_ratio if sampling_ratio > 0 else int(math.ceil((roi_w / pooled_width).item()))
    return start_h, start_w, bin_h, bin_w, grid_h, grid_w


def _sample_bin(plane: torch.Tensor, start_h, start_w, bin_h, bin_w, ph: int, pw: int, grid_h: int, grid_w: int):
    height, width = plane.shape[-2:]
    total = torch.zeros(plane.shape[:-2], dtype=plane.dtype)
    for iy in range(grid_h):
        y = start_h + ph * bin_h + (iy + 0.5) * bin_h / grid_h
        for ix in range(grid_w):
            x = start_w + pw * bin_w + (ix + 0.5) * bin_w / grid_w
            total = total + _bilinear(plane, y.item(), x.item(), height, width)
    return total


def roi_align(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int, pooled_width: int,
              sampling_ratio: int, aligned: bool) -> torch.Tensor:
    k, channels = rois.shape[0], input.shape[1]
    out = torch.zeros(k, channels, pooled_height, pooled_width, dtype=input.dtype)
    for n in range(k):
        b = int(rois[n, 0].item())
        start_h, start_w, bin_h, bin_w, grid_h, grid_w = _align_bins(
            rois[n], spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, clamp=not aligned)
        count = max(grid_h * grid_w, 1)
        for ph in range(pooled_height):  # every channel at once
            for pw in range(pooled_width):
                total = _sample_bin(input[b], start_h, start_w, bin_h, bin_w, ph, pw, grid_h, grid_w)
                out[n, :, ph, pw] = total / count
    return out


def _grid_taps(plane_rows: torch.Tensor, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """`_bilinear` at every roi's sample row y [K, PH] and column x [K, PW] at once:
    [K, PH, PW, C], element by element the same arithmetic."""
    height, width = plane_rows.shape[-2:]
    dtype = plane_rows.dtype
    valid = ((y >= -1.0) & (y <= height))[:, :, None] & ((x >= -1.0) & (x <= width))[:, None, :]

    def axis(v: torch.Tensor, size: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        v = v.clamp(min=0.0)
        low = v.long()
        edge = low >= size - 1
        low = torch.where(edge, size - 1, low)
        high = torch.where(edge, low, low + 1)
        v = torch.where(edge, low.to(dtype), v)
        return low, high, v - low

    y_low, y_high, ly = axis(y, height)
    x_low, x_high, lx = axis(x, width)
    hy, hx = 1 - ly, 1 - lx
    n = torch.arange(y.shape[0])[:, None, None]

    def at(r: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return plane_rows[n, :, r[:, :, None], c[:, None, :]]  # [K, PH, PW, C]

    hy, ly, hx, lx = hy[:, :, None, None], ly[:, :, None, None], hx[:, None, :, None], lx[:, None, :, None]
    tap = (hy * hx * at(y_low, x_low) + hy * lx * at(y_low, x_high)
           + ly * hx * at(y_high, x_low) + ly * lx * at(y_high, x_high))
    return torch.where(valid[..., None], tap, torch.zeros((), dtype=dtype))


def _roi_align_grid(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int,
                    pooled_width: int, sampling_ratio: int, aligned: bool) -> torch.Tensor:
    """`roi_align` for a fixed sampling grid (sampling_ratio > 0), every roi, bin and channel
    at once: the same arithmetic element by element (the samples summed in the kernel's
    order), fast enough for a detection model's eager run."""
    start_h, start_w, bin_h, bin_w, grid_h, grid_w = _align_bins(
        rois.T, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned, clamp=not aligned)
    planes = input[rois[:, 0].long()]
    ph = torch.arange(pooled_height, dtype=rois.dtype)[None, :]
    pw = torch.arange(pooled_width, dtype=rois.dtype)[None, :]
    total = torch.zeros(rois.shape[0], pooled_height, pooled_width, input.shape[1], dtype=input.dtype)
    for iy in range(grid_h):
        y = start_h[:, None] + ph * bin_h[:, None] + (iy + 0.5) * bin_h[:, None] / grid_h
        for ix in range(grid_w):
            x = start_w[:, None] + pw * bin_w[:, None] + (ix + 0.5) * bin_w[:, None] / grid_w
            total = total + _grid_taps(planes, y, x)
    return (total / max(grid_h * grid_w, 1)).permute(0, 3, 1, 2).contiguous()


def _roi_align_kernel(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int,
                      pooled_width: int, sampling_ratio: int, aligned: bool) -> torch.Tensor:
    """The CPU kernel `register()` installs: `_roi_align_grid` where the grid is fixed."""
    if sampling_ratio > 0:
        return _roi_align_grid(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)
    return roi_align(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned)


def ps_roi_align(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int,
                 pooled_width: int, sampling_ratio: int) -> tuple[torch.Tensor, torch.Tensor]:
    k, channels = rois.shape[0], input.shape[1]
    channels_out = channels // (pooled_height * pooled_width)
    out = torch.zeros(k, channels_out, pooled_height, pooled_width, dtype=input.dtype)
    mapping = torch.zeros(k, channels_out, pooled_height, pooled_width, dtype=torch.int32)
    for n in range(k):
        b = int(rois[n, 0].item())
        start_h, start_w, bin_h, bin_w, grid_h, grid_w = _align_bins(
            rois[n], spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned=True, clamp=False)
        count = grid_h * grid_w
        c_in = 0
        for c_out in range(channels_out):
            for ph in range(pooled_height):
                for pw in range(pooled_width):
                    total = _sample_bin(input[b, c_in], start_h, start_w, bin_h, bin_w, ph, pw, grid_h, grid_w)
                    out[n, c_out, ph, pw] = total / count
                    mapping[n, c_out, ph, pw] = c_in
                    c_in += 1
    return out, mapping


def _int_bins(roi: torch.Tensor, spatial_scale: float, pooled_height: int, pooled_width: int, plus_one: int):
    scale = torch.tensor(spatial_scale, dtype=roi.dtype)
    start_w, start_h, end_w, end_h = (int(torch.round(roi[k] * scale).item()) for k in (1, 2, 3, 4))
    roi_w = max(end_w - start_w + plus_one, 1)
    roi_h = max(end_h - start_h + plus_one, 1)
    bin_h = torch.tensor(roi_h, dtype=roi.dtype) / pooled_height
    bin_w = torch.tensor(roi_w, dtype=roi.dtype) / pooled_width
    return start_h, start_w, bin_h, bin_w


def roi_pool(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int,
             pooled_width: int) -> tuple[torch.Tensor, torch.Tensor]:
    k, channels, height, width = rois.shape[0], *input.shape[1:]
    out = torch.zeros(k, channels, pooled_height, pooled_width, dtype=input.dtype)
    argmax = torch.zeros(k, channels, pooled_height, pooled_width, dtype=torch.int32)
    lowest = torch.tensor(-torch.finfo(torch.float32).max, dtype=input.dtype)  # -FLT_MAX, for double too
    for n in range(k):
        b = int(rois[n, 0].item())
        start_h, start_w, bin_h, bin_w = _int_bins(rois[n], spatial_scale, pooled_height, pooled_width, 1)
        for ph in range(pooled_height):
            for pw in range(pooled_width):
                hs = min(max(int(math.floor((ph * bin_h).item())) + start_h, 0), height)
                he = min(max(int(math.ceil(((ph + 1) * bin_h).item())) + start_h, 0), height)
                ws = min(max(int(math.floor((pw * bin_w).item())) + start_w, 0), width)
                we = min(max(int(math.ceil(((pw + 1) * bin_w).item())) + start_w, 0), width)
                empty = he <= hs or we <= ws
                for c in range(channels):
                    best, where = (torch.zeros((), dtype=input.dtype) if empty else lowest), -1
                    for h in range(hs, he):
                        for w in range(ws, we):
                            if input[b, c, h, w] > best:
                                best, where = input[b, c, h, w], h * width + w
                    out[n, c, ph, pw], argmax[n, c, ph, pw] = best, where
    return out, argmax


def ps_roi_pool(input: torch.Tensor, rois: torch.Tensor, spatial_scale: float, pooled_height: int,
                pooled_width: int) -> tuple[torch.Tensor, torch.Tensor]:
    k, channels, height, width = rois.shape[0], *input.shape[1:]
    channels_out = channels // (pooled_height * pooled_width)
    out = torch.zeros(k, channels_out, pooled_height, pooled_width, dtype=input.dtype)
    mapping = torch.zeros(k, channels_out, pooled_height, pooled_width, dtype=torch.int32)
    for n in range(k):
        b = int(rois[n, 0].item())
        start_h, start_w, bin_h, bin_w = _int_bins(rois[n], spatial_scale, pooled_height, pooled_width, 0)
        c_in = 0
        for c_out in range(channels_out):
            for ph in range(pooled_height):
                for pw in range(pooled_width):
                    # the kernel clips to height - 1 and width - 1 (so the last row and column are never read)
                    hs = min(max(int(math.floor((ph * bin_h).item())) + start_h, 0), height - 1)
                    he = min(max(int(math.ceil(((ph + 1) * bin_h).item())) + start_h, 0), height - 1)
                    ws = min(max(int(math.floor((pw * bin_w).item())) + start_w, 0), width - 1)
                    we = min(max(int(math.ceil(((pw + 1) * bin_w).item())) + start_w, 0), width - 1)
                    if he <= hs or we <= ws:
                        out[n, c_out, ph, pw] = 0
                    else:
                        total = input[b, c_in, hs:he, ws:we].sum()
                        out[n, c_out, ph, pw] = total / ((he - hs) * (we - ws))
                    mapping[n, c_out, ph, pw] = c_in
                    c_in += 1
    return out, mapping


def deform_conv2d(input: torch.Tensor, weight: torch.Tensor, offset: torch.Tensor, mask: torch.Tensor,
                  bias: torch.Tensor, stride_h: int, stride_w: int, pad_h: int, pad_w: int, dilation_h: int,
                  dilation_w: int, groups: int, offset_groups: int, use_mask: bool) -> torch.Tensor:
    """deform_conv2d_kernel.cpp: bilinear samples of the input at each kernel tap moved by its
    offset (times its mask), then a grouped convolution of those columns."""
    batch, channels, height, width = input.shape
    out_channels, _, kh, kw = weight.shape
    out_h = (height + 2 * pad_h - (dilation_h * (kh - 1) + 1)) // stride_h + 1
    out_w = (width + 2 * pad_w - (dilation_w * (kw - 1) + 1)) // stride_w + 1
    # deform_conv2d_forward_kernel's checks
    torch._check(offset.size(0) == batch, lambda: "invalid batch size of offset")
    torch._check(offset.size(1) == offset_groups * 2 * kh * kw, lambda: f"offset.shape[1] is not valid: got: {offset.size(1)}")
    torch._check(not use_mask or mask.size(1) == offset_groups * kh * kw, lambda: f"mask.shape[1] is not valid: got: {mask.size(1)}")
    torch._check(channels % offset_groups == 0, lambda: "input.shape[1] is not divisible by offset_groups")
    torch._check(offset.shape[2:] == (out_h, out_w), lambda: "offset output dims do not match computed output dims")
    torch._check(not use_mask or mask.shape[2:] == (out_h, out_w), lambda: "mask output dims do not match computed output dims")
    torch._check(out_h > 0 and out_w > 0, lambda: f"Calculated output size too small - out_h: {out_h} out_w: {out_w}")
    per_offset_group = channels // offset_groups
    columns = torch.zeros(batch, channels, kh, kw, out_h, out_w, dtype=input.dtype)
    for b in range(batch):
        for c in range(channels):
            g = c // per_offset_group
            for i in range(kh):
                for j in range(kw):
                    tap = i * kw + j
                    for oh in range(out_h):
                        for ow in range(out_w):
                            dy = offset[b, 2 * (g * kh * kw + tap), oh, ow]
                            dx = offset[b, 2 * (g * kh * kw + tap) + 1, oh, ow]
                            m = mask[b, g * kh * kw + tap, oh, ow] if use_mask else 1
                            y = oh * stride_h - pad_h + i * dilation_h + dy
                            x = ow * stride_w - pad_w + j * dilation_w + dx
                            columns[b, c, i, j, oh, ow] = m * _deform_tap(input[b, c], y, x)
    cols = columns.reshape(batch, groups, channels // groups * kh * kw, out_h * out_w)
    w = weight.reshape(groups, out_channels // groups, -1)
    out = torch.einsum("gok,bgkp->bgop", w, cols).reshape(batch, out_channels, out_h, out_w)
    return out + bias.reshape(1, -1, 1, 1)


def _deform_tap(plane: torch.Tensor, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """deform_conv2d_kernel.cpp's bilinear_interpolate: taps outside the plane read 0."""
    height, width = plane.shape
    if not (-1 < y.item() < height and -1 < x.item() < width):
        return torch.zeros((), dtype=plane.dtype)
    y_low, x_low = math.floor(y.item()), math.floor(x.item())
    y_high, x_high = y_low + 1, x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1 - ly, 1 - lx

    def at(r: int, c: int) -> torch.Tensor:
        return plane[r, c] if 0 <= r < height and 0 <= c < width else torch.zeros((), dtype=plane.dtype)

    return hy * hx * at(y_low, x_low) + hy * lx * at(y_low, x_high) + ly * hx * at(y_high, x_low) + ly * lx * at(y_high, x_high)


_LIBRARY: torch.library.Library | None = None
_ATTACHED = False


def register() -> bool:
    """Make `torch.ops.torchvision.*` (and, when the torchvision package is installed, its
    Python API: torchvision.ops, the detection models) usable with these kernels where
    torchvision's compiled ops do not load (its wheels on PyPI are CUDA builds, which fail
    beside torch's CPU wheel): `define()`, then import torchvision and `attach()`. Returns
    whether it defined them (False when torchvision's own ops are loaded, or already done).

    `import torchlib` does the same by itself when torchvision is imported
    (torchlib/torchvision_stand_ins.py); this is for a caller that wants it at once."""
    defined = define()
    if defined:
        try:
            import torchvision.extension  # noqa: F401  (its own registrations, then attach())
        except ImportError:
            pass
        attach()
    return defined


def define(folders: list[str] | None = None) -> bool:
    """Define the `torchvision::` operators with these kernels as their CPU implementations,
    unless they exist or torchvision's own compiled ops load beside this torch (then those are
    loaded). `folders`: torchvision's package folders (default: found by import machinery).
    Returns whether it defined them."""
    global _LIBRARY
    if _LIBRARY is not None or hasattr(torch.ops.torchvision, "nms") or _own_ops_load(folders):
        return False
    library = torch.library.Library("torchvision", "DEF")
    for name, schema in SCHEMAS.items():
        library.define(schema)
        library.impl(name, _roi_align_kernel if name == "roi_align" else globals()[name], "CPU")
    # torchvision's Python registers a shape function for qnms too; defined, not implemented
    library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    _LIBRARY = library
    return True


def attach() -> None:
    """After `define()` and torchvision's import (if it is installed): tell torchvision its ops
    are there, and add shape functions for those it registered none for. Once; nothing when
    the stand-ins are not defined."""
    global _ATTACHED
    if _LIBRARY is None or _ATTACHED:
        return
    extension = sys.modules.get("torchvision.extension")
    if extension is not None:
        original = vars(extension)["_has_ops"]
        vars(extension)["_has_ops"] = _has_ops  # its Python wrappers check this first
        for module in list(sys.modules.values()):  # and modules that imported it by name (ops.roi_align,
            if getattr(module, "_has_ops", None) is original and module.__name__.startswith("torchvision."):
                vars(module)["_has_ops"] = _has_ops  # which would otherwise run a torch.compile'd Python version)
    _register_fakes()
    _ATTACHED = True


def _has_ops() -> bool:
    return True


def _own_ops_load(folders: list[str] | None = None) -> bool:
    """Whether torchvision's compiled ops load beside the installed torch, loading them if so:
    a torchvision built for it (the CUDA builds of both, as tools/compat.py installs for torch
    releases other than the pinned CPU one). Defining the stand-ins first would make torchvision's
    own registration abort the process."""
    if folders is None:
        spec = importlib.util.find_spec("torchvision")
        folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        for library in sorted(Path(folder).glob("_C*.so")):
            try:
                torch.ops.load_library(str(library))
            except OSError:  # built for another torch (undefined symbols)
                return False
    return hasattr(torch.ops.torchvision, "nms")


def _fake(name: str):
    """torch.library.register_fake for `torchvision::name`, unless torchvision registered one."""
    def decorate(fn):
        try:
            torch.library.register_fake(f"torchvision::{name}")(fn)
        except RuntimeError as e:  # torchvision's own (nms, qnms) came first
            if "already has" not in str(e):
                raise
        return fn
    return decorate


def _register_fakes() -> None:
    @_fake("nms")
    def _(dets, scores, iou_threshold):
        count = torch.library.get_ctx().new_dynamic_size()
        return dets.new_empty(count, dtype=torch.long)

    @_fake("roi_align")
    def _(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
        return input.new_empty(rois.shape[0], input.shape[1], pooled_height, pooled_width)

    def pooled(input, rois, pooled_height, pooled_width, channels):
        shape = (rois.shape[0], channels, pooled_height, pooled_width)
        return input.new_empty(shape), input.new_empty(shape, dtype=torch.int32)

    @_fake("roi_pool")
    def _(input, rois, spatial_scale, pooled_height, pooled_width):
        return pooled(input, rois, pooled_height, pooled_width, input.shape[1])

    @_fake("ps_roi_align")
    def _(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio):
        return pooled(input, rois, pooled_height, pooled_width, input.shape[1] // (pooled_height * pooled_width))

    @_fake("ps_roi_pool")
    def _(input, rois, spatial_scale, pooled_height, pooled_width):
        return pooled(input, rois, pooled_height, pooled_width, input.shape[1] // (pooled_height * pooled_width))

    @_fake("deform_conv2d")
    def _(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups,
          offset_groups, use_mask):
        out_h = (input.shape[2] + 2 * pad_h - (dilation_h * (weight.shape[2] - 1) + 1)) // stride_h + 1
        out_w = (input.shape[3] + 2 * pad_w - (dilation_w * (weight.shape[3] - 1) + 1)) // stride_w + 1
        return input.new_empty(input.shape[0], weight.shape[0], out_h, out_w)
