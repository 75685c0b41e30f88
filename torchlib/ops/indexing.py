"""Indexing and scattering: slice, select, index (advanced indexing), index_put, index_select,
gather, scatter and its reductions, embedding, slice_scatter, select_scatter, index_add,
take_along_dim.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from graph_builder.types import DType
from torchlib.ops._helpers import as_shape, dim_size, normalize_dim
from torchlib.ops.shape import INT64_MAX, cast_for_kernel, join, shape_of
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

# dtypes onnxruntime's CPU ScatterND/ScatterElements lack, per reduction.
_SCATTER_MISSING: dict[str, frozenset[DType]] = {
    "none": frozenset(),
    "add": frozenset({types.FLOAT16, types.BFLOAT16}),
    "mul": frozenset({types.FLOAT16, types.BFLOAT16}),
    "max": frozenset({types.FLOAT16, types.BFLOAT16, types.BOOL}),
    "min": frozenset({types.FLOAT16, types.BFLOAT16, types.BOOL}),
}


_NO_MUL = frozenset({types.BFLOAT16, types.BOOL})


def _int64(x: Value) -> Value:
    return x if x.dtype is types.INT64 else op.Cast(x, to=types.INT64.onnx)


def _scalar_index(index: Any) -> Any:
    """A SymInt index as an INT64 scalar (Python ints stay Python)."""
    return _int64(op.Reshape(index, [])) if isinstance(index, Value) else index


def _fill(value: Any, like: Value, shape: Any) -> Value:
    """A tensor of `shape` filled with the Python scalar `value`, of like's dtype (not bfloat16:
    onnxruntime has no bfloat16 Expand)."""
    return op.Expand(op.CastLike(value, like), shape)


@aten_op("aten::slice.Tensor", "aten::slice_copy.Tensor")
def aten_slice(self: TTensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> TTensor:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"""
    d = normalize_dim(dim, self.known_rank)
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    n = self.known_shape[d]
    to_the_end = isinstance(end, int) and (end == INT64_MAX or isinstance(n, int) and end >= n)
    if isinstance(start, int) and start == 0 and to_the_end and isinstance(step, int) and step == 1:
        return op.Identity(self)
    return op.Slice(self, as_shape([start]), as_shape([end]), [d], as_shape([step]))


@aten_op("aten::select.int", "aten::select_copy.int")
def aten_select(self: TTensor, dim: int, index: int) -> TTensor:
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"""
    return op.Gather(self, _scalar_index(index), axis=normalize_dim(dim, self.known_rank))


# -- advanced indexing -----------------------------------------------------------------------------


def _index_tensors(self: Value, indices: Sequence[Value | None]) -> list[Value | None]:
    """One INT64 index tensor (or None) per indexed dimension: a bool mask of rank k becomes the
    k coordinate vectors of its True elements, as torch does."""
    out: list[Value | None] = []
    for idx in indices:
        if idx is None:
            out.append(None)
        elif idx.dtype in (types.BOOL, types.UINT8):
            if idx.rank == 0:
                raise ValueError("indexing with a 0-dim bool mask is not supported (it adds a dimension)")
            coords = op.NonZero(idx)  # (k, count)
            out.extend(op.Gather(coords, i, axis=0) for i in range(idx.known_rank))
        else:
            out.append(_int64(idx))
    if len(out) > self.known_rank:
        raise ValueError(f"too many indices ({len(out)}) for a tensor of rank {self.rank}")
    return out


def _broadcast(tensors: list[Value]) -> tuple[list[Value], Any]:
    """The tensors broadcast to their common shape, and that shape (ints or a 1-D Value)."""
    shapes = [t.known_shape for t in tensors]
    if all(s == shapes[0] for s in shapes) and all(isinstance(d, (int, str)) for d in shapes[0]):
        return tensors, shape_of(tensors[0])
    static = [tuple(d for d in s if isinstance(d, int)) for s in shapes]
    if all(len(st) == len(s) for st, s in zip(static, shapes)):
        common: Any = list(np.broadcast_shapes(*static))
    else:
        total = tensors[0]
        for t in tensors[1:]:
            total = op.Add(total, t)
        common = op.Shape(total)
    if isinstance(common, Value):
        return [op.Expand(t, common) for t in tensors], common
    return [t if t.shape == tuple(common) else op.Expand(t, common) for t in tensors], common


class _Advanced:
    """Where the advanced (tensor) indices of an index/index_put call sit and how to reach them.

    The indexed dimensions are transposed to the front, so that GatherND/ScatterND index
    `stacked` (broadcast shape B, then one coordinate per indexed dimension) into `data`:
    the result is B followed by the remaining dimensions. torch puts B in place of the indexed
    dimensions when they are adjacent, else in front: `to_torch` is the permutation from the
    B-first order to torch's order (None when they agree)."""

    def __init__(self, x: Value, indices: Sequence[Value | None]):
        tensors = _index_tensors(x, indices)
        self.positions = [i for i, t in enumerate(tensors) if t is not None]
        rank = x.known_rank
        self.perm = self.positions + [i for i in range(rank) if i not in self.positions]
        self.data = op.Transpose(x, perm=self.perm) if self.perm != list(range(rank)) else x
        given = [t for t in tensors if t is not None]
        broadcast, self.batch_shape = _broadcast(given)
        self.stacked = op.Concat(*(op.Unsqueeze(t, [-1]) for t in broadcast), axis=-1)
        first, last = self.positions[0], self.positions[-1]
        adjacent = self.positions == list(range(first, last + 1))
        b = max(t.known_rank for t in given)  # the rank of B
        out_rank = b + rank - len(self.positions)
        self.to_torch = None
        if adjacent and first > 0:
            self.to_torch = [*range(b, b + first), *range(b), *range(b + first, out_rank)]

    def torch_order(self, x: Value) -> Value:
        return x if self.to_torch is None else op.Transpose(x, perm=self.to_torch)

    def batch_first(self, x: Value) -> Value:
        """The inverse of torch_order."""
        if self.to_torch is None:
            return x
        return op.Transpose(x, perm=[int(i) for i in np.argsort(self.to_torch)])

    def torch_shape(self) -> Any:
        """The shape of x[indices] in torch's order (ints, or a 1-D INT64 Value)."""
        shape = join(self.batch_shape, shape_of(self.data, len(self.positions)))
        if self.to_torch is None:
            return shape
        if isinstance(shape, list):
            return [shape[i] for i in self.to_torch]
        return op.Gather(shape, self.to_torch, axis=0)


def _single_index(indices: Sequence[Value | None]) -> tuple[int, Value] | None:
    """(dim, index) when exactly one entry is an integer tensor and the others are None."""
    given = [(i, t) for i, t in enumerate(indices) if t is not None]
    if len(given) == 1 and given[0][1].dtype not in (types.BOOL, types.UINT8):
        return given[0]
    return None


@aten_op("aten::index.Tensor", "aten::index.Tensor_hacked_twin", "aten::_unsafe_index.Tensor",
         "aten::_unsafe_index.Tensor_hacked_twin")  # fmt: skip
def aten_index(self: TTensor, indices: Sequence[TTensor | None]) -> TTensor:
    """index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"""
    single = _single_index(indices)
    if single is not None:  # x[:, idx]: one Gather, the index's dims in place of the indexed one
        return op.Gather(self, single[1], axis=single[0])
    adv = _Advanced(self, indices)
    return adv.torch_order(op.GatherND(adv.data, adv.stacked))


def _mask_put(self: Value, indices: Sequence[Value | None], values: Value) -> Value | None:
    """x[mask] = v for one bool mask and a single value: a Where, no NonZero."""
    given = [(i, t) for i, t in enumerate(indices) if t is not None]
    if len(given) != 1 or given[0][1].dtype is not types.BOOL or values.shape is None:
        return None
    if any(d != 1 for d in values.shape):
        return None
    position, mask = given[0]
    trailing = self.known_rank - position - mask.known_rank
    if trailing:
        mask = op.Unsqueeze(mask, list(range(mask.known_rank, mask.known_rank + trailing)))
    x = cast_for_kernel(self, frozenset({types.BFLOAT16, types.BOOL, types.INT16}))
    value = op.Reshape(op.CastLike(values, x), [])
    return cast_to(op.Where(mask, value, x), self.known_dtype)


@aten_op("aten::index_put", "aten::index_put.hacked_twin", "aten::_unsafe_index_put",
         "aten::_unsafe_index_put.hacked_twin")  # fmt: skip
def aten_index_put(self: TTensor, indices: Sequence[TTensor | None], values: TTensor,
                   accumulate: bool = False) -> TTensor:
    """index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor"""
    if not accumulate:
        masked = _mask_put(self, indices, values)
        if masked is not None:
            return masked
    reduction = "add" if accumulate else "none"
    adv = _Advanced(self, indices)
    data = cast_for_kernel(adv.data, _SCATTER_MISSING[reduction])
    # values broadcast to the shape of self[indices] (torch's order), then to the B-first order.
    updates = op.CastLike(values, data)
    shape = adv.torch_shape()
    if not (isinstance(shape, list) and updates.shape == tuple(shape)):
        updates = cast_to(op.Expand(cast_for_kernel(updates, frozenset({types.BFLOAT16})), shape), updates.known_dtype)
    out = op.ScatterND(data, adv.stacked, adv.batch_first(updates), reduction=reduction)
    out = cast_to(out, self.known_dtype)
    if adv.perm == list(range(self.known_rank)):
        return out
    return op.Transpose(out, perm=[int(i) for i in np.argsort(adv.perm)])


@aten_op("aten::index_select")
def aten_index_select(self: TTensor, dim: int, index: TTensor) -> TTensor:
    """index_select(Tensor self, int dim, Tensor index) -> Tensor"""
    if self.rank == 0:
        return op.Identity(self)
    index = op.Reshape(index, [1]) if index.rank == 0 else index
    return op.Gather(self, index, axis=normalize_dim(dim, self.known_rank))


@aten_op("aten::embedding")
def aten_embedding(weight: TTensor, indices: TTensor, padding_idx: int = -1, scale_grad_by_freq: bool = False,
                   sparse: bool = False) -> TTensor:
    """embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor"""
    # padding_idx, scale_grad_by_freq and sparse only change the gradient.
    return op.Gather(weight, indices, axis=0)


# -- gather and scatter along a dimension ------------------------------------------------------


def _as_rank1(fn: Any, self: Value, *tensors: Value) -> Value:
    """Run fn on rank-1 views when self is 0-dim (torch accepts scalars, ONNX needs rank >= 1)."""
    if self.rank != 0:
        return fn(self, *tensors)
    flat = [op.Reshape(t, [1]) if isinstance(t, Value) and t.rank == 0 else t for t in tensors]
    return op.Reshape(fn(op.Reshape(self, [1]), *flat), [])


@aten_op("aten::gather")
def aten_gather(self: TTensor, dim: int, index: TTensor, *, sparse_grad: bool = False) -> TTensor:
    """gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor"""
    if index.shape is not None and 0 in index.shape:  # torch accepts an empty index of any rank and dtype
        nothing = op.Slice(op.Reshape(self, [-1]), [0], [0])
        return op.Reshape(nothing, shape_of(index), allowzero=1)
    if self.rank == 0:  # index is 0-dim or has one element
        return op.Reshape(op.GatherElements(op.Reshape(self, [1]), op.Reshape(index, [1]), axis=0), shape_of(index))
    # index may be smaller than self in every dimension: GatherElements allows that.
    return op.GatherElements(self, index, axis=normalize_dim(dim, self.known_rank))


@aten_op("aten::take_along_dim")
def aten_take_along_dim(self: TTensor, indices: TTensor, dim: int | None = None) -> TTensor:
    """take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor

    With a dim, torch (2.13, a composite: expand, remainder, gather) takes every index modulo
    the size of that dim (Python's sign: -1 is the last, 7 of 5 is 2), so no index is out of
    range; here too. Without a dim, an index out of range is an error, as in torch."""
    if dim is None:
        return op.GatherElements(op.Reshape(self, [-1]), op.Reshape(indices, [-1]), axis=0)
    d = normalize_dim(dim, self.known_rank)
    # Broadcast in every dimension but d: self keeps its size there, indices theirs.
    ones = [1]
    indices = op.Expand(indices, join(shape_of(self, 0, d), ones, shape_of(self, d + 1)))
    data = cast_for_kernel(self, frozenset({types.BFLOAT16}))
    data = cast_to(op.Expand(data, join(shape_of(indices, 0, d), ones, shape_of(indices, d + 1))), self.known_dtype)
    size = op.Max(op.Shape(data, start=d, end=d + 1), np.array([1], np.int64))  # (0: no index is valid)
    return op.GatherElements(data, op.Mod(_int64(indices), size, fmod=0), axis=d)


def _slice_to(x: Value, like: Value) -> Value:
    """x cut down to like's size in every dimension (torch's scatter reads only that part of src)."""
    if x.shape == like.shape and all(d is not None for d in x.known_shape):
        return x
    return op.Slice(x, [0] * x.known_rank, shape_of(like), list(range(x.known_rank)))


def _scatter(self: Value, dim: int, index: Value, src: Any, reduction: str) -> Value:
    """ScatterElements of src (a tensor, or a scalar filling index's shape) into self."""

    def scatter(x: Value, idx: Value, *updates: Value) -> Value:
        axis = normalize_dim(dim, x.known_rank)
        if isinstance(src, Value):
            data = cast_for_kernel(x, _SCATTER_MISSING[reduction])
            values = op.CastLike(_slice_to(updates[0], idx), data)
        else:
            data = cast_for_kernel(x, _SCATTER_MISSING[reduction] | {types.BFLOAT16})
            values = _fill(src, data, shape_of(idx))
        return cast_to(op.ScatterElements(data, idx, values, axis=axis, reduction=reduction), x.known_dtype)

    return _as_rank1(scatter, self, index, *([src] if isinstance(src, Value) else []))


@aten_op("aten::scatter.src")
def aten_scatter_src(self: TTensor, dim: int, index: TTensor, src: TTensor) -> TTensor:
    """scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""
    return _scatter(self, dim, index, src, "none")


@aten_op("aten::scatter.value")
def aten_scatter_value(self: TTensor, dim: int, index: TTensor, value: float) -> TTensor:
    """scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"""
    return _scatter(self, dim, index, value, "none")


_SCATTER_REDUCE = {"add": "add", "multiply": "mul"}


@aten_op("aten::scatter.reduce")
def aten_scatter_reduce_src(self: TTensor, dim: int, index: TTensor, src: TTensor, *, reduce: str) -> TTensor:
    """scatter.reduce(Tensor self, int dim, Tensor index, Tensor src, *, str reduce) -> Tensor"""
    if reduce not in _SCATTER_REDUCE:
        raise ValueError(f"scatter reduce={reduce!r}: torch accepts 'add' and 'multiply'")
    return _scatter(self, dim, index, src, _SCATTER_REDUCE[reduce])


@aten_op("aten::scatter.value_reduce")
def aten_scatter_reduce_value(self: TTensor, dim: int, index: TTensor, value: float, *, reduce: str) -> TTensor:
    """scatter.value_reduce(Tensor self, int dim, Tensor index, Scalar value, *, str reduce) -> Tensor"""
    if reduce not in _SCATTER_REDUCE:
        raise ValueError(f"scatter reduce={reduce!r}: torch accepts 'add' and 'multiply'")
    return _scatter(self, dim, index, value, _SCATTER_REDUCE[reduce])


@aten_op("aten::scatter_add")
def aten_scatter_add(self: TTensor, dim: int, index: TTensor, src: TTensor) -> TTensor:
    """scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor"""
    return _scatter(self, dim, index, src, "add")


def _extreme(dtype: DType, highest: bool) -> Any:
    if dtype.is_floating:
        return np.inf if highest else -np.inf
    if dtype.is_bool:
        return highest
    info = np.iinfo(dtype.numpy)
    return int(info.max if highest else info.min)


_REDUCE_ONNX = {"sum": "add", "prod": "mul", "amax": "max", "amin": "min"}


@aten_op("aten::scatter_reduce.two")
def aten_scatter_reduce(self: TTensor, dim: int, index: TTensor, src: TTensor, reduce: str, *,
                        include_self: bool = True) -> TTensor:
    """scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True) -> Tensor"""
    if reduce == "mean":
        return _scatter_mean(self, dim, index, src, include_self)
    if reduce not in _REDUCE_ONNX:
        raise ValueError(f"scatter_reduce reduce={reduce!r}: torch accepts sum, prod, mean, amax, amin")
    x = self
    if not include_self:  # the reduction's identity where src lands, so self does not count there
        identity = {"sum": 0, "prod": 1, "amax": _extreme(self.known_dtype, False), "amin": _extreme(self.known_dtype, True)}
        x = _scatter(self, dim, index, identity[reduce], "none")
    result = _scatter(x, dim, index, src, _REDUCE_ONNX[reduce])
    if reduce in ("amax", "amin") and self.known_dtype.is_floating:
        # onnxruntime's max/min drop NaN; torch propagates it from src (and from self when included)
        nan_in = _scatter(_fill(0, cast_to(self, types.FLOAT), shape_of(self)), dim, index,
                          op.Cast(op.IsNaN(src), to=types.FLOAT.onnx), "add")
        nan = op.Greater(nan_in, np.array(0, np.float32))
        if include_self:
            nan = op.Or(nan, op.IsNaN(self))
        wide = cast_to(result, types.FLOAT) if result.dtype is types.BFLOAT16 else result  # no bfloat16 Where
        result = cast_to(op.Where(nan, op.CastLike(math.nan, wide), wide), self.known_dtype)
    return result


def _scatter_mean(self: Value, dim: int, index: Value, src: Value, include_self: bool) -> Value:
    # Sum and count in float (or int64 for integers, where torch floors the mean), then divide.
    if self.dtype in (types.FLOAT, types.DOUBLE):
        dtype = self.dtype
    else:
        dtype = types.FLOAT if self.known_dtype.is_floating else types.INT64
    x = cast_to(self, dtype)
    if not include_self:
        x = _scatter(x, dim, index, 0, "none")
    total = _scatter(x, dim, index, cast_to(src, dtype), "add")
    count = _scatter(_fill(1 if include_self else 0, x, shape_of(x)), dim, index, 1, "add")
    count = op.Max(count, 1)  # where nothing lands and self is left out: self / 1
    if dtype.is_floating:
        mean = op.Div(total, count)
    else:  # floor division: total - total mod count is an exact multiple of count
        mean = op.Div(op.Sub(total, op.Mod(total, count)), count)
    return cast_to(mean, self.known_dtype)


@aten_op("aten::index_add")
def aten_index_add(self: TTensor, dim: int, index: TTensor, source: TTensor, *, alpha: float = 1) -> TTensor:
    """index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor"""
    if alpha != 1:
        scaled = op.Mul(cast_for_kernel(source, _NO_MUL), alpha)
        source = cast_to(scaled, source.known_dtype)
    if self.rank == 0:
        return _scatter(self, 0, op.Reshape(index, []), op.Reshape(source, []), "add")
    d = normalize_dim(dim, self.known_rank)
    # index picks the slices along d: the same position for every element of a source slice.
    index = op.Reshape(_int64(index), [1] * d + [-1] + [1] * (self.known_rank - d - 1))
    index = op.Expand(index, shape_of(source))
    return _scatter(self, d, index, source, "add")


# -- writing a slice back --------------------------------------------------------------------------


def _put_along(self: Value, src: Value, dim: int, positions: Any) -> Value:
    """self with src written at `positions` (1-D) along dim: src has self's shape but there."""
    index = op.Reshape(positions, [1] * dim + [-1] + [1] * (self.known_rank - dim - 1))
    index = op.Expand(index, shape_of(src))
    return op.ScatterElements(self, index, op.CastLike(src, self), axis=dim)


@aten_op("aten::slice_scatter")
def aten_slice_scatter(self: TTensor, src: TTensor, dim: int = 0, start: int | None = None,
                       end: int | None = None, step: int = 1) -> TTensor:
    """slice_scatter(Tensor self, Tensor src, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor"""
    d = normalize_dim(dim, self.known_rank)
    n = dim_size(self, d)
    start = 0 if start is None else start
    end = INT64_MAX if end is None else end
    if all(isinstance(v, int) for v in (n, start, end, step)):
        positions: Any = list(range(n))[start:end:step]
        if not positions:
            return op.Identity(self)
    else:
        positions = op.Slice(op.Range(0, n, 1), as_shape([start]), as_shape([end]), [0], as_shape([step]))
    return _put_along(self, src, d, positions)


@aten_op("aten::select_scatter")
def aten_select_scatter(self: TTensor, src: TTensor, dim: int, index: int) -> TTensor:
    """select_scatter(Tensor self, Tensor src, int dim, SymInt index) -> Tensor"""
    d = normalize_dim(dim, self.known_rank)
    position = op.Reshape(index, [1]) if isinstance(index, Value) else [index]
    return _put_along(self, op.Unsqueeze(src, [d]), d, position)
