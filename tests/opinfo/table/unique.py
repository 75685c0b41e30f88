"""Expectations for torchlib/ops/unique.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input

_NAN = float("nan")


def _edge(dtype: torch.dtype) -> Iterator[torch.Tensor]:
    """Duplicates, negatives, empty, 0-d, and NaN / inf for floats."""
    yield torch.tensor([3, -1, 2, -1, 5, 3, 3]).to(dtype)
    yield torch.tensor([[1, 0], [1, 1], [1, 0]]).to(dtype)
    yield torch.zeros(0, dtype=dtype)
    yield torch.tensor(1).to(dtype)
    if dtype.is_floating_point:
        yield torch.tensor([_NAN, 1.0, _NAN, float("inf"), 1.0, -2.0], dtype=dtype)


def _unique2(dtype: torch.dtype) -> Iterator[Any]:
    for x in _edge(dtype):
        yield sample_input(x, True, True, True)
        yield sample_input(x, False, False, True)


def _unique_dim(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.tensor([[3, 1, 0], [2, 1, 0], [3, 1, 0], [2, 0, 0]]).to(dtype)
    for dim in (0, 1, -1):
        yield sample_input(x, dim, True, True, True)
    yield sample_input(torch.tensor([[1, 1], [1, 1]]).to(dtype), 0, False, False, False)
    yield sample_input(torch.zeros(0, 3, dtype=dtype), 0, True, True, True)
    yield sample_input(torch.tensor([2, 1, 2]).to(dtype), 0, True, False, False)


def _consecutive(dtype: torch.dtype) -> Iterator[Any]:
    for x in _edge(dtype):
        yield sample_input(x, True, True)
    yield sample_input(torch.tensor([[1, 2], [1, 2], [0, 2], [1, 2]]).to(dtype), True, True, 0)
    yield sample_input(torch.tensor([[1, 1, 2], [1, 1, 2]]).to(dtype), False, False, 1)


def _dim_consecutive(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.tensor([[1, 2], [1, 2], [0, 2], [1, 2]]).to(dtype)
    yield sample_input(x, 0, True, True)
    yield sample_input(x, -1, False, False)
    yield sample_input(torch.tensor([1, 1, 0]).to(dtype), 0, True, False)


def _masked_select(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.arange(-3, 3).reshape(2, 3).to(dtype)
    yield sample_input(x, torch.tensor([True, False, True]))
    yield sample_input(torch.tensor(2).to(dtype), torch.tensor([[True], [False]]))
    yield sample_input(x, torch.zeros(2, 3, dtype=torch.bool))
    yield sample_input(torch.zeros(0, 3, dtype=dtype), torch.tensor([True, False, True]))


_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]

ENTRIES = [
    Entry('aten_unique2', opinfo=['unique'], samples=_unique2, dtypes=_DTYPES),  # _unique2
    Entry('aten_unique_dim', opinfo=['unique'], samples=_unique_dim, dtypes=_DTYPES),  # unique_dim
    Entry('aten_unique_consecutive', opinfo=['unique_consecutive'], samples=_consecutive, dtypes=_DTYPES),  # unique_consecutive
    Entry('aten_unique_dim_consecutive', samples=_dim_consecutive, dtypes=_DTYPES),  # unique_dim_consecutive
    Entry('aten_masked_select', opinfo=['masked_select'], samples=_masked_select, dtypes=_DTYPES),  # masked_select
]
