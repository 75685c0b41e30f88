"""Values near finfo.max and tiny, where a naive formula overflows and torch does not
(issue 13, the fuzz pass's `huge` transform: docs/fuzz_findings.md). Each test is a small
repro compared with torch eagerly."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import reductions as R
from torchlib.torch_version import torch_has_op

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]


def huge(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0) -> torch.Tensor:
    """randn with its first elements set to max, -max, tiny, max/3, -tiny (the fuzz transform)."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    info = torch.finfo(dtype)
    x.view(-1)[:5] = torch.tensor([info.max, -info.max, info.tiny, info.max / 3, -info.tiny], dtype=torch.float64)
    return x.to(dtype)


def same(actual, expected, **tol) -> None:
    if isinstance(expected, (tuple, list)):
        for a, e in zip(actual, expected, strict=True):
            same(a, e, **tol)
        return
    torch.testing.assert_close(actual, expected, equal_nan=True, **tol)


# -- std / var: two passes accumulated in float64, as torch's CPU kernel ---------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_std_var_of_huge_values_stay_finite(dtype):
    x = huge((5, 5, 5), dtype)
    assert torch.isfinite(torch.std(x))  # the representable result the naive formula overflowed
    same(R.aten_std(x), torch.std(x))
    same(R.aten_std_dim(x, [1]), torch.std(x, [1]))
    same(R.aten_var_correction(x, [0, 2], correction=0), torch.var(x, [0, 2], correction=0))
    same(R.aten_std_mean_correction(x, [1], correction=1), torch.std_mean(x, [1], correction=1))
    same(R.aten_var_mean(x[0]), torch.var_mean(x[0]))
    same(R.aten_std_mean_dim(x, [2], True, True), torch.std_mean(x, [2], True, keepdim=True))


def test_std_of_opposite_huge_values_float32():
    x = torch.tensor([1e38, -1e38, 1e38, -1e38])
    same(R.aten_std(x), torch.std(x))  # 1.1547e38, not inf


# -- elementwise -----------------------------------------------------------------------------------
@pytest.mark.usefixtures("exact_nan_mode")  # the default's HardSwish gives x there (test_vision_forms.py)
@pytest.mark.parametrize("dtype", FLOATS)
def test_hardswish_overflows_as_torch(dtype):
    from torchlib.ops.activations import aten_hardswish

    x = torch.cat([huge((5,), dtype), torch.tensor([-3.0, -2.5, 0.0, -0.0, 2.9, 3.0, 7.0], dtype=dtype)])
    same(aten_hardswish(x), torch.nn.functional.hardswish(x))  # float32 max: inf, as torch's x * 6 / 6


def test_acosh_asinh_float64_for_huge_and_tiny_arguments():
    from torchlib.ops.elementwise import aten_acosh, aten_asinh

    x = torch.cat([huge((5,), torch.float64), torch.tensor([1e308, -1e-300, 0.0, -0.0, 1e-10, -0.3, 1.0, 1.5, 2.0, 2.5,
                                                            3e8, -3e8, 1e20, float("inf"), -float("inf"), float("nan")],
                                                           dtype=torch.float64)])
    same(aten_acosh(x), torch.acosh(x), rtol=4e-16, atol=0)  # acosh(max) = 710.4759, not inf
    same(aten_asinh(x), torch.asinh(x), rtol=4e-16, atol=0)  # asinh(-1e-300) = -1e-300, not -0
    assert torch.equal(aten_asinh(x).signbit(), torch.asinh(x).signbit())


# -- prod: float64, with the log-domain product where onnxruntime's order lost it --------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_prod_of_huge_and_tiny_factors_is_the_exact_product(dtype):
    import math
    from fractions import Fraction

    x = huge((5, 5, 5), dtype, seed=1)
    exact = float(math.prod(Fraction(v) for v in x.double().flatten().tolist()))  # finite: max * tiny ~ 4
    got = R.aten_prod(x)  # onnxruntime's order gave NaN (tiny * -tiny = -0, times inf); torch gives inf here
    assert got.dtype == dtype
    torch.testing.assert_close(got.double(), torch.tensor(exact, dtype=torch.float64).to(dtype).double(), rtol=1e-12, atol=0)
    same(R.aten_prod_dim_int(torch.tensor([[0.0, float("inf")], [float("nan"), 1.0], [2.0, -3.0]], dtype=dtype), 1),
         torch.prod(torch.tensor([[0.0, float("inf")], [float("nan"), 1.0], [2.0, -3.0]], dtype=dtype), 1))


# -- batch norm / instance norm: torch's x * alpha + beta form -------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_batch_norm_with_an_overflowing_variance_gives_the_bias(dtype):
    from torchlib.ops import normalization as N
    from torchlib.ops.nn_extra import aten_instance_norm

    x = huge((5, 5, 5), dtype)
    w, b, rm, rv = (torch.rand(5, dtype=dtype, generator=torch.Generator().manual_seed(i)) for i in range(4))
    expected = torch.ops.aten.native_batch_norm(x, w, b, rm.clone(), rv.clone(), True, 0.5, 0.6)
    same(N.aten_native_batch_norm(x, w, b, rm, rv, True, 0.5, 0.6), expected)  # invstd 0: the bias, not NaN
    same(N.aten_batch_norm(x, None, b, rm, rv, True, 0.5, 0.6, True), torch.batch_norm(x, None, b, rm.clone(), rv.clone(), True, 0.5, 0.6, True))
    same(aten_instance_norm(x, w, b, rm, rv, True, 0.5, 0.6, True), torch.instance_norm(x, w, b, rm.clone(), rv.clone(), True, 0.5, 0.6, True))


# -- avg_pool: window sums in torch's order ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_avg_pool_sums_each_window_in_torchs_order(dtype):
    from torchlib.ops.conv_pool import aten_avg_pool2d, aten_avg_pool3d

    x = huge((1, 3, 9, 9), dtype)  # max + (-max) first, then the small values: not 0
    same(aten_avg_pool2d(x, [3, 3], [1, 1], [1, 1], True, False, 2), torch.ops.aten.avg_pool2d(x, [3, 3], [1, 1], [1, 1], True, False, 2))
    same(aten_avg_pool2d(x, [4, 4], [2, 3], [1, 1], True, True, None), torch.ops.aten.avg_pool2d(x, [4, 4], [2, 3], [1, 1], True, True))
    y = huge((1, 2, 4, 4, 4), dtype)
    same(aten_avg_pool3d(y, [2, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 2), torch.ops.aten.avg_pool3d(y, [2, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 2))


# -- group norm: float64 statistics, torch's x * alpha + beta output -------------------------------
def test_group_norm_float64_with_an_overflowing_variance_gives_the_bias():
    from torchlib.ops import normalization as N

    x = huge((1, 6, 3), torch.float64)
    w, b = torch.rand(6, dtype=torch.float64), torch.rand(6, dtype=torch.float64)
    same(N.aten_native_group_norm(x, w, b, 1, 6, 3, 2, 0.5), torch.ops.aten.native_group_norm(x, w, b, 1, 6, 3, 2, 0.5))


@pytest.mark.usefixtures("exact_nan_mode")  # the default's InstanceNormalization: test_vision_forms.py
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_group_norm_near_max_gives_the_exact_statistics_where_torch_gives_nan(dtype):
    from torchlib.ops import normalization as N

    x = huge((1, 6, 3), dtype)
    w, b = torch.rand(6, dtype=dtype), torch.rand(6, dtype=dtype)
    assert torch.isnan(torch.ops.aten.native_group_norm(x, w, b, 1, 6, 3, 2, 0.5)[1][0, 0])  # torch's float Welford
    exact = torch.ops.aten.native_group_norm(x.double(), w.double(), b.double(), 1, 6, 3, 2, 0.5)
    tol = {"rtol": 1.6e-2, "atol": 1e-2} if dtype is torch.bfloat16 else {}
    same(N.aten_native_group_norm(x, w, b, 1, 6, 3, 2, 0.5), tuple(t.to(dtype) for t in exact), **tol)


# -- polygamma: torch's zeta returns before its loop at a pole (q = -finfo.max is a whole number) ---
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n", [2, 3])
def test_polygamma_of_huge_arguments_is_fast_and_as_torch(dtype, n):
    from torchlib.ops.special.gamma import aten_polygamma, aten_special_zeta

    x = torch.cat([huge((5,), dtype), torch.tensor([-2.5, -3.0, 0.25, 7.5, 1e20, -1e5 - 0.5], dtype=dtype)])
    same(aten_polygamma(n, x), torch.polygamma(n, x))  # q = -max: inf at once, not a loop that never ends
    q = huge((6,), dtype)
    same(aten_special_zeta(torch.full((6,), 2.5, dtype=dtype), q), torch.special.zeta(torch.full((6,), 2.5, dtype=dtype), q))

# -- linear-algebra decompositions: scaled as LAPACK scales ----------------------------------------
A = torch.ops.aten


@pytest.mark.parametrize("shape", [(5, 5), (5, 2), (2, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_householder_qr_of_huge_entries(shape, dtype):
    from torchlib.ops.linalg import composites as Co
    from torchlib.ops.linalg import qr as Q
    from torchlib.testing import check_function

    x = huge(shape, dtype)  # dnrm2/dlapy2 scale: R[0, 0] = -max, tau = inf, not a NaN column from inf norms
    check_function(Q.aten_geqrf, (x,), expected=tuple(A.geqrf(x)))
    check_function(Q.aten_linalg_qr, (x,), expected=tuple(A.linalg_qr(x)))
    if torch_has_op("aten::qr"):  # removed in torch 2.14
        check_function(Co.aten_qr, (x,), expected=tuple(A.qr(x)))


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_of_huge_entries_float32(upper):
    from torchlib.ops.linalg import cholesky as Ch
    from torchlib.testing import check_function

    b = torch.randn(5, 5, generator=torch.Generator().manual_seed(0))
    x = b @ b.T + torch.eye(5)
    x.view(-1)[:5] = torch.tensor([3.4028235e38, -3.4028235e38, 1.1754944e-38, 1.1342745e38, -1.1754944e-38])
    # the reduced pivot 2.2 - L[1, 0]² is -max, finite, in torch (float64 here, then rounded), not -inf
    check_function(Ch.aten_linalg_cholesky_ex, (x,), {"upper": upper}, expected=tuple(A.linalg_cholesky_ex(x, upper=upper)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_eigvalsh_and_svdvals_of_huge_entries(dtype):
    from torchlib.ops.linalg import composites as Co

    x = huge((5, 5), dtype)
    # the largest values overflow as torch's (scaled back after the iteration); the others lie within
    # LAPACK's error bound n·eps·‖A‖ of torch's (rounding noise of the largest: see the fuzz's "normwise")
    bound = 5 * torch.finfo(dtype).eps * 5 * x.double().abs().max()
    for ours, theirs in ((Co.aten_linalg_eigvalsh(x, "U"), A.linalg_eigvalsh(x, "U")), (Co.aten_linalg_svdvals(x), A.linalg_svdvals(x))):
        assert torch.equal(torch.isfinite(ours), torch.isfinite(theirs))
        finite = torch.isfinite(theirs)
        assert (ours[finite].double() - theirs[finite].double()).abs().max() <= bound
    tall = huge((5, 2), dtype)
    same(Co.aten_linalg_svdvals(tall), A.linalg_svdvals(tall))


def test_pinv_of_huge_entries_float64():
    from torchlib.ops.linalg import composites as Co
    from torchlib.ops.linalg import spectral as Sp

    x = huge((5, 5), torch.float64)
    same(Co.aten_pinverse(x), A.pinverse(x))
    same(Sp.aten_linalg_pinv_atol_rtol_float(x, rtol=1.0), A.linalg_pinv(x, rtol=1.0))
    batch = huge((2, 3, 3), torch.float64)
    same(Co.aten_linalg_pinv(batch, 1e-15, False), A.linalg_pinv(batch, 1e-15, False))


@pytest.mark.parametrize("shape", [(2, 3), (3, 3), (4, 3)])
def test_lstsq_gels_of_huge_entries_float64(shape):
    from torchlib.ops.linalg import lstsq as Ls
    from torchlib.testing import check_function

    a, b = huge(shape, torch.float64), torch.randn(shape[0], 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    # gels scales A to 1/smlnum and solves with its QR: x ~ 1e-307 and the last row ~ 5, as LAPACK
    check_function(Ls.aten_linalg_lstsq, (a, b), {"driver": "gels"}, expected=tuple(A.linalg_lstsq(a, b, driver="gels")))
