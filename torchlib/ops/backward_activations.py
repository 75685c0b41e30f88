"""Backward ops of the activations, dropout and mse_loss, as they appear in exported training
graphs: threshold_backward (relu's), sigmoid/tanh_backward (from the forward's result),
gelu/silu/hardswish/hardsigmoid/hardtanh/elu/leaky_relu/softplus/log_sigmoid/hardshrink/
softshrink/mish_backward,
native_dropout_backward, mse_loss_backward.

Each is torch's CPU formula, elementwise. The half types compute in float32 (torch's opmath)
and round once; float64 stays float64.
"""

from __future__ import annotations

import math
from typing import Any

from graph_builder import op, types
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from torchlib.ops import _cephes as cephes
from torchlib.ops.elementwise import log1p
from torchlib.promotion import cast_to
from torchlib.registry import aten_op


def _opmath(*xs: Value) -> list[Value]:
    dtype = types.DOUBLE if xs[0].dtype is types.DOUBLE else types.FLOAT
    return [cast_to(x, dtype) for x in xs]


def _rounded_from_double(fn: Any, x: Value) -> Value:
    """fn(x) evaluated in float64 and rounded to x's dtype. onnxruntime's float32 Erf/Tanh are a
    few 1e-7 off (its Sigmoid far more in the tails), which a grad near finfo.max shows; torch's
    float32 kernels are within about an ulp. The formulas around them stay in x's dtype, so they
    overflow where torch's do."""
    if x.dtype is types.DOUBLE:
        return fn(x)
    return op.Cast(fn(op.Cast(x, to=types.DOUBLE.onnx)), to=x.known_dtype.onnx)


def _sigmoid(x: Value) -> Value:
    """torch's 1 / (1 + exp(-x)) (0 where exp(-x) overflows; onnxruntime's Sigmoid is only
    absolutely accurate in the tails)."""
    return op.Div(op.CastLike(1, x), op.Add(op.Exp(op.Neg(x)), 1.0))


def _zero(x: Value) -> Value:
    return op.CastLike(0, x)


def _bound(value: float, x: Value) -> Value:
    """A Scalar bound as torch compares it: rounded to x's dtype, then in opmath (onnxruntime
    has no bfloat16 comparisons)."""
    (rounded,) = _opmath(op.CastLike(value, x))
    return rounded


@aten_op("aten::threshold_backward")
def aten_threshold_backward(grad_output: TFloat, self: TFloat, threshold: float) -> TFloat:
    """threshold_backward(Tensor grad_output, Tensor self, Scalar threshold) -> Tensor"""
    x, g = _opmath(self, grad_output)
    # torch's threshold kernel takes the Scalar unrounded in opmath (float32 for the half types)
    return cast_to(op.Where(op.LessOrEqual(x, op.CastLike(threshold, x)), _zero(g), g), grad_output.known_dtype)


@aten_op("aten::sigmoid_backward")
def aten_sigmoid_backward(grad_output: TFloat, output: TFloat) -> TFloat:
    """sigmoid_backward(Tensor grad_output, Tensor output) -> Tensor"""
    g, y = _opmath(grad_output, output)
    return cast_to(op.Mul(op.Mul(g, op.Sub(op.CastLike(1, y), y)), y), grad_output.known_dtype)


@aten_op("aten::tanh_backward")
def aten_tanh_backward(grad_output: TFloat, output: TFloat) -> TFloat:
    """tanh_backward(Tensor grad_output, Tensor output) -> Tensor"""
    g, y = _opmath(grad_output, output)
    return cast_to(op.Mul(g, op.Sub(op.CastLike(1, y), op.Mul(y, y))), grad_output.known_dtype)


@aten_op("aten::gelu_backward")
def aten_gelu_backward(grad_output: TFloat, self: TFloat, *, approximate: str = "none") -> TFloat:
    """gelu_backward(Tensor grad_output, Tensor self, *, str approximate='none') -> Tensor

    Computed in float64 for every dtype and rounded once: gelu'(x) crosses zero near x = -0.75
    and its two terms cancel there, so torch's float32 kernel is up to 1.2e-5 relative off
    near x = -2.8 and -0.8 (against its own float64 result), which a large grad makes visible."""
    g, x = cast_to(grad_output, types.DOUBLE), cast_to(self, types.DOUBLE)
    if approximate == "tanh":
        beta, kappa = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5, 0.044715
        x_sq = op.Mul(x, x)
        inner = op.Mul(op.Add(x, op.Mul(op.Mul(x_sq, x), kappa)), beta)
        tanh_inner = op.Tanh(inner)
        left_derivative = op.Mul(op.Add(tanh_inner, 1.0), 0.5)
        right_derivative = op.Mul(op.Mul(op.Mul(x, 0.5), op.Sub(1.0, op.Mul(tanh_inner, tanh_inner))),
                                  op.Mul(op.Add(op.Mul(x_sq, 3 * kappa), 1.0), beta))  # fmt: skip
        result = op.Mul(g, op.Add(left_derivative, right_derivative))
    elif approximate == "none":
        alpha = (2.0 / math.sqrt(math.pi)) * math.sqrt(0.5) * 0.5
        cdf = op.Mul(op.Add(cephes.erf(op.Mul(x, math.sqrt(0.5))), 1.0), 0.5)  # no double Erf kernel
        pdf = op.Mul(op.Exp(op.Mul(op.Mul(x, x), -0.5)), alpha)
        result = op.Mul(g, op.Add(cdf, op.Mul(x, pdf)))
    else:
        raise ValueError(f"aten::gelu_backward: approximate must be 'none' or 'tanh', got {approximate!r}")
    return cast_to(result, grad_output.known_dtype)


@aten_op("aten::silu_backward")
def aten_silu_backward(grad_output: TFloat, self: TFloat) -> TFloat:
    """silu_backward(Tensor grad_output, Tensor self) -> Tensor"""
    g, x = _opmath(grad_output, self)
    s = _sigmoid(x)
    return cast_to(op.Mul(op.Mul(g, s), op.Add(op.Mul(x, op.Sub(1.0, s)), 1.0)), grad_output.known_dtype)


@aten_op("aten::hardswish_backward")
def aten_hardswish_backward(grad_output: TFloat, self: TFloat) -> TFloat:
    """hardswish_backward(Tensor grad_output, Tensor self) -> Tensor"""
    g, x = _opmath(grad_output, self)
    middle = op.Mul(g, op.Add(op.Div(x, 3.0), 0.5))
    result = op.Where(op.LessOrEqual(x, -3.0), _zero(g), op.Where(op.Less(x, 3.0), middle, g))  # as torch at -3 and 3
    return cast_to(result, grad_output.known_dtype)


@aten_op("aten::hardsigmoid_backward")
def aten_hardsigmoid_backward(grad_output: TFloat, self: TFloat) -> TFloat:
    """hardsigmoid_backward(Tensor grad_output, Tensor self) -> Tensor"""
    g, x = _opmath(grad_output, self)
    inside = op.And(op.Greater(x, -3.0), op.Less(x, 3.0))
    return cast_to(op.Where(inside, op.Div(g, 6.0), _zero(g)), grad_output.known_dtype)


@aten_op("aten::hardtanh_backward")
def aten_hardtanh_backward(grad_output: TFloat, self: TFloat, min_val: float, max_val: float) -> TFloat:
    """hardtanh_backward(Tensor grad_output, Tensor self, Scalar min_val, Scalar max_val) -> Tensor"""
    x, g = _opmath(self, grad_output)
    outside = op.Or(op.LessOrEqual(x, _bound(min_val, self)), op.GreaterOrEqual(x, _bound(max_val, self)))
    return cast_to(op.Where(outside, _zero(g), g), grad_output.known_dtype)


@aten_op("aten::elu_backward")
def aten_elu_backward(
    grad_output: TFloat, alpha: float, scale: float, input_scale: float, is_result: bool, self_or_result: TFloat
) -> TFloat:
    """elu_backward(Tensor grad_output, Scalar alpha, Scalar scale, Scalar input_scale, bool is_result, Tensor self_or_result) -> Tensor

    Also selu's and celu's backward (their scale and input_scale)."""
    g, v = _opmath(grad_output, self_or_result)
    negcoef, poscoef, negiptcoef = float(alpha) * float(scale), float(scale), float(input_scale)
    if is_result:  # v is the forward's output
        negative = op.Mul(op.Mul(g, negiptcoef), op.Add(v, negcoef))
    else:
        negative = op.Mul(op.Mul(op.Mul(g, negiptcoef), negcoef), op.Exp(op.Mul(v, negiptcoef)))
    result = op.Where(op.LessOrEqual(v, 0.0), negative, op.Mul(g, poscoef))
    return cast_to(result, grad_output.known_dtype)


@aten_op("aten::leaky_relu_backward")
def aten_leaky_relu_backward(grad_output: TFloat, self: TFloat, negative_slope: float, self_is_result: bool) -> TFloat:
    """leaky_relu_backward(Tensor grad_output, Tensor self, Scalar negative_slope, bool self_is_result) -> Tensor"""
    g, x = _opmath(grad_output, self)
    result = op.Where(op.Greater(x, 0.0), g, op.Mul(g, float(negative_slope)))
    return cast_to(result, grad_output.known_dtype)


@aten_op("aten::softplus_backward")
def aten_softplus_backward(grad_output: TFloat, self: TFloat, beta: float, threshold: float) -> TFloat:
    """softplus_backward(Tensor grad_output, Tensor self, Scalar beta, Scalar threshold) -> Tensor"""
    g, x = _opmath(grad_output, self)
    scaled = op.Mul(x, float(beta))
    z = op.Exp(scaled)
    result = op.Where(op.Greater(scaled, float(threshold)), g, op.Div(op.Mul(g, z), op.Add(z, 1.0)))
    return cast_to(result, grad_output.known_dtype)


@aten_op("aten::log_sigmoid_backward")
def aten_log_sigmoid_backward(grad_output: TFloat, self: TFloat, buffer: TFloat) -> TFloat:
    """log_sigmoid_backward(Tensor grad_output, Tensor self, Tensor buffer) -> Tensor

    buffer is log_sigmoid_forward's exp(-|self|), which torch's CPU kernel reads."""
    g, x, z = _opmath(grad_output, self, buffer)
    fraction = op.Div(z, op.Add(z, 1.0))
    derivative = op.Where(op.Less(x, 0.0), op.Sub(1.0, fraction), fraction)  # max_deriv - sign * z / (1 + z)
    return cast_to(op.Mul(derivative, g), grad_output.known_dtype)


def _shrink_backward(grad_output: Value, self: Value, lambd: float) -> Value:
    """0 where -lambd <= self <= lambd (torch's hardshrink and softshrink gradients), else grad."""
    x, g = _opmath(self, grad_output)
    inside = op.And(op.GreaterOrEqual(x, _bound(-float(lambd), self)), op.LessOrEqual(x, _bound(lambd, self)))
    return cast_to(op.Where(inside, _zero(g), g), grad_output.known_dtype)


@aten_op("aten::hardshrink_backward")
def aten_hardshrink_backward(grad_out: TFloat, self: TFloat, lambd: float) -> TFloat:
    """hardshrink_backward(Tensor grad_out, Tensor self, Scalar lambd) -> Tensor"""
    return _shrink_backward(grad_out, self, lambd)


@aten_op("aten::softshrink_backward")
def aten_softshrink_backward(grad_output: TFloat, self: TFloat, lambd: float) -> TFloat:
    """softshrink_backward(Tensor grad_output, Tensor self, Scalar lambd) -> Tensor"""
    return _shrink_backward(grad_output, self, lambd)


@aten_op("aten::mish_backward")
def aten_mish_backward(grad_output: TFloat, self: TFloat) -> TFloat:
    """mish_backward(Tensor grad_output, Tensor self) -> Tensor"""
    g, x = _opmath(grad_output, self)
    sigmoid = _sigmoid(x)
    tanh_softplus = _rounded_from_double(op.Tanh, log1p(op.Exp(x)))  # torch's tanh(log1p(exp(x))), exp in x's dtype
    derivative = op.Add(tanh_softplus, op.Mul(op.Mul(x, sigmoid), op.Sub(1.0, op.Mul(tanh_softplus, tanh_softplus))))
    return cast_to(op.Mul(g, derivative), grad_output.known_dtype)


@aten_op("aten::native_dropout_backward")
def aten_native_dropout_backward(grad_output: TFloat, mask: Value, scale: float) -> TFloat:
    """native_dropout_backward(Tensor grad_output, Tensor mask, float scale) -> Tensor"""
    (g,) = _opmath(grad_output)
    kept = op.Mul(g, cast_to(mask, g.known_dtype))
    return cast_to(op.Mul(kept, float(scale)), grad_output.known_dtype)


@aten_op("aten::mse_loss_backward")
def aten_mse_loss_backward(grad_output: TFloat, self: TFloat, target: TFloat, reduction: int) -> TFloat:
    """mse_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction) -> Tensor

    (self - target) * norm * grad_output, norm = 2 / numel for mean (reduction 1), else 2:
    three ops as torch runs them, each rounded to self's dtype."""
    g, x, t = _opmath(grad_output, self, target)
    if reduction == 1:
        numel = op.Cast(op.ReduceProd(op.Shape(self), keepdims=0), to=types.DOUBLE.onnx)
        (norm,) = _opmath(cast_to(op.Div(op.CastLike(2.0, numel), numel), self.known_dtype))  # rounded to self's dtype, as torch's kernel
    else:
        norm = op.CastLike(2.0, x)
    (diff,) = _opmath(cast_to(op.Sub(x, t), self.known_dtype))
    (scaled,) = _opmath(cast_to(op.Mul(norm, diff), self.known_dtype))
    return cast_to(op.Mul(scaled, g), self.known_dtype)
