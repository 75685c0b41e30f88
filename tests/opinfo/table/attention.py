"""Expectations for torchlib/ops/attention.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_scaled_dot_product_attention', opinfo=['nn.functional.scaled_dot_product_attention']),  # scaled_dot_product_attention (CompositeImplicit)
]
