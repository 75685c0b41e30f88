"""torchlib/ops/activations.py against torch, eagerly and traced (bfloat16 traced only)."""

from __future__ import annotations

import pytest
import torch
from test_elementwise import ALL_DTYPES, BF16, FLOAT_DTYPES, check, make

from torchlib.ops import activations as act
from torchlib.testing import check_function

A = torch.ops.aten

UNARY = ["relu", "relu6", "sigmoid", "silu", "hardsigmoid", "hardswish", "selu", "mish", "log_sigmoid", "hardtanh",
         "leaky_relu", "elu", "celu", "softplus", "gelu"]  # fmt: skip


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype):
    x = make((4, 6), dtype, -8, 8)
    check(getattr(act, f"aten_{name}"), getattr(A, name).default, x)


@pytest.mark.parametrize("name", ["relu", "sigmoid", "silu", "gelu", "hardswish", "softplus", "mish", "log_sigmoid"])
@pytest.mark.parametrize("shape", [(), (0, 4)], ids=str)
def test_unary_scalar_and_empty(name, shape):
    x = make(shape, torch.float32, -3, 3)
    check(getattr(act, f"aten_{name}"), getattr(A, name).default, x)


def test_special_values():
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 100.0, -100.0])
    for name in ["relu", "relu6", "sigmoid", "silu", "hardsigmoid", "hardswish", "elu", "softplus", "log_sigmoid",
                 "leaky_relu", "hardtanh", "mish"]:  # fmt: skip
        check(getattr(act, f"aten_{name}"), getattr(A, name).default, x)


def test_gelu_special_values():
    """gelu(inf) is inf. torch's answer depends on the CPU: its AVX512 kernel gives NaN there
    (inf times its erf approximation's 0 term), its scalar and AVX2 kernels inf; ours is the
    limit, checked here against the exact values rather than the machine's torch."""
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 100.0, -100.0])
    for approximate in ("none", "tanh"):
        got = act.aten_gelu(x, approximate=approximate)
        exact = torch.tensor([float("inf"), float("nan"), float("nan"), -0.0, 0.0, 100.0, -0.0])
        torch.testing.assert_close(got, exact, equal_nan=True, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(dtype, approximate):
    x = make((5, 7), dtype, -5, 5)
    tol = {"rtol": 1e-6, "atol": 1e-6} if dtype == torch.float64 else {}
    check(act.aten_gelu, A.gelu.default, x, approximate=approximate, **tol)


def test_gelu_bad_approximate():
    with pytest.raises(ValueError, match="approximate"):
        act.aten_gelu(torch.ones(2), approximate="erf")


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("limits", [(-2, 3), (0, 6), (-0.5, 0.5)], ids=str)
def test_hardtanh(dtype, limits):
    check(act.aten_hardtanh, A.hardtanh.default, make((3, 5), dtype, -8, 8), *limits)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("params", [(1.0, 1.0, 1.0), (0.5, 1.0, 1.0), (1.0, 2.0, 1.0), (1.5, 0.5, 2.0)], ids=str)
def test_elu(dtype, params):
    check(act.aten_elu, A.elu.default, make((3, 5), dtype, -4, 4), *params)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.0])
def test_celu_leaky_relu(dtype, alpha):
    x = make((3, 5), dtype, -4, 4)
    check(act.aten_celu, A.celu.default, x, alpha)
    check(act.aten_leaky_relu, A.leaky_relu.default, x, alpha)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("params", [(1, 20), (2, 20), (0.5, 1.0), (1, 0.0)], ids=str)
def test_softplus(dtype, params):
    x = make((4, 6), dtype, -30, 30)
    check(act.aten_softplus, A.softplus.default, x, *params)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64], ids=str)
def test_log_sigmoid_forward(dtype):
    x = make((3, 4), dtype, -10, 10)
    check(act.aten_log_sigmoid_forward, A.log_sigmoid_forward.default, x)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [torch.int64], ids=str)
@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_glu(dtype, dim):
    x = make((4, 6, 2), dtype)
    check(act.aten_glu, A.glu.default, x, dim)


def test_glu_odd_raises():
    check(act.aten_glu, A.glu.default, make((3, 5), torch.float32), -1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES, ids=str)
@pytest.mark.parametrize("dim", [-1, 0, 2])
def test_softmax_family(dtype, dim):
    x = make((3, 4, 5), dtype, -6, 6)
    check(act.aten__softmax, A._softmax.default, x, dim, False)
    check(act.aten_softmax, A.softmax.int, x, dim)
    # torch's half-type log_softmax rounds x - max to the half type before it subtracts the log of
    # the sum; we round once: the difference is up to half a unit of |x - max| in the last place
    tol = {torch.float16: {"rtol": 2e-3, "atol": 4e-3}, BF16: {"rtol": 1.6e-2, "atol": 3e-2}}.get(dtype, {})
    check(act.aten__log_softmax, A._log_softmax.default, x, dim, False, **tol)
    check(act.aten_log_softmax, A.log_softmax.int, x, dim, **tol)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtype_argument(name):
    x = make((3, 4), torch.int64, -5, 5)
    check(getattr(act, f"aten_{name}"), getattr(A, name).int, x, 1, dtype=torch.float64)
    check(getattr(act, f"aten_{name}"), getattr(A, name).int, x.half(), 0, dtype=torch.float32)
    check(getattr(act, f"aten_{name}"), getattr(A, name).int, x, 1)  # int without dtype: torch raises


@pytest.mark.parametrize("shape", [(), (0, 3), (1,)], ids=str)
def test_softmax_scalar_and_empty(shape):
    x = make(shape, torch.float32)
    check(act.aten__softmax, A._softmax.default, x, 0, False)
    check(act.aten__log_softmax, A._log_softmax.default, x, 0, False)


@pytest.mark.parametrize("dtype", [torch.float16, BF16], ids=str)
def test_softmax_half_to_float(dtype):
    # torch's CPU kernel refuses half_to_float (CUDA only): the result is softmax in float32
    x = make((3, 4), dtype)
    check(act.aten__softmax, None, x, 1, True, expected=torch.softmax(x.float(), 1))
    check(act.aten__log_softmax, None, x, 1, True, expected=torch.log_softmax(x.float(), 1))


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
@pytest.mark.parametrize("bounds", [(-1, 2), (None, 1), (0, None), (0.5, 2.5), (3, 1), (None, None)], ids=str)
def test_clamp(dtype, bounds):
    x = make((3, 4), dtype)
    check(act.aten_clamp, A.clamp.default, x, *bounds)
    low, high = bounds
    if low is not None:
        check(act.aten_clamp_min, A.clamp_min.default, x, low)
    if high is not None:
        check(act.aten_clamp_max, A.clamp_max.default, x, high)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_clamp_tensor(dtype):
    x = make((3, 4), dtype, seed=1)
    low = make((4,), dtype, -3, 0, seed=2)
    high = make((3, 1), dtype, 0, 3, seed=3)
    check(act.aten_clamp_tensor, A.clamp.Tensor, x, low, high)
    check(act.aten_clamp_tensor, A.clamp.Tensor, x, None, high)
    check(act.aten_clamp_tensor, A.clamp.Tensor, x, low)
    check(act.aten_clamp_min_tensor, A.clamp_min.Tensor, x, low)
    check(act.aten_clamp_max_tensor, A.clamp_max.Tensor, x, high)


def test_clamp_promotes_and_broadcasts():
    x = make((3, 1), torch.int64)
    check(act.aten_clamp_tensor, A.clamp.Tensor, x, torch.tensor([0.5, -1.5, 0.0]), None)  # int + float bound -> float
    check(act.aten_clamp, A.clamp.default, x, 0.5)
    check(act.aten_clamp_min, A.clamp_min.default, x.half(), -1)


def test_clamp_nan_propagates():
    x = torch.tensor([float("nan"), 1.0, -5.0, 5.0])
    check(act.aten_clamp, A.clamp.default, x, -1.0, 1.0)
    check(act.aten_clamp_tensor, A.clamp.Tensor, x, torch.tensor(-1.0), torch.tensor(1.0))


# -- NaN and inf as torch gives them (issue 13) -------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_clamp_with_one_bound_keeps_infinities_and_nan(dtype):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, inf, -inf, 0.25, 1.0], dtype=dtype)
    for fn, args in [(act.aten_clamp_min, (x, 0.5)), (act.aten_clamp_max, (x, 0.5)), (act.aten_clamp_min, (x, nan)),
                     (act.aten_clamp_max, (x, nan)), (act.aten_clamp, (x, nan, 0.5)), (act.aten_clamp, (x, 0.0, 0.5))]:  # fmt: skip
        expected = getattr(torch.ops.aten, fn.__name__[len("aten_"):])(*args)
        check_function(fn, args, expected=expected)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_log_softmax_rows_with_inf_or_only_minus_inf_are_nan(dtype):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[nan, inf, -inf, 1.0], [inf, 1.0, 2.0, 3.0], [-inf, 1.0, 2.0, 3.0], [-inf, -inf, -inf, -inf]], dtype=dtype)
    for dim in (0, 1):
        check_function(act.aten_log_softmax, (x, dim), expected=torch.ops.aten.log_softmax(x, dim))
        check_function(act.aten__log_softmax, (x, dim, False), expected=torch.ops.aten._log_softmax(x, dim, False))
    y = torch.randn(3, 4, 5, dtype=dtype)
    check_function(act.aten_log_softmax, (y, -1), expected=torch.ops.aten.log_softmax(y, -1))
    check_function(act.aten_log_softmax, (y[0, 0, 0], 0), expected=torch.ops.aten.log_softmax(y[0, 0, 0], 0))
