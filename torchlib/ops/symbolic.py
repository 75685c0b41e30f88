"""Symbolic integers: sym_size, sym_numel, Python `operator`/`math` ops on SymInts, and the
assertion ops of exported graphs with dynamic shapes.

A SymInt is a Python int when it is known while tracing, else an INT64 scalar Value (a SymFloat
is a DOUBLE scalar Value, a SymBool a BOOL one). Every function here returns a Python value when
all of its arguments are Python values, so static shapes stay static and fold away.

The plain helpers (`add`, `sub`, `mul`, `floordiv`, `mod`, `minimum`, `maximum`) are the same
arithmetic for the other ops modules, which compute sizes that may be dynamic.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.evaluator import require
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from torchlib.ops._helpers import dim_size
from torchlib.ops.elementwise import _div_floor_int, int_pow, int_power
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

SymValue = Any  # a Python int / float / bool, or an INT64 / DOUBLE / BOOL scalar Value


def _is_float(x: Any) -> bool:
    return isinstance(x, float) or isinstance(x, Value) and x.known_dtype.is_floating


def _typed(x: Any, dtype: types.DType) -> Any:
    """A Value cast to dtype; a Python scalar converted to float or int (the op namespace types it)."""
    if isinstance(x, Value):
        return cast_to(x, dtype)
    return float(x) if dtype.is_floating else int(x)


def _binary(py: Callable[[Any, Any], Any], onnx_fn: Callable[[Any, Any], Any], a: Any, b: Any,
            to_float: bool = False) -> Any:
    """py(a, b) on Python values; else onnx_fn on INT64 scalars (DOUBLE when either side is a
    float, or when to_float)."""
    if not isinstance(a, Value) and not isinstance(b, Value):
        return py(a, b)
    dtype = types.DOUBLE if to_float or _is_float(a) or _is_float(b) else types.INT64
    return onnx_fn(_typed(a, dtype), _typed(b, dtype))


def _floor_div(a: Any, b: Any) -> Value:
    if _is_float(a) or _is_float(b):
        return op.Floor(op.Div(a, b))
    # Python rounds toward -inf, ONNX Div toward zero: truncate, then one less where the
    # remainder is not zero and the signs differ (a - a mod b overflowed: MAX // -5)
    a = a if isinstance(a, Value) else op.Constant(value=np.array(a, np.int64))
    return _div_floor_int(a, b)


def _py_mod(a: Any, b: Any) -> Value:
    if _is_float(a) or _is_float(b):
        return op.Sub(a, op.Mul(op.Floor(op.Div(a, b)), b))
    return op.Mod(a, b)


def add(a: SymValue, b: SymValue) -> SymValue:
    return _binary(operator.add, op.Add, a, b)


def sub(a: SymValue, b: SymValue) -> SymValue:
    return _binary(operator.sub, op.Sub, a, b)


def mul(a: SymValue, b: SymValue) -> SymValue:
    return _binary(operator.mul, op.Mul, a, b)


def floordiv(a: SymValue, b: SymValue) -> SymValue:
    return _binary(operator.floordiv, _floor_div, a, b)


def mod(a: SymValue, b: SymValue) -> SymValue:
    return _binary(operator.mod, _py_mod, a, b)


def minimum(a: SymValue, b: SymValue) -> SymValue:
    return _binary(min, op.Min, a, b)


def maximum(a: SymValue, b: SymValue) -> SymValue:
    return _binary(max, op.Max, a, b)


# -- ATen ------------------------------------------------------------------------------------


@aten_op("aten::sym_size.int")
def aten_sym_size_int(self: TTensor, dim: int) -> SymValue:
    """sym_size.int(Tensor self, int dim) -> SymInt"""
    return dim_size(self, dim)


@aten_op("aten::sym_size")
def aten_sym_size(self: TTensor) -> list[SymValue]:
    """sym_size(Tensor self) -> SymInt[]"""
    return [dim_size(self, i) for i in range(self.known_rank)]


@aten_op("aten::sym_numel")
def aten_sym_numel(self: TTensor) -> SymValue:
    """sym_numel(Tensor self) -> SymInt"""
    if self.is_static:
        return math.prod(self.known_shape)
    return op.ReduceProd(op.Shape(self), keepdims=0)


@aten_op("aten::_local_scalar_dense")
def aten__local_scalar_dense(self: TTensor) -> SymValue:
    """_local_scalar_dense(Tensor self) -> Scalar

    `tensor.item()`: the one element as a symbolic value (INT64 for integer tensors, DOUBLE for
    floating ones, BOOL for bool), as a graph keeps it for data-dependent code."""
    scalar = op.Reshape(self, np.zeros(0, dtype=np.int64))
    if self.dtype is types.BOOL:
        return scalar
    return cast_to(scalar, types.DOUBLE if self.known_dtype.is_floating else types.INT64)


@aten_op("aten::_assert_scalar")
def aten_assert_scalar(self: SymValue, assert_msg: str) -> None:
    """_assert_scalar(Scalar self, str assert_msg) -> ()

    torch.export's run-time assertion (a data-dependent condition it could not prove: a
    `torch._check`, the branch draft_export took at the sample): the ONNX model checks it on
    every run and stops, naming it, where it does not hold (`graph_builder.require`)."""
    require(_truth(self), assert_msg)


@aten_op("aten::_assert_async")
def aten_assert_async(self: TTensor) -> None:
    """_assert_async(Tensor self) -> ()"""
    require(_truth(self), "torch._assert_async: the condition is false")


@aten_op("aten::_assert_async.msg")
def aten_assert_async_msg(self: TTensor, assert_msg: str) -> None:
    """_assert_async.msg(Tensor self, str assert_msg) -> ()"""
    require(_truth(self), assert_msg)


def _truth(x: Any) -> Any:
    """A condition as BOOL: a number is true where it is nonzero, as Python and torch take it."""
    if isinstance(x, Value) and x.dtype is not types.BOOL:
        return op.Not(op.Equal(x, op.CastLike(np.array(0), x)))
    return x


@aten_op("aten::_assert_tensor_metadata")
def aten_assert_tensor_metadata(a: TTensor, size: Sequence[SymValue] | None = None,
                                stride: Sequence[SymValue] | None = None, dtype: types.DType | None = None,
                                *, device: Any = None, layout: Any = None) -> None:
    """_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()"""
    return None


@aten_op("aten::_assert_tensor_metadata", complex=True)
def aten_assert_tensor_metadata_complex(a: TTensor, size: Sequence[SymValue] | None = None,
                                        stride: Sequence[SymValue] | None = None, dtype: types.DType | None = None,
                                        *, device: Any = None, layout: Any = None) -> None:
    """_assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, *, Device? device=None, Layout? layout=None) -> ()"""
    return None  # torch checked the metadata at capture, complex or not (a complex tensor's `.to(device)`)


@aten_op("aten::sym_constrain_range")
def aten_sym_constrain_range(size: SymValue, *, min: int | None = None, max: int | None = None) -> None:
    """sym_constrain_range(Scalar size, *, int? min=None, int? max=None) -> ()"""
    return None


@aten_op("aten::sym_constrain_range_for_size")
def aten_sym_constrain_range_for_size(size: SymValue, *, min: int | None = None, max: int | None = None) -> None:
    """sym_constrain_range_for_size(Scalar size, *, int? min=None, int? max=None) -> ()"""
    return None


# -- Python operators on SymInts (FX targets operator.add, math.ceil, torch.sym_max, ...) -------


@aten_op("_operator::add")
def operator_add(a: SymValue, b: SymValue) -> SymValue:
    """add(SymInt a, SymInt b) -> SymInt"""
    return add(a, b)


@aten_op("_operator::sub")
def operator_sub(a: SymValue, b: SymValue) -> SymValue:
    """sub(SymInt a, SymInt b) -> SymInt"""
    return sub(a, b)


@aten_op("_operator::mul")
def operator_mul(a: SymValue, b: SymValue) -> SymValue:
    """mul(SymInt a, SymInt b) -> SymInt"""
    return mul(a, b)


@aten_op("_operator::floordiv")
def operator_floordiv(a: SymValue, b: SymValue) -> SymValue:
    """floordiv(SymInt a, SymInt b) -> SymInt"""
    return floordiv(a, b)


@aten_op("_operator::truediv")
def operator_truediv(a: SymValue, b: SymValue) -> SymValue:
    """truediv(SymInt a, SymInt b) -> SymFloat"""
    return _binary(operator.truediv, op.Div, a, b, to_float=True)


@aten_op("_operator::mod")
def operator_mod(a: SymValue, b: SymValue) -> SymValue:
    """mod(SymInt a, SymInt b) -> SymInt"""
    return mod(a, b)


@aten_op("_operator::pow")
def operator_pow(a: SymValue, b: SymValue) -> SymValue:
    """pow(SymInt a, SymInt b) -> SymInt"""
    # int ** negative int is a float in Python; a symbolic exponent is taken as non-negative.
    negative = isinstance(b, (int, float)) and b < 0
    return _binary(operator.pow, _sym_pow, a, b, to_float=negative)


def _sym_pow(a: Any, b: Any) -> Value:
    """Pow, for INT64 exact by squaring (onnxruntime's integer Pow goes through double)."""
    if _is_float(a) or _is_float(b):
        return op.Pow(a, b)
    if not isinstance(b, Value):
        return int_power(a, b)
    return int_pow(a if isinstance(a, Value) else op.CastLike(np.array(a, np.int64), b), b)


@aten_op("_operator::neg")
def operator_neg(a: SymValue) -> SymValue:
    """neg(SymInt a) -> SymInt"""
    return op.Neg(a) if isinstance(a, Value) else -a


@aten_op("_operator::eq")
def operator_eq(a: SymValue, b: SymValue) -> SymValue:
    """eq(SymInt a, SymInt b) -> SymBool"""
    return _binary(operator.eq, op.Equal, a, b)


@aten_op("_operator::ne")
def operator_ne(a: SymValue, b: SymValue) -> SymValue:
    """ne(SymInt a, SymInt b) -> SymBool"""
    return _binary(operator.ne, lambda x, y: op.Not(op.Equal(x, y)), a, b)


@aten_op("_operator::lt")
def operator_lt(a: SymValue, b: SymValue) -> SymValue:
    """lt(SymInt a, SymInt b) -> SymBool"""
    return _binary(operator.lt, op.Less, a, b)


@aten_op("_operator::le")
def operator_le(a: SymValue, b: SymValue) -> SymValue:
    """le(SymInt a, SymInt b) -> SymBool"""
    return _binary(operator.le, op.LessOrEqual, a, b)


@aten_op("_operator::gt")
def operator_gt(a: SymValue, b: SymValue) -> SymValue:
    """gt(SymInt a, SymInt b) -> SymBool"""
    return _binary(operator.gt, op.Greater, a, b)


@aten_op("_operator::ge")
def operator_ge(a: SymValue, b: SymValue) -> SymValue:
    """ge(SymInt a, SymInt b) -> SymBool"""
    return _binary(operator.ge, op.GreaterOrEqual, a, b)


def _logical(py: Callable[[Any, Any], Any], on_bools: Callable[[Any, Any], Any], on_ints: Callable[[Any, Any], Any],
             a: Any, b: Any) -> Any:
    """py(a, b) on Python values; else the logical op on two SymBools (BOOL scalars), the bitwise
    one on SymInts (INT64 scalars), as Python's `&` and `|` read bools and ints."""
    if not isinstance(a, Value) and not isinstance(b, Value):
        return py(a, b)
    if all(isinstance(x, bool) or isinstance(x, Value) and x.known_dtype == types.BOOL for x in (a, b)):
        return on_bools(_typed_bool(a), _typed_bool(b))
    return on_ints(_typed(a, types.INT64), _typed(b, types.INT64))


def _typed_bool(x: Any) -> Any:
    return x if isinstance(x, Value) else op.Constant(value=np.array(bool(x)))


@aten_op("_operator::and_")
def operator_and_(a: SymValue, b: SymValue) -> SymValue:
    """and_(SymBool a, SymBool b) -> SymBool (SymInts: bitwise)"""
    return _logical(operator.and_, op.And, op.BitwiseAnd, a, b)


@aten_op("_operator::or_")
def operator_or_(a: SymValue, b: SymValue) -> SymValue:
    """or_(SymBool a, SymBool b) -> SymBool (SymInts: bitwise)"""
    return _logical(operator.or_, op.Or, op.BitwiseOr, a, b)


def _getitem(a: Sequence[Any], b: int) -> Any:
    if isinstance(a, Value):
        raise TypeError(
            f"getitem on the tensor {a.name!r}: exported graphs index tensors with aten::select/slice/index, "
            "getitem only picks an output of a multi-output op"
        )
    return a[b]


@aten_op("_operator::getitem")
def operator_getitem(a: Sequence[Any], b: int) -> Any:
    """getitem(Any[] a, int b) -> Any"""
    return _getitem(a, b)


@aten_op("_operator::getitem", complex=True)
def operator_getitem_complex(a: Sequence[Any], b: int) -> Any:
    """getitem(Any[] a, int b) -> Any"""
    return _getitem(a, b)  # picks a complex output (linalg_eig's, split's) as it is


def _to_int(x: SymValue, onnx_round: Callable[[Value], Value], py_round: Callable[[float], int]) -> SymValue:
    if not isinstance(x, Value):
        return py_round(x)
    if not x.known_dtype.is_floating:
        return _typed(x, types.INT64)
    return op.Cast(onnx_round(x), to=types.INT64.onnx)


@aten_op("math::ceil")
def math_ceil(x: SymValue) -> SymValue:
    """ceil(SymFloat x) -> SymInt"""
    return _to_int(x, op.Ceil, math.ceil)


@aten_op("math::floor")
def math_floor(x: SymValue) -> SymValue:
    """floor(SymFloat x) -> SymInt"""
    return _to_int(x, op.Floor, math.floor)


@aten_op("math::trunc")
def math_trunc(x: SymValue) -> SymValue:
    """trunc(SymFloat x) -> SymInt"""
    return _to_int(x, op.Identity, math.trunc)  # Cast to an integer type truncates toward zero


def _sqrt(x: SymValue) -> SymValue:
    return op.Sqrt(_typed(x, types.DOUBLE)) if isinstance(x, Value) else math.sqrt(x)


@aten_op("math::sqrt")
def math_sqrt(x: SymValue) -> SymValue:
    """sqrt(SymFloat x) -> SymFloat"""
    return _sqrt(x)


@aten_op("torch::_sym_sqrt")  # torch.sym_sqrt's __name__
def torch_sym_sqrt(a: SymValue) -> SymValue:
    """sym_sqrt(SymFloat a) -> SymFloat"""
    return _sqrt(a)


@aten_op("torch::sym_max")
def torch_sym_max(a: SymValue, b: SymValue) -> SymValue:
    """sym_max(SymInt a, SymInt b) -> SymInt"""
    return maximum(a, b)


@aten_op("torch::sym_min")
def torch_sym_min(a: SymValue, b: SymValue) -> SymValue:
    """sym_min(SymInt a, SymInt b) -> SymInt"""
    return minimum(a, b)


@aten_op("torch::sym_sum")
def torch_sym_sum(args: Sequence[SymValue]) -> SymValue:
    """sym_sum(SymInt[] args) -> SymInt"""
    total: SymValue = 0
    for a in args:
        total = add(total, a)
    return total


@aten_op("torch::sym_float")
def torch_sym_float(a: SymValue) -> SymValue:
    """sym_float(SymInt a) -> SymFloat"""
    return _typed(a, types.DOUBLE)


@aten_op("torch::sym_int")
def torch_sym_int(a: SymValue) -> SymValue:
    """sym_int(SymFloat a) -> SymInt"""
    return _to_int(a, op.Identity, math.trunc)


@aten_op("torch::sym_not")
def torch_sym_not(a: SymValue) -> SymValue:
    """sym_not(SymBool a) -> SymBool"""
    return op.Not(_typed(a, types.BOOL)) if isinstance(a, Value) else not a


@aten_op("torch::sym_ite")
def torch_sym_ite(b: SymValue, t: SymValue, f: SymValue) -> SymValue:
    """sym_ite(SymBool b, SymInt t, SymInt f) -> SymInt"""
    if not isinstance(b, Value):
        return t if b else f
    dtype = types.DOUBLE if _is_float(t) or _is_float(f) else types.INT64
    return op.Where(_typed(b, types.BOOL), _typed(t, dtype), _typed(f, dtype))
