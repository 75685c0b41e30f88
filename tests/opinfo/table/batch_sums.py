"""Expectations for torchlib/ops/batch_sums.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate

ENTRIES = [
    # mean: torch index_add_s the sources into self in the dtype (each bfloat16 addition rounds) and
    # divides in it; we sum in float32 and round once
    Entry('aten_index_reduce', opinfo=[('index_reduce', r) for r in ('prod', 'mean', 'amax', 'amin')], xfail=[
        TorchLessAccurate(dtypes=[torch.float16, torch.bfloat16], opinfo='index_reduce.mean'),
    ]),  # index_reduce
    # float32: torch rounds after each batch element's addmm, we sum the batch in one product (1.4e-5 apart)
    Entry('aten_addbmm', opinfo=['addbmm'], tol={torch.float32: (2e-5, 2e-5)},
          tol_reason="torch rounds after each batch element's addmm, we sum the batch in one product: 1.4e-5 apart in float32"),  # addbmm
    Entry('aten_diff', opinfo=['diff'], route='public'),  # diff (CompositeImplicit)
]
