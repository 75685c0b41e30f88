"""Small helpers shared by the ops modules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graph_builder import op, types
from graph_builder.ir import Value


def as_shape(size: Sequence[int | Value] | Value) -> Any:
    """An INT64 1-D shape from a list mixing ints and INT64 scalar Values (SymInts), or a Value.
    All-int lists stay Python lists (the op namespace makes them constants)."""
    if isinstance(size, Value):
        return size if size.dtype is types.INT64 else op.Cast(size, to=types.INT64.onnx)
    ints = [s for s in size if isinstance(s, int)]
    if len(ints) == len(size):
        return [int(s) for s in ints]
    parts = []
    for s in size:
        if isinstance(s, Value):
            s64 = s if s.dtype is types.INT64 else op.Cast(s, to=types.INT64.onnx)
            parts.append(op.Reshape(s64, [1]))
        else:
            parts.append(op.Constant(value_ints=[int(s)]))
    return op.Concat(*parts, axis=0)


def normalize_dim(dim: int, rank: int) -> int:
    """A dim in [0, rank) from torch's [-rank, rank) (rank 0 accepts -1 and 0)."""
    if rank == 0:
        return 0
    return dim + rank if dim < 0 else dim


def dim_size(x: Value, dim: int) -> Any:
    """The size of one dimension: a Python int when static, else an INT64 scalar Value."""
    assert x.shape is not None
    d = x.shape[dim]
    if isinstance(d, int):
        return d
    return op.Squeeze(op.Shape(x, start=dim, end=dim + 1 if dim != -1 else None), [0])


def first_rows(x: Value, like: Value, too_few: str) -> Value:
    """x's first N rows (dim 0), N being like's dim 0: x itself when the sizes match. Fewer rows
    than N raise ValueError(too_few.format(have=..., need=...)) when both sizes are static (in
    onnxruntime's Slice otherwise, which then returns fewer rows)."""
    have, need = x.known_shape[0], like.known_shape[0]
    if isinstance(have, int) and isinstance(need, int):
        if have < need:
            raise ValueError(too_few.format(have=have, need=need))
        if have == need:
            return x
    return op.Slice(x, [0], op.Shape(like, start=0, end=1), [0])


def one_output(result: Value | tuple[Value, ...]) -> Value:
    """The output of an op whose call makes one (an op with optional or variadic outputs, such as
    MaxPool or If, typed `Value | tuple[Value, ...]`)."""
    if not isinstance(result, Value):
        raise TypeError(f"expected one output, got {len(result)}")
    return result


def n_outputs(result: Value | tuple[Value, ...], n: int) -> tuple[Value, ...]:
    """The n outputs of an op call that makes several (`_outputs=n`, Split's `num_outputs=n`)."""
    if not isinstance(result, tuple) or len(result) != n:
        raise TypeError(f"expected {n} outputs, got {len(result) if isinstance(result, tuple) else 1}")
    return result
