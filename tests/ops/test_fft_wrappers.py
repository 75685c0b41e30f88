"""torch.fft's public transforms (torchlib/ops/fft_wrappers.py): eager and traced against torch,
float32 / float64 and complex64 / complex128, every norm, n / s padding and trimming, default dims,
int inputs, and the errors torch raises too."""

from __future__ import annotations

import math

import pytest
import torch

from torchlib.ops import fft_wrappers as W
from torchlib.testing import check_function, run_dynamic, run_traced

DTYPES = [torch.float32, torch.float64]
COMPLEX = [torch.complex64, torch.complex128]


def _x(shape, dtype, seed=0):
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def _tol(dtype):
    return (1e-5, 1e-5) if dtype in (torch.float32, torch.complex64) else (1e-10, 1e-10)


ONE_D = [
    (W.aten_fft_fft, torch.fft.fft), (W.aten_fft_ifft, torch.fft.ifft), (W.aten_fft_rfft, torch.fft.rfft),
    (W.aten_fft_ihfft, torch.fft.ihfft), (W.aten_fft_irfft, torch.fft.irfft), (W.aten_fft_hfft, torch.fft.hfft),
]
ONE_D_COMPLEX = [
    (W.aten_fft_fft_complex, torch.fft.fft), (W.aten_fft_ifft_complex, torch.fft.ifft),
    (W.aten_fft_irfft_complex, torch.fft.irfft), (W.aten_fft_hfft_complex, torch.fft.hfft),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", [None, "forward", "ortho"])
@pytest.mark.parametrize("fn,ref", ONE_D, ids=lambda v: getattr(v, "__name__", ""))
def test_one_dim_real(fn, ref, norm, dtype):
    x = _x((3, 10), dtype)
    rtol, atol = _tol(dtype)
    for n in (None, 7, 16):
        check_function(fn, (x, n, 0 if n == 7 else -1, norm), expected=ref(x, n, 0 if n == 7 else -1, norm), rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("fn,ref", ONE_D_COMPLEX, ids=lambda v: getattr(v, "__name__", ""))
def test_one_dim_complex(fn, ref, norm, dtype):
    z = _x((4, 9), dtype)
    rtol, atol = _tol(dtype)
    for n in (None, 5, 12):
        check_function(fn, (z, n, -1, norm), expected=ref(z, n, -1, norm), rtol=rtol, atol=atol)


N_D = [
    (W.aten_fft_fft2, torch.fft.fft2, True), (W.aten_fft_fftn, torch.fft.fftn, False),
    (W.aten_fft_ifft2, torch.fft.ifft2, True), (W.aten_fft_ifftn, torch.fft.ifftn, False),
    (W.aten_fft_rfft2, torch.fft.rfft2, True), (W.aten_fft_rfftn, torch.fft.rfftn, False),
    (W.aten_fft_irfft2, torch.fft.irfft2, True), (W.aten_fft_irfftn, torch.fft.irfftn, False),
    (W.aten_fft_hfft2, torch.fft.hfft2, True), (W.aten_fft_hfftn, torch.fft.hfftn, False),
    (W.aten_fft_ihfft2, torch.fft.ihfft2, True), (W.aten_fft_ihfftn, torch.fft.ihfftn, False),
]
N_D_COMPLEX = [
    (W.aten_fft_fft2_complex, torch.fft.fft2, True), (W.aten_fft_fftn_complex, torch.fft.fftn, False),
    (W.aten_fft_ifft2_complex, torch.fft.ifft2, True), (W.aten_fft_ifftn_complex, torch.fft.ifftn, False),
    (W.aten_fft_irfft2_complex, torch.fft.irfft2, True), (W.aten_fft_irfftn_complex, torch.fft.irfftn, False),
    (W.aten_fft_hfft2_complex, torch.fft.hfft2, True), (W.aten_fft_hfftn_complex, torch.fft.hfftn, False),
]


def _n_d_cases(two_d):
    default_dim = (-2, -1) if two_d else None
    return [(None, default_dim), ((4, 6), default_dim), ((3, -1), (0, 2)), (None, (1,)), ((8,), (0,))] + ([] if two_d else [((5, 4), None)])


_N_DIM_CASES = [(fn, ref, two_d, dtype, (5, 6, 7)) for fn, ref, two_d in N_D for dtype in DTYPES] + [
    (fn, ref, two_d, dtype, (4, 6, 5)) for fn, ref, two_d in N_D_COMPLEX for dtype in COMPLEX]


@pytest.mark.parametrize("fn,ref,two_d,dtype,shape", _N_DIM_CASES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_n_dim(fn, ref, two_d, dtype, shape):
    x = _x(shape, dtype)
    rtol, atol = _tol(dtype)
    for norm in (None, "forward", "ortho"):
        for s, dim in _n_d_cases(two_d):
            kwargs = {} if dim is None else {"dim": dim}
            check_function(fn, (x, s), {**kwargs, "norm": norm}, expected=ref(x, s, **kwargs, norm=norm), rtol=rtol, atol=atol)


def test_int_input_computes_in_float32():
    x = torch.arange(12).reshape(3, 4)
    check_function(W.aten_fft_fft, (x,), expected=torch.fft.fft(x))
    check_function(W.aten_fft_irfftn, (x,), expected=torch.fft.irfftn(x), rtol=1e-5, atol=1e-5)
    check_function(W.aten_fft_ihfft2, (x.to(torch.int32),), expected=torch.fft.ihfft2(x.to(torch.int32)), rtol=1e-5, atol=1e-5)


def test_errors_like_torch():
    with pytest.raises(ValueError, match="normalization"):
        W.aten_fft_fft(torch.randn(4), norm="sideways")
    with pytest.raises(TypeError, match="no complex variant"):
        W.aten_fft_rfft(torch.randn(4, dtype=torch.complex64))
    with pytest.raises(ValueError, match="unique"):
        W.aten_fft_fftn(torch.randn(4, 4), dim=[0, -2])
    with pytest.raises(ValueError, match="Invalid number of data points"):
        W.aten_fft_irfft_complex(torch.randn(1, dtype=torch.complex64))
    with pytest.raises(TypeError, match="unsupported dtype"):
        W.aten_fft_fft(torch.randn(4, dtype=torch.float16))


def test_dynamic_sizes():
    x = _x((2, 6, 8), torch.float32)
    z = _x((2, 6, 8), torch.complex64)
    for fn, ref, arg in ((W.aten_fft_fft, torch.fft.fft, x), (W.aten_fft_rfftn, torch.fft.rfftn, x), (W.aten_fft_ihfft2, torch.fft.ihfft2, x),
                         (W.aten_fft_ifft_complex, torch.fft.ifft, z), (W.aten_fft_fftn_complex, torch.fft.fftn, z)):  # fmt: skip
        torch.testing.assert_close(run_dynamic(fn, arg), ref(arg), rtol=1e-5, atol=1e-5)
    for n in (4, 8, 11):  # n on a dynamic axis: trimmed or padded in the graph
        torch.testing.assert_close(run_dynamic(lambda a: W.aten_fft_fft(a, n, 1), x), torch.fft.fft(x, n, 1), rtol=1e-5, atol=1e-5)
    # a c2r output length from a dynamic size: a clear error
    with pytest.raises(Exception, match="pass n="):
        run_dynamic(W.aten_fft_irfft_complex, z)
    torch.testing.assert_close(run_dynamic(lambda a: W.aten_fft_irfftn_complex(a, [6, 8], [1, 2]), z), torch.fft.irfftn(z, [6, 8], [1, 2]),
                               rtol=1e-5, atol=1e-5)


def test_real_input_made_complex_keeps_inf_and_nan_out_of_the_imaginary_part():
    # fftn over no dim: only the promotion to complex (a zero imaginary part, not inf * 0)
    x = torch.tensor([[1.0, math.inf, 2.0, 0.5], [0.0, -math.inf, math.nan, 3.0]])
    for result in (W.aten_fft_fftn(x, None, []), run_traced(lambda a: W.aten_fft_fftn(a, None, []), x)):
        torch.testing.assert_close(result, torch.fft.fftn(x, dim=[]), equal_nan=True)
