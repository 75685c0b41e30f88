"""Formulas that opset 23 has an operator for, as rewrite rules (see pattern.py).

Each rule is exact: it fires only where the fused operator computes the same function, and each
states its preconditions (axes, ranks, broadcasting, dtype, opset) in its check; docs/optimizer.md
lists them. Two shape chains get shorter too: two Unsqueezes in a row become one, and the select
of one part of a packed QKV projection (nn.MultiheadAttention) becomes a Slice.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from graph_builder import types
from graph_builder.ir import Node, Shape, Value
from graph_builder.optimizer.editing import ints, scalar
from graph_builder.optimizer.pattern import Rule, Var

# -- RMSNorm: x * 1/sqrt(mean(x*x, -1) + eps) * w -> RMSNormalization ----------------------------


def _mean_square(op, x, axes):
    return op.ReduceMean(op.Mul(x, x), axes, keepdims=1)


def _rms_reciprocal(op, x, w, eps, axes):
    return op.Mul(w, op.Mul(x, op.Reciprocal(op.Sqrt(op.Add(_mean_square(op, x, axes), eps)))))


def _rms_div(op, x, w, eps, axes):
    return op.Mul(w, op.Div(x, op.Sqrt(op.Add(_mean_square(op, x, axes), eps))))


def _rms_pow(op, x, w, eps, axes):
    mean_square = op.ReduceMean(op.Pow(x, 2.0), axes, keepdims=1)
    return op.Mul(w, op.Mul(x, op.Reciprocal(op.Sqrt(op.Add(mean_square, eps)))))


def _rms_check(x: Value, w: Value, eps: Value, axes: Value) -> bool:
    """float32 x (RMSNormalization computes in float32: a float64 or float16 formula would change
    precision), the mean over the last axis only, a one-element constant eps that does not
    broadcast x to a higher rank, and a 1-D w of the last dim's size."""
    last = ints(axes)
    if x.rank is None or x.rank < 1 or last is None or len(last) != 1 or last[0] not in (-1, x.rank - 1):
        return False
    # scalar(eps) is not None: eps has a const_value.
    if scalar(eps) is None or cast(np.ndarray, eps.const_value).ndim > x.rank or x.dtype is not types.FLOAT or w.dtype is not x.dtype:
        return False
    return w.rank == 1 and x.shape is not None and w.shape == x.shape[-1:]


def _rms_fused(op, x, w, eps, axes):
    return op.RMSNormalization(x, w, axis=-1, epsilon=scalar(eps))


RMS_NORM = [Rule(f"RMSNormalization ({p.__name__[5:]})", p, _rms_fused, _rms_check, opset=23)
            for p in (_rms_reciprocal, _rms_div, _rms_pow)]

# -- GELU: 0.5 * x * (1 + erf(x / sqrt 2)) and the tanh form -> Gelu -----------------------------

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_erf_div(op, x):
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Erf(op.Div(x, _SQRT2)), 1.0))


def _gelu_erf_mul(op, x):
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Erf(op.Mul(x, 1.0 / _SQRT2)), 1.0))


def _gelu_erf_outer_half(op, x):
    return op.Mul(op.Mul(x, op.Add(op.Erf(op.Div(x, _SQRT2)), 1.0)), 0.5)


def _gelu_tanh_cube(op, x):
    inner = op.Mul(op.Add(x, op.Mul(op.Mul(op.Mul(x, x), x), 0.044715)), _SQRT_2_OVER_PI)
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Tanh(inner), 1.0))


def _floating(x: Value) -> bool:
    return x.dtype is not None and x.dtype.is_floating


def _float32(x: Value) -> bool:
    """Gelu for float32 only: onnxruntime runs float16 and float64 Gelu as its function body,
    which has no float64 Erf kernel (and float16 would round other intermediates)."""
    return x.dtype is types.FLOAT


GELU = [Rule(f"Gelu ({p.__name__[6:]})", p, lambda op, x: op.Gelu(x), _float32, opset=20)
        for p in (_gelu_erf_div, _gelu_erf_mul, _gelu_erf_outer_half)]
# torch.pow(x, 3) is x * x * x (as torch's kernel computes it), so the cube is the only tanh form
GELU += [Rule("Gelu tanh (tanh_cube)", _gelu_tanh_cube, lambda op, x: op.Gelu(x, approximate="tanh"), _float32,
              opset=20)]

# -- MatMul + Add -> Gemm, for a 2-D input and a 2-D weight ---------------------------------------


def _matmul_add(op, a, b, c):
    return op.Add(op.MatMul(a, b), c)


def _gemm_check(a: Value, b: Value, c: Value) -> bool:
    """A 2-D input, a constant 2-D weight and a constant bias of shape [n] or [1, n] (Gemm's C
    broadcasts one way only: a bias that would widen the result is left alone)."""
    if a.rank != 2 or b.rank != 2 or b.const_value is None or c.const_value is None or not _floating(a):
        return False
    n = cast(Shape, b.shape)[1]  # b.rank == 2: b has a shape
    c_shape = cast(Shape, c.shape)  # read only where c.rank is 1 or 2: c has a shape
    return c.rank in (1, 2) and c_shape[-1] == n and (c.rank == 1 or c_shape[0] == 1)


GEMM = [Rule("Gemm (MatMul + Add)", _matmul_add, lambda op, a, b, c: op.Gemm(a, b, c), _gemm_check)]


# -- rotary embedding, rotate-half form: x * cos + cat(-x2, x1) * sin -> RotaryEmbedding ----------
#
# RotaryEmbedding takes caches of half the head size, so cos and sin must repeat their first half
# (cos = cat(f, f).cos(), as every rotate-half implementation builds it): checked on constants,
# or seen in the graph as Cos / Sin of Concat(f, f) (dynamic sequence length).


def _rope(op, x, cos, sin, lo_start, lo_end, hi_start, hi_end, axes1, axes2):
    x1 = op.Slice(x, lo_start, lo_end, axes1)
    x2 = op.Slice(x, hi_start, hi_end, axes2)
    rotated = op.Concat(op.Neg(x2), x1, axis=Var("concat_axis"))
    return op.Add(op.Mul(x, cos), op.Mul(rotated, sin))


def _rope_steps(op, x, cos, sin, lo_start, lo_end, hi_start, hi_end, axes1, axes2, steps1, steps2):
    x1 = op.Slice(x, lo_start, lo_end, axes1, steps1)
    x2 = op.Slice(x, hi_start, hi_end, axes2, steps2)
    rotated = op.Concat(op.Neg(x2), x1, axis=Var("concat_axis"))
    return op.Add(op.Mul(x, cos), op.Mul(rotated, sin))


def _same_dim(a: object, b: object) -> bool:
    """Two dims proven equal: the same static size or the same symbolic name."""
    return a is not None and a == b


def _leading_ones_then(v: Value, rank: int) -> Value | None:
    """Follow Unsqueezes from a [sequence, size] value up to `v`: the rank-2 value when every
    Unsqueeze only added leading axes (so `v` broadcasts as [1, ..., sequence, size] against a
    rank-`rank` x), else None (cos laid out [1, sequence, 1, size] for a [batch, sequence, heads,
    size] x rotates along the wrong axis)."""
    chain = []
    while v.producer is not None and v.producer.op_type == "Unsqueeze":
        chain.append(v.producer)
        v = cast(Value, v.producer.inputs[0])  # an Unsqueeze's data input is required
    if v.rank != 2:
        return None
    layout = ["s", "d"]
    for node in reversed(chain):
        axes = ints(node.inputs[1] if len(node.inputs) > 1 else None)
        if axes is None:
            return None
        out_rank = len(layout) + len(axes)
        for a in sorted(a % out_rank for a in axes):
            layout.insert(a, "1")
    return v if layout[-2:] == ["s", "d"] and len(layout) <= rank else None


def _half_of(cache: Value, size: int, seq: object, rank: int) -> np.ndarray | Node | None:
    """cos or sin as a [sequence, size/2] cache: from a constant of shape [1, ..., seq, size]
    whose halves repeat, or the f of Cos/Sin(Concat(f, f)) seen through Unsqueezes that add
    leading axes only, with f of shape [seq, size/2]. `seq` is x's sequence dim: RotaryEmbedding
    reads row i for position i, so a table of another length (one row broadcast over the
    sequence) is not a cache."""
    half = size // 2
    if cache.dtype is None or cache.dtype is not types.FLOAT:
        return None
    if cache.const_value is not None:
        c = cache.const_value
        if c.ndim < 2 or c.ndim > rank or c.shape[-1] != size or any(d != 1 for d in c.shape[:-2]) or c.shape[-2] != seq:
            return None
        c = c.reshape(c.shape[-2], size)
        return c[:, :half] if np.array_equal(c[:, :half], c[:, half:]) else None
    v = _leading_ones_then(cache, rank)
    node = v.producer if v is not None else None
    if node is None or node.op_type not in ("Cos", "Sin"):
        return None
    cat = cast(Value, node.inputs[0]).producer  # Cos/Sin's input is required
    if cat is None or cat.op_type != "Concat" or len(cat.inputs) != 2 or cat.inputs[0] is not cat.inputs[1]:
        return None
    f = cast(Value, cat.inputs[0])  # Concat's inputs are required
    fs = cast(Shape, f.shape)  # read only where f.rank == 2: f has a shape
    if f.rank != 2 or cat.attributes.get("axis") not in (-1, 1) or fs[-1] != half or not _same_dim(fs[0], seq):
        return None
    return node  # the Cos/Sin node: rebuilt on f by the replacement


def _rope_check(x: Value, cos: Value, sin: Value, lo_start: Value, lo_end: Value, hi_start: Value, hi_end: Value,
                axes1: Value, axes2: Value, concat_axis: int, steps1: Value | None = None, steps2: Value | None = None,
                per_batch: bool = False) -> bool:
    """A float32 [batch, heads, sequence, size] x with an even static size, rotated along its last
    axis (halves sliced with step 1, concatenated on the last axis), and caches as _half_of
    requires (rows = x's sequence length, laid out [..., sequence, size])."""
    if x.rank != 4 or x.shape is None or type(x.shape[-1]) is not int or x.shape[-1] % 2 or x.dtype is not types.FLOAT:
        return False
    size = x.shape[-1]
    last = (-1, 3)
    if concat_axis not in last or ints(axes1) not in ([-1], [3]) or ints(axes2) not in ([-1], [3]):
        return False
    if any(s is not None and ints(s) != [1] for s in (steps1, steps2)):
        return False
    if ints(lo_start) != [0] or ints(lo_end) != [size // 2] or ints(hi_start) != [size // 2]:
        return False
    if (ints(hi_end) or [0])[0] < size:
        return False
    return per_batch or all(_half_of(c, size, x.shape[2], x.rank) is not None for c in (cos, sin))


def _rope_batch_check(x: Value, cos: Value, sin: Value, **slices: Any) -> bool:
    """As _rope_check, with per-batch caches (_batch_half_of) instead of one table."""
    if x.rank != 4 or x.shape is None or any(_batch_half_of(c, x) is None for c in (cos, sin)):
        return False
    return _rope_check(x, cos, sin, **slices, per_batch=True)


def _batch_half_of(cache: Value, x: Value) -> tuple[Node, Value, Value | None] | None:
    """(the Cos/Sin node, f, scale or None) when `cache` is a per-batch table laid out [batch, 1,
    sequence, size] for a [batch, heads, sequence, size] x: `Unsqueeze(t, [1])` of a [batch,
    sequence, size] `t = Cos/Sin(Concat(f, f, axis=-1))`, times a one-element constant `scale`
    or not (transformers' rotary embedding: `emb = cat(freqs, freqs)`, `emb.cos() *
    attention_scaling`, one table per batch row from position_ids), with f of shape [batch,
    sequence, size/2] (or [1, sequence, size/2]: one table for every row) and batch and sequence
    the same dims as x's (equal sizes or names)."""
    xs = x.shape
    if xs is None or len(xs) != 4 or not isinstance(xs[-1], int):
        return None
    node = cache.producer
    if node is None or node.op_type != "Unsqueeze" or ints(node.inputs[1] if len(node.inputs) > 1 else None) != [1]:
        return None
    table = node.inputs[0]
    if table is None:
        return None
    scale = None
    producer = table.producer
    if producer is not None and producer.op_type == "Mul":
        numbers = [v for v in producer.inputs if v is not None and v.const_value is not None and v.const_value.size == 1]
        others = [v for v in producer.inputs if v is not None and v not in numbers]
        if len(numbers) != 1 or len(others) != 1 or numbers[0].const_value.ndim > 3 or numbers[0].dtype is not types.FLOAT:  # type: ignore[union-attr]
            return None
        table, scale = others[0], numbers[0]
        producer = table.producer
    if producer is None or producer.op_type not in ("Cos", "Sin") or table.dtype is not types.FLOAT:
        return None
    angle = producer.inputs[0]
    cat = angle.producer if angle is not None else None
    if cat is None or cat.op_type != "Concat" or len(cat.inputs) != 2 or cat.inputs[0] is not cat.inputs[1]:
        return None
    f = cat.inputs[0]
    fs = f.shape if f is not None else None
    if f is None or fs is None or len(fs) != 3 or cat.attributes.get("axis") not in (-1, 2) or fs[-1] != xs[-1] // 2:
        return None
    if not ((fs[0] == 1 or _same_dim(fs[0], xs[0])) and _same_dim(fs[1], xs[2])):
        return None
    return producer, f, scale


def _cache(op, cache: Value, size: int, seq: object, rank: int):
    half = _half_of(cache, size, seq, rank)
    if isinstance(half, np.ndarray):
        return half
    node = cast(Node, half)  # the check (_rope_check) found this cache, so _half_of is not None
    f = node.inputs[0].producer.inputs[0]  # type: ignore[union-attr]  # Cos/Sin(Concat(f, f)), matched by _half_of
    return op.Cos(f) if node.op_type == "Cos" else op.Sin(f)


def _batch_cache(op, cache: Value, x: Value):
    found = _batch_half_of(cache, x)
    if found is None:
        raise AssertionError("the rule's check found the per-batch table")
    node, f, scale = found
    half = op.Cos(f) if node.op_type == "Cos" else op.Sin(f)
    half = half if scale is None else op.Mul(half, scale)
    if f.shape is not None and f.shape[0] == 1 and x.shape is not None and x.shape[0] != 1:  # one table for every
        # row: RotaryEmbedding takes one per row
        half = op.Expand(half, op.Concat(op.Shape(x, start=0, end=1), op.Shape(f, start=1), axis=0))
    return half


def _rope_batch_fused(op, x, cos, sin, **_):
    # caches of [batch, sequence, size/2] and no position_ids: row (b, i) rotates token i of row b
    return op.RotaryEmbedding(x, _batch_cache(op, cos, x), _batch_cache(op, sin, x))


def _rope_fused(op, x, cos, sin, **_):
    size, seq, rank = x.shape[-1], x.shape[2], x.rank
    length = op.Shape(x, start=2, end=3)
    positions = op.Unsqueeze(op.Range(np.array(0, np.int64), op.Squeeze(length, [0]), np.array(1, np.int64)), [0])
    positions = op.Expand(positions, op.Concat(op.Shape(x, start=0, end=1), length, axis=0))
    return op.RotaryEmbedding(x, _cache(op, cos, size, seq, rank), _cache(op, sin, size, seq, rank), positions)


ROTARY = [Rule("RotaryEmbedding (rotate-half)", p, _rope_fused, _rope_check, opset=23) for p in (_rope, _rope_steps)]
ROTARY += [Rule("RotaryEmbedding (rotate-half, per-batch tables)", p, _rope_batch_fused, _rope_batch_check, opset=23)
           for p in (_rope, _rope_steps)]

# -- Unsqueeze(Unsqueeze(x, a), b) -> Unsqueeze(x, a + b) ----------------------------------------


def _unsqueeze_twice(op, x, inner, outer):
    return op.Unsqueeze(op.Unsqueeze(x, inner), outer)


def _merged_axes(rank: int, inner: list[int], outer: list[int]) -> list[int]:
    """The axes of one Unsqueeze doing both: `outer`'s positions in the final rank, and each
    of `inner`'s positions moved past the axes `outer` inserts before it."""
    middle, final = rank + len(inner), rank + len(inner) + len(outer)
    added = sorted(a % final for a in outer)
    kept = [i for i in range(final) if i not in added]  # final position of each middle dim
    return sorted(added + [kept[a % middle] for a in inner])


def _unsqueeze_check(x: Value, inner: Value, outer: Value) -> bool:
    return x.rank is not None and ints(inner) is not None and ints(outer) is not None


def _unsqueeze_merged(op, x, inner, outer):
    return op.Unsqueeze(x, np.array(_merged_axes(x.rank, ints(inner), ints(outer)), np.int64))


UNSQUEEZE = [Rule("Unsqueeze pair", _unsqueeze_twice, _unsqueeze_merged, _unsqueeze_check, opset=13)]

# -- a packed QKV projection split by unflatten / transpose / select -> Slice ---------------------
#
# nn.MultiheadAttention splits its packed in-projection [L, N, 3E] with
# unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)[i]: a transposed copy of the
# whole projection, then a Gather per part. Part i is the last axis' slice [i*E, (i+1)*E).


def _packed_part(op, x, shape, unsqueeze_axes, squeeze_axes, index):
    moved = op.Transpose(op.Unsqueeze(op.Reshape(x, shape, allowzero=Var("allowzero", default=0)), unsqueeze_axes),
                         perm=[3, 1, 2, 0, 4])
    return op.Gather(op.Squeeze(moved, squeeze_axes), index, axis=0)


def _packed_check(x: Value, shape: Value, unsqueeze_axes: Value, squeeze_axes: Value, index: Value, allowzero: int) -> bool:
    target, part = ints(shape), ints(index)
    if x.rank != 3 or x.shape is None or type(x.shape[-1]) is not int or target is None or part is None:
        return False
    if index.rank != 0 or ints(unsqueeze_axes) != [0] or ints(squeeze_axes) not in ([3], [-2]):
        return False
    size = x.shape[-1] // 3
    return len(target) == 4 and target[2:] == [3, size] and x.shape[-1] == 3 * size and -3 <= part[0] < 3 and (
        target[:2] == [0, 0] and not allowzero or all(t == d for t, d in zip(target[:2], x.shape[:2])))


def _packed_slice(op, x, index, **_):
    size, part = x.shape[-1] // 3, ints(index)[0] % 3
    return op.Slice(x, np.array([part * size], np.int64), np.array([(part + 1) * size], np.int64), np.array([-1], np.int64))


PACKED_QKV = [Rule("Slice (packed QKV select)", _packed_part, _packed_slice, _packed_check, opset=13)]
RULES = [*RMS_NORM, *GELU, *GEMM, *ROTARY, *UNSQUEEZE, *PACKED_QKV]
__all__ = ["GELU", "GEMM", "PACKED_QKV", "RMS_NORM", "ROTARY", "RULES", "UNSQUEEZE", "Var"]
