"""Matrix functions: linalg_matrix_exp by scaling and squaring.

exp(A) = exp(A / 2^s)^(2^s) with s the smallest integer >= 0 that brings the 1-norm of A / 2^s
to at most 1, so that the degree-18 Taylor polynomial (in Horner form) is exact to 1/19! ~ 8e-18
relative. s is per matrix; the squarings run in an ONNX Loop as many times as the largest s of
the batch, each matrix squared only while its own s lasts. Computed in float64 and rounded
(float32 included), so the error is the conditioning of the problem, not of the arithmetic.
"""

from __future__ import annotations

import math

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops.linalg._common import check_square, loop, mm, reduce
from torchlib.registry import aten_op

DEGREE = 18
MAX_SQUARINGS = 1100  # 2^1100 overflows float64: inputs as large as that give inf as torch's


@aten_op("aten::linalg_matrix_exp")
def aten_linalg_matrix_exp(self: TFloat) -> TFloat:
    """linalg_matrix_exp(Tensor self) -> Tensor"""
    if self.dtype in (types.FLOAT16, types.BFLOAT16):  # torch's CPU kernel takes half types too
        return op.Cast(aten_linalg_matrix_exp(op.Cast(self, to=types.FLOAT.onnx)), to=self.dtype.onnx)
    n = check_square("linalg.matrix_exp", self, "self")
    if n == 0:
        return self
    a = op.Cast(self, to=types.DOUBLE.onnx)
    norm1 = reduce("Max", reduce("Sum", op.Abs(a), [-2], keepdims=0), [-1], keepdims=0)  # (...)
    s = op.Ceil(op.Div(op.Log(norm1), math.log(2.0)))
    s = op.Min(
        op.Max(op.Where(op.IsNaN(s), np.array(0.0), s), np.array(0.0)),
        np.array(float(MAX_SQUARINGS)),
    )
    x = op.Div(a, op.Unsqueeze(op.Pow(np.array(2.0), s), [-1, -2]))
    # sum of x^k / k!, Horner: p = I/18!, then p = I/k! + x p. No MatMul output is scaled by a
    # constant: onnxruntime would fuse that into FusedMatMul, whose scale is a float32 attribute.
    p: Value | np.ndarray = np.eye(n) / math.factorial(DEGREE)
    for k in reversed(range(DEGREE)):
        p = op.Add(np.eye(n) / math.factorial(k), mm(x, p))
    e = p
    assert isinstance(e, Value)  # DEGREE >= 1 terms added
    squarings = op.Cast(s, to=types.INT64.onnx)

    def body(i: Value, carried: list[Value]) -> tuple[None, list[Value]]:
        (e,) = carried
        more = op.Unsqueeze(op.Less(i, squarings), [-1, -2])
        return None, [op.Where(more, mm(e, e), e)]

    trips = reduce("Max", op.Reshape(squarings, [-1]), [0], keepdims=0)
    (e,) = loop(op.Max(trips, np.array(0, np.int64)), [e], body)
    return op.CastLike(e, self)
