"""The `*_copy` variants of view ops (what functionalization emits for views), diagonal_scatter,
as_strided_scatter, new_empty_strided and empty_permuted.

In ONNX every value is a tensor of its own, so a view and its copy are the same computation:
each function here calls the view's function. Strides and physical layouts do not exist in ONNX;
the `empty` variants return zeros of the requested shape (torch leaves the values undefined).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.type_constraints import TTensor
from graph_builder.types import DType
from torchlib.ops._helpers import as_shape, normalize_dim
from torchlib.ops._kernels import full_of
from torchlib.ops.comparison import aten_where
from torchlib.ops.linalg.products import aten_t
from torchlib.ops.shape import (
    aten_alias,
    aten_diagonal,
    aten_reshape,
    aten_transpose,
    aten_unbind,
    aten_unfold,
    aten_unsqueeze,  # fmt: skip
)
from torchlib.ops.tensor_extra import aten_as_strided, strided_index
from torchlib.promotion import DEFAULT_FLOAT, cast_to
from torchlib.registry import aten_op


@aten_op("aten::alias_copy")
def aten_alias_copy(self: TTensor) -> TTensor:
    """alias_copy(Tensor self) -> Tensor"""
    return aten_alias(self)


@aten_op("aten::detach_copy")
def aten_detach_copy(self: TTensor) -> TTensor:
    """detach_copy(Tensor self) -> Tensor"""
    return op.Identity(self)  # no autograd in ONNX: detaching is the identity


@aten_op("aten::diagonal_copy")
def aten_diagonal_copy(self: TTensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TTensor:
    """diagonal_copy(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor"""
    return aten_diagonal(self, offset, dim1, dim2)


@aten_op("aten::t_copy")
def aten_t_copy(self: TTensor) -> TTensor:
    """t_copy(Tensor self) -> Tensor"""
    return aten_t(self)


@aten_op("aten::transpose_copy.int")
def aten_transpose_copy_int(self: TTensor, dim0: int, dim1: int) -> TTensor:
    """transpose_copy.int(Tensor self, int dim0, int dim1) -> Tensor"""
    return aten_transpose(self, dim0, dim1)


@aten_op("aten::unbind_copy.int")
def aten_unbind_copy_int(self: TTensor, dim: int = 0) -> list[TTensor]:
    """unbind_copy.int(Tensor self, int dim=0) -> Tensor[]"""
    return aten_unbind(self, dim)


@aten_op("aten::unfold_copy")
def aten_unfold_copy(self: TTensor, dimension: int, size: int, step: int) -> TTensor:
    """unfold_copy(Tensor self, int dimension, int size, int step) -> Tensor"""
    return aten_unfold(self, dimension, size, step)


@aten_op("aten::unsqueeze_copy")
def aten_unsqueeze_copy(self: TTensor, dim: int) -> TTensor:
    """unsqueeze_copy(Tensor self, int dim) -> Tensor"""
    return aten_unsqueeze(self, dim)


@aten_op("aten::_reshape_copy")
def aten__reshape_copy(self: TTensor, size: Sequence[Any]) -> TTensor:
    """_reshape_copy(Tensor self, SymInt[] size) -> Tensor"""
    return aten_reshape(self, size)


@aten_op("aten::diagonal_scatter")
def aten_diagonal_scatter(self: TTensor, src: TTensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TTensor:
    """diagonal_scatter(Tensor self, Tensor src, int offset=0, int dim1=0, int dim2=1) -> Tensor"""
    rank = self.known_rank
    d1, d2 = normalize_dim(dim1, rank), normalize_dim(dim2, rank)
    if d1 == d2:
        raise ValueError(f"aten::diagonal_scatter: dim1 and dim2 must differ, got {dim1} and {dim2}")
    # the diagonal mask of the (n1, n2) matrix, broadcast over the other dims
    n1 = op.Shape(self, start=d1, end=d1 + 1)
    n2 = op.Shape(self, start=d2, end=d2 + 1)
    rows = op.Range(np.array(0, np.int64), op.Squeeze(n1, [0]), np.array(1, np.int64))
    cols = op.Range(np.array(0, np.int64), op.Squeeze(n2, [0]), np.array(1, np.int64))
    mask = op.Equal(op.Add(op.Unsqueeze(rows, [1]), offset), op.Unsqueeze(cols, [0]))  # [n1, n2]
    # src holds the diagonal last, with dims d1, d2 removed: put it into (..., n1, n2) positions
    rest = [i for i in range(rank) if i not in (d1, d2)]
    # row i holds diagonal element i + min(offset, 0); rows off the diagonal read a padding zero (masked out)
    pads = [0] * src.known_rank + [0] * (src.known_rank - 1) + [1]
    if src.dtype is types.BFLOAT16:  # no bfloat16 Pad kernel: pad in float32, exactly
        padded = cast_to(op.Pad(cast_to(src, types.FLOAT), pads), types.BFLOAT16)
    else:
        padded = op.Pad(src, pads)
    position = op.Max(op.Min(op.Add(rows, min(offset, 0)), op.Shape(src, start=-1)), 0)
    gathered = op.Gather(padded, position, axis=-1)  # (..rest.., n1): the diagonal value of row i
    spread = op.Unsqueeze(gathered, [len(rest) + 1])  # (..rest.., n1, 1)
    perm = rest + [d1, d2]
    inverse = list(np.argsort(perm))
    filled = op.Transpose(aten_where(mask, cast_to(spread, self.known_dtype), op.Transpose(self, perm=perm)), perm=inverse)
    return filled


@aten_op("aten::as_strided_copy")
def aten_as_strided_copy(
    self: TTensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> TTensor:
    """as_strided_copy(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor"""
    return aten_as_strided(self, size, stride, storage_offset)


@aten_op("aten::as_strided_scatter")
def aten_as_strided_scatter(
    self: TTensor, src: TTensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> TTensor:
    """as_strided_scatter(Tensor self, Tensor src, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor

    A copy of self with src written into its strided view (torch: self.clone(), then
    .as_strided(size, stride, storage_offset).copy_(src)): src's elements are scattered to the
    row-major positions of the view's elements, exact for a contiguous self (what an exported
    graph has). A view that overlaps itself (a zero stride) raises, as torch's copy_ does.
    Static size, stride and offset."""
    index = strided_index("as_strided_scatter", self, size, stride, storage_offset)
    if np.unique(index).size != index.size:
        raise ValueError(f"aten::as_strided_scatter: the view of size {list(size)} and stride {list(stride)} overlaps "
                         "itself (torch raises too: more than one element refers to a single memory location)")
    if src.shape is not None and all(isinstance(d, int) for d in src.shape) and tuple(src.shape) != tuple(size):
        raise ValueError(f"aten::as_strided_scatter: src of shape {list(src.shape)} must have the view's size {list(size)} (torch raises too)")
    updates = op.Reshape(cast_to(src, self.known_dtype), [-1])
    flat = op.ScatterND(op.Reshape(self, [-1]), op.Constant(value=index.reshape(-1, 1)), updates)
    return op.Reshape(flat, op.Shape(self))


@aten_op("aten::new_empty_strided")
def aten_new_empty_strided(
    self: TTensor, size: Sequence[Any], stride: Sequence[Any], *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return full_of(as_shape(size), 0, dtype or self.known_dtype)


@aten_op("aten::empty_permuted")
def aten_empty_permuted(
    size: Sequence[Any], physical_layout: Sequence[int], *, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TTensor:  # fmt: skip
    """empty_permuted(SymInt[] size, int[] physical_layout, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return full_of(as_shape(size), 0, dtype or DEFAULT_FLOAT)
