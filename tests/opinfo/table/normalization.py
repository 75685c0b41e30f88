"""Expectations for torchlib/ops/normalization.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate
from torchlib.torch_version import torch_matches

from . import _helpers as h

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

ENTRIES = [
    Entry('aten__batch_norm_no_update', samples=h.batch_norm_no_update, dtypes=FLOATS),
    Entry('aten__batch_norm_with_update', opinfo=['_batch_norm_with_update'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # _batch_norm_with_update
    Entry('aten__fused_rms_norm', samples=h.rms_norm, dtypes=FLOATS),
    Entry('aten__native_batch_norm_legit', opinfo=['_native_batch_norm_legit'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # _native_batch_norm_legit
    Entry('aten__native_batch_norm_legit_functional', samples=h.batch_norm_functional, dtypes=FLOATS, xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),
    Entry('aten__native_batch_norm_legit_no_stats', opinfo=['_native_batch_norm_legit'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16])]),  # _native_batch_norm_legit.no_stats
    Entry('aten__native_batch_norm_legit_no_training', samples=h.batch_norm_no_update, dtypes=FLOATS),
    Entry('aten_batch_norm', opinfo=['nn.functional.batch_norm', ('nn.functional.batch_norm', 'without_cudnn')], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
    ]),  # batch_norm (CompositeImplicit)
    Entry('aten_group_norm', opinfo=['nn.functional.group_norm']),  # group_norm (CompositeImplicit)
    Entry('aten_layer_norm', opinfo=['nn.functional.layer_norm']),  # layer_norm (CompositeImplicit)
    Entry('aten_native_batch_norm', opinfo=['native_batch_norm', 'nn.functional.batch_norm'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # native_batch_norm
    Entry('aten_native_group_norm', opinfo=[*(['native_group_norm'] if torch_matches('>=2.13') else []), 'nn.functional.group_norm']),  # its OpInfo: 2.13's op_db on
    Entry('aten_native_layer_norm', opinfo=['native_layer_norm', 'nn.functional.layer_norm'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # native_layer_norm
    Entry('aten_rms_norm', opinfo=['nn.functional.rms_norm']),  # rms_norm (CompositeImplicit)
]
