"""aten::im2col and aten::col2im with symbolic spatial dims, at two sizes."""

from __future__ import annotations

import pytest
import torch

import torchlib


class Unfold(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.unfold(x, kernel_size=(3, 2), dilation=(1, 2), padding=(1, 0), stride=(2, 1))


def test_im2col_dynamic_spatial_dims():
    """aten::im2col with symbolic height and width (convbert's span-based convolution)."""
    x = torch.randn(2, 3, 7, 9)
    result = torchlib.export(Unfold(), (x,), dynamic_shapes=({0: "n", 2: "h", 3: "w"},))
    for xs in (x, torch.randn(1, 3, 10, 6)):
        torch.testing.assert_close(result(xs), Unfold()(xs))


class Fold(torch.nn.Module):
    """fold with the output size taken from a tensor's symbolic height and width (mobilevitv2's
    `folding`: patches back into a feature map whose size follows the image)."""

    def forward(self, cols, like):
        return torch.nn.functional.fold(cols, output_size=like.shape[-2:], kernel_size=(3, 2), dilation=(1, 2),
                                        padding=(1, 0), stride=(2, 1))


def _cols(batch: int, channels: int, height: int, width: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    blocks = ((height + 2 - 2 - 1) // 2 + 1) * ((width - 2 - 1) // 1 + 1)
    return torch.randn(batch, channels * 6, blocks).to(dtype), torch.zeros(height, width)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_col2im_dynamic_output_size(dtype: torch.dtype):
    """aten::col2im with a symbolic output size: bit-exact against torch at the sample and at
    other batch, channel, height and width (overlapping windows: torch's order of adds)."""
    sample = _cols(2, 3, 7, 9, dtype)
    result = torchlib.export(Fold(), sample, dynamic_shapes=({0: "n", 1: "c", 2: "l"}, {0: "h", 1: "w"}))
    for inputs in (sample, _cols(3, 2, 11, 6, dtype), _cols(1, 1, 4, 3, dtype)):
        got, want = result(*inputs), Fold()(*inputs)
        assert torch.equal(got, want) and torch.equal(got.signbit(), want.signbit())
    negative_zeros = (-torch.zeros_like(sample[0]), sample[1])  # torch adds onto +0.0: every pixel is +0.0
    assert not result(*negative_zeros).signbit().any()


class PatchRoundTrip(torch.nn.Module):
    """Non-overlapping patches out and back, the output size from the input's own dims."""

    def forward(self, x):
        cols = torch.nn.functional.unfold(x, kernel_size=2, stride=2)
        return torch.nn.functional.fold(cols * 2, output_size=x.shape[-2:], kernel_size=2, stride=2)


def test_unfold_fold_round_trip_two_sizes():
    x = torch.randn(2, 3, 8, 6)
    result = torchlib.export(PatchRoundTrip(), (x,), dynamic_shapes=({0: "n", 2: "h", 3: "w"},))
    for xs in (x, torch.randn(3, 3, 12, 16)):
        assert torch.equal(result(xs), PatchRoundTrip()(xs))
