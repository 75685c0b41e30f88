"""Expectations for torchlib/ops/creation.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate

ENTRIES = [
    Entry('aten_arange', opinfo=['arange']),  # arange
    Entry('aten_arange_start', opinfo=['arange']),  # arange.start
    Entry('aten_arange_start_step', opinfo=['arange']),  # arange.start_step
    Entry('aten_empty', opinfo=['empty'], compare='shape'),  # empty.memory_format
    Entry('aten_empty_like', opinfo=['empty_like'], compare='shape'),  # empty_like
    Entry('aten_empty_strided', opinfo=['empty_strided'], compare='shape'),  # empty_strided
    Entry('aten_full', opinfo=['full']),  # full
    Entry('aten_full_like', opinfo=['full_like']),  # full_like
    Entry('aten_linspace', opinfo=['linspace'], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
    ]),  # linspace
    Entry('aten_linspace_scalar_tensor', opinfo=[('linspace', 'tensor_overload')], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
    ]),  # linspace.Scalar_Tensor
    Entry('aten_linspace_tensor_scalar', opinfo=[('linspace', 'tensor_overload')], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
    ]),  # linspace.Tensor_Scalar
    Entry('aten_linspace_tensor_tensor', opinfo=[('linspace', 'tensor_overload')], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
    ]),  # linspace.Tensor_Tensor
    Entry('aten_new_empty', opinfo=['new_empty'], compare='shape'),  # new_empty
    Entry('aten_new_full', opinfo=['new_full']),  # new_full
    Entry('aten_new_ones', opinfo=['new_ones']),  # new_ones
    Entry('aten_new_zeros', opinfo=['new_zeros']),  # new_zeros
    Entry('aten_ones', opinfo=['ones']),  # ones
    Entry('aten_ones_like', opinfo=['ones_like']),  # ones_like
    Entry('aten_scalar_tensor', opinfo=['scalar_tensor']),  # scalar_tensor
    Entry('aten_zeros', opinfo=['zeros']),  # zeros
    Entry('aten_zeros_like', opinfo=['zeros_like']),  # zeros_like
]
