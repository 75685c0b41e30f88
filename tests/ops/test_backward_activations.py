"""torchlib/ops/backward_activations.py against torch on edge values OpInfo samples do not hold:
infinities, NaN, the kink points (0, +-3, the hardtanh bounds), empty tensors, float64."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch

from torchlib.ops import backward_activations as B
from torchlib.testing import check_function

A = torch.ops.aten
EDGES = torch.tensor([-float("inf"), -30.0, -3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0, 30.0, float("inf"), float("nan")])

CASES: list[tuple[Callable[..., Any], Any, Callable[[torch.Tensor, torch.Tensor], tuple]]] = [
    (B.aten_threshold_backward, A.threshold_backward, lambda g, x: (g, x, 0.5)),
    (B.aten_sigmoid_backward, A.sigmoid_backward, lambda g, x: (g, torch.sigmoid(x))),
    (B.aten_tanh_backward, A.tanh_backward, lambda g, x: (g, torch.tanh(x))),
    (B.aten_silu_backward, A.silu_backward, lambda g, x: (g, x)),
    (B.aten_hardswish_backward, A.hardswish_backward, lambda g, x: (g, x)),
    (B.aten_hardsigmoid_backward, A.hardsigmoid_backward, lambda g, x: (g, x)),
    (B.aten_hardtanh_backward, A.hardtanh_backward, lambda g, x: (g, x, -1.0, 1.0)),
    (B.aten_elu_backward, A.elu_backward, lambda g, x: (g, 1.0, 1.0, 1.0, False, x)),
    (B.aten_leaky_relu_backward, A.leaky_relu_backward, lambda g, x: (g, x, 0.01, False)),
    (B.aten_softplus_backward, A.softplus_backward, lambda g, x: (g, x, 1.0, 20.0)),
    (B.aten_log_sigmoid_backward, A.log_sigmoid_backward, lambda g, x: (g, x, torch.exp(-x.abs()))),
    (B.aten_hardshrink_backward, A.hardshrink_backward, lambda g, x: (g, x, 0.5)),
    (B.aten_softshrink_backward, A.softshrink_backward, lambda g, x: (g, x, 1.0)),
    (B.aten_mish_backward, A.mish_backward, lambda g, x: (g, x)),
]


@pytest.mark.parametrize("fn,ref,make", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_edges(fn: Callable[..., Any], ref: Any, make: Callable[..., tuple], dtype: torch.dtype) -> None:
    x = EDGES.to(dtype)
    args = make(torch.linspace(-2, 2, x.numel(), dtype=dtype), x)
    check_function(fn, args, expected=ref(*args))
    empty = make(torch.zeros(0, 3, dtype=dtype), torch.zeros(0, 3, dtype=dtype))
    check_function(fn, empty, expected=ref(*empty))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_edges(approximate: str) -> None:
    x = EDGES[:-1].to(torch.float64)  # finite and infinite (torch's tanh form gives NaN at inf too)
    g = torch.ones_like(x)
    check_function(B.aten_gelu_backward, (g, x), {"approximate": approximate},
                   expected=A.gelu_backward(g, x, approximate=approximate))  # fmt: skip


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_mse_loss_backward_empty(reduction: int) -> None:
    x, t = torch.zeros(0, 2), torch.zeros(0, 2)
    g = torch.tensor(1.0) if reduction else torch.zeros(0, 2)
    check_function(B.aten_mse_loss_backward, (g, x, t, reduction), expected=A.mse_loss_backward(g, x, t, reduction))


@pytest.mark.parametrize("fn, ref", [(B.aten_silu_backward, A.silu_backward), (B.aten_mish_backward, A.mish_backward)])
def test_silu_mish_backward_with_a_huge_grad(fn: Callable[..., Any], ref: Any) -> None:
    """Issue 13, fuzz `huge`: a grad near finfo.max shows the derivative's relative error.
    onnxruntime's Sigmoid is only absolutely accurate in the tails (and its float32 Tanh a few
    1e-7 off); torch's 1 / (1 + exp(-x)) and tanh(log1p(exp(x))) are within about an ulp."""
    info = torch.finfo(torch.float32)
    g = torch.randn(40)
    g[:5] = torch.tensor([info.max, -info.max, info.tiny, info.max / 3, -info.tiny])
    x = torch.cat([torch.randn(20), torch.linspace(-12, 12, 20)])
    x[:5] = torch.tensor([-8.0, -3.0, 0.5, -9.0, 2.0])
    check_function(fn, (g, x), expected=ref(g, x))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_backward_is_float64_accurate_where_its_terms_cancel(approximate: str) -> None:
    """Issue 13, fuzz `huge`: gelu'(x) crosses zero near x = -0.75, where cdf and x * pdf cancel.
    With a grad near finfo.max, torch's float32 kernel is up to 1.2e-5 relative off there; ours
    is torch's float64 result rounded to float32."""
    x = torch.cat([torch.linspace(-3.0, 0.5, 200), torch.tensor([-2.826124668121338, -0.8001519441604614])])
    g = torch.full_like(x, torch.finfo(torch.float32).max / 3)
    exact = A.gelu_backward(g.double(), x.double(), approximate=approximate)
    got = torch.as_tensor(B.aten_gelu_backward(g, x, approximate=approximate))
    torch.testing.assert_close(got, exact.float(), rtol=2.5e-7, atol=0)
