"""torchlib/ops/backward_nn.py against torch on edges OpInfo does not reach (empty dims,
every output mask); the OpInfo-derived samples are in tests/opinfo/table/backward.py."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import backward_nn as B
from torchlib.testing import check_function

A = torch.ops.aten


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_backward_empty_batch(dtype: torch.dtype, transposed: bool) -> None:
    x, w = torch.randn(0, 4, 6, 6, dtype=dtype), torch.randn(4, 2, 3, 3, dtype=dtype)
    args = ([2, 2], [1, 1], [1, 1], transposed, [0, 0], 2)
    g = torch.randn(A.convolution(x, w, None, *args).shape, dtype=dtype)
    mask = [True, True, True]
    check_function(B.aten_convolution_backward, (g, x, w, [w.shape[0]], *args, mask),
                   expected=A.convolution_backward(g, x, w, [w.shape[0]], *args, mask))  # fmt: skip


@pytest.mark.parametrize("transposed", [False, True])
def test_convolution_backward_output_padding_past_stride(transposed: bool) -> None:
    """output_padding up to the dilation (torch allows it above the stride)."""
    x, w = torch.randn(2, 2, 5, dtype=torch.float64), torch.randn(2, 2, 3, dtype=torch.float64)
    args = ([1], [1], [3], transposed, [2] if transposed else [0], 1)
    g = torch.randn(A.convolution(x, w, None, *args).shape, dtype=torch.float64)
    mask = [True, True, True]
    check_function(B.aten_convolution_backward, (g, x, w, None, *args, mask),
                   expected=A.convolution_backward(g, x, w, None, *args, mask))  # fmt: skip


def test_native_group_norm_backward_empty() -> None:
    x, w = torch.randn(0, 6, 3), torch.randn(6)
    _, mean, rstd = A.native_group_norm(x, w, None, 0, 6, 3, 2, 1e-5)
    g = torch.randn(0, 6, 3)
    args = (g, x, mean, rstd, w, 0, 6, 3, 2, [True, True, True])
    check_function(B.aten_native_group_norm_backward, args, expected=A.native_group_norm_backward(*args))


@pytest.mark.parametrize("ceil_mode", [False, True])
@pytest.mark.parametrize("count_include_pad", [False, True])
def test_avg_pool2d_backward_ceil(ceil_mode: bool, count_include_pad: bool) -> None:
    x = torch.randn(2, 3, 7, 6, dtype=torch.float64)
    args = ([3, 2], [2, 2], [1, 1], ceil_mode, count_include_pad, None)
    g = torch.randn(A.avg_pool2d(x, *args).shape, dtype=torch.float64)
    check_function(B.aten_avg_pool2d_backward, (g, x, *args), expected=A.avg_pool2d_backward(g, x, *args))


@pytest.mark.parametrize("shape", [(0, 3, 7, 6), (3, 7, 6)])  # empty batch, unbatched
def test_avg_pool2d_backward_empty_and_unbatched(shape: tuple[int, ...]) -> None:
    x = torch.randn(shape, dtype=torch.float64)
    args = ([3, 2], [2, 2], [1, 1], True, False, None)
    g = torch.randn(A.avg_pool2d(x, *args).shape, dtype=torch.float64)
    check_function(B.aten_avg_pool2d_backward, (g, x, *args), expected=A.avg_pool2d_backward(g, x, *args))


@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("mask", [[True, True, True], [True, False, False], [False, True, True]])
def test_native_batch_norm_backward_without_weight(train: bool, mask: list[bool]) -> None:
    x = torch.randn(4, 3, 5, dtype=torch.float64)
    rm, rv = torch.randn(3, dtype=torch.float64), torch.rand(3, dtype=torch.float64) + 0.5
    _, save_mean, save_invstd = A.native_batch_norm(x, None, None, rm.clone(), rv.clone(), train, 0.1, 1e-5)
    g = torch.randn(4, 3, 5, dtype=torch.float64)
    args = (g, x, None, rm, rv, save_mean, save_invstd, train, 1e-5, mask)
    expected = tuple(out if wanted else None for out, wanted in zip(A.native_batch_norm_backward(*args), mask))
    check_function(B.aten_native_batch_norm_backward, args, expected=expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_avg_pool_backward_spreads_each_window_in_torchs_order(dtype: torch.dtype) -> None:
    """Issue 13, fuzz `huge`/`nan_inf`: torch adds grad / divisor to each element of the window,
    window after window in row-major order: max and -max of one row cancel before the next
    row's small values come, and an inf reaches only its window's elements."""
    info = torch.finfo(dtype)
    for values in ([info.max, -info.max, info.tiny, info.max / 3, -info.tiny], [float("nan"), float("inf"), float("-inf")]):
        x = torch.randn(1, 3, 9, 9, dtype=dtype)
        for args in (([3, 3], [1, 1], [1, 1], True, False, 2), ([4, 4], [2, 3], [1, 1], True, False, 2)):
            g = torch.randn(A.avg_pool2d(x, *args).shape, dtype=dtype)
            g.view(-1)[: len(values)] = torch.tensor(values, dtype=dtype)
            check_function(B.aten_avg_pool2d_backward, (g, x, *args), expected=A.avg_pool2d_backward(g, x, *args))
        x3 = torch.randn(1, 2, 5, 5, 5, dtype=dtype)
        args3 = ([2, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 2)
        g3 = torch.randn(A.avg_pool3d(x3, *args3).shape, dtype=dtype)
        g3.view(-1)[: len(values)] = torch.tensor(values, dtype=dtype)
        check_function(B.aten_avg_pool3d_backward, (g3, x3, *args3), expected=A.avg_pool3d_backward(g3, x3, *args3))


@pytest.mark.parametrize("batch", [0, 1])
def test_avg_pool2d_backward_grad_with_fewer_planes_than_self(batch: int) -> None:
    """torch's 2-d kernel runs over grad_output's planes into zeros shaped like self (it does not
    check the batch sizes agree): the planes grad_output lacks stay zero."""
    x = torch.randn(2, 3, 9, 9)
    args = ([4, 4], [2, 3], [1, 1], True, False, 2)
    g = torch.randn(batch, 3, 5, 4)
    check_function(B.aten_avg_pool2d_backward, (g, x, *args), expected=A.avg_pool2d_backward(g, x, *args))


def test_avg_pool3d_backward_rejects_a_grad_with_other_planes() -> None:
    """torch's 3-d kernel takes its planes from self and reads past a smaller grad_output's end
    (garbage): not an input with a defined result, so we raise."""
    with pytest.raises(ValueError, match="batch or channel"):
        B.aten_avg_pool3d_backward(torch.randn(1, 3, 1, 2, 2), torch.randn(2, 3, 3, 4, 4), [2, 2, 2], [], [0, 0, 0], False, True, None)
