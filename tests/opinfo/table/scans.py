"""Expectations for torchlib/ops/scans.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

ENTRIES = [
    Entry('aten_aminmax', opinfo=['aminmax']),  # aminmax
    Entry('aten_count_nonzero', opinfo=['count_nonzero']),  # count_nonzero
    Entry('aten_count_nonzero_dim_IntList', opinfo=['count_nonzero']),  # count_nonzero.dim_IntList
    Entry('aten_cummax', opinfo=['cummax']),  # cummax
    Entry('aten_cummin', opinfo=['cummin']),  # cummin
    Entry('aten_kthvalue', opinfo=['kthvalue'], xfail=[
        XFail("the index among equal values: torch.kthvalue picks whichever tie std::nth_element's pivots leave at rank k; "
              "this returns the k-th in the stable order (the values agree)", dtypes=[torch.int32, torch.int64], samples=[0, 1, 2, 3, 4]),
    ]),  # kthvalue
    Entry('aten_logcumsumexp', opinfo=['logcumsumexp']),  # logcumsumexp
    Entry('aten_median', opinfo=['median']),  # median
    Entry('aten_median_dim', opinfo=['median']),  # median.dim
    Entry('aten_msort', opinfo=['msort']),  # msort (CompositeImplicit)
    Entry('aten_nanmedian', opinfo=['nanmedian']),  # nanmedian
    Entry('aten_nanmedian_dim', opinfo=['nanmedian']),  # nanmedian.dim
    Entry('aten_nanmean', opinfo=['nanmean']),  # nanmean (CompositeImplicit)
    Entry('aten_nansum', opinfo=['nansum']),  # nansum
]
