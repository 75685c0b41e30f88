"""Expectations for torchlib/ops/sort_topk.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_argsort', opinfo=['argsort']),  # aten::argsort; candidates ['argsort']
    Entry('aten_argsort_stable', opinfo=['argsort']),  # aten::argsort.stable; candidates ['argsort']
    Entry('aten_sort', opinfo=['sort']),  # aten::sort; candidates ['sort']
    Entry('aten_sort_stable', opinfo=['sort']),  # aten::sort.stable; candidates ['sort']
    Entry('aten_topk', opinfo=['topk']),  # aten::topk; candidates ['topk']
]
