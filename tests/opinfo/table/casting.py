"""Expectations for torchlib/ops/casting.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, call

from . import _helpers as h

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]

ENTRIES = [
    Entry('aten__to_copy', opinfo=['to', 'masked.var']),  # _to_copy
    Entry('aten_copy', samples=h.copy, dtypes=ALL),  # copy (the functional form of copy_)
    Entry('aten_lift_fresh', opinfo=['masked.sum', 'masked.prod']),  # lift_fresh
    Entry('aten_lift_fresh_copy', opinfo=['clone'], aten=['aten::clone'], adapter=lambda c: call(c.args[0])),
    Entry('aten_to_device', opinfo=['to']),  # to.device (CompositeImplicit)
    Entry('aten_to_dtype', opinfo=['to']),  # to.dtype (CompositeImplicit)
    Entry('aten_to_dtype_layout', samples=h.to_dtype_layout, dtypes=ALL, reference=torch.ops.aten.to.dtype_layout),
    Entry('aten_to_other', samples=h.to_other, dtypes=ALL),
    Entry('aten_type_as', samples=h.type_as, dtypes=ALL),
    # view.dtype folds a bitcast on a constant only (ONNX has none): a traced sample, an input, is refused
    Entry('aten_view_dtype', reason="a bitcast, folded on constants only; tested in tests/torchlib/test_narrow_floats.py"),
]
