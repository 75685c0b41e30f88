"""Activations: relu, gelu, silu, sigmoid, hard*, elu family, softplus, mish, glu, softmax and
log_softmax, clamp.

The fused ONNX op (Gelu, HardSwish, Elu, Softplus, Mish, ...) is used where onnxruntime has a
kernel for the dtype (most have float and float16 only); double inputs use the same formula in
double, bfloat16 inputs compute in float32.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import torch

from graph_builder import current_exact_nan, current_opset, op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TReal
from graph_builder.types import BFLOAT16, BOOL, DOUBLE, FLOAT, FLOAT16, DType
from torchlib.ops import _cephes as cephes
from torchlib.ops._helpers import normalize_dim
from torchlib.ops._kernels import FLOAT32_16, FLOATS, MIN_MAX, OPMATH, like, round_scalar, run_supported
from torchlib.ops._unary import unary
from torchlib.ops.elementwise import expm1, log1p
from torchlib.promotion import DEFAULT, INT_TO_FLOAT, elementwise
from torchlib.registry import aten_op

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _floating(name: str, x: Value) -> None:
    if not x.known_dtype.is_floating:
        raise TypeError(f"aten::{name} is defined for floating tensors only (torch raises too), got {x.dtype}")


def _fused_or_formula(x: Value, fused: Any, formula: Any) -> Value:
    """`fused(x)` where onnxruntime has the fused op's kernel (float, float16; bfloat16 through
    float), else `formula(x)` in x's own dtype (double)."""
    if x.dtype is DOUBLE:
        return formula(x)
    return run_supported(fused, FLOAT32_16, x)


def _relu(x: Value) -> Value:
    if x.dtype is BOOL:
        raise TypeError("aten::relu is not defined for bool tensors (torch raises too)")
    if x.known_dtype.is_floating:
        return run_supported(op.Relu, FLOATS, x)
    return run_supported(lambda y: op.Max(y, 0), MIN_MAX, x)


def _sigmoid(x: Value) -> Value:
    return run_supported(op.Sigmoid, FLOATS, x)


def _silu(x: Value) -> Value:
    _floating("silu", x)
    return run_supported(lambda y: op.Mul(y, op.Sigmoid(y)), OPMATH, x)


def _hardsigmoid_formula(x: Value) -> Value:
    return op.Div(op.Clip(op.Add(x, 3.0), 0.0, 6.0), 6.0)


def _hardsigmoid(x: Value) -> Value:
    _floating("hardsigmoid", x)
    return _fused_or_formula(x, lambda y: op.HardSigmoid(y, alpha=1.0 / 6.0, beta=0.5), _hardsigmoid_formula)


def _hardswish(x: Value) -> Value:
    """torch's kernel: x * min(max(x + 3, 0), 6) / 6 in opmath (float32 for the half types), the
    product first, so x > max/6 overflows to inf in float32/float64 as in torch (onnxruntime's
    fused HardSwish divides first and stays finite there).

    With `exact_nan=False`: ONNX HardSwish (in float32; double keeps the formula, onnxruntime
    has no double kernel), which onnxruntime fuses into the Conv before it. It gives x where
    torch overflows to inf (x > 5.67e37 in float32) and rounds x / 6 + 0.5 where torch rounds
    (x + 3) / 6 (the last ulp, docs/nan_latency.md)."""
    _floating("hardswish", x)
    if not current_exact_nan() and x.dtype is not DOUBLE:
        return run_supported(op.HardSwish, frozenset({FLOAT}), x)
    return run_supported(lambda y: op.Div(op.Mul(y, op.Clip(op.Add(y, 3.0), 0.0, 6.0)), 6.0), OPMATH, x)


def _selu(x: Value) -> Value:
    _floating("selu", x)
    return _fused_or_formula(x, op.Selu, lambda y: _elu_formula(y, _SELU_ALPHA, _SELU_SCALE, 1.0))


def _mish(x: Value) -> Value:
    _floating("mish", x)
    return _fused_or_formula(x, op.Mish, lambda y: op.Mul(y, op.Tanh(log1p(op.Exp(y)))))


def _log_sigmoid(x: Value) -> Value:
    """torch's min(x, 0) - log1p(exp(-|x|)): exact for large |x| of either sign."""
    return op.Sub(op.Min(x, 0.0), log1p(op.Exp(op.Neg(op.Abs(x)))))


aten_relu = unary("relu", _relu, DEFAULT)
aten_sigmoid = unary("sigmoid", _sigmoid, INT_TO_FLOAT)
aten_silu = unary("silu", _silu, DEFAULT)
aten_hardsigmoid = unary("hardsigmoid", _hardsigmoid, DEFAULT)
aten_hardswish = unary("hardswish", _hardswish, DEFAULT)
aten_selu = unary("selu", _selu, DEFAULT)
aten_mish = unary("mish", _mish, DEFAULT)


@aten_op("aten::log_sigmoid")
@elementwise("self")
def aten_log_sigmoid(self: TFloat) -> TFloat:
    """log_sigmoid(Tensor self) -> Tensor"""
    _floating("log_sigmoid", self)
    return run_supported(_log_sigmoid, OPMATH, self)


@aten_op("aten::log_sigmoid_forward")
def aten_log_sigmoid_forward(self: TFloat) -> tuple[TFloat, TFloat]:
    """log_sigmoid_forward(Tensor self) -> (Tensor output, Tensor buffer)"""
    _floating("log_sigmoid_forward", self)
    output = run_supported(_log_sigmoid, OPMATH, self)
    buffer = run_supported(lambda x: op.Exp(op.Neg(op.Abs(x))), OPMATH, self)  # torch's CPU buffer
    return output, buffer


def _int_bound(bound: Any, dtype: DType) -> Any:
    """A Python bound as torch converts it for an integer tensor: truncated, and wrapped into the
    dtype's range (-1 is 255 for uint8)."""
    if bound is None or isinstance(bound, Value) or dtype.is_floating:
        return bound
    return int(np.asarray(int(bound)).astype(dtype.numpy))


def _clip(x: Value, low: Any, high: Any) -> Value:
    """Clip with Python-scalar bounds (None for none)."""
    if x.dtype is BOOL:
        raise TypeError("aten::clamp/hardtanh are not defined for bool tensors (torch raises too)")
    low, high = _int_bound(low, x.known_dtype), _int_bound(high, x.known_dtype)
    if x.known_dtype.is_floating:
        if any(isinstance(b, float) and math.isnan(b) for b in (low, high)):
            return op.Expand(op.CastLike(np.nan, x), op.Shape(x))  # torch: a NaN bound gives NaN everywhere
        # onnxruntime's Clip clamps to the dtype's finite range where a bound is missing: inf
        # would become the largest finite value
        low = -math.inf if low is None else low
        high = math.inf if high is None else high
    return run_supported(lambda y: op.Clip(y, low, high), MIN_MAX, x)


@aten_op("aten::relu6")
@elementwise("self")
def aten_relu6(self: TReal) -> TReal:
    """relu6(Tensor self) -> Tensor"""
    return _clip(self, 0, 6)


@aten_op("aten::hardtanh")
@elementwise("self")
def aten_hardtanh(self: TReal, min_val: float = -1, max_val: float = 1) -> TReal:
    """hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"""
    if self.known_dtype.kind == "u" and int(min_val) < 0:
        raise ValueError("aten::hardtanh: cannot do hardtanh on an unsigned type with negative limits")
    return _clip(self, min_val, max_val)


@aten_op("aten::gelu")
@elementwise("self")
def aten_gelu(self: TFloat, *, approximate: str = "none") -> TFloat:
    """gelu(Tensor self, *, str approximate='none') -> Tensor"""
    _floating("gelu", self)
    if approximate not in ("none", "tanh"):
        raise ValueError(f"aten::gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    # torch's formula where ONNX Gelu is missing (before opset 20) or has no kernel (double,
    # whose erf is then Cephes' in double)
    if self.dtype is DOUBLE or current_opset() < 20:
        if approximate == "tanh":
            # torch's kBeta = sqrt(2) * (2 / sqrt(pi)) * 0.5, rounded as it writes it
            inner = op.Mul(op.Add(self, op.Mul(op.Mul(op.Mul(self, self), self), 0.044715)), math.sqrt(2) * (2 / math.sqrt(math.pi)) * 0.5)
            return op.Mul(op.Mul(self, 0.5), op.Add(op.Tanh(inner), 1.0))
        erf = cephes.erf if self.dtype is DOUBLE else op.Erf
        return op.Mul(op.Mul(self, 0.5), op.Add(erf(op.Mul(self, math.sqrt(0.5))), 1.0))
    return run_supported(lambda x: op.Gelu(x, approximate=approximate), FLOAT32_16, self)


# Shrink and threshold: torch's kernels use their Scalar differently (measured, torch 2.13):
# hardshrink rounds lambd to the tensor's dtype; softshrink and threshold take it unrounded in
# the kernel's opmath type (float32 for float16 / bfloat16 / float32). bfloat16 0.30078125 is
# hardshrink(., 0.3) 0, softshrink(., 0.3) 0.00078, threshold(., 0.3, v) itself.
@aten_op("aten::hardshrink")
def aten_hardshrink(self: TFloat, lambd: float = 0.5) -> TFloat:
    """hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor"""
    _floating("hardshrink", self)
    bound = round_scalar(lambd, self.known_dtype)

    def fn(x: Value) -> Value:
        inside = op.And(op.GreaterOrEqual(x, -bound), op.LessOrEqual(x, bound))
        return op.Where(inside, like(0, x), x)

    return run_supported(fn, OPMATH, self)


@functools.cache
def _softshrink_rounds_lambd() -> bool:
    """Whether the installed torch's softshrink rounds lambd to a float16 / bfloat16 input's
    dtype before comparing and subtracting in float32 (torch 2.14), or takes it unrounded in
    float32 (up to 2.13): softshrink(bfloat16 0.30078125, 0.3) is 0 in 2.14, 0.00078 before.
    A probe of torch's kernel."""
    x = torch.tensor([0.30078125], dtype=torch.bfloat16)
    return float(torch.ops.aten.softshrink.default(x, 0.3)[0]) == 0.0


@aten_op("aten::softshrink")
def aten_softshrink(self: TFloat, lambd: float = 0.5) -> TFloat:
    """softshrink(Tensor self, Scalar lambd=0.5) -> Tensor"""
    _floating("softshrink", self)
    if self.dtype in (FLOAT16, BFLOAT16) and _softshrink_rounds_lambd():
        lambd = round_scalar(lambd, self.known_dtype)

    def fn(x: Value) -> Value:
        l = like(lambd, x)
        # x * 0 inside: the sign of zero and NaN as torch
        inner = op.Where(op.Less(x, op.Neg(l)), op.Add(x, l), op.Mul(x, like(0, x)))
        return op.Where(op.Greater(x, l), op.Sub(x, l), inner)

    return run_supported(fn, OPMATH, self)


@aten_op("aten::threshold")
def aten_threshold(self: TReal, threshold: float, value: float) -> TReal:
    """threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor"""
    if self.dtype is BOOL:
        raise TypeError("aten::threshold is not defined for bool tensors (torch raises too)")
    if not self.known_dtype.is_floating:  # the scalars converted to the integer type (truncated)
        threshold, value = int(threshold), int(value)
        return run_supported(lambda x: op.Where(op.LessOrEqual(x, like(threshold, x)), like(value, x), x), MIN_MAX, self)
    filled = round_scalar(value, self.known_dtype)  # stored in the tensor's dtype
    return run_supported(lambda x: op.Where(op.LessOrEqual(x, like(threshold, x)), like(filled, x), x), OPMATH, self)


@aten_op("aten::leaky_relu")
@elementwise("self")
def aten_leaky_relu(self: TFloat, negative_slope: float = 0.01) -> TFloat:
    """leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor"""
    _floating("leaky_relu", self)
    return _fused_or_formula(
        self,
        lambda x: op.LeakyRelu(x, alpha=negative_slope),
        lambda x: op.Where(op.Greater(x, 0.0), x, op.Mul(x, negative_slope)),
    )


def _elu_formula(x: Value, alpha: float, scale: float, input_scale: float) -> Value:
    """torch: x > 0 ? scale * x : scale * alpha * (exp(x * input_scale) - 1)."""
    negative = op.Mul(expm1(op.Mul(x, input_scale)), alpha * scale)
    return op.Where(op.Greater(x, 0.0), op.Mul(x, scale), negative)


@aten_op("aten::elu")
@elementwise("self")
def aten_elu(self: TFloat, alpha: float = 1, scale: float = 1, input_scale: float = 1) -> TFloat:
    """elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"""
    _floating("elu", self)
    if scale == 1 and input_scale == 1:
        return _fused_or_formula(
            self, lambda x: op.Elu(x, alpha=alpha), lambda x: _elu_formula(x, alpha, 1.0, 1.0)
        )
    return run_supported(lambda x: _elu_formula(x, alpha, scale, input_scale), OPMATH, self)


@aten_op("aten::celu")
@elementwise("self")
def aten_celu(self: TFloat, alpha: float = 1.0) -> TFloat:
    """celu(Tensor self, Scalar alpha=1.0) -> Tensor"""
    _floating("celu", self)
    if self.dtype is DOUBLE:  # max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
        return op.Add(op.Max(self, 0.0), op.Min(op.Mul(expm1(op.Div(self, alpha)), alpha), 0.0))
    return run_supported(lambda x: op.Celu(x, alpha=alpha), frozenset({FLOAT}), self)


@aten_op("aten::softplus")
@elementwise("self")
def aten_softplus(self: TFloat, beta: float = 1, threshold: float = 20) -> TFloat:
    """softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor"""
    _floating("softplus", self)

    def fn(x: Value) -> Value:
        # torch: x * beta > threshold ? x : log1p(exp(x * beta)) / beta
        scaled = op.Mul(x, beta) if beta != 1 else x
        smooth = log1p(op.Exp(scaled)) if x.dtype is DOUBLE else op.Softplus(scaled)
        if beta != 1:
            smooth = op.Div(smooth, beta)
        return op.Where(op.Greater(scaled, threshold), x, smooth)

    return run_supported(fn, OPMATH if self.dtype is DOUBLE else frozenset({FLOAT}), self)


@aten_op("aten::glu")
@elementwise("self")
def aten_glu(self: TFloat, dim: int = -1) -> TFloat:
    """glu(Tensor self, int dim=-1) -> Tensor"""
    _floating("glu", self)
    if self.rank == 0:
        raise ValueError("aten::glu does not support scalars because halving size must be even")
    size = self.shape[dim] if self.shape is not None else None
    if isinstance(size, int) and size % 2:
        raise ValueError(f"aten::glu: halving dimension must be even, but dimension {dim} is size {size}")

    axis = dim % self.rank  # type: ignore[operator]

    def fn(x: Value) -> Value:  # two Slices, not Split: onnxruntime cannot Split an empty dim in two
        half = op.Div(op.Shape(x, start=axis, end=axis + 1), np.array([2], np.int64))
        a = op.Slice(x, np.array([0], np.int64), half, np.array([axis], np.int64))
        b = op.Slice(x, half, op.Mul(half, np.array([2], np.int64)), np.array([axis], np.int64))
        return op.Mul(a, op.Sigmoid(b))

    return run_supported(fn, OPMATH, self)


def _softmax(onnx_op: Any, name: str, x: Value, dim: int, dtype: DType | None) -> Value:
    if dtype is not None and dtype is not x.dtype:
        x = op.Cast(x, to=dtype.onnx)
    _floating(name, x)
    if x.rank == 0:  # softmax of a scalar: one element along a dimension of size 1
        return op.Reshape(run_supported(lambda y: onnx_op(y, axis=0), OPMATH, op.Reshape(x, [1])), [])
    axis = normalize_dim(dim, x.rank) if x.rank is not None else dim
    return run_supported(lambda y: onnx_op(y, axis=axis), OPMATH, x)


def _log_softmax_op(x: Value, axis: int) -> Value:
    """LogSoftmax as torch computes it, x - max - log(sum(exp(x - max))). onnxruntime's double
    kernel gives -inf where that gives NaN (a row holding +inf, or only -inf): written out for
    double; its float kernel agrees with torch."""
    if x.dtype is not DOUBLE:
        return op.LogSoftmax(x, axis=axis)
    shifted = op.Sub(x, op.ReduceMax(x, [axis], keepdims=1))
    return op.Sub(shifted, op.Log(op.ReduceSum(op.Exp(shifted), [axis], keepdims=1)))


def _half_to_float(x: Value, half_to_float: bool) -> DType | None:
    """_softmax's half_to_float: a float16/bfloat16 input gives a float32 result (CUDA only in torch)."""
    if half_to_float and x.dtype in (FLOAT16, BFLOAT16):
        return FLOAT
    return None


@aten_op("aten::_softmax")
def aten__softmax(self: TFloat, dim: int, half_to_float: bool) -> TFloat:
    """_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
    return _softmax(op.Softmax, "_softmax", self, dim, _half_to_float(self, half_to_float))


@aten_op("aten::_log_softmax")
def aten__log_softmax(self: TFloat, dim: int, half_to_float: bool) -> TFloat:
    """_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor"""
    return _softmax(_log_softmax_op, "_log_softmax", self, dim, _half_to_float(self, half_to_float))


@aten_op("aten::softmax.int")
def aten_softmax(self: TFloat, dim: int, dtype: DType | None = None) -> TFloat:
    """softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return _softmax(op.Softmax, "softmax", self, dim, dtype)


@aten_op("aten::log_softmax.int")
def aten_log_softmax(self: TFloat, dim: int, dtype: DType | None = None) -> TFloat:
    """log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"""
    return _softmax(_log_softmax_op, "log_softmax", self, dim, dtype)


@aten_op("aten::clamp")
@elementwise("self", "min", "max")
def aten_clamp(self: TReal, min: float | None = None, max: float | None = None) -> TReal:
    """clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"""
    if min is None and max is None:
        raise ValueError("aten::clamp: at least one of 'min' or 'max' must not be None")
    return _clip(self, min, max)


def _clamp_tensor(x: Value, low: Value | None, high: Value | None) -> Value:
    """Max/Min broadcast the bounds (Clip takes scalars only); NaN propagates as in torch."""
    if x.dtype is BOOL:  # max is Or, min is And; torch has no bool kernel for both bounds at once
        if low is not None and high is not None:
            raise TypeError("aten::clamp.Tensor with both bounds is not implemented for bool tensors (torch raises too)")
        y = x if low is None else op.Or(x, low)
        return y if high is None else op.And(y, high)

    def fn(*args: Value) -> Value:
        y, rest = args[0], list(args[1:])
        if low is not None:
            y = op.Max(y, rest.pop(0))
        if high is not None:
            y = op.Min(y, rest.pop(0))
        return y

    return run_supported(fn, MIN_MAX, x, *(b for b in (low, high) if b is not None))


@aten_op("aten::clamp.Tensor")
@elementwise("self", "min", "max")
def aten_clamp_tensor(self: TReal, min: TReal | None = None, max: TReal | None = None) -> TReal:
    """clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"""
    if min is None and max is None:
        raise ValueError("aten::clamp: at least one of 'min' or 'max' must not be None")
    return _clamp_tensor(self, min, max)


@aten_op("aten::clamp_min")
@elementwise("self", "min")
def aten_clamp_min(self: TReal, min: float) -> TReal:
    """clamp_min(Tensor self, Scalar min) -> Tensor"""
    return _clip(self, min, None)


@aten_op("aten::clamp_min.Tensor")
@elementwise("self", "min")
def aten_clamp_min_tensor(self: TReal, min: TReal) -> TReal:
    """clamp_min.Tensor(Tensor self, Tensor min) -> Tensor"""
    return _clamp_tensor(self, min, None)


@aten_op("aten::clamp_max")
@elementwise("self", "max")
def aten_clamp_max(self: TReal, max: float) -> TReal:
    """clamp_max(Tensor self, Scalar max) -> Tensor"""
    return _clip(self, None, max)


@aten_op("aten::clamp_max.Tensor")
@elementwise("self", "max")
def aten_clamp_max_tensor(self: TReal, max: TReal) -> TReal:
    """clamp_max.Tensor(Tensor self, Tensor max) -> Tensor"""
    return _clamp_tensor(self, None, max)
