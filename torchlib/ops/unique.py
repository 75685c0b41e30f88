"""unique, unique_consecutive (with or without a dim) and masked_select.

The output sizes depend on the data: they come from NonZero / Compress, so the ONNX output
shape is dynamic. Sorted unique of a flat tensor sorts with TopK (stable: equal values keep
their order), NaN placed after +inf as torch does; each NaN is its own unique value (NaN != NaN),
as in torch. unique along a dim compares every slice with every other slice (memory
O(n^2 x slice size)); its rows are ordered lexicographically as torch does.
Like torch's CPU kernel, `sorted=False` returns sorted values too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TBool, TInt, TRealOrBool
from torchlib.ops._helpers import normalize_dim
from torchlib.ops.sort_topk import aten_sort
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _comparable(x: Value) -> Value:
    """x in a dtype onnxruntime compares and sorts (exact widening)."""
    if x.known_dtype.is_floating:
        return x if x.dtype in (types.FLOAT, types.DOUBLE) else cast_to(x, types.FLOAT)
    return x if x.dtype is types.INT64 else cast_to(x, types.INT64)


def _sort_flat(flat: Value) -> Value:
    """The permutation that sorts a 1-D tensor ascending, stable, NaN after +inf."""
    key = _comparable(flat)
    if not key.known_dtype.is_floating:
        return aten_sort(key, 0)[1]
    nan = op.IsNaN(key)
    _, perm = aten_sort(op.Where(nan, np.array(np.inf, key.known_dtype.numpy), key), 0)
    # a second stable sort on "is NaN" moves NaN after +inf, keeping the first order otherwise
    _, by_nan = aten_sort(cast_to(op.Gather(nan, perm), types.UINT8), 0)
    return op.Gather(perm, by_nan)


def _zeros(x: Value, value: int = 0) -> Value:
    """An INT64 tensor of x's shape filled with value."""
    return op.ConstantOfShape(op.Shape(x), value=np.full(1, value, np.int64))


def _empty_int64(ref: Value) -> Value:
    """An empty INT64 vector (computed from ref, so that a graph output is never a constant)."""
    return op.Slice(ref, [0], [0])


def _starts(new: Value, n: Any) -> tuple[Value, Value]:
    """Group ids (0, 0, 1, ...) of a run mask `new` (True where a group starts) and the counts."""
    group = op.Sub(op.CumSum(cast_to(new, types.INT64), 0), 1)
    starts = op.Reshape(op.NonZero(new), [-1])
    ends = op.Concat(op.Slice(starts, [1], [np.iinfo(np.int64).max]), op.Reshape(n, [1]), axis=0)
    return group, op.Sub(ends, starts)


def _run_starts(key: Value) -> Value:
    """A 1-D BOOL mask along axis 0 of key: True where a slice differs from the previous one."""
    n = op.Shape(key, start=0, end=1)
    big = np.iinfo(np.int64).max
    differ = op.Not(op.Equal(op.Slice(key, [1], [big]), op.Slice(key, [0], [-1])))
    if key.known_rank > 1:  # a slice differs when any of its elements does
        differ = cast_to(op.ReduceMax(cast_to(differ, types.UINT8), list(range(1, key.known_rank)), keepdims=0), types.BOOL)
    # the first slice starts a group (Slice keeps the mask empty when there is no slice)
    return op.Slice(op.Concat(op.Constant(value=np.ones(1, np.bool_)), differ, axis=0), [0], n)


@aten_op("aten::_unique2")
def aten_unique2(
    self: TRealOrBool, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False
) -> tuple[TRealOrBool, TInt, TInt]:
    """_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)"""
    flat = op.Reshape(self, [-1])
    perm = _sort_flat(flat)
    values = op.Gather(flat, perm)
    new = _run_starts(_comparable(values))
    group, counts = _starts(new, op.Shape(flat))
    out = _compress(values, new, 0)
    inverse = _empty_int64(counts)
    if return_inverse:
        inverse = op.ScatterElements(_zeros(group), perm, group)
        inverse = op.Reshape(inverse, op.Shape(self))
    return out, inverse, counts if return_counts else _empty_int64(counts)


def _move_to_front(self: Value, dim: int) -> Value:
    perm = [dim] + [i for i in range(self.known_rank) if i != dim]
    return self if dim == 0 else op.Transpose(self, perm=perm)


def _check_dim(name: str, self: Value, dim: int) -> int:
    if self.rank is None or self.rank == 0:
        raise ValueError(f"{name}: dim={dim} needs an input of known rank >= 1, got rank {self.rank}")
    return normalize_dim(dim, self.rank)


@aten_op("aten::unique_dim")
def aten_unique_dim(
    self: TRealOrBool, dim: int, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False
) -> tuple[TRealOrBool, TInt, TInt]:
    """unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)

    NaN: a row holding NaN equals no row, and NaN sorts after every number (torch.unique's
    flat kernel on 1-D input). torch's unique_dim sorts rows with std::sort and `<`, which NaN
    breaks (undefined behaviour: it can return equal rows apart, [2, nan, 2] gives 2 twice)."""
    dim = _check_dim("unique_dim", self, dim)
    rows = op.Flatten(_move_to_front(_comparable(self), dim), axis=1)  # [n, m]
    a, b = op.Unsqueeze(rows, [1]), op.Unsqueeze(rows, [0])  # [n, 1, m], [1, n, m]
    eq = op.Equal(a, b)
    lt, tied = op.Less(a, b), eq  # the sort order, elementwise: NaN after every number, NaN tied with NaN
    if rows.known_dtype.is_floating:
        nan_a, nan_b = op.IsNaN(a), op.IsNaN(b)
        lt = op.Or(lt, op.And(op.Not(nan_a), nan_b))
        tied = op.Or(eq, op.And(nan_a, nan_b))
    tied_before = op.Equal(op.CumSum(cast_to(op.Not(tied), types.INT64), 2, exclusive=1), 0)
    less = cast_to(op.ReduceMax(cast_to(op.And(lt, tied_before), types.INT64), [2], keepdims=0), types.BOOL)  # [i, j]: i < j
    same = cast_to(op.ReduceMin(cast_to(eq, types.INT64), [2], keepdims=0), types.BOOL)  # (empty slices: equal)
    all_tied = cast_to(op.ReduceMin(cast_to(tied, types.INT64), [2], keepdims=0), types.BOOL)
    index = op.Range(0, op.Squeeze(op.Shape(rows, start=0, end=1), [0]), 1)
    before = op.Less(op.Unsqueeze(index, [1]), op.Unsqueeze(index, [0]))  # [j, i]: j < i
    # rows holding NaN equal no row (not even their copies): tied in the order, they keep their input order
    less = cast_to(op.Or(less, op.And(op.And(all_tied, op.Not(same)), before)), types.INT64)
    dup = op.ReduceMax(cast_to(op.And(same, before), types.INT64), [0], keepdims=0)
    first = op.Equal(dup, 0)  # row i is the first of its kind
    # the sorted position of a row: how many distinct rows are less than it
    rank = op.ReduceSum(op.Mul(less, op.Unsqueeze(cast_to(first, types.INT64), [1])), [0], keepdims=0)
    first_rows = op.Reshape(op.NonZero(first), [-1])
    order = op.ScatterElements(_zeros(first_rows), op.Gather(rank, first_rows), first_rows)
    out = op.Gather(self, order, axis=dim)
    counts = op.ScatterElements(_zeros(order), rank, _zeros(rank, 1), reduction="add")
    return out, rank, counts


def _compress(x: Value, mask: Value, axis: int) -> Value:
    """Compress; bfloat16 (no onnxruntime kernel) goes through float32, exactly."""
    if x.dtype is types.BFLOAT16:
        return cast_to(op.Compress(cast_to(x, types.FLOAT), mask, axis=axis), types.BFLOAT16)
    return op.Compress(x, mask, axis=axis)


def _consecutive(self: Value, dim: int | None, return_inverse: bool, return_counts: bool, flat: bool) -> tuple[Any, Any, Any]:
    if flat or dim is None:  # (flat when dim is None)
        x = op.Reshape(self, [-1])
        axis = 0
    else:
        axis = _check_dim("unique_consecutive", self, dim)
        x = self
    key = _move_to_front(_comparable(x), axis)
    new = _run_starts(key)
    group, counts = _starts(new, op.Shape(key, start=0, end=1))
    out = _compress(x, new, axis)
    if flat:
        inverse = op.Reshape(group, op.Shape(self)) if return_inverse else _empty_int64(counts)
        return out, inverse, counts if return_counts else _empty_int64(counts)
    return out, group, counts  # torch computes both along a dim, asked or not


@aten_op("aten::unique_consecutive")
def aten_unique_consecutive(
    self: TRealOrBool, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None
) -> tuple[TRealOrBool, TInt, TInt]:
    """unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) -> (Tensor, Tensor, Tensor)"""
    flat = dim is None or (dim == 0 and self.rank == 1)  # torch's rule for its flat kernel
    return _consecutive(self, dim, return_inverse, return_counts, flat)


@aten_op("aten::unique_dim_consecutive")
def aten_unique_dim_consecutive(
    self: TRealOrBool, dim: int, return_inverse: bool = False, return_counts: bool = False
) -> tuple[TRealOrBool, TInt, TInt]:
    """unique_dim_consecutive(Tensor self, int dim, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)"""
    return _consecutive(self, dim, return_inverse, return_counts, flat=False)


@aten_op("aten::masked_select")
def aten_masked_select(self: TRealOrBool, mask: TBool) -> TRealOrBool:
    """masked_select(Tensor self, Tensor mask) -> Tensor"""
    x = cast_to(self, types.FLOAT) if self.dtype is types.BFLOAT16 else self  # no bfloat16 Expand kernel
    zero = op.Constant(value=np.zeros(1, np.int64))
    shape = op.Shape(op.Add(op.Expand(zero, op.Shape(self)), op.Expand(zero, op.Shape(mask))))  # broadcast
    values = op.Reshape(op.Expand(x, shape), [-1])
    return cast_to(op.Compress(values, op.Reshape(op.Expand(mask, shape), [-1]), axis=0), self.known_dtype)
