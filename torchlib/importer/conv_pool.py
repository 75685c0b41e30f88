"""Convolutions and pools, with ONNX's padding rules (explicit, asymmetric, SAME_UPPER/LOWER,
VALID, ceil_mode) made explicit before torch's op runs."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from torchlib.importer._common import impl


def _conv(rank: int):  # type: ignore[no-untyped-def]
    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[rank]


def _pads(in_shape: list[int], kernel: list[int], strides: list[int], dilations: list[int], pads: tuple[int, ...] | None,
          auto_pad: str, ceil_mode: int = 0) -> tuple[list[int], list[int], list[int]]:
    """(begin pads, end pads, output sizes) per spatial axis, ONNX's rules."""
    n = len(in_shape)
    begin, end, out = [0] * n, [0] * n, [0] * n
    for i in range(n):
        span = (kernel[i] - 1) * dilations[i] + 1
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out[i] = -(-in_shape[i] // strides[i])
            total = torch.sym_max((out[i] - 1) * strides[i] + span - in_shape[i], 0)
            small, big = total // 2, total - total // 2
            begin[i], end[i] = (small, big) if auto_pad == "SAME_UPPER" else (big, small)
        else:
            if auto_pad != "VALID" and pads:
                begin[i], end[i] = pads[i], pads[i + n]
            size = in_shape[i] + begin[i] + end[i] - span
            out[i] = (-(-size // strides[i]) if ceil_mode else size // strides[i]) + 1
            if ceil_mode and (out[i] - 1) * strides[i] >= in_shape[i] + begin[i]:
                out[i] -= 1
    return begin, end, out


def _flat_pad(begin: list[int], end: list[int]) -> list[int]:
    flat: list[int] = []
    for b, e in zip(reversed(begin), reversed(end)):
        flat += [b, e]
    return flat


@impl("Conv", auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, pads=None, strides=None)
def conv(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None, *, auto_pad: str,
         dilations: tuple[int, ...] | None, group: int, kernel_shape: tuple[int, ...] | None,
         pads: tuple[int, ...] | None, strides: tuple[int, ...] | None) -> torch.Tensor:
    rank = x.dim() - 2
    strides_l = list(strides or [1] * rank)
    dil = list(dilations or [1] * rank)
    begin, end, _ = _pads(list(x.shape[2:]), list(w.shape[2:]), strides_l, dil, pads, auto_pad)
    if any(begin) or any(end):
        x = F.pad(x, _flat_pad(begin, end))
    return _conv(rank)(x, w, b, stride=strides_l, dilation=dil, groups=group)


@impl("ConvTranspose", auto_pad="NOTSET", dilations=None, group=1, kernel_shape=None, output_padding=None,
      output_shape=None, pads=None, strides=None)
def conv_transpose(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None, *, auto_pad: str,
                   dilations: tuple[int, ...] | None, group: int, kernel_shape: tuple[int, ...] | None,
                   output_padding: tuple[int, ...] | None, output_shape: tuple[int, ...] | None,
                   pads: tuple[int, ...] | None, strides: tuple[int, ...] | None) -> torch.Tensor:
    rank = x.dim() - 2
    s = list(strides or [1] * rank)
    d = list(dilations or [1] * rank)
    op = list(output_padding or [0] * rank)
    k = list(w.shape[2:])
    full = [(x.shape[2 + i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 + op[i] for i in range(rank)]
    if output_shape:
        target = list(output_shape)[-rank:]
        total = [full[i] - target[i] for i in range(rank)]
        if auto_pad == "SAME_UPPER":
            begin = [t // 2 for t in total]
        else:
            begin = [t - t // 2 for t in total]
        end = [total[i] - begin[i] for i in range(rank)]
    elif auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        target = [x.shape[2 + i] * s[i] for i in range(rank)]
        total = [torch.sym_max(full[i] - target[i], 0) for i in range(rank)]
        begin = [t // 2 if auto_pad == "SAME_UPPER" else t - t // 2 for t in total]
        end = [total[i] - begin[i] for i in range(rank)]
    else:
        p = list(pads or [0] * (2 * rank))
        begin, end = p[:rank], p[rank:]
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}[rank]
    y = fn(x, w, None, stride=s, dilation=d, groups=group, output_padding=0)
    # output_padding adds zero rows at the end; the pads crop (negative pads, from an output_shape
    # past the full output, add zero rows); the bias then goes everywhere, as in the reference
    y = F.pad(y, _flat_pad([-p for p in begin], [op[i] - end[i] for i in range(rank)]))
    return y + b.reshape((1, -1) + (1,) * rank) if b is not None else y


def _window_sum(x: torch.Tensor, kernel: list[int], strides: list[int], dilations: list[int]) -> torch.Tensor:
    """Sum over each pooling window (a depthwise convolution with ones)."""
    n, c = x.shape[:2]
    rank = x.dim() - 2
    flat = x.reshape((n * c, 1) + tuple(x.shape[2:]))
    ones = torch.ones((1, 1) + tuple(kernel), dtype=x.dtype)
    out = _conv(rank)(flat, ones, stride=strides, dilation=dilations)
    return out.reshape((n, c) + tuple(out.shape[2:]))


def _pool_geometry(x: torch.Tensor, kernel_shape: tuple[int, ...], strides: tuple[int, ...] | None,
                   dilations: tuple[int, ...] | None, pads: tuple[int, ...] | None, auto_pad: str,
                   ceil_mode: int) -> tuple[list[int], list[int], list[int], list[int], list[int], list[int]]:
    rank = x.dim() - 2
    k = list(kernel_shape)
    s = list(strides or [1] * rank)
    d = list(dilations or [1] * rank)
    begin, end, out = _pads(list(x.shape[2:]), k, s, d, pads, auto_pad, ceil_mode)
    # end padding that the last window needs beyond the explicit pads (ceil mode)
    extra = [torch.sym_max((out[i] - 1) * s[i] + (k[i] - 1) * d[i] + 1 - (x.shape[2 + i] + begin[i] + end[i]), 0)
             for i in range(rank)]
    return k, s, d, begin, end, extra


@impl("AveragePool", auto_pad="NOTSET", ceil_mode=0, count_include_pad=0, dilations=None, kernel_shape=(),
      pads=None, strides=None)
def average_pool(x: torch.Tensor, *, auto_pad: str, ceil_mode: int, count_include_pad: int,
                 dilations: tuple[int, ...] | None, kernel_shape: tuple[int, ...], pads: tuple[int, ...] | None,
                 strides: tuple[int, ...] | None) -> torch.Tensor:
    k, s, d, begin, end, extra = _pool_geometry(x, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    ones = torch.ones((1, 1) + tuple(x.shape[2:]), dtype=x.dtype)
    if count_include_pad:
        mask = F.pad(F.pad(ones, _flat_pad(begin, end), value=1.0), _flat_pad([0] * len(k), extra), value=0.0)
    else:
        mask = F.pad(ones, _flat_pad(begin, [e + x_ for e, x_ in zip(end, extra)]), value=0.0)
    xp = F.pad(x, _flat_pad(begin, [e + x_ for e, x_ in zip(end, extra)]))
    return _window_sum(xp, k, s, d) / _window_sum(mask, k, s, d)


@impl("LpPool", auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=(), p=2, pads=None, strides=None)
def lp_pool(x: torch.Tensor, *, auto_pad: str, ceil_mode: int, dilations: tuple[int, ...] | None,
            kernel_shape: tuple[int, ...], p: int, pads: tuple[int, ...] | None,
            strides: tuple[int, ...] | None) -> torch.Tensor:
    k, s, d, begin, end, extra = _pool_geometry(x, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    xp = F.pad(torch.abs(x) ** p, _flat_pad(begin, [e + x_ for e, x_ in zip(end, extra)]))
    return _window_sum(xp, k, s, d) ** (1.0 / p)


@impl("MaxPool", multi=True, auto_pad="NOTSET", ceil_mode=0, dilations=None, kernel_shape=(), pads=None, storage_order=0,
      strides=None)
def max_pool(x: torch.Tensor, *, auto_pad: str, ceil_mode: int, dilations: tuple[int, ...] | None,
             kernel_shape: tuple[int, ...], pads: tuple[int, ...] | None, storage_order: int,
             strides: tuple[int, ...] | None) -> tuple[torch.Tensor, torch.Tensor]:
    k, s, d, begin, end, extra = _pool_geometry(x, kernel_shape, strides, dilations, pads, auto_pad, ceil_mode)
    rank = len(k)
    work = x if x.is_floating_point() else x.to(torch.float64)
    xp = F.pad(work, _flat_pad(begin, [e + x_ for e, x_ in zip(end, extra)]), value=float("-inf"))
    fn = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}[rank]
    y, idx = fn(xp, k, s, 0, d, return_indices=True)
    # indices into the padded input -> flat indices into x (NC... row-major, or column-major spatial)
    padded = list(xp.shape[2:])
    coords = []
    rest = idx
    for i in reversed(range(rank)):
        coords.append(rest % padded[i] - begin[i])
        rest = rest // padded[i]
    coords.reverse()
    spatial = list(x.shape[2:])
    flat = torch.zeros_like(idx)
    if storage_order:
        for i in reversed(range(rank)):
            flat = flat * spatial[i] + coords[i]
    else:
        for i in range(rank):
            flat = flat * spatial[i] + coords[i]
    n, c = x.shape[:2]
    base = torch.arange(n * c, dtype=torch.int64).reshape(n, c, *([1] * rank)) * math.prod(spatial)
    return y.to(x.dtype), flat + base


@impl("GlobalAveragePool")
def global_average_pool(x: torch.Tensor) -> torch.Tensor:
    return torch.mean(x, dim=tuple(range(2, x.dim())), keepdim=True)


@impl("GlobalMaxPool")
def global_max_pool(x: torch.Tensor) -> torch.Tensor:
    return torch.amax(x, dim=tuple(range(2, x.dim())), keepdim=True)


@impl("GlobalLpPool", p=2)
def global_lp_pool(x: torch.Tensor, *, p: int) -> torch.Tensor:
    return torch.sum(torch.abs(x) ** p, dim=tuple(range(2, x.dim())), keepdim=True) ** (1.0 / p)


@impl("MaxUnpool", since=9, static=(2,), kernel_shape=(), pads=None, strides=None)
def max_unpool(x: torch.Tensor, indices: torch.Tensor, output_shape: torch.Tensor | None = None, *,
               kernel_shape: tuple[int, ...], pads: tuple[int, ...] | None,
               strides: tuple[int, ...] | None) -> torch.Tensor:
    """Each value of x written at its index (flat over the whole unpooled tensor, as MaxPool gives
    them) in a zero tensor of the inferred shape; a larger output_shape pads it with zeros at the
    end of each dim (as onnx's reference does)."""
    rank = len(kernel_shape)
    stride = list(strides or [1] * rank)
    pad = list(pads or [0] * (2 * rank))
    inferred = [x.shape[0], x.shape[1]] + [(x.shape[2 + d] - 1) * stride[d] - pad[d] - pad[rank + d] + kernel_shape[d]
                                          for d in range(rank)]  # fmt: skip
    y = x.new_zeros(math.prod(inferred)).scatter(0, indices.reshape(-1).to(torch.int64), x.reshape(-1))
    y = y.reshape(inferred)
    if output_shape is None:
        return y
    shape = [int(v) for v in (output_shape if isinstance(output_shape, tuple) else output_shape.tolist())]
    return F.pad(y, [p for d in reversed(range(y.dim())) for p in (0, shape[d] - inferred[d])])
