"""Expectations for torchlib/ops/symbolic.py."""

from __future__ import annotations

import math
import operator

import torch

from torchlib.conformance.spec import Entry, XFail

from . import _helpers as h
from . import _own_samples as own

_NO_OUTPUT = XFail('returns nothing: the traced graph has no output, and onnxruntime refuses to load a graph without outputs (SaveInitializedTensors); in an export the node simply leaves no trace', mode='traced')

ENTRIES = [
    Entry('aten__local_scalar_dense', samples=h.one_element, dtypes=[torch.float32, torch.float64, torch.int64, torch.int32, torch.bool],
          reference=lambda x: x.item()),
    Entry('aten_assert_async', samples=own.assert_true, dtypes=[torch.float32, torch.int64, torch.bool], xfail=[_NO_OUTPUT]),  # returns nothing on a true condition, like torch
    Entry('aten_assert_async_msg', samples=own.assert_true_msg, dtypes=[torch.float32, torch.int64, torch.bool], xfail=[_NO_OUTPUT]),
    Entry('aten_assert_scalar', samples=own.assert_scalar, dtypes=[torch.bool], reference=h.on_python(torch.ops.aten._assert_scalar), xfail=[_NO_OUTPUT]),
    Entry('aten_assert_tensor_metadata', samples=own.assert_tensor_metadata, dtypes=own.ALL, xfail=[_NO_OUTPUT]),
    Entry('aten_assert_tensor_metadata_complex', samples=own.complex_assert_tensor_metadata, dtypes=[torch.complex64, torch.complex128], xfail=[_NO_OUTPUT]),
    Entry('aten_sym_constrain_range', samples=own.constrain_range, dtypes=[torch.int64], reference=h.on_python(torch.ops.aten.sym_constrain_range), xfail=[_NO_OUTPUT]),
    Entry('aten_sym_constrain_range_for_size', samples=own.constrain_range, dtypes=[torch.int64], reference=h.on_python(torch.ops.aten.sym_constrain_range_for_size), xfail=[_NO_OUTPUT]),
    Entry('aten_sym_numel', samples=h.tensors, dtypes=[torch.float32, torch.int64], reference=lambda x: x.numel(), xfail=[
        XFail('with static input shapes aten_sym_numel returns a Python int (right for an exported graph), which torchlib.testing.trace cannot make a graph output', dtypes=[torch.float32, torch.int64], mode='traced'),
    ]),
    Entry('aten_sym_size', samples=h.tensors, dtypes=[torch.float32, torch.int64], reference=lambda x: list(x.shape), xfail=[
        XFail('with static input shapes aten_sym_size returns a Python int (right for an exported graph), which torchlib.testing.trace cannot make a graph output', dtypes=[torch.float32], samples=[0, 1, 3], mode='traced'),
        XFail('sym_size of a 0-d tensor (an empty list): onnxruntime fails to initialize the traced graph (SaveInitializedTensors error)', dtypes=[torch.float32], samples=[2], mode='traced'),
        XFail('with static input shapes aten_sym_size returns a Python int (right for an exported graph), which torchlib.testing.trace cannot make a graph output', dtypes=[torch.int64], samples=[0, 1, 3], mode='traced'),
        XFail('sym_size of a 0-d tensor (an empty list): onnxruntime fails to initialize the traced graph (SaveInitializedTensors error)', dtypes=[torch.int64], samples=[2], mode='traced'),
    ]),
    Entry('aten_sym_size_int', samples=h.sizes_and_dims, dtypes=[torch.float32, torch.int64], reference=lambda x, d: x.shape[d], xfail=[
        XFail('with static input shapes aten_sym_size_int returns a Python int (right for an exported graph), which torchlib.testing.trace cannot make a graph output', dtypes=[torch.float32, torch.int64], mode='traced'),
    ]),
    Entry('math_ceil', samples=h.floats, dtypes=[torch.float32, torch.float64], reference=h.on_python(math.ceil)),
    Entry('math_floor', samples=h.floats, dtypes=[torch.float32, torch.float64], reference=h.on_python(math.floor)),
    Entry('math_sqrt', samples=h.floats, dtypes=[torch.float32, torch.float64], reference=h.on_python(math.sqrt)),
    Entry('math_trunc', samples=h.floats, dtypes=[torch.float32, torch.float64], reference=h.on_python(math.trunc)),
    Entry('operator_add', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.add)),  # a SymInt is an INT64 scalar in the graph: it wraps around at 2**63 where Python's int grows (torch's own int64 tensors wrap the same)
    Entry('operator_and_', samples=h.logical_pairs, dtypes=[torch.bool, torch.int64], reference=h.on_python(operator.and_)),
    Entry('operator_eq', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.eq)),
    Entry('operator_floordiv', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.floordiv)),
    Entry('operator_ge', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.ge)),
    Entry('operator_getitem', samples=h.getitem, dtypes=[torch.float32, torch.int64], reference=operator.getitem),
    Entry('operator_getitem_complex', samples=h.getitem, dtypes=[torch.complex64, torch.complex128], reference=operator.getitem),
    Entry('operator_gt', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.gt)),
    Entry('operator_le', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.le)),
    Entry('operator_lt', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.lt)),
    Entry('operator_mod', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.mod)),
    Entry('operator_mul', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.mul)),  # a SymInt is an INT64 scalar in the graph: it wraps around at 2**63 where Python's int grows (torch's own int64 tensors wrap the same)
    Entry('operator_ne', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.ne)),
    Entry('operator_neg', samples=h.ints, dtypes=[torch.int64], reference=h.on_python(operator.neg)),
    Entry('operator_or_', samples=h.logical_pairs, dtypes=[torch.bool, torch.int64], reference=h.on_python(operator.or_)),
    Entry('operator_pow', samples=h.positive_int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.pow)),  # a SymInt is an INT64 scalar in the graph: it wraps around at 2**63 where Python's int grows (torch's own int64 tensors wrap the same)
    Entry('operator_sub', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.sub)),
    Entry('operator_truediv', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(operator.truediv)),
    Entry('torch_sym_float', samples=h.ints, dtypes=[torch.int64], reference=h.on_python(float)),
    Entry('torch_sym_int', samples=h.floats, dtypes=[torch.float32, torch.float64], reference=h.on_python(int)),
    Entry('torch_sym_ite', samples=h.ite, dtypes=[torch.int64], reference=h.on_python(lambda b, t, f: t if b else f)),
    Entry('torch_sym_max', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(max)),
    Entry('torch_sym_min', samples=h.int_pairs, dtypes=[torch.int64], reference=h.on_python(min)),
    Entry('torch_sym_not', samples=h.bools, dtypes=[torch.bool], reference=h.on_python(operator.not_)),
    Entry('torch_sym_sum', samples=h.int_lists, dtypes=[torch.int64], reference=lambda xs: sum(x.item() for x in xs)),  # wraps around at 2**63 like operator_add
    Entry('torch_sym_sqrt', samples=h.floats, dtypes=[torch.float32, torch.float64], reference=h.on_python(math.sqrt)),
]
