"""Shape ops that torch composes from others: the NumPy names (concatenate, swapdims, moveaxis,
ravel, flipud/fliplr, hstack/vstack/dstack/column_stack, atleast_nd, tensor_split and
h/v/dsplit), matrix transposes (mT, mH, adjoint, numpy_T, matrix_H) and broadcasting.

Transposes and flips of real tensors only: a complex tensor reaches the complex variants of the
ops these call (an mH of a complex tensor also conjugates, which these functions refuse).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from torchlib.ops._helpers import as_shape, normalize_dim
from torchlib.ops.reductions import aten_sum, aten_sum_dim_IntList
from torchlib.ops.shape import (
    _expand,
    _split,
    _static_size,
    aten_cat,
    aten_chunk,
    aten_expand,
    aten_flip,
    aten_movedim,
    aten_movedim_intlist,
    aten_permute,
    aten_reshape,
    aten_roll,
    aten_transpose,
    aten_view_as,
)
from torchlib.ops.tensor_extra import aten_diag_embed
from torchlib.registry import aten_op

# -- joining -------------------------------------------------------------------------------------


@aten_op("aten::concat")
def aten_concat(tensors: Sequence[TTensor], dim: int = 0) -> TTensor:
    """concat(Tensor[] tensors, int dim=0) -> Tensor"""
    return aten_cat(tensors, dim)


@aten_op("aten::concatenate")
def aten_concatenate(tensors: Sequence[TTensor], dim: int = 0) -> TTensor:
    """concatenate(Tensor[] tensors, int dim=0) -> Tensor"""
    return aten_cat(tensors, dim)


def _atleast(x: Value, rank: int) -> Value:
    """torch.atleast_{1,2,3}d of one tensor: a scalar becomes [1]*rank, a vector [1, n] (2d) or
    [1, n, 1] (3d), a matrix [m, n, 1] (3d); higher ranks are unchanged."""
    if x.known_rank >= rank:
        return x
    if x.rank == 0:
        return op.Reshape(x, [1] * rank)
    if x.rank == 1:
        return op.Unsqueeze(x, [0] if rank == 2 else [0, 2])
    return op.Unsqueeze(x, [2])


@aten_op("aten::atleast_1d")
def aten_atleast_1d(self: TTensor) -> TTensor:
    """atleast_1d(Tensor self) -> Tensor"""
    return op.Identity(_atleast(self, 1))


@aten_op("aten::atleast_1d.Sequence")
def aten_atleast_1d_sequence(tensors: Sequence[TTensor]) -> list[TTensor]:
    """atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]"""
    return [op.Identity(_atleast(t, 1)) for t in tensors]


@aten_op("aten::atleast_2d")
def aten_atleast_2d(self: TTensor) -> TTensor:
    """atleast_2d(Tensor self) -> Tensor"""
    return op.Identity(_atleast(self, 2))


@aten_op("aten::atleast_2d.Sequence")
def aten_atleast_2d_sequence(tensors: Sequence[TTensor]) -> list[TTensor]:
    """atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]"""
    return [op.Identity(_atleast(t, 2)) for t in tensors]


@aten_op("aten::atleast_3d")
def aten_atleast_3d(self: TTensor) -> TTensor:
    """atleast_3d(Tensor self) -> Tensor"""
    return op.Identity(_atleast(self, 3))


@aten_op("aten::atleast_3d.Sequence")
def aten_atleast_3d_sequence(tensors: Sequence[TTensor]) -> list[TTensor]:
    """atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]"""
    return [op.Identity(_atleast(t, 3)) for t in tensors]


@aten_op("aten::hstack")
def aten_hstack(tensors: Sequence[TTensor]) -> TTensor:
    """hstack(Tensor[] tensors) -> Tensor"""
    parts = [_atleast(t, 1) for t in tensors]
    return aten_cat(parts, 0 if parts[0].rank == 1 else 1)


@aten_op("aten::vstack")
def aten_vstack(tensors: Sequence[TTensor]) -> TTensor:
    """vstack(Tensor[] tensors) -> Tensor"""
    return aten_cat([_atleast(t, 2) for t in tensors], 0)


@aten_op("aten::row_stack")
def aten_row_stack(tensors: Sequence[TTensor]) -> TTensor:
    """row_stack(Tensor[] tensors) -> Tensor"""
    return aten_vstack(tensors)


@aten_op("aten::dstack")
def aten_dstack(tensors: Sequence[TTensor]) -> TTensor:
    """dstack(Tensor[] tensors) -> Tensor"""
    return aten_cat([_atleast(t, 3) for t in tensors], 2)


@aten_op("aten::column_stack")
def aten_column_stack(tensors: Sequence[TTensor]) -> TTensor:
    """column_stack(Tensor[] tensors) -> Tensor"""
    columns = [op.Reshape(t, [-1, 1]) if t.known_rank <= 1 else t for t in tensors]
    return aten_cat(columns, 1)


# -- transposes, flips and reshapes --------------------------------------------------------------


@aten_op("aten::swapdims")
def aten_swapdims(self: TTensor, dim0: int, dim1: int) -> TTensor:
    """swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    return aten_transpose(self, dim0, dim1)


@aten_op("aten::moveaxis.int")
def aten_moveaxis(self: TTensor, source: int, destination: int) -> TTensor:
    """moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)"""
    return aten_movedim(self, source, destination)


@aten_op("aten::moveaxis.intlist")
def aten_moveaxis_intlist(self: TTensor, source: Sequence[int], destination: Sequence[int]) -> TTensor:
    """moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)"""
    return aten_movedim_intlist(self, source, destination)


def _matrix_transpose(name: str, self: Value) -> Value:
    if self.known_rank < 2:
        raise ValueError(f"aten::{name} needs a tensor of at least 2 dimensions (torch raises too), got shape {list(self.known_shape)}")
    return aten_transpose(self, -2, -1)


@aten_op("aten::mT")
def aten_mT(self: TTensor) -> TTensor:
    """mT(Tensor(a) self) -> Tensor(a)"""
    return _matrix_transpose("mT", self)


@aten_op("aten::mH")
def aten_mH(self: TTensor) -> TTensor:
    """mH(Tensor(a) self) -> Tensor(a)"""
    return _matrix_transpose("mH", self)


@aten_op("aten::adjoint")
def aten_adjoint(self: TTensor) -> TTensor:
    """adjoint(Tensor(a) self) -> Tensor(a)"""
    return _matrix_transpose("adjoint", self)


@aten_op("aten::matrix_H")
def aten_matrix_H(self: TTensor) -> TTensor:
    """matrix_H(Tensor(a) self) -> Tensor(a)"""
    if self.rank != 2:
        raise ValueError(f"aten::matrix_H is defined for matrices only (torch raises too), got shape {list(self.known_shape)}")
    return aten_transpose(self, 0, 1)


@aten_op("aten::numpy_T")
def aten_numpy_T(self: TTensor) -> TTensor:
    """numpy_T(Tensor(a) self) -> Tensor(a)"""
    return aten_permute(self, list(range(self.known_rank))[::-1])


@aten_op("aten::ravel")
def aten_ravel(self: TTensor) -> TTensor:
    """ravel(Tensor(a) self) -> Tensor(a)"""
    return aten_reshape(self, [-1])


@aten_op("aten::reshape_as")
def aten_reshape_as(self: TTensor, other: TTensor) -> TTensor:
    """reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return aten_view_as(self, other)


@aten_op("aten::flipud")
def aten_flipud(self: TTensor) -> TTensor:
    """flipud(Tensor self) -> Tensor"""
    if self.known_rank < 1:
        raise ValueError("aten::flipud needs a tensor of at least 1 dimension (torch raises too), got a 0-d tensor")
    return aten_flip(self, [0])


@aten_op("aten::fliplr")
def aten_fliplr(self: TTensor) -> TTensor:
    """fliplr(Tensor self) -> Tensor"""
    if self.known_rank < 2:
        raise ValueError(f"aten::fliplr needs a tensor of at least 2 dimensions (torch raises too), got shape {list(self.known_shape)}")
    return aten_flip(self, [1])


# -- broadcasting --------------------------------------------------------------------------------


@aten_op("aten::broadcast_to")
def aten_broadcast_to(self: TTensor, size: Sequence[int]) -> TTensor:
    """broadcast_to(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return aten_expand(self, size)


def _broadcast_shape(tensors: Sequence[Value]) -> Any:
    """torch's broadcast shape of the tensors: Python ints when every size is known, else a
    1-D INT64 Value (the shape of an Expand of ones to each shape in turn)."""
    shapes = [t.known_shape for t in tensors]
    static = [tuple(d for d in s if isinstance(d, int)) for s in shapes]
    if all(len(st) == len(s) for st, s in zip(static, shapes)):
        return [int(d) for d in np.broadcast_shapes(*static)]
    ones = op.ConstantOfShape(op.Shape(tensors[0]), value=np.ones(1, np.int64))
    for t in tensors[1:]:
        ones = op.Expand(ones, op.Shape(t))
    return op.Shape(ones)


@aten_op("aten::broadcast_tensors")
def aten_broadcast_tensors(tensors: Sequence[TTensor]) -> list[TTensor]:
    """broadcast_tensors(Tensor[] tensors) -> Tensor[]"""
    shape = _broadcast_shape(tensors)
    return [_expand(t, as_shape(shape)) for t in tensors]


# -- FFT shifts, diagflat, sum_to_size ------------------------------------------------------------


def _fft_shift(self: Value, dim: Sequence[int] | None, inverse: bool) -> Value:
    """roll every dim (all when None) by half its size: n // 2 (fftshift) or (n + 1) // 2."""
    dims = list(range(self.known_rank)) if dim is None else [normalize_dim(d, self.known_rank) for d in dim]
    if not dims:
        return op.Identity(self)
    sizes = [self.known_shape[d] for d in dims]
    static = [n for n in sizes if isinstance(n, int)]
    if len(static) < len(sizes):
        raise ValueError(f"aten::fft_{'i' if inverse else ''}fftshift: the shifted dims must be static, got shape {list(self.known_shape)}")
    return aten_roll(self, [(n + inverse) // 2 for n in static], dims)


@aten_op("aten::fft_fftshift")
def aten_fft_fftshift(self: TTensor, dim: Sequence[int] | None = None) -> TTensor:
    """fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor"""
    return _fft_shift(self, dim, inverse=False)


@aten_op("aten::fft_ifftshift")
def aten_fft_ifftshift(self: TTensor, dim: Sequence[int] | None = None) -> TTensor:
    """fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor"""
    return _fft_shift(self, dim, inverse=True)


@aten_op("aten::diagflat")
def aten_diagflat(self: TTensor, offset: int = 0) -> TTensor:
    """diagflat(Tensor self, int offset=0) -> Tensor"""
    return aten_diag_embed(op.Reshape(self, [-1]), offset, 0, 1)


@aten_op("aten::sum_to_size")
def aten_sum_to_size(self: TTensor, size: Sequence[int]) -> TTensor:
    """sum_to_size(Tensor self, SymInt[] size) -> Tensor"""
    lead = self.known_rank - len(size)
    if lead < 0:
        raise ValueError(f"aten::sum_to_size: size {list(size)} has more dims than the tensor's shape {list(self.known_shape)} (torch raises too)")
    if not size:  # torch's sum_to: a full sum (int and bool sum to int64), even of a 0-d tensor
        return aten_sum(self)
    # torch's sum_to: the leading dims and the dims that size makes 1, kept as 1
    reduce = [lead + i for i, n in enumerate(size) if n == 1 and self.known_shape[lead + i] != 1]
    if lead == 0 and not reduce:
        return op.Identity(self)
    summed = aten_sum_dim_IntList(self, list(range(lead)) + reduce, True)
    return op.Reshape(summed, as_shape(list(size)), allowzero=1) if lead else summed


# -- splitting -----------------------------------------------------------------------------------


def _boundaries_split(self: Value, indices: Sequence[int], dim: int) -> list[Value]:
    """Pieces [0, i0), [i0, i1), ..., [ik, n) along dim, each boundary clamped to [0, n] and a
    boundary below the previous one giving an empty piece (torch.tensor_split)."""
    d = normalize_dim(dim, self.known_rank)
    n = _static_size(self, d, "tensor_split")
    bounds = [0, *(min(max(i + n if i < 0 else i, 0), n) for i in indices), n]
    sizes = []
    for start, end in zip(bounds, bounds[1:]):
        start = min(start, n)
        sizes.append(max(end - start, 0))
    starts = bounds[:-1]
    if all(s == acc for s, acc in zip(starts, np.cumsum([0, *sizes[:-1]]))):
        return _split(self, sizes, d)
    return [op.Slice(self, [s], [s + size], [d]) for s, size in zip(starts, sizes)]


def _sections_split(self: Value, sections: int, dim: int, what: str) -> list[Value]:
    """torch.tensor_split into `sections` pieces: the first n % sections get one more element."""
    if sections <= 0:
        raise ValueError(f"aten::{what}: the number of sections must be greater than 0, got {sections}")
    d = normalize_dim(dim, self.known_rank)
    n = _static_size(self, d, what)
    small, extra = divmod(n, sections)
    sizes = [small + 1] * extra + [small] * (sections - extra)
    return _split(self, sizes, d)


@aten_op("aten::tensor_split.sections")
def aten_tensor_split_sections(self: TTensor, sections: int, dim: int = 0) -> list[TTensor]:
    """tensor_split.sections(Tensor(a -> *) self, SymInt sections, int dim=0) -> Tensor(a)[]"""
    return _sections_split(self, sections, dim, "tensor_split")


@aten_op("aten::tensor_split.indices")
def aten_tensor_split_indices(self: TTensor, indices: Sequence[int], dim: int = 0) -> list[TTensor]:
    """tensor_split.indices(Tensor(a -> *) self, SymInt[] indices, int dim=0) -> Tensor(a)[]"""
    return _boundaries_split(self, indices, dim)


@aten_op("aten::tensor_split.tensor_indices_or_sections")
def aten_tensor_split_tensor(self: TTensor, tensor_indices_or_sections: TTensor, dim: int = 0) -> list[TTensor]:
    """tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, int dim=0) -> Tensor(a)[]"""
    given = tensor_indices_or_sections
    if given.const_value is None:
        raise ValueError("aten::tensor_split.tensor_indices_or_sections: the indices or sections must be known while "
                         "tracing (a constant tensor): the number of outputs depends on them")
    values = np.asarray(given.const_value)
    if values.ndim == 0:
        return _sections_split(self, int(values), dim, "tensor_split")
    return _boundaries_split(self, [int(v) for v in values], dim)


def _named_split(name: str, self: Value, sections_or_indices: int | Sequence[int], dim: int, min_rank: int) -> list[Value]:
    """hsplit/vsplit/dsplit: tensor_split along one dim; sections must divide the size."""
    if self.known_rank < min_rank:
        raise ValueError(f"aten::{name} needs a tensor of at least {min_rank} dimensions (torch raises too), got shape {list(self.known_shape)}")
    if isinstance(sections_or_indices, int):
        n = _static_size(self, dim, name)
        if sections_or_indices == 0 or n % sections_or_indices:
            raise ValueError(f"aten::{name}: {sections_or_indices} sections do not divide the size {n} of dimension {dim} (torch raises too)")
        return _sections_split(self, sections_or_indices, dim, name)
    return _boundaries_split(self, sections_or_indices, dim)


@aten_op("aten::hsplit.int")
def aten_hsplit(self: TTensor, sections: int) -> list[TTensor]:
    """hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]"""
    return _named_split("hsplit", self, sections, 0 if self.rank == 1 else 1, 1)


@aten_op("aten::hsplit.array")
def aten_hsplit_array(self: TTensor, indices: Sequence[int]) -> list[TTensor]:
    """hsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]"""
    return _named_split("hsplit", self, indices, 0 if self.rank == 1 else 1, 1)


@aten_op("aten::vsplit.int")
def aten_vsplit(self: TTensor, sections: int) -> list[TTensor]:
    """vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]"""
    return _named_split("vsplit", self, sections, 0, 2)


@aten_op("aten::vsplit.array")
def aten_vsplit_array(self: TTensor, indices: Sequence[int]) -> list[TTensor]:
    """vsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]"""
    return _named_split("vsplit", self, indices, 0, 2)


@aten_op("aten::dsplit.int")
def aten_dsplit(self: TTensor, sections: int) -> list[TTensor]:
    """dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]"""
    return _named_split("dsplit", self, sections, 2, 3)


@aten_op("aten::dsplit.array")
def aten_dsplit_array(self: TTensor, indices: Sequence[int]) -> list[TTensor]:
    """dsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]"""
    return _named_split("dsplit", self, indices, 2, 3)


@aten_op("aten::unsafe_chunk")
def aten_unsafe_chunk(self: TTensor, chunks: int, dim: int = 0) -> list[TTensor]:
    """unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]"""
    return aten_chunk(self, chunks, dim)
