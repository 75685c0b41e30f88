"""Elementwise arithmetic: add, sub, mul, div, neg, pow, and the one-to-one unary ops."""

from __future__ import annotations

from graph_builder import op
from graph_builder.types import TReal, TTensor
from torchlib.ops._unary import unary
from torchlib.promotion import DEFAULT, INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op


@aten_op("aten::add.Tensor", "aten::add.Scalar")
@elementwise("self", "other")
def aten_add(self: TReal, other: TReal, alpha: float = 1) -> TReal:
    """add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    if alpha != 1:
        other = op.Mul(other, alpha)
    if self.dtype.is_bool:
        return op.Or(self, other)
    return op.Add(self, other)


@aten_op("aten::sub.Tensor", "aten::sub.Scalar")
@elementwise("self", "other")
def aten_sub(self: TReal, other: TReal, alpha: float = 1) -> TReal:
    """sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"""
    if alpha != 1:
        other = op.Mul(other, alpha)
    return op.Sub(self, other)


@aten_op("aten::mul.Tensor", "aten::mul.Scalar")
@elementwise("self", "other")
def aten_mul(self: TReal, other: TReal) -> TReal:
    """mul.Tensor(Tensor self, Tensor other) -> Tensor"""
    if self.dtype.is_bool:
        return op.And(self, other)
    return op.Mul(self, other)


aten_abs = unary("abs", op.Abs, DEFAULT)
aten_neg = unary("neg", op.Neg, DEFAULT)
aten_exp = unary("exp", op.Exp, INT_TO_FLOAT)
aten_sqrt = unary("sqrt", op.Sqrt, INT_TO_FLOAT)
aten_relu = unary("relu", op.Relu, DEFAULT)


@aten_op("aten::clone")
def aten_clone(self: TTensor, memory_format: str | None = None) -> TTensor:
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    return op.Identity(self)
