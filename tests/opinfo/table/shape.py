"""Expectations for torchlib/ops/shape.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry

from . import _helpers as h

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]

ENTRIES = [
    Entry('aten_alias', opinfo=['nanmean', 'nn.functional.instance_norm']),  # alias, detach
    Entry('aten_cat', opinfo=['cat']),  # cat
    Entry('aten_chunk', opinfo=['chunk']),  # chunk (CompositeImplicit)
    Entry('aten_constant_pad_nd', opinfo=['constant_pad_nd']),  # constant_pad_nd
    Entry('aten_diagonal', opinfo=['diagonal', 'linalg.diagonal']),  # diagonal
    Entry('aten_expand', opinfo=['expand', 'expand_copy']),  # expand, expand_copy
    Entry('aten_expand_as', opinfo=['expand_as']),  # expand_as (CompositeImplicit)
    Entry('aten_flatten', opinfo=['flatten']),  # flatten.using_ints (CompositeImplicit)
    Entry('aten_flip', opinfo=['flip']),  # flip
    Entry('aten_movedim', samples=h.movedim, dtypes=ALL),
    Entry('aten_movedim_intlist', opinfo=['movedim']),  # movedim.intlist (CompositeImplicit)
    Entry('aten_narrow', opinfo=['narrow_copy']),  # narrow, narrow_copy
    Entry('aten_narrow_tensor', opinfo=['narrow']),  # narrow.Tensor (CompositeImplicit)
    Entry('aten_pad', opinfo=[('nn.functional.pad', 'constant'), ('nn.functional.pad', 'reflect'), ('nn.functional.pad', 'replicate')]),  # pad (CompositeImplicit)
    Entry('aten_permute', opinfo=['permute', 'permute_copy']),  # permute, permute_copy
    Entry('aten_repeat', opinfo=['repeat']),  # repeat
    Entry('aten_reshape', opinfo=['reshape']),  # reshape (CompositeImplicit)
    Entry('aten_roll', opinfo=['roll']),  # roll
    Entry('aten_split', opinfo=['split', 'unsafe_split']),  # split.Tensor, unsafe_split.Tensor, split_copy.Tensor
    Entry('aten_split_sizes', samples=h.split_sizes, dtypes=ALL),
    Entry('aten_split_with_sizes', opinfo=['split_with_sizes', 'split_with_sizes_copy', ('split', 'list_args')]),  # split_with_sizes, split, unsafe_split_with_sizes, split_with_sizes_copy
    Entry('aten_squeeze', opinfo=['squeeze', 'squeeze_copy']),  # squeeze, squeeze_copy
    Entry('aten_squeeze_dim', opinfo=['squeeze', 'squeeze_copy']),  # squeeze.dim, squeeze_copy.dim
    Entry('aten_squeeze_dims', opinfo=[('squeeze', 'multiple')]),  # squeeze.dims, squeeze_copy.dims
    Entry('aten_stack', opinfo=['stack']),  # stack
    Entry('aten_tile', opinfo=['tile']),  # tile (CompositeImplicit)
    Entry('aten_transpose', opinfo=['transpose']),  # transpose.int
    Entry('aten_tril', opinfo=['tril']),  # tril
    Entry('aten_triu', opinfo=['triu']),  # triu
    Entry('aten_unbind', opinfo=['unbind']),  # unbind.int
    Entry('aten_unflatten', opinfo=['unflatten']),  # unflatten.int (CompositeImplicit)
    Entry('aten_unfold', opinfo=['unfold']),  # unfold
    Entry('aten_unsqueeze', opinfo=['unsqueeze']),  # unsqueeze
    Entry('aten_view', opinfo=['view', 'view_copy']),  # view, _unsafe_view, view_copy
    Entry('aten_view_as', opinfo=['view_as']),  # view_as (CompositeImplicit)
    Entry('aten_contiguous', samples=h.contiguous, dtypes=ALL),
]
