"""The decode step onnxruntime-genai runs: its inputs, its outputs, and the module exported.

onnxruntime-genai feeds a decoder by name:

    input_ids [batch_size, sequence_length] int64
    attention_mask [batch_size, total_sequence_length] int64
    position_ids [batch_size, sequence_length] int64            (when the graph takes them)
    past_key_values.{i}.key / .value [batch_size, kv heads, past_sequence_length, head size]
 -> logits [batch_size, sequence_length, vocab]
    present.{i}.key / .value [batch_size, kv heads, total_sequence_length, head size]

(`total_sequence_length` = past + new tokens.) The same graph runs the prompt (past of length 0)
and each new token. Inputs and outputs are ordered per layer, key then value.

A transformers causal LM is called the way `generate` calls it, with a `DynamicCache` made from
the past tensors inside forward (`DecodeStep`), so that the graph's inputs are plain tensors with
these names whatever transformers' cache classes look like. A sliding-window model (Mistral,
Gemma2) gets a full cache and applies its window in its attention mask, as it does for a cache
longer than its window. Any other nn.Module is exported as it is: its forward must already be
`forward(input_ids, attention_mask, *past) -> (logits, *present)`, past and present as above.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Mapping
from typing import Any

import torch

BATCH, SEQUENCE, TOTAL, PAST = "batch_size", "sequence_length", "total_sequence_length", "past_sequence_length"


@dataclasses.dataclass(frozen=True)
class DecoderSpec:
    """The shapes of a decoder that onnxruntime-genai's config names (genai_config.json)."""

    layers: int
    heads: int
    kv_heads: int
    head_size: int
    hidden_size: int
    vocab_size: int
    context_length: int

    @classmethod
    def of(cls, config: Any) -> DecoderSpec:
        """From a transformers config (or a dict of its fields): num_hidden_layers,
        num_attention_heads, num_key_value_heads (default: the heads), head_dim (default:
        hidden_size // heads), hidden_size, vocab_size, max_position_embeddings."""
        def get(key: str) -> Any:
            return config.get(key) if isinstance(config, Mapping) else getattr(config, key, None)

        missing = [k for k in ("num_hidden_layers", "num_attention_heads", "hidden_size", "vocab_size") if get(k) is None]
        context = get("context_length") or get("max_position_embeddings")
        if context is None:
            missing.append("max_position_embeddings")
        if missing:
            raise ValueError(f"the model's config lacks {', '.join(missing)}: onnxruntime-genai's config needs them "
                             f"(give config={{...}} with these fields)")  # fmt: skip
        heads = int(get("num_attention_heads"))
        hidden = int(get("hidden_size"))
        return cls(layers=int(get("num_hidden_layers")), heads=heads, kv_heads=int(get("num_key_value_heads") or heads),
                   head_size=int(get("head_dim") or hidden // heads), hidden_size=hidden,
                   vocab_size=int(get("vocab_size")), context_length=int(context))  # fmt: skip


def past_names(layers: int) -> list[str]:
    return [f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]


def present_names(layers: int) -> list[str]:
    return [f"present.{i}.{kv}" for i in range(layers) for kv in ("key", "value")]


def is_transformers_model(model: torch.nn.Module) -> bool:
    return any(c.__module__.startswith("transformers.") for c in type(model).__mro__) and hasattr(model, "config")


class DecodeStep(torch.nn.Module):
    """A transformers causal LM as `forward(input_ids, attention_mask, [position_ids,] *past) ->
    (logits, *present)`, past and present per layer (key, value). Its submodules, parameters
    and buffers are the model's own, under the model's names (its state_dict keys): the
    checkpoint's names are the export's weight names and initializer names."""

    def __init__(self, model: torch.nn.Module, layers: int, position_ids: bool):
        super().__init__()
        for name, child in model.named_children():
            self.add_module(name, child)
        for name, p in model.named_parameters(recurse=False):
            self.register_parameter(name, p)
        for name, b in model.named_buffers(recurse=False):
            self.register_buffer(name, b, persistent=name not in model._non_persistent_buffers_set)
        self._model = [model]  # in a list: not a submodule (its children are ours)
        self.layers = layers
        self.position_ids = position_ids
        parameters = inspect.signature(model.forward).parameters
        self.cache_argument = "cache" if "cache" in parameters else "past_key_values"  # transformers 5.x / 4.x

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, *rest: torch.Tensor) -> tuple[torch.Tensor, ...]:
        import transformers

        kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask, "use_cache": True}
        if self.position_ids:
            kwargs["position_ids"], rest = rest[0], rest[1:]
        kwargs[self.cache_argument] = transformers.DynamicCache([(rest[2 * i], rest[2 * i + 1]) for i in range(self.layers)])
        out = self._model[0](**kwargs)
        cache = getattr(out, self.cache_argument)
        present = [t for layer in cache.layers for t in (layer.keys, layer.values)]
        return (out.logits, *present)


def sample_inputs(spec: DecoderSpec, position_ids: bool, dtype: torch.dtype = torch.float32, batch: int = 2,
                  new: int = 3, past: int = 5) -> tuple[list[str], tuple, tuple]:
    """(input names, sample inputs, dynamic shapes) of the step: by default batch 2, 3 new tokens
    after 5 (no dim of size 0 or 1: torch.export would make it static)."""
    g = torch.Generator().manual_seed(0)
    names = ["input_ids", "attention_mask"]
    args: list[torch.Tensor] = [torch.randint(0, spec.vocab_size, (batch, new), generator=g),
                                torch.ones(batch, past + new, dtype=torch.long)]
    shapes: list[Any] = [{0: BATCH, 1: SEQUENCE}, {0: BATCH, 1: TOTAL}]
    if position_ids:
        names.append("position_ids")
        args.append(torch.arange(past, past + new).expand(batch, new).contiguous())
        shapes.append({0: BATCH, 1: SEQUENCE})
    names += past_names(spec.layers)
    args += [torch.randn(batch, spec.kv_heads, past, spec.head_size, generator=g, dtype=dtype)
             for _ in range(2 * spec.layers)]  # fmt: skip
    shapes += [{0: BATCH, 2: PAST}] * (2 * spec.layers)
    return names, tuple(args), tuple(shapes)


def grouped_like(forward: Any, shapes: tuple) -> tuple:
    """`shapes` (one entry per tensor, in order) grouped as forward takes its arguments: the
    entries from a `*args` parameter on form one tuple (torch.export's structure for it)."""
    positional = 0
    for p in inspect.signature(forward).parameters.values():
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            return (*shapes[:positional], tuple(shapes[positional:]))
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            positional += 1
    return shapes
