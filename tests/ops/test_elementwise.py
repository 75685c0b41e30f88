"""torchlib/ops/elementwise.py against torch, eagerly and traced, over every dtype torch accepts.

`check` is shared by the elementwise-family test files (activations, comparison, casting,
creation): it compares with the ATen op itself, eagerly and traced; traced bfloat16 cases go
through check_traced_bfloat16 (float32 graph inputs and outputs, cast inside the graph).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

from graph_builder.opset import numpy_to_torch
from torchlib.ops import elementwise as ew
from torchlib.testing import check_function, check_traced_bfloat16, run_traced

A = torch.ops.aten
BF16 = torch.bfloat16
ALL_DTYPES = [torch.float32, torch.float16, BF16, torch.float64, torch.int32, torch.int64, torch.bool,
              torch.uint8, torch.int8, torch.int16]  # fmt: skip
FLOAT_DTYPES = [torch.float32, torch.float16, BF16, torch.float64]
HALF_TOL = {torch.float16: (2e-3, 1e-5), BF16: (1.6e-2, 1e-5)}


def make(shape: tuple[int, ...], dtype: torch.dtype, low: float = -4.0, high: float = 4.0, seed: int = 0) -> torch.Tensor:
    """Deterministic test data in [low, high] (integers: the whole numbers in it; unsigned: from 0)."""
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=g).bool()
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    low_int = max(int(low), 0) if dtype == torch.uint8 else int(low)
    return torch.randint(low_int, int(high) + 1, shape, generator=g).to(dtype)


def _leaves(x: Any) -> list[Any]:
    if isinstance(x, (list, tuple)):
        return [leaf for v in x for leaf in _leaves(v)]
    if isinstance(x, dict):
        return _leaves(list(x.values()))
    return [x]


def _has_bf16(*xs: Any) -> bool:
    return any(isinstance(t, torch.Tensor) and t.dtype == BF16 for t in _leaves(list(xs)))


def _as_torch(x: Any) -> Any:
    """Eager calls without tensor arguments (creation ops) give numpy arrays back."""
    if isinstance(x, np.ndarray):
        return numpy_to_torch(x)
    if isinstance(x, tuple):
        return tuple(_as_torch(v) for v in x)
    return x


def check(fn: Any, aten: Any, *args: Any, rtol: float | None = None, atol: float | None = None,
          expected: Any = None, **kwargs: Any) -> None:
    """fn(*args, **kwargs) equals aten(*args, **kwargs), dtype and shape included, eagerly and
    traced. When torch raises, fn must raise too."""
    try:
        expected = aten(*args, **kwargs) if expected is None else expected
    except (RuntimeError, ValueError, TypeError, IndexError):
        with pytest.raises((TypeError, ValueError)):
            fn(*args, **kwargs)
        with pytest.raises((TypeError, ValueError)):
            run_traced(fn, *args, **kwargs)
        return
    out_dtype = _leaves(expected)[0].dtype
    if rtol is None and out_dtype in HALF_TOL:
        rtol, atol = HALF_TOL[out_dtype]
    if _has_bf16(args, kwargs, expected):
        eager = _as_torch(fn(*args, **kwargs))
        torch.testing.assert_close(eager, expected, rtol=rtol, atol=atol, equal_nan=True, msg=lambda m: f"eager: {m}")
        check_traced_bfloat16(fn, args, kwargs, expected=expected, rtol=rtol, atol=atol)
    else:
        check_function(lambda *a, **k: _as_torch(fn(*a, **k)), args, kwargs, expected=expected, rtol=rtol, atol=atol)


# -- unary ops --------------------------------------------------------------------------------------

# name -> (low, high) of the test data, inside the op's domain
UNARY = {
    "abs": (-4, 4), "neg": (-4, 4), "sign": (-4, 4), "square": (-4, 4), "floor": (-4, 4), "ceil": (-4, 4),
    "round": (-4, 4), "trunc": (-4, 4), "frac": (-4, 4), "exp": (-4, 4), "exp2": (-4, 4), "expm1": (-2, 2),
    "log": (0.1, 5), "log2": (0.1, 5), "log10": (0.1, 5), "log1p": (-0.9, 3), "sqrt": (0, 5), "rsqrt": (0.1, 5),
    "reciprocal": (0.5, 4), "sin": (-4, 4), "cos": (-4, 4), "tan": (-1.5, 1.5), "tanh": (-3, 3),
    "sinh": (-3, 3), "cosh": (-3, 3), "asinh": (-4, 4), "acosh": (1, 5), "atanh": (-0.9, 0.9),
    "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atan": (-4, 4), "erf": (-3, 3),
}  # fmt: skip


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name, dtype):
    low, high = UNARY[name]
    x = make((3, 4), dtype, low, high)
    check(getattr(ew, f"aten_{name}"), getattr(A, name).default, x)


@pytest.mark.parametrize("dtype", [torch.float32, BF16], ids=str)
@pytest.mark.parametrize("name", ["exp", "neg", "floor", "sqrt", "sign", "square"])
@pytest.mark.parametrize("shape", [(), (0, 3), (2, 0, 1)], ids=str)
def test_unary_scalar_and_empty(name, shape, dtype):
    x = make(shape, dtype, 0, 4)
    check(getattr(ew, f"aten_{name}"), getattr(A, name).default, x)


def test_accurate_near_zero():
    """expm1 and log1p keep full relative precision for tiny arguments."""
    x = torch.tensor([1e-10, -3e-8, 1e-5, 0.0, -0.5, 20.0, -20.0], dtype=torch.float64)
    check(ew.aten_expm1, A.expm1.default, x, rtol=1e-12, atol=0.0)
    check(ew.aten_log1p, A.log1p.default, x.abs(), rtol=1e-12, atol=0.0)


def test_special_values():
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0, 0.5, -0.5, 1.5, 2.5])
    for name in ["exp", "expm1", "log1p", "floor", "ceil", "round", "trunc", "frac", "sign", "abs", "tanh", "sqrt"]:
        check(getattr(ew, f"aten_{name}"), getattr(A, name).default, x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_round_decimals(dtype, decimals):
    x = make((4, 5), dtype, -300, 300)
    check(ew.aten_round_decimals, A.round.decimals, x, decimals=decimals)


def test_round_decimals_int_raises():
    check(ew.aten_round_decimals, A.round.decimals, make((3,), torch.int64), decimals=1)


# -- binary arithmetic ------------------------------------------------------------------------------

SAME_DTYPES = ALL_DTYPES
MIXED = [(torch.int64, torch.float32), (torch.int32, torch.float16), (torch.float16, torch.float64),
         (torch.bool, torch.int32), (torch.uint8, torch.int8), (BF16, torch.float32)]  # fmt: skip
PAIRS = [(d, d) for d in SAME_DTYPES] + MIXED


def _pair(dtypes, low=-6, high=6, nonzero=False):
    a = make((3, 4), dtypes[0], low, high, seed=1)
    b = make((4,), dtypes[1], low, high, seed=2)  # broadcasts
    if nonzero and not b.dtype.is_floating_point:
        b = torch.where(b == 0, torch.ones_like(b), b)
    return a, b


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
def test_add_sub_mul(dtypes):
    a, b = _pair(dtypes)
    check(ew.aten_add, A.add.Tensor, a, b)
    check(ew.aten_sub, A.sub.Tensor, a, b)
    check(ew.aten_rsub, A.rsub.Tensor, a, b)
    check(ew.aten_mul, A.mul.Tensor, a, b)
    alpha = True if a.dtype == b.dtype == torch.bool else 2
    check(ew.aten_add, A.add.Tensor, a, b, alpha=alpha)
    check(ew.aten_sub, A.sub.Tensor, a, b, alpha=alpha)
    check(ew.aten_rsub, A.rsub.Tensor, a, b, alpha=alpha)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("other", [2, 2.5, True])
def test_scalar_overloads(dtype, other):
    a = make((3, 4), dtype)
    check(ew.aten_add_scalar, A.add.Scalar, a, other)
    check(ew.aten_add_scalar, A.add.Scalar, a, other, 3 if not isinstance(other, float) and dtype != torch.bool else 1)
    check(ew.aten_sub_scalar, A.sub.Scalar, a, other)
    check(ew.aten_rsub_scalar, A.rsub.Scalar, a, other)
    check(ew.aten_mul, A.mul.Scalar, a, other)
    check(ew.aten_div, A.div.Scalar, a, other)


def test_float_alpha_with_int_tensor_raises():
    a = make((3,), torch.int64)
    check(ew.aten_add, A.add.Tensor, a, a, alpha=1.5)


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
def test_div(dtypes):
    a, b = _pair(dtypes, nonzero=True)
    check(ew.aten_div, A.div.Tensor, a, b)
    for mode in [None, "trunc", "floor"]:
        check(ew.aten_div_mode, A.div.Tensor_mode, a, b, rounding_mode=mode)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, BF16, torch.int64, torch.int32, torch.int8], ids=str)
@pytest.mark.parametrize("other", [3, -3, 0.7, -2.5])
def test_div_scalar_mode(dtype, other):
    a = make((5, 4), dtype, -20, 20)
    for mode in [None, "trunc", "floor"]:
        check(ew.aten_div_mode, A.div.Scalar_mode, a, other, rounding_mode=mode)


def test_div_floor_edge_cases():
    a = torch.tensor([1.0, -1.0, 0.0, -0.0, 5.0, -5.0, 1.0, float("inf"), 7.5, -7.5])
    b = torch.tensor([0.1, 0.1, -3.0, 3.0, 0.0, 0.0, float("inf"), 2.0, -2.5, 2.5])
    check(ew.aten_div_mode, A.div.Tensor_mode, a, b, rounding_mode="floor")
    check(ew.aten_div_mode, A.div.Tensor_mode, a, b, rounding_mode="trunc")
    ints = torch.tensor([7, -7, 7, -7, 0, 1, -1])
    divisors = torch.tensor([2, 2, -2, -2, 3, -3, 3])
    check(ew.aten_div_mode, A.div.Tensor_mode, ints, divisors, rounding_mode="floor")
    check(ew.aten_div_mode, A.div.Tensor_mode, ints, divisors, rounding_mode="trunc")


def test_div_bad_rounding_mode():
    with pytest.raises(ValueError, match="rounding_mode"):
        ew.aten_div_mode(torch.ones(2), torch.ones(2), rounding_mode="ceil")


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
def test_pow(dtypes):
    a, b = _pair(dtypes, 0, 3)
    check(ew.aten_pow, A.pow.Tensor_Tensor, a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("exponent", [0, 1, 2, 3, 0.5, -1.5, 2.0])
def test_pow_tensor_scalar(dtype, exponent):
    a = make((3, 4), dtype, 0.5, 3)
    check(ew.aten_pow_tensor_scalar, A.pow.Tensor_Scalar, a, exponent)


def test_pow_int_exact_and_negative_exponent():
    a = torch.tensor([3, -3, 7], dtype=torch.int64)
    check(ew.aten_pow_tensor_scalar, A.pow.Tensor_Scalar, a, 39)  # beyond double's 53 bits
    check(ew.aten_pow_tensor_scalar, A.pow.Tensor_Scalar, a, -1)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("base", [2, 1.5])
def test_pow_scalar(dtype, base):
    e = make((3, 4), dtype, 0, 4)
    check(ew.aten_pow_scalar, A.pow.Scalar, base, e)


@pytest.mark.parametrize("dtypes", PAIRS, ids=str)
def test_remainder_fmod(dtypes):
    a, b = _pair(dtypes, -9, 9, nonzero=True)
    check(ew.aten_remainder, A.remainder.Tensor, a, b)
    check(ew.aten_fmod, A.fmod.Tensor, a, b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, BF16, torch.float64, torch.int64, torch.int32, torch.int8], ids=str)
@pytest.mark.parametrize("other", [3, -3, 2.5, -0.75])
def test_remainder_fmod_scalar(dtype, other):
    a = make((5, 4), dtype, -20, 20)
    check(ew.aten_remainder, A.remainder.Scalar, a, other)
    check(ew.aten_fmod, A.fmod.Scalar, a, other)
    b = make((5, 4), dtype, 1, 6)
    check(ew.aten_remainder, A.remainder.Scalar_Tensor, other, b)


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float32), (torch.float64, torch.float64), (torch.float16, torch.float16),
                                    (BF16, BF16), (torch.int64, torch.int64), (torch.int32, torch.float32)], ids=str)  # fmt: skip
def test_atan2(dtypes):
    a, b = _pair(dtypes)
    check(ew.aten_atan2, A.atan2.default, a, b)


def test_atan2_quadrants():
    y = torch.tensor([1.0, 1.0, -1.0, -1.0, 0.0, 0.0, 2.0, -2.0, 0.0])
    x = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 0.0, 0.0, 0.0])
    check(ew.aten_atan2, A.atan2.default, y, x)


# -- fill, lerp, addcmul, addcdiv, clone ----------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_fill_clone(dtype):
    x = make((2, 0, 3), dtype) if dtype == torch.int16 else make((2, 3), dtype)
    check(ew.aten_fill, A.fill.Scalar, x, 2.7)
    check(ew.aten_fill, A.fill.Scalar, x, True)
    check(ew.aten_fill_tensor, A.fill.Tensor, x, torch.tensor(-1.5, dtype=torch.float64))
    check(ew.aten_clone, A.clone.default, x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64], ids=str)
@pytest.mark.parametrize("weight", [0.25, 0.75, -1.0])
def test_lerp(dtype, weight):
    a = make((3, 4), dtype, seed=1)
    b = make((4,), dtype, seed=2)
    check(ew.aten_lerp, A.lerp.Scalar, a, b, weight)
    w = make((3, 1), dtype, -0.5, 1.5, seed=3)
    check(ew.aten_lerp_tensor, A.lerp.Tensor, a, b, w)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_addcmul_addcdiv(dtype):
    s = make((3, 4), dtype, seed=1)
    t1 = make((4,), dtype, seed=2)
    t2 = make((3, 1), dtype, 1, 4, seed=3)
    check(ew.aten_addcmul, A.addcmul.default, s, t1, t2)
    check(ew.aten_addcmul, A.addcmul.default, s, t1, t2, value=2 if not dtype.is_floating_point else 0.5)
    check(ew.aten_addcdiv, A.addcdiv.default, s, t1, t2)
    check(ew.aten_addcdiv, A.addcdiv.default, s, t1, t2, value=-0.5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_nextafter_edges(dtype: torch.dtype) -> None:
    """Zeros of both signs, subnormals, the smallest normal and its double, powers of two in
    both directions, the largest finite value, infinities and NaN, against every other one."""
    fi = torch.finfo(dtype)
    special = [0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -7.25, fi.max, -fi.max, fi.tiny, -fi.tiny, fi.tiny * 2, fi.smallest_normal * fi.eps,
               -fi.smallest_normal * fi.eps, 3 * fi.smallest_normal * fi.eps, float("inf"), float("-inf"), float("nan")]
    t = torch.tensor(special, dtype=torch.float64).to(dtype)
    a, b = (v.reshape(-1) for v in torch.meshgrid(t, t, indexing="ij"))
    g = torch.Generator().manual_seed(0)
    r = (torch.randn(300, generator=g, dtype=torch.float64) * 10.0 ** torch.randint(-40, 40, (300,), generator=g)).to(dtype)
    a, b = torch.cat([a, r]), torch.cat([b, torch.where(torch.arange(300) % 2 == 0, r.abs() * 2, -r.abs() * 2)])
    expected = torch.nextafter(a, b)
    got = ew.aten_nextafter(a, b)
    assert torch.equal(got.isnan(), expected.isnan())
    keep = ~expected.isnan()
    assert torch.equal(got[keep], expected[keep]) and torch.equal(got[keep].signbit(), expected[keep].signbit())


# -- gcd and lcm ---------------------------------------------------------------------------------

INT64_MIN = -(2**63)


def test_gcd_lcm_int64_edges():
    """Zeros, signs, |MIN| wrapping around as in torch (gcd(MIN, 7) = -1), and consecutive
    Fibonacci numbers F92, F91 (Euclid's longest int64 case)."""
    a = torch.tensor([0, 0, -4, 4, -4, 6, INT64_MIN, INT64_MIN, 7, -7, 0, 2**62, 7540113804746346429])
    b = torch.tensor([0, 5, 6, -6, -6, 0, 0, INT64_MIN, INT64_MIN, 2, -3, 3 * 2**40, 4660046610375530309])
    check_function(ew.aten_gcd, (a, b), expected=torch.gcd(a, b))
    check_function(ew.aten_lcm, (a, b), expected=torch.lcm(a, b))


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.uint8])
def test_gcd_lcm_narrow_integers_wrap_like_torch(dtype):
    """The whole range, MIN included (int8 gcd(-128, 6) is -2: |-128| stays -128) and lcm
    overflowing the dtype (computed in C++'s int, then converted)."""
    g = torch.Generator().manual_seed(0)
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max + 1, (300,), generator=g).to(dtype)
    y = torch.randint(info.min, info.max + 1, (300,), generator=g).to(dtype)
    x[:4] = torch.tensor([info.min, info.min, 0, info.max]).to(dtype)
    y[:4] = torch.tensor([0, 6, 0, info.max - 1]).to(dtype)
    for ours, theirs in ((ew.aten_gcd, torch.gcd), (ew.aten_lcm, torch.lcm)):
        check_function(ours, (x, y), expected=theirs(x, y))


def test_gcd_lcm_broadcast_promote_and_refuse_floats():
    a, b = torch.tensor([[4, 6, 9]]), torch.tensor([[3], [0]], dtype=torch.int8)
    check_function(ew.aten_gcd, (a, b), expected=torch.gcd(a, b))
    check_function(ew.aten_lcm, (a, b), expected=torch.lcm(a, b))
    empty = torch.zeros(0, 3, dtype=torch.int32)
    check_function(ew.aten_gcd, (empty, torch.ones(3, dtype=torch.int32)), expected=torch.gcd(empty, torch.ones(3, dtype=torch.int32)))
    with pytest.raises(TypeError, match="integer"):
        ew.aten_gcd(torch.ones(2), torch.ones(2))
    with pytest.raises(TypeError, match="integer"):
        ew.aten_lcm(torch.ones(2, dtype=torch.bool), torch.ones(2, dtype=torch.bool))
