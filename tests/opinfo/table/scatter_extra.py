"""Expectations for torchlib/ops/scatter_extra.py."""

from __future__ import annotations

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry('aten_index_copy', opinfo=['index_copy']),  # index_copy
    Entry('aten_put', opinfo=['put']),  # put
]
