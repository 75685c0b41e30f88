"""Real models exported end to end: each runs in onnxruntime and matches torch eager."""

from __future__ import annotations

import pytest
import torch
from torch import nn

import torchlib
from torchlib.exporter.demo import small_cnn, tiny_gpt, tiny_gpt_dynamic_shapes

ATOL, RTOL = 1e-4, 1e-3


def assert_matches(result, *args, **kwargs):
    diffs = result.verify(*args, **kwargs)
    assert diffs, "the model has no outputs"
    for d in diffs:
        assert d.ok(ATOL, RTOL), d
    assert result.diagnostics == []


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


def test_mlp():
    torch.manual_seed(0)
    model, x = MLP().eval(), torch.randn(5, 8)
    assert_matches(torchlib.export(model, (x,)), x)


def test_cnn_with_batch_norm_and_pooling():
    model, args = small_cnn()
    result = torchlib.export(model, args)
    assert_matches(result, *args)
    ops = {n.op_type for n in result.model_proto.graph.node}
    assert "Conv" in ops and "BatchNormalization" not in ops  # folded into the convolutions
    plain = torchlib.export(model, args, optimize=False)
    assert "BatchNormalization" in {n.op_type for n in plain.model_proto.graph.node}
    assert_matches(plain, *args)


def test_transformer_encoder():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False).eval()
    x = torch.randn(2, 10, 32)
    assert_matches(torchlib.export(model, (x,)), x)


def test_multihead_attention():
    torch.manual_seed(0)

    class MHA(nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = nn.MultiheadAttention(32, 4, batch_first=True)

        def forward(self, q, kv):
            out, weights = self.attn(q, kv, kv)
            return out, weights

    model = MHA().eval()
    q, kv = torch.randn(2, 5, 32), torch.randn(2, 7, 32)
    assert_matches(torchlib.export(model, (q, kv)), q, kv)


def test_gpt_decoder_with_dynamic_batch_and_sequence():
    model, args = tiny_gpt()
    result = torchlib.export(model, args, dynamic_shapes=tiny_gpt_dynamic_shapes())
    graph = result.model_proto.graph
    dims = [d.dim_param or d.dim_value for d in graph.input[0].type.tensor_type.shape.dim]
    assert dims == ["batch", "seq"]
    assert "Attention" in {n.op_type for n in graph.node}
    assert_matches(result, *args)
    other = torch.randint(0, 256, (3, 21))
    assert_matches(result, other)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_recurrent(cls):
    torch.manual_seed(0)

    class RNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = cls(8, 16, num_layers=2, batch_first=True)

        def forward(self, x):
            return self.rnn(x)[0]

    model, x = RNN().eval(), torch.randn(3, 6, 8)
    assert_matches(torchlib.export(model, (x,)), x)


def test_int_tensor_plus_float_scalar_gives_float():
    class M(nn.Module):
        def forward(self, x):
            return x + 1.5, x * 2

    x = torch.arange(6).reshape(2, 3)
    result = torchlib.export(M(), (x,))
    out_float, out_int = result(x)
    assert out_float.dtype == torch.float32 and out_int.dtype == torch.int64
    assert_matches(result, x)


def test_initializers_are_named_by_state_dict_keys():
    model = MLP().eval()
    result = torchlib.export(model, (torch.randn(2, 8),))
    names = {i.name for i in result.model_proto.graph.initializer}
    assert set(model.state_dict()) <= names


def test_nodes_carry_aten_op_module_and_source_metadata():
    model = MLP().eval()
    result = torchlib.export(model, (torch.randn(2, 8),))
    node = next(n for n in result.model_proto.graph.node if n.op_type in ("Gemm", "MatMul"))
    meta = {p.key: p.value for p in node.metadata_props}
    assert meta["pkg.torchlib.aten_op"] == "aten::linear"
    assert meta["pkg.torchlib.module"] == "net.0"
    assert "pkg.torchlib.source" in meta


def test_same_model_gives_byte_identical_onnx():
    model, args = small_cnn()
    a = torchlib.export(model, args).model_proto.SerializeToString()
    b = torchlib.export(model, args).model_proto.SerializeToString()
    assert a == b


def test_unsupported_ops_are_listed_all_at_once():
    from torchlib.exporter import UnsupportedOpsError, translate
    from torchlib.registry import Registry

    class M(nn.Module):
        def forward(self, x):
            return torch.cos(x) + torch.sin(x) + torch.sin(x)

    ep = torch.export.export(M(), (torch.randn(3),))
    with pytest.raises(UnsupportedOpsError) as info:
        translate(ep, Registry())
    message = str(info.value)
    assert "aten::sin  x2" in message and "aten::cos  x1" in message and "aten::add.Tensor  x2" in message
    assert "test_export_models.py" in message


def test_save_and_reload(tmp_path):
    import onnx

    model, args = small_cnn()
    result = torchlib.export(model, args)
    path = tmp_path / "cnn.onnx"
    result.save(path)
    onnx.checker.check_model(str(path), full_check=True)
    result.save(tmp_path / "ext.onnx", external_data=True)
    assert (tmp_path / "ext.onnx.data").exists()
    reloaded = onnx.load(str(tmp_path / "ext.onnx"))
    assert len(reloaded.graph.initializer) == len(result.model_proto.graph.initializer)
