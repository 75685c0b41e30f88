"""Expectations for torchlib/ops/segments.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate

ENTRIES = [
    # torch's CPU kernel (SegmentReduce.cpp) accumulates each segment in the data's dtype, rounding
    # every float16/bfloat16 addition (and the mean's division); we sum in float32 and round once
    Entry('aten_segment_reduce', opinfo=[('_segment_reduce', 'lengths'), ('_segment_reduce', 'offsets')],
          xfail=[TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16])]),  # segment_reduce
]
