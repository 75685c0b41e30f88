"""torchlib/ops/scans.py against torch, eagerly and traced (bfloat16: traced only, see
torchlib.testing.check_traced_bfloat16), with a few dynamic-shape checks."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from torchlib.ops import scans as S
from torchlib.testing import check_function, check_traced_bfloat16, run_dynamic, with_nan_inf

A = torch.ops.aten
BF16 = torch.bfloat16
FLOATS = [torch.float32, torch.float16, BF16, torch.float64]
NUMBERS = FLOATS + [torch.int32, torch.int64]
ALL = NUMBERS + [torch.bool]


def make(shape: tuple[int, ...], dtype: torch.dtype, seed: int = 0, distinct: bool = False) -> torch.Tensor:
    """Deterministic data; with distinct=True no two elements are equal (for index results)."""
    g = torch.Generator().manual_seed(seed)
    if distinct:
        n = math.prod(shape)
        return (torch.randperm(n, generator=g).reshape(shape) - n // 2).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * 6 - 3).to(dtype)
    return torch.randint(-3, 4, shape, generator=g).to(dtype)


def check(fn: Any, aten: Any, *args: Any, rtol: float | None = None, atol: float | None = None, **kwargs: Any) -> None:
    expected = aten(*args, **kwargs)
    if any(isinstance(a, torch.Tensor) and a.dtype == BF16 for a in args):
        check_traced_bfloat16(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    else:
        check_function(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((3, 5), 0), ((4,), -1), ((), 0), ((2, 0, 3), 1), ((2, 3, 4), -2)])
def test_cummax_cummin(dtype: torch.dtype, shape: tuple[int, ...], dim: int) -> None:
    x = make(shape, dtype)  # with ties: torch's index is the last of the running extreme
    check(S.aten_cummax, A.cummax, x, dim)
    check(S.aten_cummin, A.cummin, x, dim)


def test_cummax_dynamic() -> None:
    x = make((3, 5), torch.float32)
    torch.testing.assert_close(run_dynamic(S.aten_cummax, x, 1), list(torch.cummax(x, 1)))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((3, 5), 1), ((3, 5), 0), ((4,), -1), ((), 0), ((0, 3), 0)])
def test_logcumsumexp(dtype: torch.dtype, shape: tuple[int, ...], dim: int) -> None:
    check(S.aten_logcumsumexp, A.logcumsumexp, make(shape, dtype) * 10, dim)


def test_logcumsumexp_extremes() -> None:
    x = torch.tensor([[-1e30, 0.0, float("-inf"), 1e30, 5.0], [float("-inf")] * 5])
    check(S.aten_logcumsumexp, A.logcumsumexp, x, 1)


def _with_nan(dtype: torch.dtype) -> torch.Tensor:
    x = make((3, 4), dtype)
    if dtype.is_floating_point:
        x[0, 1] = float("nan")
        x[2, :] = float("nan")
    return x


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim,keepdim", [(None, False), ([1], False), ([0], True), ([0, 1], False), ([-1], True)])
def test_nansum(dtype: torch.dtype, dim: Any, keepdim: bool) -> None:
    check(S.aten_nansum, A.nansum, _with_nan(dtype), dim, keepdim, rtol=1e-2 if dtype == BF16 else None,
          atol=1e-2 if dtype == BF16 else None)  # fmt: skip


def test_nansum_dtype() -> None:
    check(S.aten_nansum, A.nansum, _with_nan(torch.float16), [1], dtype=torch.float64)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim,keepdim", [(None, False), ([1], False), ([0], True)])
def test_nanmean(dtype: torch.dtype, dim: Any, keepdim: bool) -> None:
    check(S.aten_nanmean, A.nanmean, _with_nan(dtype), dim, keepdim)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim,keepdim", [(None, False), (None, True), (1, False), (0, True), (-1, False)])
def test_aminmax(dtype: torch.dtype, dim: int | None, keepdim: bool) -> None:
    check(S.aten_aminmax, A.aminmax, make((3, 4), dtype), dim=dim, keepdim=keepdim)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shape,k,dim,keepdim", [((3, 5), 2, 1, False), ((3, 5), 3, 0, True), ((4,), 4, -1, False),
                                                 ((), 1, 0, False), ((2, 3, 4), 1, -2, True)])  # fmt: skip
def test_kthvalue(dtype: torch.dtype, shape: tuple[int, ...], k: int, dim: int, keepdim: bool) -> None:
    check(S.aten_kthvalue, A.kthvalue, make(shape, dtype, distinct=True), k, dim, keepdim)


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shape", [(3, 5), (4,), (), (2, 2, 3)])
def test_median(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    check(S.aten_median, A.median, make(shape, dtype, distinct=True))


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("shape,dim,keepdim", [((3, 5), 1, False), ((4, 3), 0, True), ((4,), -1, False), ((), 0, True)])
def test_median_dim(dtype: torch.dtype, shape: tuple[int, ...], dim: int, keepdim: bool) -> None:
    check(S.aten_median_dim, A.median.dim, make(shape, dtype, distinct=True), dim, keepdim)


def test_median_dim_dynamic() -> None:
    x = make((4, 3), torch.float32, distinct=True)
    torch.testing.assert_close(run_dynamic(S.aten_median_dim, x, 0), list(torch.median(x, 0)))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", [(4, 3), (5,), (), (0, 2)])
def test_msort(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    check(S.aten_msort, A.msort, make(shape, dtype))


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [None, 0, -1])
def test_count_nonzero(dtype: torch.dtype, dim: int | None) -> None:
    check(S.aten_count_nonzero, A.count_nonzero, _with_nan(dtype), dim)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("dim", [[0], [0, 1], [-1], []])
def test_count_nonzero_dim_IntList(dtype: torch.dtype, dim: list[int]) -> None:
    check(S.aten_count_nonzero_dim_IntList, A.count_nonzero.dim_IntList, make((3, 4), dtype), dim)


def test_cummax_nan() -> None:
    check(S.aten_cummax, A.cummax, torch.tensor([1.0, float("nan"), 3.0]), 0)


def _nan_rows(dtype: torch.dtype) -> torch.Tensor:
    """Distinct values with NaN in some places (no row all NaN: torch's index there is arbitrary)."""
    x = make((3, 5), dtype, distinct=True)
    if dtype.is_floating_point:
        x[0, 1] = x[1, 0] = x[1, 4] = x[2, 2] = float("nan")
    return x


@pytest.mark.parametrize("dtype", NUMBERS)
def test_nanmedian(dtype: torch.dtype) -> None:
    check(S.aten_nanmedian, A.nanmedian, _nan_rows(dtype))


@pytest.mark.parametrize("dtype", NUMBERS)
@pytest.mark.parametrize("dim,keepdim", [(1, False), (0, True), (-1, True)])
def test_nanmedian_dim(dtype: torch.dtype, dim: int, keepdim: bool) -> None:
    check(S.aten_nanmedian_dim, A.nanmedian.dim, _nan_rows(dtype), dim, keepdim)


def test_nanmedian_all_nan_values() -> None:
    x = torch.full((2, 3), float("nan"))
    torch.testing.assert_close(S.aten_nanmedian(x), torch.nanmedian(x), equal_nan=True)
    torch.testing.assert_close(S.aten_nanmedian_dim(x, 1)[0], torch.nanmedian(x, 1).values, equal_nan=True)


# -- regression (issue 13): NaN ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, BF16, torch.float64], ids=str)
def test_median_and_kthvalue_with_nan(dtype: torch.dtype) -> None:
    # torch.median propagates NaN (at the first NaN's index); kthvalue orders NaN above +inf
    nan, inf = math.nan, math.inf
    x = torch.tensor([[nan, 1.0, inf, -inf, nan, 2.0, inf, 1.0], [3.0, 2.0, 1.0, nan, 0.0, 5.0, 6.0, inf],
                      [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]], dtype=dtype)  # fmt: skip
    check(S.aten_median, A.median.default, x)
    check(S.aten_median_dim, A.median.dim, x, 1, True)
    for k in (1, 3, 7):
        check(S.aten_kthvalue, A.kthvalue.default, x[1:], k)


# -- NaN as torch treats it (issue 13) ----------------------------------------------------------


def test_cummax_cummin_hold_nan_at_the_last_nan_index():
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([1.0, nan, 3.0, nan, -inf, inf])
    check_function(S.aten_cummax, (x, 0), expected=torch.ops.aten.cummax(x, 0))
    check_function(S.aten_cummin, (x, 0), expected=torch.ops.aten.cummin(x, 0))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_cummax_cummin_propagate_nan_and_inf(dtype):
    torch.manual_seed(0)
    x = with_nan_inf(torch.randn(5, 6, 7, dtype=dtype), 0.2)
    for dim in (0, 1, -1):
        check_function(S.aten_cummax, (x, dim), expected=torch.ops.aten.cummax(x, dim))
        check_function(S.aten_cummin, (x, dim), expected=torch.ops.aten.cummin(x, dim))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_selections_order_nan_above_every_number(dtype):
    torch.manual_seed(0)
    x = with_nan_inf(torch.rand(6, 7, dtype=dtype), 0.3)
    check_function(S.aten_msort, (x,), expected=torch.ops.aten.msort(x))
    for dim in (0, -1):
        for k in (1, 3, 5):
            torch.testing.assert_close(S.aten_kthvalue(x, k, dim)[0], torch.ops.aten.kthvalue(x, k, dim)[0], equal_nan=True)
        torch.testing.assert_close(S.aten_median_dim(x, dim)[0], torch.ops.aten.median.dim(x, dim)[0], equal_nan=True)
