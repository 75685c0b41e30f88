"""torchlib/ops/unique.py against torch, eagerly and traced, with dynamic shapes (the output
sizes depend on the data)."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import unique as U
from torchlib.testing import check_function, run_dynamic

A = torch.ops.aten
NAN = float("nan")
INPUTS = [
    torch.tensor([3, -1, 2, -1, 5, 3, 3]),
    torch.tensor([NAN, 1.0, NAN, float("inf"), 1.0, -2.0, float("-inf")]),
    torch.tensor([[True, False], [True, True]]),
    torch.zeros(0, dtype=torch.float64),
    torch.tensor(4, dtype=torch.int32),
]


@pytest.mark.parametrize("x", INPUTS)
@pytest.mark.parametrize("inverse,counts", [(True, True), (False, True), (False, False)])
def test_unique2(x: torch.Tensor, inverse: bool, counts: bool) -> None:
    check_function(U.aten_unique2, (x, True, inverse, counts), expected=A._unique2(x, True, inverse, counts))


@pytest.mark.parametrize("x", INPUTS)
def test_unique_consecutive(x: torch.Tensor) -> None:
    check_function(U.aten_unique_consecutive, (x, True, True), expected=A.unique_consecutive(x, True, True))


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_unique_dim(dim: int) -> None:
    x = torch.tensor([[3, 1, 0], [2, 1, 0], [3, 1, 0], [2, 0, 0]], dtype=torch.float32)
    check_function(U.aten_unique_dim, (x, dim, True, True, True), expected=A.unique_dim(x, dim, True, True, True))
    check_function(U.aten_unique_dim_consecutive, (x, dim, True, True),
                   expected=A.unique_dim_consecutive(x, dim, True, True))  # fmt: skip


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_unique_dim_with_nan_as_torch_unique(dtype: torch.dtype) -> None:
    # torch's unique_dim sorts NaN with `<` (undefined for std::sort: it returns 2 three times
    # here); ours as torch.unique's flat kernel: NaN after every number, equal to nothing
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([2.0, nan, 2.0, inf, nan, -inf, 2.0], dtype=dtype)
    check_function(U.aten_unique_dim, (x, 0, True, True, True), expected=tuple(torch.unique(x, sorted=True, return_inverse=True, return_counts=True)))
    rows = torch.tensor([[1.0, nan], [0.0, 2.0], [1.0, nan], [1.0, 3.0], [0.0, 2.0]], dtype=dtype)
    values, inverse, counts = U.aten_unique_dim(rows, 0, True, True, True)
    torch.testing.assert_close(values, rows[[1, 3, 0, 2]], equal_nan=True)  # NaN rows last, in input order
    assert inverse.tolist() == [2, 0, 3, 1, 0] and counts.tolist() == [2, 1, 1, 1]


def test_unique_consecutive_1d_dim0_is_flat() -> None:
    x = torch.tensor([1, 1, 0])  # torch returns empty inverse/counts when not asked, as without dim
    check_function(U.aten_unique_consecutive, (x, False, False, 0), expected=A.unique_consecutive(x, False, False, 0))


def test_unique_dynamic() -> None:
    x = torch.tensor([5, 1, 5, 2, 1])
    got = run_dynamic(U.aten_unique2, x, True, True, True)
    for g, e in zip(got, A._unique2(x, True, True, True)):
        torch.testing.assert_close(g, e)


@pytest.mark.parametrize("shape,mask_shape", [((2, 3), (3,)), ((), (2, 1)), ((0, 3), (3,))])
def test_masked_select(shape: tuple[int, ...], mask_shape: tuple[int, ...]) -> None:
    x = torch.arange(-3, -3 + torch.Size(shape).numel()).reshape(shape).to(torch.float32)
    mask = (torch.arange(torch.Size(mask_shape).numel()) % 2 == 0).reshape(mask_shape)
    check_function(U.aten_masked_select, (x, mask), expected=torch.masked_select(x, mask))
