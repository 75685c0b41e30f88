"""Random sampling: rand, randn, randint and their _like forms, bernoulli, normal, uniform,
exponential.

onnxruntime 1.31 has no kernel for the ONNX random operators at opset 22 and later
(RandomUniform(Like)-22, RandomNormal(Like)-22, Bernoulli-22, Multinomial-22 all fail with
NOT_IMPLEMENTED), so at the default opset 23 they cannot run. Dropout-22 in training mode does
run, and its mask is a tensor of independent fair coin flips. `_uniform` builds uniform samples
from it: k coin flips per element weighted by 2^-1 ... 2^-k give a uniform value on the grid
m * 2^-k in [0, 1), with k the precision of the output dtype (float16 11 bits, bfloat16 8,
float32 24, float64 53), so every sample is exactly representable and never rounds up to 1.
Normal samples use Box-Muller, integers floor a float64 uniform. The samples follow torch's
distributions, not its random stream: results are compared by shape, dtype and statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, INT64, DType, TFloat, TReal, TTensor
from torchlib.ops._helpers import as_shape
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
    ones = op.ConstantOfShape(coins_shape, value=np.array([1.0], dtype=np.float32))
    _, coins = op.Dropout(ones, 0.5, True, _outputs=2)
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
    dtype = dtype or self.dtype
    _floating_dtype("rand_like", dtype)
    return _uniform(op.Shape(self), dtype)


@aten_op("aten::randn_like")
def aten_randn_like(
    self: TTensor, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TFloat:  # fmt: skip
    """randn_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    dtype = dtype or self.dtype
    _floating_dtype("randn_like", dtype)
    return _normal(op.Shape(self), dtype)


def _randint(low: Any, high: Any, shape: Any, dtype: DType) -> Value:
    """Integers uniform in [low, high): floor(low + U * (high - low)) in float64, clamped below
    high against rounding."""
    if dtype is BOOL or not (dtype.is_integer or dtype.is_floating):
        raise TypeError(f"aten::randint: unsupported dtype {dtype}")
    if isinstance(low, int) and isinstance(high, int) and high <= low:
        raise ValueError(f"aten::randint: low ({low}) must be less than high ({high})")

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
    return _randint(0, high, op.Shape(self), dtype or self.dtype)


@aten_op("aten::randint_like.low_dtype")
def aten_randint_like_low_dtype(
    self: TTensor, low: int, high: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
    pin_memory: bool | None = None, memory_format: Any = None,
) -> TReal:  # fmt: skip
    """randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"""
    return _randint(low, high, op.Shape(self), dtype or self.dtype)


@aten_op("aten::bernoulli")
def aten_bernoulli(self: TFloat, *, generator: Any = None) -> TFloat:
    """bernoulli(Tensor self, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("bernoulli", self.dtype)
    u = _uniform(op.Shape(self), FLOAT if self.dtype is not DOUBLE else DOUBLE)
    return op.Cast(op.Less(u, op.CastLike(self, u)), to=self.dtype.onnx)


@aten_op("aten::bernoulli.p")
def aten_bernoulli_p(self: TTensor, p: float, *, generator: Any = None) -> TTensor:
    """bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor"""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"aten::bernoulli: p must be in [0, 1], got {p}")
    u = _uniform(op.Shape(self), DOUBLE)
    return op.Cast(op.Less(u, p), to=self.dtype.onnx)


@aten_op("aten::normal.Tensor_float")
def aten_normal_tensor_float(mean: TFloat, std: float = 1, *, generator: Any = None) -> TFloat:
    """normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal", mean.dtype)
    if std < 0:
        raise ValueError(f"aten::normal: std must be >= 0, got {std}")
    return _scale_shift(_normal(op.Shape(mean), mean.dtype), std, mean)


@aten_op("aten::normal.float_Tensor")
def aten_normal_float_tensor(mean: float, std: TFloat, *, generator: Any = None) -> TFloat:
    """normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal", std.dtype)
    return _scale_shift(_normal(op.Shape(std), std.dtype), std, mean)


@aten_op("aten::normal.Tensor_Tensor")
def aten_normal_tensor_tensor(mean: TFloat, std: TFloat, *, generator: Any = None) -> TFloat:
    """normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None) -> Tensor"""
    _floating_dtype("normal", mean.dtype)
    if std.dtype is not mean.dtype:
        raise TypeError(f"aten::normal: mean ({mean.dtype}) and std ({std.dtype}) must have one dtype")
    shape = op.Shape(op.Add(op.ConstantOfShape(op.Shape(mean)), op.ConstantOfShape(op.Shape(std))))  # broadcast
    return _scale_shift(_normal(shape, mean.dtype), std, mean)


@aten_op("aten::normal.float_float")
def aten_normal_float_float(
    mean: float, std: float, size: Size, *, generator: Any = None, dtype: DType | None = None, layout: Any = None,
    device: Any = None, pin_memory: bool | None = None,
) -> TFloat:  # fmt: skip
    """normal.float_float(float mean, float std, SymInt[] size, *, Generator? generator=None, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    dtype = dtype or DEFAULT_FLOAT
    _floating_dtype("normal", dtype)
    return _scale_shift(_normal(as_shape(size), dtype), std, mean)


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
    _floating_dtype("uniform", self.dtype)
    return _scale_shift(_uniform(op.Shape(self), self.dtype), to - from_, from_)


@aten_op("aten::exponential")
def aten_exponential(self: TFloat, lambd: float = 1.0, *, generator: Any = None) -> TFloat:
    """exponential(Tensor self, float lambd=1., *, Generator? generator=None) -> Tensor"""
    _floating_dtype("exponential", self.dtype)
    wide = DOUBLE if self.dtype is DOUBLE else FLOAT
    u = _uniform(op.Shape(self), wide)
    sample = op.Div(op.Neg(op.Log(op.Sub(like(1.0, u), u))), like(lambd, u))
    return sample if wide is self.dtype else op.Cast(sample, to=self.dtype.onnx)


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
