"""Matrix products: mm, bmm, mv, dot, matmul, addmm, baddbmm, addmv, linear, outer, t.

ONNX MatMul follows numpy's matmul, which is torch.matmul's contract too (1-D operands get a
dimension prepended or appended and removed again, batch dimensions broadcast), so matmul and
its special cases are one MatMul. onnxruntime's MatMul has float16/float32/float64/int32/int64
kernels: bfloat16 is computed in float32 (as torch accumulates it) and 8/16-bit integers in
int32, then cast back (the cast wraps around, like torch's integer arithmetic). Gemm serves the
2-D float32/float16 cases of addmm and linear.
"""

from __future__ import annotations

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TReal, TRealOrBool
from graph_builder.types import DType
from torchlib.ops._kernels import scale
from torchlib.promotion import cast_to, elementwise
from torchlib.registry import aten_op

_MATMUL_DTYPE = {types.BFLOAT16: types.FLOAT, types.INT8: types.INT32, types.UINT8: types.INT32,
                 types.INT16: types.INT32}  # fmt: skip
# dtypes for which addmm/linear use Gemm, and the dtype Gemm computes in
_GEMM_DTYPE = {types.FLOAT: types.FLOAT, types.FLOAT16: types.FLOAT16, types.BFLOAT16: types.FLOAT}


def _product(a: Value, b: Value, then_add: bool = False) -> Value:
    """MatMul in a dtype onnxruntime has a kernel for (the result stays in that dtype). With
    then_add (a sum follows) float16 computes in float32 too, so that the product and the sum
    round once, as in torch."""
    if a.known_dtype.is_bool or b.known_dtype.is_bool:
        raise TypeError("matrix products are not implemented for bool tensors (torch raises too)")
    if a.dtype is not b.dtype:
        raise TypeError(f"matrix products need operands of one dtype, got {a.dtype} and {b.dtype} (torch raises too)")
    compute = types.FLOAT if then_add and a.dtype is types.FLOAT16 else _MATMUL_DTYPE.get(a.known_dtype, a.known_dtype)
    a, b = cast_to(a, compute), cast_to(b, compute)
    if b.rank == 1 and a.rank is not None and a.rank >= 2:
        # onnxruntime's matrix-vector MatMul returns stale memory when the inner dimension is 0
        # and fails when the matrix has 0 rows: multiply by a one-column matrix instead
        return op.Squeeze(op.MatMul(a, op.Unsqueeze(b, [1])), [-1])
    return op.MatMul(a, b)


def _matmul(a: Value, b: Value) -> Value:
    return cast_to(_product(a, b), a.known_dtype)


def _add_scaled(self: Value, product: Value, beta: float, alpha: float, dtype: DType) -> Value:
    """beta * self + alpha * product, computed in the product's dtype and cast to `dtype`. With
    beta == 0 self is ignored (NaN and inf included), as in torch; the product already has the
    broadcast result shape."""
    if alpha != 1:
        product = scale(product, alpha)
    if beta != 0:
        self = cast_to(self, product.known_dtype)
        product = op.Add(self if beta == 1 else op.Mul(self, beta), product)
    return cast_to(product, dtype)


def _check_rank(name: str, **tensors: tuple[Value, int]) -> None:
    for arg, (x, rank) in tensors.items():
        if x.rank is not None and x.rank != rank:
            raise ValueError(f"{name}: {arg} must be {rank}-D, got shape {list(x.shape or [])}")


@aten_op("aten::mm")
def aten_mm(self: TReal, mat2: TReal) -> TReal:
    """mm(Tensor self, Tensor mat2) -> Tensor"""
    _check_rank("mm", self=(self, 2), mat2=(mat2, 2))
    return _matmul(self, mat2)


@aten_op("aten::mm.dtype")
def aten_mm_dtype(self: TReal, mat2: TReal, out_dtype: DType) -> TReal:
    """mm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor"""
    _check_rank("mm", self=(self, 2), mat2=(mat2, 2))
    return _matmul(cast_to(self, out_dtype), cast_to(mat2, out_dtype))


@aten_op("aten::bmm")
def aten_bmm(self: TReal, mat2: TReal) -> TReal:
    """bmm(Tensor self, Tensor mat2) -> Tensor"""
    _check_rank("bmm", self=(self, 3), mat2=(mat2, 3))
    return _matmul(self, mat2)


@aten_op("aten::bmm.dtype")
def aten_bmm_dtype(self: TReal, mat2: TReal, out_dtype: DType) -> TReal:
    """bmm.dtype(Tensor self, Tensor mat2, ScalarType out_dtype) -> Tensor"""
    _check_rank("bmm", self=(self, 3), mat2=(mat2, 3))
    return _matmul(cast_to(self, out_dtype), cast_to(mat2, out_dtype))


@aten_op("aten::mv")
def aten_mv(self: TReal, vec: TReal) -> TReal:
    """mv(Tensor self, Tensor vec) -> Tensor"""
    _check_rank("mv", self=(self, 2), vec=(vec, 1))
    return _matmul(self, vec)


@aten_op("aten::dot")
def aten_dot(self: TReal, tensor: TReal) -> TReal:
    """dot(Tensor self, Tensor tensor) -> Tensor"""
    _check_rank("dot", self=(self, 1), tensor=(tensor, 1))
    return _matmul(self, tensor)


@aten_op("aten::matmul")
def aten_matmul(self: TReal, other: TReal) -> TReal:
    """matmul(Tensor self, Tensor other) -> Tensor"""
    if self.rank == 0 or other.rank == 0:
        raise ValueError("matmul: both arguments need at least 1 dimension")
    return _matmul(self, other)


def _addmm(self: Value, mat1: Value, mat2: Value, beta: float, alpha: float) -> Value:
    _check_rank("addmm", mat1=(mat1, 2), mat2=(mat2, 2))
    dtype = mat1.known_dtype
    compute = _GEMM_DTYPE.get(dtype)
    if compute is None or self.dtype is not dtype:
        return _add_scaled(self, _product(mat1, mat2, then_add=True), beta, alpha, dtype)
    a, b = cast_to(mat1, compute), cast_to(mat2, compute)
    if beta == 0:
        return cast_to(op.Gemm(a, b, alpha=alpha), dtype)
    c = cast_to(self, compute)
    inner = mat1.shape[1] if mat1.shape is not None else None
    if not (isinstance(inner, int) and inner > 0) and beta != 1:
        # onnxruntime's Gemm returns C unscaled (not beta * C) when the inner dimension is 0
        c, beta = op.Mul(c, beta), 1
    return cast_to(op.Gemm(a, b, c, alpha=alpha, beta=beta), dtype)


@aten_op("aten::addmm")
def aten_addmm(self: TReal, mat1: TReal, mat2: TReal, *, beta: float = 1, alpha: float = 1) -> TReal:
    """addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    return _addmm(self, mat1, mat2, beta, alpha)


@aten_op("aten::addmm.dtype")
def aten_addmm_dtype(
    self: TReal, mat1: TReal, mat2: TReal, out_dtype: DType, *, beta: float = 1, alpha: float = 1
) -> TReal:
    """addmm.dtype(Tensor self, Tensor mat1, Tensor mat2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    return _addmm(cast_to(self, out_dtype), cast_to(mat1, out_dtype), cast_to(mat2, out_dtype), beta, alpha)


@aten_op("aten::baddbmm")
def aten_baddbmm(self: TReal, batch1: TReal, batch2: TReal, *, beta: float = 1, alpha: float = 1) -> TReal:
    """baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    _check_rank("baddbmm", batch1=(batch1, 3), batch2=(batch2, 3))
    return _add_scaled(self, _product(batch1, batch2, then_add=True), beta, alpha, batch1.known_dtype)


@aten_op("aten::baddbmm.dtype")
def aten_baddbmm_dtype(
    self: TReal, batch1: TReal, batch2: TReal, out_dtype: DType, *, beta: float = 1, alpha: float = 1
) -> TReal:
    """baddbmm.dtype(Tensor self, Tensor batch1, Tensor batch2, ScalarType out_dtype, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    _check_rank("baddbmm", batch1=(batch1, 3), batch2=(batch2, 3))
    product = _product(cast_to(batch1, out_dtype), cast_to(batch2, out_dtype), then_add=True)
    return _add_scaled(self, product, beta, alpha, out_dtype)


@aten_op("aten::addmv")
def aten_addmv(self: TReal, mat: TReal, vec: TReal, *, beta: float = 1, alpha: float = 1) -> TReal:
    """addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    _check_rank("addmv", mat=(mat, 2), vec=(vec, 1))
    return _add_scaled(self, _product(mat, vec, then_add=True), beta, alpha, mat.known_dtype)


@aten_op("aten::linear")
def aten_linear(input: TReal, weight: TReal, bias: TReal | None = None) -> TReal:
    """linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor

    input @ weight.T + bias: one Gemm (transB=1) for a 2-D float input and 2-D weight,
    MatMul with the transposed weight and Add otherwise."""
    compute = _GEMM_DTYPE.get(input.known_dtype)
    if input.rank == 2 and weight.rank == 2 and compute is not None and weight.dtype is input.dtype:
        if bias is None or bias.dtype is input.dtype and (bias.rank or 0) <= 1:
            c = None if bias is None else cast_to(bias, compute)
            y = op.Gemm(cast_to(input, compute), cast_to(weight, compute), c, transB=1)
            return cast_to(y, input.known_dtype)
    if weight.rank == 2:
        weight = op.Transpose(weight, perm=[1, 0])
    if bias is None:
        return _matmul(input, weight)
    return _add_scaled(bias, _product(input, weight, then_add=True), 1, 1, input.known_dtype)


@aten_op("aten::t")
def aten_t(self: TRealOrBool) -> TRealOrBool:
    """t(Tensor(a) self) -> Tensor(a)"""
    if self.rank is None or self.rank > 2:
        raise ValueError(f"t() expects a tensor with <= 2 dimensions, got rank {self.rank}")
    if self.rank < 2:
        return self
    return op.Transpose(self, perm=[1, 0])


@aten_op("aten::outer")
@elementwise("self", "vec2")
def aten_outer(self: TRealOrBool, vec2: TRealOrBool) -> TRealOrBool:
    """outer(Tensor self, Tensor vec2) -> Tensor"""
    _check_rank("outer", self=(self, 1), vec2=(vec2, 1))
    column = op.Unsqueeze(self, [1])
    if self.known_dtype.is_bool:
        return op.And(column, vec2)
    if self.dtype is types.BFLOAT16:  # no bfloat16 Mul kernel; the float32 product is exact
        return cast_to(op.Mul(cast_to(column, types.FLOAT), cast_to(vec2, types.FLOAT)), self.dtype)
    return op.Mul(column, vec2)
