"""Expectations for torchlib/ops/sort_topk.py."""

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
    Entry('aten_argsort', opinfo=['argsort']),  # argsort (CompositeImplicit)
    Entry('aten_argsort_stable', opinfo=['argsort']),  # argsort.stable (CompositeImplicit)
    Entry('aten_sort', opinfo=['sort']),  # sort
    Entry('aten_sort_stable', opinfo=['sort']),  # sort.stable
    Entry('aten_topk', opinfo=['topk']),  # topk
]
