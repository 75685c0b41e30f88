"""Expectations for torchlib/ops/linalg.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_addmm', opinfo=['addmm', ('addmm', 'decomposed')]),  # addmm
    Entry('aten_addmm_dtype', reason='TODO'),  # addmm.dtype: no OpInfo sample calls it
    Entry('aten_addmv', opinfo=['addmv']),  # addmv
    Entry('aten_baddbmm', opinfo=['baddbmm']),  # baddbmm
    Entry('aten_baddbmm_dtype', reason='TODO'),  # baddbmm.dtype: no OpInfo sample calls it
    Entry('aten_bmm', opinfo=[('bmm', 'triton_optimized'), 'bmm']),  # bmm
    Entry('aten_bmm_dtype', reason='TODO'),  # bmm.dtype: no OpInfo sample calls it
    Entry('aten_dot', opinfo=['dot']),  # dot
    Entry('aten_linear', opinfo=['nn.functional.linear']),  # linear (CompositeImplicit)
    Entry('aten_matmul', opinfo=['matmul']),  # matmul (CompositeImplicit)
    Entry('aten_mm', opinfo=['mm']),  # mm
    Entry('aten_mm_dtype', reason='TODO'),  # mm.dtype: no OpInfo sample calls it
    Entry('aten_mv', opinfo=['mv']),  # mv
    Entry('aten_outer', opinfo=['outer']),  # outer (CompositeImplicit)
    Entry('aten_t', opinfo=['t']),  # t
]
