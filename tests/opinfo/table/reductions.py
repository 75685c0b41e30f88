"""Expectations for torchlib/ops/reductions.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_all', opinfo=['all']),  # aten::all; candidates ['all']
    Entry('aten_all_dim', opinfo=['all']),  # aten::all.dim; candidates ['all']
    Entry('aten_all_dims', opinfo=['all']),  # aten::all.dims; candidates ['all']
    Entry('aten_amax', opinfo=['amax']),  # aten::amax; candidates ['amax']
    Entry('aten_amin', opinfo=['amin']),  # aten::amin; candidates ['amin']
    Entry('aten_any', opinfo=['any']),  # aten::any; candidates ['any']
    Entry('aten_any_dim', opinfo=['any']),  # aten::any.dim; candidates ['any']
    Entry('aten_any_dims', opinfo=['any']),  # aten::any.dims; candidates ['any']
    Entry('aten_argmax', opinfo=['argmax']),  # aten::argmax; candidates ['argmax']
    Entry('aten_argmin', opinfo=['argmin']),  # aten::argmin; candidates ['argmin']
    Entry('aten_cumprod', opinfo=['cumprod']),  # aten::cumprod; candidates ['cumprod']
    Entry('aten_cumsum', opinfo=['cumsum']),  # aten::cumsum; candidates ['cumsum']
    Entry('aten_linalg_vector_norm', reason='TODO'),  # aten::linalg_vector_norm
    Entry('aten_logsumexp', opinfo=['logsumexp']),  # aten::logsumexp; candidates ['logsumexp']
    Entry('aten_max', opinfo=[('max', 'reduction_with_dim')]),  # aten::max; candidates [('max', 'reduction_with_dim'), ('max', 'reduction_no_dim'), ('max', 'binary')]
    Entry('aten_max_dim', opinfo=[('max', 'reduction_with_dim')]),  # aten::max.dim; candidates [('max', 'reduction_with_dim'), ('max', 'reduction_no_dim'), ('max', 'binary')]
    Entry('aten_mean', opinfo=['mean']),  # aten::mean; candidates ['mean']
    Entry('aten_mean_dim', opinfo=['mean']),  # aten::mean.dim; candidates ['mean']
    Entry('aten_min', opinfo=[('min', 'reduction_with_dim')]),  # aten::min; candidates [('min', 'reduction_with_dim'), ('min', 'reduction_no_dim'), ('min', 'binary')]
    Entry('aten_min_dim', opinfo=[('min', 'reduction_with_dim')]),  # aten::min.dim; candidates [('min', 'reduction_with_dim'), ('min', 'reduction_no_dim'), ('min', 'binary')]
    Entry('aten_norm_Scalar', opinfo=['norm']),  # aten::norm.Scalar; candidates ['norm', ('norm', 'nuc'), ('norm', 'fro'), ('norm', 'inf'), 'linalg.norm', ('linalg.norm', 'subgradients_at_zero')]
    Entry('aten_norm_ScalarOpt_dim', opinfo=['norm']),  # aten::norm.ScalarOpt_dim; candidates ['norm', ('norm', 'nuc'), ('norm', 'fro'), ('norm', 'inf'), 'linalg.norm', ('linalg.norm', 'subgradients_at_zero')]
    Entry('aten_norm_ScalarOpt_dim_dtype', opinfo=['norm']),  # aten::norm.ScalarOpt_dim_dtype; candidates ['norm', ('norm', 'nuc'), ('norm', 'fro'), ('norm', 'inf'), 'linalg.norm', ('linalg.norm', 'subgradients_at_zero')]
    Entry('aten_norm_ScalarOpt_dtype', opinfo=['norm']),  # aten::norm.ScalarOpt_dtype; candidates ['norm', ('norm', 'nuc'), ('norm', 'fro'), ('norm', 'inf'), 'linalg.norm', ('linalg.norm', 'subgradients_at_zero')]
    Entry('aten_prod', opinfo=['prod']),  # aten::prod; candidates ['prod']
    Entry('aten_prod_dim_int', opinfo=['prod']),  # aten::prod.dim_int; candidates ['prod']
    Entry('aten_std', opinfo=['std']),  # aten::std; candidates ['std', ('std', 'unbiased')]
    Entry('aten_std_correction', opinfo=['std']),  # aten::std.correction; candidates ['std', ('std', 'unbiased')]
    Entry('aten_std_dim', opinfo=['std']),  # aten::std.dim; candidates ['std', ('std', 'unbiased')]
    Entry('aten_std_mean', opinfo=['std_mean']),  # aten::std_mean; candidates ['std_mean', ('std_mean', 'unbiased')]
    Entry('aten_std_mean_correction', opinfo=['std_mean']),  # aten::std_mean.correction; candidates ['std_mean', ('std_mean', 'unbiased')]
    Entry('aten_std_mean_dim', opinfo=['std_mean']),  # aten::std_mean.dim; candidates ['std_mean', ('std_mean', 'unbiased')]
    Entry('aten_sum', opinfo=['sum']),  # aten::sum; candidates ['sum']
    Entry('aten_sum_dim_IntList', opinfo=['sum']),  # aten::sum.dim_IntList; candidates ['sum']
    Entry('aten_var', opinfo=['var']),  # aten::var; candidates ['var', ('var', 'unbiased')]
    Entry('aten_var_correction', opinfo=['var']),  # aten::var.correction; candidates ['var', ('var', 'unbiased')]
    Entry('aten_var_dim', opinfo=['var']),  # aten::var.dim; candidates ['var', ('var', 'unbiased')]
    Entry('aten_var_mean', opinfo=['var_mean']),  # aten::var_mean; candidates ['var_mean', ('var_mean', 'unbiased')]
    Entry('aten_var_mean_correction', opinfo=['var_mean']),  # aten::var_mean.correction; candidates ['var_mean', ('var_mean', 'unbiased')]
    Entry('aten_var_mean_dim', opinfo=['var_mean']),  # aten::var_mean.dim; candidates ['var_mean', ('var_mean', 'unbiased')]
]
