"""Complex variants of the shape, indexing, reduction and matrix ops.

A complex tensor is its real view with a trailing dimension of 2 (see torchlib/ops/complex.py).
Shape ops run the real function on that view with the axes counted on the logical shape
(negative dims normalized against the logical rank, sizes extended by the trailing 2), so the
(real, imaginary) pairs always stay together in the last dimension.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from graph_builder.types import COMPLEX64, COMPLEX128, DOUBLE, FLOAT, DType
from torchlib.ops import indexing
from torchlib.ops import shape as shape_ops
from torchlib.ops._helpers import normalize_dim
from torchlib.ops.complex import from_pair, im_part, join, re_part
from torchlib.ops.linalg import products
from torchlib.registry import aten_op


def _on_view(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """The real function `fn` on real views (its body, without the complex guard), with the
    tensors it returns marked complex."""
    result = fn.__wrapped__(*args, **kwargs)
    if isinstance(result, (list, tuple)):
        return type(result)(r.as_complex() for r in result)
    return result.as_complex()


def _dim(dim: int, x: Value, extra: int = 0) -> int:
    assert x.logical_rank is not None, "complex tensors of unknown rank are not supported"
    return normalize_dim(dim, x.logical_rank + extra)


def _complex_all(tensors: Sequence[Value]) -> list[Value]:
    """Every tensor as a complex view of one precision (torch promotes real to complex in cat)."""
    storage = DOUBLE if any(t.dtype is DOUBLE for t in tensors) else FLOAT
    out = []
    for t in tensors:
        if t.is_complex:
            out.append(t if t.dtype is storage else op.Cast(t, to=storage.onnx).as_complex())
        else:
            out.append(from_pair((t if t.dtype is storage else op.Cast(t, to=storage.onnx), None)))
    return out


@aten_op("aten::cat", complex=True)
def aten_cat_complex(tensors: Sequence[TTensor], dim: int = 0) -> TTensor:
    """cat(Tensor[] tensors, int dim=0) -> Tensor"""
    tensors = _complex_all(tensors)
    kept = [t for t in tensors if t.logical_shape != (0,)]  # torch skips 1-D empty tensors
    if len(kept) <= 1:
        return op.Identity(kept[0] if kept else tensors[0]).as_complex()
    return op.Concat(*kept, axis=_dim(dim, kept[0])).as_complex()


@aten_op("aten::stack", complex=True)
def aten_stack_complex(tensors: Sequence[TTensor], dim: int = 0) -> TTensor:
    """stack(Tensor[] tensors, int dim=0) -> Tensor"""
    tensors = _complex_all(tensors)
    axis = _dim(dim, tensors[0], extra=1)
    parts = [op.Unsqueeze(t, [axis]) for t in tensors]
    return (parts[0] if len(parts) == 1 else op.Concat(*parts, axis=axis)).as_complex()


@aten_op("aten::reshape", complex=True)
def aten_reshape_complex(self: TTensor, shape: Sequence[int]) -> TTensor:
    """reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
    return _on_view(shape_ops.aten_reshape, self, [*shape, 2])


@aten_op("aten::view", "aten::_unsafe_view", complex=True)
def aten_view_complex(self: TTensor, size: Sequence[int]) -> TTensor:
    """view(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return _on_view(shape_ops.aten_view, self, [*size, 2])


@aten_op("aten::permute", complex=True)
def aten_permute_complex(self: TTensor, dims: Sequence[int]) -> TTensor:
    """permute(Tensor(a) self, int[] dims) -> Tensor(a)"""
    return _on_view(shape_ops.aten_permute, self, [*(_dim(d, self) for d in dims), self.logical_rank])


@aten_op("aten::transpose.int", complex=True)
def aten_transpose_complex(self: TTensor, dim0: int, dim1: int) -> TTensor:
    """transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    return _on_view(shape_ops.aten_transpose, self, _dim(dim0, self), _dim(dim1, self))


@aten_op("aten::t", complex=True)
def aten_t_complex(self: TTensor) -> TTensor:
    """t(Tensor(a) self) -> Tensor(a)"""
    if self.logical_rank is not None and self.logical_rank < 2:
        return op.Identity(self).as_complex()
    return _on_view(shape_ops.aten_transpose, self, 0, 1)


@aten_op("aten::slice.Tensor", complex=True)
def aten_slice_complex(self: TTensor, dim: int = 0, start: int | None = None, end: int | None = None, step: int = 1) -> TTensor:
    """slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)"""
    return _on_view(indexing.aten_slice, self, _dim(dim, self), start, end, step)


@aten_op("aten::select.int", complex=True)
def aten_select_complex(self: TTensor, dim: int, index: int) -> TTensor:
    """select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)"""
    return _on_view(indexing.aten_select, self, _dim(dim, self), index)


@aten_op("aten::index.Tensor", "aten::index.Tensor_hacked_twin", complex=True)
def aten_index_complex(self: TTensor, indices: Sequence[TTensor | None]) -> TTensor:
    """index.Tensor(Tensor self, Tensor?[] indices) -> Tensor"""
    return _on_view(indexing.aten_index, self, indices)  # indices address leading (logical) dims only


@aten_op("aten::expand", complex=True)
def aten_expand_complex(self: TTensor, size: Sequence[int], *, implicit: bool = False) -> TTensor:
    """expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"""
    return _on_view(shape_ops.aten_expand, self, [*size, 2], implicit=implicit)


@aten_op("aten::unsqueeze", complex=True)
def aten_unsqueeze_complex(self: TTensor, dim: int) -> TTensor:
    """unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
    return op.Unsqueeze(self, [_dim(dim, self, extra=1)]).as_complex()


@aten_op("aten::squeeze", complex=True)
def aten_squeeze_complex(self: TTensor) -> TTensor:
    """squeeze(Tensor(a) self) -> Tensor(a)"""
    return _on_view(shape_ops.aten_squeeze, self)  # the trailing 2 is never squeezed


@aten_op("aten::squeeze.dim", complex=True)
def aten_squeeze_dim_complex(self: TTensor, dim: int) -> TTensor:
    """squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)"""
    if self.logical_rank == 0:
        return op.Identity(self).as_complex()
    return _on_view(shape_ops.aten_squeeze_dim, self, _dim(dim, self))


@aten_op("aten::squeeze.dims", complex=True)
def aten_squeeze_dims_complex(self: TTensor, dim: Sequence[int]) -> TTensor:
    """squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)"""
    if self.logical_rank == 0:
        return op.Identity(self).as_complex()
    return _on_view(shape_ops.aten_squeeze_dims, self, [_dim(d, self) for d in dim])


@aten_op("aten::flatten.using_ints", complex=True)
def aten_flatten_complex(self: TTensor, start_dim: int = 0, end_dim: int = -1) -> TTensor:
    """flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"""
    if self.logical_rank == 0:
        return op.Reshape(self, [1, 2]).as_complex()
    return _on_view(shape_ops.aten_flatten, self, _dim(start_dim, self), _dim(end_dim, self))


@aten_op("aten::split.Tensor", complex=True)
def aten_split_complex(self: TTensor, split_size: int, dim: int = 0) -> list[TTensor]:
    """split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"""
    return _on_view(shape_ops.aten_split, self, split_size, _dim(dim, self))


@aten_op("aten::unbind.int", complex=True)
def aten_unbind_complex(self: TTensor, dim: int = 0) -> list[TTensor]:
    """unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"""
    return _on_view(shape_ops.aten_unbind, self, _dim(dim, self))


@aten_op("aten::flip", complex=True)
def aten_flip_complex(self: TTensor, dims: Sequence[int]) -> TTensor:
    """flip(Tensor self, int[] dims) -> Tensor"""
    if self.logical_rank == 0:
        return op.Identity(self).as_complex()
    return _on_view(shape_ops.aten_flip, self, [_dim(d, self) for d in dims])


@aten_op("aten::roll", complex=True)
def aten_roll_complex(self: TTensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> TTensor:
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"""
    if not dims:  # roll the flattened tensor, pairs kept together
        flat = op.Reshape(self, [-1, 2]).as_complex()
        rolled = _on_view(shape_ops.aten_roll, flat, shifts, [0])
        return op.Reshape(rolled, op.Shape(self), allowzero=1).as_complex()
    return _on_view(shape_ops.aten_roll, self, shifts, [_dim(d, self) for d in dims])


def _fft_shift(self: Value, dim: Sequence[int] | None, inverse: bool) -> Value:
    """roll every dim (all when None) by half its size: n // 2 (fftshift) or (n + 1) // 2."""
    shape = self.logical_shape or ()
    dims = list(range(len(shape))) if dim is None else [_dim(d, self) for d in dim]
    if not dims:
        raise ValueError(f"aten::fft_{'i' if inverse else ''}fftshift: no dims to shift (torch's roll raises: `shifts` required)")
    sizes = [shape[d] for d in dims]
    static = [n for n in sizes if isinstance(n, int)]
    if len(static) < len(sizes):
        raise ValueError(f"aten::fft_{'i' if inverse else ''}fftshift: the shifted dims must be static, got shape {list(shape)}")
    return aten_roll_complex(self, [(n + inverse) // 2 for n in static], dims)


@aten_op("aten::fft_fftshift", complex=True)
def aten_fft_fftshift_complex(self: TTensor, dim: Sequence[int] | None = None) -> TTensor:
    """fft_fftshift(Tensor self, int[1]? dim=None) -> Tensor"""
    return _fft_shift(self, dim, inverse=False)


@aten_op("aten::fft_ifftshift", complex=True)
def aten_fft_ifftshift_complex(self: TTensor, dim: Sequence[int] | None = None) -> TTensor:
    """fft_ifftshift(Tensor self, int[1]? dim=None) -> Tensor"""
    return _fft_shift(self, dim, inverse=True)


@aten_op("aten::constant_pad_nd", complex=True)
def aten_constant_pad_nd_complex(self: TTensor, pad: Sequence[int], value: float = 0) -> TTensor:
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"""
    value = complex(value)
    re = shape_ops.aten_constant_pad_nd.__wrapped__(re_part(self), pad, value.real)
    im = shape_ops.aten_constant_pad_nd.__wrapped__(im_part(self), pad, value.imag)
    return join(re, im)


@aten_op("aten::clone", complex=True)
def aten_clone_complex(self: TTensor, *, memory_format: str | None = None) -> TTensor:
    """clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor"""
    return op.Identity(self).as_complex()


@aten_op("aten::alias", "aten::detach", "aten::lift_fresh_copy", complex=True)
def aten_alias_complex(self: TTensor) -> TTensor:
    """alias(Tensor(a) self) -> Tensor(a)"""
    return op.Identity(self).as_complex()


# -- reductions ---------------------------------------------------------------------------------
def _reduce(reduce: Callable[..., Value], self: Value, dim: Sequence[int] | None, keepdim: bool, dtype: DType | None) -> Value:
    if dtype is not None:
        if dtype not in (COMPLEX64, COMPLEX128):
            raise TypeError(f"a complex reduction cannot return {dtype} (torch raises too)")
        storage = FLOAT if dtype is COMPLEX64 else DOUBLE
        self = self if self.dtype is storage else op.Cast(self, to=storage.onnx).as_complex()
    rank = self.known_logical_rank
    if rank == 0:  # dim 0 / -1 of a complex scalar is the scalar itself
        return op.Identity(self).as_complex()
    axes = list(range(rank)) if not dim else sorted({_dim(d, self) for d in dim})
    if not axes:  # a complex scalar
        return op.Identity(self).as_complex()
    return reduce(self, axes, keepdims=int(keepdim)).as_complex()


@aten_op("aten::sum", complex=True)
def aten_sum_complex(self: TTensor, *, dtype: DType | None = None) -> TTensor:
    """sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    return _reduce(op.ReduceSum, self, None, False, dtype)


@aten_op("aten::sum.dim_IntList", complex=True)
def aten_sum_dim_IntList_complex(self: TTensor, dim: Sequence[int] | None, keepdim: bool = False, *, dtype: DType | None = None) -> TTensor:
    """sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _reduce(op.ReduceSum, self, dim, keepdim, dtype)


def _mean(self: Value, axes: Sequence[int], keepdims: int = 0) -> Value:
    """The sum over `axes` divided by the count, as torch: an empty slice gives 0 / 0 = NaN in
    both parts (onnxruntime's ReduceMean gives 0 there)."""
    total = op.ReduceSum(self, axes, keepdims=1)
    count = op.Div(op.CastLike(op.Size(self), self), op.CastLike(op.Size(total), self))
    out = op.Div(total, count)
    return out if keepdims else op.Squeeze(out, axes)


@aten_op("aten::mean", complex=True)
def aten_mean_complex(self: TTensor, *, dtype: DType | None = None) -> TTensor:
    """mean(Tensor self, *, ScalarType? dtype=None) -> Tensor"""
    return _reduce(_mean, self, None, False, dtype)


@aten_op("aten::mean.dim", complex=True)
def aten_mean_dim_complex(self: TTensor, dim: Sequence[int] | None, keepdim: bool = False, *, dtype: DType | None = None) -> TTensor:
    """mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"""
    return _reduce(_mean, self, dim, keepdim, dtype)


# -- matrix products ----------------------------------------------------------------------------
def _product(fn: Callable[..., Any], a: Value, b: Value) -> Value:
    """(ar + i ai)(br + i bi) with four real products of `fn` (a real matmul function)."""
    real = fn.__wrapped__
    if a.is_complex and b.is_complex:
        ar, ai, br, bi = re_part(a), im_part(a), re_part(b), im_part(b)
        return join(op.Sub(real(ar, br), real(ai, bi)), op.Add(real(ar, bi), real(ai, br)))
    if a.is_complex:
        return join(real(re_part(a), b), real(im_part(a), b))
    return join(real(a, re_part(b)), real(a, im_part(b)))


@aten_op("aten::matmul", complex=True)
def aten_matmul_complex(self: TTensor, other: TTensor) -> TTensor:
    """matmul(Tensor self, Tensor other) -> Tensor"""
    return _product(products.aten_matmul, self, other)


@aten_op("aten::mm", complex=True)
def aten_mm_complex(self: TTensor, mat2: TTensor) -> TTensor:
    """mm(Tensor self, Tensor mat2) -> Tensor"""
    return _product(products.aten_matmul, self, mat2)


@aten_op("aten::bmm", complex=True)
def aten_bmm_complex(self: TTensor, mat2: TTensor) -> TTensor:
    """bmm(Tensor self, Tensor mat2) -> Tensor"""
    return _product(products.aten_matmul, self, mat2)

