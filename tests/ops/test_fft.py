"""fft, stft and istft functions on edge inputs: accuracy for lengths that are not powers of two
(onnxruntime's float32 DFT is a float32 direct sum there), every norm mode, dynamic lengths,
odd output lengths of c2r, and errors torch also raises."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchlib.ops import fft as F
from torchlib.ops import spectral as S
from torchlib.testing import check_function, run_dynamic, run_traced, trace

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
    two first. (n = 10 is now the direct sum, accurate part by part: test_float64_near_max_with_a_
    small_imaginary_part; this keeps the normwise check.)"""
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


# -- infinities and NaNs (module docstring of fft.py) ----------------------------------------------
def _with_specials(x: torch.Tensor) -> torch.Tensor:
    """x [rows >= 5, ..., n] with several infs and NaNs per signal along the last dim, in the real
    and (complex x) imaginary parts: at 0, next to each other, at n/2, and +inf with -inf in one
    signal."""
    x = x.clone()
    n = x.shape[-1]
    parts = torch.view_as_real(x) if x.is_complex() else x.unsqueeze(-1)
    inf, nan = float("inf"), float("nan")
    parts[0, ..., 0, 0] = nan
    parts[1, ..., 0, 0] = inf
    parts[1, ..., min(2, n - 1), 0] = -inf
    parts[2, ..., min(1, n - 1), 0] = inf
    parts[2, ..., min(3, n - 1), 0] = inf
    parts[3, ..., n // 2, 0] = -inf
    parts[4, ..., n - 1, -1] = inf  # the imaginary part of a complex x
    parts[4, ..., 0, -1] = nan
    return x


def _check_parts(fn, args, expected, rtol=1e-4, atol=1e-4):
    """fn eager and traced equal torch's `expected` part by part (assert_close on a complex value
    with an infinite part compares a NaN difference)."""
    for how, actual in (("eager", fn(*args)), ("traced", run_traced(fn, *args))):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, how
        a, e = (torch.view_as_real(v) if v.is_complex() else v for v in (actual, expected))
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m, how=how: f"{how}: {m}")


@pytest.mark.parametrize("n", [5, 7, 8, 12])
@pytest.mark.parametrize("onesided", [True, False])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_r2c_with_inf_and_nan_like_torch(n, onesided, dtype):
    """Issue: onnxruntime's DFT made every bin of a signal holding an inf or NaN NaN; torch's has
    a finite Im X_0, and the infinities of the direct sum where no NaN enters."""
    x = _with_specials(torch.randn(6, n, dtype=dtype, generator=torch.Generator().manual_seed(n)))
    for normalization in (0, 1, 2):
        _check_parts(lambda t, k=normalization: F.aten__fft_r2c(t, [1], k, onesided), (x,), aten._fft_r2c(x, [1], normalization, onesided))


# torch's inf / NaN pattern of a length-12 c2c transform depends on the CPU's FFT code path:
# on some CPUs (seen 2026-11-28, an x86_64 without AVX-512 in its flags) torch gives NaN in 40 of
# 144 terms where ours and other CPUs give inf; not strict, because other CPUs pass
_CPU_DEPENDENT = pytest.mark.xfail(strict=False, reason="torch's specials at n=12 depend on the CPU's FFT path")


@pytest.mark.parametrize("n", [4, 6, 11, pytest.param(12, marks=_CPU_DEPENDENT)])
@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_c2c_with_inf_and_nan_like_torch(n, forward, dtype):
    x = _with_specials(torch.randn(6, n, dtype=dtype, generator=torch.Generator().manual_seed(n)))
    for normalization in (0, 1, 2):
        _check_parts(lambda t, k=normalization: F.aten__fft_c2c(t, [1], k, forward), (x,), aten._fft_c2c(x, [1], normalization, forward))


@pytest.mark.parametrize("last_dim_size", [5, 6, 11, 12])
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_c2r_with_inf_and_nan_like_torch(last_dim_size, dtype):
    """The Hermitian extension doubles each special term (same sign); the imaginary parts of X_0
    and X_{n/2} drop out, NaN or not."""
    x = _with_specials(torch.randn(6, last_dim_size // 2 + 1, dtype=dtype, generator=torch.Generator().manual_seed(last_dim_size)))
    for normalization in (0, 2):
        _check_parts(lambda t, k=normalization: F.aten__fft_c2r(t, [1], k, last_dim_size), (x,), aten._fft_c2r(x, [1], normalization, last_dim_size))


@pytest.mark.parametrize("op_name, dims", [("r2c", [0, 2]), ("r2c", [2, 1, 0]), ("c2c", [1, 2]), ("c2c", [0, 1, 2]), ("c2r", [0, 2]), ("c2r", [1, 2])])
def test_several_axes_with_inf_and_nan_like_torch(op_name, dims):
    """Axis after axis, as torch: the infinities of one axis's bins enter the next axis's sums
    (three specials in the whole tensor, so that not every output part is NaN)."""
    g = torch.Generator().manual_seed(0)
    dtype = {"r2c": torch.float32, "c2c": torch.complex64, "c2r": torch.complex128}[op_name]
    x = torch.randn(6, 5, 4, dtype=dtype, generator=g)
    parts = torch.view_as_real(x) if x.is_complex() else x.unsqueeze(-1)
    parts[0, 0, 0, 0], parts[3, 2, 1, -1], parts[5, 1, 3, 0] = float("inf"), float("-inf"), float("nan") if op_name != "c2c" else float("inf")
    if op_name == "r2c":
        fn, expected = (lambda t: F.aten__fft_r2c(t, dims, 2, True)), aten._fft_r2c(x, dims, 2, True)
    elif op_name == "c2c":
        fn, expected = (lambda t: F.aten__fft_c2c(t, dims, 0, False)), aten._fft_c2c(x, dims, 0, False)
    else:
        fn, expected = (lambda t: F.aten__fft_c2r(t, dims, 2, 6)), aten._fft_c2r(x, dims, 2, 6)
    assert not torch.view_as_real(expected.to(torch.complex128)).isnan().all()
    _check_parts(fn, (x,), expected)


def test_stft_with_inf_and_nan_like_torch():
    x = torch.randn(2, 60, generator=torch.Generator().manual_seed(0))
    x[0, 7], x[0, 30], x[1, 12], x[1, 14] = float("nan"), float("inf"), float("inf"), float("-inf")
    w = torch.hann_window(12)
    expected = torch.stft(x, 12, 4, window=w, return_complex=True)
    _check_parts(lambda a, w: S.aten_stft_center(a, 12, 4, window=w, return_complex=True), (x, w), expected)


def _direct_sum(x: np.ndarray, bins: int) -> np.ndarray:
    """The forward DFT along the last axis of a complex128 x term by term, a twiddle part that is
    exactly 0 adding nothing (the rule in fft.py's docstring), from numpy's cos and sin."""
    n = x.shape[-1]
    m = np.arange(n)[:, None] * np.arange(bins)[None, :] % n
    c, s = np.cos(2 * np.pi * m / n), -np.sin(2 * np.pi * m / n)
    c[(4 * m == n) | (4 * m == 3 * n)], s[(m == 0) | (2 * m == n)] = 0, 0
    a, b = x.real[..., :, None], x.imag[..., :, None]
    with np.errstate(invalid="ignore"):
        re = (np.where(c != 0, a * c, 0) - np.where(s != 0, b * s, 0)).sum(-2)
        im = (np.where(s != 0, a * s, 0) + np.where(c != 0, b * c, 0)).sum(-2)
    return np.stack([re, im], -1)


@pytest.mark.parametrize("n", [9, 64, 400])
def test_factorised_lengths_give_the_direct_sum_torch_only_adds_nans(n):
    """Lengths MKL factorises: torch combines infinities inside its butterflies (inf - inf) and
    answers NaN in some parts where the direct sum is +-inf or finite; we keep the direct sum.
    Every part where torch is not NaN equals ours."""
    x = _with_specials(torch.randn(6, n, dtype=torch.complex128, generator=torch.Generator().manual_seed(n)))
    expected = torch.from_numpy(_direct_sum(x.numpy(), n))
    for how, actual in (("eager", F.aten__fft_c2c(x, [1], 0, True)), ("traced", run_traced(lambda t: F.aten__fft_c2c(t, [1], 0, True), x))):
        torch.testing.assert_close(torch.view_as_real(actual), expected, rtol=1e-9, atol=1e-9 * n, equal_nan=True, msg=lambda m, how=how: f"{how}: {m}")
    ours, theirs = torch.view_as_real(F.aten__fft_c2c(x, [1], 0, True)), torch.view_as_real(aten._fft_c2c(x, [1], 0, True))
    kept = ~theirs.isnan()
    torch.testing.assert_close(ours[kept], theirs[kept], rtol=1e-9, atol=1e-9 * n)
    real = _with_specials(torch.randn(6, n, dtype=torch.float64, generator=torch.Generator().manual_seed(n)))
    expected = torch.from_numpy(_direct_sum(real.numpy().astype(np.complex128), n // 2 + 1))
    torch.testing.assert_close(torch.view_as_real(F.aten__fft_r2c(real, [1], 0, True)), expected, rtol=1e-9, atol=1e-9 * n, equal_nan=True)


def test_twiddle_signs_are_those_of_cos_and_sin():
    for n in range(1, 130):
        c, s = F._twiddle_signs(n)
        m = np.arange(n)
        exact_c, exact_s = (4 * m == n) | (4 * m == 3 * n), (m == 0) | (2 * m == n)
        assert (c[exact_c] == 0).all() and (np.sign(np.cos(2 * np.pi * m / n))[~exact_c] == c[~exact_c]).all()
        assert (s[exact_s] == 0).all() and (np.sign(-np.sin(2 * np.pi * m / n))[~exact_s] == s[~exact_s]).all()


def test_finite_inputs_skip_the_special_values_path():
    """Traced, the counts run inside an If taken only when the input holds an inf or NaN: the
    main graph holds no MatMul, the else branch is the plain DFT."""
    model, _, _ = trace(lambda t: F.aten__fft_r2c(t, [1], 0, True), (torch.randn(3, 400),))
    kinds = [node.op_type for node in model.graph.node]
    assert "If" in kinds and "MatMul" not in kinds and "DFT" not in kinds
    branches = {a.name: [n.op_type for n in a.g.node] for n in model.graph.node if n.op_type == "If" for a in n.attribute}
    assert "MatMul" in branches["then_branch"] and "MatMul" not in branches["else_branch"] and "DFT" in branches["else_branch"]


# -- small lengths: the direct sum with exact twiddles (fft.py's `_matmul_dft`) ---------------------
_SPIKE = {torch.float32: 1e12, torch.float64: 1e10, torch.complex64: 1e12, torch.complex128: 1e10}


def _spiky(shape: list[int], dtype: torch.dtype, axis: int, at: int) -> torch.Tensor:
    """Random values of size 1 with one spike per signal along `axis` (in row 0 of the first other
    dim), at `at`, a sample whose twiddles are all exactly 0 or +-1 (j = 0, n/4, n/2): each output
    part holds the spike times +-1 or nothing at all. onnxruntime's chirp-z DFT put about
    eps * spike of roundoff into every part (1e-6 at 1e10 in float64)."""
    x = torch.randn(shape, dtype=dtype, generator=torch.Generator().manual_seed(sum(shape) + at))
    index = [0] * len(shape)
    index[axis] = at
    for i in range(shape[-1] if axis != len(shape) - 1 else 1):  # every signal of the first row
        if axis != len(shape) - 1:
            index[-1] = i
        x[tuple(index)] = -_SPIKE[dtype]  # real (complex x: imaginary part 0)
    return x


def _spike_positions(n: int) -> list[int]:
    return [0] + [n // 2] * (n % 2 == 0) + [n // 4] * (n % 4 == 0)


def _wide(aten_fn, x: torch.Tensor, *args):
    """torch's answer computed in float64 (complex128), rounded to x's precision: torch's float32
    MKL transforms of lengths it factorises (32, 64) leak the spike into the parts it does not
    enter (Im X_k off by 7 at n = 64 with a 1e12 spike, the float64 direct sum by 3e-6): ours, the
    float32 rounding of the float64 direct sum, is compared to the float64 answer."""
    wide = {torch.float32: torch.float64, torch.complex64: torch.complex128}.get(x.dtype, x.dtype)
    y = aten_fn(x.to(wide), *args)
    return y.to({torch.float64: torch.float32, torch.complex128: torch.complex64}[y.dtype]) if wide is not x.dtype else y


def _check_close(fn, args, expected, rtol, atol):
    for how, actual in (("eager", fn(*args)), ("traced", run_traced(fn, *args))):
        a, e = (torch.view_as_real(v) if v.is_complex() else v for v in (actual, expected))
        torch.testing.assert_close(a, e, rtol=rtol, atol=atol, msg=lambda m, how=how: f"{how}: {m}")


_SMALL = [3, 5, 6, 7, 10, 12, 31, 64]
_TOL = {torch.float32: (2e-6, 1e-5), torch.float64: (1e-12, 1e-10)}  # chirp-z roundoff: 1e-4 (f32), 1e-6 (f64)


@pytest.mark.parametrize("n", _SMALL)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_r2c_small_lengths_bin_by_bin_with_a_spike(n, dtype):
    """Issue (fuzz `huge`): a spike or large offset made onnxruntime's chirp-z roundoff (eps *
    max|x|) appear in every bin, also in parts the spike does not enter (Im X_0); torch's MKL is
    accurate part by part at the lengths it computes directly, and so is the direct sum. At 64,
    which MKL factorises, its r2c leaks the spike into the imaginary parts too (8e-7 at 1e10 in
    float64): there the reference is the float64 direct sum (`_direct_sum`)."""
    rtol, atol = _TOL[dtype]

    def expected(x: torch.Tensor, normalization: int, onesided: bool) -> torch.Tensor:
        if n != 64:
            return _wide(aten._fft_r2c, x, [1], normalization, onesided)
        signals = x.double().movedim(1, -1).numpy().astype(np.complex128)
        y = torch.view_as_complex(torch.from_numpy(_direct_sum(signals, n // 2 + 1 if onesided else n)).contiguous())
        return (y * n ** {0: 0, 1: -0.5}[normalization]).movedim(-1, 1).to(torch.complex64 if dtype is torch.float32 else torch.complex128)

    for at in _spike_positions(n):
        x = _spiky([4, n, 3], dtype, 1, at)
        for onesided in (True, False):
            _check_close(lambda t, o=onesided: F.aten__fft_r2c(t, [1], 1, o), (x,), expected(x, 1, onesided), rtol, atol)
        y = _spiky([3, n], dtype, 1, at)
        _check_close(lambda t: F.aten__fft_r2c(t, [1], 0, True), (y,), expected(y, 0, True), rtol, atol)


@pytest.mark.parametrize("n", _SMALL)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_c2c_small_lengths_bin_by_bin_with_a_spike(n, dtype):
    rtol, atol = _TOL[torch.float32 if dtype is torch.complex64 else torch.float64]
    for at in _spike_positions(n):
        x = _spiky([n, 2, 3], dtype, 0, at)
        for forward in (True, False):
            _check_close(lambda t, f=forward: F.aten__fft_c2c(t, [0], 2, f), (x,), _wide(aten._fft_c2c, x, [0], 2, forward), rtol, atol)


@pytest.mark.parametrize("n", [12, 20, 64])
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_c2r_small_lengths_bin_by_bin_with_a_spike(n, dtype):
    """A real spike at bin n/4 (and so at 3n/4 in the Hermitian extension) enters the odd samples
    with a twiddle exactly 0: they hold the other bins alone."""
    rtol, atol = _TOL[torch.float32 if dtype is torch.complex64 else torch.float64]
    x = torch.randn(3, n // 2 + 1, dtype=dtype, generator=torch.Generator().manual_seed(n))
    x[0, n // 4] = _SPIKE[dtype]
    for normalization in (0, 1):
        _check_close(lambda t, k=normalization: F.aten__fft_c2r(t, [1], k, n), (x,), _wide(aten._fft_c2r, x, [1], normalization, n), rtol, atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_several_small_axes_with_a_spike(dtype):
    rtol, atol = _TOL[dtype]
    x = torch.randn(6, 5, 10, dtype=dtype, generator=torch.Generator().manual_seed(0))
    x[0, 0, 0] = _SPIKE[dtype]
    _check_close(lambda t: F.aten__fft_r2c(t, [0, 2], 1, True), (x,), _wide(aten._fft_r2c, x, [0, 2], 1, True), rtol, atol)
    z = x.to(torch.complex64 if dtype is torch.float32 else torch.complex128)
    _check_close(lambda t: F.aten__fft_c2c(t, [2, 0, 1], 0, False), (z,), _wide(aten._fft_c2c, z, [2, 0, 1], 0, False), rtol, atol * 30)


def test_float64_near_max_with_a_small_imaginary_part():
    """Issue (fuzz `huge`, fft(x, n=10, norm='ortho')): samples near finfo.max at j = 0 and
    j = n/2 enter imaginary parts with a twiddle exactly 0: those hold the other samples alone
    (size 1), where the chirp-z DFT gave 5e292. Per signal, the huge one is scaled by 2^-k for the
    sum (no overflow) and the small one untouched."""
    info = torch.finfo(torch.float64)
    x = torch.randn(3, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    x[0, 0], x[0, 5] = info.max / 2, -info.max / 4
    x[1] *= 1e-310  # subnormal: no bits lost
    for normalization in (0, 1):
        expected = aten._fft_c2c(x.to(torch.complex128), [1], normalization, True)
        assert torch.isfinite(torch.view_as_real(expected)).all()
        _check_close(lambda t, k=normalization: F.aten__fft_r2c(t, [1], k, False), (x,), expected, 1e-12, 1e-10)
        tiny = aten._fft_r2c(x[1:2], [1], normalization, False)
        torch.testing.assert_close(F.aten__fft_r2c(x, [1], normalization, False)[1:2], tiny, rtol=1e-12, atol=0)


def test_twiddles_exactly_rounded():
    """cos and sin of 2 pi m / n: exactly 0 and +-1 where they are so, every other within half
    an ulp of long double's value (the angle folded into [0, pi/4] first)."""
    for n in range(1, 130):
        c, s = F._twiddles(n)
        m = np.arange(n)
        assert (c[(4 * m == n) | (4 * m == 3 * n)] == 0).all() and (s[(m == 0) | (2 * m == n)] == 0).all()
        assert (c[m == 0] == 1).all() and (c[2 * m == n] == -1).all() and (s[4 * m == n] == -1).all() and (s[4 * m == 3 * n] == 1).all()
        np.testing.assert_allclose(c, np.cos(2 * np.pi * m / n), rtol=0, atol=2e-15)  # numpy rounds the angle 2 pi m / n (up to 8.9e-16 off)
        np.testing.assert_allclose(s, -np.sin(2 * np.pi * m / n), rtol=0, atol=2e-15)


def test_small_lengths_are_one_matmul():
    """Static lengths up to fft._MATMUL_MAX_LENGTH: no DFT node (onnxruntime's chirp-z); above, DFT."""
    model, _, _ = trace(lambda t: F.aten__fft_r2c(t, [1], 0, True), (torch.randn(3, 10),))
    else_branch = next(a.g for n in model.graph.node if n.op_type == "If" for a in n.attribute if a.name == "else_branch")
    kinds = [node.op_type for node in else_branch.node]
    assert "MatMul" in kinds and "DFT" not in kinds


@pytest.mark.parametrize("n", [5, 6, 7, 10, 12, 31])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_even_real_signals_have_imaginary_parts_exactly_zero(n, dtype):
    """Issue (fuzz `huge`, stft centred with reflect padding and a symmetric window): a real signal
    with x_{n-j} = x_j has a real DFT; the direct sum left the roundoff of the cancelling +-t terms
    (8e-7 next to a 1e10 pair) where torch gives 0. The pairs j, n - j of a real signal enter as
    their sum and difference (`_fold`), as torch's butterflies pair them."""
    x = torch.randn(3, n, dtype=dtype, generator=torch.Generator().manual_seed(n))
    x[:, 1:] = (x[:, 1:] + x[:, 1:].flip(-1)) / 2
    x[0, 1] = x[0, n - 1] = _SPIKE[dtype]
    rtol, atol = _TOL[dtype]
    for onesided in (True, False):
        expected = aten._fft_r2c(x, [1], 1, onesided)
        for how, actual in (("eager", F.aten__fft_r2c(x, [1], 1, onesided)), ("traced", run_traced(lambda t, o=onesided: F.aten__fft_r2c(t, [1], 1, o), x))):
            assert (expected.imag == 0).all() and (actual.imag == 0).all(), how
            torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, msg=lambda m, how=how: f"{how}: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_small_lengths_of_an_empty_batch(dtype):
    """No signal: an empty result of the right shape (torch's MKL raises "Inconsistent
    configuration parameters" there). onnxruntime does not reduce the negative axes of an empty
    tensor (ReduceMax over [-2, -1] of [0, 3, 7, 1] kept its shape), which broke the per-signal
    overflow scaling."""
    x = torch.randn(0, 3, 7, dtype=dtype)
    for how, actual in (("eager", F.aten__fft_r2c(x, [2], 0, True)), ("traced", run_traced(lambda t: F.aten__fft_r2c(t, [2], 0, True), x))):
        assert actual.shape == (0, 3, 4) and actual.dtype == dtype.to_complex(), how


def test_small_lengths_with_a_dynamic_batch():
    """A static length with dynamic other dims (an exported model's batch) takes the MatMul: the
    reshapes copy the leading dims (0), the transposes move the axis."""
    from graph_builder import GraphBuilder, types
    from torchlib.testing import run_model

    x = torch.randn(4, 6, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    g = GraphBuilder(opset=23)
    v = g.input("input_0", types.from_torch(x.dtype), ["batch", 6, 10])
    with g:
        out = F.aten__fft_r2c(v, [1, 2], 1, False)
    name = g.output(out, "output_0").name
    model = g.to_model()
    else_branch = [a.g for n in model.graph.node if n.op_type == "If" for a in n.attribute if a.name == "else_branch"]
    assert all("DFT" not in [node.op_type for node in b.node] for b in else_branch)
    torch.testing.assert_close(run_model(model, {"input_0": x.numpy()}, name), aten._fft_r2c(x, [1, 2], 1, False), rtol=1e-12, atol=1e-12)
