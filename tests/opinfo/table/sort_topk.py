"""Expectations for torchlib/ops/sort_topk.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

# torch's stable=False sort is std::sort (an introsort): its order among equal values follows its
# pivot choices. This returns the stable order, torch's with stable=True.
UNSTABLE_TIES = ("the indices of equal values follow std::sort's pivots in torch (stable=False); this returns the stable order, "
                 "torch's with stable=True (sample 0 sorts 8000 values with many ties; the values agree)")
UNSTABLE_SAMPLES = [XFail(UNSTABLE_TIES, dtypes=[dtype], samples=[0]) for dtype in (torch.bfloat16, torch.bool, torch.float16)]

TOPK_TIES = ("the indices of equal values: torch.topk orders ties as std::partial_sort / std::nth_element leave them "
             "(pivot-dependent); this returns them in index order (the values agree, and every index points at its value)")

ENTRIES = [
    Entry('aten_argsort', opinfo=['argsort'], xfail=UNSTABLE_SAMPLES),  # argsort (CompositeImplicit)
    Entry('aten_argsort_stable', opinfo=['argsort']),  # argsort.stable (CompositeImplicit)
    Entry('aten_mode', opinfo=['mode'], xfail=[
        XFail("the index of the mode in a slice of 3000 values: torch's CPU kernel std::sorts each slice (an introsort "
              "past 16 elements, not stable) and returns the index its sort leaves last in the mode's run, whichever "
              "occurrence that is; this returns the value's last occurrence (the values agree, and torch's index points "
              "at one occurrence too). In float32 and float64 every value of that sample occurs once: a single index",
              dtypes=[torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.bool], samples=[6]),
    ]),  # mode
    Entry('aten_sort', opinfo=['sort'], xfail=UNSTABLE_SAMPLES),  # sort
    Entry('aten_sort_stable', opinfo=['sort']),  # sort.stable
    Entry('aten_topk', opinfo=['topk'], xfail=[
        XFail(TOPK_TIES, dtypes=[torch.bfloat16], samples=[4, 5, 6]),
        # the OpInfo samples of torch 2.10 and 2.11 put the ties in float16's samples 1-3, not bfloat16's
        XFail(TOPK_TIES, dtypes=[torch.bfloat16], samples=[1, 2, 3], torch_version=">=2.12"),
        XFail(TOPK_TIES, dtypes=[torch.float16], samples=[1, 2, 3], torch_version="<2.12"),
        XFail(TOPK_TIES, dtypes=[torch.int32], samples=[*range(0, 7)]),
        XFail(TOPK_TIES, dtypes=[torch.int64], samples=[*range(0, 7)]),
    ]),  # topk
]
