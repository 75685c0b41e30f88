"""Narrow float dtypes: torch's float8 types are ONNX's FLOAT8* (opset 19+), float8_e8m0fnu
FLOAT8E8M0 (opset 24+); what cannot be exported exactly says so."""

from __future__ import annotations

import pytest
import torch

import torchlib

FLOAT8 = [torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz]


class ScaledWeight(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("weight", (torch.randn(3, 4) * 2).to(dtype))

    def forward(self, x):
        return x @ self.weight.to(torch.float32)


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_float8_weight_cast_to_float(dtype):
    x = torch.randn(2, 3)
    result = torchlib.export(ScaledWeight(dtype), (x,))
    assert result.graph.initializers["weight"].dtype.torch_name == str(dtype).removeprefix("torch.")
    torch.testing.assert_close(result(x), ScaledWeight(dtype)(x))


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_float8_round_trip_in_the_graph(dtype):
    class RoundTrip(torch.nn.Module):
        def forward(self, x):
            return x.to(dtype).to(torch.float32)

    x = torch.randn(4, 5) * 4
    torch.testing.assert_close(torchlib.export(RoundTrip(), (x,))(x), RoundTrip()(x), rtol=0, atol=0)


def test_float8_needs_opset_19():
    with pytest.raises(Exception, match="FLOAT8E4M3FN.*export with a newer opset"):
        torchlib.export(ScaledWeight(torch.float8_e4m3fn), (torch.randn(2, 3),), opset=18)


def test_float8_e8m0_scale_at_opset_24():
    class Scales(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor([0.25, 2.0, 8.0]).to(torch.float8_e8m0fnu))

        def forward(self, x):
            return x * self.scale.to(torch.float32)

    x = torch.randn(2, 3)
    torch.testing.assert_close(torchlib.export(Scales(), (x,), opset=24)(x), Scales()(x), rtol=0, atol=0)
    with pytest.raises(Exception, match="FLOAT8E8M0"):
        torchlib.export(Scales(), (x,), opset=23)


def test_cast_to_float8_e8m0_is_refused():
    class ToScale(torch.nn.Module):
        def forward(self, x):
            return x.to(torch.float8_e8m0fnu).to(torch.float32)

    with pytest.raises(Exception, match="cast of FLOAT to torch.float8_e8m0fnu is not exported"):
        torchlib.export(ToScale(), (torch.rand(2, 3) + 0.5,), opset=24)


def test_float4_x2_says_what_to_do():
    class Packed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("packed", torch.randint(0, 255, (2, 3), dtype=torch.uint8).view(torch.float4_e2m1fn_x2))

        def forward(self, x):
            return x + self.packed.view(torch.uint8)

    with pytest.raises(Exception, match="float4_e2m1fn_x2 has no ONNX element type: it packs two FP4 values"):
        torchlib.export(Packed(), (torch.zeros(2, 3, dtype=torch.uint8),))
