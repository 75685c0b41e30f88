"""Expectations for torchlib/ops/linalg.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_addmm', opinfo=['addmm']),  # aten::addmm; candidates ['addmm', ('addmm', 'decomposed')]
    Entry('aten_addmm_dtype', opinfo=['addmm']),  # aten::addmm.dtype; candidates ['addmm', ('addmm', 'decomposed')]
    Entry('aten_addmv', opinfo=['addmv']),  # aten::addmv; candidates ['addmv']
    Entry('aten_baddbmm', opinfo=['baddbmm']),  # aten::baddbmm; candidates ['baddbmm']
    Entry('aten_baddbmm_dtype', opinfo=['baddbmm']),  # aten::baddbmm.dtype; candidates ['baddbmm']
    Entry('aten_bmm', opinfo=['bmm']),  # aten::bmm; candidates ['bmm', ('bmm', 'triton_optimized')]
    Entry('aten_bmm_dtype', opinfo=['bmm']),  # aten::bmm.dtype; candidates ['bmm', ('bmm', 'triton_optimized')]
    Entry('aten_dot', opinfo=['dot']),  # aten::dot; candidates ['dot']
    Entry('aten_linear', opinfo=['nn.functional.linear']),  # aten::linear; candidates ['nn.functional.linear']
    Entry('aten_matmul', opinfo=['matmul']),  # aten::matmul; candidates ['matmul']
    Entry('aten_mm', opinfo=['mm']),  # aten::mm; candidates ['mm']
    Entry('aten_mm_dtype', opinfo=['mm']),  # aten::mm.dtype; candidates ['mm']
    Entry('aten_mv', opinfo=['mv']),  # aten::mv; candidates ['mv']
    Entry('aten_outer', opinfo=['outer']),  # aten::outer; candidates ['outer']
    Entry('aten_t', opinfo=['t']),  # aten::t; candidates ['t']
]
