"""torchlib/ops/backward.py against torch, eagerly and traced."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import backward as B
from torchlib.testing import check_function

A = torch.ops.aten


def test_max_pool2d_with_indices_backward_ties() -> None:
    x = torch.randint(-2, 2, (2, 3, 7, 6)).to(torch.float32)  # many ties: torch's indices decide
    args = ([3, 2], [1, 2], [1, 0], [1, 1], True)  # overlapping windows: gradients add up
    out, indices = A.max_pool2d_with_indices(x, *args)
    g = torch.randn(out.shape)
    check_function(B.aten_max_pool2d_with_indices_backward, (g, x, *args, indices),
                   expected=A.max_pool2d_with_indices_backward(g, x, *args, indices))  # fmt: skip


@pytest.mark.parametrize("out", [(3, 4), (7, 6), (1, 1), (9, 8)])
def test_adaptive_avg_pool2d_backward(out: tuple[int, int]) -> None:
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    g = torch.randn(2, 3, *out, dtype=torch.float64)
    check_function(B.aten__adaptive_avg_pool2d_backward, (g, x), expected=A._adaptive_avg_pool2d_backward(g, x))


@pytest.mark.parametrize("padding_idx", [-1, 3])
@pytest.mark.parametrize("scale", [False, True])
def test_embedding_dense_backward(padding_idx: int, scale: bool) -> None:
    idx, g = torch.tensor([[1, 3, 1], [0, 3, 3]]), torch.randn(2, 3, 4)
    check_function(B.aten_embedding_dense_backward, (g, idx, 5, padding_idx, scale),
                   expected=A.embedding_dense_backward(g, idx, 5, padding_idx, scale))  # fmt: skip


def test_native_layer_norm_backward() -> None:
    x, w, b = torch.randn(2, 3, 4, dtype=torch.float64), torch.randn(4, dtype=torch.float64), torch.randn(4, dtype=torch.float64)
    _, mean, rstd = A.native_layer_norm(x, [4], w, b, 1e-5)
    g = torch.randn(2, 3, 4, dtype=torch.float64)
    check_function(B.aten_native_layer_norm_backward, (g, x, [4], mean, rstd, w, b, [True, True, True]),
                   expected=A.native_layer_norm_backward(g, x, [4], mean, rstd, w, b, [True, True, True]))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_adaptive_avg_pool_backward_nan_inf_and_huge_reach_only_their_cells(dtype) -> None:
    """Issue 13, fuzz `nan_inf`/`huge`: torch adds grad / cell size to each input of the cell, so
    an inf reaches only its cell's inputs (a matrix product spread 0 * inf = NaN everywhere) and
    a row's max and -max cancel before the next row's cells are added."""
    info = torch.finfo(dtype)
    x = torch.randn(2, 3, 7, 6, dtype=dtype)
    for values in ([float("nan"), float("inf"), float("-inf")], [info.max, -info.max, info.tiny, info.max / 3, -info.tiny]):
        g = torch.randn(2, 3, 3, 4, dtype=dtype)
        g.view(-1)[: len(values)] = torch.tensor(values, dtype=dtype)
        check_function(B.aten__adaptive_avg_pool2d_backward, (g, x), expected=A._adaptive_avg_pool2d_backward(g, x))
        g3 = torch.randn(1, 2, 2, 3, 2, dtype=dtype)
        g3.view(-1)[: len(values)] = torch.tensor(values, dtype=dtype)
        x3 = torch.randn(1, 2, 5, 4, 3, dtype=dtype)
        check_function(B.aten__adaptive_avg_pool3d_backward, (g3, x3), expected=A._adaptive_avg_pool3d_backward(g3, x3))


@pytest.mark.parametrize("batch", [0, 1])
def test_adaptive_avg_pool2d_backward_grad_with_fewer_planes_than_self(batch) -> None:
    """torch writes grad_output's planes into the first planes of zeros shaped like self (it does
    not check the batch sizes agree): the planes grad_output lacks stay zero."""
    x = torch.randn(2, 3, 7, 6)
    g = torch.randn(batch, 3, 3, 4)
    check_function(B.aten__adaptive_avg_pool2d_backward, (g, x), expected=A._adaptive_avg_pool2d_backward(g, x))
