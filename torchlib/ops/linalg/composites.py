"""The linear algebra that torch composes from its factorisations and products (its
CompositeImplicitAutograd kernels): det/slogdet/logdet/inv/cholesky/eigh/svd/qr/pinv under
their public and legacy names, matrix powers, multi_dot, tensordot, inner/vdot/ger/vecdot,
lu_factor, tensorinv/tensorsolve, vander, and the matrix norms, condition numbers and ranks.

Each calls the factorisation of this package (lu, cholesky, qr, spectral) or the product
(products) it needs, and keeps torch's output conventions (svd returns V, not Vᴴ; logdet is NaN
for a negative determinant)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TInt, TReal
from graph_builder.types import BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, INT64, DType
from torchlib.ops._helpers import dim_size, normalize_dim
from torchlib.ops._kernels import full_of
from torchlib.ops.elementwise import aten_add, aten_mul
from torchlib.ops.linalg._common import check_matrix, check_square, eye, tr
from torchlib.ops.linalg.cholesky import aten_linalg_cholesky_ex
from torchlib.ops.linalg.lu import (
    aten__linalg_det,
    aten__linalg_slogdet,
    aten_linalg_inv_ex,
    aten_linalg_lu_factor_ex,
    aten_linalg_solve,
)
from torchlib.ops.linalg.products import aten_dot, aten_matmul, aten_mm, aten_outer
from torchlib.ops.linalg.qr import aten_linalg_qr
from torchlib.ops.linalg.spectral import (
    EIGENVECTORS,
    SINGULAR_VECTORS,
    aten__linalg_eigh,
    aten__linalg_svd,
    aten_linalg_pinv_atol_rtol_float,
    aten_linalg_pinv_atol_rtol_tensor,
)
from torchlib.ops.reductions import aten_amax, aten_amin, aten_cumprod, aten_linalg_vector_norm, aten_sum_dim_IntList
from torchlib.ops.shape import aten_diagonal, aten_expand, aten_permute
from torchlib.promotion import promote_types
from torchlib.registry import aten_op

# -- determinants and inverses -------------------------------------------------------------------


@aten_op("aten::linalg_det")
def aten_linalg_det(A: TFloat) -> TFloat:
    """linalg_det(Tensor A) -> Tensor"""
    return aten__linalg_det(A)[0]


@aten_op("aten::det")
def aten_det(self: TFloat) -> TFloat:
    """det(Tensor self) -> Tensor"""
    return aten__linalg_det(self)[0]


@aten_op("aten::linalg_slogdet")
def aten_linalg_slogdet(A: TFloat) -> tuple[TFloat, TFloat]:
    """linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)"""
    sign, logabsdet, _, _ = aten__linalg_slogdet(A)
    return sign, logabsdet


@aten_op("aten::slogdet")
def aten_slogdet(self: TFloat) -> tuple[TFloat, TFloat]:
    """slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)"""
    return aten_linalg_slogdet(self)


@aten_op("aten::logdet")
def aten_logdet(self: TFloat) -> TFloat:
    """logdet(Tensor self) -> Tensor"""
    sign, logabsdet, _, _ = aten__linalg_slogdet(self)
    # torch: log|det| where det > 0, -inf where det == 0 (logabsdet is -inf), NaN where det < 0
    return op.Where(op.Less(sign, op.CastLike(0, sign)), op.CastLike(np.nan, logabsdet), logabsdet)


@aten_op("aten::linalg_inv")
def aten_linalg_inv(A: TFloat) -> TFloat:
    """linalg_inv(Tensor A) -> Tensor"""
    return aten_linalg_inv_ex(A)[0]


@aten_op("aten::inverse")
def aten_inverse(self: TFloat) -> TFloat:
    """inverse(Tensor self) -> Tensor"""
    return aten_linalg_inv_ex(self)[0]


@aten_op("aten::linalg_cholesky")
def aten_linalg_cholesky(self: TFloat, *, upper: bool = False) -> TFloat:
    """linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor"""
    return aten_linalg_cholesky_ex(self, upper=upper)[0]


# -- eigenvalues, singular values, QR, pseudo-inverse --------------------------------------------


@aten_op("aten::linalg_eigh", not_unique=EIGENVECTORS, free_outputs=(1,))
def aten_linalg_eigh(self: TFloat, UPLO: str = "L") -> tuple[TFloat, TFloat]:
    """linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)"""
    return aten__linalg_eigh(self, UPLO, True)


@aten_op("aten::linalg_eigvalsh")
def aten_linalg_eigvalsh(self: TFloat, UPLO: str = "L") -> TFloat:
    """linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor"""
    return aten__linalg_eigh(self, UPLO, False)[0]


@aten_op("aten::linalg_svd", not_unique=SINGULAR_VECTORS, free_outputs=(0, 2))
def aten_linalg_svd(A: TFloat, full_matrices: bool = True, *, driver: str | None = None) -> tuple[TFloat, TFloat, TFloat]:
    """linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)"""
    return aten__linalg_svd(A, full_matrices, True, driver=driver)


@aten_op("aten::linalg_svdvals")
def aten_linalg_svdvals(A: TFloat, *, driver: str | None = None) -> TFloat:
    """linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor"""
    return aten__linalg_svd(A, False, False, driver=driver)[1]


@aten_op("aten::svd", not_unique=SINGULAR_VECTORS, free_outputs=(0, 2))
def aten_svd(self: TFloat, some: bool = True, compute_uv: bool = True) -> tuple[TFloat, TFloat, TFloat]:
    """svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)"""
    if compute_uv:
        u, s, vh = aten__linalg_svd(self, not some, True)
        return u, s, tr(vh)
    s = aten__linalg_svd(self, False, False)[1]
    # torch: U and V are zero-filled (m, m) and (n, n) matrices
    m, n = self.static_dim(-2), self.static_dim(-1)
    batch = op.Shape(self, end=-2)
    zeros = np.zeros(1, self.known_dtype.numpy)
    u = op.ConstantOfShape(op.Concat(batch, [m, m], axis=0), value=zeros)
    v = op.ConstantOfShape(op.Concat(batch, [n, n], axis=0), value=zeros)
    return u, s, v


@aten_op("aten::qr", if_torch_has=True)  # removed in torch 2.14 (torch.linalg.qr replaces it)
def aten_qr(self: TFloat, some: bool = True) -> tuple[TFloat, TFloat]:
    """qr(Tensor self, bool some=True) -> (Tensor Q, Tensor R)"""
    return aten_linalg_qr(self, "reduced" if some else "complete")


@aten_op("aten::linalg_pinv")
def aten_linalg_pinv(self: TFloat, rcond: float, hermitian: bool = False) -> TFloat:
    """linalg_pinv(Tensor self, float rcond, bool hermitian=False) -> Tensor"""
    return aten_linalg_pinv_atol_rtol_float(self, atol=0.0, rtol=rcond, hermitian=hermitian)


@aten_op("aten::linalg_pinv.rcond_tensor")
def aten_linalg_pinv_rcond_tensor(self: TFloat, rcond: TFloat, hermitian: bool = False) -> TFloat:
    """linalg_pinv.rcond_tensor(Tensor self, Tensor rcond, bool hermitian=False) -> Tensor"""
    atol = op.Mul(rcond, op.CastLike(0, rcond))
    return aten_linalg_pinv_atol_rtol_tensor(self, atol=atol, rtol=rcond, hermitian=hermitian)


@aten_op("aten::pinverse")
def aten_pinverse(self: TFloat, rcond: float = 1e-15) -> TFloat:
    """pinverse(Tensor self, float rcond=1e-15) -> Tensor"""
    return aten_linalg_pinv(self, rcond)


# -- powers and chains of products ---------------------------------------------------------------


def _matrix_power(name: str, self: Value, n: int) -> Value:
    """A^n by binary powering (torch's order of products); A^0 is the identity, A^-n = inv(A)^n."""
    if n < 0:
        size = check_square(name, self)  # an inverse: float32/float64 only
    elif self.known_rank < 2 or self.known_shape[-1] != self.known_shape[-2] or not isinstance(self.known_shape[-1], int):
        raise ValueError(f"{name}: needs a batch of square matrices of static size, got shape {list(self.shape or [])} (torch raises for non-square too)")
    else:
        size = self.static_dim(-1)
    if n == 0:
        return op.Expand(op.CastLike(eye(size, size, self.known_dtype), self), op.Shape(self))
    a = aten_linalg_inv(self) if n < 0 else self
    n = abs(n)
    result: Value | None = None
    while n:
        if n & 1:
            result = a if result is None else aten_matmul(result, a)
        n >>= 1
        if n:
            a = aten_matmul(a, a)
    assert result is not None  # n >= 1
    return op.Identity(result)


@aten_op("aten::linalg_matrix_power")
def aten_linalg_matrix_power(self: TReal, n: int) -> TReal:
    """linalg_matrix_power(Tensor self, int n) -> Tensor"""
    return _matrix_power("linalg.matrix_power", self, n)


@aten_op("aten::matrix_power")
def aten_matrix_power(self: TReal, n: int) -> TReal:
    """matrix_power(Tensor self, int n) -> Tensor"""
    return _matrix_power("matrix_power", self, n)


@aten_op("aten::linalg_matmul")
def aten_linalg_matmul(self: TReal, other: TReal) -> TReal:
    """linalg_matmul(Tensor self, Tensor other) -> Tensor"""
    return aten_matmul(self, other)


def _mm(a: Value, b: Value) -> Value:
    """a @ b as torch's CPU mm computes it: float16 accumulates in float32 and rounds once (the
    float16 MatMul of onnxruntime's optimized graphs rounds differently)."""
    if a.dtype is FLOAT16 and b.dtype is FLOAT16:
        return op.Cast(op.MatMul(op.Cast(a, to=FLOAT.onnx), op.Cast(b, to=FLOAT.onnx)), to=FLOAT16.onnx)
    return aten_mm(a, b)


def _chain_order(matrices: Sequence[Value]) -> list[list[int]] | None:
    """torch's multiplication order (LinearAlgebra.cpp, multi_dot_impl): split[i][j] is the k
    after which the chain i..j is cut (the cheapest, the first of equal costs; for three
    matrices torch compares the two costs itself, preferring (AB)C on a tie). None when a
    dimension is dynamic (then the chain is multiplied left to right)."""
    if not all(m.shape for m in matrices):
        return None
    shape_dims = [m.known_shape[0] for m in matrices] + [matrices[-1].known_shape[1]]
    dims = [d for d in shape_dims if isinstance(d, int)]
    if len(dims) < len(shape_dims):  # a dynamic dimension
        return None
    n = len(matrices)
    split = [[0] * n for _ in range(n)]
    if n == 3:
        a, b, c, d = dims
        split[0][2] = 0 if (a * c) * (b + d) > (b * d) * (a + c) else 1
        split[1][2], split[0][1] = 1, 0
        return split
    cost = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min((cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                                          for k in range(i, j))
    return split


def _chain(name: str, matrices: Sequence[Value]) -> Value:
    if not matrices:
        raise ValueError(f"aten::{name} needs at least one tensor (torch raises too)")
    if len(matrices) == 1:
        return op.Identity(matrices[0])
    split = _chain_order(matrices) if len(matrices) > 2 else None

    def product(i: int, j: int) -> Value:
        if i == j:
            return matrices[i]
        k = split[i][j] if split is not None else j - 1
        return _mm(product(i, k), product(k + 1, j))

    return product(0, len(matrices) - 1)


@aten_op("aten::chain_matmul")
def aten_chain_matmul(matrices: Sequence[TReal]) -> TReal:
    """chain_matmul(Tensor[] matrices) -> Tensor"""
    for i, m in enumerate(matrices):
        if m.rank != 2:
            raise ValueError(f"aten::chain_matmul: tensor {i} must be 2-D, got shape {list(m.known_shape)} (torch raises too)")
    return _chain("chain_matmul", matrices)


@aten_op("aten::linalg_multi_dot")
def aten_linalg_multi_dot(tensors: Sequence[TReal]) -> TReal:
    """linalg_multi_dot(Tensor[] tensors) -> Tensor"""
    if len(tensors) < 2:
        raise ValueError(f"aten::linalg_multi_dot needs at least 2 tensors, got {len(tensors)} (torch raises too)")
    first, *middle, last = tensors
    for i, m in enumerate(middle, 1):
        if m.rank != 2:
            raise ValueError(f"aten::linalg_multi_dot: tensor {i} must be 2-D, got shape {list(m.known_shape)} (torch raises too)")
    if first.rank not in (1, 2) or last.rank not in (1, 2):
        raise ValueError("aten::linalg_multi_dot: the first and last tensors must be 1-D or 2-D (torch raises too)")
    row = first.rank == 1
    column = last.rank == 1
    chain = [op.Unsqueeze(first, [0]) if row else first, *middle, op.Unsqueeze(last, [1]) if column else last]
    result = _chain("linalg_multi_dot", chain)
    squeeze = ([0] if row else []) + ([1] if column else [])
    return op.Squeeze(result, squeeze) if squeeze else result


# -- contractions ------------------------------------------------------------------------------


@aten_op("aten::tensordot")
def aten_tensordot(self: TReal, other: TReal, dims_self: Sequence[int], dims_other: Sequence[int]) -> TReal:
    """tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor"""
    if len(dims_self) != len(dims_other):
        raise ValueError(f"aten::tensordot: both sides must contract as many dims, got {list(dims_self)} and {list(dims_other)}")
    contract_a = [normalize_dim(d, self.known_rank) for d in dims_self]
    contract_b = [normalize_dim(d, other.known_rank) for d in dims_other]
    # torch broadcasts a contracted size 1 against the other side's size
    size_a = [-1] * self.known_rank
    size_b = [-1] * other.known_rank
    for da, db in zip(contract_a, contract_b):
        na, nb = self.known_shape[da], other.known_shape[db]
        if na == 1 and nb != 1:  # nb may be symbolic: its size from the graph
            size_a[da] = dim_size(other, db)
        elif nb == 1 and na != 1:
            size_b[db] = dim_size(self, da)
    self = aten_expand(self, size_a) if any(s != -1 for s in size_a) else self
    other = aten_expand(other, size_b) if any(s != -1 for s in size_b) else other
    free_a = [d for d in range(self.known_rank) if d not in contract_a]
    free_b = [d for d in range(other.known_rank) if d not in contract_b]
    # (free_a..., contracted...) @ (contracted..., free_b...), each flattened to a matrix
    a = op.Flatten(aten_permute(self, free_a + contract_a), axis=len(free_a))
    b = op.Flatten(aten_permute(other, contract_b + free_b), axis=len(contract_b))
    product = aten_mm(a, b)
    shape_a = op.Shape(aten_permute(self, free_a + contract_a), end=len(free_a))
    shape_b = op.Shape(aten_permute(other, contract_b + free_b), start=len(contract_b))
    return op.Reshape(product, op.Concat(shape_a, shape_b, axis=0), allowzero=1)


@aten_op("aten::inner")
def aten_inner(self: TReal, other: TReal) -> TReal:
    """inner(Tensor self, Tensor other) -> Tensor"""
    if self.rank == 0 or other.rank == 0:
        return aten_mul(self, other)
    return aten_tensordot(self, other, [-1], [-1])


@aten_op("aten::vdot")
def aten_vdot(self: TReal, other: TReal) -> TReal:
    """vdot(Tensor self, Tensor other) -> Tensor"""
    return aten_dot(self, other)  # real tensors: no conjugation


@aten_op("aten::addr")
def aten_addr(self: TReal, vec1: TReal, vec2: TReal, *, beta: float = 1, alpha: float = 1) -> TReal:
    """addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"""
    if all(t.dtype is BOOL for t in (self, vec1, vec2)):  # torch: (beta and self) or (alpha and vec1 vec2ᵀ)
        outer = aten_outer(vec1, vec2) if alpha else full_of(op.Shape(aten_outer(vec1, vec2)), False, BOOL)
        return op.Or(self, outer) if beta else op.Or(full_of(op.Shape(self), False, BOOL), outer)
    dtype = self.dtype
    if dtype in (FLOAT16, BFLOAT16):  # torch's half kernel accumulates in float32 and rounds once
        self, vec1, vec2 = (op.Cast(t, to=FLOAT.onnx) for t in (self, vec1, vec2))
    outer = aten_outer(vec1, vec2)
    if alpha != 1:
        outer = aten_mul(outer, alpha)
    if beta == 0:  # torch ignores self (its NaN and inf too), keeping its shape in the result
        out = aten_add(full_of(op.Shape(self), 0, self.known_dtype), outer)
    else:
        out = aten_add(self if beta == 1 else aten_mul(self, beta), outer)
    return op.Cast(out, to=dtype.onnx) if dtype in (FLOAT16, BFLOAT16) else out


@aten_op("aten::ger")
def aten_ger(self: TReal, vec2: TReal) -> TReal:
    """ger(Tensor self, Tensor vec2) -> Tensor"""
    return aten_outer(self, vec2)


@aten_op("aten::linalg_vecdot")
def aten_linalg_vecdot(x: TReal, y: TReal, *, dim: int = -1) -> TReal:
    """linalg_vecdot(Tensor x, Tensor y, *, int dim=-1) -> Tensor"""
    if x.dtype is not y.dtype:
        raise TypeError(f"aten::linalg_vecdot: x and y must have one dtype, got {x.dtype} and {y.dtype} (torch raises too)")
    if x.dtype in (FLOAT16, BFLOAT16):
        # torch: (x * y).sum(dim), the products rounded to the dtype, summed in float32. The
        # product is computed in float32 and rounded explicitly: onnxruntime's optimized graph
        # would otherwise keep the float16 Mul's result in float32 for the sum.
        product = op.Cast(op.Mul(op.Cast(x, to=FLOAT.onnx), op.Cast(y, to=FLOAT.onnx)), to=x.dtype.onnx)
        return aten_sum_dim_IntList(product, [dim])
    return aten_sum_dim_IntList(aten_mul(x, y), [dim])


@aten_op("aten::linalg_diagonal")
def aten_linalg_diagonal(A: TReal, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> TReal:
    """linalg_diagonal(Tensor(a) A, *, int offset=0, int dim1=-2, int dim2=-1) -> Tensor(a)"""
    return aten_diagonal(A, offset, dim1, dim2)


# -- factorisations without their error checks -------------------------------------------------


@aten_op("aten::linalg_lu_factor")
def aten_linalg_lu_factor(A: TFloat, *, pivot: bool = True) -> tuple[TFloat, TInt]:
    """linalg_lu_factor(Tensor A, *, bool pivot=True) -> (Tensor LU, Tensor pivots)

    torch raises for a singular matrix (info > 0); a graph cannot, it returns the factors."""
    lu, pivots, _ = aten_linalg_lu_factor_ex(A, pivot=pivot)
    return lu, pivots


@aten_op("aten::linalg_tensorinv")
def aten_linalg_tensorinv(self: TFloat, ind: int = 2) -> TFloat:
    """linalg_tensorinv(Tensor self, int ind=2) -> Tensor"""
    if ind <= 0:
        raise ValueError(f"aten::linalg_tensorinv: expected a strictly positive integer for 'ind', got {ind} (torch raises too)")
    dims = list(self.shape or [])
    shape = [d for d in dims if isinstance(d, int)]
    if len(shape) < len(dims):
        raise ValueError(f"aten::linalg_tensorinv: the shape must be static (the inverse is unrolled over it), got {dims}")
    start, end = shape[:ind], shape[ind:]
    n = math.prod(end)
    if math.prod(start) != n:
        raise ValueError(f"aten::linalg_tensorinv: prod(shape[:ind]) must equal prod(shape[ind:]), got shape {shape} and ind {ind} (torch raises too)")
    inverse = aten_linalg_inv_ex(op.Reshape(self, [n, n]))[0]
    return op.Reshape(inverse, end + start)


@aten_op("aten::linalg_tensorsolve")
def aten_linalg_tensorsolve(self: TFloat, other: TFloat, dims: Sequence[int] | None = None) -> TFloat:
    """linalg_tensorsolve(Tensor self, Tensor other, int[]? dims=None) -> Tensor"""
    if dims:  # torch moves these dims to the end, in their order
        moved = [normalize_dim(d, self.known_rank) for d in dims]
        self = aten_permute(self, [d for d in range(self.known_rank) if d not in moved] + moved)
    self_dims, other_dims = list(self.shape or []), list(other.shape or [])
    shape = [d for d in self_dims if isinstance(d, int)]
    other_shape = [d for d in other_dims if isinstance(d, int)]
    if len(shape) < len(self_dims) or len(other_shape) < len(other_dims):
        raise ValueError(f"aten::linalg_tensorsolve: shapes must be static, got {self_dims} and {other_dims}")
    result_shape = shape[len(other_shape):]
    n = math.prod(other_shape)
    if math.prod(result_shape) != n:
        raise ValueError(f"aten::linalg_tensorsolve: expected self to satisfy prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
                         f"got {shape} and {other_shape} (torch raises too)")  # fmt: skip
    result = aten_linalg_solve(op.Reshape(self, [n, n]), op.Reshape(other, [n]))
    return op.Reshape(result, result_shape)


# -- norms, condition numbers, ranks (LinearAlgebra.cpp) ---------------------------------------


def _matrix_dims(name: str, A: Value, dim: Sequence[int], dtype: DType | None, low_precision: bool) -> tuple[int, int]:
    """torch's _linalg_matrix_norm_checks: two distinct dims of a floating tensor of rank >= 2."""
    if A.rank is None or A.rank < 2:
        raise ValueError(f"aten::{name}: the input must have at least 2 dimensions (torch raises too)")
    if len(dim) != 2:
        raise ValueError(f"aten::{name}: dim must be a 2-tuple of ints, got {list(dim)} (torch raises too)")
    d0, d1 = (normalize_dim(d, A.rank) for d in dim)
    if d0 == d1:
        raise ValueError(f"aten::{name}: dims must be different, got {list(dim)} (torch raises too)")
    allowed = (FLOAT, DOUBLE, FLOAT16, BFLOAT16) if low_precision else (FLOAT, DOUBLE)
    if A.dtype not in allowed:
        raise TypeError(f"aten::{name}: expected a floating point input, got {A.dtype} (torch raises too)")
    if dtype is not None and (not dtype.is_floating or promote_types(A.known_dtype, dtype) is not dtype):
        raise TypeError(f"aten::{name}: the dtype {dtype} cannot hold the input's {A.dtype} (torch raises too)")
    return d0, d1


def _empty_matrix_norm(A: Value, d0: int, d1: int, keepdim: bool, dtype: DType | None, ord: Any) -> Value:
    """torch's norm when the last reduction (the singular values, or dim d1 for the 1- and
    inf-norms) has no element: zeros when it is a maximum or a sum; a minimum of nothing raises."""
    if not isinstance(ord, str) and ord < 0:
        raise ValueError(f"aten::linalg_matrix_norm: order {ord} of this empty matrix takes the minimum of nothing (torch raises too)")
    sizes = op.Shape(A)
    sizes = op.ScatterElements(sizes, [d0, d1], [1, 1]) if keepdim else op.Gather(sizes, [d for d in range(A.known_rank) if d not in (d0, d1)])
    return op.ConstantOfShape(sizes, value=np.zeros(1, (dtype or A.known_dtype).numpy))


def _singular_value_norm(A: Value, d0: int, d1: int, keepdim: bool, dtype: DType | None, reduce: Any) -> Value:
    """reduce(singular values, keepdim) of the matrices over (d0, d1), moved to the end first."""
    if dtype is not None and dtype is not A.dtype:
        A = op.Cast(A, to=dtype.onnx)
    perm = [d for d in range(A.known_rank) if d not in (d0, d1)] + [d0, d1]
    result = reduce(aten_linalg_svdvals(aten_permute(A, perm)), keepdim)
    if keepdim:  # back to the input's layout, the two dims of size 1
        result = aten_permute(op.Unsqueeze(result, [-1]), [perm.index(d) for d in range(A.known_rank)])
    return result


def _matrix_norm(A: Value, ord: float, dim: Sequence[int], keepdim: bool, dtype: DType | None) -> Value:
    if abs(ord) not in (1.0, 2.0, math.inf):
        raise ValueError(f"aten::linalg_matrix_norm: order {ord} not supported (torch raises too)")
    d0, d1 = _matrix_dims("linalg_matrix_norm", A, dim, dtype, low_precision=abs(ord) != 2)
    extremum = aten_amax if ord > 0 else aten_amin
    if abs(ord) == 2:
        if 0 in (A.known_shape[d0], A.known_shape[d1]):
            return _empty_matrix_norm(A, d0, d1, keepdim, dtype, ord)
        return _singular_value_norm(A, d0, d1, keepdim, dtype, lambda s, keep: extremum(s, [-1], keep))
    if ord in (math.inf, -math.inf):  # the 1-norm of the transpose
        d0, d1 = d1, d0
    if A.known_shape[d1] == 0:
        return _empty_matrix_norm(A, d0, d1, keepdim, dtype, ord)
    if not keepdim and d0 < d1:
        d1 -= 1
    return extremum(aten_linalg_vector_norm(A, 1.0, [d0], keepdim, dtype=dtype), [d1], keepdim)


def _matrix_norm_str(A: Value, ord: str, dim: Sequence[int], keepdim: bool, dtype: DType | None) -> Value:
    if ord not in ("fro", "nuc"):
        raise ValueError(f"aten::linalg_matrix_norm: order {ord!r} not supported (torch raises too)")
    d0, d1 = _matrix_dims("linalg_matrix_norm", A, dim, dtype, low_precision=ord != "nuc")
    if ord == "fro":
        return aten_linalg_vector_norm(A, 2.0, [d0, d1], keepdim, dtype=dtype)
    if 0 in (A.known_shape[d0], A.known_shape[d1]):
        return _empty_matrix_norm(A, d0, d1, keepdim, dtype, ord)
    return _singular_value_norm(A, d0, d1, keepdim, dtype, lambda s, keep: aten_sum_dim_IntList(s, [-1], keep))


@aten_op("aten::linalg_matrix_norm")
def aten_linalg_matrix_norm(
    self: TFloat, ord: float, dim: Sequence[int] = (-2, -1), keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _matrix_norm(self, ord, dim, keepdim, dtype)


@aten_op("aten::linalg_matrix_norm.str_ord")
def aten_linalg_matrix_norm_str_ord(
    self: TFloat, ord: str = "fro", dim: Sequence[int] = (-2, -1), keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _matrix_norm_str(self, ord, dim, keepdim, dtype)


def _norm_dims(self: Value, dim: Sequence[int] | None, ord_given: bool) -> None:
    if dim is not None and len(dim) not in (1, 2):
        raise ValueError(f"aten::linalg_norm: dim must be of length 1 or 2, got {list(dim)} (torch raises too)")
    if dim is None and ord_given and self.rank not in (1, 2):
        raise ValueError(f"aten::linalg_norm: without dim, an ord needs a 1-D or 2-D input, got {self.rank}-D (torch raises too)")


@aten_op("aten::linalg_norm")
def aten_linalg_norm(
    self: TFloat, ord: float | None = None, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    _norm_dims(self, dim, ord is not None)
    if ord is not None and (len(dim) == 2 if dim is not None else self.rank == 2):
        return _matrix_norm(self, ord, [0, 1] if dim is None else dim, keepdim, dtype)
    return aten_linalg_vector_norm(self, 2.0 if ord is None else ord, dim, keepdim, dtype=dtype)


@aten_op("aten::linalg_norm.ord_str")
def aten_linalg_norm_ord_str(
    self: TFloat, ord: str, dim: Sequence[int] | None = None, keepdim: bool = False, *, dtype: DType | None = None
) -> TFloat:
    """linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    _norm_dims(self, dim, True)
    return _matrix_norm_str(self, ord, [0, 1] if dim is None else dim, keepdim, dtype)


def _empty_cond(self: Value) -> Value | None:
    """torch's condition number of a tensor without elements: zeros of the batch shape (None
    otherwise)."""
    if 0 in self.known_shape:
        return op.ConstantOfShape(op.Shape(self, end=-2), value=np.zeros(1, self.known_dtype.numpy))
    return None


def _cond_by_inverse(self: Value, ord: float | str) -> Value:
    """norm(A) * norm(inv(A)), the inverse of a singular matrix (info > 0) all infinite, a NaN
    product (0 * inf) infinite."""
    inverse, info = aten_linalg_inv_ex(self)
    singular = op.Unsqueeze(op.Greater(info, op.CastLike(0, info)), [-1, -2])
    inverse = op.Where(singular, op.CastLike(math.inf, inverse), inverse)

    def norm(x: Value) -> Value:
        if isinstance(ord, str):
            return _matrix_norm_str(x, ord, [-2, -1], False, None)
        return _matrix_norm(x, ord, [-2, -1], False, None)

    result = op.Mul(norm(self), norm(inverse))
    return op.Where(op.IsNaN(result), op.CastLike(math.inf, result), result)


@aten_op("aten::linalg_cond")
def aten_linalg_cond(self: TFloat, p: float | None = None) -> TFloat:
    """linalg_cond(Tensor self, Scalar? p=None) -> Tensor"""
    if self.rank is None or self.rank < 2:
        raise ValueError("aten::linalg_cond: the input must have at least 2 dimensions (torch raises too)")
    ord = 2.0 if p is None else float(p)
    if ord not in (1.0, -1.0, 2.0, -2.0, math.inf, -math.inf):
        raise ValueError(f"aten::linalg_cond got an invalid norm type: {p} (torch raises too)")
    empty = _empty_cond(self)
    if empty is not None:
        return empty
    if abs(ord) == 2:  # the ratio of the extreme singular values (sorted in descending order)
        s = aten_linalg_svdvals(self)
        s_max, s_min = op.Slice(s, [0], [1], [-1]), op.Slice(s, [-1], [np.iinfo(np.int64).max], [-1])
        return op.Squeeze(op.Div(s_min, s_max) if ord < 0 else op.Div(s_max, s_min), [-1])
    check_square("linalg.cond", self)
    return _cond_by_inverse(self, ord)


@aten_op("aten::linalg_cond.p_str")
def aten_linalg_cond_p_str(self: TFloat, p: str) -> TFloat:
    """linalg_cond.p_str(Tensor self, str p) -> Tensor"""
    check_square(f"linalg.cond(ord={p})", self)
    if p not in ("fro", "nuc"):
        raise ValueError(f"aten::linalg_cond got an invalid norm type: {p!r} (torch raises too)")
    empty = _empty_cond(self)
    if empty is not None:
        return empty
    if p == "nuc":  # torch: the sums of the singular values of A and of inv(A), without matrix_norm
        nuclear = aten_sum_dim_IntList(aten_linalg_svdvals(self), [-1])
        return op.Mul(nuclear, aten_sum_dim_IntList(aten_linalg_svdvals(aten_linalg_inv(self)), [-1]))
    return _cond_by_inverse(self, p)


def _matrix_rank(name: str, A: Value, atol: Value | float | None, rtol: Value | float | None, hermitian: bool) -> Value:
    """torch's matrix_rank_impl: how many singular values (absolute eigenvalues when hermitian)
    exceed max(atol, rtol * their largest), compared in the promoted dtype of the values and the
    tolerances (float64 for tolerances given as floats or left out)."""
    m, n = check_matrix(name, A)
    if 0 in A.known_shape:  # torch: rank 0 for matrices without elements
        return op.ConstantOfShape(op.Shape(A, end=-2), value=np.zeros(1, np.int64))
    if hermitian:
        s = op.Abs(aten_linalg_eigvalsh(A))
        s_max = op.ReduceMax(s, [-1], keepdims=1)
    else:
        s = aten_linalg_svdvals(A)
        s_max = op.Slice(s, [0], [1], [-1])
    default_rtol = float(np.finfo(A.known_dtype.numpy).eps) * max(m, n)
    atol_t: Value | np.ndarray | float
    rtol_t: Value | np.ndarray | float
    if not isinstance(atol, Value) and not isinstance(rtol, Value):  # floats: float64 tolerances
        atol_v = 0.0 if atol is None else atol
        rtol_v = rtol if rtol is not None else (0.0 if atol is not None and atol > 0 else default_rtol)
        atol_t, rtol_t = (np.array(v, dtype=np.float64) for v in (atol_v, rtol_v))
        dtype = DOUBLE
    else:
        dtype = s.known_dtype
        for t in (atol, rtol):
            dtype = promote_types(dtype, t.known_dtype if isinstance(t, Value) else DOUBLE)
        if rtol is None:
            default = np.array(default_rtol, dtype=np.float64)
            rtol_t = default if atol is None else op.Where(op.Greater(atol, op.CastLike(0, atol)), np.array(0.0), default)
        else:
            rtol_t = rtol
        atol_t = np.array(0.0) if atol is None else atol
    atol_c, rtol_c, s, s_max = (op.Cast(t, to=dtype.onnx) for t in (atol_t, rtol_t, s, s_max))
    tol = op.Max(op.Unsqueeze(atol_c, [-1]), op.Mul(op.Unsqueeze(rtol_c, [-1]), s_max))
    return op.ReduceSum(op.Cast(op.Greater(s, tol), to=INT64.onnx), [-1], keepdims=0)


@aten_op("aten::linalg_matrix_rank")
def aten_linalg_matrix_rank(self: TFloat, tol: float, hermitian: bool = False) -> TInt:
    """linalg_matrix_rank(Tensor self, float tol, bool hermitian=False) -> Tensor"""
    return _matrix_rank("linalg.matrix_rank", self, tol, 0.0, hermitian)


@aten_op("aten::linalg_matrix_rank.atol_rtol_float")
def aten_linalg_matrix_rank_atol_rtol_float(
    self: TFloat, *, atol: float | None = None, rtol: float | None = None, hermitian: bool = False
) -> TInt:
    """linalg_matrix_rank.atol_rtol_float(Tensor self, *, float? atol=None, float? rtol=None, bool hermitian=False) -> Tensor"""
    return _matrix_rank("linalg.matrix_rank", self, atol, rtol, hermitian)


@aten_op("aten::linalg_matrix_rank.atol_rtol_tensor")
def aten_linalg_matrix_rank_atol_rtol_tensor(
    input: TFloat, *, atol: TFloat | None = None, rtol: TFloat | None = None, hermitian: bool = False
) -> TInt:
    """linalg_matrix_rank.atol_rtol_tensor(Tensor input, *, Tensor? atol=None, Tensor? rtol=None, bool hermitian=False) -> Tensor"""
    return _matrix_rank("linalg.matrix_rank", input, atol, rtol, hermitian)


@aten_op("aten::linalg_matrix_rank.tol_tensor")
def aten_linalg_matrix_rank_tol_tensor(input: TFloat, tol: TFloat, hermitian: bool = False) -> TInt:
    """linalg_matrix_rank.tol_tensor(Tensor input, Tensor tol, bool hermitian=False) -> Tensor"""
    return _matrix_rank("linalg.matrix_rank", input, tol, op.CastLike(0, tol), hermitian)


@aten_op("aten::linalg_vander")
def aten_linalg_vander(x: TReal, *, N: int | None = None) -> TReal:
    """linalg_vander(Tensor x, *, SymInt? N=None) -> Tensor"""
    if x.dtype not in (FLOAT, DOUBLE) and not (x.known_dtype.is_integer and x.dtype is not BOOL):
        raise TypeError(f"aten::linalg_vander supports float32, float64 and integer tensors, got {x.dtype} (torch raises too)")
    if x.rank == 0:
        x = op.Unsqueeze(x, [0])
    n = x.known_shape[-1] if N is None else N
    if not isinstance(n, int):
        raise ValueError("aten::linalg_vander: N (or the last dim of x) must be static")
    if n <= 1:
        raise ValueError("aten::linalg_vander: N must be greater than 1 (torch raises too)")
    # torch: 1, then the cumulative products of n - 1 copies of x (integers as int64)
    powers = aten_cumprod(aten_expand(op.Unsqueeze(x, [-1]), [-1] * x.known_rank + [n - 1]), -1)
    ones = op.Expand(op.CastLike(1, powers), op.Concat(op.Shape(x), [1], axis=0))
    return op.Concat(ones, powers, axis=-1)
