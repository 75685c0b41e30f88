"""export(..., weight_quantization=...): int4 / int8 weights in standard ONNX, run in onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

import torchlib
from graph_builder.optimizer.quantization import WeightQuantization, dequantize, quantize
from torchlib.exporter.decoder import DecoderConfig, decoder

CONFIG = DecoderConfig(vocab=200, hidden=64, layers=2, heads=4, intermediate=128, max_seq=32)
IDS = torch.randint(0, CONFIG.vocab, (2, 7), generator=torch.Generator().manual_seed(0))


@pytest.fixture(scope="module")
def model():
    return decoder(CONFIG)


@pytest.fixture(scope="module")
def plain(model):
    return torchlib.export(model, (IDS,))


@pytest.mark.parametrize("spec", ["int8", "int4", WeightQuantization("int4", 64, symmetric=False)], ids=str)
def test_quantized_decoder_runs_with_the_same_names(tmp_path, model, plain, spec):
    result = torchlib.export(model, (IDS,), weight_quantization=spec)
    config = WeightQuantization.of(spec)
    linears = 7 * CONFIG.layers + 1  # q, k, v, o, gate, up, down per block, and the head
    assert any(f"{linears} MatMul/Gemm weight(s) quantized to {config.dtype}" in d for d in result.diagnostics)
    assert [v.name for v in result.graph.inputs] == [v.name for v in plain.graph.inputs]
    assert [v.name for v in result.graph.outputs] == [v.name for v in plain.graph.outputs]
    assert "embed.weight" in result.graph.initializers  # a Gather's table is no MatMul weight
    # the ONNX model computes with exactly the dequantized weights: compare with them, in numpy
    head = result.graph.initializers["lm_head.weight_folded_quantized"]
    scale = result.graph.initializers["lm_head.weight_folded_scale"].const_value
    zero = result.graph.initializers.get("lm_head.weight_folded_zero_point")
    q, s, z = quantize(model.lm_head.weight.detach().numpy().T, config, 0)
    np.testing.assert_array_equal(head.const_value, q)
    np.testing.assert_array_equal(scale, s)
    assert (zero is None) == config.symmetric
    restored = dequantize(q, s, z, 0, config.block_size)
    assert np.abs(restored - model.lm_head.weight.detach().numpy().T).max() <= s.max() / 2 * 1.0001
    # run: the ONNX model's logits are close to torch's, the error of the quantized weights
    logits = result(IDS)
    expected = model(IDS).detach()
    tolerance = {"int8": 0.02, "int4": 0.25}[config.dtype] * expected.abs().max()
    assert (logits - expected).abs().max() <= tolerance
    assert (logits.argmax(-1) == expected.argmax(-1)).float().mean() > 0.7
    path = tmp_path / "q.onnx"
    result.save(path)
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert {n.op_type for n in proto.graph.node} >= {"DequantizeLinear", "MatMul"}
    session = ort.InferenceSession(str(path))
    (out,) = session.run(None, {"idx": IDS.numpy()})
    np.testing.assert_allclose(out, logits.numpy(), atol=1e-4, rtol=1e-4)


def test_unsupported_opset_says_what_to_do(model):
    with pytest.raises(ValueError, match=r"needs opset 21 or later .*this export is opset 20: export with opset=21"):
        torchlib.export(model, (IDS,), opset=20, weight_quantization="int4")
    with pytest.raises(ValueError, match="use 'int4' or 'int8'"):
        torchlib.export(model, (IDS,), weight_quantization="nf4")
