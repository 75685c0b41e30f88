"""aten::im2col with symbolic spatial dims, at two sizes."""

from __future__ import annotations

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
