"""Greedy generation with an exported decoder in onnxruntime.

The model is one exported decode step (docs/language_models.md): it takes
`input_ids`, `attention_mask` (if the model has it), `position_ids` (if it has it) and
`past_key_values.{i}.key` / `.value`, and returns `logits` and `present.{i}.key` / `.value`.
The same model runs the prefill (the prompt, with a past of length 0) and every decode step
(one token, with the previous step's `present` as `past_key_values`):

    result = torchlib.export(model, (), {"input_ids": ids, "attention_mask": mask, "cache": cache,
                                         "use_cache": True}, dynamic_shapes=...)
    tokens = torchlib.generation.greedy(result, ids, max_new_tokens=32, eos_token_id=2)

gives the ids `model.generate(ids, max_new_tokens=32, do_sample=False)` gives.

An encoder-decoder's decoder step takes its encoder's outputs as another input: pass them in
`inputs` (fed unchanged at every step), the decoder's start ids as `input_ids`, and
`ids_input="decoder_input_ids"`. Cache outputs without a matching input (a cross-attention
cache recomputed at every step) are not fed back.

A StaticCache's step (exported with `cache=StaticCache(...)` and `cache_position`, one token:
the cache is written in place, so its length is fixed) starts from zeros of the cache's full
length, gets `cache_position` at every step and takes the prompt one token at a time; a prompt
and new tokens longer than the cache are refused.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
import onnxruntime as ort
import torch

from graph_builder import types
from graph_builder.evaluator import run_session

PAST, PRESENT = "past_key_values.", "present."


def session_of(model: Any, threads: int = 0) -> ort.InferenceSession:
    """An onnxruntime session of an ExportResult, a saved model's path or a session."""
    if isinstance(model, ort.InferenceSession):
        return model
    if isinstance(model, (str, os.PathLike)):
        options = ort.SessionOptions()
        if threads:
            options.intra_op_num_threads = threads
        return ort.InferenceSession(os.fspath(model), options, providers=["CPUExecutionProvider"])
    if hasattr(model, "session"):
        return model.session(threads)
    raise TypeError(f"expected an ExportResult, a path to an .onnx file or an InferenceSession, got {type(model).__name__}")


def empty_past(session: ort.InferenceSession, batch: int) -> dict[str, np.ndarray]:
    """An empty cache for every `past_key_values.*` input: [batch, heads, 0, head_dim] for a
    dynamic past; zeros of the full [batch, heads, max_cache_len, head_dim] for a static one (a
    StaticCache, written in place at `cache_position`), and zeros for its other tensors (its
    `cumulative_length`)."""
    past = {}
    for i in session.get_inputs():
        if not i.name.startswith(PAST):
            continue
        dtype = types.from_type_str(i.type).numpy
        if len(i.shape) == 0:
            past[i.name] = np.zeros((), dtype=dtype)
            continue
        if len(i.shape) != 4 or not all(isinstance(d, int) for d in (i.shape[1], i.shape[3])):
            raise ValueError(f"cache input {i.name} has shape {i.shape}; expected [batch, heads, past, head_dim] "
                             "with static heads and head_dim")
        length = i.shape[2] if isinstance(i.shape[2], int) else 0
        past[i.name] = np.zeros((batch, i.shape[1], length, i.shape[3]), dtype=dtype)
    return past


def _static_length(session: ort.InferenceSession) -> int | None:
    """max_cache_len of a static cache (a past whose length is fixed), else None."""
    for i in session.get_inputs():
        if i.name.startswith(PAST) and len(i.shape) == 4 and isinstance(i.shape[2], int):
            return i.shape[2]
    return None


def greedy(model: Any, input_ids: torch.Tensor, max_new_tokens: int = 32, *, eos_token_id: int | list[int] | None = None,
           pad_token_id: int | None = None, inputs: Mapping[str, Any] | None = None, ids_input: str = "input_ids",
           threads: int = 0) -> torch.Tensor:
    """Greedy decoding: the prompt `input_ids` [batch, length] followed by up to
    `max_new_tokens` tokens, each the argmax of the last position's logits.

    model: an ExportResult, a saved .onnx path, or an onnxruntime.InferenceSession of a decode
        step (inputs and outputs named as in the module docstring).
    eos_token_id: a sequence that produced it is finished (its later tokens are `pad_token_id`,
        by default the first eos id); generation stops once every sequence is finished, as in
        transformers' `generate`.
    inputs: other inputs of the model, fed unchanged at every step (an encoder's outputs).
    ids_input: the name of the token input ("decoder_input_ids" for an encoder-decoder's decoder).
    """
    session = session_of(model, threads)
    names = {i.name: i for i in session.get_inputs()}
    outputs = [o.name for o in session.get_outputs()]
    if "logits" not in outputs:
        raise ValueError(f"the model has no `logits` output (its outputs: {outputs})")
    if ids_input not in names:
        raise ValueError(f"the model has no {ids_input!r} input (its inputs: {sorted(names)})")
    eos = [] if eos_token_id is None else [eos_token_id] if isinstance(eos_token_id, int) else list(eos_token_id)
    pad = pad_token_id if pad_token_id is not None else (eos[0] if eos else 0)
    fixed = {k: v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v) for k, v in (inputs or {}).items()}
    tokens = input_ids.numpy().astype(np.int64)
    batch = tokens.shape[0]
    past = empty_past(session, batch)
    capacity = _static_length(session)
    if capacity is not None and tokens.shape[1] + max_new_tokens - 1 > capacity:
        raise ValueError(f"the model's cache is static, of {capacity} positions: a prompt of {tokens.shape[1]} and "
                         f"{max_new_tokens} new tokens need {tokens.shape[1] + max_new_tokens - 1}; export it with a "
                         "larger max_cache_len")
    steps = names[ids_input].shape[1]  # a step of a fixed length 1 (a StaticCache's export): the prompt token by token
    position, finished = 0, np.zeros(batch, dtype=bool)
    chunks = [tokens[:, i:i + 1] for i in range(tokens.shape[1])] if steps == 1 else [tokens]
    while True:
        for step_ids in chunks:
            results = _step(session, names, outputs, step_ids, position, past, fixed, ids_input)
            position += step_ids.shape[1]
            past = {PAST + name[len(PRESENT):]: value for name, value in results.items()
                    if name.startswith(PRESENT) and PAST + name[len(PRESENT):] in past}
        next_tokens = results["logits"][:, -1, :].argmax(-1).astype(np.int64)
        next_tokens = np.where(finished, pad, next_tokens)
        tokens = np.concatenate([tokens, next_tokens[:, None]], axis=1)
        finished |= np.isin(next_tokens, eos)
        if tokens.shape[1] - input_ids.shape[1] >= max_new_tokens or (eos and finished.all()):
            return torch.from_numpy(tokens)
        chunks = [next_tokens[:, None]]


def _step(session: ort.InferenceSession, names: Mapping[str, Any], outputs: list[str], step_ids: np.ndarray,
          position: int, past: dict[str, np.ndarray], fixed: dict[str, np.ndarray], ids_input: str) -> dict[str, np.ndarray]:
    """One run: `step_ids` after `position` tokens; attention_mask, position_ids and cache_position
    made when the model takes them and `inputs` does not give them."""
    batch, length = step_ids.shape
    feeds = {ids_input: step_ids, **fixed, **past}
    positions = np.arange(position, position + length, dtype=np.int64)
    if "attention_mask" in names and "attention_mask" not in fixed:
        feeds["attention_mask"] = np.ones((batch, position + length), dtype=np.int64)
    if "position_ids" in names and "position_ids" not in fixed:
        feeds["position_ids"] = np.broadcast_to(positions, step_ids.shape).copy()
    if "cache_position" in names and "cache_position" not in fixed:
        feeds["cache_position"] = positions
    return dict(zip(outputs, run_session(session, feeds, outputs)))
