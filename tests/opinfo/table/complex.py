"""Expectations for torchlib/ops/complex.py and complex_shape.py (complex variants run
complex64; the functions that make complex tensors from real ones run the real dtypes)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, XFail, sample_input

NO_COMPLEX32 = XFail("torch makes a complex32 (ComplexHalf) tensor from float16; ONNX has no complex32 type", dtypes=[torch.float16])


def complex_scalar_and_tensor(dtype: torch.dtype) -> Iterator[Any]:
    """pow.Scalar: a Python complex or real base, a complex exponent tensor."""
    g = torch.Generator().manual_seed(0)
    for base, shape in ((2.0, (3, 4)), (1.5 - 0.5j, (5,)), (0.5j, ())):
        yield sample_input(base, torch.randn(shape, dtype=dtype, generator=g))


def stft_center(dtype: torch.dtype) -> Iterator[Any]:
    """stft.center with every pad mode (torch.stft pads in Python and calls aten::stft)."""
    g = torch.Generator().manual_seed(0)
    real = torch.float64 if dtype in (torch.float64, torch.complex128) else torch.float32
    for mode in ("reflect", "constant", "replicate", "circular"):
        x = torch.randn(2, 40, dtype=dtype, generator=g)
        yield sample_input(x, 12, hop_length=3, window=torch.hann_window(10, dtype=real), win_length=10, center=True,
                           pad_mode=mode, return_complex=True)
    yield sample_input(torch.randn(33, dtype=dtype, generator=g), 8, center=True, normalized=True, return_complex=True,
                       onesided=False if dtype.is_complex else None)
    yield sample_input(torch.randn(33, dtype=dtype, generator=g), 8, hop_length=2, center=False, return_complex=dtype.is_complex)


def complex_tensors(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(0)
    for shape in ((), (5,), (3, 4), (2, 0, 3)):
        yield sample_input(torch.randn(shape, dtype=dtype, generator=g))


def to_dtypes(dtype: torch.dtype) -> Iterator[Any]:
    """to.dtype_layout: a complex tensor to every dtype (and None), and a real one to complex."""
    g = torch.Generator().manual_seed(0)
    for target in (None, torch.complex64, torch.complex128, torch.float32, torch.float64):
        yield sample_input(torch.randn(3, 4, dtype=dtype, generator=g), dtype=target)
    yield sample_input(torch.randn(2, 0, dtype=dtype, generator=g), dtype=torch.complex128)


def complex_and_scalar(dtype: torch.dtype) -> Iterator[Any]:
    """add.Scalar / sub.Scalar: a complex tensor, a Python number (complex too), alpha."""
    g = torch.Generator().manual_seed(0)
    for other, alpha in ((2.5, 1), (1 - 2j, 1), (3, 2), (0.5j, 1.5 + 1j)):
        yield sample_input(torch.randn((3, 4), dtype=dtype, generator=g), other, alpha)


def real_tensors(dtype: torch.dtype) -> Iterator[Any]:
    g = torch.Generator().manual_seed(0)
    for shape in ((), (5,), (3, 4)):
        yield sample_input((torch.randn(shape, generator=g) * 10).to(dtype))


# complex products: float32 sums of products in another order than torch's; against complex128
# on the matmul OpInfo samples torch is off by up to 4.3e-6 relative, ours by 3.2e-6
PRODUCT_TOL = {torch.complex64: (5e-6, 2e-5)}
PRODUCT_TOL_REASON = "float32 sums of products in another order than torch's: against complex128 torch is off by up to 4.3e-6 relative, ours by 3.2e-6"
REAL = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64, torch.int32, torch.bool]
COMPLEX = [torch.complex64, torch.complex128]

ENTRIES = [
    # views between complex and real, construction
    Entry('aten_view_as_real', opinfo=['view_as_real']),
    Entry('aten_view_as_complex', opinfo=['view_as_complex'], xfail=[NO_COMPLEX32]),
    Entry('aten_complex', opinfo=['complex'], xfail=[NO_COMPLEX32]),
    Entry('aten_polar', opinfo=['polar'], xfail=[XFail(NO_COMPLEX32.reason, dtypes=[torch.float16], torch_version='>=2.14')]),  # torch 2.14 on: float16 polar
    Entry('aten_real', opinfo=['real']),
    Entry('aten_real_real', opinfo=['real']),
    Entry('aten_imag', opinfo=['imag']),
    Entry('aten_conj_physical', opinfo=['conj', 'conj_physical']),  # conj_physical, conj, _conj, _conj_physical
    # torch.conj & co. on real tensors return them without an ATen call: samples of its own
    Entry('aten_conj_physical_real', samples=real_tensors, dtypes=REAL, reference=torch.conj_physical),
    Entry('aten_resolve_conj', opinfo=['resolve_conj', 'resolve_neg']),
    # one complex tensor
    Entry('aten_abs_complex', opinfo=['abs']),
    Entry('aten_angle_complex', opinfo=['angle']),
    Entry('aten_angle', opinfo=['angle']),
    Entry('aten_sgn_complex', opinfo=['sgn']),
    Entry('aten_neg_complex', opinfo=['neg']),
    Entry('aten_reciprocal_complex', opinfo=['reciprocal']),
    Entry('aten_rsqrt_complex', opinfo=['rsqrt']),
    Entry('aten_exp_complex', opinfo=['exp']),
    Entry('aten_log_complex', opinfo=['log']),
    Entry('aten_sqrt_complex', opinfo=['sqrt']),
    # binary arithmetic
    Entry('aten_add_complex', opinfo=['add']),
    Entry('aten_add_scalar_complex', samples=complex_and_scalar, dtypes=COMPLEX),
    Entry('aten_sub_complex', opinfo=['sub']),
    Entry('aten_sub_scalar_complex', samples=complex_and_scalar, dtypes=COMPLEX),
    Entry('aten_rsub_complex', opinfo=['rsub']),
    Entry('aten_mul_complex', opinfo=['mul']),  # mul.Tensor, mul.Scalar
    Entry('aten_div_complex', opinfo=[('div', 'no_rounding_mode')]),  # div.Tensor, div.Scalar
    # torch's complex64 pow computes exp(w log z) in float32: up to 3.2e-6 relative error against
    # complex128 on the OpInfo samples; ours computes it in float64 (5.7e-8)
    Entry('aten_pow_complex', opinfo=['pow'], tol={torch.complex64: (5e-6, 1e-5)}, tol_reason="torch's complex64 pow computes exp(w log z) in float32: 3.2e-6 relative error against complex128 on the OpInfo samples, ours 5.7e-8"),  # pow.Tensor_Tensor, pow.Tensor_Scalar
    Entry('aten_pow_scalar_complex', samples=complex_scalar_and_tensor, dtypes=COMPLEX),
    Entry('aten__to_copy_complex', opinfo=['to']),
    Entry('aten_to_dtype_complex', opinfo=['to', 'cfloat', 'cdouble']),
    Entry('aten_to_dtype_layout_complex', samples=to_dtypes, dtypes=COMPLEX, reference=torch.ops.aten.to.dtype_layout),
    # creation and selection
    Entry('aten_full_complex', opinfo=['full']),
    Entry('aten_zeros_complex', opinfo=['zeros']),
    Entry('aten_ones_complex', opinfo=['ones']),
    Entry('aten_full_like_complex', opinfo=['full_like']),
    Entry('aten_zeros_like_complex', opinfo=['zeros_like']),
    Entry('aten_ones_like_complex', opinfo=['ones_like']),
    Entry('aten_where_complex', opinfo=['where']),
    # shape and indexing on the logical shape
    Entry('aten_cat_complex', opinfo=['cat']),
    Entry('aten_stack_complex', opinfo=['stack']),
    Entry('aten_reshape_complex', opinfo=['reshape']),
    Entry('aten_view_complex', opinfo=['view', 'view_copy']),  # view, _unsafe_view
    Entry('aten_permute_complex', opinfo=['permute']),
    Entry('aten_transpose_complex', opinfo=['transpose']),
    Entry('aten_t_complex', opinfo=['t']),
    Entry('aten_slice_complex', opinfo=['slice']),
    Entry('aten_select_complex', opinfo=['select']),
    Entry('aten_index_complex', opinfo=['__getitem__']),
    Entry('aten_expand_complex', opinfo=['expand']),
    Entry('aten_unsqueeze_complex', opinfo=['unsqueeze']),
    Entry('aten_squeeze_complex', opinfo=['squeeze']),
    Entry('aten_squeeze_dim_complex', opinfo=['squeeze']),
    Entry('aten_squeeze_dims_complex', opinfo=[('squeeze', 'multiple')]),
    Entry('aten_flatten_complex', opinfo=['flatten']),
    Entry('aten_split_complex', opinfo=['split']),
    Entry('aten_unbind_complex', opinfo=['unbind']),
    Entry('aten_flip_complex', opinfo=['flip']),
    Entry('aten_roll_complex', opinfo=['roll', 'fft.fftshift', 'fft.ifftshift']),
    Entry('aten_fft_fftshift_complex', opinfo=['fft.fftshift']),
    Entry('aten_fft_ifftshift_complex', opinfo=['fft.ifftshift']),
    Entry('aten_constant_pad_nd_complex', opinfo=['constant_pad_nd']),
    Entry('aten_clone_complex', opinfo=['clone']),
    Entry('aten_alias_complex', samples=complex_tensors, dtypes=COMPLEX),  # alias, detach, lift_fresh_copy
    # reductions and products
    Entry('aten_sum_complex', opinfo=['sum']),
    Entry('aten_sum_dim_IntList_complex', opinfo=['sum']),
    Entry('aten_mean_complex', opinfo=['mean']),
    Entry('aten_mean_dim_complex', opinfo=['mean']),
    Entry('aten_matmul_complex', opinfo=['matmul'], tol=PRODUCT_TOL, tol_reason=PRODUCT_TOL_REASON),
    Entry('aten_mm_complex', opinfo=['mm'], tol=PRODUCT_TOL, tol_reason=PRODUCT_TOL_REASON),
    Entry('aten_bmm_complex', opinfo=['bmm'], tol=PRODUCT_TOL, tol_reason=PRODUCT_TOL_REASON),
]


