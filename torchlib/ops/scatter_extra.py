"""Writes at indices: index_copy (rows of source at index along a dim) and put (source at flat
indices of self, optionally accumulated). With duplicate indices and no accumulation torch
leaves the winner unspecified; onnxruntime's ScatterElements keeps the last write."""

from __future__ import annotations

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TInt, TTensor
from torchlib.ops._helpers import normalize_dim
from torchlib.promotion import cast_to
from torchlib.registry import aten_op

_ADD = (types.FLOAT, types.DOUBLE, types.INT32, types.INT64)  # ScatterElements(add) kernels


@aten_op("aten::index_copy")
def aten_index_copy(self: TTensor, dim: int, index: TInt, source: TTensor) -> TTensor:
    """index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor"""
    scalar = self.rank == 0
    x, src = (op.Reshape(self, [1]), op.Reshape(source, [1])) if scalar else (self, source)
    axis = normalize_dim(dim, x.known_rank)
    shape = [1] * x.known_rank
    shape[axis] = -1
    idx = op.Expand(op.Reshape(cast_to(index, types.INT64), shape), op.Shape(src))
    result = op.ScatterElements(x, idx, cast_to(src, self.known_dtype), axis=axis)
    return op.Reshape(result, np.zeros(0, np.int64)) if scalar else result


@aten_op("aten::put")
def aten_put(self: TTensor, index: TInt, source: TTensor, accumulate: bool = False) -> TTensor:
    """put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor"""
    flat = op.Reshape(self, [-1])
    idx = op.Reshape(cast_to(index, types.INT64), [-1])
    # negative indices count from the end, as in torch
    idx = op.Where(op.Less(idx, 0), op.Add(idx, op.Shape(flat)), idx)
    src = op.Reshape(cast_to(source, self.known_dtype), [-1])
    if not accumulate:
        return op.Reshape(op.ScatterElements(flat, idx, src), op.Shape(self))
    wide = self.dtype if self.dtype in _ADD else (types.DOUBLE if self.known_dtype.is_floating else types.INT64)
    if self.dtype is types.BOOL:
        wide = types.INT64
    summed = op.ScatterElements(cast_to(flat, wide), idx, cast_to(src, wide), reduction="add")
    result: Value = cast_to(op.Reshape(summed, op.Shape(self)), self.known_dtype)
    return result
