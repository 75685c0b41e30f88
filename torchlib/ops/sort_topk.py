"""topk, sort and argsort, all on ONNX TopK (sort is TopK with k = the size of the dim).

Ties: ONNX TopK puts the lower index first among equal values, for largest and smallest alike,
so sort and argsort match torch's stable sort (`stable=True`) and `stable=False` gets the
same order. torch's `stable=False` sort (std::sort, an introsort) and its topk/kthvalue
(std::partial_sort / std::nth_element) leave the order of equal values to the algorithm's
pivots: for inputs with ties their indices may differ from ours (the stable order) while the
values agree; no composition of ONNX ops reproduces libstdc++'s pivot choices.
NaN: torch orders NaN above every number (last ascending, first descending): a first stable
pass orders by "is NaN", a second by the value with NaN read as +inf.
bool and bfloat16 (no TopK kernel in onnxruntime) are sorted as uint8 and float32, exactly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TInt, TRealOrBool
from torchlib.ops._kernels import NUMERIC, nearest_supported
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _axis(self: Value, dim: int) -> int:
    rank = self.rank
    if rank is None:
        raise ValueError(f"sort/topk need the rank of {self.name!r} to be known")
    if not -rank <= dim < rank:
        raise IndexError(f"dim {dim} is out of range for a tensor of rank {rank}")
    return dim + rank if dim < 0 else dim


def _zero_index(self: Value) -> Value:
    """An INT64 zero of self's shape (the indices of a 0-d tensor)."""
    return op.ConstantOfShape(op.Shape(self), value=np.zeros(1, np.int64))


def _topk(self: Value, k: Any, dim: int, largest: bool, sorted: bool) -> tuple[Value, Value]:
    if self.rank == 0:  # torch: a 0-d tensor is its own top-1 (and sort), at index 0
        if dim not in (0, -1):
            raise IndexError(f"dim {dim} is out of range for a 0-d tensor")
        return self, _zero_index(self)
    axis = _axis(self, dim)
    if isinstance(k, Value):  # a SymInt, or the 1-element size of the dim from sort
        k = op.Reshape(cast_to(k, types.INT64), [1])
    else:
        k = np.array([k], np.int64)
    x = cast_to(self, nearest_supported(self.known_dtype, NUMERIC.__contains__))  # TopK's kernels
    if not x.dtype.is_floating:
        values, indices = op.TopK(x, k, axis=axis, largest=int(largest), sorted=int(sorted))
        return cast_to(values, self.known_dtype), indices
    # torch orders NaN above +inf. Two stable passes (TopK keeps the lower index first among
    # equal keys): order by "is NaN" first, then by the value with NaN read as +inf; a stable
    # second pass keeps the NaNs after (largest: before) the infinities, in index order.
    nan = op.IsNaN(x)
    n = op.Shape(x, start=axis, end=axis + 1)
    _, by_nan = op.TopK(op.Cast(nan, to=types.UINT8.onnx), n, axis=axis, largest=int(largest), sorted=1)
    key = op.GatherElements(op.Where(nan, op.CastLike(np.inf, x), x), by_nan, axis=axis)
    _, order = op.TopK(key, k, axis=axis, largest=int(largest), sorted=int(sorted))
    indices = op.GatherElements(by_nan, order, axis=axis)
    return cast_to(op.GatherElements(x, indices, axis=axis), self.known_dtype), indices


def _sort(self: Value, dim: int, descending: bool) -> tuple[Value, Value]:
    if self.rank == 0:
        return _topk(self, 1, dim, descending, True)
    axis = _axis(self, dim)
    assert self.shape is not None
    n = self.shape[axis]
    k = n if isinstance(n, int) else op.Shape(self, start=axis, end=axis + 1)
    return _topk(self, k, axis, descending, True)


TIES = "equal elements may come in either order (torch's default sort and topk are not stable)"


@aten_op("aten::topk", not_unique=TIES, free_outputs=(1,))
def aten_topk(
    self: TRealOrBool, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[TRealOrBool, TInt]:
    """topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"""
    return _topk(self, k, dim, largest, sorted)


@aten_op("aten::sort", not_unique=TIES, free_outputs=(1,))
def aten_sort(self: TRealOrBool, dim: int = -1, descending: bool = False) -> tuple[TRealOrBool, TInt]:
    """sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"""
    return _sort(self, dim, descending)


@aten_op("aten::sort.stable")
def aten_sort_stable(
    self: TRealOrBool, *, stable: bool | None, dim: int = -1, descending: bool = False
) -> tuple[TRealOrBool, TInt]:
    """sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"""
    return _sort(self, dim, descending)  # TopK is stable: ties keep their order either way


@aten_op("aten::argsort", not_unique=TIES)
def aten_argsort(self: TRealOrBool, dim: int = -1, descending: bool = False) -> TInt:
    """argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor"""
    return _sort(self, dim, descending)[1]


@aten_op("aten::argsort.stable")
def aten_argsort_stable(self: TRealOrBool, *, stable: bool, dim: int = -1, descending: bool = False) -> TInt:
    """argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor"""
    return _sort(self, dim, descending)[1]


@aten_op("aten::mode")
def aten_mode(self: TRealOrBool, dim: int = -1, keepdim: bool = False) -> tuple[TRealOrBool, TInt]:
    """mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)

    torch's CPU kernel sorts each slice and keeps the first longest run of equal values: the
    value is the smallest of the most frequent ones. Its index is the position of the last
    element of that run in the sorted slice, which for slices of up to 16 elements (where
    std::sort is an insertion sort, hence stable) is the value's last occurrence, as here. For
    longer slices torch's index is whichever occurrence libstdc++'s introsort leaves last (any
    occurrence of the value); ours stays the last. Every element is compared with every other
    of its slice (O(n²) per slice).

    NaN: torch sorts with `<`, which NaN breaks (not a strict weak order: undefined behaviour
    for std::sort); in practice its insertion sort leaves each NaN where it was and moves the
    numbers around it, so its mode depends on the NaNs' positions ([nan, 1, nan, 1]: NaN at 0;
    [1, nan, nan, 2, 2]: 2). Here NaN is a run of its own (NaN != NaN, as torch's run count)
    sorted after every number: the mode is the number torch gives without the NaNs, and a
    slice of NaN only gives NaN at index 0, as torch."""
    if self.rank == 0:
        if dim not in (0, -1):
            raise IndexError(f"aten::mode: dim {dim} is out of range for a 0-d tensor")
        return self, _zero_index(self)
    axis = _axis(self, dim)
    assert self.shape is not None
    if self.shape[axis] == 0:
        raise ValueError(f"aten::mode: the reduced dim {dim} has size 0 (torch raises too)")
    work = types.FLOAT if self.dtype in (types.FLOAT16, types.BFLOAT16) else self.known_dtype
    work = types.INT32 if work in (types.BOOL, types.INT8, types.UINT8, types.INT16) else work
    x = cast_to(self, work)
    counts = op.ReduceSum(op.Cast(op.Equal(op.Unsqueeze(x, [axis + 1]), op.Unsqueeze(x, [axis])), to=types.INT32.onnx),
                          [axis + 1], keepdims=0)  # counts[..., i, ...]: how often x[..., i, ...] occurs
    if work.is_floating:
        nan = op.IsNaN(x)
        counts = op.Add(counts, op.Cast(nan, to=types.INT32.onnx))  # a NaN is a run of its own (NaN != NaN)
        most = op.And(op.Equal(counts, op.ReduceMax(counts, [axis], keepdims=1)), op.Not(nan))
    else:
        most = op.Equal(counts, op.ReduceMax(counts, [axis], keepdims=1))
    largest = np.inf if work.is_floating else np.iinfo(work.numpy).max
    value = op.ReduceMin(op.Where(most, x, op.CastLike(largest, x)), [axis], keepdims=1)
    n = op.Shape(x, start=axis, end=axis + 1)
    positions = op.Reshape(op.Range(np.array(0, np.int64), op.Squeeze(n, [0]), np.array(1, np.int64)),
                           op.Concat(n, np.ones(x.rank - axis - 1, np.int64), axis=0))
    index = op.ReduceMax(op.Where(op.Equal(x, value), positions, np.array(-1, np.int64)), [axis], keepdims=1)
    if work.is_floating:  # a slice of NaN only: NaN at 0 (its first run); NaN elsewhere is never the mode
        all_nan = op.Not(op.Cast(op.ReduceMax(op.Cast(most, to=types.INT32.onnx), [axis], keepdims=1), to=types.BOOL.onnx))
        value = op.Where(all_nan, op.CastLike(np.nan, x), value)
        index = op.Where(all_nan, np.array(0, np.int64), index)
    if not keepdim:
        value, index = op.Squeeze(value, [axis]), op.Squeeze(index, [axis])
    return cast_to(value, self.known_dtype), index
