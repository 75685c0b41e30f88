"""Expectations for torchlib/ops/embedding_bag.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input

_FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def bags(dtype: torch.dtype) -> Iterator[Any]:
    """embedding_bag's (weight, indices, offsets, scale_grad_by_freq, mode, sparse,
    per_sample_weights, include_last_offset): every mode, empty bags (one at the end, one in the
    middle), per-sample weights, include_last_offset, int32 indices, no index at all."""
    gen = torch.Generator().manual_seed(0)
    weight = torch.randn(10, 3, generator=gen).to(dtype)
    indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    psw = torch.rand(8, generator=gen).to(dtype)
    for offsets, last in ((torch.tensor([0, 4, 4]), False), (torch.tensor([0, 4, 4, 8]), True), (torch.tensor([0, 2, 8]), False)):
        for mode in (0, 1, 2):
            yield sample_input(weight, indices, offsets, False, mode, False, None, last)
        yield sample_input(weight, indices, offsets, False, 0, False, psw, last)
    yield sample_input(weight, indices.int(), torch.tensor([0, 3], dtype=torch.int32), False, 2, False, None, False)
    yield sample_input(weight, indices[:0], torch.tensor([0]), False, 1, False, None, False)


ENTRIES = [
    # with requires_grad=False torch calls _embedding_bag_forward_only: the same arguments and outputs
    Entry('aten__embedding_bag', opinfo=['nn.functional.embedding_bag'], route='aten',
          aten=['aten::_embedding_bag_forward_only', 'aten::_embedding_bag']),  # _embedding_bag
    Entry('aten__embedding_bag_forward_only', opinfo=['nn.functional.embedding_bag']),  # _embedding_bag_forward_only
    # F.embedding_bag calls the .padding_idx overload: the plain one gets samples of its own
    Entry('aten_embedding_bag', samples=bags, dtypes=_FLOATS),  # embedding_bag
    Entry('aten_embedding_bag_padding_idx', opinfo=['nn.functional.embedding_bag'], route='pre_dispatch'),  # embedding_bag.padding_idx
]
