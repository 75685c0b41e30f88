"""torchlib/ops/reductions.py against torch, eagerly and traced (bfloat16: traced only, see
torchlib.testing.check_traced_bfloat16), with static and dynamic shapes."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from torchlib.ops import reductions as R
from torchlib.testing import check_function, check_traced_bfloat16, run_dynamic

A = torch.ops.aten
BF16 = torch.bfloat16
FLOATS = [torch.float32, torch.float16, BF16, torch.float64]
INTS = [torch.int32, torch.int64, torch.uint8, torch.int8, torch.int16]
ALL = FLOATS + INTS + [torch.bool]
TOL = {torch.float16: (2e-3, 2e-3), BF16: (1.6e-2, 1e-2)}


def make(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0, distinct: bool = False) -> torch.Tensor:
    """Deterministic data; with distinct=True no two elements are equal (for index results)."""
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    if distinct:
        values = torch.randperm(n, generator=g).reshape(shape)
        if dtype.is_floating_point:
            return ((values - n / 2) / 4).to(dtype)
        return (values if dtype == torch.uint8 else values - n // 2).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 6 - 3).to(dtype)
    low = 0 if dtype == torch.uint8 else -3
    return torch.randint(low, 4, shape, generator=g).to(dtype)


def _has_bf16(args: Any) -> bool:
    return any(isinstance(a, torch.Tensor) and a.dtype == BF16 for a in args)


def check(fn: Any, aten: Any, *args: Any, rtol: float | None = None, atol: float | None = None, **kwargs: Any) -> None:
    """fn(*args, **kwargs) equals aten(*args, **kwargs), dtype and shape included, eagerly and
    traced; when torch raises, fn must raise too."""
    try:
        expected = aten(*args, **kwargs)
    except (RuntimeError, IndexError) as e:
        with pytest.raises((TypeError, ValueError, IndexError)):
            fn(*args, **kwargs)
        assert str(e)
        return
    first = expected[0] if isinstance(expected, tuple) else expected
    if rtol is None and first.dtype in TOL:
        rtol, atol = TOL[first.dtype]
    if _has_bf16(args):
        check_traced_bfloat16(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    else:
        check_function(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)


# -- sum, mean, prod -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_sum(dtype):
    x = make((3, 4, 5), dtype)
    check(R.aten_sum, A.sum.default, x)
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, x, [1])
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, x, [-1, 0], True)


@pytest.mark.parametrize("dim", [None, [], [0, 1]], ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_all_dims(dim, keepdim):
    x = make((3, 4), torch.float32)
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, x, dim, keepdim)


@pytest.mark.parametrize("src, dtype", [(torch.float32, torch.float64), (torch.int32, torch.float32),
                                        (torch.bool, torch.int32), (torch.float16, torch.float32)], ids=str)
def test_sum_dtype(src, dtype):
    x = make((3, 4), src)
    check(R.aten_sum, A.sum.default, x, dtype=dtype)
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, x, [0], dtype=dtype)


@pytest.mark.parametrize("shape, dim", [((), [0]), ((), None), ((0, 3), [0]), ((0, 3), [1]), ((2, 0), None)], ids=str)
def test_sum_scalar_and_empty(shape, dim):
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, make(shape, torch.float32), dim)
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, make(shape, torch.int64), dim, True)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_mean(dtype):
    x = make((3, 4, 5), dtype)
    check(R.aten_mean, A.mean.default, x)
    check(R.aten_mean_dim, A.mean.dim, x, [1, 2])
    check(R.aten_mean_dim, A.mean.dim, x, [-1], True)
    check(R.aten_mean_dim, A.mean.dim, x, None, True)


def test_mean_int_needs_dtype():
    x = make((3, 4), torch.int64)
    check(R.aten_mean, A.mean.default, x)  # torch raises: so must we
    check(R.aten_mean, A.mean.default, x, dtype=torch.float32)
    check(R.aten_mean_dim, A.mean.dim, x, [0], dtype=torch.float64)


def test_mean_empty_is_nan():
    check(R.aten_mean_dim, A.mean.dim, make((0, 3), torch.float32), [0])
    check(R.aten_mean, A.mean.default, make((), torch.float32))


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_prod(dtype):
    x = make((3, 4), dtype)
    check(R.aten_prod, A.prod.default, x)
    check(R.aten_prod_dim_int, A.prod.dim_int, x, 1)
    check(R.aten_prod_dim_int, A.prod.dim_int, x, -2, True)


def test_prod_dtype_scalar_empty():
    check(R.aten_prod, A.prod.default, make((3, 4), torch.int32), dtype=torch.float64)
    check(R.aten_prod_dim_int, A.prod.dim_int, make((), torch.float32), 0)
    check(R.aten_prod_dim_int, A.prod.dim_int, make((0, 3), torch.float32), 0)


# -- amax, amin, max, min, argmax, argmin --------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_amax_amin(dtype):
    x = make((3, 4, 5), dtype)
    for fn, aten in [(R.aten_amax, A.amax.default), (R.aten_amin, A.amin.default)]:
        check(fn, aten, x)
        check(fn, aten, x, [0, 2])
        check(fn, aten, x, [-1], True)
    check(R.aten_max, A.max.default, x)
    check(R.aten_min, A.min.default, x)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != torch.bool], ids=str)
def test_max_min_dim(dtype):
    x = make((3, 4, 5), dtype, distinct=True)
    for dim, keepdim in [(0, False), (-1, True), (1, False)]:
        check(R.aten_max_dim, A.max.dim, x, dim, keepdim)
        check(R.aten_min_dim, A.min.dim, x, dim, keepdim)


@pytest.mark.parametrize("dtypes", [(d, d) for d in ALL] + [(torch.int32, torch.float32), (torch.bool, torch.int64)], ids=str)
def test_max_min_other(dtypes):
    a, b = make((3, 4), dtypes[0], 1), make((4,), dtypes[1], 2)  # broadcasts, promotes
    if a.dtype.is_floating_point:
        a[0, 0] = float("nan")
    check(R.aten_max_other, A.max.other, a, b)
    check(R.aten_min_other, A.min.other, a, b)


def test_max_min_dim_bool_and_scalar():
    x = torch.tensor([[True, False, False], [False, False, True]])
    check(R.aten_max_dim, A.max.dim, x, 1)
    check(R.aten_min_dim, A.min.dim, x, 1, True)
    check(R.aten_max_dim, A.max.dim, torch.tensor(2.5), 0)
    check(R.aten_min_dim, A.min.dim, torch.tensor(2.5), -1, True)


@pytest.mark.parametrize("dtype", [d for d in ALL if d != torch.bool], ids=str)  # torch: no bool argmax
def test_argmax_argmin(dtype):
    x = make((3, 4, 5), dtype, distinct=True)
    for fn, aten in [(R.aten_argmax, A.argmax.default), (R.aten_argmin, A.argmin.default)]:
        check(fn, aten, x)
        check(fn, aten, x, None, True)
        check(fn, aten, x, 1)
        check(fn, aten, x, -1, True)


def test_argmax_ties_take_the_first_index():
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    check(R.aten_argmax, A.argmax.default, x, 1)
    check(R.aten_argmin, A.argmin.default, x, 1)
    check(R.aten_max_dim, A.max.dim, x, 1)


def test_argmax_scalar():
    x = torch.tensor(1.5)
    check(R.aten_argmax, A.argmax.default, x)
    check(R.aten_argmax, A.argmax.default, x, 0, True)
    check(R.aten_argmin, A.argmin.default, x, -1)


def test_max_propagates_nan():
    x = torch.tensor([[1.0, float("nan"), 3.0]])
    check(R.aten_max_dim, A.max.dim, x, 1)


# -- any, all ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_any_all(dtype):
    x = make((3, 4), dtype)
    x[0] = 0  # a row of zeros and one without: both answers occur
    x[1] = 1
    for fn, fn_dim, fn_dims, aten in [(R.aten_any, R.aten_any_dim, R.aten_any_dims, A.any),
                                      (R.aten_all, R.aten_all_dim, R.aten_all_dims, A.all)]:
        check(fn, aten.default, x)
        check(fn_dim, aten.dim, x, 1)
        check(fn_dim, aten.dim, x, -2, True)
        check(fn_dims, aten.dims, x, [0, 1])
        check(fn_dims, aten.dims, x, None, True)
        check(fn_dims, aten.dims, x, [])  # reduces nothing


def test_any_all_empty_scalar_nan():
    empty = torch.zeros(0, 3)
    check(R.aten_any_dim, A.any.dim, empty, 0)
    check(R.aten_all_dim, A.all.dim, empty, 0)
    check(R.aten_any, A.any.default, empty)
    check(R.aten_all, A.all.default, empty)
    check(R.aten_all_dim, A.all.dim, torch.tensor(2.0), 0)
    check(R.aten_any, A.any.default, torch.tensor([0.0, float("nan")]))


def test_is_all_true_is_any_true():
    """What torch.export records for `torch._assert(mask.all(), ...)`-style checks (ProphetNet)."""
    for x in (torch.tensor([[True, False], [True, True]]), torch.ones(2, 3, dtype=torch.bool),
              torch.zeros(3, dtype=torch.bool), torch.zeros(0, 2, dtype=torch.bool), torch.tensor(True)):
        check(R.aten_is_all_true, A._is_all_true.default, x)
        check(R.aten_is_any_true, A._is_any_true.default, x)


# -- cumsum, cumprod, logsumexp ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_cumsum_cumprod(dtype):
    x = make((3, 4, 5), dtype)
    for fn, aten in [(R.aten_cumsum, A.cumsum.default), (R.aten_cumprod, A.cumprod.default)]:
        check(fn, aten, x, 1)
        check(fn, aten, x, -1)
        check(fn, aten, x, 0)


def test_cumsum_cumprod_dtype_scalar_empty():
    for fn, aten in [(R.aten_cumsum, A.cumsum.default), (R.aten_cumprod, A.cumprod.default)]:
        check(fn, aten, make((3, 4), torch.int32), 1, dtype=torch.float64)
        check(fn, aten, make((3, 4), torch.float32), 0, dtype=torch.int16)
        check(fn, aten, make((), torch.float32), 0)
        check(fn, aten, make((), torch.bool), -1)
        check(fn, aten, make((0, 3), torch.float32), 0)
        check(fn, aten, make((2, 0), torch.float32), 1)


def test_cumprod_zeros_and_negatives():
    x = torch.tensor([[2.0, -1.0, 0.0, 3.0, -2.0], [-0.5, 4.0, 2.0, 0.0, 1.0]])
    check(R.aten_cumprod, A.cumprod.default, x, 1)


@pytest.mark.parametrize("dtype", FLOATS + [torch.int64, torch.bool], ids=str)
def test_logsumexp(dtype):
    x = make((3, 4, 5), dtype)
    check(R.aten_logsumexp, A.logsumexp.default, x, [1])
    check(R.aten_logsumexp, A.logsumexp.default, x, [0, -1], True)
    check(R.aten_logsumexp, A.logsumexp.default, x, [], True)


def test_logsumexp_large_and_infinite():
    x = torch.tensor([[1000.0, 1000.0], [-1e4, 0.0], [-math.inf, -math.inf], [math.inf, 1.0]])
    check(R.aten_logsumexp, A.logsumexp.default, x, [1])


# -- var, std, var_mean, std_mean ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_var_std(dtype):
    x = make((3, 4, 5), dtype)
    check(R.aten_var, A.var.default, x)
    check(R.aten_var, A.var.default, x, False)
    check(R.aten_std, A.std.default, x)
    check(R.aten_var_dim, A.var.dim, x, [1], False, True)
    check(R.aten_std_dim, A.std.dim, x, [0, 2])
    check(R.aten_var_mean, A.var_mean.default, x)
    check(R.aten_std_mean, A.std_mean.default, x, False)
    check(R.aten_var_mean_dim, A.var_mean.dim, x, [-1], True, True)
    check(R.aten_std_mean_dim, A.std_mean.dim, x, None)


@pytest.mark.parametrize("correction", [None, 0, 1, 2, 0.5])
@pytest.mark.parametrize("dim, keepdim", [(None, False), ([1], True), ([], False), ([0, -1], False)], ids=str)
def test_var_std_correction(correction, dim, keepdim):
    x = make((3, 4, 5), torch.float32)
    kw = {"correction": correction, "keepdim": keepdim}
    check(R.aten_var_correction, A.var.correction, x, dim, **kw)
    check(R.aten_std_correction, A.std.correction, x, dim, **kw)
    check(R.aten_var_mean_correction, A.var_mean.correction, x, dim, **kw)
    check(R.aten_std_mean_correction, A.std_mean.correction, x, dim, **kw)


def test_var_too_few_elements_and_int():
    one = make((3, 1), torch.float32)
    check(R.aten_var_correction, A.var.correction, one, [1])  # 0 / 0: NaN
    check(R.aten_std_correction, A.std.correction, one, [1], correction=2)
    check(R.aten_var_correction, A.var.correction, make((), torch.float64), None, correction=0)
    check(R.aten_var, A.var.default, make((3, 4), torch.int32))  # torch raises: so must we


# -- norms ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("ord", [2, 1, math.inf, -math.inf, 0, 3, 0.5])
def test_linalg_vector_norm(ord):
    x = make((3, 4, 5), torch.float32)
    x[0, 0] = 0
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, x, ord)
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, x, ord, [1])
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, x, ord, [0, -1], True)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_norm_dtypes(dtype):
    x = make((3, 4), dtype)
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, x)
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, x, 2, [], True)
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, x, 1, [1], dtype=torch.float64)
    check(R.aten_norm_Scalar, A.norm.Scalar, x)
    check(R.aten_norm_Scalar, A.norm.Scalar, x, 1)
    check(R.aten_norm_ScalarOpt_dim, A.norm.ScalarOpt_dim, x, None, [1], True)
    check(R.aten_norm_ScalarOpt_dim, A.norm.ScalarOpt_dim, x, 3, [])
    check(R.aten_norm_ScalarOpt_dim_dtype, A.norm.ScalarOpt_dim_dtype, x, 2, [0], False, dtype=torch.float64)
    check(R.aten_norm_ScalarOpt_dtype, A.norm.ScalarOpt_dtype, x, math.inf, dtype=torch.float64)


def test_norm_int_raises():
    check(R.aten_linalg_vector_norm, A.linalg_vector_norm.default, make((3,), torch.int32))
    check(R.aten_norm_Scalar, A.norm.Scalar, make((3,), torch.int64))


# -- dynamic shapes ------------------------------------------------------------------------------
def test_dynamic_shapes():
    """Every input dim symbolic: element counts and sizes are computed in the graph."""
    x = make((3, 4, 5), torch.float32)
    cases = [
        (lambda t: R.aten_mean_dim(t, [0, 2]), A.mean.dim(x, [0, 2])),
        (lambda t: R.aten_var_correction(t, [1], correction=1, keepdim=True), A.var.correction(x, [1], correction=1, keepdim=True)),
        (lambda t: R.aten_std_mean_correction(t, None), A.std_mean.correction(x, None)),
        (lambda t: R.aten_cumprod(t, 1), A.cumprod.default(x, 1)),
        (lambda t: R.aten_argmax(t, None, True), A.argmax.default(x, None, True)),
        (lambda t: R.aten_sum(t), A.sum.default(x)),
    ]
    for fn, expected in cases:
        torch.testing.assert_close(run_dynamic(fn, x), expected)
    empty = make((0, 3), torch.float32)
    torch.testing.assert_close(run_dynamic(lambda t: R.aten_mean_dim(t, [0]), empty), A.mean.dim(empty, [0]), equal_nan=True)


# -- regression (issue 13): dtype=bool, NaN propagation, float64 constants ---------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_sum_prod_dtype_bool(dtype):
    x = torch.tensor([[0, 2, 1], [0, 0, 0]]).to(dtype)
    check(R.aten_sum, A.sum.default, x, dtype=torch.bool)
    check(R.aten_sum_dim_IntList, A.sum.dim_IntList, x, [1], dtype=torch.bool)
    check(R.aten_prod, A.prod.default, x, dtype=torch.bool)
    check(R.aten_prod_dim_int, A.prod.dim_int, x, 0, True, dtype=torch.bool)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_extrema_propagate_nan(dtype):
    nan = math.nan
    x = torch.tensor([[1.0, nan, 3.0], [4.0, 5.0, nan], [1.0, 2.0, 3.0]], dtype=dtype)
    check(R.aten_amax, A.amax.default, x, [1])
    check(R.aten_amin, A.amin.default, x, [0], True)
    check(R.aten_amax, A.amax.default, x)
    check(R.aten_max, A.max.default, x)
    check(R.aten_min, A.min.default, x)
    check(R.aten_max_dim, A.max.dim, x, 1)
    check(R.aten_min_dim, A.min.dim, x, 0, True)
    check(R.aten_argmax, A.argmax.default, x)
    check(R.aten_argmin, A.argmin.default, x, 1)


def test_vector_norm_float64_order_is_exact():
    # 1 / 1.5 was a float32 constant: 0.6666667 instead of 0.6666666666666666
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    expected = torch.linalg.vector_norm(x, 1.5)
    for result in (R.aten_linalg_vector_norm(x, 1.5),):
        torch.testing.assert_close(result, expected, rtol=1e-15, atol=0)


# -- NaN and inf as torch gives them (issue 13) -------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_var_mean_mean_is_nan_after_an_inf_as_in_torchs_welford(dtype: torch.dtype) -> None:
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[inf, 1.0, 2.0], [1.0, 2.0, inf], [-inf, 1.0, 2.0], [1.0, nan, 2.0], [1.0, 2.0, 3.0]], dtype=dtype)
    for dims, keepdim in [([1], False), ([1], True), ([0], False), (None, False)]:
        check_function(R.aten_var_mean_correction, (x, dims), {"correction": 1, "keepdim": keepdim},
                       expected=torch.ops.aten.var_mean.correction(x, dims, correction=1, keepdim=keepdim))  # fmt: skip
        check_function(R.aten_std_mean_dim, (x, dims, True, keepdim), expected=torch.ops.aten.std_mean.dim(x, dims, True, keepdim))
    y = torch.randn(4, 5, 3, dtype=dtype)
    y[0, 0, 0] = y[1, -1, -1] = y[2, -1, 0] = inf  # several reduced dims: the last element is the last of each
    check_function(R.aten_var_mean_dim, (y, [0, 2]), expected=torch.ops.aten.var_mean.dim(y, [0, 2]))
    torch.testing.assert_close(run_dynamic(lambda t: R.aten_var_mean_dim(t, [1]), y), torch.var_mean(y, [1]), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
@pytest.mark.parametrize("ord", [2, 1, 3, 0.5, 0, -1, math.inf, -math.inf])
@pytest.mark.skipif(not hasattr(torch.ops.aten, "linalg__powsum"), reason="aten::linalg__powsum exists from torch 2.11")
def test_linalg_powsum(ord, dtype):
    x = torch.randn(3, 4, dtype=dtype, generator=torch.Generator().manual_seed(0))
    x[0, :2] = 0  # 0 ** 0 = 1, 0 ** -1 = inf
    powsum = torch.ops.aten.linalg__powsum
    check_function(R.aten_linalg__powsum, (x, ord), expected=powsum(x, ord))
    check_function(R.aten_linalg__powsum, (x, ord, [1], True), expected=powsum(x, ord, [1], True))
    check_function(R.aten_linalg__powsum, (x, ord, [0]), {"dtype": torch.float64}, expected=powsum(x, ord, [0], dtype=torch.float64))
    with pytest.raises(TypeError, match="floating"):
        R.aten_linalg__powsum(torch.arange(3), ord)
