"""Tensor metadata and scalars: sym_stride, sym_storage_offset, sym_is_contiguous, item /
_local_scalar_dense, copy.

An ONNX tensor has no strides or storage: every value of a graph is a dense row-major tensor
of its own. So a stride is the product of the later sizes, the storage offset is 0 and every
tensor is contiguous (what torch reports for the functional tensors of an exported graph, not
for a view made by hand outside one). A Scalar (item) is a 0-d tensor of the input's dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from torchlib.ops._helpers import as_shape, normalize_dim
from torchlib.ops._kernels import full_of
from torchlib.ops.symbolic import aten__local_scalar_dense
from torchlib.registry import aten_op

SymValue = Any  # a Python int / bool, or an INT64 / BOOL scalar Value


@aten_op("aten::sym_stride.int")
def aten_sym_stride_int(self: TTensor, dim: int) -> SymValue:
    """sym_stride.int(Tensor self, int dim) -> SymInt"""
    if self.rank is None:
        raise ValueError("aten::sym_stride.int needs the rank of its input to be known")
    axis = normalize_dim(dim, self.rank)
    if not 0 <= axis < max(self.rank, 1):
        raise IndexError(f"aten::sym_stride.int: dim {dim} is out of range for a tensor of rank {self.rank}")
    later = self.known_shape[axis + 1:]
    if all(isinstance(s, int) for s in later):
        return math.prod(later)
    return op.ReduceProd(op.Shape(self, start=axis + 1), keepdims=0)


@aten_op("aten::sym_storage_offset")
def aten_sym_storage_offset(self: TTensor) -> SymValue:
    """sym_storage_offset(Tensor self) -> SymInt"""
    return 0  # every graph value is a tensor of its own


@aten_op("aten::sym_is_contiguous")
def aten_sym_is_contiguous(self: TTensor, memory_format: Any = "contiguous_format") -> SymValue:
    """sym_is_contiguous(Tensor self, MemoryFormat memory_format=contiguous_format) -> SymBool"""
    if memory_format not in (None, "contiguous_format") and str(memory_format) != "torch.contiguous_format":
        raise ValueError(f"aten::sym_is_contiguous: only the contiguous format is known in ONNX (row-major "
                         f"tensors), got memory_format={memory_format}")  # fmt: skip
    return True


@aten_op("aten::item")
def aten_item(self: TTensor) -> TTensor:
    """item(Tensor self) -> Scalar

    As `_local_scalar_dense`: the one element as a symbolic value (INT64, DOUBLE or BOOL)."""
    return aten__local_scalar_dense(self)


def _resize(fn: str, self: Any, size: Sequence[Any] | Value) -> Any:
    """resize_ as a value: the contiguous tensor with the new sizes (every graph value is
    contiguous) whose first min(old, new) elements, in row-major order, are the input's. torch
    reuses the storage, so a shrink keeps the first elements; the elements a growth adds are
    uninitialised memory in torch and zeros here (a graph has no uninitialised storage)."""
    shape = as_shape(size)
    sizes = [] if isinstance(size, Value) else [s for s in size if isinstance(s, int)]
    static = not isinstance(size, Value) and len(sizes) == len(size)
    if self.is_static and static:
        old, new = math.prod(self.static_shape), math.prod(sizes)
        if list(self.static_shape) == sizes:
            return op.Identity(self)
        if old == new:
            return op.Reshape(self, shape, allowzero=1)
        flat = op.Reshape(self, [old], allowzero=1)
        if new < old:
            flat = op.Slice(flat, [0], [new])
        else:
            flat = op.Concat(flat, full_of([new - old], 0, self.known_dtype), axis=0)
        return op.Reshape(flat, shape, allowzero=1)
    flat = op.Reshape(self, [-1])
    numel = op.ReduceProd(shape, keepdims=1)  # [1]; 1 for a 0-d size
    grow = op.Max(op.Sub(numel, op.Shape(flat)), np.array([0], np.int64))
    padded = op.Concat(flat, full_of(grow, 0, self.known_dtype), axis=0)
    return op.Reshape(op.Slice(padded, [0], numel), shape, allowzero=1)


@aten_op("aten::resize_as")
def aten_resize_as(self: TTensor, the_template: TTensor, *, memory_format: Any = None) -> TTensor:
    """resize_as(Tensor self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor

    The functional form of resize_as_ (torch.export keeps resize_as_; the exporter calls this):
    the template's shape holding the input's first elements in row-major order; elements past
    the input's count are zeros (uninitialised memory in torch)."""
    if the_template.shape is not None and the_template.is_static:
        return _resize("resize_as", self, list(the_template.shape))
    return _resize("resize_as", self, op.Shape(the_template))


@aten_op("aten::resize")
def aten_resize(self: TTensor, size: Sequence[Any], *, memory_format: Any = None) -> TTensor:
    """resize(Tensor self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor

    The functional form of resize_ (run_decompositions turns resize_as_ into this): the new
    shape holding the input's first elements in row-major order; elements past the input's
    count are zeros (uninitialised memory in torch)."""
    return _resize("resize", self, size)
