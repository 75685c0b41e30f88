"""The linear algebra that torch composes from its factorisations and products (its
CompositeImplicitAutograd kernels): det/slogdet/logdet/inv/cholesky/eigh/svd/qr/pinv under
their public and legacy names, matrix powers, multi_dot, tensordot, inner/vdot/ger/vecdot.

Each calls the factorisation of this package (lu, cholesky, qr, spectral) or the product
(products) it needs, and keeps torch's output conventions (svd returns V, not Vᴴ; logdet is NaN
for a negative determinant)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import BFLOAT16, BOOL, FLOAT, FLOAT16, TFloat, TReal
from torchlib.ops._helpers import normalize_dim
from torchlib.ops._kernels import full_of
from torchlib.ops.elementwise import aten_add, aten_mul
from torchlib.ops.linalg._common import check_square, eye, tr
from torchlib.ops.linalg.cholesky import aten_linalg_cholesky_ex
from torchlib.ops.linalg.lu import aten__linalg_det, aten__linalg_slogdet, aten_linalg_inv_ex
from torchlib.ops.linalg.products import aten_dot, aten_matmul, aten_mm, aten_outer
from torchlib.ops.linalg.qr import aten_linalg_qr
from torchlib.ops.linalg.spectral import aten__linalg_eigh, aten__linalg_svd, aten_linalg_pinv_atol_rtol_float, aten_linalg_pinv_atol_rtol_tensor
from torchlib.ops.reductions import aten_sum_dim_IntList
from torchlib.ops.shape import aten_diagonal, aten_expand, aten_permute
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


@aten_op("aten::linalg_eigh")
def aten_linalg_eigh(self: TFloat, UPLO: str = "L") -> tuple[TFloat, TFloat]:
    """linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)"""
    return aten__linalg_eigh(self, UPLO, True)


@aten_op("aten::linalg_eigvalsh")
def aten_linalg_eigvalsh(self: TFloat, UPLO: str = "L") -> TFloat:
    """linalg_eigvalsh(Tensor self, str UPLO="L") -> Tensor"""
    return aten__linalg_eigh(self, UPLO, False)[0]


@aten_op("aten::linalg_svd")
def aten_linalg_svd(A: TFloat, full_matrices: bool = True, *, driver: str | None = None) -> tuple[TFloat, TFloat, TFloat]:
    """linalg_svd(Tensor A, bool full_matrices=True, *, str? driver=None) -> (Tensor U, Tensor S, Tensor Vh)"""
    return aten__linalg_svd(A, full_matrices, True, driver=driver)


@aten_op("aten::linalg_svdvals")
def aten_linalg_svdvals(A: TFloat, *, driver: str | None = None) -> TFloat:
    """linalg_svdvals(Tensor A, *, str? driver=None) -> Tensor"""
    return aten__linalg_svd(A, False, False, driver=driver)[1]


@aten_op("aten::svd")
def aten_svd(self: TFloat, some: bool = True, compute_uv: bool = True) -> tuple[TFloat, TFloat, TFloat]:
    """svd(Tensor self, bool some=True, bool compute_uv=True) -> (Tensor U, Tensor S, Tensor V)"""
    if compute_uv:
        u, s, vh = aten__linalg_svd(self, not some, True)
        return u, s, tr(vh)
    s = aten__linalg_svd(self, False, False)[1]
    # torch: U and V are zero-filled (m, m) and (n, n) matrices
    m, n = self.shape[-2], self.shape[-1]  # type: ignore[index]
    batch = op.Shape(self, end=-2)
    zeros = np.zeros(1, self.dtype.numpy)
    u = op.ConstantOfShape(op.Concat(batch, [m, m], axis=0), value=zeros)
    v = op.ConstantOfShape(op.Concat(batch, [n, n], axis=0), value=zeros)
    return u, s, v


@aten_op("aten::qr")
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
    elif self.rank < 2 or self.shape[-1] != self.shape[-2] or not isinstance(self.shape[-1], int):  # type: ignore[index]
        raise ValueError(f"{name}: needs a batch of square matrices of static size, got shape {list(self.shape or [])} (torch raises for non-square too)")
    else:
        size = self.shape[-1]  # type: ignore[index]
    if n == 0:
        return op.Expand(op.CastLike(eye(size, size, self.dtype), self), op.Shape(self))
    a = aten_linalg_inv(self) if n < 0 else self
    n = abs(n)
    result = None
    while n:
        if n & 1:
            result = a if result is None else aten_matmul(result, a)
        n >>= 1
        if n:
            a = aten_matmul(a, a)
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
    dims = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]] if all(m.shape for m in matrices) else []
    if not dims or not all(isinstance(d, int) for d in dims):
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
            raise ValueError(f"aten::chain_matmul: tensor {i} must be 2-D, got shape {list(m.shape)} (torch raises too)")
    return _chain("chain_matmul", matrices)


@aten_op("aten::linalg_multi_dot")
def aten_linalg_multi_dot(tensors: Sequence[TReal]) -> TReal:
    """linalg_multi_dot(Tensor[] tensors) -> Tensor"""
    if len(tensors) < 2:
        raise ValueError(f"aten::linalg_multi_dot needs at least 2 tensors, got {len(tensors)} (torch raises too)")
    first, *middle, last = tensors
    for i, m in enumerate(middle, 1):
        if m.rank != 2:
            raise ValueError(f"aten::linalg_multi_dot: tensor {i} must be 2-D, got shape {list(m.shape)} (torch raises too)")
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
    contract_a = [normalize_dim(d, self.rank) for d in dims_self]
    contract_b = [normalize_dim(d, other.rank) for d in dims_other]
    # torch broadcasts a contracted size 1 against the other side's size
    size_a = [-1] * self.rank
    size_b = [-1] * other.rank
    for da, db in zip(contract_a, contract_b):
        na, nb = self.shape[da], other.shape[db]  # type: ignore[index]
        if na == 1 and nb != 1:
            size_a[da] = nb
        elif nb == 1 and na != 1:
            size_b[db] = na
    self = aten_expand(self, size_a) if any(s != -1 for s in size_a) else self
    other = aten_expand(other, size_b) if any(s != -1 for s in size_b) else other
    free_a = [d for d in range(self.rank) if d not in contract_a]
    free_b = [d for d in range(other.rank) if d not in contract_b]
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
        out = aten_add(full_of(op.Shape(self), 0, self.dtype), outer)
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
