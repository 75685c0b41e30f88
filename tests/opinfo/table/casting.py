"""Expectations for torchlib/ops/casting.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten__to_copy', opinfo=['to', 'masked.var']),  # _to_copy
    Entry('aten_lift_fresh', opinfo=['masked.sum', 'masked.prod']),  # lift_fresh
    Entry('aten_lift_fresh_copy', reason='TODO'),  # lift_fresh_copy: no OpInfo sample calls it
    Entry('aten_to_device', opinfo=['to']),  # to.device (CompositeImplicit)
    Entry('aten_to_dtype', opinfo=['to']),  # to.dtype (CompositeImplicit)
    Entry('aten_to_other', opinfo=['to']),  # to.other (CompositeImplicit)
    Entry('aten_type_as', reason='TODO'),  # type_as CIA
]
