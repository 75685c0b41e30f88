"""torchlib/ops/segments.py against torch, eagerly and traced."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import segments as S
from torchlib.testing import check_function


@pytest.mark.parametrize("reduce", ["max", "min", "sum", "mean", "prod"])
@pytest.mark.parametrize("initial", [None, 2.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_segment_reduce_nan_and_empty_segments(reduce: str, initial: float | None, dtype: torch.dtype) -> None:
    data = torch.tensor([1.0, float("nan"), 3.0, 4.0, 5.0, -1.0], dtype=dtype)
    lengths = torch.tensor([2, 0, 3, 1, 0])
    kw = {"lengths": lengths, "initial": initial}
    check_function(S.aten_segment_reduce, (data, reduce), kw, expected=torch.segment_reduce(data, reduce, **kw))
    offsets = torch.tensor([0, 2, 2, 5, 6, 6])
    kw = {"offsets": offsets, "initial": initial}
    check_function(S.aten_segment_reduce, (data, reduce), kw, expected=torch.segment_reduce(data, reduce, **kw))


@pytest.mark.parametrize("reduce", ["max", "sum", "mean"])
def test_segment_reduce_inner_axis(reduce: str) -> None:
    data = torch.randn(2, 6, 3, generator=torch.Generator().manual_seed(0))
    lengths = torch.tensor([[1, 5], [6, 0]])
    kw = {"lengths": lengths, "axis": 1}
    check_function(S.aten_segment_reduce, (data, reduce), kw, expected=torch.segment_reduce(data, reduce, **kw))
    kw = {"offsets": torch.tensor([[0, 1, 6], [0, 6, 6]]), "axis": -2, "unsafe": True}
    check_function(S.aten_segment_reduce, (data, reduce), kw, expected=torch.segment_reduce(data, reduce, **kw))


def test_segment_reduce_no_data() -> None:
    data, lengths = torch.zeros(0, 2), torch.tensor([0, 0])
    check_function(S.aten_segment_reduce, (data, "sum"), {"lengths": lengths}, expected=torch.segment_reduce(data, "sum", lengths=lengths))
