"""Expectations for torchlib/ops/histogram.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input


def _bincount(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.tensor([0, 3, 1, 1, 7, 3]).to(dtype)
    yield sample_input(x)
    yield sample_input(x, minlength=10)
    yield sample_input(x, torch.tensor([0.5, -1.0, 2.0, 3.0, 1e10, 0.0]))  # float32 weights: float32
    yield sample_input(x, torch.tensor([1, 2, 3, 4, 5, 6]), minlength=2)  # int weights: float64
    yield sample_input(torch.zeros(0, dtype=dtype), minlength=3)  # empty
    yield sample_input(torch.zeros(0, dtype=dtype))


def _histc(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(0)
    x = (torch.randn(200, generator=g) * 3).to(dtype)
    yield sample_input(x, bins=10)  # the data's range
    yield sample_input(x, bins=7, min=-2, max=2.5)  # values outside are not counted
    yield sample_input(torch.tensor([1.0, 2, 1, float("nan"), 4, 5]).to(dtype), bins=4, min=0, max=4)  # NaN, x == max
    yield sample_input(torch.tensor([2.0, 2.0]).to(dtype), bins=3)  # constant data: range widened by 1
    yield sample_input(torch.zeros(0, dtype=dtype), bins=5, min=0, max=1)  # empty
    yield sample_input(x.reshape(20, 10), bins=1, min=-1, max=1)


def _histogramdd(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(30, 2, generator=g).to(dtype)
    yield sample_input(x, [3, 4])
    yield sample_input(x, [2, 2], [-1.0, 1.0, 0.0, 0.0], torch.rand(30, generator=g).to(dtype), True)  # an empty range widens by 0.5
    yield sample_input(torch.zeros(0, 3, dtype=dtype), [1, 2, 3])  # no data: [0, 1]


ENTRIES = [
    Entry('aten_bincount', opinfo=['bincount'], samples=_bincount, dtypes=[torch.int64, torch.int32, torch.uint8]),  # bincount
    Entry('aten_histogram_bin_ct', opinfo=['histogram']),  # histogram.bin_ct
    Entry('aten_histogram_bins_tensor', opinfo=['histogram']),  # histogram.bins_tensor
    Entry('aten_histogramdd', samples=_histogramdd, dtypes=[torch.float32, torch.float64]),  # torch.histogramdd records the three ops below, not this one
    Entry('aten__histogramdd_bin_edges', opinfo=['histogramdd']),
    Entry('aten__histogramdd_from_bin_cts', opinfo=['histogramdd']),
    Entry('aten__histogramdd_from_bin_tensors', opinfo=['histogramdd']),
    Entry('aten_histc', opinfo=['histc'], samples=_histc, dtypes=[torch.float32, torch.float64, torch.float16, torch.bfloat16]),  # histc
]
