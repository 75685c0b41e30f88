"""Expectations for torchlib/ops/torchvision.py: no OpInfo covers torchvision's ops, so each has
samples of its own, checked against the port of torchvision's CPU kernel in
torchlib/conformance/torchvision_reference.py (torchvision's compiled ops do not load beside
torch's CPU wheel)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance import torchvision_reference as reference
from torchlib.conformance.spec import Entry, sample_input

FLOATS = [torch.float32, torch.float64]


def _boxes(n: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 10
    wh = torch.rand(n, 2, generator=g) * 5
    return torch.cat([xy, xy + wh], 1).to(dtype)


def _rois(k: int, images: int, dtype: torch.dtype, seed: int) -> torch.Tensor:
    """Boxes partly outside a 10x9 image, some smaller than a bin, with their image index."""
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(k, 2, generator=g) * 12 - 2
    wh = torch.rand(k, 2, generator=g) * 8
    index = torch.randint(0, images, (k, 1), generator=g).to(torch.float32)
    return torch.cat([index, xy, xy + wh], 1).to(dtype)


def nms_samples(dtype: torch.dtype) -> Iterator[Any]:
    for i, (n, threshold) in enumerate([(12, 0.5), (30, 0.3), (0, 0.5), (1, 0.7), (20, 0.0), (8, -0.1)]):
        boxes = _boxes(n, dtype, i)
        scores = torch.rand(n, generator=torch.Generator().manual_seed(100 + i)).to(dtype)
        scores[::4] = 0.5  # ties keep the lower index first
        yield sample_input(boxes, scores, threshold)
    boxes = _boxes(10, dtype, 9)
    boxes[2] = boxes[2][[2, 3, 0, 1]]  # corners given the other way round
    yield sample_input(boxes, torch.linspace(0, 1, 10, dtype=dtype), 0.4)


def roi_align_samples(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.randn(2, 4, 10, 9, generator=torch.Generator().manual_seed(0)).to(dtype)
    for i, (scale, ph, pw, ratio, aligned) in enumerate([(1.0, 3, 2, -1, False), (0.5, 2, 2, 2, True),
                                                        (0.25, 1, 3, 0, True), (1.0, 2, 3, 1, False)]):
        yield sample_input(x, _rois(5, 2, dtype, i), scale, ph, pw, ratio, aligned)
    yield sample_input(x, _rois(0, 2, dtype, 7), 1.0, 2, 2, -1, False)


def ps_samples(sampling: bool):
    def samples(dtype: torch.dtype) -> Iterator[Any]:
        x = torch.randn(2, 12, 10, 9, generator=torch.Generator().manual_seed(1)).to(dtype)
        for i, (scale, ratio) in enumerate([(1.0, -1), (0.5, 2), (0.25, 0)]):
            yield sample_input(x, _rois(4, 2, dtype, i), scale, 3, 2, *([ratio] if sampling else []))
        yield sample_input(x, _rois(0, 2, dtype, 5), 1.0, 3, 2, *([-1] if sampling else []))
    return samples


def roi_pool_samples(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.randn(2, 4, 10, 9, generator=torch.Generator().manual_seed(2)).to(dtype)
    x[0, 1, 2, 3] = float("nan")  # the kernel never picks NaN or -inf
    x[1, 2, 4, 4] = -float("inf")
    for i, scale in enumerate([1.0, 0.5, 0.3]):
        yield sample_input(x, _rois(6, 2, dtype, i), scale, 3, 2)
    yield sample_input(x, _rois(0, 2, dtype, 4), 1.0, 2, 2)


def deform_conv2d_samples(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 4, 7, 6, generator=g).to(dtype)
    weight = torch.randn(6, 2, 3, 3, generator=g).to(dtype)
    offset = (torch.randn(2, 2 * 2 * 9, 4, 3, generator=g) * 2).to(dtype)  # taps land between and outside pixels
    mask = torch.rand(2, 2 * 9, 4, 3, generator=g).to(dtype)
    bias = torch.randn(6, generator=g).to(dtype)
    for use_mask in (True, False):
        yield sample_input(x, weight, offset, mask, bias, 2, 2, 1, 1, 1, 1, 2, 2, use_mask)
    offset1 = (torch.randn(1, 2 * 9, 5, 4, generator=g) * 0.7).to(dtype)
    yield sample_input(x[:1], weight[:, :].repeat(1, 2, 1, 1)[:, :4], offset1, torch.ones(1, 9, 5, 4, dtype=dtype),
                       torch.zeros(6, dtype=dtype), 1, 1, 0, 0, 1, 1, 1, 1, False)


ENTRIES = [
    Entry('torchvision_nms', samples=nms_samples, dtypes=FLOATS, reference=reference.nms),
    Entry('torchvision_roi_align', samples=roi_align_samples, dtypes=FLOATS, reference=reference.roi_align),
    Entry('torchvision_ps_roi_align', samples=ps_samples(True), dtypes=FLOATS, reference=reference.ps_roi_align),
    Entry('torchvision_roi_pool', samples=roi_pool_samples, dtypes=FLOATS, reference=reference.roi_pool),
    Entry('torchvision_ps_roi_pool', samples=ps_samples(False), dtypes=FLOATS, reference=reference.ps_roi_pool),
    Entry('torchvision_deform_conv2d', samples=deform_conv2d_samples, dtypes=FLOATS, reference=reference.deform_conv2d),
]
