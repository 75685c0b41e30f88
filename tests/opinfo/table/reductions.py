"""Expectations for torchlib/ops/reductions.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, sample_input

from . import _helpers as h
from . import _own_samples as own

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]

def _powsum(dtype: torch.dtype):
    """linalg__powsum (no OpInfo): every kind of order (zeros in the input for 0 ** 0 and
    0 ** -1), dims, keepdim, and a wider dtype."""
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5, dtype=dtype)
    x[0, 0, :2] = 0
    for ord in (2, 1, 3, 0.5, 0, -1, float('inf'), -float('inf')):
        yield sample_input(x, ord)
    yield sample_input(x, 2, [1], True)
    yield sample_input(x, 3, [0, 2])
    yield sample_input(x, 1.5, [-1], False, dtype=torch.float64)
    yield sample_input(torch.randn((), dtype=dtype), 2)


ENTRIES = [
    Entry('aten_all', opinfo=['all']),  # all
    Entry('aten_is_all_true', samples=own.truth_tensors, dtypes=[torch.bool]),
    Entry('aten_is_any_true', samples=own.truth_tensors, dtypes=[torch.bool]),
    Entry('aten_all_dim', opinfo=['all']),  # all.dim
    Entry('aten_all_dims', opinfo=['all']),  # all.dims
    Entry('aten_amax', opinfo=['amax']),  # amax
    Entry('aten_amin', opinfo=['amin']),  # amin
    Entry('aten_any', opinfo=['any']),  # any
    Entry('aten_any_dim', opinfo=['any']),  # any.dim
    Entry('aten_any_dims', opinfo=['any']),  # any.dims
    Entry('aten_argmax', opinfo=['argmax']),  # argmax
    Entry('aten_argmin', opinfo=['argmin']),  # argmin
    Entry('aten_cumprod', opinfo=['cumprod']),  # cumprod
    Entry('aten_cumsum', opinfo=['cumsum']),  # cumsum
    Entry('aten_linalg_vector_norm', opinfo=['norm', 'linalg.norm']),  # linalg_vector_norm
    Entry('aten_linalg__powsum', samples=_powsum, dtypes=[torch.float32, torch.float16, torch.bfloat16, torch.float64], torch_version='>=2.11'),
    Entry('aten_logsumexp', opinfo=['logsumexp']),  # logsumexp
    Entry('aten_max', opinfo=[('max', 'reduction_no_dim')]),  # max
    Entry('aten_max_dim', opinfo=[('max', 'reduction_with_dim')]),  # max.dim
    Entry('aten_max_other', opinfo=[('max', 'reduction_with_dim'), ('max', 'reduction_no_dim'), ('max', 'binary')]),  # max.other (CompositeImplicit)
    Entry('aten_mean', opinfo=['mean']),  # mean
    Entry('aten_mean_dim', opinfo=['mean']),  # mean.dim
    Entry('aten_min', opinfo=[('min', 'reduction_no_dim')]),  # min
    Entry('aten_min_dim', opinfo=[('min', 'reduction_with_dim')]),  # min.dim
    Entry('aten_min_other', opinfo=[('min', 'reduction_with_dim'), ('min', 'reduction_no_dim'), ('min', 'binary')]),  # min.other (CompositeImplicit)
    Entry('aten_norm_Scalar', samples=h.norms('Scalar'), dtypes=FLOATS),
    Entry('aten_norm_ScalarOpt_dim', opinfo=['nn.functional.triplet_margin_loss', 'nn.functional.triplet_margin_with_distance_loss']),  # norm.ScalarOpt_dim
    Entry('aten_norm_ScalarOpt_dim_dtype', samples=h.norms('ScalarOpt_dim_dtype'), dtypes=FLOATS),
    Entry('aten_norm_ScalarOpt_dtype', samples=h.norms('ScalarOpt_dtype'), dtypes=FLOATS),
    Entry('aten_prod', opinfo=['prod']),  # prod
    Entry('aten_prod_dim_int', opinfo=['prod']),  # prod.dim_int
    Entry('aten_std', opinfo=['std', ('std', 'unbiased')]),  # std (CompositeImplicit)
    Entry('aten_std_correction', opinfo=['std', ('std', 'unbiased')]),  # std.correction
    Entry('aten_std_dim', opinfo=['std', ('std', 'unbiased')]),  # std.dim (CompositeImplicit)
    Entry('aten_std_mean', opinfo=['std_mean', ('std_mean', 'unbiased')]),  # std_mean (CompositeImplicit)
    Entry('aten_std_mean_correction', opinfo=['std_mean', ('std_mean', 'unbiased')]),  # std_mean.correction
    Entry('aten_std_mean_dim', opinfo=['std_mean', ('std_mean', 'unbiased')]),  # std_mean.dim (CompositeImplicit)
    Entry('aten_sum', opinfo=['sum']),  # sum
    Entry('aten_sum_dim_IntList', opinfo=['sum']),  # sum.dim_IntList
    Entry('aten_var', opinfo=['var', ('var', 'unbiased')]),  # var (CompositeImplicit)
    Entry('aten_var_correction', opinfo=['var', ('var', 'unbiased')]),  # var.correction
    Entry('aten_var_dim', opinfo=['var', ('var', 'unbiased')]),  # var.dim (CompositeImplicit)
    Entry('aten_var_mean', opinfo=['var_mean', ('var_mean', 'unbiased')]),  # var_mean (CompositeImplicit)
    Entry('aten_var_mean_correction', opinfo=['var_mean', ('var_mean', 'unbiased')]),  # var_mean.correction
    Entry('aten_var_mean_dim', opinfo=['var_mean', ('var_mean', 'unbiased')]),  # var_mean.dim (CompositeImplicit)
]
