"""Expectations for torchlib/ops/fractional_pool.py."""

from __future__ import annotations

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry('aten_fractional_max_pool2d', opinfo=['nn.functional.fractional_max_pool2d']),  # fractional_max_pool2d
    Entry('aten_fractional_max_pool3d', opinfo=['nn.functional.fractional_max_pool3d']),  # fractional_max_pool3d
]
