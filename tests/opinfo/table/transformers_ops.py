"""Expectations for torchlib/ops/transformers_ops.py: transformers' own torch.library ops. No
OpInfo covers them, so each has samples of its own, checked against the op's own implementation
(transformers registers it when transformers.integrations.moe is imported)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input

FLOATS = [torch.float32, torch.float64]


def grouped_mm_fallback(input: torch.Tensor, weight: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    import transformers.integrations.moe  # noqa: F401  (registers torch.ops.transformers.grouped_mm_fallback)

    return torch.ops.transformers.grouped_mm_fallback(input, weight, offs)


def grouped_mm_samples(dtype: torch.dtype) -> Iterator[Any]:
    """Experts with no rows, rows past offs[-1] (left zero), one expert, a ragged split."""
    g = torch.Generator().manual_seed(0)
    for counts, k, n, extra in (([3, 0, 2, 1], 8, 5, 1), ([1, 4, 0, 0], 6, 3, 0), ([2], 4, 7, 2), ([0, 5, 2, 2], 3, 4, 0)):
        x = torch.randn(sum(counts) + extra, k, generator=g).to(dtype)
        weight = torch.randn(len(counts), k, n, generator=g).to(dtype)
        yield sample_input(x, weight, torch.cumsum(torch.tensor(counts), 0))


ENTRIES = [
    Entry('transformers_grouped_mm_fallback', samples=grouped_mm_samples, dtypes=FLOATS, reference=grouped_mm_fallback),
]
