"""fft, stft and istft functions on edge inputs: accuracy for lengths that are not powers of two
(onnxruntime's float32 DFT is a float32 direct sum there), every norm mode, dynamic lengths,
odd output lengths of c2r, and errors torch also raises."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import fft as F
from torchlib.ops import spectral as S
from torchlib.testing import check_function, run_dynamic

aten = torch.ops.aten


@pytest.mark.parametrize("n", [400, 97, 256])
def test_float32_transform_accuracy(n):
    x = torch.randn(3, n, generator=torch.Generator().manual_seed(n))
    check_function(F.aten__fft_r2c, (x, [1], 0, True), expected=aten._fft_r2c(x, [1], 0, True))
    z = torch.randn(3, n, dtype=torch.complex64, generator=torch.Generator().manual_seed(n))
    check_function(F.aten__fft_c2c, (z, [1], 2, False), expected=aten._fft_c2c(z, [1], 2, False))


@pytest.mark.parametrize("normalization", [0, 1, 2])
@pytest.mark.parametrize("forward", [True, False])
def test_c2c_norm_modes_over_several_dims(normalization, forward):
    z = torch.randn(4, 6, 5, dtype=torch.complex128, generator=torch.Generator().manual_seed(0))
    check_function(F.aten__fft_c2c, (z, [0, 2], normalization, forward), expected=aten._fft_c2c(z, [0, 2], normalization, forward))


@pytest.mark.parametrize("last_dim_size", [1, 2, 9, 10])
def test_c2r_output_lengths(last_dim_size):
    z = torch.randn(3, 6, dtype=torch.complex64, generator=torch.Generator().manual_seed(0))
    half = z[:, : last_dim_size // 2 + 1]  # torch's _fft_c2r takes exactly n // 2 + 1 bins
    check_function(F.aten__fft_c2r, (half, [1], 2, last_dim_size), expected=aten._fft_c2r(half, [1], 2, last_dim_size))


def test_r2c_float64_and_two_sided():
    x = torch.randn(5, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    check_function(F.aten__fft_r2c, (x, [0, 1], 1, False), expected=aten._fft_r2c(x, [0, 1], 1, False), rtol=1e-12, atol=1e-12)


def test_dynamic_length():
    x = torch.randn(2, 30, generator=torch.Generator().manual_seed(0))
    torch.testing.assert_close(run_dynamic(lambda a: F.aten__fft_r2c(a, [1], 1, True), x), aten._fft_r2c(x, [1], 1, True))


def test_stft_dynamic_signal_length():
    x = torch.randn(2, 100, generator=torch.Generator().manual_seed(0))
    w = torch.hann_window(16)
    expected = torch.stft(x, 16, 4, window=w, center=False, return_complex=True)
    torch.testing.assert_close(run_dynamic(lambda a, w: S.aten_stft(a, 16, 4, window=w, return_complex=True), x, w), expected)


def test_stft_errors_like_torch():
    with pytest.raises(ValueError, match="requires return_complex"):
        S.aten_stft(torch.randn(40), 8)
    with pytest.raises(ValueError, match="n_fft"):
        S.aten_stft(torch.randn(4), 8, return_complex=True)
    with pytest.raises(ValueError, match="pad_mode"):
        S.aten_stft_center(torch.randn(40), 8, pad_mode="symmetric", return_complex=True)


def test_istft_length_longer_than_the_signal():
    spec = torch.stft(torch.randn(60), 16, 4, window=torch.hann_window(16), return_complex=True)
    expected = torch.istft(spec, 16, 4, window=torch.hann_window(16), length=80)
    check_function(S.aten_istft, (spec, 16, 4), {"window": torch.hann_window(16), "length": 80}, expected=expected, rtol=1e-5, atol=1e-6)


def test_float64_r2c_near_max_has_no_nan_where_torch_is_finite():
    """Issue 13, fuzz `huge`: onnxruntime's chirp-z DFT of a length that is not a power of two
    overflowed inside (NaN) on float64 values near finfo.max; the input is scaled by a power of
    two first. Its roundoff (about eps * max|x| in every bin) remains, so values are compared to
    that scale."""
    from torchlib.ops.fft import aten__fft_r2c

    info = torch.finfo(torch.float64)
    x = torch.randn(3, 10, dtype=torch.float64)
    x[0, :2] = torch.tensor([info.max / 4, -info.max / 4], dtype=torch.float64)
    expected = torch.ops.aten._fft_r2c(x, [1], 1, False)
    actual = aten__fft_r2c(x, [1], 1, False)
    assert torch.isfinite(torch.view_as_real(expected)).all()
    torch.testing.assert_close(torch.view_as_real(actual), torch.view_as_real(expected), rtol=1e-12, atol=1e-13 * info.max)
    tiny = torch.randn(2, 10, dtype=torch.float64) * 1e-310  # subnormal: not scaled, no bits lost
    torch.testing.assert_close(aten__fft_r2c(tiny, [1], 0, True), torch.ops.aten._fft_r2c(tiny, [1], 0, True), rtol=1e-7, atol=0)


@pytest.mark.parametrize("n, onesided", [(10, True), (10, False), (7, True), (12, False)])
def test_real_input_bins_with_an_exactly_zero_imaginary_part(n, onesided):
    """Issue 13, fuzz `huge`/`nan_inf`: torch's rfft leaves Im X[0] (and Im X[n/2] for even n) at
    exactly 0, whatever the input holds; onnxruntime's chirp-z DFT put its roundoff there
    (7e22 next to 3.4e38) or NaN."""
    info = torch.finfo(torch.float32)
    x = torch.randn(3, n)
    x[0, :3] = torch.tensor([info.max, -info.max, info.max / 3])
    x[1, 2] = float("nan")
    expected = torch.ops.aten._fft_r2c(x, [1], 0, onesided)
    actual = F.aten__fft_r2c(x, [1], 0, onesided)
    zero_bins = [0] + ([n // 2] if n % 2 == 0 else [])
    assert (expected.imag[:, zero_bins] == 0).all()
    assert (actual.imag[:, zero_bins] == 0).all()
    spec = S.aten_stft(x[0], n, 2, None, None, False, None, True)
    assert (spec.imag[zero_bins] == 0).all()
