"""Shape and index extras: one_hot, nonzero, repeat_interleave, meshgrid, swapaxes, rot90,
trace, diag, diag_embed, linalg_cross, einsum, tril/triu_indices, index_fill, masked_scatter,
bucketize, searchsorted, as_strided, im2col and col2im.

Data-dependent ops (nonzero, repeat_interleave with a repeats tensor, masked_scatter) are
written with ONNX ops whose output shape depends on the data (NonZero, Range), so they work on
traced inputs too. bucketize/searchsorted compare every element with every boundary (memory
O(elements x boundaries)); NaN inputs are not placed after every boundary as torch does.
"""

from __future__ import annotations

import itertools
import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TBool, TFloat, TInt, TReal, TRealOrBool, TTensor
from graph_builder.types import DType
from torchlib.ops._helpers import as_shape, dim_size, normalize_dim
from torchlib.ops._kernels import NUMERIC, run_supported
from torchlib.ops.comparison import aten_where
from torchlib.ops.elementwise import aten_mul
from torchlib.ops.reductions import aten_sum, int64_sum
from torchlib.ops.shape import aten_diagonal, aten_flip, aten_transpose
from torchlib.promotion import cast_to, elementwise, promote_all
from torchlib.registry import aten_op


def _as_int64(x: Any) -> Any:
    return cast_to(x, types.INT64) if isinstance(x, Value) else x


def _bool(x: Value) -> Value:
    return x if x.dtype is types.BOOL else op.Cast(x, to=types.BOOL.onnx)


_NO_BF16 = {types.BFLOAT16: types.FLOAT}


def _expand(x: Value, shape: Any) -> Value:
    """Expand; bfloat16 (no onnxruntime kernel) goes through float32, exactly."""
    if x.dtype is types.BFLOAT16:
        return cast_to(op.Expand(cast_to(x, types.FLOAT), shape), types.BFLOAT16)
    return op.Expand(x, shape)


def _pad(x: Value, pads: list[int]) -> Value:
    """Pad with zeros; bfloat16 (no onnxruntime kernel) goes through float32, exactly."""
    return cast_to(op.Pad(cast_to(x, _NO_BF16.get(x.known_dtype, x.known_dtype)), pads), x.known_dtype)


def _tile(x: Value, repeats: Any) -> Value:
    """Tile (used where a size may be 0: onnxruntime's Expand of a 1 to a 0 keeps the 1 in
    optimized graphs); bfloat16 goes through float32, exactly."""
    if x.dtype is types.BFLOAT16:
        return cast_to(op.Tile(cast_to(x, types.FLOAT), repeats), types.BFLOAT16)
    return op.Tile(x, repeats)


def _add_rounded(a: Value, b: Value) -> Value:
    """a + b rounded to their dtype; the half types add in float32 and round once per add, as
    torch does (and as onnxruntime's optimized graphs otherwise would not)."""
    if a.dtype in (types.FLOAT16, types.BFLOAT16):
        return cast_to(op.Add(cast_to(a, types.FLOAT), cast_to(b, types.FLOAT)), a.dtype)
    return run_supported(op.Add, NUMERIC, a, b)


def _compare_dtype(a: Value, b: Value) -> tuple[Value, Value]:
    """a and b in their promoted dtype, half types and small ints widened for Less/LessOrEqual."""
    a, b = promote_all([a, b])
    wide = {types.BFLOAT16: types.FLOAT, types.FLOAT16: types.FLOAT, types.BOOL: types.INT32,
            types.INT8: types.INT32, types.INT16: types.INT32, types.UINT8: types.INT32}  # fmt: skip
    target = wide.get(a.known_dtype)
    return (cast_to(a, target), cast_to(b, target)) if target else (a, b)


@aten_op("aten::one_hot")
def aten_one_hot(self: TInt, num_classes: int = -1) -> TInt:
    """one_hot(Tensor self, int num_classes=-1) -> Tensor"""
    indices = _as_int64(self)
    if num_classes == -1:  # torch: one more than the largest index
        depth: Any = op.Add(op.ReduceMax(indices, keepdims=0), 1)
    else:
        depth = num_classes
    classes = op.Range(0, depth, 1) if isinstance(depth, Value) else op.Constant(value=np.arange(depth, dtype=np.int64))
    return op.Cast(op.Equal(op.Unsqueeze(indices, [-1]), classes), to=types.INT64.onnx)


@aten_op("aten::nonzero")
def aten_nonzero(self: TRealOrBool) -> TInt:
    """nonzero(Tensor self) -> Tensor"""
    if self.rank == 0:  # [n, 0]: n is 1 for a nonzero scalar, else 0
        found = op.NonZero(op.Reshape(_bool(self), [1]))
        return op.Slice(op.Transpose(found, perm=[1, 0]), [0], [0], [1])
    return op.Transpose(op.NonZero(_bool(self)), perm=[1, 0])


@aten_op("aten::nonzero_static")
def aten_nonzero_static(self: TRealOrBool, *, size: int, fill_value: int = -1) -> TInt:
    """nonzero_static(Tensor self, *, SymInt size, int fill_value=-1) -> Tensor"""
    found = aten_nonzero(self)
    fill = op.Constant(value=np.full((size, self.rank), fill_value, np.int64))
    return op.Slice(op.Concat(found, fill, axis=0), [0], [size], [0])


def _repeat_indices(repeats: Value) -> Value:
    """repeat_interleave.Tensor: i repeated repeats[i] times, for a 1-D INT64 repeats."""
    ends = op.CumSum(repeats, 0)
    total = op.ReduceSum(repeats, keepdims=0)
    positions = op.Range(np.array(0, np.int64), total, np.array(1, np.int64))
    passed = op.LessOrEqual(op.Unsqueeze(ends, [0]), op.Unsqueeze(positions, [1]))
    return op.ReduceSum(op.Cast(passed, to=types.INT64.onnx), [1], keepdims=0)


@aten_op("aten::repeat_interleave.Tensor")
def aten_repeat_interleave_Tensor(repeats: TInt, *, output_size: int | None = None) -> TInt:
    """repeat_interleave.Tensor(Tensor repeats, *, SymInt? output_size=None) -> Tensor"""
    result = _repeat_indices(op.Reshape(_as_int64(repeats), [-1]))
    return cast_to(result, repeats.known_dtype)


@aten_op("aten::repeat_interleave.self_int")
def aten_repeat_interleave_self_int(
    self: TTensor, repeats: int, dim: int | None = None, *, output_size: int | None = None
) -> TTensor:
    """repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor"""
    x = op.Reshape(self, [-1]) if dim is None or self.rank == 0 else self
    axis = 0 if dim is None else normalize_dim(dim, x.known_rank)
    repeats = _as_int64(repeats)
    rep = op.Reshape(repeats, [1]) if isinstance(repeats, Value) else [repeats]
    tiles = op.Concat([1] * (axis + 1), rep, [1] * (x.known_rank - axis - 1), axis=0)
    merged = op.Concat(op.Shape(x, start=0, end=axis), op.Mul(op.Shape(x, start=axis, end=axis + 1), rep),
                       op.Shape(x, start=axis + 1), axis=0)  # fmt: skip
    return op.Reshape(_tile(op.Unsqueeze(x, [axis + 1]), tiles), merged, allowzero=1)


@aten_op("aten::repeat_interleave.self_Tensor")
def aten_repeat_interleave_self_Tensor(
    self: TTensor, repeats: TInt, dim: int | None = None, *, output_size: int | None = None
) -> TTensor:
    """repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, SymInt? output_size=None) -> Tensor"""
    x = op.Reshape(self, [-1]) if dim is None or self.rank == 0 else self
    axis = 0 if dim is None else normalize_dim(dim, x.known_rank)
    repeats = _as_int64(repeats)
    if repeats.rank == 0 or repeats.shape == (1,):  # one count for every slice
        repeats = op.Expand(op.Reshape(repeats, [1]), op.Shape(x, start=axis, end=axis + 1))
    return op.Gather(x, _repeat_indices(repeats), axis=axis)


def _meshgrid(tensors: Sequence[Value], indexing: str) -> list[Value]:
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', not {indexing!r}")
    n = len(tensors)
    flat = [op.Reshape(t, [-1]) for t in tensors]
    order = list(range(n))
    if indexing == "xy" and n >= 2:
        order[0], order[1] = 1, 0
    result = []
    for i, t in enumerate(flat):
        view = [1] * n
        view[order.index(i)] = -1
        tiles = op.Concat(*[[1] if j == i else op.Shape(flat[j]) for j in order], axis=0)
        result.append(_tile(op.Reshape(t, view), tiles))
    return result


@aten_op("aten::meshgrid")
def aten_meshgrid(tensors: Sequence[TTensor]) -> list[TTensor]:
    """meshgrid(Tensor[] tensors) -> Tensor[]"""
    return _meshgrid(tensors, "ij")


@aten_op("aten::meshgrid.indexing")
def aten_meshgrid_indexing(tensors: Sequence[TTensor], *, indexing: str) -> list[TTensor]:
    """meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]"""
    return _meshgrid(tensors, indexing)


@aten_op("aten::swapaxes")
def aten_swapaxes(self: TTensor, axis0: int, axis1: int) -> TTensor:
    """swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)"""
    return aten_transpose(self, axis0, axis1)


@aten_op("aten::rot90")
def aten_rot90(self: TTensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> TTensor:
    """rot90(Tensor self, int k=1, int[] dims=[0,1]) -> Tensor"""
    if len(dims) != 2 or self.known_rank < 2:
        raise ValueError(f"rot90 needs two dims of a tensor of rank >= 2, got dims {list(dims)} of rank {self.rank}")
    d0, d1 = normalize_dim(dims[0], self.known_rank), normalize_dim(dims[1], self.known_rank)
    if d0 == d1:
        raise ValueError(f"rot90: the two dims must differ, got {list(dims)}")
    k = k % 4
    if k == 1:
        return aten_transpose(aten_flip(self, [d1]), d0, d1)
    if k == 2:
        return aten_flip(self, [d0, d1])
    if k == 3:
        return aten_transpose(aten_flip(self, [d0]), d0, d1)
    return op.Identity(self)


@aten_op("aten::trace")
def aten_trace(self: TRealOrBool) -> TReal:
    """trace(Tensor self) -> Tensor"""
    if self.rank != 2:
        raise ValueError(f"trace expects a 2-D tensor, got rank {self.rank}")
    return aten_sum(aten_diagonal(self))


@aten_op("aten::diag_embed")
def aten_diag_embed(self: TTensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> TTensor:
    """diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor"""
    rank = self.known_rank + 1
    d1, d2 = normalize_dim(dim1, rank), normalize_dim(dim2, rank)
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 and dim2 must differ, got {dim1} and {dim2}")
    x = op.Unsqueeze(self, [0]) if self.rank == 0 else self
    n = op.Shape(x, start=-1)  # [n]
    m = op.Add(n, abs(offset))
    rows = op.Unsqueeze(op.Range(0, op.Squeeze(m, [0]), 1), [1])  # [m, 1]
    cols = op.Unsqueeze(op.Range(0, op.Squeeze(m, [0]), 1), [0])  # [1, m]
    source = op.Sub(rows, max(-offset, 0))  # the element of x on row a
    on_diagonal = op.And(op.Equal(op.Sub(cols, rows), offset), op.Less(source, op.Squeeze(n, [0])))
    on_diagonal = op.And(on_diagonal, op.GreaterOrEqual(source, 0))
    # off the diagonal, gather the zero appended to the last dim (x may be empty)
    zero = op.ConstantOfShape(op.Concat(op.Shape(x, start=0, end=-1), [1], axis=0), value=np.zeros(1, x.known_dtype.numpy))
    padded = op.Concat(x, zero, axis=-1)
    result = op.Gather(padded, op.Where(on_diagonal, op.Expand(source, op.Concat(m, m, axis=0)), op.Squeeze(n, [0])), axis=-1)
    # the two new dims are the last two; move them to d1 (rows) and d2 (cols)
    batch = iter(range(rank - 2))
    perm = [rank - 2 if p == d1 else rank - 1 if p == d2 else next(batch) for p in range(rank)]
    return op.Transpose(result, perm=perm)


@aten_op("aten::linalg_cross")
@elementwise("self", "other")
def aten_linalg_cross(self: TReal, other: TReal, *, dim: int = -1) -> TReal:
    """linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor"""
    axis = normalize_dim(dim, max(self.known_rank, other.known_rank)) - max(self.known_rank, other.known_rank)  # counted from the end

    def part(x: Value, i: int) -> Value:
        return op.Gather(x, [i], axis=axis)

    def mul_sub(a: Value, b: Value, c: Value, d: Value) -> Value:
        """a*b - c*d rounded to the dtype after every op, as torch's kernel (halves via float32)."""
        dtype = a.dtype
        if dtype in (types.FLOAT16, types.BFLOAT16):
            def rounded(onnx_op: Any, x: Value, y: Value) -> Value:
                return cast_to(cast_to(onnx_op(cast_to(x, types.FLOAT), cast_to(y, types.FLOAT)), dtype), types.FLOAT)
            return cast_to(rounded(op.Sub, rounded(op.Mul, a, b), rounded(op.Mul, c, d)), dtype)
        return run_supported(lambda p, q, r, s: op.Sub(op.Mul(p, q), op.Mul(r, s)), NUMERIC, a, b, c, d)

    a = [part(self, i) for i in range(3)]
    b = [part(other, i) for i in range(3)]
    return op.Concat(mul_sub(a[1], b[2], a[2], b[1]), mul_sub(a[2], b[0], a[0], b[2]),
                     mul_sub(a[0], b[1], a[1], b[0]), axis=axis)  # fmt: skip


@aten_op("aten::cross")
def aten_cross(self: TReal, other: TReal, dim: int | None = None) -> TReal:
    """cross(Tensor self, Tensor other, int? dim=None) -> Tensor"""
    if dim is None:  # torch: the first dim of size 3
        assert self.shape is not None
        dim = next(i for i, s in enumerate(self.shape) if s == 3)
    return aten_linalg_cross(self, other, dim=dim)


@aten_op("aten::diag")
def aten_diag(self: TTensor, diagonal: int = 0) -> TTensor:
    """diag(Tensor self, int diagonal=0) -> Tensor"""
    if self.rank == 1:
        return aten_diag_embed(self, diagonal, 0, 1)
    if self.rank == 2:
        return aten_diagonal(self, diagonal, 0, 1)
    raise ValueError(f"diag expects a 1-D or 2-D tensor, got rank {self.rank}")


@aten_op("aten::einsum")
def aten_einsum(equation: str, tensors: Sequence[TReal], *, path: Sequence[int] | None = None) -> TReal:
    """einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor"""
    tensors = promote_all(list(tensors))
    dtype = tensors[0].dtype
    # onnxruntime's Einsum takes float, double, int32 and int64 (float16 only on GPU)
    compute = {types.FLOAT16: types.FLOAT, types.BFLOAT16: types.FLOAT, types.BOOL: types.INT64,
               types.INT8: types.INT64, types.INT16: types.INT64, types.UINT8: types.INT64}.get(dtype, dtype)  # fmt: skip
    equation = equation.replace(" ", "")
    operands = [cast_to(t, compute) for t in tensors]
    terms = equation.partition("->")[0].split(",")
    letters = [c for c in equation if c.isalpha()]
    if "->" not in equation:  # torch's implicit output: the ellipsis, then the letters used once
        equation += "->" + ("..." if "..." in equation else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    if "..." in equation:
        # onnxruntime's Einsum wants every ellipsis to cover as many dims and to be in the output:
        # pad the operands with leading 1s and spell the ellipsis out with unused letters
        covered = [t.rank - len(term.replace("...", "")) if "..." in term else 0 for t, term in zip(operands, terms)]
        most = max(covered)
        operands = [op.Unsqueeze(t, list(range(most - c))) if "..." in term and c < most else t
                    for t, term, c in zip(operands, terms, covered)]  # fmt: skip
        equation = equation.replace("...", "".join([c for c in string.ascii_letters if c not in letters][:most]))
    inputs, _, output = equation.partition("->")
    terms = inputs.split(",")
    summed_alone = any(c not in output and sum(c in t for t in terms) == 1 for term in terms for c in term)
    if summed_alone and not compute.is_floating:  # torch's result is int64 then
        operands, terms = _sum_alone_in_int64([cast_to(x, types.INT64) for x in operands], terms, output)
    if len(operands) == 1 and terms[0] == output:
        result = operands[0]
    else:
        result = op.Einsum(*operands, equation=",".join(terms) + "->" + output)
    if summed_alone and not dtype.is_floating:
        return cast_to(result, types.INT64)  # torch sums such dims first: ints and bool give int64
    if dtype is types.BOOL:
        return op.Cast(result, to=types.BOOL.onnx)
    return cast_to(result, dtype)


def _sum_alone_in_int64(operands: list[Value], terms: list[str], output: str) -> tuple[list[Value], list[str]]:
    """For INT64 operands: the dims of letters used once in all the inputs and not in the output summed first, in
    int64 arithmetic that wraps like torch's (onnxruntime's Einsum sums them through double:
    einsum('i->', [MAX, 2, MAX]) gives MAX there, torch 0). Returns the operands and terms left."""
    letters = "".join(terms)
    new_operands, new_terms = [], []
    for x, term in zip(operands, terms):
        alone = [i for i, c in enumerate(term) if letters.count(c) == 1 and c not in output]
        if alone:
            x = int64_sum(x, alone, False)
            term = "".join(c for i, c in enumerate(term) if i not in alone)
        new_operands.append(x)
        new_terms.append(term)
    return new_operands, new_terms


@aten_op("aten::kron")
@elementwise("self", "other")
def aten_kron(self: TRealOrBool, other: TRealOrBool) -> TRealOrBool:
    """kron(Tensor self, Tensor other) -> Tensor"""
    rank = max(self.known_rank, other.known_rank)
    if rank == 0:
        return aten_mul(self, other)
    a = op.Unsqueeze(self, list(range(rank - self.known_rank))) if self.known_rank < rank else self
    b = op.Unsqueeze(other, list(range(rank - other.known_rank))) if other.known_rank < rank else other
    shape = op.Mul(op.Shape(a), op.Shape(b))
    a = op.Unsqueeze(a, [2 * i + 1 for i in range(rank)])  # a0, 1, a1, 1, ...
    b = op.Unsqueeze(b, [2 * i for i in range(rank)])  # 1, b0, 1, b1, ...
    return op.Reshape(aten_mul(a, b), shape, allowzero=1)


def _tri_indices(row: int, col: int, offset: int, dtype: DType | None, lower: bool) -> Value:
    r, c = np.meshgrid(np.arange(row), np.arange(col), indexing="ij")
    keep = (c - r <= offset) if lower else (c - r >= offset)
    indices = np.stack([r[keep], c[keep]]).astype(np.int64).reshape(2, -1)
    return cast_to(op.Constant(value=indices), dtype or types.INT64)


@aten_op("aten::tril_indices")
def aten_tril_indices(
    row: int, col: int, offset: int = 0, *, dtype: DType | None = types.INT64, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TInt:  # fmt: skip
    """tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _tri_indices(row, col, offset, dtype, lower=True)


@aten_op("aten::triu_indices")
def aten_triu_indices(
    row: int, col: int, offset: int = 0, *, dtype: DType | None = types.INT64, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TInt:  # fmt: skip
    """triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _tri_indices(row, col, offset, dtype, lower=False)


def _index_mask(self: Value, dim: int, index: Value) -> Value:
    """A bool mask, broadcastable to self, true on the slices of `dim` named by index."""
    if self.rank == 0:
        return op.Reshape(op.ReduceMax(op.Cast(op.Equal(op.Reshape(_as_int64(index), [-1]), 0), to=types.UINT8.onnx),
                                       keepdims=0), [])  # fmt: skip
    axis = normalize_dim(dim, self.known_rank)
    size = dim_size(self, axis)
    index = op.Reshape(_as_int64(index), [-1])
    index = op.Where(op.Less(index, 0), op.Add(index, size), index)
    hits = op.Equal(op.Unsqueeze(op.Range(0, size, 1), [1]), op.Unsqueeze(index, [0]))  # [size, k]
    hits = op.Cast(hits, to=types.UINT8.onnx)
    mask = op.ReduceMax(op.Pad(hits, [0, 0, 0, 1]), [1], keepdims=0)  # a zero column: k may be 0
    view = [1] * self.known_rank
    view[axis] = -1
    return op.Cast(op.Reshape(mask, view), to=types.BOOL.onnx)


@aten_op("aten::index_fill.int_Scalar")
def aten_index_fill_int_Scalar(self: TTensor, dim: int, index: TInt, value: float) -> TTensor:
    """index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor"""
    return aten_where(_index_mask(self, dim, index), op.CastLike(value, self), self)


@aten_op("aten::index_fill.int_Tensor")
def aten_index_fill_int_Tensor(self: TTensor, dim: int, index: TInt, value: TTensor) -> TTensor:
    """index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor"""
    return aten_where(_index_mask(self, dim, index), cast_to(value, self.known_dtype), self)


@aten_op("aten::masked_scatter")
def aten_masked_scatter(self: TTensor, mask: TBool, source: TTensor) -> TTensor:
    """masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor"""
    self = _expand(self, op.Shape(mask))  # the result has the broadcast shape of self and mask
    mask = op.Expand(_bool(mask), op.Shape(self))
    flat_mask = op.Reshape(mask, [-1])
    position = op.Sub(op.CumSum(op.Cast(flat_mask, to=types.INT64.onnx), 0), 1)  # index into source
    position = op.Max(position, 0)
    source_flat = op.Reshape(source, [-1])
    # positions before the first true are clamped to 0: an empty source needs one element there
    padded = op.Concat(source_flat, op.Slice(op.Reshape(self, [-1]), [0], [1]), axis=0)
    picked = op.Reshape(op.Gather(padded, position, axis=0), op.Shape(self))
    return aten_where(mask, picked, self)


def _search(sorted_sequence: Value, values: Value, right: bool, out_int32: bool) -> Value:
    """How many boundaries are < value (<= with right=True): torch's bucketize/searchsorted.
    Counted with torch's own test, "not boundary >= value" (not >), so a NaN value goes past
    every boundary as in torch's binary search."""
    boundaries, x = _compare_dtype(sorted_sequence, values)
    if boundaries.rank == 1:
        b, v = boundaries, op.Unsqueeze(x, [-1])  # [n] against [..., 1]
    else:
        b, v = op.Unsqueeze(boundaries, [-2]), op.Unsqueeze(x, [-1])  # [..., 1, n] against [..., m, 1]
    before = op.Cast(op.Not(op.Greater(b, v) if right else op.GreaterOrEqual(b, v)), to=types.INT64.onnx)  # NaN: after every boundary
    # (int64_sum: onnxruntime's ReduceSum over an empty dim keeps it, with no boundaries)
    count = int64_sum(before, [before.known_rank - 1], False)
    count = op.Reshape(count, op.Shape(values), allowzero=1)
    return op.Cast(count, to=types.INT32.onnx) if out_int32 else count


@aten_op("aten::bucketize.Tensor")
def aten_bucketize_Tensor(self: TReal, boundaries: TReal, *, out_int32: bool = False, right: bool = False) -> TInt:
    """bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor"""
    if self.rank == 0:
        return op.Squeeze(_search(boundaries, op.Unsqueeze(self, [0]), right, out_int32), [0])
    return _search(boundaries, self, right, out_int32)


@aten_op("aten::searchsorted.Tensor")
def aten_searchsorted_Tensor(
    sorted_sequence: TReal, self: TReal, *, out_int32: bool = False, right: bool = False,
    side: str | None = None, sorter: TInt | None = None,
) -> TInt:  # fmt: skip
    """searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, str? side=None, Tensor? sorter=None) -> Tensor"""
    if sorter is not None:
        sorted_sequence = op.GatherElements(sorted_sequence, _as_int64(sorter), axis=-1) \
            if sorted_sequence.known_rank > 1 else op.Gather(sorted_sequence, _as_int64(sorter), axis=0)
    right = right or side == "right"
    if self.rank == 0:
        return op.Squeeze(_search(sorted_sequence, op.Unsqueeze(self, [0]), right, out_int32), [0])
    return _search(sorted_sequence, self, right, out_int32)


@aten_op("aten::as_strided")
def aten_as_strided(
    self: TTensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> TTensor:
    """as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)

    The view is read from self's elements in row-major order: exact for a contiguous input (what
    an exported graph has), not for a view whose own strides differ. With static size, stride
    and storage_offset the positions are one constant; a dynamic one (Longformer's chunks of a
    dynamic batch) computes them in the graph."""
    flat = op.Reshape(self, [-1])
    if all(isinstance(s, int) for s in [*size, *stride, storage_offset or 0]):
        return op.Gather(flat, op.Constant(value=strided_index("as_strided", self, size, stride, storage_offset)), axis=0)
    if len(size) != len(stride):
        raise ValueError(f"as_strided: size {list(size)} and stride {list(stride)} must have one length (torch raises too)")
    # Positions past self's elements are not checked here: torch checked the view's bounds at
    # capture, and its guards hold for every input the program accepts.
    index: Value | int = storage_offset or 0
    for axis, (n, st) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = -1
        index = op.Add(index, op.Reshape(op.Mul(op.Range(0, n, 1), st), shape))
    return op.Gather(flat, index, axis=0)


def strided_index(name: str, self: Value, size: Sequence[int], stride: Sequence[int], storage_offset: int | None) -> np.ndarray:
    """The position in self's row-major elements of every element of the strided view (of shape
    size). size, stride and storage_offset must be static; a position past self's elements
    (when its size is static) raises, as torch does."""
    if not all(isinstance(s, int) for s in [*size, *stride, storage_offset or 0]):
        raise ValueError(f"{name} needs static size, stride and storage_offset")
    if len(size) != len(stride):
        raise ValueError(f"{name}: size {list(size)} and stride {list(stride)} must have one length (torch raises too)")
    index = np.full(tuple(size), storage_offset or 0, np.int64)
    for axis, (n, st) in enumerate(zip(size, stride)):
        view = [1] * len(size)
        view[axis] = n
        index = index + (np.arange(n, dtype=np.int64) * st).reshape(view)
    numel = int(np.prod(self.static_shape)) if self.is_static else None
    if numel is not None and index.size and (index.max() >= numel or index.min() < 0):
        raise ValueError(f"{name}: the view of size {list(size)}, stride {list(stride)} and offset {storage_offset or 0} "
                         f"reads past the {numel} elements of self (torch raises too)")
    return index


def _pair(x: Sequence[int]) -> list[int]:
    return list(x) * 2 if len(x) == 1 else list(x)


def _blocks(size: int, kernel: int, dilation: int, stride: int) -> int:
    return (size - dilation * (kernel - 1) - 1) // stride + 1


def _im2col_index(hp: int, wp: int, kernel_size: Sequence[int], dilation: Sequence[int], stride: Sequence[int]) -> np.ndarray:
    """[kh*kw, L]: for every kernel offset and block, the element of the flattened padded image."""
    (kh, kw), (dh, dw), (sh, sw) = _pair(kernel_size), _pair(dilation), _pair(stride)
    ki, kj = np.meshgrid(np.arange(kh), np.arange(kw), indexing="ij")
    oi, oj = np.meshgrid(np.arange(_blocks(hp, kh, dh, sh)), np.arange(_blocks(wp, kw, dw, sw)), indexing="ij")
    rows = oi.reshape(1, -1) * sh + ki.reshape(-1, 1) * dh
    cols = oj.reshape(1, -1) * sw + kj.reshape(-1, 1) * dw
    return (rows * wp + cols).astype(np.int64)


@aten_op("aten::im2col")
def aten_im2col(
    self: TTensor, kernel_size: Sequence[int], dilation: Sequence[int], padding: Sequence[int], stride: Sequence[int]
) -> TTensor:
    """im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    Static spatial dims: one Gather of indices computed at trace time; symbolic ones: one strided
    Slice per kernel offset."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    x = op.Unsqueeze(self, [0]) if self.rank == 3 else self
    assert x.shape is not None
    height, width = x.shape[2], x.shape[3]
    if ph or pw:  # onnxruntime's Pad has no bfloat16 kernel
        padded = cast_to(op.Pad(cast_to(x, _NO_BF16.get(x.known_dtype, x.known_dtype)), [0, 0, ph, pw, 0, 0, ph, pw]), x.known_dtype)
    else:
        padded = x
    if not isinstance(height, int) or not isinstance(width, int):
        # symbolic spatial dims: one strided Slice per kernel offset, whose ends count from the
        # padded image's end (offset i keeps rows i*dh, i*dh + sh, ... up to hp - (kh-1-i)*dh:
        # out_h of them, whatever hp is), stacked in torch's (kernel offset, block) order
        big = np.iinfo(np.int64).max
        taps = []
        for i in range(kh):
            for j in range(kw):
                ends = [-(kh - 1 - i) * dh or big, -(kw - 1 - j) * dw or big]
                taps.append(op.Unsqueeze(op.Slice(padded, [i * dh, j * dw], ends, [2, 3], [sh, sw]), [2]))
        stacked = op.Concat(*taps, axis=2)  # [N, C, kh*kw, out_h, out_w]
        blocks = op.Mul(op.Shape(stacked, start=3, end=4), op.Shape(stacked, start=4, end=5))
        result = op.Reshape(stacked, op.Concat(op.Mul(op.Shape(x, start=0, end=2), [1, kh * kw]), blocks, axis=0), allowzero=1)
        return op.Squeeze(result, [0]) if self.rank == 3 else result
    hp, wp = height + 2 * ph, width + 2 * pw
    out_h, out_w = _blocks(hp, kh, dh, sh), _blocks(wp, kw, dw, sw)
    index = _im2col_index(hp, wp, kernel_size, dilation, stride)
    flat = op.Reshape(padded, [0, 0, hp * wp])
    cols_ = op.Gather(flat, op.Constant(value=index), axis=2)  # [N, C, kh*kw, L]
    result = op.Reshape(cols_, op.Concat(op.Mul(op.Shape(x, start=0, end=2), [1, kh * kw]), [out_h * out_w], axis=0), allowzero=1)
    return op.Squeeze(result, [0]) if self.rank == 3 else result


def _sym_add(size: int | Value, offset: int) -> int | Value:
    """size + offset, size a Python int or an INT64 scalar Value (a SymInt)."""
    return size + offset if isinstance(size, int) else op.Add(_as_int64(size), np.array(offset, np.int64))


def _sym_blocks(size: int | Value, kernel: int, dilation: int, stride: int) -> int | Value:
    """_blocks for a size that may be an INT64 scalar Value (its numerator is >= 0 for any size torch accepts)."""
    if isinstance(size, int):
        return _blocks(size, kernel, dilation, stride)
    return _sym_add(op.Div(_sym_add(size, -dilation * (kernel - 1) - 1), np.array(stride, np.int64)), 1)


@aten_op("aten::col2im")
def aten_col2im(
    self: TFloat, output_size: Sequence[int], kernel_size: Sequence[int], dilation: Sequence[int],
    padding: Sequence[int], stride: Sequence[int],
) -> TFloat:  # fmt: skip
    """col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor

    Static or symbolic output_size. Each kernel offset's blocks [N, C, out_h, out_w] are spread
    over the padded image by data movement alone: zeros interleaved for the stride (a Pad of
    stride - 1 after each block, a Reshape), then a Pad to the offset's place; the offsets are
    added in torch's order and dtype (one offset never hits a pixel twice; onnxruntime's Col2Im
    has a float32 kernel only), and the padding cropped."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    height, width = output_size
    out_h = _sym_blocks(_sym_add(height, 2 * ph), kh, dh, sh)
    out_w = _sym_blocks(_sym_add(width, 2 * pw), kw, dw, sw)
    x = op.Unsqueeze(self, [0]) if self.rank == 2 else self
    batch_channels = op.Div(op.Shape(x, start=0, end=2), [1, kh * kw])  # [N, C]
    blocks = op.Reshape(x, op.Concat(batch_channels, as_shape([kh * kw, out_h, out_w]), axis=0), allowzero=1)
    image = op.Constant(value=np.zeros((), self.known_dtype.numpy))  # torch's start: 0 + -0.0 is +0.0
    for k in range(kh * kw):
        i, j = divmod(k, kw)
        block = op.Unsqueeze(op.Gather(blocks, np.array(k, np.int64), axis=2), [3, 5])  # [N, C, out_h, 1, out_w, 1]
        strided = _pad(block, [0] * 6 + [0, 0, 0, sh - 1, 0, sw - 1])  # [N, C, out_h, sh, out_w, sw]
        rows_cols = op.Mul(op.Gather(op.Shape(strided), [2, 4]), [sh, sw])  # [out_h * sh, out_w * sw]
        strided = op.Reshape(strided, op.Concat(batch_channels, rows_cols, axis=0), allowzero=1)
        # at rows i*dh + o*sh; every image has out_h*sh + (kh-1)*dh >= the padded height rows
        spread = _pad(strided, [0, 0, i * dh, j * dw, 0, 0, (kh - 1 - i) * dh, (kw - 1 - j) * dw])
        image = _add_rounded(image, spread)
    image = op.Slice(image, [ph, pw], as_shape([_sym_add(height, ph), _sym_add(width, pw)]), [2, 3])
    return op.Squeeze(image, [0]) if self.rank == 2 else image


@aten_op("aten::combinations")
def aten_combinations(self: TTensor, r: int = 2, with_replacement: bool = False) -> TTensor:
    """combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor

    The combinations in itertools' order, gathered from an index table built at trace time (the
    size of self must be static)."""
    if self.rank != 1:
        raise ValueError(f"aten::combinations expects a 1-D tensor, got rank {self.rank}")
    if r < 0:
        raise ValueError(f"aten::combinations: r must be non-negative, got {r}")
    assert self.shape is not None
    n = self.shape[0]
    if not isinstance(n, int):
        raise ValueError(f"aten::combinations needs the size of {self.name!r} at trace time (its output has C(n, r) rows), got {n!r}")
    if r == 0:  # torch: an empty 1-D tensor
        return op.Slice(self, [0], [0], [0])
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    table = np.array(list(pick(range(n), r)), np.int64).reshape(-1, r)
    return op.Gather(self, table, axis=0)
