"""torchlib/ops/fractional_pool.py against torch, eagerly and traced."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import fractional_pool as F
from torchlib.testing import check_function

A = torch.ops.aten


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("kernel,output", [([2, 2], [3, 3]), ([3, 2], [2, 4]), ([1, 1], [9, 8]), ([2, 3], [1, 1])])
def test_fractional_max_pool2d(dtype: torch.dtype, kernel: list[int], output: list[int]) -> None:
    """NaN (the last NaN of a window wins), ties (the first maximum), size-1 output and kernel."""
    g = torch.Generator().manual_seed(0)
    x, samples = torch.randn(2, 3, 9, 8, generator=g).to(dtype), torch.rand(2, 3, 2, generator=g).to(dtype)
    x[0, 0, 2, 2] = x[0, 0, 2, 3] = float("nan")
    x[1, 1, :3, :3] = 1.0
    check_function(F.aten_fractional_max_pool2d, (x, kernel, output, samples), expected=tuple(A.fractional_max_pool2d(x, kernel, output, samples)))


def test_fractional_max_pool_unbatched_and_3d() -> None:
    g = torch.Generator().manual_seed(1)
    x, samples = torch.randn(3, 7, 6, generator=g), torch.rand(1, 3, 2, generator=g)
    check_function(F.aten_fractional_max_pool2d, (x, [2, 2], [3, 3], samples), expected=tuple(A.fractional_max_pool2d(x, [2, 2], [3, 3], samples)))
    x, samples = torch.randn(2, 3, 5, 6, 4, generator=g, dtype=torch.float64), torch.rand(2, 3, 3, generator=g, dtype=torch.float64)
    check_function(F.aten_fractional_max_pool3d, (x, [2, 2, 2], [3, 2, 2], samples), expected=tuple(A.fractional_max_pool3d(x, [2, 2, 2], [3, 2, 2], samples)))


@pytest.mark.parametrize("fn,x_shape,kernel,output,samples_rows", [
    ("fractional_max_pool2d", (0, 3, 9, 9), [3, 3], [2, 2], 1),  # the fuzz pass's [empty] repro
    ("fractional_max_pool2d", (2, 3, 9, 8), [2, 2], [3, 3], 4),
    ("fractional_max_pool2d", (3, 7, 6), [2, 2], [3, 3], 2),  # unbatched: row 0
    ("fractional_max_pool3d", (1, 3, 5, 5, 5), [2, 2, 2], [3, 3, 3], 2),  # the fuzz pass's [size1] repro
    ("fractional_max_pool3d", (0, 3, 5, 5, 5), [2, 2, 2], [3, 3, 3], 1),
])
def test_fractional_max_pool_extra_sample_rows_are_ignored(fn: str, x_shape: tuple[int, ...], kernel: list[int], output: list[int], samples_rows: int) -> None:
    """torch reads samples[n] for batch n: more sample rows than the batch is fine (the extra
    ones are ignored), and an empty batch gives an empty result."""
    g = torch.Generator().manual_seed(2)
    x = torch.randn(x_shape, generator=g)
    samples = torch.rand(samples_rows, x_shape[-len(kernel) - 1], len(kernel), generator=g)
    check_function(getattr(F, f"aten_{fn}"), (x, kernel, output, samples), expected=tuple(getattr(A, fn)(x, kernel, output, samples)))


def test_fractional_max_pool_too_few_sample_rows_raise() -> None:
    """torch raises ("Expect _random_samples.size(0) no less then input batch size"): so do we."""
    x, samples = torch.randn(2, 3, 9, 9), torch.rand(1, 3, 2)
    with pytest.raises(RuntimeError):
        A.fractional_max_pool2d(x, [3, 3], [2, 2], samples)
    with pytest.raises(ValueError, match="1 rows for an input batch of 2"):
        F.aten_fractional_max_pool2d(x, [3, 3], [2, 2], samples)
    with pytest.raises(ValueError, match="2 planes, the input 3"):
        F.aten_fractional_max_pool2d(x, [3, 3], [2, 2], torch.rand(2, 2, 2))
