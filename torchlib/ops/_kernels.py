"""onnxruntime's CPU kernels cover few dtypes for many ops (nothing for bfloat16, no double for
the inverse trigonometric ops, few small-integer kernels). `run_supported` computes such an op in
the nearest dtype that has a kernel and casts the result back, so every function keeps torch's
output dtype for every input dtype torch accepts. Shared by every ops module."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.types import (
    BFLOAT16,
    BOOL,
    DOUBLE,
    FLOAT,
    FLOAT16,
    INT8,
    INT16,
    INT32,
    INT64,
    UINT8,
    UINT16,
    UINT32,
    DType,
)  # fmt: skip

# The dtypes onnxruntime's CPU kernels take, per family of ONNX ops.
FLOATS = frozenset({FLOAT, FLOAT16, DOUBLE})  # Exp, Log, Sqrt, Sin, Cos, Tanh, Sigmoid, Floor, Softmax, ...
FLOAT32_16 = frozenset({FLOAT, FLOAT16})  # Tan, Asin, Acos, Atan, Sinh, ..., Erf, Gelu, HardSigmoid, ...
NUMERIC = FLOATS | {INT8, INT16, INT32, INT64, UINT8}  # Add, Sub, Mul, Div, Abs, Sign, Mod, Less, ...
MIN_MAX = FLOATS | {INT8, INT32, INT64, UINT8}  # Max, Min, Clip, Where
SIGNED = FLOATS | {INT8, INT16, INT32, INT64}  # Neg
POW = FLOATS | {INT32, INT64}
# Formulas of several ops: the half types compute in float32 and round once, as torch's CPU
# kernels do (their "opmath" type), instead of rounding after every step.
OPMATH = frozenset({FLOAT, DOUBLE})

# Where to compute when a dtype has no kernel: the nearest dtypes that hold every value exactly
# (double -> float only for the few ops onnxruntime has no double kernel of).
_WIDER: dict[DType, tuple[DType, ...]] = {
    BOOL: (UINT8, INT32, INT64, FLOAT),
    UINT8: (INT16, INT32, INT64, FLOAT),
    INT8: (INT16, INT32, INT64, FLOAT),
    INT16: (INT32, INT64, FLOAT),
    UINT16: (INT32, INT64),
    INT32: (INT64, DOUBLE),
    UINT32: (INT64,),
    BFLOAT16: (FLOAT, DOUBLE),
    FLOAT16: (FLOAT, DOUBLE),
    FLOAT: (DOUBLE,),
    DOUBLE: (FLOAT,),
}


def run_supported(fn: Callable[..., Any], supported: frozenset[DType], *args: Any) -> Any:
    """fn(*args) computed in a dtype onnxruntime has a kernel for. The Value args share one dtype
    (Python scalars may be mixed in); when it is not in `supported`, they are cast to the nearest
    wider dtype that is, and a result of that dtype is cast back."""
    dtype = next(a.known_dtype for a in args if isinstance(a, Value))
    if dtype in supported:
        return fn(*args)
    target = next((d for d in _WIDER.get(dtype, ()) if d in supported), None)
    if target is None:
        raise TypeError(f"{getattr(fn, '__name__', fn)}: onnxruntime has no kernel for {dtype} and no wider dtype to compute in")
    result = fn(*(op.Cast(a, to=target.onnx) if isinstance(a, Value) and a.dtype is dtype else a for a in args))
    return op.Cast(result, to=dtype.onnx) if result.dtype is target else result


def round_scalar(v: Any, dtype: DType) -> Any:
    """A Python number as torch uses a Scalar argument with a tensor of `dtype` in the kernels
    that round it (comparisons, remainder, add's alpha, ...: bfloat16 0.3 is 0.30078125; others,
    such as mul and div, take it unrounded in float32). Bools, non-floating dtypes and other
    values pass unchanged."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not dtype.is_floating:
        return v
    return float(np.array(v, dtype=np.float64).astype(dtype.numpy))


def nearest_supported(dtype: DType, has_kernel: Callable[[DType], bool]) -> DType:
    """dtype when onnxruntime has a kernel for it, else the nearest wider dtype that holds every
    value and has one; dtype itself when there is none (the kernel then names the missing
    dtype). has_kernel: e.g. MIN_MAX.__contains__."""
    if has_kernel(dtype):
        return dtype
    return next((d for d in _WIDER.get(dtype, ()) if has_kernel(d)), dtype)


def kernel(onnx_op: Callable[..., Any], supported: frozenset[DType]) -> Callable[..., Any]:
    """onnx_op as a function that computes in a supported dtype (see run_supported)."""

    def fn(*args: Any) -> Any:
        return run_supported(onnx_op, supported, *args)

    fn.__name__ = getattr(onnx_op, "__name__", "kernel")
    return fn


def float32_or_double(onnx_op: Callable[..., Any], double_fn: Callable[..., Any]) -> Callable[..., Any]:
    """onnx_op where onnxruntime has its kernel (float, float16; bfloat16 through float), and for
    double `double_fn`, a composition of ops that have double kernels: a float64 input is never
    computed in float32."""

    def fn(*args: Any) -> Any:
        if next(a.dtype for a in args if isinstance(a, Value)) is DOUBLE:
            return double_fn(*args)
        return run_supported(onnx_op, FLOAT32_16, *args)

    fn.__name__ = getattr(onnx_op, "__name__", "kernel")
    return fn


def like(x: Any, ref: Value) -> Any:
    """x as a Value of ref's dtype: Python scalars become constants (exact for double and int64)."""
    if isinstance(x, Value):
        return x
    return op.CastLike(np.asarray(x, dtype=ref.known_dtype.numpy), ref)


def as_float(x: Any) -> Any:
    """A Value in a floating dtype (ints and bool go to float32, torch's default); Python scalars stay."""
    if isinstance(x, Value) and not x.known_dtype.is_floating:
        return op.Cast(x, to=FLOAT.onnx)
    return x


def full_of(shape: Any, value: Any, dtype: DType) -> Value:
    """A tensor of `shape` (an INT64 1-D Value, or a list of ints) filled with `value` (a Python
    scalar, or a Value of one element) in `dtype`."""
    if not isinstance(value, Value):
        try:
            fill = np.array([value], dtype=dtype.numpy)
        except (OverflowError, ValueError):
            raise ValueError(f"value {value!r} cannot be converted to {dtype} without overflow") from None
        return op.ConstantOfShape(shape, value=fill)
    if dtype is BFLOAT16:  # no bfloat16 Expand kernel
        return op.Cast(full_of(shape, value, FLOAT), to=dtype.onnx)
    return op.Expand(op.Cast(value, to=dtype.onnx), shape)


def scale(x: Value, factor: Any) -> Value:
    """x * factor for a Python number factor. A float64 x gets the factor as a constant of more
    than one element: onnxruntime's MatMulScaleFusion folds a one-element factor next to a MatMul
    into FusedMatMul's float32 `alpha` attribute, which rounds a float64 factor to float32."""
    if x.dtype is not DOUBLE or x.shape is None:
        return op.Mul(x, factor)
    last = x.shape[-1] if x.rank else None
    if isinstance(last, int) and last >= 2:
        return op.Mul(x, np.full((last,), factor, np.float64))
    if x.is_static and math.prod(x.static_shape) >= 2:
        return op.Mul(x, np.full(x.static_shape, factor, np.float64))
    if not x.is_static:
        return op.Mul(x, op.Expand(np.array(factor, np.float64), op.Shape(x)))
    return op.Mul(x, factor)
