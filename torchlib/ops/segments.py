"""segment_reduce: reductions over consecutive segments of one axis, given by lengths or offsets.

As torch's CPU kernel: each segment starts from `initial` (else the reduction's identity:
-inf for max, +inf for min, 0 for sum and mean, 1 for prod), max and min propagate NaN, mean
divides the sum (initial included) by the segment's length, and an empty segment is `initial`
(NaN for mean without one). Every element of the axis is compared with every segment's bounds
(a [segments, elements] mask), so the memory is O(segments x elements x the other dims).
float16/bfloat16 compute in float32 and round once.
"""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.type_constraints import TFloat, TInt
from torchlib.ops._helpers import normalize_dim
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_IDENTITY = {"max": -np.inf, "min": np.inf, "sum": 0.0, "mean": 0.0, "prod": 1.0}


@aten_op("aten::segment_reduce")
def aten_segment_reduce(
    data: TFloat, reduce: str, *, lengths: TInt | None = None, indices: TInt | None = None, offsets: TInt | None = None,
    axis: int = 0, unsafe: bool = False, initial: float | None = None,
) -> TFloat:  # fmt: skip
    """segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor"""
    if reduce not in _IDENTITY:
        raise ValueError(f"aten::segment_reduce: reduce must be one of {sorted(_IDENTITY)}, got {reduce!r}")
    if indices is not None:
        raise ValueError("aten::segment_reduce: indices are not supported (torch raises too); give lengths or offsets")
    if (lengths is None) == (offsets is None):
        raise ValueError("aten::segment_reduce: give exactly one of lengths and offsets")
    if not data.known_dtype.is_floating or data.rank is None:
        raise TypeError(f"aten::segment_reduce expects a floating tensor of known rank, got {data.dtype} of rank {data.rank}")
    axis = normalize_dim(axis, data.rank)
    if lengths is not None:
        lengths = cast_to(lengths, types.INT64)
        ends = op.CumSum(lengths, np.array(-1, np.int64))
        starts = op.Sub(ends, lengths)
    else:
        assert offsets is not None
        offsets = cast_to(offsets, types.INT64)
        big = np.array([np.iinfo(np.int64).max], np.int64)
        starts = op.Slice(offsets, [0], [-1], [-1])
        ends = op.Slice(offsets, [1], big, [-1])
    work = types.FLOAT if data.dtype in (types.FLOAT16, types.BFLOAT16) else data.known_dtype
    x = op.Unsqueeze(cast_to(data, work), [axis])  # [pre..., 1, N, post...]
    n = op.Shape(data, start=axis, end=axis + 1)
    position = op.Range(np.array(0, np.int64), op.Squeeze(n, [0]), np.array(1, np.int64))  # [N]
    inside = op.And(op.LessOrEqual(op.Unsqueeze(starts, [-1]), position), op.Less(position, op.Unsqueeze(ends, [-1])))  # [pre..., S, N]
    post = data.rank - axis - 1
    if post:
        inside = op.Unsqueeze(inside, list(range(axis + 2, axis + 2 + post)))
    identity = op.CastLike(_IDENTITY[reduce], x)
    masked = op.Where(inside, x, identity)
    counts = cast_to(op.Sub(ends, starts), work)  # [pre..., S]
    if post:
        counts = op.Unsqueeze(counts, list(range(axis + 1, axis + 1 + post)))
    reduce_axis = [axis + 1]
    if reduce in ("sum", "mean"):
        out = op.ReduceSum(masked, reduce_axis, keepdims=0)
    elif reduce == "prod":
        out = op.ReduceProd(masked, reduce_axis, keepdims=0)
    else:
        out = (op.ReduceMax if reduce == "max" else op.ReduceMin)(masked, reduce_axis, keepdims=0)
        has_nan = op.Cast(op.ReduceMax(op.Cast(op.And(inside, op.IsNaN(x)), to=types.INT32.onnx), reduce_axis, keepdims=0), to=types.BOOL.onnx)
        out = op.Where(has_nan, op.CastLike(np.nan, x), out)
    if initial is not None:
        start = op.CastLike(float(initial), x)
        if reduce in ("sum", "mean"):
            out = op.Add(start, out)
        elif reduce == "prod":
            out = op.Mul(start, out)
        else:  # std::max(initial, value) keeps a NaN value
            chosen = (op.Max if reduce == "max" else op.Min)(out, start)
            out = op.Where(op.IsNaN(out), out, chosen)
    if reduce == "mean":
        empty = op.Equal(counts, op.CastLike(0, counts))
        fallback = op.CastLike(np.nan if initial is None else float(initial), x)
        out = op.Where(empty, fallback, op.Div(out, op.Where(empty, op.CastLike(1, counts), counts)))
    return cast_to(out, data.known_dtype)
