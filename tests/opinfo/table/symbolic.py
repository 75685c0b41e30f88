"""Expectations for torchlib/ops/symbolic.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_assert_async', reason='TODO'),  # _assert_async: no OpInfo sample calls it
    Entry('aten_assert_async_msg', reason='TODO'),  # _assert_async.msg: no OpInfo sample calls it
    Entry('aten_assert_scalar', reason='TODO'),  # _assert_scalar: no OpInfo sample calls it
    Entry('aten_assert_tensor_metadata', reason='TODO'),  # _assert_tensor_metadata: no OpInfo sample calls it
    Entry('aten_sym_constrain_range', reason='TODO'),  # sym_constrain_range: no OpInfo sample calls it
    Entry('aten_sym_constrain_range_for_size', reason='TODO'),  # sym_constrain_range_for_size: no OpInfo sample calls it
    Entry('aten_sym_numel', reason='TODO'),  # sym_numel CIA
    Entry('aten_sym_size', reason='TODO'),  # sym_size: no OpInfo sample calls it
    Entry('aten_sym_size_int', reason='TODO'),  # sym_size.int CIA
    Entry('math_ceil', reason='TODO'),  # math::ceil: no OpInfo sample calls it
    Entry('math_floor', reason='TODO'),  # math::floor: no OpInfo sample calls it
    Entry('math_sqrt', reason='TODO'),  # math::sqrt: no OpInfo sample calls it
    Entry('math_trunc', reason='TODO'),  # math::trunc: no OpInfo sample calls it
    Entry('operator_add', reason='TODO'),  # _operator::add: no OpInfo sample calls it
    Entry('operator_eq', reason='TODO'),  # _operator::eq: no OpInfo sample calls it
    Entry('operator_floordiv', reason='TODO'),  # _operator::floordiv: no OpInfo sample calls it
    Entry('operator_ge', reason='TODO'),  # _operator::ge: no OpInfo sample calls it
    Entry('operator_getitem', reason='TODO'),  # _operator::getitem: no OpInfo sample calls it
    Entry('operator_gt', reason='TODO'),  # _operator::gt: no OpInfo sample calls it
    Entry('operator_le', reason='TODO'),  # _operator::le: no OpInfo sample calls it
    Entry('operator_lt', reason='TODO'),  # _operator::lt: no OpInfo sample calls it
    Entry('operator_mod', reason='TODO'),  # _operator::mod: no OpInfo sample calls it
    Entry('operator_mul', reason='TODO'),  # _operator::mul: no OpInfo sample calls it
    Entry('operator_ne', reason='TODO'),  # _operator::ne: no OpInfo sample calls it
    Entry('operator_neg', reason='TODO'),  # _operator::neg: no OpInfo sample calls it
    Entry('operator_pow', reason='TODO'),  # _operator::pow: no OpInfo sample calls it
    Entry('operator_sub', reason='TODO'),  # _operator::sub: no OpInfo sample calls it
    Entry('operator_truediv', reason='TODO'),  # _operator::truediv: no OpInfo sample calls it
    Entry('torch_sym_float', reason='TODO'),  # torch::sym_float: no OpInfo sample calls it
    Entry('torch_sym_int', reason='TODO'),  # torch::sym_int: no OpInfo sample calls it
    Entry('torch_sym_ite', reason='TODO'),  # torch::sym_ite: no OpInfo sample calls it
    Entry('torch_sym_max', reason='TODO'),  # torch::sym_max: no OpInfo sample calls it
    Entry('torch_sym_min', reason='TODO'),  # torch::sym_min: no OpInfo sample calls it
    Entry('torch_sym_not', reason='TODO'),  # torch::sym_not: no OpInfo sample calls it
    Entry('torch_sym_sqrt', reason='TODO'),  # torch::_sym_sqrt: no OpInfo sample calls it
]
