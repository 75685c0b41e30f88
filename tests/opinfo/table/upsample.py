"""Expectations for torchlib/ops/upsample.py."""

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
    Entry('aten__upsample_bicubic2d_aa', reason='no OpInfo reaches it: op_db has antialiased samples only for bilinear (_upsample_bilinear2d_aa)'),
    Entry('aten__upsample_bicubic2d_aa_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten__upsample_bilinear2d_aa', opinfo=['_upsample_bilinear2d_aa']),  # _upsample_bilinear2d_aa
    Entry('aten__upsample_bilinear2d_aa_vec', opinfo=['_upsample_bilinear2d_aa']),  # _upsample_bilinear2d_aa.vec (CompositeImplicit)
    Entry('aten__upsample_nearest_exact1d', opinfo=[('nn.functional.interpolate', 'nearest-exact')]),  # _upsample_nearest_exact1d
    Entry('aten__upsample_nearest_exact1d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten__upsample_nearest_exact2d', opinfo=[('nn.functional.interpolate', 'nearest-exact')]),  # _upsample_nearest_exact2d
    Entry('aten__upsample_nearest_exact2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten__upsample_nearest_exact3d', opinfo=[('nn.functional.interpolate', 'nearest-exact')]),  # _upsample_nearest_exact3d
    Entry('aten__upsample_nearest_exact3d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_bicubic2d', opinfo=[('nn.functional.interpolate', 'bicubic')]),  # upsample_bicubic2d
    Entry('aten_upsample_bicubic2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_bilinear2d', opinfo=[('nn.functional.interpolate', 'bilinear'), 'nn.functional.upsample_bilinear']),  # upsample_bilinear2d
    Entry('aten_upsample_bilinear2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_linear1d', opinfo=[('nn.functional.interpolate', 'linear')]),  # upsample_linear1d
    Entry('aten_upsample_linear1d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_nearest1d', opinfo=[('nn.functional.interpolate', 'nearest'), 'nn.functional.upsample_nearest']),  # upsample_nearest1d
    Entry('aten_upsample_nearest1d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_nearest2d', opinfo=[('nn.functional.interpolate', 'nearest'), 'nn.functional.upsample_nearest']),  # upsample_nearest2d
    Entry('aten_upsample_nearest2d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_nearest3d', opinfo=[('nn.functional.interpolate', 'nearest'), 'nn.functional.upsample_nearest']),  # upsample_nearest3d
    Entry('aten_upsample_nearest3d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
    Entry('aten_upsample_trilinear3d', opinfo=[('nn.functional.interpolate', 'trilinear')]),  # upsample_trilinear3d
    Entry('aten_upsample_trilinear3d_vec', opinfo=[('nn.functional.interpolate', v) for v in ('nearest', 'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear')] + ['nn.functional.upsample_bilinear', 'nn.functional.upsample_nearest']),
]
