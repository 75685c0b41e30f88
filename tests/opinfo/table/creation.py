"""Expectations for torchlib/ops/creation.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_arange', opinfo=['arange']),  # aten::arange; candidates ['arange']
    Entry('aten_arange_start', opinfo=['arange']),  # aten::arange.start; candidates ['arange']
    Entry('aten_arange_start_step', opinfo=['arange']),  # aten::arange.start_step; candidates ['arange']
    Entry('aten_empty', opinfo=['empty']),  # aten::empty.memory_format; candidates ['empty']
    Entry('aten_empty_like', opinfo=['empty_like']),  # aten::empty_like; candidates ['empty_like']
    Entry('aten_empty_strided', opinfo=['empty_strided']),  # aten::empty_strided; candidates ['empty_strided']
    Entry('aten_full', opinfo=['full']),  # aten::full; candidates ['full']
    Entry('aten_full_like', opinfo=['full_like']),  # aten::full_like; candidates ['full_like']
    Entry('aten_linspace', opinfo=['linspace']),  # aten::linspace; candidates ['linspace', ('linspace', 'tensor_overload')]
    Entry('aten_linspace_scalar_tensor', opinfo=['linspace']),  # aten::linspace.Scalar_Tensor; candidates ['linspace', ('linspace', 'tensor_overload')]
    Entry('aten_linspace_tensor_scalar', opinfo=['linspace']),  # aten::linspace.Tensor_Scalar; candidates ['linspace', ('linspace', 'tensor_overload')]
    Entry('aten_linspace_tensor_tensor', opinfo=['linspace']),  # aten::linspace.Tensor_Tensor; candidates ['linspace', ('linspace', 'tensor_overload')]
    Entry('aten_new_empty', opinfo=['new_empty']),  # aten::new_empty; candidates ['new_empty']
    Entry('aten_new_full', opinfo=['new_full']),  # aten::new_full; candidates ['new_full']
    Entry('aten_new_ones', opinfo=['new_ones']),  # aten::new_ones; candidates ['new_ones']
    Entry('aten_new_zeros', opinfo=['new_zeros']),  # aten::new_zeros; candidates ['new_zeros']
    Entry('aten_ones', opinfo=['ones']),  # aten::ones; candidates ['ones']
    Entry('aten_ones_like', opinfo=['ones_like']),  # aten::ones_like; candidates ['ones_like']
    Entry('aten_scalar_tensor', opinfo=['scalar_tensor']),  # aten::scalar_tensor; candidates ['scalar_tensor']
    Entry('aten_zeros', opinfo=['zeros']),  # aten::zeros; candidates ['zeros']
    Entry('aten_zeros_like', opinfo=['zeros_like']),  # aten::zeros_like; candidates ['zeros_like']
]
