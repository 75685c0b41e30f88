"""export(..., target="onnxruntime"): the contrib-op rewrites (graph_builder/optimizer/onnxruntime.py).
Their equivalence with the standard graph, exact forms and near misses, is the optimizer fuzzer's
`onnxruntime` family (test_optimizer_fuzz.py); here: what each writes, and the weight packing."""

from __future__ import annotations

import collections

import ml_dtypes
import numpy as np
import pytest
import torch

import torchlib
from graph_builder.optimizer.onnxruntime import NAMES, OnnxRuntime, nbits_weights
from graph_builder.optimizer.quantization import WeightQuantization, dequantize, quantize


def _ops(result) -> collections.Counter:
    return collections.Counter(n.op_type for n in result.graph.nodes)


def _unpack(b: np.ndarray, bits: int, k: int) -> np.ndarray:
    """MatMulNBits' B [N, blocks, bytes] back to unsigned values [N, K]."""
    if bits == 8:
        return b.reshape(b.shape[0], -1)[:, :k].astype(np.int32)
    low, high = b & 0xF, b >> 4
    return np.stack([low, high], -1).reshape(b.shape[0], -1)[:, :k].astype(np.int32)


@pytest.mark.parametrize("dtype,symmetric,block,k", [("int4", True, 32, 64), ("int4", False, 16, 40), ("int8", True, 16, 48),
                                                     ("int8", False, 32, 96), ("int4", False, 32, 96)])
def test_nbits_weights_dequantize_to_the_same_weights(dtype, symmetric, block, k):
    w = np.random.default_rng(0).standard_normal((k, 24)).astype(np.float32)
    config = WeightQuantization(dtype, block, symmetric)
    q, scale, zero = quantize(w, config, axis=0)
    bits, shift = (4, 8) if dtype == "int4" else (8, 128)
    shift = shift if symmetric else 0
    b, scales, zeros = nbits_weights(q, scale, zero, block, bits, shift)
    blocks = scale.shape[0]
    assert b.shape == (24, blocks, block * bits // 8) and b.dtype == np.uint8 and scales.shape == (24 * blocks,)
    u = _unpack(b, bits, k)  # [N, K]
    if zeros is None:
        z = np.full((24, blocks), 2 ** (bits - 1))
    else:
        z = _unpack(zeros.reshape(24, -1), bits, blocks)
    full_scale = np.repeat(scales.reshape(24, blocks), block, axis=1)[:, :k]
    full_zero = np.repeat(z, block, axis=1)[:, :k]
    rebuilt = ((u - full_zero) * full_scale).T
    np.testing.assert_array_equal(rebuilt.astype(np.float32), dequantize(q, scale, zero, 0, block))


def test_signed_int4_shifts_to_matmulnbits_default_zero_point():
    q = np.array([[-8], [7], [0], [-1]] * 8, dtype=ml_dtypes.int4)  # K = 32, N = 1
    b, _, zeros = nbits_weights(q, np.ones((1, 1), np.float32), None, 32, 4, 8)
    assert zeros is None and list(_unpack(b, 4, 32)[0, :4]) == [0, 15, 8, 7]


class Mlp(torch.nn.Module):
    def __init__(self, e: int = 64):
        super().__init__()
        self.gate, self.up, self.down = torch.nn.Linear(e, 96, bias=False), torch.nn.Linear(e, 96, bias=False), \
            torch.nn.Linear(96, e, bias=False)  # fmt: skip
        self.w = torch.nn.Parameter(torch.rand(e) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = x + self.down(torch.nn.functional.silu(self.gate(x)) * self.up(x))
        return self.w * (h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)), h


@pytest.mark.parametrize("level", [0, 4])
def test_int4_mlp_becomes_matmulnbits_at_the_level_asked(level):
    model = Mlp().eval()
    x = torch.randn(2, 3, 64)
    result = torchlib.export(model, (x,), weight_quantization="int4", target=OnnxRuntime(accuracy_level=level))
    ops = _ops(result)
    assert ops["MatMulNBits"] == 2 and ops["MatMul"] == 0 and ops["DequantizeLinear"] == 0  # gate + up packed
    assert ops["Split"] == 1 and ops["SkipSimplifiedLayerNormalization"] == 1
    assert {n.attributes["accuracy_level"] for n in result.graph.nodes if n.op_type == "MatMulNBits"} == {level}
    assert result.graph.metadata["torchlib.target"] == f"onnxruntime (accuracy_level {level})"
    assert any(d.startswith("target onnxruntime: " + NAMES["nbits"]) for d in result.diagnostics)


def test_float_mlp_matches_the_standard_graph():
    model = Mlp().eval()
    x = torch.randn(2, 3, 64)
    standard = torchlib.export(model, (x,))
    runtime = torchlib.export(model, (x,), target="onnxruntime")
    assert _ops(runtime)["SkipSimplifiedLayerNormalization"] == 1 and _ops(standard)["RMSNormalization"] == 1
    for a, b in zip(standard.run(x), runtime.run(x)):
        torch.testing.assert_close(a, b, atol=2e-5, rtol=2e-5)
    assert all(d.ok() for d in runtime.verify(x))


def test_target_names():
    assert OnnxRuntime.of("onnx") is None and OnnxRuntime.of(None) is None
    assert OnnxRuntime.of("onnxruntime") == OnnxRuntime(4)
    with pytest.raises(ValueError, match="target 'tensorrt'"):
        OnnxRuntime.of("tensorrt")
    with pytest.raises(ValueError, match="accuracy_level 5"):
        OnnxRuntime(accuracy_level=5)


def _llama_decode_step(position_ids: bool):
    """The tiny Llama's decode step as torchlib.genai exports it: (spec, module, sample, export kwargs)."""
    pytest.importorskip("transformers")
    from torchlib.genai import demo_folders, step

    model = demo_folders.model("llama")
    spec = step.DecoderSpec.of(model.config)
    wrapped = step.DecodeStep(model, spec.layers, position_ids=position_ids)
    names, args, shapes = step.sample_inputs(spec, position_ids)
    kwargs = dict(dynamic_shapes=step.grouped_like(wrapped.forward, shapes), input_names=names,
                  output_names=["logits", *step.present_names(spec.layers)])  # fmt: skip
    return spec, wrapped, args, kwargs


def test_llama_decode_step_uses_group_query_attention():
    from torchlib.genai import step

    spec, wrapped, args, kwargs = _llama_decode_step(position_ids=True)
    standard = torchlib.export(wrapped, args, **kwargs)
    runtime = torchlib.export(wrapped, args, target="onnxruntime", check=False, **kwargs)
    ops = _ops(runtime)
    assert ops["GroupQueryAttention"] == spec.layers and ops["Attention"] == 0 and ops["Transpose"] == 0
    assert ops["RotaryEmbedding"] == 2 * spec.layers  # on the 3-D projections, from position_ids
    for batch, new, past in ((2, 1, 5), (1, 4, 3)):  # the shapes onnxruntime's kernel takes
        _, inputs, _ = step.sample_inputs(spec, True, batch=batch, new=new, past=past)
        for a, b in zip(standard.run(*inputs), runtime.run(*inputs)):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_past_length_from_the_inputs_lets_the_past_be_a_longer_buffer():
    """With the decode step's contract (attention_mask covers past + new tokens), the graph reads
    the past's length from the inputs, so the past may be given in a buffer of the maximum
    length, its past in the first rows (onnxruntime-genai's past_present_share_buffer): the
    logits equal the standard model's on the exact past."""
    from graph_builder.optimizer.onnxruntime import past_readers_share
    from torchlib.genai import step

    spec, wrapped, args, kwargs = _llama_decode_step(position_ids=False)
    standard = torchlib.export(wrapped, args, **kwargs)
    target = OnnxRuntime(max_sequence_length=64, past_length_from=("attention_mask", "input_ids"))
    runtime = torchlib.export(wrapped, args, target=target, check=False, **kwargs)
    pasts = [v for v in runtime.graph.inputs if v.name.startswith("past_key_values.")]
    assert all(past_readers_share(runtime.graph, v) for v in pasts)
    assert any(NAMES["past"] in d for d in runtime.diagnostics)
    session = runtime.session()
    for batch, new, past in ((2, 1, 5), (1, 4, 3)):
        _, inputs, _ = step.sample_inputs(spec, False, batch=batch, new=new, past=past)
        expected = standard.run(*inputs)[0]
        feeds = dict(zip(kwargs["input_names"], [t.numpy() for t in inputs]))
        for name in kwargs["input_names"][2:]:  # buffers of 20 rows: the past, then rows that must not be read
            buffer = np.full((batch, spec.kv_heads, 20, spec.head_size), 1e4, np.float32)
            buffer[:, :, :past] = feeds[name]
            feeds[name] = buffer
        logits = session.run(["logits"], feeds)[0]
        np.testing.assert_allclose(logits, expected.numpy(), atol=1e-5, rtol=1e-5)
