"""export(..., target="onnxruntime"): the contrib-op rewrites (graph_builder/optimizer/onnxruntime.py).
Their equivalence with the standard graph, exact forms and near misses, is the optimizer fuzzer's
`onnxruntime` family (test_optimizer_fuzz.py); here: what each writes, and the weight packing."""

from __future__ import annotations

import collections

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

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


def _llama_decode_step(position_ids: bool, family: str = "llama"):
    """The tiny Llama's (or `family`'s) decode step as torchlib.genai exports it: (spec, module,
    sample, export kwargs)."""
    pytest.importorskip("transformers")
    from torchlib.genai import demo_folders, step

    model = demo_folders.model(family)
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
    gqa = [n for n in runtime.graph.nodes if n.op_type == "GroupQueryAttention"]
    assert all(n.attributes["do_rotary"] == 1 and n.inputs[1] is None and n.inputs[2] is None for n in gqa)  # QKV packed
    assert _ops(runtime)["Split"] == spec.layers  # gate and up's: packed too (docs/genai.md counts both ways)
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


def test_left_padded_batch_is_exact_with_one_bias_for_every_layer():
    """transformers' mask is causal AND attention_mask[batch, key] (read by GatherND): the causal
    part is GroupQueryAttention's own causal=1 and the padding part is attention_mask itself
    (its length is past + new under the decode step's contract), so the 4-D mask is not
    computed; seqlens_k, the total length and the bias are made once for every layer. A
    left-padded batch (rows of zeros in attention_mask, the queries at padded positions seeing
    no key) gives the standard graph's logits and presents."""
    from torchlib.genai import step

    spec, wrapped, args, kwargs = _llama_decode_step(position_ids=False)
    standard = torchlib.export(wrapped, args, **kwargs)
    target = OnnxRuntime(max_sequence_length=64, past_length_from=("attention_mask", "input_ids"))
    runtime = torchlib.export(wrapped, args, target=target, check=False, **kwargs)
    ops = _ops(runtime)
    assert ops["GroupQueryAttention"] == spec.layers
    assert ops["GatherND"] == 0 and ops["LessOrEqual"] == 0 and ops["Range"] == 0 and ops["Where"] == 1
    attention = [n for n in runtime.graph.nodes if n.op_type == "GroupQueryAttention"]
    for i in (5, 6, 10):  # seqlens_k, total_sequence_length, attention_bias: one value for every layer
        assert len({id(n.inputs[i]) for n in attention}) == 1
    # total_sequence_length: the int32 Cast of the total length, [1] (the kernel reads one element), no Squeeze
    assert attention[0].inputs[6].producer.op_type == "Cast" and attention[0].inputs[6].shape == (1,)
    for batch, new, past in ((2, 1, 5), (2, 4, 0), (1, 4, 3)):
        _, inputs, _ = step.sample_inputs(spec, False, batch=batch, new=new, past=past)
        mask = torch.ones(batch, past + new, dtype=torch.long)
        mask[0, :2] = 0  # row 0 left-padded by 2
        inputs = (inputs[0], mask, *inputs[2:])
        for a, b in zip(standard.run(*inputs), runtime.run(*inputs)):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_float_mask_reads_its_padding_from_attention_mask():
    """Gemma 2's eager attention masks with floats, Where(causal AND window AND attention_mask[batch,
    key], 0, lowest) (raised to the next float up for Attention): the bias keeps those values and
    causal=0 (a row the mask empties is uniform over its keys, as in torch), but its padding
    conjunct is attention_mask itself and the raising is folded into the Where: no GatherND, no
    Equal. A left-padded batch (queries at padded positions seeing no key, a prompt longer than
    the window of 16) gives the standard graph's logits and presents."""
    from torchlib.genai import step

    spec, wrapped, args, kwargs = _llama_decode_step(position_ids=False, family="gemma2")
    standard = torchlib.export(wrapped, args, **kwargs)
    target = OnnxRuntime(max_sequence_length=64, past_length_from=("attention_mask", "input_ids"))
    runtime = torchlib.export(wrapped, args, target=target, check=False, **kwargs)
    ops = _ops(runtime)
    assert ops["GroupQueryAttention"] == spec.layers and ops["GatherND"] == 0 and ops["Equal"] == 0
    assert {n.attributes["causal"] for n in runtime.graph.nodes if n.op_type == "GroupQueryAttention"} == {0}
    for batch, new, past in ((2, 1, 5), (2, 20, 0), (1, 4, 3), (2, 1, 20)):
        _, inputs, _ = step.sample_inputs(spec, False, batch=batch, new=new, past=past)
        mask = torch.ones(batch, past + new, dtype=torch.long)
        mask[0, :3] = 0  # row 0 left-padded by 3
        inputs = (inputs[0], mask, *inputs[2:])
        for a, b in zip(standard.run(*inputs), runtime.run(*inputs)):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


class _PaddedAttention(torch.nn.Module):
    """A decode step's attention over a past, masked by `key <= past + query` AND a padding mask
    keep[batch, key] read by index (transformers' form), keep made of the data; `near`: the
    padding read some other way (reversed keys, keep transposed), or a sliding window besides."""

    def __init__(self, near: str | None = None, heads: int = 4, kv: int = 2, size: int = 16):
        super().__init__()
        self.near, self.heads, self.kv, self.size = near, heads, kv, size
        e = heads * size
        self.q, self.k, self.v = (torch.nn.Linear(e, n * size, bias=False) for n in (heads, kv, kv))

    def forward(self, x, pk, pv):
        b, s, _ = x.shape
        p = pk.shape[2]
        q = self.q(x).view(b, s, self.heads, self.size).transpose(1, 2)
        k = torch.cat([pk, self.k(x).view(b, s, self.kv, self.size).transpose(1, 2)], 2)
        v = torch.cat([pv, self.v(x).view(b, s, self.kv, self.size).transpose(1, 2)], 2)
        key, query = torch.arange(p + s), torch.arange(s) + p
        mask = (key[None, :] <= query[:, None])[None, None]
        keep = torch.cat([pk[:, 0, :, 0], x[:, :, 0]], 1) > -0.5
        rows, keys = torch.arange(b)[:, None, None, None], key[None, None, None, :]
        if self.near == "reversed":
            keys = p + s - 1 - keys
        mask = mask & (keep.t()[keys, rows] if self.near == "transposed" else keep[rows, keys])
        if self.near == "window":
            mask = mask & (key[None, :] > query[:, None] - 3)[None, None]
        rep, t = self.heads // self.kv, p + s  # transformers' repeat_kv
        k4, v4 = (z[:, :, None].expand(b, self.kv, rep, t, self.size).reshape(b, self.heads, t, self.size) for z in (k, v))
        y = F.scaled_dot_product_attention(q, k4, v4, attn_mask=mask)
        return y.transpose(1, 2).reshape(b, s, self.heads * self.size), k, v


@pytest.mark.parametrize("near,gathers", [(None, 0), ("window", 0), ("reversed", 1), ("transposed", 1)])
def test_padding_mask_is_read_from_its_2d_mask_only_in_its_exact_form(near, gathers):
    """The padding conjunct keep[batch, key] becomes keep itself (no GatherND) only when the
    indices are (batch, key) positions; reversed keys or a transposed keep stay gathered. A
    sliding window stays in the bias beside it. The causal conjunct goes in every case
    (causal=1), and each gives the standard graph's numbers."""
    model = _PaddedAttention(near).eval()
    args = (torch.randn(1, 3, 64), torch.randn(1, 2, 4, 16), torch.randn(1, 2, 4, 16))
    shapes = ({1: torch.export.Dim("s", min=2)}, {2: torch.export.Dim("p", min=2)}, {2: torch.export.Dim("p", min=2)})
    standard = torchlib.export(model, args, dynamic_shapes=shapes)
    runtime = torchlib.export(model, args, dynamic_shapes=shapes, target=OnnxRuntime(accuracy_level=0), check=False)
    ops = _ops(runtime)
    assert ops["GroupQueryAttention"] == 1 and ops["GatherND"] == gathers and ops["LessOrEqual"] == 0
    assert ops["Greater"] == 1 + (near == "window")  # keep (made of the data), and the window
    (node,) = [n for n in runtime.graph.nodes if n.op_type == "GroupQueryAttention"]
    assert node.attributes["causal"] == 1
    for s, p in ((3, 4), (1, 9), (5, 0)):
        inputs = (torch.randn(1, s, 64), torch.randn(1, 2, p, 16), torch.randn(1, 2, p, 16))
        for a, b in zip(standard.run(*inputs), runtime.run(*inputs)):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)
