"""Spectral ops: DFT (opsets 17 and 20), STFT and MelWeightMatrix, as onnx's reference computes
them. A signal's last dim holds one (real) or two (real, imaginary) components; an output's two."""

from __future__ import annotations

import math

import torch

from torchlib.importer._common import impl, ints
from torchlib.importer.converter import ONNX_TO_TORCH


def _as_signal(x: torch.Tensor) -> torch.Tensor:
    """[..., 1] real or [..., 2] (real, imaginary) as a real or complex tensor without that dim,
    in float64 (the transform's rounding stays below the float32 result's)."""
    work = x.to(torch.float64)
    return torch.view_as_complex(work.contiguous()) if x.shape[-1] == 2 else work.squeeze(-1)


def dft(x: torch.Tensor, length: int | None, axis: int, inverse: int, onesided: int) -> torch.Tensor:
    a = axis % x.dim()
    if a == x.dim() - 1:
        raise ValueError(f"DFT axis {axis} is the (real, imaginary) dim of an input of rank {x.dim()}")
    n = length or (2 * (x.shape[a] - 1) if inverse and onesided else x.shape[a])
    signal = _as_signal(x)
    if inverse:
        y = torch.fft.irfft(signal, n=n, dim=a) if onesided else torch.fft.ifft(signal, n=n, dim=a)
    else:
        y = torch.fft.fft(signal, n=n, dim=a)
        if onesided:
            y = y.narrow(a, 0, n // 2 + 1)
    return (torch.view_as_real(y) if y.is_complex() else y.unsqueeze(-1)).to(x.dtype)


def _length(dft_length: torch.Tensor | tuple[int, ...] | None) -> int | None:
    return ints(dft_length)[0] if dft_length is not None else None


@impl("DFT", since=17, until=20, static=(1,), axis=1, inverse=0, onesided=0)
def dft_17(x: torch.Tensor, dft_length: torch.Tensor | None = None, *, axis: int, inverse: int,
           onesided: int) -> torch.Tensor:
    return dft(x, _length(dft_length), axis, inverse, onesided)


@impl("DFT", since=20, static=(1, 2), inverse=0, onesided=0)
def dft_20(x: torch.Tensor, dft_length: torch.Tensor | None = None, axis: torch.Tensor | None = None, *,
           inverse: int, onesided: int) -> torch.Tensor:
    return dft(x, _length(dft_length), ints(axis)[0] if axis is not None else -2, inverse, onesided)


@impl("STFT", since=17, static=(1, 3), onesided=1)
def stft(x: torch.Tensor, frame_step: torch.Tensor, window: torch.Tensor | None = None,
         frame_length: torch.Tensor | None = None, *, onesided: int) -> torch.Tensor:
    """x [batch, length, 1 | 2] -> [batch, frames, bins, 2]; frames = 1 + (length - frame) // step."""
    step = ints(frame_step)[0]
    size = window.shape[0] if window is not None else (ints(frame_length)[0] if frame_length is not None
                                                         else x.shape[-2])  # fmt: skip
    frames = x.unfold(1, size, step).transpose(-1, -2)  # [batch, frames, size, 1 | 2]
    if window is not None:
        frames = frames * window.to(x.dtype).reshape(size, 1)
    n = ints(frame_length)[0] if frame_length is not None else size
    return dft(frames, n, 2, 0, onesided)


@impl("MelWeightMatrix", since=17, output_datatype=1)
def mel_weight_matrix(num_mel_bins: torch.Tensor, dft_length: torch.Tensor, sample_rate: torch.Tensor,
                      lower_edge_hertz: torch.Tensor, upper_edge_hertz: torch.Tensor, *,
                      output_datatype: int) -> torch.Tensor:
    """[dft_length // 2 + 1, num_mel_bins] triangular filters, their edges num_mel_bins + 2 points
    evenly spaced in mel (2595 log10(1 + f / 700)) between the edge frequencies, mapped to DFT
    bins by floor((dft_length + 1) f / sample_rate), as onnx's reference builds them."""
    bins, length, rate = int(num_mel_bins), int(dft_length), int(sample_rate)
    low = 2595 * torch.log1p(lower_edge_hertz.to(torch.float64) / 700) / math.log(10)
    high = 2595 * torch.log1p(upper_edge_hertz.to(torch.float64) / 700) / math.log(10)
    mels = torch.arange(bins + 2, dtype=torch.float64) * ((high - low) / (bins + 2)) + low
    edges = torch.floor((length + 1) * (700 * torch.expm1(mels / 2595 * math.log(10))) / rate).to(torch.int64)
    j = torch.arange(length // 2 + 1, dtype=torch.int64).unsqueeze(1)  # [spectrum bins, 1]
    left, center, right = edges[:-2], edges[1:-1], edges[2:]
    rise = (j - left).to(torch.float64) / (center - left).clamp(min=1).to(torch.float64)
    fall = (right - j).to(torch.float64) / (right - center).clamp(min=1).to(torch.float64)
    weights = torch.where((j >= left) & (j <= center), rise, torch.zeros(()))
    weights = torch.where(((center - left) == 0) & (j == center), torch.ones(()), weights)
    weights = torch.where((j >= center) & (j < right) & (right > center), fall, weights)
    return weights.to(ONNX_TO_TORCH[output_datatype])
