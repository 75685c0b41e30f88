"""The decode step of transformers' language models, exported with their KV cache, and greedy
generation in onnxruntime (torchlib.generation) against `model.generate`.

Tiny configs with random weights (no download). Each export is one torch.export of the model
(~5 s here), so the default suite runs Llama, Mistral (GQA, sliding window) and T5; the other
architectures are `slow`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
import torch.utils._pytree as pytree

import torchlib
from torchlib import generation

transformers = pytest.importorskip("transformers")

LAYERS = 2
NEW_TOKENS = 32
PAST = {0: "batch", 2: "past_sequence"}


def _decoder(name: str) -> tuple[torch.nn.Module, int, int]:
    """(model, kv heads, head dim) of a tiny decoder-only model with random weights."""
    torch.manual_seed(0)
    common = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=LAYERS,
                  num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, eos_token_id=127)
    if name == "gpt2":
        config = transformers.GPT2Config(vocab_size=128, n_embd=32, n_layer=LAYERS, n_head=4, n_positions=256,
                                         initializer_range=0.2, bos_token_id=1, eos_token_id=127)
        return transformers.GPT2LMHeadModel(config).eval(), 4, 8
    if name == "mistral":  # the window (8) is shorter than prompt + new tokens
        config, cls = transformers.MistralConfig(**common, sliding_window=8), transformers.MistralForCausalLM
    else:
        config = getattr(transformers, {"llama": "LlamaConfig", "qwen2": "Qwen2Config", "phi": "PhiConfig"}[name])(**common)
        cls = getattr(transformers, {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "phi": "PhiForCausalLM"}[name])
    return cls(config).eval(), 2, 8


def _export_decode_step(model: torch.nn.Module, heads: int, head_dim: int,
                        position_ids: bool = False) -> tuple[torchlib.exporter.ExportResult, dict]:
    """One model for prefill and decode: dynamic batch, sequence and past sequence (and
    position_ids as an input, for left-padded batches)."""
    cache = transformers.DynamicCache([(torch.randn(2, heads, 5, head_dim), torch.randn(2, heads, 5, head_dim))
                                       for _ in range(LAYERS)])
    inputs = {"input_ids": torch.randint(0, 128, (2, 3)), "attention_mask": torch.ones(2, 8, dtype=torch.long),
              "cache": cache, "use_cache": True}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
               "cache": [[PAST] * LAYERS, [PAST] * LAYERS]}  # names inside the cache's spec
    if position_ids:
        inputs["position_ids"] = torch.arange(5, 8).expand(2, 3)
        dynamic["position_ids"] = {0: "batch", 1: "sequence"}
    return torchlib.export(model, (), inputs, dynamic_shapes=dynamic), inputs


def _check_parity(name: str, batch: int = 1) -> torchlib.exporter.ExportResult:
    model, heads, head_dim = _decoder(name)
    result, inputs = _export_decode_step(model, heads, head_dim)
    assert all(d.ok() for d in result.verify(**inputs)), result.verify(**inputs)
    prompt = torch.randint(3, 128, (batch, 7))
    expected = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS, do_sample=False)
    actual = generation.greedy(result, prompt, NEW_TOKENS, eos_token_id=model.config.eos_token_id)
    assert actual.tolist() == expected.tolist()
    assert len(set(actual[0, 7:].tolist())) > 2  # the weights are random, but the tokens are not one repeated token
    return result


def test_llama_decode_step_names_dims_and_greedy_parity():
    result = _check_parity("llama", batch=2)
    inputs = {v.name: list(v.shape) for v in result.graph.inputs}
    assert inputs == {
        "input_ids": ["batch", "sequence"], "attention_mask": ["batch", "total_sequence"],
        **{f"past_key_values.{i}.{kv}": ["batch", 2, "past_sequence", 8] for i in range(LAYERS) for kv in ("key", "value")},
    }
    outputs = {v.name: list(v.shape) for v in result.graph.outputs}
    assert outputs == {
        "logits": ["batch", "sequence", 128],
        **{f"present.{i}.{kv}": ["batch", 2, "past_sequence + sequence", 8] for i in range(LAYERS) for kv in ("key", "value")},
    }
    # the registration lasts only while the model is captured or its inputs flattened
    assert transformers.DynamicCache not in pytree.SUPPORTED_NODES
    # a padded batch needs position_ids (greedy makes them from the mask); the mask goes in attention_mask=
    prompt, mask = _left_padded([3, 5, 7])
    with pytest.raises(ValueError, match="the model has no 'position_ids' input: it would number the positions"):
        generation.greedy(result, prompt, 4, attention_mask=mask)
    with pytest.raises(ValueError, match=r"inputs=\{'attention_mask': ...\}: the mask of the generated sequence grows"):
        generation.greedy(result, prompt, 4, inputs={"attention_mask": mask})
    ones = torch.ones_like(prompt)  # a mask without padding needs no position_ids
    assert torch.equal(generation.greedy(result, prompt, 4, attention_mask=ones), generation.greedy(result, prompt, 4))


def _left_padded(lengths: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    """Prompts of these lengths, padded on the left with 0 to the longest, and their mask."""
    generator = torch.Generator().manual_seed(3)
    prompt = torch.zeros(len(lengths), max(lengths), dtype=torch.long)
    mask = torch.zeros_like(prompt)
    for row, n in enumerate(lengths):
        prompt[row, prompt.shape[1] - n:] = torch.randint(3, 127, (n,), generator=generator)
        mask[row, prompt.shape[1] - n:] = 1
    return prompt, mask


@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_left_padded_batch_greedy_parity(name):
    """Prompts of 3, 5 and 7 tokens, padded on the left: each row's ids equal generate's on the
    padded batch, and generate's on that prompt alone."""
    model, heads, head_dim = _decoder(name)
    result, _ = _export_decode_step(model, heads, head_dim, position_ids=True)
    assert {"attention_mask", "position_ids"} <= {v.name for v in result.graph.inputs}
    prompt, mask = _left_padded([3, 5, 7])
    expected = model.generate(prompt, attention_mask=mask, max_new_tokens=12, do_sample=False, pad_token_id=0)
    actual = generation.greedy(result, prompt, 12, attention_mask=mask, eos_token_id=127, pad_token_id=0)
    assert actual.tolist() == expected.tolist()
    for row, n in enumerate([3, 5, 7]):
        alone = model.generate(prompt[row:row + 1, 7 - n:], attention_mask=torch.ones(1, n, dtype=torch.long),
                               max_new_tokens=12, do_sample=False)
        assert alone[0, n:].tolist() == actual[row, 7:].tolist()
    # without the mask the padding is read as tokens: the padded rows' ids differ
    assert generation.greedy(result, prompt, 12, eos_token_id=127)[:2].tolist() != expected[:2].tolist()
    with pytest.raises(ValueError, match=r"input_ids rows \[0, 1\] begin with pad_token_id=0 and no attention_mask"):
        generation.greedy(result, prompt, 12, eos_token_id=127, pad_token_id=0)
    with pytest.raises(ValueError, match=r"attention_mask rows \[0, 1\] are not padded on the left"):
        generation.greedy(result, prompt, 12, attention_mask=mask.flip(1))
    with pytest.raises(ValueError, match=r"attention_mask has shape \[3, 6\]; it must be the prompt's, \[3, 7\]"):
        generation.greedy(result, prompt, 12, attention_mask=mask[:, 1:])
    with pytest.raises(ValueError, match="greedy makes position_ids at every step"):
        generation.greedy(result, prompt, 12, inputs={"position_ids": mask})


def test_mistral_sliding_window_greedy_parity():
    _check_parity("mistral")


@pytest.mark.slow
def test_sliding_window_layers_as_input():
    """A cache of DynamicSlidingWindowLayer (as generate makes for Mistral), shorter than its window."""
    model, heads, head_dim = _decoder("mistral")
    window = torch.tensor(model.config.sliding_window)
    cache = transformers.DynamicCache([(torch.randn(2, heads, 5, head_dim), torch.randn(2, heads, 5, head_dim), window)
                                       for _ in range(LAYERS)])
    assert type(cache.layers[0]).__name__ == "DynamicSlidingWindowLayer"
    inputs = {"input_ids": torch.randint(0, 128, (2, 1)), "attention_mask": torch.ones(2, 6, dtype=torch.long),
              "cache": cache, "use_cache": True}
    result = torchlib.export(model, (), inputs)
    assert all(d.ok() for d in result.verify(**inputs))
    assert [v.name for v in result.graph.inputs][2:] == [f"past_key_values.{i}.{kv}" for i in range(LAYERS) for kv in ("key", "value")]


def test_cache_with_other_attributes_is_refused():
    from torchlib.exporter import hf_cache

    cache = transformers.DynamicCache([(torch.randn(1, 2, 3, 4), torch.randn(1, 2, 3, 4))])
    cache.layers[0].extra = [1, 2]
    with hf_cache.registered(), pytest.raises(TypeError, match="DynamicLayer.extra is a list"):
        pytree.tree_flatten(cache)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["qwen2", "phi", "gpt2"])
def test_decoder_greedy_parity(name):
    _check_parity(name)


def test_t5_encoder_decoder_greedy_parity():
    torch.manual_seed(0)
    config = transformers.T5Config(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=LAYERS, num_heads=4,
                                   decoder_start_token_id=0, pad_token_id=0, eos_token_id=1, initializer_factor=5.0)
    model = transformers.T5ForConditionalGeneration(config).eval()
    source = torch.randint(2, 128, (2, 6))
    source_mask = torch.ones_like(source)
    encoder = torchlib.export(model.get_encoder(), (), {"input_ids": source, "attention_mask": source_mask},
                              dynamic_shapes={"input_ids": {0: "batch", 1: "source"}, "attention_mask": {0: "batch", 1: "source"}})
    with torch.no_grad():
        hidden = model.get_encoder()(input_ids=source, attention_mask=source_mask).last_hidden_state
    # the self-attention cache is the past; the cross-attention cache starts empty and is
    # recomputed from the encoder's output at every step (present.{i}.encoder.*, not fed back)
    cache = transformers.EncoderDecoderCache(
        transformers.DynamicCache([(torch.randn(2, 4, 5, 8), torch.randn(2, 4, 5, 8)) for _ in range(LAYERS)]),
        transformers.DynamicCache())
    inputs = {"attention_mask": source_mask, "decoder_input_ids": torch.randint(0, 128, (2, 3)),
              "encoder_outputs": (hidden,), "cache": cache, "use_cache": True}
    dynamic = {"attention_mask": {0: "batch", 1: "source"}, "decoder_input_ids": {0: "batch", 1: "sequence"},
               "encoder_outputs": ({0: "batch", 1: "source"},), "cache": [[[PAST] * LAYERS, [PAST] * LAYERS], [[], []]]}
    decoder = torchlib.export(model, (), inputs, dynamic_shapes=dynamic)
    assert all(d.ok() for d in decoder.verify(**inputs))
    names = [v.name for v in decoder.graph.inputs]
    assert names[3:] == [f"past_key_values.{i}.decoder.{kv}" for i in range(LAYERS) for kv in ("key", "value")]
    assert "present.1.encoder.value" in [v.name for v in decoder.graph.outputs]

    prompt = torch.randint(2, 128, (1, 7))
    encoded = encoder.run(input_ids=prompt, attention_mask=torch.ones_like(prompt))[0]
    actual = generation.greedy(decoder, torch.tensor([[config.decoder_start_token_id]]), NEW_TOKENS, eos_token_id=1,
                               ids_input="decoder_input_ids",
                               inputs={"attention_mask": torch.ones_like(prompt), names[2]: encoded})
    expected = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS, do_sample=False)
    assert actual.tolist() == expected.tolist()
    assert len(set(actual[0].tolist())) > 2


def test_static_cache_greedy_parity():
    """A StaticCache step (one token, written in place at cache_position): greedy takes the prompt
    token by token and feeds the full-length cache back; the ids equal generate's, also with
    cache_implementation="static"."""
    model, _, _ = _decoder("llama")
    cache = transformers.StaticCache(config=model.config, max_cache_len=40)
    with torch.no_grad():
        model(torch.randint(0, 128, (1, 5)), cache=cache, use_cache=True)  # 5 positions filled
    inputs = {"input_ids": torch.randint(0, 128, (1, 1)), "cache": cache, "cache_position": torch.tensor([5]),
              "use_cache": True}
    result = torchlib.export(model, (), inputs)
    assert all(d.ok() for d in result.verify(**inputs))
    names = [v.name for v in result.graph.inputs]
    assert "past_key_values.0.key" in names and "past_key_values.1.cumulative_length" in names
    assert "cache_0_key" in result.written_inputs  # written in place: its new value is an output too
    prompt = torch.randint(3, 128, (1, 7))
    expected = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS, do_sample=False)
    static = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=NEW_TOKENS, do_sample=False,
                            cache_implementation="static")
    actual = generation.greedy(result, prompt, NEW_TOKENS, eos_token_id=model.config.eos_token_id)
    assert actual.tolist() == expected.tolist() == static.tolist()
    with pytest.raises(ValueError, match="cache is static, of 40 positions"):
        generation.greedy(result, prompt, 40)
    with pytest.raises(ValueError, match="attention_mask given, but the model has no 'attention_mask' input"):
        generation.greedy(result, prompt, 4, attention_mask=torch.ones_like(prompt))


def test_user_registration_is_restored():
    from transformers.integrations.executorch import register_dynamic_cache_export_support

    from torchlib.exporter import hf_cache

    register_dynamic_cache_export_support()
    theirs = pytree.SUPPORTED_NODES[transformers.DynamicCache]
    try:
        with hf_cache.registered():
            assert pytree.SUPPORTED_NODES[transformers.DynamicCache].flatten_fn is not theirs.flatten_fn
        assert pytree.SUPPORTED_NODES[transformers.DynamicCache].flatten_fn is theirs.flatten_fn
    finally:
        pytree._deregister_pytree_node(transformers.DynamicCache)


def test_transformers_is_not_imported_for_other_models():
    code = ("import sys, torch, torchlib.exporter, torchlib.generation; from torchlib.exporter import hf_cache; "
            "assert not hf_cache.contains_cache(((torch.ones(1), [{'a': torch.ones(1)}]), {})); "
            "assert 'transformers' not in sys.modules, 'transformers was imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)


def test_past_fixed_by_the_export_is_refused():
    """A growing cache whose past length the export fixed (ProphetNet's positions take `int()` of
    it): past keys of 5 positions, present keys of 6. greedy says so, not that the cache is static."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Cast", ["input_ids"], ["ids_f"], to=TensorProto.FLOAT),
         helper.make_node("Unsqueeze", ["ids_f", "axis"], ["logits"]),
         helper.make_node("Slice", ["past_key_values.0.key", "zero", "one", "two"], ["first"]),
         helper.make_node("Concat", ["past_key_values.0.key", "first"], ["present.0.key"], axis=2)],
        "fixed_past",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
         helper.make_tensor_value_info("past_key_values.0.key", TensorProto.FLOAT, ["batch", 1, 5, 2])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", 1]),
         helper.make_tensor_value_info("present.0.key", TensorProto.FLOAT, ["batch", 1, 6, 2])],
        [helper.make_tensor(n, TensorProto.INT64, [1], [v]) for n, v in (("axis", 2), ("zero", 0), ("one", 1), ("two", 2))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    onnx.checker.check_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(ValueError, match="has a fixed past length of 5 and its present.0.key has 6: a cache that grows"):
        generation.greedy(session, torch.tensor([[3, 4, 5]]), 4)
