"""Expectations for torchlib/ops/normalization.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten__batch_norm_no_update', reason='TODO'),  # aten::_batch_norm_no_update
    Entry('aten__batch_norm_with_update', opinfo=['_batch_norm_with_update']),  # aten::_batch_norm_with_update; candidates ['_batch_norm_with_update']
    Entry('aten__fused_rms_norm', reason='TODO'),  # aten::_fused_rms_norm
    Entry('aten__native_batch_norm_legit', opinfo=['_native_batch_norm_legit']),  # aten::_native_batch_norm_legit; candidates ['_native_batch_norm_legit']
    Entry('aten__native_batch_norm_legit_functional', reason='TODO'),  # aten::_native_batch_norm_legit_functional
    Entry('aten__native_batch_norm_legit_no_stats', opinfo=['_native_batch_norm_legit']),  # aten::_native_batch_norm_legit.no_stats; candidates ['_native_batch_norm_legit']
    Entry('aten__native_batch_norm_legit_no_training', reason='TODO'),  # aten::_native_batch_norm_legit_no_training
    Entry('aten_batch_norm', opinfo=['nn.functional.batch_norm']),  # aten::batch_norm; candidates ['nn.functional.batch_norm', ('nn.functional.batch_norm', 'without_cudnn')]
    Entry('aten_group_norm', opinfo=['nn.functional.group_norm']),  # aten::group_norm; candidates ['nn.functional.group_norm']
    Entry('aten_layer_norm', opinfo=['nn.functional.layer_norm']),  # aten::layer_norm; candidates ['nn.functional.layer_norm']
    Entry('aten_native_batch_norm', opinfo=['native_batch_norm']),  # aten::native_batch_norm; candidates ['native_batch_norm', 'nn.functional.batch_norm', ('nn.functional.batch_norm', 'without_cudnn')]
    Entry('aten_native_group_norm', opinfo=['native_group_norm']),  # aten::native_group_norm; candidates ['native_group_norm', 'nn.functional.group_norm']
    Entry('aten_native_layer_norm', opinfo=['native_layer_norm']),  # aten::native_layer_norm; candidates ['native_layer_norm', 'nn.functional.layer_norm']
    Entry('aten_rms_norm', opinfo=['nn.functional.rms_norm']),  # aten::rms_norm; candidates ['nn.functional.rms_norm']
]
