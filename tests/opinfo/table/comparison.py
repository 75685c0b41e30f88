"""Expectations for torchlib/ops/comparison.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_bitwise_and', opinfo=['bitwise_and']),  # aten::bitwise_and.Tensor, aten::bitwise_and.Scalar, aten::bitwise_and.Scalar_Tensor; candidates ['bitwise_and']
    Entry('aten_bitwise_not', opinfo=['bitwise_not']),  # aten::bitwise_not; candidates ['bitwise_not']
    Entry('aten_bitwise_or', opinfo=['bitwise_or']),  # aten::bitwise_or.Tensor, aten::bitwise_or.Scalar, aten::bitwise_or.Scalar_Tensor; candidates ['bitwise_or']
    Entry('aten_bitwise_xor', opinfo=['bitwise_xor']),  # aten::bitwise_xor.Tensor, aten::bitwise_xor.Scalar, aten::bitwise_xor.Scalar_Tensor; candidates ['bitwise_xor']
    Entry('aten_eq', opinfo=['eq']),  # aten::eq.Tensor, aten::eq.Scalar; candidates ['eq']
    Entry('aten_fmax', opinfo=['fmax']),  # aten::fmax; candidates ['fmax']
    Entry('aten_fmin', opinfo=['fmin']),  # aten::fmin; candidates ['fmin']
    Entry('aten_ge', opinfo=['ge']),  # aten::ge.Tensor, aten::ge.Scalar; candidates ['ge']
    Entry('aten_gt', opinfo=['gt']),  # aten::gt.Tensor, aten::gt.Scalar; candidates ['gt']
    Entry('aten_isfinite', opinfo=['isfinite']),  # aten::isfinite; candidates ['isfinite']
    Entry('aten_isinf', opinfo=['isinf']),  # aten::isinf; candidates ['isinf']
    Entry('aten_isnan', opinfo=['isnan']),  # aten::isnan; candidates ['isnan']
    Entry('aten_le', opinfo=['le']),  # aten::le.Tensor, aten::le.Scalar; candidates ['le']
    Entry('aten_logical_and', opinfo=['logical_and']),  # aten::logical_and; candidates ['logical_and']
    Entry('aten_logical_not', opinfo=['logical_not']),  # aten::logical_not; candidates ['logical_not']
    Entry('aten_logical_or', opinfo=['logical_or']),  # aten::logical_or; candidates ['logical_or']
    Entry('aten_logical_xor', opinfo=['logical_xor']),  # aten::logical_xor; candidates ['logical_xor']
    Entry('aten_lt', opinfo=['lt']),  # aten::lt.Tensor, aten::lt.Scalar; candidates ['lt']
    Entry('aten_masked_fill', opinfo=['masked_fill']),  # aten::masked_fill.Scalar; candidates ['masked_fill']
    Entry('aten_masked_fill_tensor', opinfo=['masked_fill']),  # aten::masked_fill.Tensor; candidates ['masked_fill']
    Entry('aten_maximum', opinfo=['maximum']),  # aten::maximum; candidates ['maximum']
    Entry('aten_minimum', opinfo=['minimum']),  # aten::minimum; candidates ['minimum']
    Entry('aten_ne', opinfo=['ne']),  # aten::ne.Tensor, aten::ne.Scalar; candidates ['ne']
    Entry('aten_where', opinfo=['where']),  # aten::where.self; candidates ['where']
    Entry('aten_where_scalar', opinfo=['where']),  # aten::where.Scalar; candidates ['where']
    Entry('aten_where_scalar_other', opinfo=['where']),  # aten::where.ScalarOther; candidates ['where']
    Entry('aten_where_scalar_self', opinfo=['where']),  # aten::where.ScalarSelf; candidates ['where']
]
