"""Exports at opsets 18 to 23: fused ops newer than the target fall back to their formulas."""

import pytest
import torch

import torchlib
from torchlib.exporter.demo import small_cnn, tiny_gpt
from torchlib.ops import activations, normalization
from torchlib.testing import run_model, trace


@pytest.mark.parametrize("opset", [18, 20, 21, 22, 23])
@pytest.mark.parametrize("factory", [small_cnn, tiny_gpt])
def test_demo_models_at_each_opset(factory, opset):
    model, args = factory()
    result = torchlib.export(model, args, opset=opset)
    assert [(o.domain, o.version) for o in result.model_proto.opset_import] == [("", opset)]
    for diff in result.verify(*args):
        assert diff.ok(1e-4, 1e-3), diff


@pytest.mark.parametrize("opset, fused", [(18, False), (20, True)])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_formula_before_opset_20(opset, fused, approximate):
    x = torch.randn(4, 5)
    model, feeds, structure = trace(activations.aten_gelu, (x,), {"approximate": approximate}, opset=opset)
    assert ("Gelu" in {n.op_type for n in model.graph.node}) is fused
    torch.testing.assert_close(run_model(model, feeds, structure), torch.nn.functional.gelu(x, approximate=approximate))


def test_rms_norm_formula_before_opset_23():
    x, w = torch.randn(2, 3, 8), torch.randn(8)
    model, feeds, structure = trace(normalization.aten_rms_norm, (x, [8], w, 1e-6), opset=22)
    assert "RMSNormalization" not in {n.op_type for n in model.graph.node}
    expected = torch.nn.functional.rms_norm(x, [8], w, 1e-6)
    torch.testing.assert_close(run_model(model, feeds, structure), expected)
