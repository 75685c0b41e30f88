"""Expectations for torchlib/ops/fft.py and spectral.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry

from .complex import stft_center

FFT = ['fft.fft', 'fft.ifft', 'fft.fft2', 'fft.ifft2', 'fft.fftn', 'fft.ifftn', 'fft.rfft', 'fft.rfft2', 'fft.rfftn',
       'fft.irfft', 'fft.irfft2', 'fft.irfftn', 'fft.hfft', 'fft.hfft2', 'fft.hfftn', 'fft.ihfft', 'fft.ihfft2', 'fft.ihfftn']

ENTRIES = [
    Entry('aten__fft_r2c', opinfo=FFT),
    Entry('aten__fft_c2c', opinfo=FFT),
    Entry('aten__fft_c2r', opinfo=FFT),
    Entry('aten_stft', opinfo=['stft']),
    Entry('aten_stft_complex', opinfo=['stft']),
    Entry('aten_stft_center', samples=stft_center, dtypes=[torch.float32, torch.float64]),
    Entry('aten_stft_center_complex', samples=stft_center, dtypes=[torch.complex64, torch.complex128]),
    Entry('aten_istft', opinfo=['istft']),
]
