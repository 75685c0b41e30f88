"""Expectations for torchlib/ops/attention.py."""

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
    Entry('aten_scaled_dot_product_attention', opinfo=['nn.functional.scaled_dot_product_attention']),  # scaled_dot_product_attention (CompositeImplicit)
]
