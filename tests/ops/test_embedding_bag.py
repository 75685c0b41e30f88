"""torchlib/ops/embedding_bag.py against torch: the four outputs on edges (empty bags, padding,
ties in max, negative padding_idx, no index at all)."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import embedding_bag as E
from torchlib.testing import check_function

A = torch.ops.aten
IDX = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [-1, 4])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_embedding_bag_padding_and_empty_bags(mode: int, padding_idx: int, dtype: torch.dtype) -> None:
    w = torch.randn(10, 3, dtype=dtype)
    args = (w, IDX, torch.tensor([0, 4, 4]), False, mode, False, None, False, padding_idx)
    check_function(E.aten__embedding_bag, args, expected=A._embedding_bag(*args))


def test_embedding_bag_max_ties_take_the_first_index() -> None:
    w = torch.tensor([[1.0, 2.0], [1.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
    args = (w, torch.tensor([3, 1, 0, 2, 3]), torch.tensor([0, 1]), False, 2, False, None, False, -1)
    check_function(E.aten__embedding_bag, args, expected=A._embedding_bag(*args))


def test_embedding_bag_padding_idx_negative_wraps() -> None:
    w = torch.randn(10, 3)
    args = (w, IDX, torch.tensor([0, 4]), False, 1, False, None, False, -6)  # row 4
    check_function(E.aten_embedding_bag_padding_idx, args, expected=A.embedding_bag.padding_idx(*args))


def test_embedding_bag_no_indices() -> None:
    w = torch.randn(10, 3)
    for mode in (0, 1, 2):
        args = (w, IDX[:0], torch.tensor([0, 0]), False, mode, False, None, False, -1)
        check_function(E.aten__embedding_bag, args, expected=A._embedding_bag(*args))
