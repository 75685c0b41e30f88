"""genai_config.json: what onnxruntime-genai reads beside the graph.

The fields are those onnxruntime-genai's model builder writes for a decoder-only model
(`onnxruntime_genai/models/builders/base.py`, `make_genai_config`), filled from the same sources:

- `model`: bos / eos / pad token ids (generation_config.json first, then config.json; the
  tokenizer's own end token is added to the eos ids when they lack it, as the builder does: a chat
  model ends its turns with it), `context_length` (max_position_embeddings), `vocab_size`, and the
  decoder's file, head counts and sizes, layer count, and its input and output names (the
  `%d` patterns name each layer's cache). `type` is "decoder", onnxruntime-genai's generic
  decoder-only model: the graph holds everything model-specific, so none of the runtime's
  per-architecture paths (which assume the builder's graph) is wanted.
- `search`: the defaults `generate` would use, from generation_config.json (do_sample,
  temperature, top_k, top_p, repetition_penalty, num_beams, ...), `max_length` = the context
  length, and `past_present_share_buffer`: true only for a graph whose every attention reads and
  writes the cache in one buffer (GroupQueryAttention, target="onnxruntime"); the standard graph
  returns the grown cache as new tensors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torchlib.genai.step import DecoderSpec

# generate's defaults (transformers' GenerationConfig), used where generation_config.json is silent
SEARCH_DEFAULTS: dict[str, Any] = {
    "diversity_penalty": 0.0, "do_sample": False, "length_penalty": 1.0, "no_repeat_ngram_size": 0, "num_beams": 1,
    "num_return_sequences": 1, "repetition_penalty": 1.0, "temperature": 1.0, "top_k": 50, "top_p": 1.0,
}  # fmt: skip


def _first(key: str, *sources: Mapping[str, Any]) -> Any:
    for source in sources:
        value = source.get(key)
        if value is not None:
            return value
    return None


def special_tokens(config: Mapping[str, Any], generation: Mapping[str, Any], tokenizer_eos: int | None) -> dict[str, Any]:
    """bos, eos (an int or a list) and pad ids, as the builder resolves them."""
    eos = _first("eos_token_id", generation, config)
    if eos is None and tokenizer_eos is None:
        raise ValueError("no eos_token_id in generation_config.json, config.json or the tokenizer: onnxruntime-genai "
                         "needs one (give config={'eos_token_id': ...})")  # fmt: skip
    ids = ([] if eos is None else list(eos) if isinstance(eos, (list, tuple)) else [eos])
    if tokenizer_eos is not None and tokenizer_eos not in ids:
        ids = [tokenizer_eos, *ids]
    bos = _first("bos_token_id", generation, config)
    pad = _first("pad_token_id", generation, config)
    return {"bos_token_id": 1 if bos is None else int(bos), "eos_token_id": ids[0] if len(ids) == 1 else ids,
            "pad_token_id": ids[0] if pad is None else int(pad)}  # fmt: skip


def genai_config(spec: DecoderSpec, *, filename: str, inputs: list[str], outputs: list[str],
                 config: Mapping[str, Any], generation: Mapping[str, Any], tokenizer_eos: int | None,
                 share_buffer: bool, session_options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The whole genai_config.json as a dict. `inputs` / `outputs`: the graph's names."""
    names_in: dict[str, str] = {}
    for name in ("input_ids", "attention_mask", "position_ids"):
        if name in inputs:
            names_in[name] = name
    names_in["past_key_names"] = "past_key_values.%d.key"
    names_in["past_value_names"] = "past_key_values.%d.value"
    names_out = {"logits": "logits", "present_key_names": "present.%d.key", "present_value_names": "present.%d.value"}
    expected = {"input_ids", "attention_mask", *(n % i for n in ("past_key_values.%d.key", "past_key_values.%d.value")
                                                 for i in range(spec.layers))}  # fmt: skip
    if not expected <= set(inputs):
        raise ValueError(f"the graph lacks inputs onnxruntime-genai feeds: {sorted(expected - set(inputs))}")
    expected = {"logits", *(n % i for n in ("present.%d.key", "present.%d.value") for i in range(spec.layers))}
    if not expected <= set(outputs):
        raise ValueError(f"the graph lacks outputs onnxruntime-genai reads: {sorted(expected - set(outputs))}")
    search = {k: generation.get(k, v) if generation.get(k) is not None else v for k, v in SEARCH_DEFAULTS.items()}
    search.update({"early_stopping": True, "max_length": spec.context_length, "min_length": 0,
                   "past_present_share_buffer": share_buffer})  # fmt: skip
    options: dict[str, Any] = {"log_id": "onnxruntime-genai", "provider_options": [], **(session_options or {})}
    return {
        "model": {
            **special_tokens(config, generation, tokenizer_eos),
            "context_length": spec.context_length,
            "decoder": {
                "session_options": options,
                "filename": filename,
                "head_size": spec.head_size,
                "hidden_size": spec.hidden_size,
                "inputs": names_in,
                "outputs": names_out,
                "num_attention_heads": spec.heads,
                "num_hidden_layers": spec.layers,
                "num_key_value_heads": spec.kv_heads,
            },
            "type": "decoder",
            "vocab_size": spec.vocab_size,
        },
        "search": dict(sorted(search.items())),
    }
