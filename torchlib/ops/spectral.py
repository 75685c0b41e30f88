"""Short-time Fourier transforms: `stft` (with `center` and every pad mode) and `istft`, as
torch's reference (torch/_refs) computes them: frames gathered from the signal, windowed, one
DFT per frame (fft.py); istft adds the inverse frames back together with ScatterElements
(reduction "add") and divides by the overlap-added squared window.

Complex tensors are real views with a trailing (real, imaginary) dimension (see complex.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from graph_builder import op
from graph_builder.ir import Value
from graph_builder.type_constraints import TFloat, TTensor
from graph_builder.types import DOUBLE, FLOAT
from torchlib.ops import fft
from torchlib.ops.complex import div_pairs, join, mul_pairs, pair
from torchlib.registry import aten_op

_PAD_MODES = {"reflect": "reflect", "constant": "constant", "replicate": "edge", "circular": "wrap"}


def _length(x: Value, axis: int) -> Any:
    d = x.shape[axis] if x.shape is not None else None
    return d if isinstance(d, int) else op.Squeeze(op.Shape(x, start=axis, end=axis + 1), [0])


def _window(window: Value | None, n_fft: int, win_length: int, storage: Any) -> Value | None:
    """The window zero-padded to n_fft, centered (None: rectangular of n_fft)."""
    if win_length < n_fft and window is None:
        window = op.ConstantOfShape(np.array([win_length], dtype=np.int64), value=np.ones(1, dtype=storage.numpy))
    if window is None:
        return None
    if window.is_complex:
        window_storage = window if window.dtype is storage else op.Cast(window, to=storage.onnx).as_complex()
    else:
        window_storage = window if window.dtype is storage else op.Cast(window, to=storage.onnx)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        rank = window_storage.known_rank
        pads = [0] * (2 * rank)
        pads[0], pads[rank] = left, n_fft - win_length - left
        padded = op.Pad(window_storage, pads)
        return padded.as_complex() if window.is_complex else padded
    return window_storage


def _frame_indices(n_frames: Any, hop: int, n_fft: int) -> Value:
    """[n_frames, n_fft] INT64: t * hop + k."""
    starts = op.Mul(op.Range(np.array(0, dtype=np.int64), n_frames if isinstance(n_frames, Value) else np.array(n_frames, dtype=np.int64), np.array(1, dtype=np.int64)), np.array(hop, dtype=np.int64))
    return op.Add(op.Unsqueeze(starts, [1]), np.arange(n_fft, dtype=np.int64)[None, :])


def _stft(name: str, self: Value, n_fft: int, hop_length: int | None, win_length: int | None, window: Value | None,
          normalized: bool, onesided: bool | None, return_complex: bool | None, align_to_window: bool | None) -> Value:
    complex_input = self.is_complex or (window is not None and window.is_complex)
    if return_complex is None:
        if not complex_input:
            raise ValueError(f"aten::{name} requires return_complex for real inputs (torch raises too)")
        return_complex = True
    if self.dtype not in (FLOAT, DOUBLE):
        raise TypeError(f"aten::{name} expects a floating point or complex signal, got {self.dtype} (torch too)")
    if align_to_window:
        raise ValueError(f"aten::{name}: align_to_window=True is not supported; pad the signal by (n_fft - win_length) // 2 before stft")
    hop = hop_length if hop_length is not None else n_fft // 4
    win = win_length if win_length is not None else n_fft
    if not 0 < win <= n_fft or hop <= 0:
        raise ValueError(f"aten::{name}: expected 0 < win_length <= n_fft and hop_length > 0, got n_fft={n_fft}, win_length={win}, hop_length={hop}")
    onesided = not complex_input if onesided is None else onesided
    if onesided and complex_input:
        raise ValueError(f"aten::{name}: cannot have onesided output if window or input is complex (torch raises too)")
    rank = self.logical_rank
    if rank not in (1, 2):
        raise ValueError(f"aten::{name} expects a 1-D or 2-D signal, got rank {rank}")
    storage = self.dtype if self.dtype is DOUBLE or (window is not None and window.dtype is DOUBLE) else FLOAT
    dtype = fft._compute_dtype(self, [n_fft])  # noqa: SLF001  (shared precision rule)
    dtype = DOUBLE if storage is DOUBLE else dtype
    x = self if self.dtype is dtype else op.Cast(self, to=dtype.onnx)
    if rank == 1:
        x = op.Unsqueeze(x, [0])
    length = _length(x, 1)
    if isinstance(length, int) and not 0 < n_fft <= length:
        raise ValueError(f"aten::{name}: expected 0 < n_fft <= {length}, got n_fft={n_fft} (torch raises too)")
    n_frames = 1 + (length - n_fft) // hop if isinstance(length, int) else op.Add(op.Div(op.Sub(length, n_fft), hop), 1)
    frames = op.Gather(x, _frame_indices(n_frames, hop, n_fft), axis=1)  # [B, T, n_fft] (+ [2])
    w = _window(window, n_fft, win, dtype)
    if self.is_complex or (w is not None and w.is_complex):
        if not self.is_complex:
            frames = op.Unsqueeze(frames, [-1])
            frames = op.Concat(frames, op.Mul(frames, np.array(0, dtype=dtype.numpy)), axis=-1)
        if w is not None:
            f_re, f_im = pair(frames.as_complex(), dtype)
            w_re, w_im = pair(w, dtype)
            re, im = mul_pairs((f_re, f_im), (w_re, w_im))
            frames = op.Concat(op.Unsqueeze(re, [-1]), op.Unsqueeze(im, [-1]), axis=-1)
        spectrum = fft._dft(frames, 2)  # noqa: SLF001
    else:
        if w is not None:
            frames = op.Mul(frames, w)
        spectrum = fft._real_input_zeros(fft._dft(op.Unsqueeze(frames, [-1]), 2, onesided=onesided), 2, n_fft)  # noqa: SLF001
    if normalized:
        spectrum = op.Mul(spectrum, np.array(n_fft ** -0.5, dtype=dtype.numpy))
    out = op.Transpose(spectrum, perm=[0, 2, 1, 3])  # [B, freq, frames, 2]
    if rank == 1:
        out = op.Squeeze(out, [0])
    out_storage = DOUBLE if storage is DOUBLE else FLOAT
    if out.dtype is not out_storage:
        out = op.Cast(out, to=out_storage.onnx)
    return out.as_complex() if return_complex else out


@aten_op("aten::stft")
def aten_stft(self: TFloat, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window: TFloat | None = None,
              normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
              align_to_window: bool | None = None) -> TTensor:
    """stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor"""
    return _stft("stft", self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)


@aten_op("aten::stft", complex=True)
def aten_stft_complex(self: TTensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window: TTensor | None = None,
                      normalized: bool = False, onesided: bool | None = None, return_complex: bool | None = None,
                      align_to_window: bool | None = None) -> TTensor:
    """stft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor"""
    return _stft("stft", self, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)


def _center(self: Value, n_fft: int, pad_mode: str) -> Value:
    """The signal padded by n_fft // 2 on both sides of its last (logical) axis."""
    if pad_mode not in _PAD_MODES:
        raise ValueError(f"aten::stft.center: pad_mode must be one of {sorted(_PAD_MODES)}, got {pad_mode!r}")
    axis = self.known_logical_rank - 1
    pads = [0] * (2 * self.known_rank)
    pads[axis] = pads[self.known_rank + axis] = n_fft // 2
    padded = op.Pad(self, pads, mode=_PAD_MODES[pad_mode])
    return padded.as_complex() if self.is_complex else padded


@aten_op("aten::stft.center")
def aten_stft_center(self: TFloat, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window: TFloat | None = None,
                     center: bool = True, pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
                     return_complex: bool | None = None, align_to_window: bool | None = None) -> TTensor:
    """stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, str pad_mode="reflect", bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor"""
    if center and align_to_window is not None:
        raise ValueError("aten::stft.center: align_to_window is only for center=False (torch raises too)")
    x = _center(self, n_fft, pad_mode) if center else self
    return _stft("stft.center", x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)


@aten_op("aten::stft.center", complex=True)
def aten_stft_center_complex(self: TTensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
                             window: TTensor | None = None, center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
                             onesided: bool | None = None, return_complex: bool | None = None, align_to_window: bool | None = None) -> TTensor:
    """stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, str pad_mode="reflect", bool normalized=False, bool? onesided=None, bool? return_complex=None, bool? align_to_window=None) -> Tensor"""
    if center and align_to_window is not None:
        raise ValueError("aten::stft.center: align_to_window is only for center=False (torch raises too)")
    x = _center(self, n_fft, pad_mode) if center else self
    return _stft("stft.center", x, n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)


def _overlap_add(frames: Any, n_frames: Any, hop: int, n_fft: int, expected: Any, dtype: Any) -> Value:
    """y[b, t * hop + k] = sum of frames[b, t, k] over t: [B, expected]."""
    batch = op.Shape(frames, start=0, end=1)
    updates = op.Reshape(frames, [0, -1])
    indices = op.Expand(op.Reshape(_frame_indices(n_frames, hop, n_fft), [1, -1]), op.Shape(updates))
    expected_1d = np.array([expected], dtype=np.int64) if isinstance(expected, int) else op.Reshape(expected, [1])
    zeros = op.ConstantOfShape(op.Concat(batch, expected_1d, axis=0), value=np.zeros(1, dtype=dtype.numpy))
    return op.ScatterElements(zeros, indices, updates, axis=1, reduction="add")


@aten_op("aten::istft", complex=True)
def aten_istft(self: TTensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None, window: TFloat | None = None,
               center: bool = True, normalized: bool = False, onesided: bool | None = None, length: int | None = None,
               return_complex: bool = False) -> TTensor:
    """istft(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, bool normalized=False, bool? onesided=None, int? length=None, bool return_complex=False) -> Tensor"""
    if not self.is_complex:
        raise TypeError("aten::istft expects a complex input (torch raises too)")
    if window is not None and window.is_complex and not return_complex:
        raise ValueError("aten::istft: complex windows are incompatible with return_complex=False (torch raises too)")
    hop = hop_length if hop_length is not None else n_fft // 4
    win = win_length if win_length is not None else n_fft
    if not 0 < hop <= win or not 0 < win <= n_fft:
        raise ValueError(f"aten::istft: expected 0 < hop_length <= win_length <= n_fft, got {hop}, {win}, {n_fft} (torch raises too)")
    rank = self.known_logical_rank
    if rank not in (2, 3):
        raise ValueError(f"aten::istft expects a 2-D or 3-D input, got rank {rank} (torch raises too)")
    fft_size = self.known_logical_shape[-2]
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and return_complex:
        raise ValueError("aten::istft: cannot have onesided output with return_complex=True (torch raises too)")
    expected_bins = n_fft // 2 + 1 if onesided else n_fft
    if isinstance(fft_size, int) and fft_size != expected_bins:
        raise ValueError(f"aten::istft: expected {expected_bins} frequency bins for n_fft={n_fft}, onesided={onesided}, got {fft_size} (torch raises too)")
    x = op.Unsqueeze(self, [0]).as_complex() if rank == 2 else self
    x = op.Transpose(x, perm=[0, 2, 1, 3]).as_complex()  # [B, frames, freq, 2]
    n_frames = _length(x, 1)
    normalization = 1 if normalized else 2
    if return_complex:
        frames = fft.aten__fft_c2c.__wrapped__(x, [2], normalization, False)
    else:
        if not onesided:
            x = op.Slice(x, [0], [n_fft // 2 + 1], [2]).as_complex()
        frames = fft.aten__fft_c2r.__wrapped__(x, [2], normalization, n_fft)
    dtype = frames.dtype
    w = _window(window, n_fft, win, dtype)
    if w is None:
        w = op.ConstantOfShape(np.array([n_fft], dtype=np.int64), value=np.ones(1, dtype=dtype.numpy))
    w_pair = pair(w, dtype)
    # each of (real, imaginary) separately: frames times window, overlap-added, over the
    # overlap-added squared window (torch's window ** 2, a complex square for a complex window)
    expected = n_fft + hop * (n_frames - 1) if isinstance(n_frames, int) else op.Add(op.Mul(op.Sub(n_frames, 1), hop), n_fft)
    frame_count = op.Reshape(n_frames, [1]) if isinstance(n_frames, Value) else np.array([n_frames], dtype=np.int64)
    tile = op.Concat(np.array([1], dtype=np.int64), frame_count, np.array([n_fft], dtype=np.int64), axis=0)
    start = n_fft // 2 if center else 0
    if length is not None:
        end: Any = start + length
    elif center:
        end = op.Sub(expected, n_fft // 2) if isinstance(expected, Value) else expected - n_fft // 2
    else:
        end = expected
    end_1d = np.array([end], dtype=np.int64) if isinstance(end, int) else op.Reshape(end, [1])

    def overlap_add(part: Any) -> Any:
        if part is None:
            return None
        added = _overlap_add(part, n_frames, hop, n_fft, expected, dtype)
        return op.Slice(added, np.array([start], dtype=np.int64), end_1d, np.array([1], dtype=np.int64))

    frame_pair = pair(frames.as_complex(), dtype) if return_complex else (frames, None)
    y = tuple(overlap_add(p) for p in mul_pairs(frame_pair, w_pair))
    squares = mul_pairs(w_pair, w_pair)
    envelope = tuple(overlap_add(None if p is None else op.Expand(op.Unsqueeze(p, [0, 1]), tile)) for p in squares)
    re, im = div_pairs(y, envelope)
    if return_complex and im is None:
        im = op.Mul(re, np.array(0, dtype=dtype.numpy))
    parts = [re, im] if return_complex else [re]
    if length is not None:  # a signal shorter than `length` is padded with zeros at its end
        got = re.shape[1] if isinstance(re, Value) and re.shape is not None else None
        if not isinstance(got, int) or got < length:
            missing = op.Max(op.Sub(np.array([length], dtype=np.int64), op.Shape(re, start=1, end=2)), np.array([0], dtype=np.int64))
            zero = np.array([0], dtype=np.int64)
            pads = op.Concat(zero, zero, zero, missing, axis=0)
            parts = [op.Pad(p, pads) for p in parts]
    if rank == 2:
        parts = [op.Squeeze(p, [0]) for p in parts]
    return join(parts[0], parts[1]) if return_complex else parts[0]
