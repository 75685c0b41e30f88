"""Expectations for torchlib/ops/distance.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input


def _pdist(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(5, 3, generator=g).to(dtype)
    for p in (2.0, 1.0, 0.0, 3.5, float("inf")):
        yield sample_input(x, p)
    yield sample_input(torch.randn(1, 4, generator=g).to(dtype))  # one row: no pair
    yield sample_input(torch.tensor([[1.0, 2.0], [1.0, 2.0], [float("nan"), 0.0]]).to(dtype))  # duplicates, NaN


ENTRIES = [
    Entry('aten_dist', opinfo=['dist']),  # dist
    Entry('aten__pdist_forward', opinfo=['nn.functional.pdist'], samples=_pdist, dtypes=[torch.float32, torch.float64]),  # _pdist_forward
    Entry('aten_pdist', samples=_pdist, dtypes=[torch.float32, torch.float64]),  # pdist (CompositeImplicit)
]
