"""Models for the importer's round trips (tests/importer/test_import_round_trip_models.py,
bench/bench_import_round_trip.py): a tiny transformers Llama's decode step exported with its KV
cache as input (dynamic batch, sequence and past), with its flat inputs at any size and the
original model's outputs on them."""

from __future__ import annotations

from typing import Any

import torch

LAYERS, KV_HEADS, HEAD_DIM, VOCAB = 2, 2, 8, 128
PAST = {0: "batch", 2: "past_sequence"}


def llama() -> torch.nn.Module:
    """A 2-layer LlamaForCausalLM with random weights (4 heads, 2 KV heads), in eval mode."""
    import transformers

    torch.manual_seed(0)
    config = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=LAYERS,
                                      num_attention_heads=4, num_key_value_heads=KV_HEADS, max_position_embeddings=256)
    return transformers.LlamaForCausalLM(config).eval()


def decode_inputs(batch: int, sequence: int, past: int, seed: int) -> list[torch.Tensor]:
    """[input_ids, attention_mask, key_0, value_0, key_1, value_1]: the exported graph's inputs."""
    g = torch.Generator().manual_seed(seed)
    cache = [torch.randn(batch, KV_HEADS, past, HEAD_DIM, generator=g) for _ in range(2 * LAYERS)]
    ids = torch.randint(0, VOCAB, (batch, sequence), generator=g)
    return [ids, torch.ones(batch, past + sequence, dtype=torch.int64), *cache]


def _cache(flat: list[torch.Tensor]) -> Any:
    import transformers

    return transformers.DynamicCache([(flat[i].clone(), flat[i + 1].clone()) for i in range(0, len(flat), 2)])


def decode_reference(model: torch.nn.Module, flat: list[torch.Tensor]) -> list[torch.Tensor]:
    """The model's [logits, present key_0, value_0, ...] on the flat inputs."""
    with torch.no_grad():
        out = model(input_ids=flat[0], attention_mask=flat[1], past_key_values=_cache(flat[2:]), use_cache=True)
    return [out.logits] + [t for layer in out.past_key_values.layers for t in (layer.keys, layer.values)]


def export_decode_step(model: torch.nn.Module) -> Any:
    """torchlib.export of the decode step with the cache as input: dynamic batch, sequence and past."""
    import torchlib

    flat = decode_inputs(2, 3, 5, seed=0)
    inputs = {"input_ids": flat[0], "attention_mask": flat[1], "cache": _cache(flat[2:]), "use_cache": True}
    dynamic = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "total_sequence"},
               "cache": [[PAST] * LAYERS, [PAST] * LAYERS]}
    return torchlib.export(model, (), inputs, dynamic_shapes=dynamic)


def decode_dynamic_shapes() -> tuple[dict[int, Any], ...]:
    """torch.export's dynamic_shapes for the flat inputs (the imported module's)."""
    batch, sequence = torch.export.Dim("batch"), torch.export.Dim("sequence")
    total, past = torch.export.Dim("total_sequence"), torch.export.Dim("past_sequence")
    return ({0: batch, 1: sequence}, {0: batch, 1: total}) + tuple({0: batch, 2: past} for _ in range(2 * LAYERS))
