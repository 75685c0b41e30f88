"""torchlib/ops/view_copy.py against torch, eagerly and traced (bfloat16: traced only): the
strided copy and scatter (the other `*_copy` functions call their views' functions, which
their own tests and the OpInfo table check)."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import view_copy as V
from torchlib.testing import check_function, check_traced_bfloat16

A = torch.ops.aten
ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.bool]
VIEWS = [([2, 2], [1, 2], 0), ([2, 3], [3, 1], 1), ([3], [4], 0), ([2, 1, 2], [4, 7, 1], None), ([], [], 5), ([0, 2], [1, 1], 3)]


def make(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    return (torch.rand(shape, generator=g, dtype=torch.float64) * 6 - 3).to(dtype)


def check(fn, expected, *args) -> None:
    if any(isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args):
        check_traced_bfloat16(fn, args, expected=expected)
    else:
        check_function(fn, args, expected=expected)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("size,stride,offset", VIEWS)
def test_as_strided_copy(dtype, size, stride, offset):
    x = make((3, 4), dtype)
    check(V.aten_as_strided_copy, A.as_strided_copy(x, size, stride, offset), x, size, stride, offset)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("size,stride,offset", VIEWS)
def test_as_strided_scatter(dtype, size, stride, offset):
    x, src = make((3, 4), dtype), make(tuple(size), dtype, seed=1)
    check(V.aten_as_strided_scatter, A.as_strided_scatter(x, src, size, stride, offset), x, src, size, stride, offset)


def test_as_strided_scatter_into_a_0d_tensor_and_from_another_dtype():
    x = torch.tensor(2.0)
    check(V.aten_as_strided_scatter, A.as_strided_scatter(x, torch.tensor(7.0), [], []), x, torch.tensor(7.0), [], [])
    y = make((3, 4), torch.float32)
    src = torch.tensor([[1, 2], [3, 4]], dtype=torch.int64)
    check(V.aten_as_strided_scatter, A.as_strided_scatter(y, src, [2, 2], [1, 2], 0), y, src, [2, 2], [1, 2], 0)


def test_as_strided_scatter_refuses_overlapping_and_out_of_range_views():
    x = torch.zeros(6)
    with pytest.raises(RuntimeError):
        A.as_strided_scatter(x, torch.ones(2, 3), [2, 3], [0, 1])
    with pytest.raises(ValueError, match="overlaps itself"):
        V.aten_as_strided_scatter(x, torch.ones(2, 3), [2, 3], [0, 1])
    with pytest.raises(ValueError, match="reads past"):
        V.aten_as_strided_copy(x, [2, 3], [3, 1], 1)
    with pytest.raises(ValueError, match="must have the view's size"):
        V.aten_as_strided_scatter(x, torch.ones(3), [2], [1])
