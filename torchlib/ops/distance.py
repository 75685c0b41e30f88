"""Distances: dist (the p-norm of a difference) and pdist / _pdist_forward (the pairwise
distances of the rows of a matrix, the upper triangle of cdist(x, x) in row-major order).
Both compute directly over the differences (no matmul expansion), in float32 / float64."""

from __future__ import annotations

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops._kernels import OPMATH, run_supported
from torchlib.ops.nn_extra import _norm, aten__cdist_forward
from torchlib.promotion import elementwise
from torchlib.registry import aten_op


@aten_op("aten::dist")
@elementwise("self", "other")
def aten_dist(self: TFloat, other: TFloat, p: float = 2) -> TFloat:
    """dist(Tensor self, Tensor other, Scalar p=2) -> Tensor"""
    if not self.known_dtype.is_floating:
        raise TypeError(f"aten::dist is defined for floating tensors only, got {self.dtype}")

    def norm(a: Value, b: Value) -> Value:
        return _norm(op.Reshape(op.Sub(a, b), [-1]), float(p), 0, 0)

    return run_supported(norm, OPMATH, self, other)


@aten_op("aten::_pdist_forward")
def aten__pdist_forward(self: TFloat, p: float = 2) -> TFloat:
    """_pdist_forward(Tensor self, float p=2) -> Tensor"""
    if self.rank != 2:
        raise ValueError(f"aten::_pdist_forward expects a 2-D input, got rank {self.rank}")
    distances = op.Reshape(aten__cdist_forward(self, self, p, None), [-1])
    index = op.Range(0, op.Squeeze(op.Shape(self, start=0, end=1), [0]), 1)
    upper = op.Reshape(op.Less(op.Unsqueeze(index, [1]), op.Unsqueeze(index, [0])), [-1])  # i < j
    return op.Compress(distances, upper, axis=0)


@aten_op("aten::pdist")
def aten_pdist(self: TFloat, p: float = 2) -> TFloat:
    """pdist(Tensor self, float p=2) -> Tensor"""
    return aten__pdist_forward(self, p)
