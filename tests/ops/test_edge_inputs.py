"""Edge inputs torch accepts (issue 13, issue 10 item 4): empty and size-1 inputs, int64
extremes (torch's int64 arithmetic wraps around), float64 precision. Each test is the repro of a
wrong answer or an error the fuzz pass (bench/fuzz_ops.py) found, checked eagerly and traced."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import activations as Ac
from torchlib.ops import attention as At
from torchlib.ops import conv_pool as C
from torchlib.ops import elementwise as E
from torchlib.ops import losses as L
from torchlib.ops import nn_extra as NE
from torchlib.ops import normalization as N
from torchlib.ops import reductions as R
from torchlib.ops import scans as S
from torchlib.ops import symbolic as Sy
from torchlib.ops import tensor_extra as T
from torchlib.ops.linalg import products as P
from torchlib.testing import check_function, run_dynamic
from torchlib.torch_version import torch_has_op

A = torch.ops.aten
I64 = torch.iinfo(torch.int64)


@pytest.mark.parametrize("name", [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "hinge_embedding_loss", "huber_loss",
    "l1_loss", "mse_loss", "smooth_l1_loss", "soft_margin_loss",
])  # fmt: skip
def test_mean_reduced_loss_of_an_empty_input_is_nan(name):
    empty = torch.zeros(0)
    check_function(getattr(L, f"aten_{name}"), (empty, empty), expected=getattr(A, name)(empty, empty))


# -- int64 extremes: torch's int64 arithmetic wraps around ---------------------------------------
EXTREMES = torch.tensor([[I64.max, I64.min, 5], [I64.max, 5, I64.max], [3, 7, -9]])
BIG = torch.randint(-2**40, 2**40, (4, 5, 3), generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("fn, args", [
    (R.aten_sum, (EXTREMES[0, :2],)),  # MAX + MIN = -1 (onnxruntime's int64 ReduceSum gives 0)
    (R.aten_sum, (EXTREMES,)),
    (R.aten_sum_dim_IntList, (EXTREMES, [0])),
    (R.aten_sum_dim_IntList, (EXTREMES.t(), [1], True)),
    (R.aten_sum_dim_IntList, (torch.zeros(3, 0, dtype=torch.int64), [1])),
    (R.aten_sum_dim_IntList, (EXTREMES.int(), [1])),
    (R.aten_prod, (EXTREMES,)),
    (R.aten_prod_dim_int, (BIG, 1)),
    (R.aten_prod_dim_int, (torch.zeros(3, 0, dtype=torch.int64), 1, True)),
    (R.aten_cumprod, (BIG, 0)),
    (R.aten_cumprod, (EXTREMES, 1)),
])  # fmt: skip
def test_int64_sum_and_prod_wrap_around(fn, args):
    expected = getattr(A, fn.__name__.removeprefix("aten_").replace("_dim_IntList", "").replace("_dim_int", ""))(*args)
    check_function(fn, args, expected=expected)
    torch.testing.assert_close(run_dynamic(fn, *args), expected)


SMALL_BASES = torch.randint(-5, 6, (40,), generator=torch.Generator().manual_seed(1))
EXPONENTS = torch.randint(-3, 70, (40,), generator=torch.Generator().manual_seed(2))


@pytest.mark.parametrize("fn, args", [
    (E.aten_fmod, (torch.tensor(I64.max), torch.tensor(6))),  # 1 (onnxruntime's Mod fmod=1: 2)
    (E.aten_fmod, (torch.tensor([I64.max, I64.min, -7, 7, I64.min, 5]), torch.tensor([6, 7, 2, -2, -1, I64.max]))),
    (E.aten_fmod, (torch.tensor([I64.max, -9]), 5)),
    (E.aten_pow, (torch.tensor(I64.max), torch.tensor(1))),  # MAX (through double: MIN)
    (E.aten_pow, (SMALL_BASES, EXPONENTS)),  # wraps; negative exponents give 0, 1 or -1
    (E.aten_pow, (SMALL_BASES.int(), EXPONENTS.int())),
    (E.aten_pow, (SMALL_BASES.to(torch.int8), EXPONENTS.to(torch.int8))),
    (E.aten_pow, (torch.tensor([3, 2]), torch.tensor([I64.max, 2**62]))),
    (E.aten_pow_scalar, (3, EXPONENTS)),
    (T.aten_trace, (EXTREMES,)),
    (T.aten_einsum, ("i->", [EXTREMES[1]])),
    (T.aten_einsum, ("ij,k->ik", [EXTREMES, EXTREMES[1]])),
])  # fmt: skip
def test_int_arithmetic_wraps_around(fn, args):
    torch_fn = {"aten_pow_scalar": torch.pow, "aten_trace": torch.trace, "aten_einsum": torch.einsum}.get(fn.__name__)
    expected = (torch_fn or getattr(A, fn.__name__.removeprefix("aten_")))(*args)
    check_function(fn, args, expected=expected)


# -- empty and size-1 inputs -----------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0, 6, 3), (2, 6, 0), (0, 4)])
def test_group_norm_of_an_empty_batch_or_empty_groups(shape):
    """Batch 0 used to fail in a Reshape [0, group, -1]; HxW = 0 gives rstd NaN like torch."""
    x = torch.randn(shape)
    n, c = shape[:2]
    hw = shape[2] if len(shape) > 2 else 1
    args = (x, torch.rand(c), torch.rand(c), n, c, hw, 2, 1e-5)
    if hw == 0 and N._empty_hxw_raises():  # torch 2.14 on refuses HxW = 0
        with pytest.raises(RuntimeError, match="HxW"):
            A.native_group_norm(*args)
        with pytest.raises(ValueError, match="HxW = 0"):
            N.aten_native_group_norm(*args)
        return
    check_function(N.aten_native_group_norm, args, expected=A.native_group_norm(*args))
    check_function(N.aten_group_norm, (x, 2), expected=A.group_norm(x, 2))


@pytest.mark.parametrize("fn, torch_fn, args", [
    (P.aten_mv, A.mv, (torch.randn(4, 0), torch.randn(0))),  # zeros, never stale memory
    (P.aten_addmv, A.addmv, (torch.randn(4), torch.randn(4, 0), torch.randn(0))),
    (P.aten_mv, A.mv, (torch.randn(0, 3), torch.randn(3))),
    (P.aten_matmul, A.matmul, (torch.randn(0, 10), torch.randn(10))),
    (P.aten_matmul, A.matmul, (torch.randn(2, 0, 10), torch.randn(10))),
    (S.aten_median, A.median, (torch.zeros(0),)),  # NaN
    (S.aten_median, A.median, (torch.zeros(3, 0, dtype=torch.float64),)),
    (S.aten_median, A.median, (torch.zeros(0, dtype=torch.int64),)),  # NaN cast to int64: MIN
    (S.aten_nanmedian, A.nanmedian, (torch.zeros(0),)),
    (S.aten_nanmedian, A.nanmedian, (torch.zeros(0, dtype=torch.int32),)),
    (Ac.aten_glu, A.glu, (torch.zeros(0), 0)),
    (Ac.aten_glu, A.glu, (torch.zeros(0, 4), -1)),
    (Ac.aten_glu, A.glu, (torch.randn(4, 4, 2), -3)),
    (T.aten_bucketize_Tensor, A.bucketize, (torch.tensor(-8.4), torch.zeros(0))),  # no boundaries: 0
    (T.aten_bucketize_Tensor, A.bucketize, (torch.randn(3, 2), torch.zeros(0))),
    (NE.aten_pixel_unshuffle, A.pixel_unshuffle, (torch.zeros(0, 1, 6, 6), 3)),  # torch keeps the shape
    (NE.aten_pixel_unshuffle, A.pixel_unshuffle, (torch.zeros(1, 0, 6, 6), 3)),
])  # fmt: skip
def test_empty_inputs(fn, torch_fn, args):
    expected = torch_fn(*args)
    check_function(fn, args, expected=expected)
    torch.testing.assert_close(run_dynamic(fn, *args), expected, equal_nan=True)


# -- known wrong answers (issue 13 items 6 and 7) --------------------------------------------------
def test_sdpa_rank3_query_broadcasts_against_rank4_keys():
    q, k, v = torch.randn(4, 3, 8, dtype=torch.float64), torch.randn(4, 4, 6, 8, dtype=torch.float64), torch.randn(4, 4, 6, 8, dtype=torch.float64)
    check_function(At.aten_scaled_dot_product_attention, (q, k, v), expected=A.scaled_dot_product_attention(q, k, v))


def test_float64_atan2_and_vector_norm_compute_in_float64():
    y, x = torch.randn(200, dtype=torch.float64), torch.randn(200, dtype=torch.float64)
    check_function(E.aten_atan2, (y, x), expected=torch.atan2(y, x), rtol=1e-15, atol=1e-15)
    x = torch.rand(5, 5, 5, dtype=torch.float64)
    check_function(R.aten_linalg_vector_norm, (x, 1.5), expected=torch.linalg.vector_norm(x, 1.5), rtol=1e-15, atol=0)


def _with_extremes(shape: tuple[int, ...]) -> torch.Tensor:
    x = torch.randint(-2**62, 2**62, shape, generator=torch.Generator().manual_seed(3)) * 2
    x.view(-1)[:5] = torch.tensor([I64.max, I64.min, -1, 0, I64.max - 1])
    return x


@pytest.mark.parametrize("fn, torch_fn, args", [
    (C.aten_max_pool2d_with_indices, A.max_pool2d_with_indices, (_with_extremes((1, 2, 3, 6)), [3, 3], [2, 2], [0, 0], [1, 1], True)),
    (C.aten_max_pool2d_with_indices, A.max_pool2d_with_indices, (_with_extremes((1, 2, 3, 6)), [2, 3], [1, 2], [1, 1], [1, 2], False)),
    (C.aten_max_pool2d, A.max_pool2d, (_with_extremes((2, 3, 6)), [2, 2])),
    (C.aten_max_pool3d_with_indices, A.max_pool3d_with_indices, (_with_extremes((1, 2, 3, 6, 5)), [3, 3, 3], [2, 2, 2], [0, 0, 0], [1, 1, 1], True)),
    (C.aten_max_pool3d, A.max_pool3d, (_with_extremes((1, 2, 3, 6, 5)), [2, 2, 2], [1, 2, 1], [1, 1, 0], [1, 2, 1])),
    (C.aten_max_pool1d_with_indices, A.max_pool1d_with_indices, (_with_extremes((2, 3, 9)), [3], [2], [1], [2], True)),
    (C.aten_avg_pool1d, A.avg_pool1d, (_with_extremes((2, 3, 9)), [3])),
    (C.aten_avg_pool2d, A.avg_pool2d, (_with_extremes((1, 3, 9, 9)), [4, 4], [2, 3], [1, 1], True, False, 2)),
    (C.aten_avg_pool3d, A.avg_pool3d, (_with_extremes((1, 2, 4, 4, 4)), [2, 2, 2], [1, 1, 1], [1, 1, 1], True, False, 2)),
])  # fmt: skip
def test_int64_pooling_is_exact(fn, torch_fn, args):
    """Values above 2**53 (no int64 MaxPool kernel; float64 rounds them) and window sums that wrap."""
    check_function(fn, args, expected=torch_fn(*args))


def test_symint_pow_is_exact_beyond_2_to_53():
    """A SymInt ** SymInt in int64 by squaring: 3 ** 39 through double is off by 11."""
    check_function(Sy.operator_pow, (torch.tensor(3), torch.tensor(39)), expected=torch.tensor(3**39))


@pytest.mark.parametrize("name", ["sinh", "cosh", "asinh", "acosh", "atanh"])
def test_float64_hyperbolic_functions_in_float64(name):
    """No double kernels in onnxruntime: compositions without cancellation near 0 (sinh, asinh,
    atanh), near 1 (acosh) and near -1 (atanh), nor overflow of x**2 (asinh, acosh)."""
    x = torch.cat([torch.logspace(-300, 300, 400, dtype=torch.float64), torch.linspace(-1.5, 1.5, 301, dtype=torch.float64),
                   1 - torch.logspace(-16, 0, 100, dtype=torch.float64)])  # fmt: skip
    x = torch.cat([x, -x])
    check_function(getattr(E, f"aten_{name}"), (x,), expected=getattr(torch, name)(x), rtol=1e-15, atol=0)


@pytest.mark.parametrize("right", [False, True])
def test_bucketize_puts_nan_after_every_boundary(right):
    values, boundaries = torch.tensor([float("nan"), 0.5, float("inf")]), torch.tensor([-1.0, 0.0, 1.0, 2.0, 3.0])
    check_function(T.aten_bucketize_Tensor, (values, boundaries), {"right": right},
                   expected=torch.bucketize(values, boundaries, right=right))


# -- complex mean of an empty input: 0 / 0 in both parts, as torch --------------------------------
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_complex_mean_of_an_empty_input_is_nan(dtype):
    from torchlib.ops.complex_shape import aten_mean_complex, aten_mean_dim_complex

    check_function(aten_mean_complex, (torch.zeros(0, dtype=dtype),), expected=torch.mean(torch.zeros(0, dtype=dtype)))
    x = torch.zeros(0, 3, dtype=dtype)
    check_function(aten_mean_dim_complex, (x, [0], True), expected=torch.mean(x, [0], True))
    check_function(aten_mean_dim_complex, (x, [1]), expected=torch.mean(x, [1]))


# -- native_layer_norm_backward: torch reads the first M values of mean and rstd ------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("rows", [0, 1, 2], ids=["empty", "size1", "same"])
def test_layer_norm_backward_reads_the_first_rows_of_mean_and_rstd(dtype, rows):
    from torchlib.ops.backward import aten_native_layer_norm_backward

    g = torch.Generator().manual_seed(0)
    x, dy = torch.randn(2, 3, 4, 5, generator=g, dtype=dtype), torch.randn(2, 3, 4, 5, generator=g, dtype=dtype)
    w, b = torch.randn(4, 5, generator=g, dtype=dtype), torch.randn(4, 5, generator=g, dtype=dtype)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [4, 5], w, b, 1e-5)
    # the fuzz pass's empty / size1 inputs: x and grad cut to `rows`, mean and rstd of the full batch
    args = (dy[:rows], x[:rows], [4, 5], mean, rstd, w, b, [True, True, True])
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == torch.float32 else {}
    check_function(aten_native_layer_norm_backward, args, expected=A.native_layer_norm_backward(*args), **tol)


# -- batch norm in training on one element per channel: the output is the bias up to torch's roundings
@pytest.mark.parametrize("shape", [(1, 3), (1, 3, 1, 1)])
def test_batch_norm_training_one_element_per_channel_as_torch(shape):
    g = torch.Generator().manual_seed(0)
    x, w, b, rm, rv = (torch.randn(s, generator=g) for s in (shape, 3, 3, 3, 3))
    # invstd = 1 / sqrt(0 + eps) in double; beta and the output by fused multiply-adds: the output
    # differs from the bias by a few ulps of x * weight / sqrt(eps), as torch's, exactly
    expected = A._native_batch_norm_legit_functional(x, w, b, rm, rv.abs(), True, 0.1, 1e-5)
    check_function(N.aten__native_batch_norm_legit_functional, (x, w, b, rm, rv.abs(), True, 0.1, 1e-5), expected=expected, rtol=0, atol=0)

# -- linear-algebra decompositions with NaN/inf and empty inputs: LAPACK's rules ----------------
NAN, INF = float("nan"), float("inf")


def _nan_first_row(shape: tuple[int, ...], dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    """randn with its first elements nan, inf, -inf (the fuzz pass's nan_inf transform)."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    x.view(-1)[:3] = torch.tensor([NAN, INF, -INF], dtype=dtype)
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_slogdet_of_a_nan_matrix_has_sign_zero(dtype):
    from torchlib.ops.linalg import composites as Co
    from torchlib.ops.linalg import lu as Lu

    x = torch.tensor([[NAN]], dtype=dtype)  # torch's sign of a NaN pivot is (d > 0) - (d < 0) = 0
    check_function(Co.aten_linalg_slogdet, (x,), expected=tuple(A.linalg_slogdet(x)))
    check_function(Co.aten_slogdet, (x,), expected=tuple(A.slogdet(x)))
    check_function(Lu.aten__linalg_slogdet, (x,), expected=tuple(A._linalg_slogdet(x)))
    y = torch.tensor([[NAN, 1.0], [2.0, 3.0]], dtype=dtype)
    check_function(Co.aten_linalg_slogdet, (y,), expected=tuple(A.linalg_slogdet(y)))


@pytest.mark.parametrize("shape", [(3, 5), (4, 5), (5, 5)])
def test_lu_of_nan_and_inf_keeps_the_pivot_row(shape):
    from torchlib.ops.linalg import lu as Lu

    x = _nan_first_row(shape)  # getf2 updates the trailing block only: row 0 stays [nan, inf, -inf, ...]
    check_function(Lu.aten_linalg_lu_factor_ex, (x,), expected=tuple(A.linalg_lu_factor_ex(x)))
    check_function(Lu.aten_linalg_lu, (x,), expected=tuple(A.linalg_lu(x)))
    if shape[0] == shape[1]:
        b = torch.randn(shape[0])
        check_function(Lu.aten__linalg_solve_ex, (x, b), expected=tuple(A._linalg_solve_ex(x, b)))


@pytest.mark.parametrize("column", [[1, NAN, 3], [NAN, 1, 3], [1, 3, NAN], [2, NAN, 1], [INF, NAN, 3], [0, 0, NAN], [0, NAN, 0]])
def test_lu_pivot_passes_nan_over_as_idamax(column):
    from torchlib.ops.linalg import lu as Lu

    x = torch.tensor([[column[0], 1.0, 2.0], [column[1], 5.0, 1.0], [column[2], 2.0, 7.0]])
    check_function(Lu.aten_linalg_lu_factor_ex, (x,), expected=tuple(A.linalg_lu_factor_ex(x)))


@pytest.mark.parametrize("lu_shape", [(0, 5), (1, 5), (2, 5)])
def test_lu_unpack_reads_min_m_n_pivots(lu_shape):
    from torchlib.ops.linalg import lu as Lu

    lu, pivots = torch.randn(lu_shape), torch.tensor([1, 2, 3], dtype=torch.int32)  # longer than min(m, n)
    if Lu._pivots_must_be_min_m_n():  # torch 2.14 on refuses them
        with pytest.raises(ValueError, match="LU_pivots"):
            A.lu_unpack(lu, pivots)
        with pytest.raises(ValueError, match="min\\(m, n\\)"):
            Lu.aten_lu_unpack(lu, pivots)
        return
    check_function(Lu.aten_lu_unpack, (lu, pivots), expected=tuple(A.lu_unpack(lu, pivots)))


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cholesky_stops_at_the_first_bad_pivot(upper, dtype):
    from torchlib.ops.linalg import cholesky as Ch

    b = torch.randn(5, 5, generator=torch.Generator().manual_seed(1), dtype=dtype)
    spd = b @ b.T + torch.eye(5, dtype=dtype)
    first = spd.clone()
    first.view(-1)[:3] = torch.tensor([NAN, INF, -INF], dtype=dtype)  # the fuzz's input: row 0 read for upper
    later = spd.clone()
    later[2, 2] = NAN
    for x in (first, later, spd - 20 * torch.eye(5, dtype=dtype)):
        check_function(Ch.aten_linalg_cholesky_ex, (x,), {"upper": upper}, expected=tuple(A.linalg_cholesky_ex(x, upper=upper)))
    inf_pivot = torch.tensor([[INF]], dtype=dtype)  # sqrt(inf), not inf / inf
    check_function(Ch.aten_linalg_cholesky_ex, (inf_pivot,), expected=tuple(A.linalg_cholesky_ex(inf_pivot)))
    below = torch.diag(torch.tensor([INF, 1.0, 2.0], dtype=dtype))  # float32: NaN below an inf pivot, float64: 0
    check_function(Ch.aten_linalg_cholesky_ex, (below,), expected=tuple(A.linalg_cholesky_ex(below)))
    overflow = torch.tensor([[1.6365, 3.4028e38], [0.6070, INF]], dtype=dtype)  # float32: inf - inf, info 2
    expected = tuple(A.linalg_cholesky_ex(overflow, upper=True))
    if dtype == torch.float32 and expected[1] == 0:
        # torch's LAPACK accumulates the pivot's dot product wider than float32 on some CPUs
        # (inf - 7e76 = inf, info 0) and in float32 on others (inf - inf = NaN, info 2): the
        # float32 arithmetic's answer is ours on every CPU
        expected = (torch.tensor([[1.2793, 2.6600e38], [0.0, NAN]]), torch.tensor(2, dtype=torch.int32))
        check_function(Ch.aten_linalg_cholesky_ex, (overflow,), {"upper": True}, expected=expected, rtol=1e-4, atol=0)
    else:
        check_function(Ch.aten_linalg_cholesky_ex, (overflow,), {"upper": True}, expected=expected)


@pytest.mark.parametrize("shape", [(0, 5), (5, 0), (0, 0), (2, 0, 0), (0, 3, 4)])
@pytest.mark.skipif(not torch_has_op("aten::cholesky"), reason="torch 2.14 removed aten::cholesky")
def test_cholesky_returns_an_empty_input_unchecked(shape):
    from torchlib.ops.linalg import cholesky as Ch

    x = torch.zeros(shape)  # torch returns it before checking that it is square
    check_function(Ch.aten_cholesky, (x,), expected=A.cholesky(x))
    check_function(Ch.aten_cholesky, (x, True), expected=A.cholesky(x, True))


@pytest.mark.parametrize("shape", [(5, 5), (5, 2), (2, 5)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_qr_of_nan_and_inf_as_mkl(shape, dtype):
    from torchlib.ops.linalg import composites as Co
    from torchlib.ops.linalg import qr as Q

    x = _nan_first_row(shape, dtype)  # R[0, 0] is MKL's dlapy2(nan, |x|) = |x| sqrt 2, the rest NaN
    check_function(Q.aten_geqrf, (x,), expected=tuple(A.geqrf(x)))
    check_function(Q.aten_linalg_qr, (x,), expected=tuple(A.linalg_qr(x)))
    check_function(Q.aten_linalg_qr, (x, "complete"), expected=tuple(A.linalg_qr(x, "complete")))
    if torch_has_op("aten::qr"):  # removed in torch 2.14
        check_function(Co.aten_qr, (x,), expected=tuple(A.qr(x)))


@pytest.mark.parametrize("column", [[NAN, 3, 4], [NAN, 0, 0], [1, NAN, 4], [INF, 3, 4], [-INF, 3, 4], [3, INF, 4], [NAN, INF, 1]])
def test_householder_reflector_of_nan_and_inf_columns(column):
    from torchlib.ops.linalg import qr as Q

    x = torch.tensor([[column[0], 1.0, 2.0], [column[1], 5.0, 1.0], [column[2], 2.0, 7.0]], dtype=torch.float64)
    check_function(Q.aten_geqrf, (x,), expected=tuple(A.geqrf(x)))
    check_function(Q.aten_linalg_qr, (x,), expected=tuple(A.linalg_qr(x)))
    wide = torch.tensor([[-0.325, INF]])  # tau = 0 is applied too: inf - 0 * inf
    check_function(Q.aten_geqrf, (wide,), expected=tuple(A.geqrf(wide)))


@pytest.mark.parametrize("driver", ["gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((0, 3), (0, 3)), ((3, 0), (3, 2)), ((0, 0), (0, 2)), ((2, 0, 3), (2, 0, 4)), ((0, 3), (0,)), ((0, 2, 2), (0, 2, 1))])
def test_lstsq_of_empty_matrices(driver, shapes):
    from torchlib.ops.linalg import lstsq as Ls

    a, b = torch.randn(shapes[0], dtype=torch.float64), torch.randn(shapes[1], dtype=torch.float64)
    check_function(Ls.aten_linalg_lstsq, (a, b), {"driver": driver}, expected=tuple(A.linalg_lstsq(a, b, driver=driver)))


@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_dense_backward_ignores_out_of_range_indices(scale_grad_by_freq: bool) -> None:
    """Fuzz [int_extremes]: torch's CPU kernel adds a gradient row only where 0 <= index <
    num_weights; other indices (int64 extremes, -1 without wrap-around) contribute nothing. We
    raised (onnxruntime's ScatterElements rejects them)."""
    from torchlib.ops.backward import aten_embedding_dense_backward

    grad = torch.randn(2, 3, 4)
    indices = torch.tensor([[2**63 - 1, -(2**63), -1], [0, 2**63 - 2, 1]])
    if scale_grad_by_freq:  # torch counts every index in an array of num_weights: out of range, it writes past it
        indices = torch.tensor([[1, 4, 3], [0, 1, 1]])
    expected = torch.ops.aten.embedding_dense_backward(grad, indices, 5, 3, scale_grad_by_freq)
    check_function(aten_embedding_dense_backward, (grad, indices, 5, 3, scale_grad_by_freq), expected=expected)
