"""torchlib/ops/special/ against torch, eagerly and traced, over every dtype torch accepts."""

from __future__ import annotations

import math
import types

import pytest
import torch
from test_elementwise import ALL_DTYPES, BF16, FLOAT_DTYPES, check, make

from torchlib.ops.special import bessel, erf, gamma, igamma, misc, polynomials

# every function of the package by name (sp.aten_erfc, ...)
sp = types.SimpleNamespace(**{k: v for m in (bessel, erf, gamma, igamma, misc, polynomials) for k, v in vars(m).items() if k.startswith("aten_")})

A = torch.ops.aten
F64 = torch.float64
INT_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]

# name -> (low, high) of the test data, inside the op's domain
UNARY = {
    "erfc": (-4, 6), "erfinv": (-0.999, 0.999), "special_ndtr": (-6, 6), "special_log_ndtr": (-30, 8),
    "special_erfcx": (-3, 20), "special_ndtri": (0, 1), "lgamma": (-6.5, 30), "digamma": (-6.5, 30), "i0": (-20, 20), "special_i0e": (-20, 20), "special_i1": (-20, 20), "special_i1e": (-20, 20), "sinc": (-4, 4),
    "special_entr": (-1, 5), "deg2rad": (-400, 400), "rad2deg": (-7, 7), "sgn": (-4, 4),
}  # fmt: skip


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    low, high = UNARY[name]
    x = make((4, 5), dtype, low, high)
    check(getattr(sp, f"aten_{name}"), getattr(A, name).default, x)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_values(name):
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1e-30])
    if name == "erfinv":
        x = torch.cat([x, torch.tensor([0.9999, -0.99999, 1e-6])])
    check(getattr(sp, f"aten_{name}"), getattr(A, name).default, x)


@pytest.mark.parametrize("shape", [(), (0, 3)], ids=str)
def test_unary_scalar_and_empty(shape):
    x = make(shape, torch.float32, 0.1, 3)
    for name in ["erfc", "lgamma", "digamma", "i0"]:
        check(getattr(sp, f"aten_{name}"), getattr(A, name).default, x)


def test_gamma_family_precision():
    """lgamma, digamma and i0 keep double precision, far from 0 and near the poles too."""
    x = torch.tensor([1e-8, 0.1, 1.0, 1.5, 2.0, 2.5, 7.3, 123.4, 1e5, 1e12, -0.3, -1.7, -10.25, -100.5], dtype=F64)
    check(sp.aten_lgamma, A.lgamma.default, x, rtol=1e-12, atol=1e-12)
    check(sp.aten_digamma, A.digamma.default, x, rtol=1e-10, atol=1e-12)
    bessel_x = torch.cat([torch.linspace(-700, 700, 57, dtype=F64), torch.tensor([-1e-3, 7.99, 8.0, 8.01, 1e5], dtype=F64)])
    for name in ["i0", "special_i0e", "special_i1", "special_i1e"]:
        check(getattr(sp, f"aten_{name}"), getattr(A, name).default, bessel_x, rtol=1e-12, atol=0.0)


def test_erf_family_precision():
    """The erf family keeps double precision, in the tails too."""
    x = torch.tensor([-60.0, -20.0, -5.0, -1.5, -1.0, -0.5, -1e-3, 0.0, 0.3, 0.99, 1.0, 3.0, 7.9, 8.1, 10.0, 26.0], dtype=F64)
    # (in the far right tail x / sqrt(2) rounds first: a relative error of about x^2 * 1e-16)
    check(sp.aten_special_log_ndtr, A.special_log_ndtr.default, x, rtol=1e-12, atol=0.0)
    check(sp.aten_erfc, A.erfc.default, x, rtol=1e-13, atol=0.0)
    check(sp.aten_special_erfcx, A.special_erfcx.default, x.clamp(min=-20), rtol=1e-13, atol=0.0)
    check(sp.aten_special_ndtr, A.special_ndtr.default, x, rtol=1e-13, atol=1e-16)
    y = torch.tensor([-1 + 1e-15, -0.999999, -0.7, -0.5, -1e-9, 0.0, 1e-5, 0.3, 0.5000001, 0.9, 0.999, 1 - 1e-12], dtype=F64)
    check(sp.aten_erfinv, A.erfinv.default, y, rtol=1e-13, atol=0.0)
    p = torch.tensor([0.0, 5e-324, 1e-300, 1e-20, 1e-5, 0.1, 0.25, 0.5, 0.6, 0.75, 0.9, 1 - 1e-10, 1.0, 1.5, -0.1], dtype=F64)
    check(sp.aten_special_ndtri, A.special_ndtri.default, p, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("eps", [None, 1e-3, 0.3])
def test_logit(dtype, eps):
    x = make((3, 4), dtype, 0.0, 1.0)
    check(sp.aten_logit, A.logit.default, x, eps)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_signbit_positive_nan_to_num(dtype):
    x = make((3, 4), dtype)
    if dtype.is_floating_point:
        x[0, :] = torch.tensor([0.0, float("inf"), float("-inf"), -0.0])
        check(sp.aten_signbit, A.signbit.default, x)  # (the sign of a NaN cannot be read in ONNX)
        x[0, 0] = float("nan")
    else:
        check(sp.aten_signbit, A.signbit.default, x)
    check(sp.aten_positive, A.positive.default, x)
    check(sp.aten_nan_to_num, A.nan_to_num.default, x)
    check(sp.aten_nan_to_num, A.nan_to_num.default, x, 1.5, 100.0, -7.0)


def test_nan_to_num_bfloat16_max():
    x = torch.tensor([float("inf"), -float("inf"), float("nan"), 1.0], dtype=BF16)
    check(sp.aten_nan_to_num, A.nan_to_num.default, x, None, 1e30)


# -- binary ops --------------------------------------------------------------------------------------

BINARY = {
    "xlogy": A.xlogy.Tensor, "special_xlog1py": A.special_xlog1py.default, "hypot": A.hypot.default,
    "logaddexp": A.logaddexp.default, "logaddexp2": A.logaddexp2.default, "copysign": A.copysign.Tensor,
    "true_divide": A.true_divide.Tensor, "floor_divide": A.floor_divide.default, "ldexp": A.ldexp.Tensor,
    "float_power": A.float_power.Tensor_Tensor, "heaviside": A.heaviside.default,
}  # fmt: skip


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(name, dtype):
    a = make((3, 1, 4), dtype, -4, 4, seed=1)
    b = make((2, 4), dtype, -4, 4, seed=2)
    if name in ("xlogy", "special_xlog1py"):
        a[0, 0, :2] = 0
        b = b.abs() if dtype != torch.bool else b
    if name == "heaviside" and dtype != torch.bool:
        a[0, 0, :2] = 0
    if name in ("floor_divide",) and not dtype.is_floating_point:
        b = torch.where(b == 0, torch.ones_like(b), b)
    check(getattr(sp, f"aten_{name}"), BINARY[name], a, b)


@pytest.mark.parametrize("name", ["xlogy", "copysign", "true_divide", "floor_divide", "ldexp", "float_power", "hypot", "logaddexp"])
def test_binary_mixed_dtypes(name):
    a = make((3, 4), torch.float16, -4, 4, seed=1)
    b = make((4,), torch.int64, -4, 4, seed=2).abs() + 1
    check(getattr(sp, f"aten_{name}"), BINARY[name], a, b)
    check(getattr(sp, f"aten_{name}"), BINARY[name], b, torch.tensor(2.5))


def test_binary_special_values():
    v = [float("inf"), float("-inf"), float("nan"), 0.0, -0.0, 1.0, -2.5]
    a = torch.tensor(v).reshape(-1, 1).expand(-1, len(v))
    b = torch.tensor(v).reshape(1, -1).expand(len(v), -1)
    for name in ["xlogy", "special_xlog1py", "hypot", "logaddexp", "logaddexp2", "copysign", "heaviside", "floor_divide"]:
        check(getattr(sp, f"aten_{name}"), BINARY[name], a, b)


def test_heaviside_different_dtypes_raises():
    check(sp.aten_heaviside, A.heaviside.default, torch.tensor([1, 0]), torch.tensor([0.5, 0.5]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, BF16], ids=str)
def test_scalar_overloads(dtype):
    x = make((3, 4), dtype, 0, 4)
    check(sp.aten_xlogy, A.xlogy.Scalar_Other, x, 2.5)
    check(sp.aten_xlogy, A.xlogy.Scalar_Self, 3, x)
    check(sp.aten_special_xlog1py, A.special_xlog1py.other_scalar, x, 2)
    check(sp.aten_special_xlog1py, A.special_xlog1py.self_scalar, 0.5, x)
    check(sp.aten_copysign, A.copysign.Scalar, x, -1.0)
    check(sp.aten_true_divide, A.true_divide.Scalar, x, 3)
    check(sp.aten_floor_divide, A.floor_divide.Scalar, x, 3)
    check(sp.aten_floor_divide, A.floor_divide.Scalar, x, -1.5)
    check(sp.aten_float_power, A.float_power.Tensor_Scalar, x, 2)
    check(sp.aten_float_power, A.float_power.Tensor_Scalar, x, 0.5)
    check(sp.aten_float_power, A.float_power.Scalar, 2.0, x)


# -- shifts ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", INT_DTYPES + [torch.float32, torch.bool], ids=str)
def test_shifts(dtype):
    a = make((4, 6), dtype, -100, 100, seed=3)
    bits = 64 if dtype in (torch.int64, torch.float32, torch.bool) else torch.iinfo(dtype).bits
    shift = torch.tensor([0, 1, 3, bits - 1, bits, bits + 2]).to(dtype) if dtype.is_floating_point or dtype == torch.bool else \
        torch.tensor([0, 1, 3, bits - 1, min(bits, torch.iinfo(dtype).max), -1 if dtype != torch.uint8 else 200]).to(dtype)  # fmt: skip
    check(sp.aten_bitwise_left_shift, A.bitwise_left_shift.Tensor, a, shift)
    check(sp.aten_bitwise_right_shift, A.bitwise_right_shift.Tensor, a, shift)
    check(sp.aten_bitwise_left_shift, A.bitwise_left_shift.Tensor_Scalar, a, 2)
    check(sp.aten_bitwise_right_shift, A.bitwise_right_shift.Tensor_Scalar, a, 3)
    check(sp.aten_bitwise_left_shift, A.bitwise_left_shift.Scalar_Tensor, 3, shift)
    check(sp.aten_bitwise_right_shift, A.bitwise_right_shift.Scalar_Tensor, 50 if dtype == torch.uint8 else -50, shift)
    check(sp.aten_bitwise_left_shift, A.__lshift__.Scalar, a, 1)
    check(sp.aten_bitwise_right_shift, A.__rshift__.Tensor, a, shift)


def test_shift_extremes():
    a = torch.tensor([torch.iinfo(torch.int64).min, torch.iinfo(torch.int64).max, -1, 1])
    check(sp.aten_bitwise_left_shift, A.bitwise_left_shift.Tensor, a, torch.tensor([1, 1, 63, 63]))
    check(sp.aten_bitwise_right_shift, A.bitwise_right_shift.Tensor, a, torch.tensor([63, 62, 70, 0]))


def test_sinc_pi_multiples():
    x = torch.tensor([1.0, 2.0, -3.0, 0.25, 100.0], dtype=F64)
    check(sp.aten_sinc, A.sinc.default, x, rtol=1e-7, atol=1e-15)
    assert math.isclose(float(sp.aten_sinc(torch.tensor([0.0]))[0]), 1.0)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_frexp(dtype):
    x = make((3, 5), dtype, -1000, 1000)
    if dtype.is_floating_point:
        x[0] = torch.tensor([0.0, -0.0, float("inf"), float("nan"), 0.75])
        x[1] = torch.tensor([1.0, -2.0, 0.5, torch.finfo(dtype).max, torch.finfo(dtype).tiny])
    check(sp.aten_frexp, A.frexp.Tensor, x)


def test_frexp_extremes():
    x = torch.tensor([5e-324, 1.7e308, 2.0**-1022, 0.1, 1 - 2**-53, -(2.0**1023)], dtype=F64)
    check(sp.aten_frexp, A.frexp.Tensor, x)
    y = torch.tensor([1e-45, 1e-40, 3e38, 1.0000001, 0.99999994])
    check(sp.aten_frexp, A.frexp.Tensor, y)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("p", [1, 3])
def test_mvlgamma(dtype, p):
    x = make((3, 4), dtype, 2, 9)
    check(sp.aten_mvlgamma, A.mvlgamma.default, x, p)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", ["special_modified_bessel_i0", "special_modified_bessel_i1", "special_spherical_bessel_j0"])
def test_bessel_aliases(name, dtype):
    x = make((3, 4), dtype, -12, 12)
    if dtype.is_floating_point:
        x[0] = torch.tensor([0.0, 0.3, float("inf"), -0.49])
    check(getattr(sp, f"aten_{name}"), getattr(A, name).default, x)
