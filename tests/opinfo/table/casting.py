"""Expectations for torchlib/ops/casting.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten__to_copy', reason='TODO'),  # aten::_to_copy
    Entry('aten_lift_fresh', reason='TODO'),  # aten::lift_fresh
    Entry('aten_lift_fresh_copy', reason='TODO'),  # aten::lift_fresh_copy
    Entry('aten_to_device', opinfo=['to']),  # aten::to.device; candidates ['to']
    Entry('aten_to_dtype', opinfo=['to']),  # aten::to.dtype; candidates ['to']
    Entry('aten_to_other', opinfo=['to']),  # aten::to.other; candidates ['to']
    Entry('aten_type_as', reason='TODO'),  # aten::type_as
]
