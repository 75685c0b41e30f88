"""export(model_on_meta_device, args, weights=<safetensors path or state dict>)."""

from __future__ import annotations

import importlib.util
import os

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

import torchlib
from graph_builder.builder import GraphBuilder
from graph_builder.optimizer.editing import Uses
from graph_builder.optimizer.folding import BATCH_NORMS_LEFT, batch_norms
from graph_builder.weight_sources import is_mapped, open_safetensors, write_safetensors
from torchlib.exporter.checkpoint import WeightsError
from torchlib.exporter.decoder import Decoder, DecoderConfig, _rotary_tables

CONFIG = DecoderConfig(vocab=300, hidden=64, layers=2, heads=4, intermediate=128, max_seq=32)


def _meta_decoder(config=CONFIG):
    with torch.device("meta"):
        model = Decoder(config).eval()
    model.cos, model.sin = _rotary_tables(config)
    return model


def _checkpoint(tmp_path, state):
    path = tmp_path / "model.safetensors"
    arrays = {k: v.detach().numpy() for k, v in state.items()}
    write_safetensors(path, {k: (a.dtype, a.shape) for k, a in arrays.items()}, arrays.values())
    return path


@pytest.fixture(scope="module")
def real():
    torch.manual_seed(0)
    return Decoder(CONFIG).eval()


IDS = torch.randint(0, CONFIG.vocab, (2, 9), generator=torch.Generator().manual_seed(1))


def test_meta_model_from_safetensors_file(tmp_path, real):
    path = _checkpoint(tmp_path, real.state_dict())
    model = _meta_decoder()
    result = torchlib.export(model, (IDS,), weights=path)
    assert all(p.is_meta for p in model.parameters())  # the model keeps its own (meta) tensors
    assert all(is_mapped(v.const_value) for v in result.graph.initializers.values() if v.name.endswith(".weight"))
    with torch.no_grad():
        expected = real(IDS)
    torch.testing.assert_close(result(IDS), expected, atol=1e-5, rtol=1e-4)
    assert all(d.ok() for d in result.verify(IDS))  # torch runs the program on the checkpoint's tensors
    result.save(tmp_path / "model.onnx", external_data=True)
    session = ort.InferenceSession(str(tmp_path / "model.onnx"))
    (out,) = session.run(None, {session.get_inputs()[0].name: IDS.numpy()})
    np.testing.assert_allclose(out, expected.numpy(), atol=1e-5, rtol=1e-4)


def test_meta_model_from_state_dict_with_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(50, 16)
            self.head = nn.Linear(16, 50, bias=False)
            self.head.weight = self.embed.weight

        def forward(self, ids):
            return self.head(self.embed(ids))

    torch.manual_seed(0)
    real = Tied().eval()
    with torch.device("meta"):
        model = Tied().eval()
    ids = torch.tensor([[1, 2, 49]])
    result = torchlib.export(model, (ids,), weights={"embed.weight": real.embed.weight.detach()})  # one name serves both
    torch.testing.assert_close(result(ids), real(ids).detach())


def test_errors_name_what_does_not_fit(tmp_path, real):
    state = dict(real.state_dict())
    model = _meta_decoder()
    with pytest.raises(WeightsError, match=r"weights are on the meta device .*give them with export\(\.\.\., weights="):
        torchlib.export(model, (IDS,))
    missing = {k: v for k, v in state.items() if k != "blocks.1.up.weight"}
    with pytest.raises(WeightsError, match=r"no tensor for 1 of the model's weights: blocks\.1\.up\.weight"):
        torchlib.export(model, (IDS,), weights=missing)
    wrong_shape = {**state, "blocks.0.q.weight": torch.zeros(64, 32)}
    with pytest.raises(WeightsError, match=r"weights\['blocks\.0\.q\.weight'\].*model's blocks\.0\.q\.weight is \[64, 64\] \(float32\), "
                                           r"the checkpoint's tensor is \[64, 32\] \(float32\)"):  # fmt: skip
        torchlib.export(model, (IDS,), weights=wrong_shape)
    path = _checkpoint(tmp_path, {**state, "norm.weight": state["norm.weight"].half()})
    with pytest.raises(WeightsError, match=r"model's norm\.weight is \[64\] \(float32\), the checkpoint's tensor is \[64\] \(float16\)"):
        torchlib.export(model, (IDS,), weights=path)
    with pytest.raises(WeightsError, match="is on the meta device: it has no data"):
        torchlib.export(model, (IDS,), weights={**state, "norm.weight": torch.empty(64, device="meta")})
    with torch.device("meta"):
        no_tables = Decoder(CONFIG).eval()  # its rotary tables (non-persistent buffers) have no data
    with pytest.raises(WeightsError, match=r"2 of the model's tensors have no data .*: cos, sin\. Non-persistent buffers"):
        torchlib.export(no_tables, (IDS,), weights=state)
    assert all(p.is_meta for p in no_tables.parameters())  # put back after the failure too
    with pytest.raises(TypeError, match="the program holds its weights already"):
        torchlib.export(torch.export.export(real, (IDS,)), weights=state)


def test_unused_checkpoint_entries_are_noted(real):
    result = torchlib.export(_meta_decoder(), (IDS,), weights={**real.state_dict(), "extra.bias": torch.zeros(3)})
    assert any("1 checkpoint tensor(s) are not weights of the model" in d and "extra.bias" in d for d in result.diagnostics)


def test_batch_norm_fold_of_mapped_weights_is_budgeted(tmp_path):
    from graph_builder import FLOAT, op

    rng = np.random.default_rng(0)
    arrays = {"w": rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "g": np.ones(8, np.float32),
              "b": np.zeros(8, np.float32), "m": np.zeros(8, np.float32), "v": np.ones(8, np.float32)}  # fmt: skip
    write_safetensors(tmp_path / "c.safetensors", {k: (a.dtype, a.shape) for k, a in arrays.items()}, arrays.values())
    mapped = open_safetensors(tmp_path / "c.safetensors")

    def build():
        g = GraphBuilder()
        x = g.input("x", FLOAT, [1, 3, 8, 8])
        with g:
            y = op.BatchNormalization(op.Conv(x, g.initializer("w", mapped["w"])),
                                      *(g.initializer(k, mapped[k]) for k in "gbmv"))  # fmt: skip
        g.output(y, "y")
        return g

    g = build()
    assert batch_norms(g, Uses(g.graph), mapped_budget_bytes=0) == {BATCH_NORMS_LEFT: 1}
    g = build()
    assert batch_norms(g, Uses(g.graph)) == {"batch norms folded": 1}
    assert not is_mapped(g.graph.initializers["w"].const_value)  # the scaled copy, in memory


def _bench():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "bench_meta_export.py")
    spec = importlib.util.spec_from_file_location("bench_meta_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_bench_small_checkpoint_streams(tmp_path):
    """bench_meta_export's steps on a 0.37 GB checkpoint, each in a subprocess: every saved byte
    equals the checkpoint's, the 2-layer cut equals torch, and the export's memory grows by far
    less than the checkpoint (the weights are written from the file, tensor by tensor)."""
    r = _bench().run("small", None, str(tmp_path), keep=False)
    assert r["unmatched"] == [] and r["initializers_equal"] + r["initializers_equal_transposed"] == r["tensors"]
    assert r["cut_ok"]
    assert r["peak_rss"] - r["rss_before_export"] < r["bytes"] / 2
    assert not os.listdir(tmp_path)
