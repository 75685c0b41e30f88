"""Expectations for torchlib/ops/linalg/products.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

ENTRIES = [
    Entry('aten_addmm', opinfo=['addmm', ('addmm', 'decomposed')]),  # addmm
    Entry('aten_addmm_dtype', reason='the out_dtype overload addmm.dtype has no CPU kernel in torch 2.13 (CUDA only), so there is no torch output to compare with'),
    Entry('aten_addmv', opinfo=['addmv']),  # addmv
    Entry('aten_baddbmm', opinfo=['baddbmm']),  # baddbmm
    Entry('aten_baddbmm_dtype', reason='the out_dtype overload baddbmm.dtype has no CPU kernel in torch 2.13 (CUDA only), so there is no torch output to compare with'),
    Entry('aten_bmm', opinfo=[('bmm', 'triton_optimized'), 'bmm']),  # bmm
    Entry('aten_bmm_dtype', reason='the out_dtype overload bmm.dtype has no CPU kernel in torch 2.13 (CUDA only), so there is no torch output to compare with'),
    Entry('aten_dot', opinfo=['dot']),  # dot
    Entry('aten_linear', opinfo=['nn.functional.linear']),  # linear (CompositeImplicit)
    Entry('aten_matmul', opinfo=['matmul']),  # matmul (CompositeImplicit)
    Entry('aten_mm', opinfo=['mm']),  # mm
    Entry('aten_mm_dtype', reason='the out_dtype overload mm.dtype has no CPU kernel in torch 2.13 (CUDA only), so there is no torch output to compare with'),
    Entry('aten_mv', opinfo=['mv']),  # mv
    Entry('aten_outer', opinfo=['outer']),  # outer (CompositeImplicit)
    Entry('aten_t', opinfo=['t']),  # t
]
