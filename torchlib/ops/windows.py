"""Window functions (hann, hamming, blackman, bartlett) and the FFT sample frequencies
(fftfreq, rfftfreq), as torch's factory kernels compute them.

torch builds a window in the requested dtype one in-place op at a time (arange, mul_, cos_,
add_): for float16/bfloat16 each step rounds to that dtype, and its half kernels round some steps
differently again (no stepwise emulation matches them: torch 2.13's float16 hann(16) is 1.6e-3
off the exact window, 3 ulps near 1). Here a window is computed in float32 (float64 for double)
and rounded to the dtype once, at the end: the half-precision windows are the float32 window
correctly rounded, nearer the exact values than torch's (the OpInfo table's TorchLessAccurate
rules measure both against torch's float64 window).

The sample frequencies (fftfreq, rfftfreq) are one multiplication of exact integers: each step
rounds to the dtype (`_Steps`) as torch's does, which matches torch exactly.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat
from graph_builder.types import DOUBLE, FLOAT, DType
from torchlib.promotion import DEFAULT_FLOAT
from torchlib.registry import aten_op


class _Steps:
    """The compute dtype of `dtype` (float64 for double, else float32): `round` rounds a step's
    result to `dtype` (the frequencies' steps), `result` casts the final value to it."""

    def __init__(self, name: str, dtype: DType | None):
        self.dtype = dtype or DEFAULT_FLOAT
        if not self.dtype.is_floating:
            raise TypeError(f"aten::{name} expects a floating point dtype, got {self.dtype} (torch raises too)")
        self.compute = DOUBLE if self.dtype is DOUBLE else FLOAT

    def const(self, x: float) -> float:
        """A scalar operand: the op makes it a constant of the other operand's (compute) dtype."""
        return float(x)

    def round(self, x: Value) -> Value:
        if self.dtype is self.compute:
            return x
        return op.Cast(op.Cast(x, to=self.dtype.onnx), to=self.compute.onnx)

    def arange(self, n: int) -> Value:
        """0, 1, ..., n - 1 in the compute dtype (exact)."""
        return op.Cast(op.Range(0, n, 1), to=self.compute.onnx)

    def result(self, x: Value) -> Value:
        return op.Cast(x, to=self.dtype.onnx)

    def empty_or_one(self, window_length: int) -> Value | None:
        """The window of 0 or 1 samples (empty, [1]); None for longer windows."""
        if window_length < 0:
            raise ValueError(f"window_length must be non-negative, got {window_length} (torch raises too)")
        if window_length > 1:
            return None
        return op.Cast(op.Constant(value=np.ones(window_length, np.float32)), to=self.dtype.onnx)


def _periodic(window: Value, periodic: bool) -> Value:
    """A periodic window of length L is the symmetric one of length L + 1 without its last sample."""
    return op.Slice(window, [0], [-1], [0]) if periodic else window


def _hamming(name: str, window_length: int, periodic: bool, alpha: float, beta: float, dtype: DType | None) -> Value:
    s = _Steps(name, dtype)
    trivial = s.empty_or_one(window_length)
    if trivial is not None:
        return trivial
    n = window_length + 1 if periodic else window_length
    w = op.Cos(op.Mul(s.arange(n), s.const(2 * math.pi / (n - 1))))
    w = op.Add(op.Mul(w, s.const(-beta)), s.const(alpha))
    return s.result(_periodic(w, periodic))


@aten_op("aten::hann_window")
def aten_hann_window(window_length: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                     pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """hann_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _hamming("hann_window", window_length, True, 0.5, 0.5, dtype)


@aten_op("aten::hann_window.periodic")
def aten_hann_window_periodic(window_length: int, periodic: bool, *, dtype: DType | None = None, layout: Any = None,
                              device: Any = None, pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """hann_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _hamming("hann_window", window_length, periodic, 0.5, 0.5, dtype)


@aten_op("aten::hamming_window")
def aten_hamming_window(window_length: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                        pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """hamming_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _hamming("hamming_window", window_length, True, 0.54, 0.46, dtype)


@aten_op("aten::hamming_window.periodic")
def aten_hamming_window_periodic(window_length: int, periodic: bool, *, dtype: DType | None = None, layout: Any = None,
                                 device: Any = None, pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """hamming_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _hamming("hamming_window", window_length, periodic, 0.54, 0.46, dtype)


@aten_op("aten::hamming_window.periodic_alpha")
def aten_hamming_window_periodic_alpha(window_length: int, periodic: bool, alpha: float, *, dtype: DType | None = None,
                                       layout: Any = None, device: Any = None, pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """hamming_window.periodic_alpha(int window_length, bool periodic, float alpha, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _hamming("hamming_window", window_length, periodic, alpha, 0.46, dtype)


@aten_op("aten::hamming_window.periodic_alpha_beta")
def aten_hamming_window_periodic_alpha_beta(window_length: int, periodic: bool, alpha: float, beta: float, *,
                                            dtype: DType | None = None, layout: Any = None, device: Any = None,
                                            pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """hamming_window.periodic_alpha_beta(int window_length, bool periodic, float alpha, float beta, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _hamming("hamming_window", window_length, periodic, alpha, beta, dtype)


def _blackman(window_length: int, periodic: bool, dtype: DType | None) -> Value:
    s = _Steps("blackman_window", dtype)
    trivial = s.empty_or_one(window_length)
    if trivial is not None:
        return trivial
    n = window_length + 1 if periodic else window_length
    w = op.Mul(s.arange(n), s.const(math.pi / (n - 1)))
    # torch: 0.08 * cos(4w) - 0.5 * cos(2w) + 0.42
    four = op.Mul(op.Cos(op.Mul(w, s.const(4))), s.const(0.08))
    two = op.Mul(op.Cos(op.Mul(w, s.const(2))), s.const(0.5))
    w = op.Add(op.Sub(four, two), s.const(0.42))
    return s.result(_periodic(w, periodic))


@aten_op("aten::blackman_window")
def aten_blackman_window(window_length: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                         pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """blackman_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _blackman(window_length, True, dtype)


@aten_op("aten::blackman_window.periodic")
def aten_blackman_window_periodic(window_length: int, periodic: bool, *, dtype: DType | None = None, layout: Any = None,
                                  device: Any = None, pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """blackman_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _blackman(window_length, periodic, dtype)


def _bartlett(window_length: int, periodic: bool, dtype: DType | None) -> Value:
    s = _Steps("bartlett_window", dtype)
    trivial = s.empty_or_one(window_length)
    if trivial is not None:
        return trivial
    n = window_length + 1 if periodic else window_length
    w = op.Mul(s.arange(n), s.const(2.0 / (n - 1)))
    first_half = ((n - 1) >> 1) + 1
    rising = op.Slice(w, [0], [first_half], [0])
    falling = op.Sub(2.0, op.Slice(w, [first_half], [n], [0]))
    return s.result(_periodic(op.Concat(rising, falling, axis=0), periodic))


@aten_op("aten::bartlett_window")
def aten_bartlett_window(window_length: int, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                         pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """bartlett_window(int window_length, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _bartlett(window_length, True, dtype)


@aten_op("aten::bartlett_window.periodic")
def aten_bartlett_window_periodic(window_length: int, periodic: bool, *, dtype: DType | None = None, layout: Any = None,
                                  device: Any = None, pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """bartlett_window.periodic(int window_length, bool periodic, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _bartlett(window_length, periodic, dtype)


# -- sample frequencies ----------------------------------------------------------------------------


def _frequencies(name: str, k: np.ndarray, n: int, d: float, dtype: DType | None) -> Value:
    """k / (n * d) as torch computes it: the integers k in the dtype, times the scalar 1/(n*d)."""
    s = _Steps(name, dtype)
    factor = 1.0 / (n * d) if n * d != 0 else math.copysign(math.inf, d)  # C++'s 1.0 / 0.0 (n = 0 gives an empty result)
    return s.result(op.Mul(s.round(op.Cast(op.Constant(value=k), to=s.compute.onnx)), s.const(factor)))


@aten_op("aten::fft_fftfreq")
def aten_fft_fftfreq(n: int, d: float = 1.0, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                     pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """fft_fftfreq(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    k = np.concatenate([np.arange((n + 1) // 2), np.arange(-(n // 2), 0)]).astype(np.float64)
    return _frequencies("fft_fftfreq", k, n, d, dtype)


@aten_op("aten::fft_rfftfreq")
def aten_fft_rfftfreq(n: int, d: float = 1.0, *, dtype: DType | None = None, layout: Any = None, device: Any = None,
                      pin_memory: bool | None = None) -> TFloat:  # fmt: skip
    """fft_rfftfreq(int n, float d=1.0, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"""
    return _frequencies("fft_rfftfreq", np.arange(n // 2 + 1, dtype=np.float64), n, d, dtype)
