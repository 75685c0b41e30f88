"""Big models: weights are views of the parameters, external data over the (lowered) 2 GB
threshold, float16 / bfloat16 models keep their dtype. The real 2.4 GB model is `slow` (and in
`bench/bench_big.py`)."""

from __future__ import annotations

import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from torch import nn

import torchlib
from graph_builder import ir
from graph_builder.ir import ModelTooLargeError
from graph_builder.opset import torch_to_numpy
from torchlib.exporter.cli import export_main
from torchlib.exporter.decoder import DecoderConfig, decoder
from torchlib.exporter.result import DEFAULT_TOLERANCE

SMALL = DecoderConfig(vocab=256, hidden=64, layers=2, heads=4, intermediate=128, max_seq=64)


def _mlp() -> tuple[nn.Module, tuple[torch.Tensor]]:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64, bias=False)).eval(), (torch.randn(3, 64),)


@pytest.fixture
def low_threshold(monkeypatch):
    """Models over 10 KB of weights take the big-model path."""
    monkeypatch.setattr(ir, "EXTERNAL_DATA_THRESHOLD", 10_000)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_initializers_share_memory_with_parameters(dtype):
    model, (x,) = _mlp()
    model = model.to(dtype)
    result = torchlib.export(model, (x.to(dtype),))
    for name, param in model.state_dict().items():
        array = result.graph.initializers[name].const_value
        assert np.shares_memory(array, torch_to_numpy(param)), name
    weight_ptrs = {v.data_ptr() for v in result.session().weights}
    assert model[0].weight.data_ptr() in weight_ptrs  # onnxruntime reads the parameter's memory


def test_save_load_with_external_data(tmp_path):
    model, args = _mlp()
    result = torchlib.export(model, args)
    path = str(tmp_path / "mlp.onnx")
    assert result.save(path, external_data=True) == path + ".data"
    header = onnx.load(path, load_external_data=False)
    external = {t.name for t in header.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL}
    assert external == {"0.weight", "2.weight"}  # the 256-byte bias stays inside
    loaded = onnx.load(path)
    assert loaded.graph.initializer[0].raw_data == result.model_proto.graph.initializer[0].raw_data
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {header.graph.input[0].name: args[0].numpy()})
    torch.testing.assert_close(torch.from_numpy(got), model(*args).detach(), rtol=1e-5, atol=1e-5)


def test_model_over_threshold_takes_the_big_model_path(tmp_path, low_threshold):
    model, args = _mlp()  # 33 KB of weights
    result = torchlib.export(model, args)
    assert result.node_count == 3
    with pytest.raises(ModelTooLargeError, match=r"result\.save\(path\)"):
        _ = result.model_proto
    assert all(d.ok() for d in result.verify(*args))
    path = str(tmp_path / "mlp.onnx")
    assert result.save(path) == path + ".data"
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {result.graph.inputs[0].name: args[0].numpy()})
    torch.testing.assert_close(torch.from_numpy(got), model(*args).detach(), rtol=1e-5, atol=1e-5)


def test_cli_export_over_threshold(tmp_path, low_threshold, monkeypatch, capsys):
    (tmp_path / "bigmodel_factory.py").write_text(
        "import torch\nfrom torch import nn\n\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64)).eval(), (torch.randn(2, 64),)\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert export_main(["bigmodel_factory:make", "-o", "out.onnx", "--verify"]) == 0
    finally:
        sys.modules.pop("bigmodel_factory", None)
    assert "out.onnx.data" in capsys.readouterr().out
    assert os.path.getsize(tmp_path / "out.onnx.data") >= 2 * 64 * 64 * 4
    ort.InferenceSession(str(tmp_path / "out.onnx"), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_decoder_keeps_its_dtype(dtype, tmp_path):
    """onnxruntime's CPU kernels have no bfloat16 arithmetic: the functions compute those ops in
    float32 between Casts (`torchlib/ops/_kernels.py`); inputs, weights and outputs keep the dtype."""
    model = decoder(SMALL).to(dtype)
    idx = torch.randint(0, SMALL.vocab, (2, 16), generator=torch.Generator().manual_seed(0))
    result = torchlib.export(model, (idx,))
    onnx_dtype = {torch.float16: onnx.TensorProto.FLOAT16, torch.bfloat16: onnx.TensorProto.BFLOAT16}[dtype]
    assert {v.dtype.onnx for v in result.graph.initializers.values() if v.is_parameter} == {onnx_dtype}
    assert result.graph.outputs[0].dtype.onnx == onnx_dtype
    (diff,) = result.verify(idx)
    assert diff.dtype_ok and diff.ok(), diff
    assert not diff.ok(*DEFAULT_TOLERANCE), "the check must be meaningful: half precision does not meet float32's"
    path = str(tmp_path / "decoder.onnx")
    result.save(path, external_data=True)
    ort.InferenceSession(path, providers=["CPUExecutionProvider"])


@pytest.mark.slow
def test_nine_linear_8192_over_2gb(tmp_path):
    """2.4 GB of float32 weights: export, save (external data), load in onnxruntime, verify."""
    torch.manual_seed(0)
    model = nn.Sequential(*[nn.Linear(8192, 8192, bias=False) for _ in range(9)]).eval()
    x = torch.randn(2, 8192)
    result = torchlib.export(model, (x,))
    path = str(tmp_path / "big.onnx")
    assert result.save(path) == path + ".data"
    assert os.path.getsize(path) < 2**20
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {result.graph.inputs[0].name: x.numpy()})
    del session
    with torch.no_grad():
        expected = model(x)
    torch.testing.assert_close(torch.from_numpy(got), expected, rtol=1e-3, atol=1e-4)
    assert all(d.ok() for d in result.verify(x))
