"""Expectations for torchlib/ops/tensor_extra.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, XFail, sample_input


def _swapaxes(dtype: torch.dtype) -> Iterator[Any]:
    x = torch.arange(24).reshape(2, 3, 4).to(dtype)
    yield sample_input(x, 0, 2)
    yield sample_input(x, -1, 1)
    yield sample_input(torch.ones((), dtype=dtype), 0, -1)


def _meshgrid(dtype: torch.dtype) -> Iterator[Any]:
    yield sample_input([torch.arange(3).to(dtype), torch.arange(2).to(dtype)])
    yield sample_input([torch.ones(4, dtype=dtype), torch.zeros((), dtype=dtype), torch.arange(2).to(dtype)])
    yield sample_input([torch.arange(5).to(dtype)])


def _col2im(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(0)
    yield sample_input(torch.randn(2, 12, 12, generator=g).to(dtype), [4, 5], [2, 2], [1, 1], [0, 0], [1, 1])
    yield sample_input(torch.randn(8, 6, generator=g).to(dtype), [3, 4], [2, 2], [1, 1], [1, 1], [2, 2])
    yield sample_input(torch.randn(1, 6, 4, generator=g).to(dtype), [5, 5], [1, 3], [2, 1], [0, 1], [2, 2])


ENTRIES = [
    Entry('aten_as_strided', opinfo=['as_strided', ('as_strided', 'partial_views')], xfail=[
        XFail("the input is x = base[5:15] of a 20-element storage and storage_offset (0 in sample 1, 10 in sample 2) "
              "counts from the storage's start, so torch reads elements outside x (storage[0:4]) or x[5:] shifted by x's own "
              "offset; an ONNX tensor (and any tensor inside an exported graph) holds only its own elements, with no storage "
              "or offset to read around it", samples=[1, 2], opinfo='as_strided.partial_views'),
    ]),  # as_strided
    Entry('aten_bucketize_Tensor', opinfo=['bucketize']),  # bucketize.Tensor
    Entry('aten_col2im', samples=_col2im, dtypes=[torch.float32, torch.float16, torch.bfloat16, torch.float64]),  # col2im
    Entry('aten_combinations', opinfo=['combinations']),  # combinations (CompositeImplicit)
    Entry('aten_cross', opinfo=['cross', 'linalg.cross']),  # cross (CompositeImplicit)
    Entry('aten_diag', opinfo=['diag']),  # diag (CompositeImplicit)
    Entry('aten_diag_embed', opinfo=['diag_embed']),  # diag_embed
    Entry('aten_einsum', opinfo=['einsum']),  # einsum (CompositeImplicit)
    Entry('aten_im2col', opinfo=['nn.functional.unfold']),  # im2col
    Entry('aten_index_fill_int_Scalar', opinfo=['index_fill']),  # index_fill.int_Scalar
    Entry('aten_index_fill_int_Tensor', opinfo=['index_fill']),  # index_fill.int_Tensor
    Entry('aten_kron', opinfo=['kron']),  # kron (CompositeImplicit)
    Entry('aten_linalg_cross', opinfo=['linalg.cross', 'cross']),  # linalg_cross
    Entry('aten_masked_scatter', opinfo=['masked_scatter']),  # masked_scatter
    Entry('aten_meshgrid', samples=_meshgrid, dtypes=[torch.float32, torch.bfloat16, torch.int64, torch.bool]),  # meshgrid (CompositeImplicit)
    Entry('aten_meshgrid_indexing', opinfo=[('meshgrid', 'variadic_tensors'), ('meshgrid', 'list_of_tensors')]),  # meshgrid.indexing (CompositeImplicit)
    Entry('aten_nonzero', opinfo=['nonzero']),  # nonzero
    Entry('aten_nonzero_static', opinfo=['nonzero_static']),  # nonzero_static
    Entry('aten_one_hot', opinfo=['nn.functional.one_hot']),  # one_hot (CompositeImplicit)
    Entry('aten_repeat_interleave_Tensor', opinfo=['repeat_interleave']),  # repeat_interleave.Tensor
    Entry('aten_repeat_interleave_self_int', opinfo=['repeat_interleave']),  # repeat_interleave.self_int (CompositeImplicit)
    Entry('aten_repeat_interleave_self_Tensor', opinfo=['repeat_interleave']),  # repeat_interleave.self_Tensor (CompositeImplicit)
    Entry('aten_rot90', opinfo=['rot90']),  # rot90
    Entry('aten_searchsorted_Tensor', opinfo=['searchsorted']),  # searchsorted.Tensor
    Entry('aten_swapaxes', samples=_swapaxes, dtypes=[torch.float32, torch.float16, torch.int64, torch.bool]),  # swapaxes (CompositeImplicit)
    Entry('aten_trace', opinfo=['trace']),  # trace
    Entry('aten_tril_indices', opinfo=['tril_indices']),  # tril_indices
    Entry('aten_triu_indices', opinfo=['triu_indices']),  # triu_indices
]
