"""GridSample and Col2Im."""

from __future__ import annotations

import itertools

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
    for offset in itertools.product(*[range(b) for b in block]):
        where = tuple(slice(offset[i] * dil[i], offset[i] * dil[i] + stride[i] * (counts[i] - 1) + 1, stride[i])
                      for i in range(rank))  # fmt: skip
        out[(slice(None), slice(None), *where)] += cols[(slice(None), slice(None), *offset)]
    crop = tuple(slice(pad[i], pad[i] + image[i]) for i in range(rank))
    return out[(slice(None), slice(None), *crop)]
