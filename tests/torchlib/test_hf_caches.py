"""transformers' caches as the model returns them, as inputs of an exported decode step
(hf_cache.py): per-layer order, sliding-window layers, `past_key_values=` through `**kwargs`,
state-space and hybrid layers, and the whole-program decomposition with a cache input.

Tiny configs with random weights (no download); greedy decoding (torchlib.generation) against
`model.generate` for 12 tokens.
"""

from __future__ import annotations

import pytest
import torch
import torch.utils._pytree as pytree

import torchlib
from torchlib import generation
from torchlib.exporter import hf_cache
from torchlib.exporter.names import leaf_names

transformers = pytest.importorskip("transformers")
cache_utils = pytest.importorskip("transformers.cache_utils")

TOKENS = 12
COMMON = dict(vocab_size=128, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
              num_key_value_heads=2, max_position_embeddings=256, eos_token_id=127, pad_token_id=0)


def _prefill(model: torch.nn.Module, length: int = 5) -> object:
    """The cache the model returns from its own prefill (batch 2)."""
    torch.manual_seed(1)
    with torch.no_grad():
        return model(torch.randint(3, 127, (2, length)), use_cache=True).cache


def _greedy_parity(model: torch.nn.Module, result: torchlib.exporter.ExportResult) -> None:
    torch.manual_seed(2)
    prompt = torch.randint(3, 127, (2, 7))
    expected = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=TOKENS, do_sample=False)
    actual = generation.greedy(result, prompt, TOKENS, eos_token_id=127, pad_token_id=0)
    assert actual.tolist() == expected.tolist()
    assert len(set(actual[0, 7:].tolist())) > 2  # random weights, but not one repeated token


def _llama() -> torch.nn.Module:
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(**COMMON)).eval()


def _mistral(window: int = 8) -> torch.nn.Module:
    torch.manual_seed(0)
    return transformers.MistralForCausalLM(transformers.MistralConfig(**COMMON, sliding_window=window)).eval()


def test_cache_inputs_come_per_layer_after_position_ids():
    """Inputs as optimum and onnxruntime-genai order them, whatever order the keywords were given in."""
    model = _llama()
    cache = _prefill(model)
    inputs = {"input_ids": torch.randint(3, 127, (2, 3)), "cache": cache, "use_cache": True,
              "position_ids": torch.arange(5, 8).expand(2, 3), "attention_mask": torch.ones(2, 8, dtype=torch.long)}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "position_ids": {0: "batch", 1: "sequence"},
               "attention_mask": {0: "batch", 1: "total_sequence"}, "cache": hf_cache.dynamic_shapes_of(cache)}
    result = torchlib.export(model, (), inputs, dynamic_shapes=dynamic)
    kv = [f"{i}.{e}" for i in range(2) for e in ("key", "value")]
    assert [v.name for v in result.graph.inputs] == ["input_ids", "attention_mask", "position_ids",
                                                     *(f"past_key_values.{n}" for n in kv)]
    assert [v.name for v in result.graph.outputs] == ["logits", *(f"present.{n}" for n in kv)]
    assert result.graph.metadata["torchlib.feeds"] == "ttt" + "t" * 4 + "-"  # use_cache: a constant
    assert all(d.ok() for d in result.verify(**inputs))
    _greedy_parity(model, result)


def test_transformers_layout_of_dynamic_shapes_is_accepted():
    """A list per entry over the layers (transformers' registration's layout) is the same spec as
    one dict per layer."""
    cache = _prefill(_llama())
    past = {0: "batch", 2: "past"}
    assert hf_cache.cache_spec(cache, [[past, past], [past, past]]) == hf_cache.dynamic_shapes_of(cache, past="past")
    with hf_cache.registered():
        assert len(pytree.tree_leaves(cache)) == 4
    with pytest.raises(ValueError, match="'value' entries has 1 specs, but 2 layers hold one"):
        hf_cache.cache_spec(cache, [[past, past], [past]])


def test_sliding_window_prefill_cache_given_as_past_key_values():
    """Mistral's own prefill cache (DynamicSlidingWindowLayer) passed as `past_key_values=`, which
    transformers 5 takes through **kwargs, with dynamic_shapes keyed by that name; generation runs
    past the window (8)."""
    model = _mistral()
    cache = _prefill(model)
    assert {type(layer).__name__ for layer in cache.layers} == {"DynamicSlidingWindowLayer"}
    inputs = {"input_ids": torch.randint(3, 127, (2, 3)), "attention_mask": torch.ones(2, 8, dtype=torch.long),
              "past_key_values": cache, "use_cache": True}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
               "past_key_values": hf_cache.dynamic_shapes_of(cache)}
    result = torchlib.export(model, (), inputs, dynamic_shapes=dynamic)
    assert {v.name: v.shape for v in result.graph.inputs}["past_key_values.1.value"] == ("batch", 2, "past_sequence", 8)
    assert all(d.ok() for d in result.verify(**inputs))
    # the program takes the sliding cache too (it flattens like the full layers it becomes)
    assert result.verify(**inputs, compare_intermediates=True).first_divergence is None
    _greedy_parity(model, result)


def test_sliding_cache_that_dropped_keys_is_refused():
    model = _mistral(window=4)
    cache = _prefill(model, length=6)  # 6 tokens seen, the last 3 kept
    inputs = {"input_ids": torch.randint(3, 127, (2, 1)), "cache": cache, "use_cache": True}
    with pytest.raises(ValueError, match="has seen 6 tokens but keeps only the last 3"):
        torchlib.export(model, (), inputs)


class _SliceWriteOnCache(torch.nn.Module):
    """An in-place write into a slice whose view, made by reshape, is read back afterwards (only
    the whole-program decomposition expresses it), with a DynamicCache in and out."""

    def forward(self, x: torch.Tensor, cache: object) -> tuple[torch.Tensor, object]:
        y = x.clone()
        row = y.reshape(-1, 2, 1, 4)[:, :, 0]
        y[:, :, 0].mul_(2)
        keys, _ = cache.update(y, y, 0)
        return row + keys.sum(), cache


def test_whole_program_decomposition_keeps_the_cache_registered():
    cache = transformers.DynamicCache([(torch.randn(2, 2, 3, 4), torch.randn(2, 2, 3, 4))])
    x = torch.randn(2, 2, 1, 4)
    result = torchlib.export(_SliceWriteOnCache(), (x, cache),
                             dynamic_shapes=({0: "batch"}, [{"key": {0: "batch", 2: "past"}, "value": {0: "batch", 2: "past"}}]))
    assert any(d.startswith("the whole program was decomposed") for d in result.diagnostics)
    assert [v.name for v in result.graph.outputs][1:] == ["present.0.key", "present.0.value"]
    cache = transformers.DynamicCache([(torch.randn(3, 2, 5, 4), torch.randn(3, 2, 5, 4))])
    assert all(d.ok() for d in result.verify(torch.randn(3, 2, 1, 4), cache))


def _one_token_step(model: torch.nn.Module, mask: bool) -> torchlib.exporter.ExportResult:
    """A one-token step (transformers' single-token path is the one that reads conv and SSM states),
    with an attention mask where generate gives the model one at a decode step (Mamba's
    `prepare_inputs_for_generation` drops it: its mask is per new token, not over the past)."""
    cache = _prefill(model)
    inputs = {"input_ids": torch.randint(3, 127, (2, 1)), "cache": cache, "use_cache": True}
    dynamic = {"input_ids": {0: "batch"}, "cache": hf_cache.dynamic_shapes_of(cache)}
    if mask:
        inputs["attention_mask"], dynamic["attention_mask"] = torch.ones(2, 6, dtype=torch.long), {0: "batch", 1: "total"}
    result = torchlib.export(model, (), inputs, dynamic_shapes=dynamic)
    assert all(d.ok() for d in result.verify(**inputs))
    return result


def test_state_space_model_carries_conv_and_ssm_states():
    torch.manual_seed(0)
    config = transformers.MambaConfig(vocab_size=128, hidden_size=32, state_size=8, num_hidden_layers=2, expand=2,
                                      conv_kernel=4, time_step_rank=4, eos_token_id=127, pad_token_id=0,
                                      initializer_range=1.0)
    model = transformers.MambaForCausalLM(config).eval()
    result = _one_token_step(model, mask=False)
    assert {v.name: v.shape for v in result.graph.inputs if v.name.startswith("past")} == {
        "past_key_values.0.conv_states.0": ("batch", 64, 4), "past_key_values.0.recurrent_states.0": ("batch", 64, 8),
        "past_key_values.1.conv_states.0": ("batch", 64, 4), "past_key_values.1.recurrent_states.0": ("batch", 64, 8)}
    assert "present.1.recurrent_states.0" in [v.name for v in result.graph.outputs]
    _greedy_parity(model, result)


@pytest.mark.slow
def test_hybrid_cache_of_mamba_and_attention_layers():
    """Jamba: a state-space layer then an attention layer; the cache's get_seq_length reads the
    attention layer."""
    torch.manual_seed(0)
    config = transformers.JambaConfig(**{**COMMON, "hidden_size": 64}, num_experts=1, attn_layer_period=2,
                                      attn_layer_offset=1, mamba_d_state=8, mamba_dt_rank=8, use_mamba_kernels=False)
    model = transformers.JambaForCausalLM(config).eval()
    result = _one_token_step(model, mask=True)
    names = [v.name for v in result.graph.inputs if v.name.startswith("past")]
    assert names == ["past_key_values.0.conv_states.0", "past_key_values.0.recurrent_states.0",
                     "past_key_values.1.key", "past_key_values.1.value"]
    _greedy_parity(model, result)


@pytest.mark.slow
def test_bamba_mamba2_layer_then_attention_layer():
    """Bamba (Mamba-2 mixers): its conv and SSM states named as Mamba's and Jamba's."""
    torch.manual_seed(0)
    config = transformers.BambaConfig(**{**COMMON, "hidden_size": 64}, attn_layer_indices=[1], mamba_n_heads=4,
                                      mamba_d_head=32, mamba_n_groups=1, mamba_d_state=8, mamba_chunk_size=16)
    model = transformers.BambaForCausalLM(config).eval()
    result = _one_token_step(model, mask=True)
    names = [v.name for v in result.graph.inputs if v.name.startswith("past")]
    assert names == ["past_key_values.0.conv_states.0", "past_key_values.0.recurrent_states.0",
                     "past_key_values.1.key", "past_key_values.1.value"]
    _greedy_parity(model, result)


@pytest.mark.slow
def test_zamba_hybrid_layers_carry_keys_and_states():
    """Zamba: Mamba layers and hybrid layers (attention and a Mamba mixer, LinearAttentionAndFullAttentionLayer);
    a hybrid layer's entries are its key and value, then its states. Two hybrid layers: with one,
    transformers' own tied-weights check fails to build the model."""
    torch.manual_seed(0)
    config = transformers.ZambaConfig(**{**COMMON, "hidden_size": 64, "num_hidden_layers": 6, "num_key_value_heads": 4},
                                      attention_hidden_size=128, attention_head_dim=32, n_mamba_heads=2,
                                      attn_layer_period=2, attn_layer_offset=1, mamba_d_state=8, mamba_dt_rank=8,
                                      use_mamba_kernels=False, initializer_range=0.5)
    model = transformers.ZambaForCausalLM(config).eval()
    result = _one_token_step(model, mask=True)
    names = [v.name for v in result.graph.inputs if v.name.startswith("past_key_values.2.")]
    assert names == [f"past_key_values.2.{e}" for e in ("key", "value", "conv_states.0", "recurrent_states.0")]
    _greedy_parity(model, result)


@pytest.mark.slow
def test_gemma2_sliding_and_full_layers():
    torch.manual_seed(0)
    config = transformers.Gemma2Config(**COMMON, head_dim=8, sliding_window=8)
    model = transformers.Gemma2ForCausalLM(config).eval()
    cache = _prefill(model)
    assert [type(layer).__name__ for layer in cache.layers] == ["DynamicSlidingWindowLayer", "DynamicLayer"]
    inputs = {"input_ids": torch.randint(3, 127, (2, 3)), "attention_mask": torch.ones(2, 8, dtype=torch.long),
              "cache": cache, "use_cache": True}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
               "cache": hf_cache.dynamic_shapes_of(cache)}
    result = torchlib.export(model, (), inputs, dynamic_shapes=dynamic)
    _greedy_parity(model, result)


def test_encoder_decoder_cache_comes_per_layer_as_optimum_orders_it():
    """Self-attention key and value, then cross-attention key and value, for each layer; the
    cross entries' dim 2 is the encoder's length; transformers' layout of dynamic_shapes (one spec
    per cache) is the same spec; the cache comes back whole."""
    def dynamic(length: int) -> object:
        return transformers.DynamicCache([(torch.randn(2, 4, length, 8), torch.randn(2, 4, length, 8)) for _ in range(2)])

    cache = transformers.EncoderDecoderCache(dynamic(5), dynamic(7))
    with hf_cache.registered():
        leaves, spec = pytree.tree_flatten({"cache": cache})
        back = pytree.tree_unflatten(leaves, spec)["cache"]
        names = leaf_names(spec.children()[0], "past_key_values")
    entries = ("decoder.key", "decoder.value", "encoder.key", "encoder.value")
    assert names == [f"past_key_values.{i}.{e}" for i in range(2) for e in entries]
    layers = [cache.self_attention_cache.layers, cache.cross_attention_cache.layers]
    assert all(leaf is t for leaf, t in zip(leaves, [t for i in range(2) for part in layers for t in (part[i].keys, part[i].values)]))
    assert type(back) is transformers.EncoderDecoderCache and back.is_updated == {0: True, 1: True}
    assert back.cross_attention_cache.layers[1].values is cache.cross_attention_cache.layers[1].values
    past, encoder = {0: "batch", 2: "past_sequence"}, {0: "batch", 2: "encoder_sequence"}
    expected = [dict(zip(entries, (past, past, encoder, encoder)))] * 2
    assert hf_cache.dynamic_shapes_of(cache) == expected
    assert hf_cache.cache_spec(cache, [[[past] * 2, [past] * 2], [[encoder] * 2, [encoder] * 2]]) == expected


class _ModelsOwnSlidingLayer(cache_utils.DynamicSlidingWindowLayer):
    """A sliding layer class a model's module defines (extra state, the window's behaviour kept)."""

    def extra(self) -> int:
        return 1


class _LayerWithItsOwnWindow(cache_utils.DynamicSlidingWindowLayer):
    def update(self, key_states, value_states, *args, **kwargs):  # keeps the last keys its own way
        return super().update(key_states, value_states, *args, **kwargs)


def test_a_models_own_sliding_layer_comes_back_without_its_window():
    """A sliding layer class transformers has no full-attention class for is rebuilt on DynamicLayer
    (one class, so contexts compare equal); one that redefines `update` has a window of its own
    and is refused with the reason."""
    layer = _ModelsOwnSlidingLayer(sliding_window=8)
    layer.update(torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4))
    cache = transformers.DynamicCache()
    cache.layers = [layer]
    with hf_cache.registered():
        leaves, spec = pytree.tree_flatten(cache)
        back = pytree.tree_unflatten(leaves, spec)
        assert pytree.tree_structure(back) == spec
    rebuilt = type(back.layers[0])
    assert rebuilt.__name__ == "_ModelsOwnSlidingLayer" and rebuilt.__bases__ == (cache_utils.DynamicLayer,)
    assert back.layers[0].extra() == 1 and back.layers[0].keys is leaves[0]
    own = _LayerWithItsOwnWindow(sliding_window=8)
    own.update(torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4))
    with hf_cache.registered(), pytest.raises(TypeError, match="defines _LayerWithItsOwnWindow.update itself"):
        cache.layers = [own]
        pytree.tree_flatten(cache)


def test_a_list_of_tensors_the_cache_holds_per_layer_is_an_entry_of_each_layer():
    """MiniMaxCache keeps its linear-attention states in its own `linear_cache` list (a tensor for
    each linear-attention layer, [] for the attention ones): each is an entry of its layer."""
    from transformers.models.minimax.modeling_minimax import MiniMaxCache

    cache = MiniMaxCache()
    cache.set_linear_cache(0, torch.randn(2, 4, 8, 8))
    cache.update(torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4), 1)
    cache.set_linear_cache(1, [])
    with hf_cache.registered():
        leaves, spec = pytree.tree_flatten(cache)
        back = pytree.tree_unflatten(leaves, spec)
        assert leaf_names(spec, "past_key_values") == ["past_key_values.0.linear_cache", "past_key_values.1.key",
                                                       "past_key_values.1.value"]
    assert back.linear_cache[0] is cache.linear_cache[0] and back.linear_cache[1] == []
    assert back.layers[1].keys is cache.layers[1].keys and back.get_seq_length(1) == 5
    assert hf_cache.dynamic_shapes_of(cache)[0] == {"linear_cache": {0: "batch"}}


def test_a_layer_tensor_that_grows_with_the_keys_has_the_past_dim():
    """DynamicIndexedLayer (DeepSeek-V3.2, GLM-MoE-DSA, AXK2) keeps its indexer's keys, [batch, past,
    dim], beside the keys and values: its past dim is dynamic too (fixed, the step would run at
    the sample's past length only). A linear-attention layer's states keep their sizes, also in a
    hybrid layer that holds keys."""
    cache = transformers.DynamicCache()
    layer = cache_utils.DynamicIndexedLayer()
    layer.update(torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4))
    layer.update_indexer(torch.randn(2, 5, 8))
    cache.layers = [layer]
    assert hf_cache.dynamic_shapes_of(cache) == [{"key": {0: "batch", 2: "past_sequence"},
                                                  "value": {0: "batch", 2: "past_sequence"},
                                                  "indexer_keys": {0: "batch", 1: "past_sequence"}}]
    with hf_cache.registered():
        leaves, spec = pytree.tree_flatten(cache)
        assert leaf_names(spec, "past_key_values") == ["past_key_values.0.key", "past_key_values.0.value",
                                                       "past_key_values.0.indexer_keys"]
    hybrid = cache_utils.LinearAttentionAndFullAttentionLayer()  # its states keep their sizes, 5 or not
    hybrid.update(torch.randn(2, 2, 5, 4), torch.randn(2, 2, 5, 4))
    hybrid.update_conv_state(torch.randn(2, 8, 5))
    hybrid.update_recurrent_state(torch.randn(2, 5, 4, 4))
    cache.layers = [hybrid]
    assert hf_cache.dynamic_shapes_of(cache)[0]["conv_states.0"] == {0: "batch"}
    assert hf_cache.dynamic_shapes_of(cache)[0]["recurrent_states.0"] == {0: "batch"}
