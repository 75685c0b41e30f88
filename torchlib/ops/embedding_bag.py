"""embedding_bag: sums, means or maxima of bags of embedding rows, with torch's four outputs.

    _embedding_bag(weight, indices, offsets, ...) -> (output, offset2bag, bag_size, max_indices)

Each index gets its bag as torch's CPU kernel numbers them (offset2bag: ones added at the
offsets, minus one at 0, a cumulative sum), its row is gathered (times its per-sample weight),
the rows of padding_idx are left out, and ScatterElements reduces the rows into their bags
(add, or max; the half types in float32, rounded once). An empty bag gives zeros. The other
outputs are what torch returns on CPU:
- offset2bag: the bag of each index; empty (shape (0,)) where torch's sum fast path skips it
  (mode sum, float32/float16/bfloat16 weight, no padding_idx). torch also takes the slow path,
  and fills offset2bag, for a weight view with stride(1) != 1: a layout that the dense weight
  of a graph never has (the fuzz pass keeps weight dense for this reason).
- bag_size: the number of non-padding indices per bag for mean and max; for sum zeros of
  offsets' size, as torch gives them when weight does not require grad (with requires_grad
  and include_last_offset torch's has one element less).
- max_indices: for max, (bags, D), the index (a row of weight) that gave each maximum, the first
  one on ties, 0 for an empty bag; for mean and sum a copy of bag_size.
With include_last_offset the last offset must be len(indices), as torch documents (torch's
kernels disagree with each other otherwise). Integer outputs have the dtype of indices and offsets (int64 if either is).
NaN in a max bag: torch keeps a NaN only when it comes first; ScatterElements(max) follows
onnxruntime's comparison.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_SUM, _MEAN, _MAX = 0, 1, 2
_FAST_PATH_DTYPES = (types.FLOAT, types.FLOAT16, types.BFLOAT16)  # torch's sum without offset2bag


def _bag_of_each_index(offsets: Value, n: Value) -> Value:
    """offset2bag: zeros(n + 1), one added at each offset, minus one at 0, cumulative sum, cut to n."""
    zeros = op.ConstantOfShape(op.Add(op.Reshape(n, [1]), 1), value=np.zeros(1, np.int64))
    marks = op.ScatterElements(zeros, offsets, op.Expand(np.array(1, np.int64), op.Shape(offsets)), reduction="add")
    marks = op.Sub(marks, op.Pad(np.array([1], np.int64), op.Concat(np.array([0], np.int64), op.Reshape(n, [1]), axis=0)))
    return op.Slice(op.CumSum(marks, np.array(0, np.int64)), [0], op.Reshape(n, [1]), [0])


def _embedding_bag(
    weight: Value, indices: Value, offsets: Value, mode: int, per_sample_weights: Value | None,
    include_last_offset: bool, padding_idx: int | None, name: str,
) -> tuple[Value, Value, Value, Value]:  # fmt: skip
    if indices.rank != 1 or offsets.rank != 1:
        raise ValueError(f"aten::{name} expects 1-D indices and offsets (F.embedding_bag flattens 2-D input), "
                         f"got ranks {indices.rank} and {offsets.rank}")  # fmt: skip
    if mode not in (_SUM, _MEAN, _MAX):
        raise ValueError(f"aten::{name}: mode must be 0 (sum), 1 (mean) or 2 (max), got {mode}")
    if per_sample_weights is not None and mode != _SUM:
        raise ValueError(f"aten::{name}: per_sample_weights are only supported for mode sum (torch rejects them too)")
    out_int = types.INT64 if types.INT64 in (indices.dtype, offsets.dtype) else indices.known_dtype  # torch promotes the two
    idx, offs = cast_to(indices, types.INT64), cast_to(offsets, types.INT64)
    n = op.Squeeze(op.Shape(idx), [0])
    bags = op.Shape(offs)  # (1,) number of bags
    if include_last_offset:  # the last offset ends the last bag
        bags = op.Sub(bags, 1)
        offs = op.Slice(offs, [0], [-1], [0])
    bag = _bag_of_each_index(offs, n)  # (n,)
    dtype = types.DOUBLE if weight.dtype is types.DOUBLE else types.FLOAT
    rows = op.Gather(cast_to(weight, dtype), idx, axis=0)  # (n, D)
    if per_sample_weights is not None:
        rows = op.Mul(rows, op.Unsqueeze(cast_to(per_sample_weights, dtype), [1]))
    width = op.Shape(weight, start=1, end=2)
    keep = op.Not(op.Equal(idx, padding_idx)) if padding_idx is not None and padding_idx >= 0 else None
    target = op.Where(keep, bag, bags) if keep is not None else bag  # padding rows go to an extra bag, cut off
    counts = op.ScatterElements(op.ConstantOfShape(op.Add(bags, 1), value=np.zeros(1, np.int64)), target,
                                op.Expand(np.array(1, np.int64), op.Shape(target)), reduction="add")  # fmt: skip
    counts = op.Slice(counts, [0], bags, [0])  # (B,) non-padding indices per bag
    rows_target = op.Expand(op.Unsqueeze(target, [1]), op.Shape(rows))
    extended = op.Concat(op.Add(bags, 1), width, axis=0)
    empty = op.Unsqueeze(op.Equal(counts, 0), [1])
    if mode == _MAX:
        lowest = op.ConstantOfShape(extended, value=np.array([-np.inf], dtype.numpy))
        best = op.Slice(op.ScatterElements(lowest, rows_target, rows, reduction="max"), [0], bags, [0])
        output = op.Where(empty, op.CastLike(0, best), best)
        # the first index whose row equals its bag's maximum, per column
        padded_best = op.Concat(best, op.ConstantOfShape(op.Concat(np.array([1], np.int64), width, axis=0),
                                                         value=np.array([np.inf], dtype.numpy)), axis=0)  # fmt: skip
        hit = op.Equal(rows, op.GatherElements(padded_best, rows_target, axis=0))
        position = op.Where(hit, op.Unsqueeze(op.Range(np.array(0, np.int64), n, np.array(1, np.int64)), [1]), op.Reshape(n, [1]))
        first = op.ScatterElements(op.Expand(op.Reshape(n, [1, 1]), extended), rows_target, position, reduction="min")
        first = op.Slice(first, [0], bags, [0])
        with_sentinel = op.Concat(idx, np.array([0], np.int64), axis=0)  # position n (an empty bag): index 0
        max_indices = op.Gather(with_sentinel, first, axis=0)
    else:
        zeros = op.ConstantOfShape(extended, value=np.zeros(1, dtype.numpy))
        output = op.Slice(op.ScatterElements(zeros, rows_target, rows, reduction="add"), [0], bags, [0])
        if mode == _MEAN:
            output = op.Div(output, op.Unsqueeze(op.Cast(op.Max(counts, np.array(1, np.int64)), to=dtype.onnx), [1]))
        # sum: torch zeroes bag_size, sized like offsets (not the bags) when weight needs no gradient
        max_indices = counts if mode == _MEAN else op.Expand(np.array(0, np.int64), op.Shape(offsets))
    bag_size = counts if mode != _SUM else max_indices
    fast_path = mode == _SUM and weight.dtype in _FAST_PATH_DTYPES and (padding_idx is None or padding_idx < 0)
    offset2bag = op.Slice(idx, [0], [0], [0]) if fast_path else bag  # (0,)
    return (cast_to(output, weight.known_dtype), cast_to(offset2bag, out_int), cast_to(bag_size, out_int),
            cast_to(max_indices, out_int))  # fmt: skip


@aten_op("aten::_embedding_bag")
def aten__embedding_bag(
    weight: TFloat, indices: TInt, offsets: TInt, scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
    per_sample_weights: TFloat | None = None, include_last_offset: bool = False, padding_idx: int = -1,
) -> tuple[TFloat, TInt, TInt, TInt]:  # fmt: skip
    """_embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)

    padding_idx < 0: none. scale_grad_by_freq and sparse only concern the gradient."""
    return _embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, "_embedding_bag")


@aten_op("aten::_embedding_bag_forward_only")
def aten__embedding_bag_forward_only(
    weight: TFloat, indices: TInt, offsets: TInt, scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
    per_sample_weights: TFloat | None = None, include_last_offset: bool = False, padding_idx: int = -1,
) -> tuple[TFloat, TInt, TInt, TInt]:  # fmt: skip
    """_embedding_bag_forward_only(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int padding_idx=-1) -> (Tensor, Tensor, Tensor, Tensor)

    _embedding_bag without the gradient's bookkeeping: the same four outputs on CPU."""
    return _embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx,
                          "_embedding_bag_forward_only")  # fmt: skip


@aten_op("aten::embedding_bag")
def aten_embedding_bag(
    weight: TFloat, indices: TInt, offsets: TInt, scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
    per_sample_weights: TFloat | None = None, include_last_offset: bool = False,
) -> tuple[TFloat, TInt, TInt, TInt]:  # fmt: skip
    """embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, Tensor)"""
    return _embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, None, "embedding_bag")


@aten_op("aten::embedding_bag.padding_idx")
def aten_embedding_bag_padding_idx(
    weight: TFloat, indices: TInt, offsets: TInt, scale_grad_by_freq: bool, mode: int, sparse: bool,
    per_sample_weights: TFloat | None, include_last_offset: bool, padding_idx: int | None,
) -> tuple[TFloat, TInt, TInt, TInt]:  # fmt: skip
    """embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)

    A negative padding_idx counts from the end of weight's rows (torch wraps it)."""
    if padding_idx is not None and padding_idx < 0:
        rows = weight.shape[0] if weight.shape is not None else None
        if not isinstance(rows, int):
            raise ValueError(f"aten::embedding_bag.padding_idx: a negative padding_idx ({padding_idx}) needs weight's row count known, got {weight.shape}")
        padding_idx += rows
    return _embedding_bag(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx, "embedding_bag.padding_idx")
