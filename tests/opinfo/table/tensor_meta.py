"""Expectations for torchlib/ops/tensor_meta.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, XFail, sample_input

_STATIC = ('with static input shapes {} returns a Python value (right for an exported graph), which '
           'torchlib.testing.trace cannot make a graph output')  # fmt: skip


def _dims(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.ones(2, 3, 5, dtype=dtype)
    for dim in (0, 1, 2, -1):
        yield sample_input(x, dim)
    yield sample_input(torch.ones(0, 4, dtype=dtype), 0)


def _tensors(dtype: torch.dtype) -> Iterator[Any]:
    for shape in ((2, 3), (), (0, 4)):
        yield sample_input(torch.ones(shape, dtype=dtype))


def _scalars(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input(torch.tensor([-3]).to(dtype))
    yield sample_input(torch.tensor(7).to(dtype))
    yield sample_input(torch.tensor([[1]]).to(dtype))
    if dtype.is_floating_point:
        yield sample_input(torch.tensor([float("nan")], dtype=dtype))


def _copy(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input(torch.zeros(2, 3, dtype=dtype), torch.tensor([1, -2, 3]).to(dtype))
    yield sample_input(torch.zeros(2, 3, dtype=dtype), torch.tensor([[0.5], [-2.75]], dtype=torch.float64))
    yield sample_input(torch.zeros(0, 3, dtype=dtype), torch.tensor(True))
    yield sample_input(torch.zeros((), dtype=dtype), torch.tensor(5, dtype=torch.int64))


_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]

def _symbolic_item(x: torch.Tensor) -> torch.Tensor:
    """item() as a graph holds it: a symbolic float is DOUBLE, a symbolic int INT64."""
    dtype = torch.bool if x.dtype == torch.bool else torch.float64 if x.dtype.is_floating_point else torch.int64
    return torch.tensor(x.item(), dtype=dtype)


def _resize_as(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input(torch.arange(6).reshape(2, 3).to(dtype), torch.zeros(2, 3, dtype=dtype))
    yield sample_input(torch.arange(6).reshape(2, 3).to(dtype), torch.zeros(3, 2, dtype=dtype))  # same elements: a reshape
    yield sample_input(torch.zeros(0, 4, dtype=dtype), torch.zeros(4, 0, dtype=dtype))
    yield sample_input(torch.tensor(3).to(dtype), torch.zeros(1, 1, dtype=dtype))
    yield sample_input(torch.arange(6).reshape(2, 3).to(dtype), torch.zeros(1, 2, dtype=dtype))  # a shrink: the first 2


def _resize(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input(torch.arange(6).reshape(2, 3).to(dtype), [2, 3])
    yield sample_input(torch.arange(6).reshape(2, 3).to(dtype), [6])
    yield sample_input(torch.zeros(0, 4, dtype=dtype), [2, 0, 3])
    yield sample_input(torch.arange(6).reshape(2, 3).to(dtype), [2, 2])  # a shrink: the first 4 (a growth's new elements are garbage in torch)


ENTRIES = [
    Entry('aten_sym_stride_int', samples=_dims, dtypes=[torch.float32], reference=lambda x, d: x.stride(d),
          xfail=[XFail(_STATIC.format('aten_sym_stride_int'), dtypes=[torch.float32], mode='traced')]),  # sym_stride.int
    Entry('aten_sym_storage_offset', samples=_tensors, dtypes=[torch.float32], reference=lambda x: x.storage_offset(),
          xfail=[XFail(_STATIC.format('aten_sym_storage_offset'), dtypes=[torch.float32], mode='traced')]),  # sym_storage_offset
    Entry('aten_sym_is_contiguous', samples=_tensors, dtypes=[torch.float32], reference=lambda x: x.is_contiguous(),
          xfail=[XFail(_STATIC.format('aten_sym_is_contiguous'), dtypes=[torch.float32], mode='traced')]),  # sym_is_contiguous
    Entry('aten_resize_as', samples=_resize_as, dtypes=_DTYPES, reference=lambda x, t: x.clone().resize_as_(t)),  # resize_as (functional resize_as_)
    Entry('aten_resize', samples=_resize, dtypes=_DTYPES, reference=lambda x, s: x.clone().resize_(s)),  # resize (functional resize_)
    Entry('aten_item', samples=_scalars, dtypes=_DTYPES, reference=_symbolic_item),  # item (CompositeImplicit)
]
