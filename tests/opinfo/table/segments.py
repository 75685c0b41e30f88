"""Expectations for torchlib/ops/segments.py."""

from __future__ import annotations

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry('aten_segment_reduce', opinfo=[('_segment_reduce', 'lengths'), ('_segment_reduce', 'offsets')]),  # segment_reduce
]
