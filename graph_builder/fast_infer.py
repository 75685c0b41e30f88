"""Python shape and dtype rules for the ops that dominate real graphs.

ONNX's own inference (`onnx.shape_inference.infer_node_outputs`) is exact but costs tens of
microseconds a call; these rules give the same answer for the common cases in a few. A rule
returns None when it cannot decide, and the builder falls back to ONNX's inference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from graph_builder import types
from graph_builder.ir import Dim, Shape, Value
from graph_builder.schema import OpError
from graph_builder.types import DType

Result = list[tuple[DType | None, Shape | None]] | None


def broadcast_shapes(*shapes: Shape | None) -> Shape | None:
    """Numpy-style broadcast of shapes whose dims may be ints, symbolic names or None. A known
    size > 1 wins over a symbolic or unknown one; two different names give an unknown dim."""
    result = shapes[0]
    for shape in shapes[1:]:
        result = _broadcast2(result, shape, shapes)
    return result


def _broadcast2(a: Shape | None, b: Shape | None, shapes: tuple[Shape | None, ...]) -> Shape | None:
    if a is None or b is None:
        return None
    if a == b or not b:
        return a
    if not a:
        return b
    if len(a) < len(b):
        a = (1,) * (len(b) - len(a)) + a
    elif len(b) < len(a):
        b = (1,) * (len(a) - len(b)) + b
    out: list[Dim] = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        elif type(x) is int:
            if type(y) is int:
                raise OpError(f"shapes {[list(s) for s in shapes]} cannot be broadcast together")  # type: ignore[arg-type]
            out.append(x)
        elif type(y) is int:
            out.append(y)
        else:
            out.append(None)
    return tuple(out)


def _unary(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    return [(ins[0].dtype, ins[0].shape)]  # type: ignore[union-attr]


def _binary(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    if len(ins) == 2:
        a, b = ins
        sa, sb = a.shape, b.shape  # type: ignore[union-attr]
        return [(a.dtype, sa if sa == sb else broadcast_shapes(sa, sb))]  # type: ignore[union-attr]
    return [(ins[0].dtype, broadcast_shapes(*[v.shape for v in ins]))]  # type: ignore[union-attr]


def _compare(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    a, b = ins
    return [(types.BOOL, broadcast_shapes(a.shape, b.shape))]  # type: ignore[union-attr]


def _where(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    c, x, y = ins
    return [(x.dtype, broadcast_shapes(c.shape, x.shape, y.shape))]  # type: ignore[union-attr]


def _cast(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    return [(types.from_onnx(attrs["to"]), ins[0].shape)]  # type: ignore[union-attr]


def _cast_like(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    return [(ins[1].dtype, ins[0].shape)]  # type: ignore[union-attr]


def _matmul(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    a, b = ins[0].shape, ins[1].shape  # type: ignore[union-attr]
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        return None
    batch = broadcast_shapes(a[:-2], b[:-2])
    assert batch is not None
    if isinstance(a[-1], int) and isinstance(b[-2], int) and a[-1] != b[-2]:
        raise OpError(f"MatMul: shapes {list(a)} and {list(b)} do not match in the contracted dimension")
    return [(ins[0].dtype, (*batch, a[-2], b[-1]))]  # type: ignore[union-attr]


def _transpose(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x = ins[0]
    if x is None or x.shape is None:
        return None
    shape = x.shape
    perm = attrs.get("perm")
    if perm is None:
        return [(x.dtype, shape[::-1])]
    if len(perm) != len(shape):
        return None  # let ONNX's inference report it
    try:
        return [(x.dtype, tuple([shape[p] for p in perm]))]
    except IndexError:
        return None


def _axes(ins: list[Value | None]) -> list[int] | None:
    if len(ins) < 2 or ins[1] is None or ins[1].const_value is None:
        return None
    axes = _sym(ins[1])
    return None if axes is None else list(axes)  # type: ignore[arg-type]


def _unsqueeze(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x, axes = ins[0], _axes(ins)
    if x is None or x.shape is None or axes is None:
        return None
    rank = len(x.shape) + len(axes)
    axes = sorted(a % rank for a in axes)
    dims = list(x.shape)
    for a in axes:
        dims.insert(a, 1)
    return [(x.dtype, tuple(dims))]


def _squeeze(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x = ins[0]
    if x is None or x.shape is None:
        return None
    axes = _axes(ins)
    if axes is None:
        if len(ins) > 1 and ins[1] is not None or not x.is_static:
            return None
        return [(x.dtype, tuple(d for d in x.shape if d != 1))]
    keep = {a % len(x.shape) for a in axes} if x.shape else set()
    return [(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in keep))]


def _shape(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x = ins[0]
    if x is None or x.shape is None:
        return None
    # Shape's start and end clamp like a Python slice
    return [(types.INT64, (len(x.shape[attrs.get("start") : attrs.get("end")]),))]


def _concat(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    shapes = [v.shape for v in ins if v is not None]
    if not shapes or None in shapes:
        return None
    first = shapes[0]
    rank = len(first)  # type: ignore[arg-type]
    axis = attrs["axis"]
    if not -rank <= axis < rank or any(len(s) != rank for s in shapes):  # type: ignore[arg-type]
        return None  # let ONNX's inference report it
    axis %= rank
    total: Dim = 0
    for s in shapes:
        d = s[axis]  # type: ignore[index]
        total = total + d if type(total) is int and type(d) is int else None
    out = list(first)  # type: ignore[arg-type]
    if rank > 1 and any(s != first for s in shapes):  # the other dims agree; a known size holds for all
        out = [next((d for d in dims if type(d) is int), dims[0]) if len(set(dims)) > 1 else dims[0] for dims in zip(*shapes)]
    out[axis] = total
    return [(ins[0].dtype, tuple(out))]  # type: ignore[union-attr]


def _sym(v: Value | None) -> tuple[Dim, ...] | None:
    """The elements of a small 1-D (or scalar) INT64 value as dims: from its payload when it
    is a constant, else from what tracing knows of it (`sym_value`)."""
    if v is None:
        return None
    sym = v.sym_value
    if sym is not None:
        return sym
    c = v.const_value
    if c is None or c.dtype != np.int64 or c.ndim > 1 or c.size > 64:
        return None
    sym = v.sym_value = tuple(c.reshape(-1).tolist())  # kept: constants are read many times
    return sym


def _reshape_sym(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x, target = ins[0], _sym(ins[1])
    if x is None or target is None or ins[1].shape is None or len(ins[1].shape) != 1:  # type: ignore[union-attr]
        return None
    allowzero = attrs.get("allowzero", 0)
    dims: list[Dim] = []
    for i, d in enumerate(target):
        if d == 0 and not allowzero:
            if x.shape is None or i >= len(x.shape):
                return None
            dims.append(x.shape[i])
        elif type(d) is int and d < -1:
            return None
        else:
            dims.append(d)
    if -1 in dims:
        if dims.count(-1) > 1:
            return None
        known = [d for d in dims if d != -1]
        total, rest = _static_size(x.shape), _static_size(known)
        if total is not None and rest is not None:
            if rest == 0 or total % rest:
                return None
            dims[dims.index(-1)] = total // rest
        else:
            dims[dims.index(-1)] = _inferred_dim(x.shape, known)
    elif (size := _static_size(x.shape)) is not None and (wanted := _static_size(dims)) is not None:
        if size != wanted:
            raise OpError(f"op.Reshape: cannot reshape {list(x.shape or ())} ({size} elements) to {dims}")
    return [(x.dtype, tuple(dims))]


def _static_size(dims: Sequence[Dim] | None) -> int | None:
    """The number of elements of a shape whose dims are all known integers, else None."""
    if dims is None:
        return None
    size = 1
    for d in dims:
        if type(d) is not int:
            return None
        size *= d
    return size


def _inferred_dim(shape: Shape | None, known: list[Dim]) -> Dim:
    """The dim -1 stands for in a Reshape of `shape` to `known` + [-1]: an int when the symbolic
    dims on both sides cancel out, a symbolic dim when exactly one is left over and the ints
    cancel, else unknown. (["n", 6] to [-1, 2, 3] gives "n".)"""
    if shape is None or None in shape or None in known:
        return None
    left = [d for d in shape if type(d) is str]
    for d in known:
        if type(d) is str:
            if d not in left:
                return None
            left.remove(d)
    total = int(np.prod([d for d in shape if type(d) is int], dtype=np.int64))
    rest = int(np.prod([d for d in known if type(d) is int], dtype=np.int64))
    if rest == 0 or total % rest:
        return None
    if not left:
        return total // rest
    if len(left) == 1 and total == rest:
        return left[0]
    return None


def _gather(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    data, indices = ins[0], ins[1]
    if data is None or indices is None or data.shape is None or indices.shape is None or not data.shape:
        return None
    axis = attrs.get("axis", 0)
    rank = len(data.shape)
    if not -rank <= axis < rank:
        return None
    axis %= rank
    return [(data.dtype, (*data.shape[:axis], *indices.shape, *data.shape[axis + 1 :]))]


_BIG = 2**62


def _slice_params(ins: list[Value | None], rank: int) -> list[tuple[int, int, int, int]] | None:
    """(axis, start, end, step) per sliced axis when starts, ends, axes and steps are constants."""
    starts, ends = _sym(ins[1]), _sym(ins[2])
    if starts is None or ends is None:
        return None
    n = len(starts)
    axes = _sym(ins[3]) if len(ins) > 3 and ins[3] is not None else range(n)
    steps = _sym(ins[4]) if len(ins) > 4 and ins[4] is not None else (1,) * n
    if axes is None or steps is None or not len(axes) == n == len(ends) == len(steps):
        return None
    params = []
    for a, b, e, st in zip(axes, starts, ends, steps):
        if type(a) is not int or type(b) is not int or type(e) is not int or type(st) is not int or st == 0:
            return None
        if not -rank <= a < rank:
            return None
        params.append((a % rank, b, e, st))
    if n > 1 and len({p[0] for p in params}) != n:
        return None
    return params


def _slice(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x = ins[0]
    if x is None or x.shape is None or len(ins) < 3:
        return None
    params = _slice_params(ins, len(x.shape))
    if params is None:
        return None
    dims = list(x.shape)
    for axis, start, end, step in params:
        d = dims[axis]
        if type(d) is int:
            dims[axis] = len(range(d)[slice(start, end, step)])
        elif start == 0 and step == 1 and end >= _BIG:
            pass  # the whole dim
        else:
            dims[axis] = None
    return [(x.dtype, tuple(dims))]


def _normalized(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    """A normalization's first output: X's dtype and shape (a rule for one-output nodes; the
    builder asks ONNX when the node has more outputs)."""
    x = ins[0]
    return [(x.dtype, x.shape)]  # type: ignore[union-attr]


def _expand(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x, target = ins[0], _sym(ins[1])
    if x is None or target is None or x.shape is None:
        return None
    # a 1 in the target keeps the input's dim; a symbolic target dim may be 1 too
    dims: list[Dim] = []
    rank = max(len(x.shape), len(target))
    xs = (1,) * (rank - len(x.shape)) + tuple(x.shape)
    ts = (1,) * (rank - len(target)) + tuple(target)
    for a, b in zip(xs, ts):
        if b == 1:
            dims.append(a)
        elif a == 1 or a == b:
            dims.append(b)
        elif type(a) is int and type(b) is int:
            return None  # let ONNX's inference report it
        else:
            dims.append(a if type(a) is int else b if type(b) is int else None)
    return [(x.dtype, tuple(dims))]


def _constant_of_shape(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    target = _sym(ins[0])
    value = attrs.get("value")
    dtype = types.from_numpy(value.dtype) if value is not None else types.FLOAT
    if target is None or ins[0].shape is None or len(ins[0].shape) != 1:  # type: ignore[union-attr]
        return None
    return [(dtype, tuple(target))]


def _reduce(ins: list[Value | None], attrs: dict[str, Any]) -> Result:
    x = ins[0]
    if x is None or x.shape is None:
        return None
    keepdims = attrs.get("keepdims", 1)
    if len(ins) > 1 and ins[1] is not None:
        axes = _sym(ins[1])
        if axes is None or any(type(a) is not int for a in axes):
            return None
    else:
        axes = ()
    rank = len(x.shape)
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return [(x.dtype, x.shape)]
        axes = tuple(range(rank))
    if any(not -rank <= a < rank for a in axes):  # type: ignore[operator]
        return None
    reduced = {a % rank for a in axes}  # type: ignore[operator]
    if keepdims:
        return [(x.dtype, tuple(1 if i in reduced else d for i, d in enumerate(x.shape)))]
    return [(x.dtype, tuple(d for i, d in enumerate(x.shape) if i not in reduced))]


RULES: dict[str, Callable[[list[Value | None], dict[str, Any]], Result]] = {}
for _name in (
    "Abs Neg Relu Sigmoid Tanh Exp Log Sqrt Reciprocal Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh Acosh "
    "Atanh Erf Floor Ceil Round Sign Softplus Softsign Identity Not BitwiseNot Elu Selu LeakyRelu "
    "HardSigmoid HardSwish Mish Gelu Celu ThresholdedRelu Softmax LogSoftmax Hardmax CumSum Trilu"
).split():
    RULES[_name] = _unary
for _name in "Add Sub Mul Div Pow Mod And Or Xor BitwiseAnd BitwiseOr BitwiseXor BitShift Max Min Sum Mean".split():
    RULES[_name] = _binary
for _name in "Equal Less Greater LessOrEqual GreaterOrEqual".split():
    RULES[_name] = _compare
for _name in "ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSumExp ReduceSumSquare".split():
    RULES[_name] = _reduce
RULES["IsNaN"] = RULES["IsInf"] = lambda ins, attrs: [(types.BOOL, ins[0].shape)]  # type: ignore[union-attr]
RULES.update(
    Where=_where, Cast=_cast, CastLike=_cast_like, MatMul=_matmul, Reshape=_reshape_sym, Transpose=_transpose,
    Unsqueeze=_unsqueeze, Squeeze=_squeeze, Shape=_shape, Concat=_concat, Gather=_gather, Slice=_slice,
    Expand=_expand, ConstantOfShape=_constant_of_shape, LayerNormalization=_normalized, RMSNormalization=_normalized,
    BatchNormalization=_normalized, GroupNormalization=_normalized,
)  # fmt: skip


# -- what tracing knows of the elements of shape tensors ---------------------------------------
SymResult = tuple[Dim, ...] | None


def _sym_shape(ins: list[Value | None], attrs: dict[str, Any]) -> SymResult:
    x = ins[0]
    if x is None or x.shape is None:
        return None
    return x.shape[attrs.get("start") : attrs.get("end")]


def _sym_slice(ins: list[Value | None], attrs: dict[str, Any]) -> SymResult:
    data = _sym(ins[0])
    if data is None or len(ins) < 3 or ins[0].shape is None or len(ins[0].shape) != 1:  # type: ignore[union-attr]
        return None
    params = _slice_params(ins, 1)
    if params is None or not params:
        return None
    ((_, start, end, step),) = params
    return tuple(data[slice(start, end, step)])


def _sym_gather(ins: list[Value | None], attrs: dict[str, Any]) -> SymResult:
    data, indices = _sym(ins[0]), ins[1]
    if data is None or indices is None or indices.const_value is None or attrs.get("axis", 0) not in (0, -1):
        return None
    idx = indices.const_value
    if idx.ndim > 1 or not all(-len(data) <= int(i) < len(data) for i in idx.reshape(-1)):
        return None
    return tuple(data[int(i)] for i in idx.reshape(-1))


def _sym_concat(ins: list[Value | None], attrs: dict[str, Any]) -> SymResult:
    out: list[Dim] = []
    for v in ins:
        part = _sym(v)
        if part is None:
            return None
        out.extend(part)
    return tuple(out)


def _sym_same(ins: list[Value | None], attrs: dict[str, Any]) -> SymResult:
    x = ins[0]
    return None if x is None or x.dtype is not types.INT64 else x.sym_value


def _sym_cast(ins: list[Value | None], attrs: dict[str, Any]) -> SymResult:
    return ins[0].sym_value if attrs.get("to") == types.INT64.onnx else None  # type: ignore[union-attr]


def _sym_arith(ins: list[Value | None], attrs: dict[str, Any], fn: Callable[[int, int], int]) -> SymResult:
    a, b = _sym(ins[0]), _sym(ins[1])
    if a is None or b is None or ins[0].shape is None or ins[1].shape is None:  # type: ignore[union-attr]
        return None
    if len(a) != len(b):
        if len(b) == 1 and len(ins[1].shape) <= 1:  # type: ignore[union-attr]
            b = b * len(a)
        elif len(a) == 1 and len(ins[0].shape) <= 1:  # type: ignore[union-attr]
            a = a * len(b)
        else:
            return None
    return tuple(fn(x, y) if type(x) is int and type(y) is int else None for x, y in zip(a, b))


SYM_RULES: dict[str, Callable[[list[Value | None], dict[str, Any]], SymResult]] = {
    "Shape": _sym_shape,
    "Slice": _sym_slice,
    "Gather": _sym_gather,
    "Concat": _sym_concat,
    "Identity": _sym_same,
    "Squeeze": _sym_same,
    "Unsqueeze": _sym_same,
    "Reshape": _sym_same,
    "Cast": _sym_cast,
    "Add": lambda ins, attrs: _sym_arith(ins, attrs, lambda x, y: x + y),
    "Sub": lambda ins, attrs: _sym_arith(ins, attrs, lambda x, y: x - y),
    "Mul": lambda ins, attrs: _sym_arith(ins, attrs, lambda x, y: x * y),
}
