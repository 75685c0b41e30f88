"""Expectations for torchlib/ops/linalg/products.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate
from torchlib.torch_version import torch_matches

from . import _own_samples as own

ENTRIES = [
    Entry('aten_addmm', opinfo=['addmm', ('addmm', 'decomposed')]),  # addmm
    Entry('aten_addmm_dtype', samples=own.addmm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.addmm_dtype_reference),  # addmm.dtype is CUDA-only in torch: compared with addmm in out_dtype
    Entry('aten_addmv', opinfo=['addmv']),  # addmv
    Entry('aten_baddbmm', opinfo=['baddbmm']),  # baddbmm
    Entry('aten_baddbmm_dtype', samples=own.baddbmm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.baddbmm_dtype_reference),  # CUDA-only in torch
    Entry('aten_bmm', opinfo=[*([('bmm', 'triton_optimized')] if torch_matches('>=2.13') else []), 'bmm']),  # bmm; the variant: 2.13's op_db on
    Entry('aten_bmm_dtype', samples=own.bmm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.bmm_dtype_reference),  # CUDA-only in torch
    Entry('aten_dot', opinfo=['dot']),  # dot
    Entry('aten_linear', opinfo=['nn.functional.linear'], xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),
    ]),  # linear (CompositeImplicit)
    Entry('aten_matmul', opinfo=['matmul']),  # matmul (CompositeImplicit)
    Entry('aten_mm', opinfo=['mm']),  # mm
    Entry('aten_mm_dtype', samples=own.mm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.mm_dtype_reference),  # CUDA-only in torch
    Entry('aten_mv', opinfo=['mv']),  # mv
    Entry('aten_outer', opinfo=['outer']),  # outer (CompositeImplicit)
    Entry('aten_t', opinfo=['t']),  # t
]
