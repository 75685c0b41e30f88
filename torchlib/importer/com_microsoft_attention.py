"""Rotary embedding (com.microsoft and ai.onnx opset 23) and com.microsoft GroupQueryAttention,
as onnxruntime's CPU kernels compute them (checked against them in
tests/importer/test_com_microsoft.py)."""

from __future__ import annotations

from typing import Any

import torch

from torchlib.importer._common import static_input
from torchlib.importer.converter import Ctx
from torchlib.importer.registry import onnx_op

MS = "com.microsoft"


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, interleaved: bool) -> torch.Tensor:
    """RoPE on x [B, S, N, H] with cos / sin [B, S, rotary_dim / 2]: the first rotary_dim features
    of each head rotate (as halves, or as interleaved pairs), the rest pass through."""
    half = cos.shape[-1]
    cos, sin = cos.unsqueeze(2).to(x.dtype), sin.unsqueeze(2).to(x.dtype)
    rot, rest = x[..., : 2 * half], x[..., 2 * half :]
    if interleaved:
        x1, x2 = rot[..., 0::2], rot[..., 1::2]
        rotated = torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
    else:
        x1, x2 = rot[..., :half], rot[..., half:]
        rotated = torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    return torch.cat((rotated, rest), dim=-1)


def rotary_embedding_onnx(x: torch.Tensor, cos_cache: torch.Tensor, sin_cache: torch.Tensor,
                          position_ids: torch.Tensor | None, interleaved: int, num_heads: int) -> torch.Tensor:
    """ai.onnx RotaryEmbedding-23: x [B, N, S, H] or [B, S, N * H]; caches indexed by
    position_ids [B, S] (or already [B, S, rotary_dim / 2] when there are none)."""
    bsnh = _bsnh(x, num_heads, cos_cache.shape[-1])
    if position_ids is not None:
        cos_cache, sin_cache = cos_cache[position_ids], sin_cache[position_ids]
    y = rotate(bsnh, cos_cache, sin_cache, bool(interleaved))
    return y.transpose(1, 2) if x.dim() == 4 else y.flatten(-2)


def rotary_embedding_ms(x: torch.Tensor, position_ids: torch.Tensor, cos_cache: torch.Tensor,
                        sin_cache: torch.Tensor, interleaved: int, num_heads: int) -> torch.Tensor:
    """com.microsoft RotaryEmbedding: x [B, S, N * H] or [B, N, S, H]; position_ids [B, S], or one
    element: the offset of position 0."""
    bsnh = _bsnh(x, num_heads, cos_cache.shape[-1])
    if position_ids.numel() == 1 and bsnh.shape[1] * bsnh.shape[0] != 1:
        positions = position_ids.reshape(1, 1) + torch.arange(bsnh.shape[1], device=x.device).unsqueeze(0)
        position_ids = positions.expand(bsnh.shape[0], -1)
    else:
        position_ids = position_ids.reshape(bsnh.shape[0], bsnh.shape[1])
    y = rotate(bsnh, cos_cache[position_ids], sin_cache[position_ids], bool(interleaved))
    return y.transpose(1, 2) if x.dim() == 4 else y.flatten(-2)


def _bsnh(x: torch.Tensor, num_heads: int, half: int) -> torch.Tensor:
    """x [B, N, S, H] or [B, S, N * H] as [B, S, N, H]; without num_heads, H = 2 * cache width."""
    if x.dim() == 4:
        return x.transpose(1, 2)
    return x.unflatten(-1, (num_heads, -1) if num_heads > 0 else (-1, 2 * half))


@onnx_op("", "RotaryEmbedding", since=23)
def convert_rotary_embedding(ctx: Ctx, x: Any, cos_cache: Any, sin_cache: Any, position_ids: Any = None) -> Any:
    return ctx.call(rotary_embedding_onnx, x, cos_cache, sin_cache, position_ids, ctx.attr("interleaved", 0),
                    ctx.attr("num_heads", 0))


@onnx_op(MS, "RotaryEmbedding")
def convert_rotary_embedding_ms(ctx: Ctx, x: Any, position_ids: Any, cos_cache: Any, sin_cache: Any) -> Any:
    if ctx.attr("is_packed_batching", 0):
        raise ctx.error("is_packed_batching=1 is not supported")
    return ctx.call(rotary_embedding_ms, x, position_ids, cos_cache, sin_cache, ctx.attr("interleaved", 0),
                    ctx.attr("num_heads", 0))


def group_query_attention(query: torch.Tensor, key: torch.Tensor | None, value: torch.Tensor | None,
                          past_key: torch.Tensor | None, past_value: torch.Tensor | None, seqlens_k: torch.Tensor,
                          total_sequence_length: torch.Tensor | int, cos_cache: torch.Tensor | None,
                          sin_cache: torch.Tensor | None, num_heads: int, kv_num_heads: int, scale: float,
                          softcap: float, local_window_size: int, do_rotary: int, rotary_interleaved: int,
                          smooth_softmax: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """onnxruntime's GroupQueryAttention (its CPU kernel's semantics), computed in float32.

    query [B, S, N * H] (or packed [B, S, (N + 2 Nkv) * H] with key and value absent); past
    [B, Nkv, P, H]; seqlens_k [B] = total length - 1 of each sequence; total_sequence_length T.
    The present cache holds max(T, P) positions: the past's first seqlens_k + 1 - S ones, then
    the new keys, zeros after. A first prompt (S == T) has no past. Query s of sequence b sits at
    position past_b + s and sees keys [.. that position] (the last local_window_size of them
    when local_window_size > 0). Rotary (do_rotary) uses those positions.
    Returns (output [B, S, N * H], present_key, present_value)."""
    batch, seq = query.shape[0], query.shape[1]
    if key is None:
        head = query.shape[2] // (num_heads + 2 * kv_num_heads)
        q, key, value = query.split([num_heads * head, kv_num_heads * head, kv_num_heads * head], dim=-1)
    else:
        head, q = query.shape[2] // num_heads, query
    assert value is not None
    total = total_sequence_length
    if isinstance(total, torch.Tensor):  # a run-time value (a shape value or constant comes as an int)
        total = int(total.reshape(-1)[0])
    q = q.unflatten(-1, (num_heads, head))  # [B, S, N, H]
    k = key.unflatten(-1, (kv_num_heads, head))
    v = value.unflatten(-1, (kv_num_heads, head))
    lengths = seqlens_k.to(torch.int64) + 1  # [B]
    # a tensor, not a Python branch: under torch.export the prompt and decode steps share a graph
    first_prompt = torch.scalar_tensor(total - seq, dtype=torch.int64, device=query.device) == 0
    past_len = torch.where(first_prompt, torch.zeros_like(lengths), lengths - seq)
    positions = past_len.unsqueeze(1) + torch.arange(seq, device=query.device)  # [B, S]
    if do_rotary:
        assert cos_cache is not None and sin_cache is not None
        at = positions.clamp(max=cos_cache.shape[0] - 1)
        q = rotate(q, cos_cache[at], sin_cache[at], bool(rotary_interleaved))
        k = rotate(k, cos_cache[at], sin_cache[at], bool(rotary_interleaved))
    past = past_key.shape[2] if past_key is not None else 0
    length = torch.sym_max(total, past)
    slots = torch.arange(length, device=query.device)  # [L]
    from_past = slots.unsqueeze(0) < past_len.unsqueeze(1)  # [B, L]
    # the new key s lands in slot past_len + s: a one-hot [B, L, S] places them
    place = (slots.view(1, -1, 1) == positions.unsqueeze(1)).to(k.dtype)

    def cache(past_t: torch.Tensor | None, new: torch.Tensor) -> torch.Tensor:
        placed = torch.einsum("bls,bsnh->bnlh", place, new)
        if past_t is None:
            return placed
        old = torch.nn.functional.pad(past_t, (0, 0, 0, length - past))
        return torch.where(from_past.view(batch, 1, length, 1), old, placed)

    present_key, present_value = cache(past_key, k), cache(past_value, v)
    groups = num_heads // kv_num_heads
    keys = present_key.to(torch.float32).repeat_interleave(groups, dim=1)  # [B, N, L, H]
    values = present_value.to(torch.float32).repeat_interleave(groups, dim=1)
    scores = torch.matmul(q.to(torch.float32).transpose(1, 2), keys.transpose(-1, -2))
    scores = scores * (scale if scale else head**-0.5)  # [B, N, S, L]
    if softcap > 0:
        scores = softcap * torch.tanh(scores / softcap)
    pos = positions.view(batch, 1, seq, 1)
    visible = slots.view(1, 1, 1, -1) <= pos
    if local_window_size > 0:
        visible = visible & (slots.view(1, 1, 1, -1) > pos - local_window_size)
    scores = scores.masked_fill(~visible, float("-inf"))
    if smooth_softmax:
        sink = torch.zeros_like(scores[..., :1])
        probs = torch.softmax(torch.cat((scores, sink), dim=-1), dim=-1)[..., :-1]
    else:
        probs = torch.softmax(scores, dim=-1)
    out = torch.matmul(probs, values).transpose(1, 2).flatten(-2)  # [B, S, N * H]
    return out.to(query.dtype), present_key, present_value


_UNSUPPORTED_GQA_INPUTS = {9: "position_ids", 10: "attention_bias", 11: "head_sink", 12: "k_scale", 13: "v_scale",
                           14: "q_norm_weight", 15: "k_norm_weight"}  # fmt: skip
_GQA_ATTR_DEFAULTS = {"causal": 1, "qk_output": 0, "kv_cache_bit_width": 0, "sliding_window_cache": 0,
                      "k_quant_type": "NONE", "v_quant_type": "NONE"}  # fmt: skip


@onnx_op(MS, "GroupQueryAttention")
def convert_group_query_attention(ctx: Ctx, *inputs: Any) -> Any:
    for index, name in _UNSUPPORTED_GQA_INPUTS.items():
        if index < len(inputs) and inputs[index] is not None:
            raise ctx.error(f"input {name!r} is not supported by the importer")
    for name, default in _GQA_ATTR_DEFAULTS.items():
        if ctx.attr(name, default) != default:
            raise ctx.error(f"attribute {name}={ctx.attr(name)!r} is not supported (only {default!r})")
    if len(ctx.node.output) > 3 and ctx.node.output[3]:
        raise ctx.error("output 3 (output_qk) is not supported")
    padded = list(inputs[:9]) + [None] * (9 - min(len(inputs), 9))
    if ctx.attr("do_rotary", 0) and (padded[7] is None or padded[8] is None):
        raise ctx.error("do_rotary=1 needs cos_cache and sin_cache (inputs 7 and 8)")
    total = static_input(ctx, 6, padded[6])
    if isinstance(total, tuple):
        total = total[0]
    outs = ctx.call_multi(group_query_attention, 3, *padded[:6], total, padded[7], padded[8],
                          ctx.attr("num_heads"), ctx.attr("kv_num_heads"), ctx.attr("scale", 0.0),
                          ctx.attr("softcap", 0.0), ctx.attr("local_window_size", -1), ctx.attr("do_rotary", 0),
                          ctx.attr("rotary_interleaved", 0), ctx.attr("smooth_softmax", 0))
    return outs
