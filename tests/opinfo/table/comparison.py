"""Expectations for torchlib/ops/comparison.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry

from . import _helpers as h

ALL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]

ENTRIES = [
    Entry('aten_bitwise_and', opinfo=['bitwise_and']),  # bitwise_and.Tensor, bitwise_and.Scalar, bitwise_and.Scalar_Tensor
    Entry('aten_bitwise_not', opinfo=['bitwise_not']),  # bitwise_not
    Entry('aten_bitwise_or', opinfo=['bitwise_or']),  # bitwise_or.Tensor, bitwise_or.Scalar, bitwise_or.Scalar_Tensor
    Entry('aten_bitwise_xor', opinfo=['bitwise_xor']),  # bitwise_xor.Tensor, bitwise_xor.Scalar, bitwise_xor.Scalar_Tensor
    Entry('aten_eq', opinfo=['eq']),  # eq.Tensor, eq.Scalar
    Entry('aten_fmax', opinfo=['fmax']),  # fmax
    Entry('aten_fmin', opinfo=['fmin']),  # fmin
    Entry('aten_ge', opinfo=['ge']),  # ge.Tensor, ge.Scalar
    Entry('aten_gt', opinfo=['gt']),  # gt.Tensor, gt.Scalar
    Entry('aten_isfinite', opinfo=['isfinite']),  # isfinite (CompositeImplicit)
    Entry('aten_isinf', opinfo=['isinf']),  # isinf
    Entry('aten_isnan', opinfo=['isnan']),  # isnan
    Entry('aten_le', opinfo=['le']),  # le.Tensor, le.Scalar
    Entry('aten_logical_and', opinfo=['logical_and']),  # logical_and
    Entry('aten_logical_not', opinfo=['logical_not']),  # logical_not
    Entry('aten_logical_or', opinfo=['logical_or']),  # logical_or
    Entry('aten_logical_xor', opinfo=['logical_xor']),  # logical_xor
    Entry('aten_lt', opinfo=['lt']),  # lt.Tensor, lt.Scalar
    Entry('aten_masked_fill', opinfo=['masked_fill']),  # masked_fill.Scalar
    Entry('aten_masked_fill_tensor', opinfo=['masked_fill']),  # masked_fill.Tensor
    Entry('aten_maximum', opinfo=['maximum']),  # maximum
    Entry('aten_minimum', opinfo=['minimum']),  # minimum
    Entry('aten_ne', opinfo=['ne']),  # ne.Tensor, ne.Scalar
    Entry('aten_where', opinfo=['where']),  # where.self
    Entry('aten_where_scalar', samples=h.where_scalars('Scalar'), dtypes=[torch.float32]),
    Entry('aten_where_scalar_other', samples=h.where_scalars('ScalarOther'), dtypes=ALL),
    Entry('aten_where_scalar_self', samples=h.where_scalars('ScalarSelf'), dtypes=ALL),
]
