"""Greedy generation with an exported decoder in onnxruntime.

The model is one exported decode step (docs/language_models.md): it takes
`input_ids`, `attention_mask` (if the model has it), `position_ids` (if it has it) and
`past_key_values.{i}.key` / `.value`, and returns `logits` and `present.{i}.key` / `.value`.
The same model runs the prefill (the prompt, with a past of length 0) and every decode step
(one token, with the previous step's `present` as `past_key_values`):

    result = torchlib.export(model, (), {"input_ids": ids, "attention_mask": mask, "cache": cache,
                                         "use_cache": True}, dynamic_shapes=...)
    tokens = torchlib.generation.greedy(result, ids, max_new_tokens=32, eos_token_id=2)

gives the ids `model.generate(ids, max_new_tokens=32, do_sample=False)` gives. Prompts of
different lengths, padded on the left, take their mask as `generate` does,
`greedy(result, ids, 32, attention_mask=mask)`: the model then needs `position_ids` too, which
greedy makes from the mask (export it with both).

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
    """An empty cache for every `past_key_values.*` input: zeros whose dim 0 is `batch` (when it
    is dynamic), whose other dynamic dims are 0 and whose fixed dims keep their size. So a
    key or value [batch, heads, past, head_dim] has a past of 0; a StaticCache's (written in place
    at `cache_position`) is zeros of its full length, with zero `cumulative_length`; a state-space
    or linear-attention layer's `conv_states.*` / `recurrent_states.*` are zero states, the state
    before the first token."""
    past = {}
    for i in session.get_inputs():
        if i.name.startswith(PAST):
            shape = [d if isinstance(d, int) else batch if axis == 0 else 0 for axis, d in enumerate(i.shape)]
            past[i.name] = np.zeros(shape, dtype=_numpy_dtype(i))
    return past


def _static_length(session: ort.InferenceSession) -> int | None:
    """max_cache_len of a static cache (keys whose past length is fixed), else None. A step whose
    past keys are fixed but whose present keys are longer is a growing cache whose past length
    its export fixed (the model's code fixed it: ProphetNet's positions take `int()` of it):
    refused, it runs at that one past length only."""
    presents = {o.name: o.shape for o in session.get_outputs()}
    for i in session.get_inputs():
        if i.name.startswith(PAST) and i.name.endswith(".key") and len(i.shape) == 4 and isinstance(i.shape[2], int):
            present = presents.get(PRESENT + i.name[len(PAST):])
            if present is not None and len(present) == 4 and present[2] != i.shape[2]:
                raise ValueError(f"the model's {i.name} has a fixed past length of {i.shape[2]} and its "
                                 f"{PRESENT + i.name[len(PAST):]} has {present[2]}: a cache that grows at every step, "
                                 "whose past length the export fixed (its warnings say which code fixed it), runs at "
                                 "that one past length only; greedy needs the past dynamic")
            return i.shape[2]
    return None


def greedy(model: Any, input_ids: torch.Tensor, max_new_tokens: int = 32, *, attention_mask: torch.Tensor | None = None,
           eos_token_id: int | list[int] | None = None, pad_token_id: int | None = None,
           inputs: Mapping[str, Any] | None = None, ids_input: str = "input_ids", threads: int = 0) -> torch.Tensor:
    """Greedy decoding: the prompt `input_ids` [batch, length] followed by up to
    `max_new_tokens` tokens, each the argmax of the last position's logits.

    model: an ExportResult, a saved .onnx path, or an onnxruntime.InferenceSession of a decode
        step (inputs and outputs named as in the module docstring).
    attention_mask: [batch, length], 1 for a token, 0 for padding, as for `generate`: a batch of
        prompts of different lengths, padded on the left. It grows by a 1 at every step, and
        `position_ids` count the tokens only (cumsum - 1, 0 at the padding, as `generate` makes
        them), so the model must take `attention_mask` and, for a padded batch, `position_ids`
        (export it with both).
    eos_token_id: a sequence that produced it is finished (its later tokens are `pad_token_id`,
        by default the first eos id); generation stops once every sequence is finished, as in
        transformers' `generate`.
    pad_token_id: given (and not an eos id) with no attention_mask, a prompt row that begins
        with it is refused: `generate` would take it for padding, greedy asks for the mask.
    inputs: other inputs of the model, fed unchanged at every step (an encoder's outputs and
        its attention mask). Not the generated sequence's mask, positions or cache_position:
        they change at every step.
    ids_input: the name of the token input ("decoder_input_ids" for an encoder-decoder's decoder,
        whose mask and positions are then `decoder_attention_mask` / `decoder_position_ids`).
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
    tokens = input_ids.numpy().astype(np.int64)
    batch = tokens.shape[0]
    step_names = _step_names(ids_input)
    fixed = _fixed_inputs(inputs, step_names)
    if attention_mask is None and pad_token_id is not None and ids_input == "input_ids" and pad_token_id not in eos:
        padded = [int(r) for r in np.flatnonzero(tokens[:, 0] == pad_token_id)]
        if padded:  # generate would take them for padding (a mask made from pad_token_id): say which is meant
            raise ValueError(f"input_ids rows {padded} begin with pad_token_id={pad_token_id} and no attention_mask is "
                             f"given: for left padding give attention_mask= (0 at the padding), as to generate; for "
                             f"tokens, attention_mask=torch.ones_like(input_ids)")
    mask = _prompt_mask(attention_mask, tokens, names, step_names)
    past = empty_past(session, batch)
    missing = [n for n in names if n not in {ids_input, *fixed, *past, *step_names.values()}]
    if missing:
        raise ValueError(f"the model takes {missing}, which greedy does not make: give them in inputs= "
                         f"(fed unchanged at every step)")
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
            feeds = {ids_input: step_ids, **fixed, **past,
                     **_step_inputs(names, step_names, mask[:, :position + step_ids.shape[1]], step_ids.shape[1])}
            results = dict(zip(outputs, run_session(session, feeds, outputs)))
            position += step_ids.shape[1]
            past = {PAST + name[len(PRESENT):]: value for name, value in results.items()
                    if name.startswith(PRESENT) and PAST + name[len(PRESENT):] in past}
        next_tokens = results["logits"][:, -1, :].argmax(-1).astype(np.int64)
        next_tokens = np.where(finished, pad, next_tokens)
        tokens = np.concatenate([tokens, next_tokens[:, None]], axis=1)
        mask = np.concatenate([mask, np.ones((batch, 1), dtype=mask.dtype)], axis=1)
        finished |= np.isin(next_tokens, eos)
        if tokens.shape[1] - input_ids.shape[1] >= max_new_tokens or (eos and finished.all()):
            return torch.from_numpy(tokens)
        chunks = [next_tokens[:, None]]


def _step_names(ids_input: str) -> dict[str, str]:
    """The names of the inputs that change at every step, as transformers names them:
    `attention_mask` / `position_ids` beside `input_ids`, `decoder_attention_mask` /
    `decoder_position_ids` beside `decoder_input_ids`; and `cache_position`."""
    prefix = ids_input.removesuffix("input_ids")
    return {"mask": prefix + "attention_mask", "positions": prefix + "position_ids", "cache": "cache_position"}


def _fixed_inputs(inputs: Mapping[str, Any] | None, step_names: dict[str, str]) -> dict[str, np.ndarray]:
    """`inputs` as numpy arrays; refuses the inputs that change at every step."""
    fixed = {k: v.numpy() if isinstance(v, torch.Tensor) else np.asarray(v) for k, v in (inputs or {}).items()}
    if step_names["mask"] in fixed:
        raise ValueError(f"inputs={{{step_names['mask']!r}: ...}}: the mask of the generated sequence grows by one "
                         f"at every step, so it cannot be fed unchanged; give it as greedy(..., attention_mask=mask)")
    for name in (step_names["positions"], step_names["cache"]):
        if name in fixed:
            raise ValueError(f"inputs={{{name!r}: ...}}: greedy makes {name} at every step (from attention_mask "
                             f"for a padded batch); leave it out of inputs")
    return fixed


def _prompt_mask(attention_mask: torch.Tensor | None, tokens: np.ndarray, names: Mapping[str, Any],
                 step_names: dict[str, str]) -> np.ndarray:
    """The prompt's mask as int64 [batch, length]: the one given (checked against the model and
    for left padding), else ones."""
    if attention_mask is None:
        return np.ones(tokens.shape, dtype=np.int64)
    mask_name, positions_name = step_names["mask"], step_names["positions"]
    if mask_name not in names:
        raise ValueError(f"attention_mask given, but the model has no {mask_name!r} input (its inputs: {sorted(names)}): "
                         f"it would be ignored. Export the model with {mask_name} (and {positions_name} for a "
                         f"padded batch) among its inputs, with a dynamic length")
    mask = attention_mask.numpy() if isinstance(attention_mask, torch.Tensor) else np.asarray(attention_mask)
    if mask.shape != tokens.shape:
        raise ValueError(f"attention_mask has shape {list(mask.shape)}; it must be the prompt's, {list(tokens.shape)}")
    if not np.isin(mask, (0, 1)).all():
        raise ValueError("attention_mask must hold 0 (padding) and 1 (tokens) only")
    mask = mask.astype(np.int64)
    rows = [int(r) for r in np.flatnonzero(np.diff(mask, axis=1).min(axis=1, initial=0) < 0)]
    if rows or not mask[:, -1].all():
        bad = rows or [int(r) for r in np.flatnonzero(mask[:, -1] == 0)]
        raise ValueError(f"attention_mask rows {bad} are not padded on the left (zeros, then ones to the end): "
                         "greedy generates after the last column, so pad the prompts on the left "
                         "(tokenizer.padding_side = 'left')")
    if not mask.all() and positions_name not in names:
        raise ValueError(f"attention_mask pads the prompts, but the model has no {positions_name!r} input: it would "
                         f"number the positions of each row from its first pad, not its first token. Export the model "
                         f"with {positions_name} among its inputs (dynamic batch and length); greedy makes them from "
                         f"the mask as generate does")
    return mask


def _step_inputs(names: Mapping[str, Any], step_names: dict[str, str], mask: np.ndarray, length: int) -> dict[str, np.ndarray]:
    """The mask, position_ids and cache_position of a step of `length` tokens whose mask (past
    and step) is `mask`, for those the model takes. Positions count the tokens of each row
    (cumsum - 1, 0 at the padding: transformers 5's `generate`; 4.x filled 1, which masked
    positions never see)."""
    feeds = {}
    total = mask.shape[1]
    if step_names["mask"] in names:
        feeds[step_names["mask"]] = mask.astype(_numpy_dtype(names[step_names["mask"]]))
    if step_names["positions"] in names:
        positions = np.where(mask == 0, 0, np.cumsum(mask, axis=1) - 1)[:, total - length:]
        feeds[step_names["positions"]] = positions.astype(_numpy_dtype(names[step_names["positions"]]))
    if step_names["cache"] in names:
        feeds[step_names["cache"]] = np.arange(total - length, total, dtype=np.int64)
    return feeds


def _numpy_dtype(info: Any) -> np.dtype:
    """The numpy dtype of an onnxruntime input (its NodeArg)."""
    dtype = types.from_type_str(info.type)
    if dtype is None or dtype.numpy is None:
        raise ValueError(f"input {info.name} has type {info.type}, which greedy cannot feed")
    return dtype.numpy
