"""torchlib/ops/comparison.py against torch, eagerly and traced (bfloat16 traced only)."""

from __future__ import annotations

import pytest
import torch
from test_elementwise import ALL_DTYPES, BF16, FLOAT_DTYPES, check, make

from torchlib.ops import comparison as cmp

A = torch.ops.aten
MIXED = [(torch.int64, torch.float32), (torch.int32, torch.float16), (torch.bool, torch.int32),
         (torch.uint8, torch.int8), (BF16, torch.float32), (torch.float16, torch.float64)]  # fmt: skip
PAIRS = [(d, d) for d in ALL_DTYPES] + MIXED


def _pair(dtypes):
    # small integer range so that equal elements occur
    return make((3, 4), dtypes[0], -2, 2, seed=1), make((4,), dtypes[1], -2, 2, seed=2)


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_compare(name, dtypes):
    a, b = _pair(dtypes)
    check(getattr(cmp, f"aten_{name}"), getattr(A, name).Tensor, a, b)
    check(getattr(cmp, f"aten_{name}"), getattr(A, name).Scalar, a, 1)
    check(getattr(cmp, f"aten_{name}"), getattr(A, name).Scalar, a, 0.5)


def test_compare_nan_and_zero_dim():
    a = torch.tensor([float("nan"), 1.0, -0.0, float("inf")])
    for name in ["eq", "ne", "lt", "le", "gt", "ge"]:
        check(getattr(cmp, f"aten_{name}"), getattr(A, name).Tensor, a, torch.tensor(0.0))
        check(getattr(cmp, f"aten_{name}"), getattr(A, name).Tensor, torch.tensor([1, 2, 3]), torch.tensor(1.5))


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
def test_logical(dtypes):
    a, b = _pair(dtypes)
    check(cmp.aten_logical_not, A.logical_not.default, a)
    check(cmp.aten_logical_and, A.logical_and.default, a, b)
    check(cmp.aten_logical_or, A.logical_or.default, a, b)
    check(cmp.aten_logical_xor, A.logical_xor.default, a, b)


def test_logical_nan_is_true():
    a = torch.tensor([float("nan"), 0.0, -0.0, 2.0])
    check(cmp.aten_logical_not, A.logical_not.default, a)
    check(cmp.aten_logical_and, A.logical_and.default, a, torch.ones(4))


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
@pytest.mark.parametrize("name", ["and", "or", "xor"])
def test_bitwise(name, dtypes):
    a, b = make((3, 4), dtypes[0], -9, 9, seed=1), make((4,), dtypes[1], -9, 9, seed=2)
    fn, aten = getattr(cmp, f"aten_bitwise_{name}"), getattr(A, f"bitwise_{name}")
    check(fn, aten.Tensor, a, b)
    check(fn, aten.Scalar, a, 5)
    check(fn, aten.Scalar, a, True)
    check(fn, aten.Scalar_Tensor, 6, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_bitwise_not(dtype):
    check(cmp.aten_bitwise_not, A.bitwise_not.default, make((3, 4), dtype, -9, 9))


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
@pytest.mark.parametrize("name", ["minimum", "maximum", "fmin", "fmax"])
def test_min_max(name, dtypes):
    a, b = _pair(dtypes)
    check(getattr(cmp, f"aten_{name}"), getattr(A, name).default, a, b)


@pytest.mark.parametrize("name", ["minimum", "maximum", "fmin", "fmax"])
def test_min_max_nan(name):
    a = torch.tensor([float("nan"), 1.0, float("nan"), 2.0])
    b = torch.tensor([0.0, float("nan"), float("nan"), 1.0])
    check(getattr(cmp, f"aten_{name}"), getattr(A, name).default, a, b)


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
def test_where(dtypes):
    a, b = _pair(dtypes)
    condition = make((3, 1), torch.bool, seed=3)
    check(cmp.aten_where, A.where.self, condition, a, b)
    check(cmp.aten_where_scalar_self, A.where.ScalarSelf, condition, 2.5, b)
    check(cmp.aten_where_scalar_other, A.where.ScalarOther, condition, a, 3)
    check(cmp.aten_where_scalar_other, A.where.ScalarOther, condition, a, True)


@pytest.mark.parametrize("values", [(1, 0), (1.5, 0), (True, False), (2, 0.5)], ids=str)
def test_where_scalar(values):
    condition = make((2, 3), torch.bool)
    check(cmp.aten_where_scalar, A.where.Scalar, condition, *values)


def test_where_broadcast_and_empty():
    check(cmp.aten_where, A.where.self, make((2, 1, 3), torch.bool), make((4, 1), torch.float32), torch.tensor(1.0))
    check(cmp.aten_where, A.where.self, make((0, 3), torch.bool), make((3,), torch.int64), make((1, 3), torch.int64))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_float_tests(dtype):
    x = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.5, -0.0, 0.0])
    x = x.to(dtype) if dtype.is_floating_point else make((2, 3), dtype)
    check(cmp.aten_isnan, A.isnan.default, x)
    check(cmp.aten_isinf, A.isinf.default, x)
    check(cmp.aten_isfinite, A.isfinite.default, x)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_masked_fill(dtype):
    x = make((3, 4), dtype, seed=1)
    mask = make((4,), torch.bool, seed=2)
    check(cmp.aten_masked_fill, A.masked_fill.Scalar, x, mask, 2.5 if dtype.is_floating_point else 2)
    check(cmp.aten_masked_fill, A.masked_fill.Scalar, x, mask, True)
    # (torch checks that a float value fits the dtype, which a graph cannot check: 7.0 fits all)
    check(cmp.aten_masked_fill_tensor, A.masked_fill.Tensor, x, mask, torch.tensor(7.0, dtype=torch.float64))
    check(cmp.aten_masked_fill_tensor, A.masked_fill.Tensor, x, mask, torch.tensor(1, dtype=dtype))


def test_masked_fill_broadcasts_mask():
    x = make((3,), torch.float32)
    check(cmp.aten_masked_fill, A.masked_fill.Scalar, x, make((2, 3), torch.bool), -1.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
def test_masked_fill_inf(dtype):
    x = make((2, 3), dtype)
    check(cmp.aten_masked_fill, A.masked_fill.Scalar, x, make((2, 3), torch.bool), float("-inf"))
