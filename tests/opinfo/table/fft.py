"""Expectations for torchlib/ops/fft.py, fft_wrappers.py and spectral.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate

from .complex import stft_center

FFT = ['fft.fft', 'fft.ifft', 'fft.fft2', 'fft.ifft2', 'fft.fftn', 'fft.ifftn', 'fft.rfft', 'fft.rfft2', 'fft.rfftn',
       'fft.irfft', 'fft.irfft2', 'fft.irfftn', 'fft.hfft', 'fft.hfft2', 'fft.hfftn', 'fft.ihfft', 'fft.ihfft2', 'fft.ihfftn']

# torch's float32 transforms run MKL in float32: on frames with entries near finfo.max they overflow
# or lose digits (-2.03e31 where the exact bin is -1.01e31); ours sums with exact twiddles and
# matches torch's own float64 result
_MKL_FLOAT32 = TorchLessAccurate(dtypes=[torch.float32, torch.complex64], reason="torch's float32 FFT (MKL in float32) overflows or loses digits on entries near finfo.max; ours matches torch's float64 result")


ENTRIES = [
    Entry('aten__fft_r2c', opinfo=FFT),
    Entry('aten__fft_c2c', opinfo=FFT),
    Entry('aten__fft_c2r', opinfo=FFT),
    Entry('aten_fft_fft', opinfo=['fft.fft']),
    Entry('aten_fft_fft_complex', opinfo=['fft.fft']),
    Entry('aten_fft_fft2', opinfo=['fft.fft2']),
    Entry('aten_fft_fft2_complex', opinfo=['fft.fft2']),
    Entry('aten_fft_fftn', opinfo=['fft.fftn']),
    Entry('aten_fft_fftn_complex', opinfo=['fft.fftn']),
    Entry('aten_fft_ifft', opinfo=['fft.ifft']),
    Entry('aten_fft_ifft_complex', opinfo=['fft.ifft']),
    Entry('aten_fft_ifft2', opinfo=['fft.ifft2']),
    Entry('aten_fft_ifft2_complex', opinfo=['fft.ifft2']),
    Entry('aten_fft_ifftn', opinfo=['fft.ifftn']),
    Entry('aten_fft_ifftn_complex', opinfo=['fft.ifftn']),
    Entry('aten_fft_rfft', opinfo=['fft.rfft']),
    Entry('aten_fft_rfft2', opinfo=['fft.rfft2']),
    Entry('aten_fft_rfftn', opinfo=['fft.rfftn']),
    Entry('aten_fft_irfft', opinfo=['fft.irfft']),
    Entry('aten_fft_irfft_complex', opinfo=['fft.irfft']),
    Entry('aten_fft_irfft2', opinfo=['fft.irfft2']),
    Entry('aten_fft_irfft2_complex', opinfo=['fft.irfft2']),
    Entry('aten_fft_irfftn', opinfo=['fft.irfftn']),
    Entry('aten_fft_irfftn_complex', opinfo=['fft.irfftn']),
    Entry('aten_fft_hfft', opinfo=['fft.hfft']),
    Entry('aten_fft_hfft_complex', opinfo=['fft.hfft']),
    Entry('aten_fft_hfft2', opinfo=['fft.hfft2']),
    # a 3-D hfft2 in complex64: torch's pocketfft float32 is 3.9e-5 off the float64 result, we 1.9e-5
    Entry('aten_fft_hfft2_complex', opinfo=['fft.hfft2'], xfail=[TorchLessAccurate(dtypes=[torch.complex64], samples=[5])]),
    Entry('aten_fft_hfftn', opinfo=['fft.hfftn']),
    Entry('aten_fft_hfftn_complex', opinfo=['fft.hfftn']),
    Entry('aten_fft_ihfft', opinfo=['fft.ihfft']),
    Entry('aten_fft_ihfft2', opinfo=['fft.ihfft2']),
    Entry('aten_fft_ihfftn', opinfo=['fft.ihfftn']),
    # normwise: an FFT is accurate to c·log n·eps·‖x‖ in norm; with entries near finfo.max a bin
    # that torch's MKL gets exactly 0 may be 5e291 in the exact sum (the window's last bit)
    Entry('aten_stft', opinfo=['stft'], normwise=True, xfail=[_MKL_FLOAT32]),
    Entry('aten_stft_complex', opinfo=['stft'], normwise=True, xfail=[_MKL_FLOAT32]),
    Entry('aten_stft_center', samples=stft_center, dtypes=[torch.float32, torch.float64], normwise=True, xfail=[_MKL_FLOAT32]),
    Entry('aten_stft_center_complex', samples=stft_center, dtypes=[torch.complex64, torch.complex128], normwise=True, xfail=[_MKL_FLOAT32]),
    Entry('aten_istft', opinfo=['istft']),
]
