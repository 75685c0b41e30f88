"""Shapes and views: view/reshape, permute/transpose, expand, (un)squeeze, flatten, cat/stack,
split/chunk/unbind, repeat/tile, flip, roll, narrow, pad, tril/triu, diagonal, movedim, unfold.

Sizes are SymInt lists: Python ints mixed with INT64 scalar Values for dynamic dimensions. Where a
size is known while tracing it stays a Python int, so static graphs get constant shapes.
Dynamic dimensions follow torch.export's assumption that they are >= 2 (0 and 1 specialize).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TTensor
from graph_builder.types import DType
from torchlib.ops import symbolic as sym
from torchlib.ops._helpers import as_shape, dim_size, n_outputs, normalize_dim
from torchlib.ops._kernels import nearest_supported
from torchlib.promotion import cast_to, promote_all
from torchlib.registry import aten_op

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)

NO_BF16 = frozenset({types.BFLOAT16})
NO_SMALL_INT = frozenset({types.BFLOAT16, types.INT8, types.INT16, types.UINT8})
_NO_PAD = frozenset({types.BFLOAT16, types.INT16})


def cast_for_kernel(x: Value, missing: frozenset[DType]) -> Value:
    """x, cast to the nearest wider dtype when onnxruntime lacks a kernel for x.dtype (those in `missing`)."""
    return cast_to(x, nearest_supported(x.known_dtype, lambda d: d not in missing))


def shape_of(x: Value, start: int = 0, end: int | None = None) -> list[int] | Value:
    """x.shape[start:end] as a list of ints when static, else as a 1-D INT64 Value."""
    part = x.known_shape[start:end]
    static = [d for d in part if isinstance(d, int)]
    if len(static) == len(part):
        return static
    return op.Shape(x, start=start, end=end)


def join(*parts: Sequence[Any] | Value) -> list[int] | Value:
    """Concatenate shape pieces: lists of SymInts and 1-D INT64 Values."""
    pieces = [p if isinstance(p, Value) else as_shape(p) for p in parts]
    lists = [p for p in pieces if isinstance(p, list)]
    if len(lists) == len(pieces):
        return [d for p in lists for d in p]
    return op.Concat(*pieces, axis=0)


def _numel(x: Value, start: int, end: int) -> Any:
    """The product of x.shape[start:end], an int when static."""
    part = shape_of(x, start, end)
    if isinstance(part, list):
        return math.prod(part)
    return op.ReduceProd(part, keepdims=0)


# -- views -------------------------------------------------------------------------------------


def _target_shape(size: Sequence[Any] | Value, self: Value | None = None) -> Any:
    """A view's size as a Reshape shape. One dynamic size among positive static ones is written
    -1: the element count fixes it (torch checked that it matches), so a dynamic batch
    (`x.flatten(0, 1)`, `reshape(B * L, C)`) gives a constant shape with no shape arithmetic,
    and an empty input gives 0 there. A size that has a -1 besides is resolved when the dynamic
    size is self's one dynamic dim (`x.view(B, N, heads, -1)`): the -1 is then self's static
    element count over the size's static ones."""
    if isinstance(size, Value):
        return size
    dynamic = [i for i, d in enumerate(size) if not isinstance(d, int)]
    if len(dynamic) == 1 and all(d > 0 for d in size if isinstance(d, int)):
        return [-1 if i == dynamic[0] else int(d) for i, d in enumerate(size)]
    if len(dynamic) == 1 and (inferred := _inferred_size(size, dynamic[0], self)) is not None:
        return [-1 if i == dynamic[0] else inferred if d == -1 else int(d) for i, d in enumerate(size)]
    return as_shape(size)


def _inferred_size(size: Sequence[Any], dynamic: int, self: Value | None) -> int | None:
    """The value of size's one -1 when size[dynamic] is the dim that self's one dynamic dim
    names (by the symbol tracing gave it), and every other size is positive and static."""
    static = [d for i, d in enumerate(size) if i != dynamic]
    if self is None or self.shape is None or static.count(-1) != 1 or any(d == 0 or d < -1 for d in static):
        return None
    self_dynamic = [d for d in self.shape if not isinstance(d, int)]
    sym_dim = getattr(size[dynamic], "sym_value", None)
    if len(self_dynamic) != 1 or self_dynamic[0] is None or sym_dim is None or len(sym_dim) != 1 or sym_dim[0] != self_dynamic[0]:
        return None
    known, part = math.prod(d for d in self.shape if isinstance(d, int)), -math.prod(static)
    return known // part if known > 0 and known % part == 0 else None


def _shape_like(other: Value) -> Any:
    """other's shape as a Reshape shape: constant with -1 for its one dynamic dim (see
    `_target_shape`), else read off it."""
    dims = other.shape
    if dims is not None and sum(not isinstance(d, int) for d in dims) == 1 and all(d > 0 for d in dims if isinstance(d, int)):
        return _target_shape(dims)
    return shape_of(other)


@aten_op("aten::view", "aten::_unsafe_view", "aten::view_copy")
def aten_view(self: TTensor, size: Sequence[int]) -> TTensor:
    """view(Tensor(a) self, SymInt[] size) -> Tensor(a)"""
    return op.Reshape(self, _target_shape(size, self), allowzero=1)


@aten_op("aten::reshape")
def aten_reshape(self: TTensor, shape: Sequence[int]) -> TTensor:
    """reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)"""
    return op.Reshape(self, _target_shape(shape, self), allowzero=1)


@aten_op("aten::view_as")
def aten_view_as(self: TTensor, other: TTensor) -> TTensor:
    """view_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return op.Reshape(self, _shape_like(other), allowzero=1)


@aten_op("aten::alias", "aten::detach")
def aten_alias(self: TTensor) -> TTensor:
    """alias(Tensor(a) self) -> Tensor(a)"""
    return op.Identity(self)


@aten_op("aten::contiguous")
def aten_contiguous(self: TTensor, *, memory_format: str = "contiguous_format") -> TTensor:
    """contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)"""
    return self  # memory layout does not exist in ONNX


def _permute(self: Value, perm: list[int]) -> Value:
    if perm == list(range(self.known_rank)):
        return op.Identity(self)
    return op.Transpose(self, perm=perm)


@aten_op("aten::permute", "aten::permute_copy")
def aten_permute(self: TTensor, dims: Sequence[int]) -> TTensor:
    """permute(Tensor(a) self, int[] dims) -> Tensor(a)"""
    return _permute(self, [normalize_dim(d, self.known_rank) for d in dims])


@aten_op("aten::transpose.int")
def aten_transpose(self: TTensor, dim0: int, dim1: int) -> TTensor:
    """transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"""
    if self.rank == 0:
        return op.Identity(self)
    perm = list(range(self.known_rank))
    d0, d1 = normalize_dim(dim0, self.known_rank), normalize_dim(dim1, self.known_rank)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _permute(self, perm)


def _movedim(self: Value, source: Sequence[int], destination: Sequence[int]) -> Value:
    rank = self.known_rank
    src = [normalize_dim(d, rank) for d in source]
    dst = [normalize_dim(d, rank) for d in destination]
    perm: list[int | None] = [None] * rank
    for s, d in zip(src, dst):
        perm[d] = s
    rest = iter(i for i in range(rank) if i not in src)
    order = [next(rest) if p is None else p for p in perm]
    return _permute(self, order)


@aten_op("aten::movedim.int")
def aten_movedim(self: TTensor, source: int, destination: int) -> TTensor:
    """movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)"""
    return _movedim(self, [source], [destination])


@aten_op("aten::movedim.intlist")
def aten_movedim_intlist(self: TTensor, source: Sequence[int], destination: Sequence[int]) -> TTensor:
    """movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)"""
    return _movedim(self, source, destination)


def _expand(self: Value, shape: Any) -> Value:
    return cast_to(op.Expand(cast_for_kernel(self, NO_BF16), shape), self.known_dtype)


@aten_op("aten::expand", "aten::expand_copy")
def aten_expand(self: TTensor, size: Sequence[int], *, implicit: bool = False) -> TTensor:
    """expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)"""
    # -1 keeps the input's size; Expand broadcasts a 1 against it to the same effect.
    return _expand(self, as_shape([1 if isinstance(s, int) and s == -1 else s for s in size]))


@aten_op("aten::expand_as")
def aten_expand_as(self: TTensor, other: TTensor) -> TTensor:
    """expand_as(Tensor(a) self, Tensor other) -> Tensor(a)"""
    return _expand(self, shape_of(other))


@aten_op("aten::unsqueeze")
def aten_unsqueeze(self: TTensor, dim: int) -> TTensor:
    """unsqueeze(Tensor(a) self, int dim) -> Tensor(a)"""
    return op.Unsqueeze(self, [normalize_dim(dim, self.known_rank + 1)])


def _squeeze_dims(self: Value, dim_list: Sequence[int]) -> Value:
    # A dynamic dimension is never 1 in an exported graph (torch.export specializes 1), so only
    # static dimensions of size 1 are removed, as torch does.
    axes = sorted({normalize_dim(d, self.known_rank) for d in dim_list})
    axes = [a for a in axes if self.known_rank and self.known_shape[a] == 1]
    if not axes:
        return op.Identity(self)
    return op.Squeeze(self, axes)


@aten_op("aten::squeeze", "aten::squeeze_copy")
def aten_squeeze(self: TTensor) -> TTensor:
    """squeeze(Tensor(a) self) -> Tensor(a)"""
    return _squeeze_dims(self, range(self.known_rank))


@aten_op("aten::squeeze.dim", "aten::squeeze_copy.dim")
def aten_squeeze_dim(self: TTensor, dim: int) -> TTensor:
    """squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)"""
    return _squeeze_dims(self, [dim])


@aten_op("aten::squeeze.dims", "aten::squeeze_copy.dims")
def aten_squeeze_dims(self: TTensor, dim: Sequence[int]) -> TTensor:
    """squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)"""
    return _squeeze_dims(self, dim)


@aten_op("aten::flatten.using_ints")
def aten_flatten(self: TTensor, start_dim: int = 0, end_dim: int = -1) -> TTensor:
    """flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)"""
    if self.rank == 0:
        return op.Reshape(self, [1])
    start, end = normalize_dim(start_dim, self.known_rank), normalize_dim(end_dim, self.known_rank)
    if start == end:
        return op.Identity(self)
    if start == 1 and end == self.known_rank - 1:  # (N, ...) -> (N, rest): one node, also for a dynamic N
        return op.Flatten(self, axis=1)
    if self.shape is not None:  # one dynamic size: a constant shape with -1 (see _target_shape)
        part = self.shape[start:end + 1]
        static = [d for d in part if isinstance(d, int)]
        merged = math.prod(static) if len(static) == len(part) else None
        dims = [*self.shape[:start], merged, *self.shape[end + 1:]]
        if sum(not isinstance(d, int) for d in dims) == 1 and isinstance(target := _target_shape(dims), list):
            return op.Reshape(self, target, allowzero=1)
    shape = join(shape_of(self, 0, start), [_numel(self, start, end + 1)], shape_of(self, end + 1))
    return op.Reshape(self, shape, allowzero=1)


@aten_op("aten::unflatten.int")
def aten_unflatten(self: TTensor, dim: int, sizes: Sequence[int]) -> TTensor:
    """unflatten.int(Tensor(a) self, int dim, SymInt[] sizes) -> Tensor(a)"""
    d = normalize_dim(dim, self.known_rank)
    return op.Reshape(self, join(shape_of(self, 0, d), sizes, shape_of(self, d + 1)), allowzero=1)


# -- joining and splitting -----------------------------------------------------------------------


@aten_op("aten::cat")
def aten_cat(tensors: Sequence[TTensor], dim: int = 0) -> TTensor:
    """cat(Tensor[] tensors, int dim=0) -> Tensor"""
    tensors = promote_all(tensors)
    # torch skips 1-D empty tensors whatever the rank of the others (legacy behaviour).
    kept = [t for t in tensors if t.shape != (0,)]
    if len(kept) <= 1:
        return op.Identity(kept[0] if kept else tensors[0])
    return op.Concat(*kept, axis=normalize_dim(dim, kept[0].rank))


@aten_op("aten::stack")
def aten_stack(tensors: Sequence[TTensor], dim: int = 0) -> TTensor:
    """stack(Tensor[] tensors, int dim=0) -> Tensor"""
    tensors = promote_all(tensors)
    axis = normalize_dim(dim, tensors[0].rank + 1)
    parts = [op.Unsqueeze(t, [axis]) for t in tensors]
    return parts[0] if len(parts) == 1 else op.Concat(*parts, axis=axis)


def _split(self: Value, sizes: Sequence[Any], dim: int) -> list[Value]:
    if len(sizes) == 1:
        return [op.Identity(self)]
    return list(n_outputs(op.Split(self, as_shape(sizes), axis=normalize_dim(dim, self.known_rank), _outputs=len(sizes)), len(sizes)))


def _static_size(self: Value, dim: int, what: str) -> int:
    n = self.known_shape[dim]
    if not isinstance(n, int):
        raise ValueError(f"{what} along the dynamic dimension {dim} of a {list(self.known_shape)} tensor: "
                         "the number of outputs would depend on the input size")
    return n


@aten_op("aten::split.Tensor", "aten::unsafe_split.Tensor", "aten::split_copy.Tensor")
def aten_split(self: TTensor, split_size: int, dim: int = 0) -> list[TTensor]:
    """split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"""
    n = _static_size(self, dim, "split")
    if n == 0:
        return [op.Identity(self)]
    sizes = [split_size] * (n // split_size) + ([n % split_size] if n % split_size else [])
    return _split(self, sizes, dim)


@aten_op("aten::split.sizes")
def aten_split_sizes(self: TTensor, split_size: Sequence[int], dim: int = 0) -> list[TTensor]:
    """split.sizes(Tensor(a -> *) self, SymInt[] split_size, int dim=0) -> Tensor(a)[]"""
    return _split(self, split_size, dim)


@aten_op("aten::split_with_sizes", "aten::split", "aten::unsafe_split_with_sizes", "aten::split_with_sizes_copy")
def aten_split_with_sizes(self: TTensor, split_sizes: Sequence[int], dim: int = 0) -> list[TTensor]:
    """split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]"""
    return _split(self, split_sizes, dim)


def _multiple_of(size: Any, k: int) -> bool:
    """Whether a symbolic size ("2*batch") is k times an integer for every value of its symbols."""
    import sympy

    try:
        expr = sympy.sympify(str(size))
    except (sympy.SympifyError, SyntaxError, TypeError):
        return False
    expr = expr.subs({s: sympy.Symbol(s.name, integer=True, nonnegative=True) for s in expr.free_symbols})
    return bool(sympy.simplify(expr / k).is_integer)


@aten_op("aten::chunk")
def aten_chunk(self: TTensor, chunks: int, dim: int = 0) -> list[TTensor]:
    """chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]"""
    size = self.shape[dim] if self.shape is not None else None
    if isinstance(size, str) and chunks > 1 and _multiple_of(size, chunks):
        # a dynamic size that is a multiple of `chunks` (2*batch into 2): always `chunks` equal
        # parts (empty ones for an empty dim, which Split refuses: slices)
        axis = normalize_dim(dim, self.known_rank)
        part = op.Div(op.Shape(self, start=axis, end=axis + 1), chunks)
        return [op.Slice(self, op.Mul(part, i), op.Mul(part, i + 1), [axis]) for i in range(chunks)]
    n = _static_size(self, dim, "chunk")
    if n == 0:
        return [op.Identity(self) for _ in range(chunks)]
    size = -(-n // chunks)
    return _split(self, [size] * (n // size) + ([n % size] if n % size else []), dim)


@aten_op("aten::unbind.int")
def aten_unbind(self: TTensor, dim: int = 0) -> list[TTensor]:
    """unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]"""
    d = normalize_dim(dim, self.known_rank)
    n = _static_size(self, d, "unbind")
    return [op.Squeeze(part, [d]) for part in _split(self, [1] * n, d)] if n else []


# -- repeating and reordering ------------------------------------------------------------------


def _repeat(self: Value, repeats: Sequence[Any]) -> Value:
    extra = len(repeats) - self.known_rank
    x = op.Unsqueeze(self, list(range(extra))) if extra > 0 else self
    if not repeats:
        return op.Identity(x)
    return cast_to(op.Tile(cast_for_kernel(x, NO_BF16), as_shape(repeats)), self.known_dtype)


@aten_op("aten::repeat")
def aten_repeat(self: TTensor, repeats: Sequence[int]) -> TTensor:
    """repeat(Tensor self, SymInt[] repeats) -> Tensor"""
    return _repeat(self, repeats)


@aten_op("aten::tile")
def aten_tile(self: TTensor, dims: Sequence[int]) -> TTensor:
    """tile(Tensor self, SymInt[] dims) -> Tensor"""
    return _repeat(self, [1] * (self.known_rank - len(dims)) + list(dims))


@aten_op("aten::flip")
def aten_flip(self: TTensor, dims: Sequence[int]) -> TTensor:
    """flip(Tensor self, int[] dims) -> Tensor"""
    axes = sorted({normalize_dim(d, self.known_rank) for d in dims})
    if not axes or self.rank == 0:
        return op.Identity(self)
    k = len(axes)
    return op.Slice(self, [-1] * k, [INT64_MIN] * k, axes, [-1] * k)


def _roll_dim(x: Value, shift: Any, dim: int) -> Value:
    n = dim_size(x, dim)
    if isinstance(n, int) and n == 0:
        return x
    s = sym.mod(shift, n)
    if isinstance(s, int) and s == 0:
        return x
    cut = as_shape([sym.sub(n, s)])
    tail = op.Slice(x, cut, [INT64_MAX], [dim])
    head = op.Slice(x, [0], cut, [dim])
    return op.Concat(tail, head, axis=dim)


@aten_op("aten::roll")
def aten_roll(self: TTensor, shifts: Sequence[int], dims: Sequence[int] = ()) -> TTensor:
    """roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"""
    if not dims:
        flat = _roll_dim(op.Reshape(self, [-1]), shifts[0], 0)
        return op.Reshape(flat, shape_of(self), allowzero=1)
    x = self
    for shift, dim in zip(shifts, dims):
        x = _roll_dim(x, shift, normalize_dim(dim, self.known_rank))
    return x if x is not self else op.Identity(self)


def _narrow(self: Value, dim: int, start: Any, length: Any) -> Value:
    d = normalize_dim(dim, self.known_rank)
    if isinstance(start, Value):  # narrow.Tensor: a 0-dim tensor, maybe negative
        start = op.Cast(start, to=types.INT64.onnx) if start.dtype is not types.INT64 else start
        start = op.Where(op.Less(start, 0), op.Add(start, dim_size(self, d)), start)
    elif start < 0:
        start = sym.add(start, dim_size(self, d))
    return op.Slice(self, as_shape([start]), as_shape([sym.add(start, length)]), [d])


@aten_op("aten::narrow", "aten::narrow_copy")
def aten_narrow(self: TTensor, dim: int, start: int, length: int) -> TTensor:
    """narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)"""
    return _narrow(self, dim, start, length)


@aten_op("aten::narrow.Tensor")
def aten_narrow_tensor(self: TTensor, dim: int, start: TTensor, length: int) -> TTensor:
    """narrow.Tensor(Tensor(a) self, int dim, Tensor start, SymInt length) -> Tensor(a)"""
    return _narrow(self, dim, op.Reshape(start, []), length)


# -- padding -------------------------------------------------------------------------------------


def _pad(self: Value, pad: Sequence[Any], mode: str, value: Any) -> Value:
    if len(pad) % 2 or len(pad) // 2 > self.known_rank:
        raise ValueError(f"pad of {len(pad)} values does not fit a tensor of rank {self.rank}")
    k = len(pad) // 2
    # torch lists (begin, end) pairs from the last dimension backwards; ONNX all begins, then ends.
    pads = as_shape([*pad[0::2], *pad[1::2]])
    axes = [self.known_rank - 1 - i for i in range(k)]
    if mode != "constant" and 0 in self.known_shape:
        mode = "constant"  # the result is empty too; onnxruntime rejects the other modes on empty inputs
    if mode == "edge" and any(isinstance(p, int) and p < 0 for p in pad):
        return _replicate_cropped(self, pad)
    x = cast_for_kernel(self, _NO_PAD)
    constant = value if mode == "constant" else None
    return cast_to(op.Pad(x, pads, constant, axes, mode=mode), self.known_dtype)


def _replicate_cropped(self: Value, pad: Sequence[int]) -> Value:
    """Replicate padding with negative pads: torch clamps each output position into the input,
    even when the crop leaves nothing (onnxruntime's edge Pad then fails)."""
    x = self
    for i in range(len(pad) // 2):
        axis, begin, end = self.known_rank - 1 - i, pad[2 * i], pad[2 * i + 1]
        n = self.known_shape[axis]
        if not (isinstance(n, int) and isinstance(begin, int) and isinstance(end, int)):
            raise ValueError("replicate padding with negative pads needs static sizes and pads")
        x = op.Gather(x, [min(max(j - begin, 0), n - 1) for j in range(n + begin + end)], axis=axis)
    return x


@aten_op("aten::constant_pad_nd")
def aten_constant_pad_nd(self: TTensor, pad: Sequence[int], value: float = 0) -> TTensor:
    """constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"""
    return _pad(self, pad, "constant", value)


_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@aten_op("aten::pad")
def aten_pad(self: TTensor, pad: Sequence[int], mode: str = "constant", value: float | None = None) -> TTensor:
    """pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor"""
    if mode not in _PAD_MODES:
        raise ValueError(f"pad mode {mode!r} is not one of {sorted(_PAD_MODES)}")
    return _pad(self, pad, _PAD_MODES[mode], 0 if value is None else value)


# -- triangles, diagonals, windows -----------------------------------------------------------


def _trilu(self: Value, diagonal: Any, upper: int) -> Value:
    x = cast_for_kernel(self, NO_SMALL_INT)
    k = op.Reshape(diagonal, []) if isinstance(diagonal, Value) else diagonal
    return cast_to(op.Trilu(x, k, upper=upper), self.known_dtype)


@aten_op("aten::tril")
def aten_tril(self: TTensor, diagonal: int = 0) -> TTensor:
    """tril(Tensor self, SymInt diagonal=0) -> Tensor"""
    return _trilu(self, diagonal, 0)


@aten_op("aten::triu")
def aten_triu(self: TTensor, diagonal: int = 0) -> TTensor:
    """triu(Tensor self, SymInt diagonal=0) -> Tensor"""
    return _trilu(self, diagonal, 1)


def _arange(start: Any, stop: Any, step: Any) -> Any:
    """range(start, stop, step) as a list of ints, or a 1-D INT64 Value when dynamic."""
    if all(isinstance(v, int) for v in (start, stop, step)):
        return list(range(start, stop, step))
    return op.Range(start, stop, step)


@aten_op("aten::diagonal")
def aten_diagonal(self: TTensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> TTensor:
    """diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)"""
    d1, d2 = normalize_dim(dim1, self.known_rank), normalize_dim(dim2, self.known_rank)
    rest = [i for i in range(self.known_rank) if i not in (d1, d2)]
    x = _permute(self, rest + [d1, d2])
    n1, n2 = dim_size(self, d1), dim_size(self, d2)
    length = sym.maximum(0, sym.minimum(sym.add(n1, min(offset, 0)), sym.sub(n2, max(offset, 0))))
    # Element (i, i + offset) of the (n1, n2) matrix, flattened: i * (n2 + 1) + first.
    first = sym.add(sym.mul(max(-offset, 0), n2), max(offset, 0))
    stride = sym.add(n2, 1)
    index = _arange(first, sym.add(first, sym.mul(length, stride)), stride)
    flat = op.Reshape(x, join(shape_of(x, 0, len(rest)), [sym.mul(n1, n2)]), allowzero=1)
    return op.Gather(flat, index, axis=len(rest))


@aten_op("aten::unfold")
def aten_unfold(self: TTensor, dimension: int, size: int, step: int) -> TTensor:
    """unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)"""
    if self.rank == 0:
        return op.Reshape(self, [1])
    d = normalize_dim(dimension, self.known_rank)
    windows = sym.add(sym.floordiv(sym.sub(dim_size(self, d), size), step), 1)
    starts = _arange(0, sym.mul(windows, step), step)
    if isinstance(starts, list):
        index: Any = [[s + j for j in range(size)] for s in starts]  # (windows, size)
    else:
        index = op.Add(op.Unsqueeze(starts, [1]), list(range(size)))
    gathered = op.Gather(self, index, axis=d)  # (..., windows, size, ...)
    order = list(range(self.known_rank + 1))
    order.append(order.pop(d + 1))
    return _permute(gathered, order)
