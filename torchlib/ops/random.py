"""Random sampling: rand, randn, randint and their _like forms, bernoulli, normal, uniform,
exponential, multinomial.

onnxruntime 1.31 has no kernel for the ONNX random operators at opset 22 and later
(RandomUniform(Like)-22, RandomNormal(Like)-22, Bernoulli-22, Multinomial-22 all fail with
NOT_IMPLEMENTED), so at the default opset 23 they cannot run. Dropout-22 in training mode does
run, and its mask is a tensor of independent fair coin flips. `_uniform` builds uniform samples
from it: k coin flips per element weighted by 2^-1 ... 2^-k give a uniform value on the grid
m * 2^-k in [0, 1), with k the precision of the output dtype (float16 11 bits, bfloat16 8,
float32 24, float64 53), so every sample is exactly representable and never rounds up to 1.
Normal samples use Box-Muller, integers floor a float64 uniform. The samples follow torch's
distributions, not its random stream: results are compared by shape, dtype and statistics.

Measured limits of onnxruntime's Dropout mask (1.31, CPU): element 0 is always kept (so the
first coin is dropped here), and successive runs are not independent: over 200 runs of one
200,000-element mask, 266 positions were kept every time. Samples within one run follow the
distributions; samples of different runs are correlated. Models that need independent noise
on every run should take it as an input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal, TTensor
from graph_builder.types import BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, INT64, DType
from torchlib.ops._helpers import as_shape, n_outputs
from torchlib.ops._kernels import like
from torchlib.promotion import DEFAULT_FLOAT
from torchlib.registry import aten_op

Size = Sequence[int | Value]

_BITS = {FLOAT16: 11, BFLOAT16: 8, FLOAT: 24, DOUBLE: 53}


def _uniform(shape: Any, dtype: DType) -> Value:
    """Uniform samples in [0, 1) of `shape` (INT64 1-D Value or int list) in a floating dtype."""
    if dtype not in _BITS:
        raise TypeError(f"uniform sampling is defined for floating dtypes, got {dtype}")
    k = _BITS[dtype]
    wide = DOUBLE if k > 24 else FLOAT
    shape = as_shape(shape)
    coins_shape = [*shape, k] if isinstance(shape, list) else op.Concat(shape, [k], axis=0)
    # one coin more than needed, the first dropped: onnxruntime's mask always keeps element 0
    if isinstance(coins_shape, list) and all(isinstance(d, int) for d in coins_shape):
        n: Any = [math.prod(coins_shape) + 1]
    else:
        n = op.Add(op.ReduceProd(op.Cast(coins_shape, to=INT64.onnx), keepdims=1), np.array([1], np.int64))
    ones = op.ConstantOfShape(n, value=np.array([1.0], dtype=np.float32))
    _, coins = n_outputs(op.Dropout(ones, 0.5, True, _outputs=2), 2)
    coins = op.Slice(coins, [1], [np.iinfo(np.int64).max], [0])
    weights = op.Constant(value=np.array([2.0**-i for i in range(1, k + 1)], dtype=wide.numpy).reshape(k, 1))
    flat = op.MatMul(op.Reshape(op.Cast(coins, to=wide.onnx), [-1, k]), weights)  # 2-D x 2-D: onnxruntime fails on empty (0, k) x (k,)
    samples = op.Reshape(flat, shape, allowzero=1)
    return samples if wide is dtype else op.Cast(samples, to=dtype.onnx)


def _normal(shape: Any, dtype: DType) -> Value:
    """Standard normal samples (Box-Muller) of `shape` in a floating dtype."""
    wide = DOUBLE if dtype is DOUBLE else FLOAT
    u1 = op.Sub(1.0, _uniform(shape, wide))  # (0, 1]
    u2 = _uniform(shape, wide)
    z = op.Mul(op.Sqrt(op.Mul(op.Log(u1), -2.0)), op.Cos(op.Mul(u2, 2.0 * math.pi)))
    return z if wide is dtype else op.Cast(z, to=dtype.onnx)


def _floating_dtype(name: str, dtype: DType) -> None:
    if dtype not in _BITS:
        raise TypeError(f"aten::{name} is defined for floating dtypes only (torch raises too), got {dtype}")


@aten_op("aten::rand")
def aten_rand(
    size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None,
) -> TFloat:  # fmt: skip
    """rand(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    dtype = dtype or DEFAULT_FLOAT
    _floating_dtype("rand", dtype)
    return _uniform(as_shape(size), dtype)


@aten_op("aten::randn")
def aten_randn(
    size: Size, *, dtype: DType | None = None, layout: Any = None, device: Any = None, pin_memory: bool | None = None,
) -> TFloat:  # fmt: skip
    """randn(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    dtype = dtype or DEFAULT_FLOAT
    _floating_dtype("randn", dtype)
    return _normal(as_shape(size), dtype)


@aten_op("aten::rand_like")
def aten_rand_like(
    self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TFloat:  # fmt: skip
    """rand_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    dtype = dtype or self.known_dtype
    _floating_dtype("rand_like", dtype)
    return _uniform(op.Shape(self), dtype)


@aten_op("aten::randn_like")
def aten_randn_like(
    self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TFloat:  # fmt: skip
    """randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    dtype = dtype or self.known_dtype
    _floating_dtype("randn_like", dtype)
    return _normal(op.Shape(self), dtype)


def _randint(low: Any, high: Any, shape: Any, dtype: DType) -> Value:
    """Integers uniform in [low, high): floor(low + U * (high - low)) in float64, clamped below
    high against rounding."""
    if not (dtype.is_integer or dtype.is_floating or dtype is BOOL):
        raise TypeError(f"aten::randint: unsupported dtype {dtype}")
    if isinstance(low, int) and isinstance(high, int) and high <= low:
        raise ValueError(f"aten::randint: low ({low}) must be less than high ({high})")
    if dtype is BOOL:  # torch draws bools from bounds within [0, 2) and raises for others
        if not (isinstance(low, int) and isinstance(high, int)):
            raise TypeError("aten::randint into bool needs constant bounds (torch checks them against [0, 2))")
        if low < 0 or high > 2:
            raise ValueError(f"aten::randint: [{low}, {high}) is out of bounds for bool (torch raises too); use bounds within [0, 2)")

    def as_double(v: Any) -> Any:
        return op.Cast(v, to=DOUBLE.onnx) if isinstance(v, Value) else float(v)

    lo, hi = as_double(low), as_double(high)
    u = _uniform(shape, DOUBLE)
    r = op.Floor(op.Add(op.Mul(u, op.Sub(like(hi, u), like(lo, u))), like(lo, u)))
    r = op.Min(r, op.Sub(like(hi, u), 1.0))
    return op.Cast(r, to=dtype.onnx)


@aten_op("aten::randint")
def aten_randint(
    high: int, size: Size, *, dtype: DType | None = INT64, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TReal:  # fmt: skip
    """randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _randint(0, high, as_shape(size), dtype or INT64)


@aten_op("aten::randint.low")
def aten_randint_low(
    low: int, high: int, size: Size, *, dtype: DType | None = INT64, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TReal:  # fmt: skip
    """randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _randint(low, high, as_shape(size), dtype or INT64)


@aten_op("aten::randint_like")
def aten_randint_like(
    self: TTensor, high: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TReal:  # fmt: skip
    """randint_like(Tensor self, SymInt high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _randint(0, high, op.Shape(self), dtype or self.known_dtype)


@aten_op("aten::randint_like.low_dtype")
def aten_randint_like_low_dtype(
    self: TTensor, low: int, high: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TReal:  # fmt: skip
    """randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _randint(low, high, op.Shape(self), dtype or self.known_dtype)


@aten_op("aten::bernoulli")
def aten_bernoulli(self: TFloat, *, generator: Any = None) -> TFloat:
    """bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("bernoulli", self.known_dtype)
    u = _uniform(op.Shape(self), FLOAT if self.dtype is not DOUBLE else DOUBLE)
    return op.Cast(op.Less(u, op.CastLike(self, u)), to=self.known_dtype.onnx)


@aten_op("aten::bernoulli.p")
def aten_bernoulli_p(self: TTensor, p: float, *, generator: Any = None) -> TTensor:
    """bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"aten::bernoulli: p must be in [0, 1], got {p}")
    u = _uniform(op.Shape(self), DOUBLE)
    return op.Cast(op.Less(u, p), to=self.known_dtype.onnx)


@aten_op("aten::normal.Tensor_float")
def aten_normal_tensor_float(mean: TFloat, std: float = 1, *, generator: Any = None) -> TFloat:
    """normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal", mean.known_dtype)
    if std < 0:
        raise ValueError(f"aten::normal: std must be >= 0, got {std}")
    return _scale_shift(_normal(op.Shape(mean), mean.known_dtype), std, mean)


@aten_op("aten::normal.float_Tensor")
def aten_normal_float_tensor(mean: float, std: TFloat, *, generator: Any = None) -> TFloat:
    """normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal", std.known_dtype)
    return _scale_shift(_normal(op.Shape(std), std.known_dtype), std, mean)


@aten_op("aten::normal.Tensor_Tensor")
def aten_normal_tensor_tensor(mean: TFloat, std: TFloat, *, generator: Any = None) -> TFloat:
    """normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal", mean.known_dtype)
    if std.dtype is not mean.dtype:
        raise TypeError(f"aten::normal: mean ({mean.dtype}) and std ({std.dtype}) must have one dtype")
    shape = op.Shape(op.Add(op.ConstantOfShape(op.Shape(mean)), op.ConstantOfShape(op.Shape(std))))  # broadcast
    return _scale_shift(_normal(shape, mean.known_dtype), std, mean)


@aten_op("aten::normal.float_float")
def aten_normal_float_float(
    mean: float, std: float, size: Size, *, generator: Any = None, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TFloat:  # fmt: skip
    """normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    dtype = dtype or DEFAULT_FLOAT
    _floating_dtype("normal", dtype)
    return _scale_shift(_normal(as_shape(size), dtype), std, mean)


@aten_op("aten::normal_functional")
def aten_normal_functional(self: TFloat, mean: float = 0, std: float = 1, *, generator: Any = None) -> TFloat:
    """normal_functional(Tensor self, float mean=0, float std=1, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal_functional", self.known_dtype)
    if std < 0:
        raise ValueError(f"aten::normal_functional: std must be >= 0, got {std}")
    return _scale_shift(_normal(op.Shape(self), self.known_dtype), std, mean)


@aten_op("aten::multinomial")
def aten_multinomial(self: TFloat, num_samples: int, replacement: bool = False, *, generator: Any = None) -> TReal:
    """multinomial(Tensor self, SymInt num_samples, bool replacement=False, *, Generator? generator=None) -> Tensor

    `self` holds non-negative weights (1-D, or one row per distribution). With replacement, each
    draw is the category whose cumulative weight interval [c[k-1], c[k]) holds u·c[-1] (u
    uniform in [0, 1)): a category of weight 0 has an empty interval and is never drawn. Without
    replacement, the num_samples largest of log(w) + Gumbel noise, in decreasing order: exactly
    the law of drawing without replacement one category after another (Plackett-Luce), and a
    weight of 0 (log -inf) is never drawn. torch checks the weights (negative, inf, NaN, all
    zero, fewer non-zero than num_samples without replacement) and raises; a graph cannot, and
    gives some index there."""
    _floating_dtype("multinomial", self.known_dtype)
    if self.rank not in (1, 2):
        raise ValueError(f"aten::multinomial: self must be 1-D or 2-D, got rank {self.rank}")
    if isinstance(num_samples, int) and num_samples <= 0:
        raise ValueError(f"aten::multinomial: num_samples must be positive, got {num_samples}")
    if not replacement and isinstance(num_samples, int) and isinstance(self.known_shape[-1], int) and num_samples > self.known_shape[-1]:
        raise ValueError(f"aten::multinomial: cannot draw {num_samples} samples without replacement from {self.known_shape[-1]} categories")
    weights = op.Cast(self, to=DOUBLE.onnx)
    rows = weights if self.rank == 2 else op.Unsqueeze(weights, [0])
    count = op.Reshape(op.Cast(num_samples, to=INT64.onnx) if isinstance(num_samples, Value) else np.array(num_samples, np.int64), [1])
    if replacement:
        cdf = op.CumSum(rows, np.array(1, np.int64))  # (R, n)
        total = op.Slice(cdf, [-1], [np.iinfo(np.int64).max], [1])  # (R, 1)
        u = _uniform(op.Concat(op.Shape(rows, start=0, end=1), count, axis=0), DOUBLE)  # (R, k)
        x = op.Unsqueeze(op.Mul(u, total), [2])  # (R, k, 1)
        below = op.LessOrEqual(op.Unsqueeze(cdf, [1]), x)  # (R, k, n): intervals ending at or below the draw
        index = op.ReduceSum(op.Cast(below, to=INT64.onnx), [2], keepdims=0)
        last = op.Sub(op.Shape(rows, start=1, end=2), np.array([1], np.int64))
        drawn = op.Min(index, last)  # u·c[-1] < c[-1] in exact arithmetic; guard its rounding
    else:
        gumbel = op.Neg(op.Log(op.Neg(op.Log(op.Sub(1.0, _uniform(op.Shape(rows), DOUBLE))))))  # -log(-log(U)), U in (0, 1]
        keys = op.Add(op.Log(rows), gumbel)
        _, drawn = op.TopK(keys, count, axis=-1, largest=1, sorted=1)
    return drawn if self.rank == 2 else op.Squeeze(drawn, [0])


def _scale_shift(z: Value, scale: Any, shift: Any) -> Value:
    """z * scale + shift, computed in float32 for the half types."""
    if z.dtype in (FLOAT16, BFLOAT16):
        wide = op.Cast(z, to=FLOAT.onnx)
        scale = op.Cast(scale, to=FLOAT.onnx) if isinstance(scale, Value) else scale
        shift = op.Cast(shift, to=FLOAT.onnx) if isinstance(shift, Value) else shift
        return op.Cast(op.Add(op.Mul(wide, scale), shift), to=z.dtype.onnx)
    return op.Add(op.Mul(z, scale), shift)


@aten_op("aten::uniform")
def aten_uniform(self: TFloat, from_: float = 0.0, to: float = 1.0, *, generator: Any = None) -> TFloat:
    """uniform(Tensor self, float from=0., float to=1., *, Generator? generator=None) -> Tensor"""
    _floating_dtype("uniform", self.known_dtype)
    return _scale_shift(_uniform(op.Shape(self), self.known_dtype), to - from_, from_)


@aten_op("aten::exponential")
def aten_exponential(self: TFloat, lambd: float = 1.0, *, generator: Any = None) -> TFloat:
    """exponential(Tensor self, float lambd=1., *, Generator? generator=None) -> Tensor"""
    _floating_dtype("exponential", self.known_dtype)
    wide = DOUBLE if self.dtype is DOUBLE else FLOAT
    u = _uniform(op.Shape(self), wide)
    sample = op.Div(op.Neg(op.Log(op.Sub(like(1.0, u), u))), like(lambd, u))
    return sample if wide is self.dtype else op.Cast(sample, to=self.known_dtype.onnx)


def _randperm(n: Any, dtype: DType | None) -> Value:
    """A random permutation of 0..n-1: the order that sorts n float64 uniform samples."""
    if isinstance(n, int) and n < 0:
        raise ValueError(f"aten::randperm: n must be non-negative, got {n}")
    size = op.Reshape(op.Cast(n, to=INT64.onnx) if isinstance(n, Value) else np.array(n, np.int64), [1])
    _, order = op.TopK(_uniform(size, DOUBLE), size, axis=0, largest=0, sorted=1)
    return order if (dtype or INT64) is INT64 else op.Cast(order, to=(dtype or INT64).onnx)


@aten_op("aten::randperm")
def aten_randperm(
    n: int, *, dtype: DType | None = INT64, layout: Any = None, device: Any = None, pin_memory: bool | None = None
) -> TReal:
    """randperm(SymInt n, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _randperm(n, dtype)


@aten_op("aten::randperm.generator")
def aten_randperm_generator(
    n: int, *, generator: Any, dtype: DType | None = INT64, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None,
) -> TReal:  # fmt: skip
    """randperm.generator(SymInt n, *, Generator? generator, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _randperm(n, dtype)  # ONNX has no generator state: the stream differs from torch's anyway
