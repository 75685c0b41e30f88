"""Expectations for torchlib/ops/linalg/products.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, XFail

from . import _own_samples as own

_HALF_STEPS = ('we are less accurate than torch in float16: the product is rounded to float16 by MatMul and again by each of the alpha, beta and bias steps, '
               'where torch accumulates and scales in float32 and rounds once; fix: compute in float32 and cast back once (left to the linalg rework)')

ENTRIES = [
    Entry('aten_addmm', opinfo=['addmm', ('addmm', 'decomposed')], xfail=[
        XFail('with an empty inner dimension (mat1 [5, 0] @ mat2 [0, 10]) the result is not beta * input (every element off, up to 7.2)', dtypes=[torch.bfloat16], samples=[4, 5], opinfo='addmm'),
        XFail('with an empty inner dimension (mat1 [5, 0] @ mat2 [0, 10]) the result is not beta * input (every element off, up to 7.2)', dtypes=[torch.float16], samples=[4, 5], opinfo='addmm'),
        XFail('with an empty inner dimension (mat1 [5, 0] @ mat2 [0, 10]) the result is not beta * input (every element off, up to 7.2)', dtypes=[torch.float32], samples=[4, 5], opinfo='addmm'),
    ]),  # addmm
    Entry('aten_addmm_dtype', samples=own.addmm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.addmm_dtype_reference),  # addmm.dtype is CUDA-only in torch: compared with addmm in out_dtype
    Entry('aten_addmv', opinfo=['addmv']),  # addmv
    Entry('aten_baddbmm', opinfo=['baddbmm'], xfail=[
        XFail(_HALF_STEPS + ' (largest error against torch in float64: ours 0.079, torch 0.062)', dtypes=[torch.float16], samples=[0, 1, 2, 3, 4, 5], mode='eager'),
        XFail(_HALF_STEPS + ' (traced, with alpha and beta: ours 0.040, torch 0.029)', dtypes=[torch.float16], samples=[2, 3, 5], mode='traced'),
    ]),  # baddbmm
    Entry('aten_baddbmm_dtype', samples=own.baddbmm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.baddbmm_dtype_reference),  # CUDA-only in torch
    Entry('aten_bmm', opinfo=[('bmm', 'triton_optimized'), 'bmm']),  # bmm
    Entry('aten_bmm_dtype', samples=own.bmm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.bmm_dtype_reference),  # CUDA-only in torch
    Entry('aten_dot', opinfo=['dot']),  # dot
    Entry('aten_linear', opinfo=['nn.functional.linear'], xfail=[
        TorchLessAccurate(dtypes=[torch.float16]),
        XFail(_HALF_STEPS + ' (eager, with a bias: ours 0.0072, torch 0.0019)', dtypes=[torch.float16], samples=[7], mode='eager'),
    ]),  # linear (CompositeImplicit)
    Entry('aten_matmul', opinfo=['matmul']),  # matmul (CompositeImplicit)
    Entry('aten_mm', opinfo=['mm']),  # mm
    Entry('aten_mm_dtype', samples=own.mm_dtype, dtypes=own.OUT_DTYPE_INPUTS, reference=own.mm_dtype_reference),  # CUDA-only in torch
    Entry('aten_mv', opinfo=['mv']),  # mv
    Entry('aten_outer', opinfo=['outer']),  # outer (CompositeImplicit)
    Entry('aten_t', opinfo=['t']),  # t
]
