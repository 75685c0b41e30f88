"""Expectations for torchlib/ops/sort_topk.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_argsort', opinfo=['argsort']),  # argsort (CompositeImplicit)
    Entry('aten_argsort_stable', opinfo=['argsort']),  # argsort.stable (CompositeImplicit)
    Entry('aten_sort', opinfo=['sort']),  # sort
    Entry('aten_sort_stable', opinfo=['sort']),  # sort.stable
    Entry('aten_topk', opinfo=['topk']),  # topk
]
