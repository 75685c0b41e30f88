"""Helpers shared by the factorisations: argument checks, masks, row/column access on batched
matrices (..., m, n), triangular substitution, and an ONNX Loop that also runs eagerly."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from graph_builder import op, types
from graph_builder.builder import GraphBuilder
from graph_builder.evaluator import EAGER, current_evaluator
from graph_builder.ir import Value
from graph_builder.types import DType

FLOAT_TYPES = (types.FLOAT, types.DOUBLE)


def check_matrix(fn: str, x: Value, arg: str = "A") -> tuple[int, int]:
    """The static (rows, columns) of a float32/float64 batch of matrices, or a clear error."""
    if x.dtype not in FLOAT_TYPES:
        raise TypeError(
            f"{fn}: {arg} must be float32 or float64 (torch's CPU kernels take those and complex), got {x.dtype}"
        )
    if x.rank is None or x.rank < 2:
        raise ValueError(f"{fn}: {arg} must have at least 2 dimensions, got shape {list(x.shape or [])}")
    m, n = x.known_shape[-2], x.known_shape[-1]
    if not isinstance(m, int) or not isinstance(n, int):
        raise ValueError(f"{fn}: the matrix dimensions of {arg} must be static (the steps over them are unrolled; "
                         f"batch dimensions may be dynamic), got shape {list(x.known_shape)}")  # fmt: skip
    return m, n


def check_square(fn: str, x: Value, arg: str = "A") -> int:
    m, n = check_matrix(fn, x, arg)
    if m != n:
        raise ValueError(f"{fn}: {arg} must be a batch of square matrices, got shape {list(x.shape or [])}")
    return n


def tr(x: Value) -> Value:
    """The transpose of the last two dimensions."""
    assert x.rank is not None
    perm = list(range(x.rank))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return op.Transpose(x, perm=perm)


def mm(a: Value | np.ndarray, b: Value | np.ndarray) -> Value:
    """MatMul with batch broadcasting. onnxruntime's MatMul fails to broadcast a left operand
    with fewer dimensions against a right one with an empty batch (0 matrices), so such a left
    operand is first expanded to the right one's batch shape (transposing instead does not help:
    onnxruntime fuses the transposes back into one FusedMatMul)."""
    if not isinstance(a, Value):  # a numpy constant
        a = op.CastLike(a, b)
    if not isinstance(b, Value):
        b = op.CastLike(b, a)
    if (a.rank or 0) < (b.rank or 0):
        a = op.Expand(a, op.Concat(op.Shape(b, end=-2), [1, 1], axis=0))
    return op.MatMul(a, b)


def eye(m: int, n: int, dtype: DType) -> np.ndarray:
    return np.eye(m, n, dtype=dtype.numpy)


def rows(m: int) -> np.ndarray:
    """Row indices as a (m, 1) constant: `rows(m) > k` masks the rows below k."""
    return np.arange(m)[:, None]


def cols(n: int) -> np.ndarray:
    """Column indices as a (1, n) constant."""
    return np.arange(n)[None, :]


def row(x: Value, i: int, keep: bool = False) -> Value:
    """Row i of each matrix: (..., n), or (..., 1, n) with keep."""
    return op.Gather(x, [i] if keep else i, axis=-2)


def col(x: Value, j: int, keep: bool = False) -> Value:
    """Column j of each matrix: (..., m), or (..., m, 1) with keep."""
    return op.Gather(x, [j] if keep else j, axis=-1)


def diagonal(x: Value, k: int) -> Value:
    """The first k diagonal elements of each matrix: (..., k)."""
    m, n = x.static_dim(-2), x.static_dim(-1)
    mask = np.eye(m, n, dtype=bool)
    d = reduce("Sum", op.Where(mask, x, op.CastLike(0, x)), [-1], keepdims=0)
    return d if k == m else op.Slice(d, [0], [k], [-1])


def reduce(kind: str, x: Value, axes: Sequence[int], keepdims: int = 0) -> Value:
    """op.Reduce<kind> over `axes` given as positive indices: onnxruntime's reductions ignore a
    negative axis when the input is empty (a batch of 0 matrices)."""
    assert x.rank is not None
    positive = [a + x.rank if a < 0 else a for a in axes]
    return getattr(op, "Reduce" + kind)(x, positive, keepdims=keepdims)


def triu(x: Value, diagonal: int = 0) -> Value:
    return op.Trilu(x, diagonal, upper=1)


def tril(x: Value, diagonal: int = 0) -> Value:
    return op.Trilu(x, diagonal, upper=0)


def empty(x: Value) -> Value:
    """A 1-D tensor of 0 elements of x's dtype (torch's placeholder for an output not computed),
    made from x so that two of them are two distinct graph outputs."""
    return op.Slice(op.Reshape(x, [-1]), [0], [0], [0])


def zeros_like(x: Value) -> Value:
    return op.ConstantOfShape(op.Shape(x), value=np.zeros(1, x.known_dtype.numpy))


def broadcast_batch(a: Value, b: Value) -> tuple[Value, Value]:
    """a (..., m, n) and b (..., p, q) with their batch dimensions broadcast to one shape."""
    # zeros of each batch shape, added: a tensor of the broadcast batch shape
    zeros_a = op.ConstantOfShape(op.Shape(a, end=-2), value=np.zeros(1, np.int64))
    zeros_b = op.ConstantOfShape(op.Shape(b, end=-2), value=np.zeros(1, np.int64))
    batch = op.Shape(op.Add(zeros_a, zeros_b))
    a2 = op.Expand(a, op.Concat(batch, op.Shape(a, start=-2), axis=0))
    b2 = op.Expand(b, op.Concat(batch, op.Shape(b, start=-2), axis=0))
    return a2, b2


def substitute(t: Value, b: Value, upper: bool, unit: bool = False) -> Value:
    """X with T X = B for a triangular T (..., n, n) (only its upper or lower triangle is read)
    and B (..., n, k): back substitution (upper) or forward substitution (lower), one row at a
    time. Batch dimensions broadcast."""
    n = t.static_dim(-1)
    x = zeros_like(b)
    for i in reversed(range(n)) if upper else range(n):
        r = row(t, i, keep=True)  # (..., 1, n); entries of rows not solved yet multiply zeros of x
        keep = (cols(n) > i) if upper else (cols(n) < i)
        r = op.Where(keep, r, op.CastLike(0, r))
        xi = op.Sub(row(b, i, keep=True), mm(r, x))
        if not unit:
            xi = op.Div(xi, op.Gather(row(t, i, keep=True), [i], axis=-1))  # (..., 1, 1)
        x = op.Where((rows(n) == i), xi, x)
    return x


def loop(
    trips: int | Value,
    carried: Sequence[Value],
    body: Callable[[Value, list[Value]], tuple[Value | None, list[Value]]],
) -> list[Value]:
    """An ONNX Loop of at most `trips` iterations over the carried values. body(i, values)
    returns (keep_going or None, new values); the new values keep the dtypes and ranks of the
    old. Traced, it is one Loop node whose body is a subgraph; eagerly, the same Loop is built
    in a small graph of its own and run once in onnxruntime."""
    evaluator = current_evaluator()
    if evaluator is EAGER:
        g = GraphBuilder()
        inputs = [g.input(f"carried_{k}", v.known_dtype, v.shape) for k, v in enumerate(carried)]
        with g:
            outputs = _build_loop(g, trips, inputs, body)
        results = g.run({v.name: c.numpy() for v, c in zip(inputs, carried)}, outputs)
        return [Value("", types.from_numpy(r.dtype), r.shape, const_value=r) for r in results]
    assert isinstance(evaluator, GraphBuilder)
    return _build_loop(evaluator, trips, list(carried), body)


def _build_loop(
    g: GraphBuilder,
    trips: int | Value,
    carried: list[Value],
    body: Callable[[Value, list[Value]], tuple[Value | None, list[Value]]],
) -> list[Value]:
    sub = g.subgraph("linalg_loop")
    i = sub.input("i", types.INT64, [])
    cond = sub.input("cond", types.BOOL, [])
    inputs = [sub.input("carried", v.known_dtype, v.shape) for v in carried]
    with sub:
        keep_going, outputs = body(i, inputs)
        sub.output(op.Identity(cond) if keep_going is None else keep_going)
        for v in outputs:
            sub.output(v)
    max_trips = np.array(trips, np.int64) if isinstance(trips, int) else trips
    results = op.Loop(max_trips, np.array(True), *carried, body=sub)
    return list(results) if isinstance(results, (list, tuple)) else [results]
