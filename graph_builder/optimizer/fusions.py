"""Formulas that opset 23 has an operator for, as rewrite rules (see pattern.py).

Each rule is exact: it fires only where the fused operator computes the same function (the
reduction over the last axis, a scalar epsilon, the erf or tanh GELU constants).
"""

from __future__ import annotations

import math

from graph_builder.ir import Value
from graph_builder.optimizer.editing import ints, scalar
from graph_builder.optimizer.pattern import Rule, Var

# -- RMSNorm: x * 1/sqrt(mean(x*x, -1) + eps) * w -> RMSNormalization ----------------------------


def _mean_square(op, x, axes):  # type: ignore[no-untyped-def]
    return op.ReduceMean(op.Mul(x, x), axes, keepdims=1)


def _rms_reciprocal(op, x, w, eps, axes):  # type: ignore[no-untyped-def]
    return op.Mul(w, op.Mul(x, op.Reciprocal(op.Sqrt(op.Add(_mean_square(op, x, axes), eps)))))


def _rms_div(op, x, w, eps, axes):  # type: ignore[no-untyped-def]
    return op.Mul(w, op.Div(x, op.Sqrt(op.Add(_mean_square(op, x, axes), eps))))


def _rms_pow(op, x, w, eps, axes):  # type: ignore[no-untyped-def]
    mean_square = op.ReduceMean(op.Pow(x, 2.0), axes, keepdims=1)
    return op.Mul(w, op.Mul(x, op.Reciprocal(op.Sqrt(op.Add(mean_square, eps)))))


def _rms_check(x: Value, w: Value, eps: Value, axes: Value) -> bool:
    last = ints(axes)
    if x.rank is None or last is None or len(last) != 1 or last[0] not in (-1, x.rank - 1):
        return False
    if scalar(eps) is None or x.dtype is None or not x.dtype.is_floating or w.dtype is not x.dtype:
        return False
    return w.rank == 1 and x.shape is not None and w.shape == x.shape[-1:]


def _rms_fused(op, x, w, eps, axes):  # type: ignore[no-untyped-def]
    return op.RMSNormalization(x, w, axis=-1, epsilon=scalar(eps))


RMS_NORM = [Rule(f"RMSNormalization ({p.__name__[5:]})", p, _rms_fused, _rms_check) for p in (_rms_reciprocal, _rms_div, _rms_pow)]

# -- GELU: 0.5 * x * (1 + erf(x / sqrt 2)) and the tanh form -> Gelu -----------------------------

_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_erf_div(op, x):  # type: ignore[no-untyped-def]
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Erf(op.Div(x, _SQRT2)), 1.0))


def _gelu_erf_mul(op, x):  # type: ignore[no-untyped-def]
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Erf(op.Mul(x, 1.0 / _SQRT2)), 1.0))


def _gelu_erf_outer_half(op, x):  # type: ignore[no-untyped-def]
    return op.Mul(op.Mul(x, op.Add(op.Erf(op.Div(x, _SQRT2)), 1.0)), 0.5)


def _gelu_tanh(op, x):  # type: ignore[no-untyped-def]
    inner = op.Mul(op.Add(x, op.Mul(op.Pow(x, 3.0), 0.044715)), _SQRT_2_OVER_PI)
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Tanh(inner), 1.0))


def _gelu_tanh_cube(op, x):  # type: ignore[no-untyped-def]
    inner = op.Mul(op.Add(x, op.Mul(op.Mul(op.Mul(x, x), x), 0.044715)), _SQRT_2_OVER_PI)
    return op.Mul(op.Mul(x, 0.5), op.Add(op.Tanh(inner), 1.0))


def _floating(x: Value) -> bool:
    return x.dtype is not None and x.dtype.is_floating


GELU = [Rule(f"Gelu ({p.__name__[6:]})", p, lambda op, x: op.Gelu(x), _floating)
        for p in (_gelu_erf_div, _gelu_erf_mul, _gelu_erf_outer_half)]
GELU += [Rule(f"Gelu tanh ({p.__name__[6:]})", p, lambda op, x: op.Gelu(x, approximate="tanh"), _floating)
         for p in (_gelu_tanh, _gelu_tanh_cube)]

# -- MatMul + Add -> Gemm, for a 2-D input and a 2-D weight ---------------------------------------


def _matmul_add(op, a, b, c):  # type: ignore[no-untyped-def]
    return op.Add(op.MatMul(a, b), c)


def _gemm_check(a: Value, b: Value, c: Value) -> bool:
    if a.rank != 2 or b.rank != 2 or b.const_value is None or c.const_value is None or not _floating(a):
        return False
    n = b.shape[1]
    return c.rank in (1, 2) and c.shape[-1] == n and (c.rank == 1 or c.shape[0] == 1)


GEMM = [Rule("Gemm (MatMul + Add)", _matmul_add, lambda op, a, b, c: op.Gemm(a, b, c), _gemm_check)]

RULES = [*RMS_NORM, *GELU, *GEMM]
__all__ = ["GELU", "GEMM", "RMS_NORM", "RULES", "Var"]
