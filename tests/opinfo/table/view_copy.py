"""Expectations for torchlib/ops/view_copy.py."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, sample_input


def _x(dtype: torch.dtype, shape: tuple[int, ...] = (2, 4, 5)) -> torch.Tensor:
    return torch.randn(shape, generator=torch.Generator().manual_seed(0)).mul(3).to(dtype)


def _samples(*cases: tuple[tuple[int, ...], tuple[Any, ...]]) -> Callable[[torch.dtype], Iterator[Any]]:
    def gen(dtype: torch.dtype) -> Iterator[Any]:
        for shape, args in cases:
            yield sample_input(_x(dtype, shape), *args)

    return gen


def _diagonal_scatter(dtype: torch.dtype) -> Iterator[Any]:
    x = _x(dtype)
    for off, d1, d2 in [(0, 1, 2), (1, 1, 2), (-2, 2, 1), (0, 0, 2), (3, -1, 1), (-1, 0, 1), (7, 1, 2), (-3, 1, 2)]:
        src = torch.randn(torch.diagonal(x, off, d1, d2).shape, generator=torch.Generator().manual_seed(1)).to(dtype)
        yield sample_input(x, src, off, d1, d2)


_ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]
_EMPTY = 'torch leaves the values undefined: shape and dtype only'

ENTRIES = [
    Entry('aten_alias_copy', samples=_samples(((2, 3), ()), ((), ()), ((0, 2), ())), dtypes=_ALL),  # alias_copy
    Entry('aten_detach_copy', samples=_samples(((2, 3), ()), ((), ())), dtypes=_ALL),  # detach_copy
    Entry('aten_diagonal_copy', samples=_samples(((2, 4, 5), (0, 1, 2)), ((2, 4, 5), (-2, 2, 1)), ((3, 3), (5,)),
                                                 ((2, 4, 5), (1, -1, 0))), dtypes=_ALL),  # diagonal_copy
    Entry('aten_t_copy', samples=_samples(((2, 3), ()), ((4,), ()), ((), ())), dtypes=_ALL),  # t_copy
    Entry('aten_transpose_copy_int', samples=_samples(((2, 3, 4), (0, 2)), ((2, 3), (-1, 0)), ((), (0, -1))), dtypes=_ALL),  # transpose_copy.int
    Entry('aten_unbind_copy_int', samples=_samples(((2, 3, 4), (1,)), ((3,), ()), ((0, 2), (-1,))), dtypes=_ALL),  # unbind_copy.int
    Entry('aten_unfold_copy', samples=_samples(((2, 7), (1, 3, 2)), ((5,), (0, 5, 1)), ((), (0, 1, 1))), dtypes=_ALL),  # unfold_copy
    Entry('aten_unsqueeze_copy', samples=_samples(((2, 3), (0,)), ((2, 3), (-1,)), ((), (0,))), dtypes=_ALL),  # unsqueeze_copy
    Entry('aten__reshape_copy', samples=_samples(((2, 3), ([3, 2],)), ((2, 3), ([-1],)), ((0, 3), ([3, 0],))), dtypes=_ALL),  # _reshape_copy
    Entry('aten_as_strided_copy', opinfo=['as_strided_copy']),  # as_strided_copy
    Entry('aten_as_strided_scatter', opinfo=['as_strided_scatter']),  # as_strided_scatter
    Entry('aten_diagonal_scatter', opinfo=['diagonal_scatter'], samples=_diagonal_scatter, dtypes=_ALL),  # diagonal_scatter
    Entry('aten_new_empty_strided', opinfo=['new_empty_strided'], compare='shape',
          samples=_samples(((2, 3), ([4, 1], [1, 1])), ((), ([0, 2], [2, 1]))), dtypes=_ALL),  # new_empty_strided
    Entry('aten_empty_permuted', samples=lambda dtype: iter([sample_input([2, 3, 4], [0, 2, 1], dtype=dtype),
                                                              sample_input([0, 5], [1, 0], dtype=dtype)]),
          dtypes=_ALL, compare='shape'),  # empty_permuted
]
