"""Expectations for torchlib/ops/indexing.py."""

from __future__ import annotations

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry('aten_embedding', opinfo=['nn.functional.embedding']),  # embedding
    Entry('aten_gather', opinfo=['gather']),  # gather
    Entry('aten_index', opinfo=['__getitem__']),  # index.Tensor, index.Tensor_hacked_twin, _unsafe_index.Tensor, _unsafe_index.Tensor_hacked_twin
    Entry('aten_index_add', opinfo=['index_add']),  # index_add
    Entry('aten_index_put', opinfo=['index_put']),  # index_put, index_put.hacked_twin, _unsafe_index_put, _unsafe_index_put.hacked_twin
    Entry('aten_index_select', opinfo=['index_select']),  # index_select
    Entry('aten_scatter_add', opinfo=['scatter_add']),  # scatter_add
    Entry('aten_scatter_reduce', opinfo=[('scatter_reduce', 'sum'), ('scatter_reduce', 'prod'), ('scatter_reduce', 'amin'), ('scatter_reduce', 'amax'), ('scatter_reduce', 'mean')]),  # scatter_reduce.two
    Entry('aten_scatter_reduce_src', opinfo=['scatter']),  # scatter.reduce
    Entry('aten_scatter_reduce_value', opinfo=['scatter']),  # scatter.value_reduce
    Entry('aten_scatter_src', opinfo=['scatter']),  # scatter.src
    Entry('aten_scatter_value', opinfo=['scatter']),  # scatter.value
    Entry('aten_select', opinfo=['select']),  # select.int, select_copy.int
    Entry('aten_select_scatter', opinfo=['select_scatter']),  # select_scatter
    Entry('aten_slice', opinfo=['slice']),  # slice.Tensor, slice_copy.Tensor
    Entry('aten_slice_scatter', opinfo=['slice_scatter']),  # slice_scatter
    Entry('aten_take_along_dim', opinfo=['take_along_dim']),  # take_along_dim (CompositeImplicit)
]
