"""Expectations for torchlib/ops/creation.py."""

from __future__ import annotations

import math
import operator

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

from . import _helpers as h
from ._helpers import scalar_arg

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]
FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

ENTRIES = [
    Entry('aten_arange', opinfo=['arange']),  # arange
    Entry('aten_arange_start', opinfo=['arange']),  # arange.start
    Entry('aten_arange_start_step', opinfo=['arange']),  # arange.start_step
    Entry('aten_empty', opinfo=['empty']),  # empty.memory_format
    Entry('aten_empty_like', opinfo=['empty_like']),  # empty_like
    Entry('aten_empty_strided', opinfo=['empty_strided']),  # empty_strided
    Entry('aten_full', opinfo=['full']),  # full
    Entry('aten_full_like', opinfo=['full_like']),  # full_like
    Entry('aten_linspace', opinfo=['linspace']),  # linspace
    Entry('aten_linspace_scalar_tensor', opinfo=[('linspace', 'tensor_overload')]),  # linspace.Scalar_Tensor
    Entry('aten_linspace_tensor_scalar', opinfo=[('linspace', 'tensor_overload')]),  # linspace.Tensor_Scalar
    Entry('aten_linspace_tensor_tensor', opinfo=[('linspace', 'tensor_overload')]),  # linspace.Tensor_Tensor
    Entry('aten_new_empty', opinfo=['new_empty']),  # new_empty
    Entry('aten_new_full', opinfo=['new_full']),  # new_full
    Entry('aten_new_ones', opinfo=['new_ones']),  # new_ones
    Entry('aten_new_zeros', opinfo=['new_zeros']),  # new_zeros
    Entry('aten_ones', opinfo=['ones']),  # ones
    Entry('aten_ones_like', opinfo=['ones_like']),  # ones_like
    Entry('aten_scalar_tensor', opinfo=['scalar_tensor']),  # scalar_tensor
    Entry('aten_zeros', opinfo=['zeros']),  # zeros
    Entry('aten_zeros_like', opinfo=['zeros_like']),  # zeros_like
]
