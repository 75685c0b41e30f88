"""export(..., functions="modules"): module calls as ONNX model-local functions that inline back
to the default export's graph."""

from __future__ import annotations

import onnx
import onnx.inliner
import pytest
import torch
import torchvision
from torch import nn
from torchvision.models.vision_transformer import EncoderBlock, MLPBlock

import torchlib
from graph_builder import op
from graph_builder.compare import assert_same_graph
from torchlib.exporter.demo_models import masked_encoder


def tiny_vit() -> nn.Module:
    torch.manual_seed(0)
    model = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=3, num_heads=2, hidden_dim=32,
                                                 mlp_dim=64, num_classes=10).eval()  # fmt: skip
    nn.init.normal_(model.heads.head.weight)  # torchvision starts the head at zero: the output would be 0
    return model


BATCH = ({0: "batch"},)


@pytest.fixture(scope="module")
def vit():
    model = tiny_vit()
    x = torch.randn(2, 3, 32, 32)
    default = torchlib.export(model, (x,), dynamic_shapes=BATCH)
    modules = torchlib.export(model, (x,), dynamic_shapes=BATCH, functions="modules")
    return model, default, modules


def inlined(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with its local functions inlined, and without the imports of their domains
    (which the inliner leaves)."""
    flat = onnx.inliner.inline_local_functions(model)
    domains = {f.domain for f in model.functions}
    kept = [o for o in flat.opset_import if o.domain not in domains]
    del flat.opset_import[:]
    flat.opset_import.extend(kept)
    return flat


def calls(nodes, name: str) -> list[onnx.NodeProto]:
    return [n for n in nodes if n.op_type == name and n.domain.startswith("pkg.")]


def function(model: onnx.ModelProto, name: str) -> onnx.FunctionProto:
    (found,) = [f for f in model.functions if f.name == name]
    return found


def assert_verifies(result, *args):
    for d in result.verify(*args):
        assert d.ok(), d


def test_vit_one_function_per_encoder_block(vit):
    _, default, modules = vit
    proto = modules.model_proto
    assert not default.model_proto.functions
    block = function(proto, "EncoderBlock")
    assert block.domain == "pkg.torchvision.models.vision_transformer"
    assert [f.name for f in proto.functions].count("EncoderBlock") == 1  # the three calls share it
    layers = next(f for f in proto.functions if any(n.op_type == "EncoderBlock" for n in f.node))
    block_calls = calls(layers.node, "EncoderBlock")
    assert [n.name for n in block_calls] == [f"encoder.layers.encoder_layer_{i}" for i in range(3)]
    assert list(block.attribute) == ["num_heads"]  # the module's settings label each call
    assert [[(a.name, a.i) for a in n.attribute] for n in block_calls] == [[("num_heads", 2)]] * 3
    weights = [[i for i in n.input if i.endswith("ln_1.weight")] for n in block_calls]
    assert weights == [[f"encoder.layers.encoder_layer_{i}.ln_1.weight"] for i in range(3)]  # weights are inputs
    nested = {n.op_type for n in block.node}
    assert {"LayerNorm", "MultiheadAttention", "MLPBlock"} <= nested  # functions inside functions
    assert {"Attention", "LayerNormalization"}.isdisjoint(nested)  # ... which hold the ONNX ops
    assert [n.op_type for n in proto.graph.node if n.domain] == ["Conv2d", "Encoder", "Sequential_1"]  # heads: not layers


def test_vit_verifies_at_two_batch_sizes(vit):
    _, _, modules = vit
    assert modules.self_check.startswith("passed")
    for batch in (1, 5):
        assert_verifies(modules, torch.randn(batch, 3, 32, 32))


def test_vit_inlined_is_the_default_export(vit):
    _, default, modules = vit
    assert_same_graph(inlined(modules.model_proto), default.model_proto)


def test_one_class_only():
    model = tiny_vit()
    x = torch.randn(2, 3, 32, 32)
    result = torchlib.export(model, (x,), dynamic_shapes=BATCH, functions=[EncoderBlock])
    proto = result.model_proto
    assert [f.name for f in proto.functions] == ["EncoderBlock"]
    assert not any(n.domain for n in proto.functions[0].node)  # no functions inside: only ONNX ops
    assert len(calls(proto.graph.node, "EncoderBlock")) == 3
    assert_verifies(result, torch.randn(3, 3, 32, 32))
    assert_same_graph(inlined(proto), torchlib.export(model, (x,), dynamic_shapes=BATCH).model_proto)


@torch.library.custom_op("torchlib_test_functions::swish", mutates_args=())
def swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


@swish.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


def swish_onnx(x):
    """swish(Tensor x) -> Tensor"""
    return op.Mul(x, op.Sigmoid(x))


class SwishBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return torch.ops.torchlib_test_functions.swish(self.fc(x)) + x


class SwishNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([SwishBlock() for _ in range(2)])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def test_combined_with_a_translation_table():
    torch.manual_seed(0)
    model, x = SwishNet().eval(), torch.randn(3, 8)
    table = {torch.ops.torchlib_test_functions.swish.default: swish_onnx}
    result = torchlib.export(model, (x,), functions=[SwishBlock, table], dynamic_shapes=({0: "n"},))
    proto = result.model_proto
    assert [f.name for f in proto.functions] == ["SwishBlock"]
    assert [n.op_type for n in proto.graph.node] == ["SwishBlock", "SwishBlock"]
    assert "Sigmoid" in [n.op_type for n in proto.functions[0].node]  # the table's translation, inside
    assert_verifies(result, torch.randn(6, 8))
    default = torchlib.export(model, (x,), functions=table, dynamic_shapes=({0: "n"},))
    assert not default.model_proto.functions
    assert_same_graph(inlined(proto), default.model_proto)


def test_work_the_optimizer_shares_between_layers_stays_outside_them():
    # both layers prepare the padding mask alike (Unsqueeze): the optimizer keeps one, which
    # belongs to the model itself, so that the two layers stay alike
    model, (x, lengths) = masked_encoder()
    result = torchlib.export(model, (x, lengths), functions="modules")
    proto = result.model_proto
    assert [f.name for f in proto.functions].count("EncLayer") == 1
    assert len(calls(proto.graph.node, "EncLayer")) == 2
    assert result.diagnostics == []
    assert_verifies(result, x, lengths)
    assert_same_graph(inlined(proto), torchlib.export(model, (x, lengths)).model_proto)


class Twice(nn.Module):
    """One module called twice, and calls that differ (a Linear with and without bias)."""

    def __init__(self):
        super().__init__()
        self.shared = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.plain = nn.Linear(4, 4, bias=False)

    def forward(self, x):
        return self.plain(self.shared(self.shared(x)))


def test_a_module_called_twice_and_calls_that_differ():
    torch.manual_seed(0)
    model, x = Twice().eval(), torch.randn(2, 4)
    result = torchlib.export(model, (x,), functions="modules", dynamic_shapes=({0: "n"},))
    proto = result.model_proto
    assert [(n.op_type, n.name) for n in proto.graph.node] == [("Sequential", "shared"), ("Sequential", "shared@1"),
                                                                ("Linear_1", "plain")]  # fmt: skip
    assert sorted(f.name for f in proto.functions) == ["Linear", "Linear_1", "ReLU", "Sequential"]
    assert_verifies(result, torch.randn(5, 4))
    assert_same_graph(inlined(proto), torchlib.export(model, (x,), dynamic_shapes=({0: "n"},)).model_proto)


def test_wrong_functions_argument_says_what_is_accepted():
    model, x = Twice().eval(), torch.randn(2, 4)
    with pytest.raises(TypeError, match="the string 'modules' or an nn.Module class"):
        torchlib.export(model, (x,), functions="module")
    with pytest.raises(ValueError, match=r"MLPBlock, which the model never calls; its module classes are: .*Linear"):
        torchlib.export(model, (x,), functions=[MLPBlock])


def test_onnx_export_keeps_torch_onnx_export_modules_as_functions():
    torch.manual_seed(0)
    model, x = SwishNet().eval(), torch.randn(3, 8)
    table = {torch.ops.torchlib_test_functions.swish.default: swish_onnx}
    result = torchlib.onnx_export(model, (x,), custom_translation_table=table, export_modules_as_functions={SwishBlock})
    assert [f.name for f in result.model_proto.functions] == ["SwishBlock"]
    every = torchlib.onnx_export(model, (x,), custom_translation_table=table, export_modules_as_functions=True)
    assert sorted(f.name for f in every.model_proto.functions) == ["Linear", "SwishBlock"]
    assert_verifies(every, x)
