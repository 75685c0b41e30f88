"""Custom ops: a user's function for their own torch.library op, given with `functions=` or
registered with `@aten_op`, possibly emitting ops of another ONNX domain."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.nn import functional as F

import torchlib
from graph_builder import custom_op, op
from torchlib.exporter import UnsupportedOpsError
from torchlib.registry import REGISTRY, aten_op


@torch.library.custom_op("torchlib_test::fast_gelu", mutates_args=())
def fast_gelu(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x)


@fast_gelu.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("torchlib_test::scaled_add", mutates_args=())
def scaled_add(x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    return x + scale * y


@scaled_add.register_fake
def _(x: torch.Tensor, y: torch.Tensor, scale: float) -> torch.Tensor:
    return torch.empty_like(x)


class UsesCustomOps(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = torch.ops.torchlib_test.fast_gelu(self.fc(x))
        return torch.ops.torchlib_test.scaled_add(h, x, 0.5)


def scaled_add_onnx(x, y, scale: float):
    """scaled_add(Tensor x, Tensor y, float scale) -> Tensor"""
    return op.Add(x, op.Mul(y, op.CastLike(scale, y)))


def sample():
    torch.manual_seed(0)
    return UsesCustomOps().eval(), torch.randn(3, 6)


def assert_matches(result, *args):
    for d in result.verify(*args):
        assert d.ok(1e-4, 1e-3), d
    assert result.diagnostics == []


def test_functions_with_standard_onnx_ops():
    model, x = sample()
    functions = {
        torch.ops.torchlib_test.fast_gelu.default: lambda x: op.Gelu(x),
        "torchlib_test::scaled_add": scaled_add_onnx,
    }
    result = torchlib.export(model, (x,), functions=functions)
    assert {"Gelu", "Add", "Mul"} <= {n.op_type for n in result.model_proto.graph.node}
    assert_matches(result, x)


def test_function_emitting_an_op_of_another_domain():
    gelu = custom_op("com.microsoft", "Gelu")  # onnxruntime's contrib op
    model, x = sample()
    result = torchlib.export(model, (x,), functions={
        torch.ops.torchlib_test.fast_gelu.default: lambda x: gelu(x),
        torch.ops.torchlib_test.scaled_add.default: scaled_add_onnx,
    })  # fmt: skip
    imports = {o.domain: o.version for o in result.model_proto.opset_import}
    assert imports.get("com.microsoft") == 1
    assert any(n.domain == "com.microsoft" and n.op_type == "Gelu" for n in result.model_proto.graph.node)
    assert_matches(result, x)


def test_custom_op_declaration_is_checked():
    with pytest.raises(ValueError, match="ONNX's own"):
        custom_op("", "Gelu")
    with pytest.raises(ValueError, match="attribute types"):
        custom_op("com.example", "Foo", attributes={"alpha": complex})


@pytest.fixture
def registered():
    """Functions registered with @aten_op for the test only (the registry is global)."""
    names = ["torchlib_test::fast_gelu", "torchlib_test::scaled_add"]

    @aten_op(names[0])
    def torchlib_test_fast_gelu(x):
        """fast_gelu(Tensor x) -> Tensor"""
        return op.Gelu(x)

    aten_op(names[1])(scaled_add_onnx)
    yield
    for name in names:
        REGISTRY._entries.pop(name)


def test_functions_registered_with_aten_op(registered):
    model, x = sample()
    result = torchlib.export(model, (x,), dynamic_shapes={"x": {0: "batch"}})
    assert_matches(result, torch.randn(5, 6))


def test_custom_op_without_function_is_named():
    model, x = sample()
    with pytest.raises(UnsupportedOpsError) as info:
        torchlib.export(model, (x,), functions={"torchlib_test::scaled_add": scaled_add_onnx})
    message = str(info.value)
    assert "torchlib_test::fast_gelu" in message
    # a custom op is pointed at `functions=` / `@aten_op`, not at native_functions.yaml's coverage
    assert "functions={torch.ops.torchlib_test.fast_gelu.default: my_function}" in message
    assert '@torchlib.registry.aten_op("torchlib_test::fast_gelu")' in message
    assert "codegen coverage" not in message
