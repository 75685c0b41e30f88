"""The fused `Attention` operator or its MatMul / Softmax form: whichever onnxruntime runs faster.

onnxruntime's CPU `Attention` kernel is one node, but it takes Q, K and V as [batch, heads,
sequence, head size] tensors that must be laid out in memory: the Reshape / Transpose that split a
projection into heads become copies in front of it. The MatMul / Softmax form lets onnxruntime
fold those transposes and the scale into its `FusedMatMul`. `bench/bench_attention.py` measures
both, laid out as models emit them (projection -> Reshape -> Transpose -> attention -> Transpose
-> Reshape), onnxruntime CPU, 1 thread; `bench/bench_latency.py`-style A/B runs of whole models
(with and without this rule, same run) decide the small end. The rule:

    MatMul / Softmax while the work per head, q_len * kv_len * head_size, is in
    [UNFUSE_MIN_WORK, UNFUSE_MAX_WORK) = [2**16, 2**18): 65 tokens of head size 32 (the ViT
    benchmark, 3 % faster in the model), 32 tokens of head size 64.
    Below, the single fused node wins inside models (GPT and Llama at 16 tokens of head size 16:
    fused 2-6 % faster; the transformer at 32 x 32 x 16: even); from 2**18 on the fused kernel is
    as fast or up to 10 % faster (64 x 64 x 64 and above: it never writes the scores out).

Only exact rewrites: no mask input (a fully masked row gives zeros in `Attention` and NaN in
Softmax), `is_causal` on a static q_len <= kv_len (every row keeps key 0), no softcap, a single
output, 4-D float32 inputs with one head count.
"""

from __future__ import annotations

import math

import numpy as np

from graph_builder import types
from graph_builder.ir import Value
from graph_builder.optimizer.pattern import Rule, Var

UNFUSE_MIN_WORK = 1 << 16  # q_len * kv_len * head_size from which MatMul / Softmax is faster...
UNFUSE_MAX_WORK = 1 << 18  # ... and below which


def prefer_unfused(q_len: int, kv_len: int, head_size: int) -> bool:
    """The measured rule: MatMul / Softmax for a mid-sized head's work, `Attention` otherwise."""
    return UNFUSE_MIN_WORK <= q_len * kv_len * head_size < UNFUSE_MAX_WORK


def unfused_attention(op, q, k, v, is_causal: int = 0, scale: float | None = None):  # type: ignore[no-untyped-def]
    """softmax(q @ k^T * scale [+ causal mask]) @ v for [batch, heads, length, size] inputs, as
    ONNX's `Attention` defines it (causal keeps the keys up to each query's own position)."""
    size = q.shape[-1]
    scale = 1.0 / math.sqrt(size) if scale is None else scale
    scores = op.Mul(op.MatMul(q, op.Transpose(k, perm=[0, 1, 3, 2])), float(scale))
    if is_causal:
        s, t = q.shape[-2], k.shape[-2]
        mask = np.where(np.tril(np.ones((s, t), dtype=bool)), np.float32(0), np.float32(-np.inf))
        scores = op.Add(scores, mask)
    return op.MatMul(op.Softmax(scores, axis=-1), v)


def _attention(op, q, k, v):  # type: ignore[no-untyped-def]
    return op.Attention(q, k, v, is_causal=Var("is_causal", default=0), scale=Var("scale", default=None),
                        softcap=Var("softcap", default=0.0), q_num_heads=Var("q_heads", default=None),
                        kv_num_heads=Var("kv_heads", default=None))


def _static(x: Value) -> bool:
    return x.shape is not None and all(type(d) is int for d in x.shape)


def unfuse_pays(q: Value, k: Value, v: Value, is_causal: int, scale: float | None, softcap: float,
                q_heads: int | None, kv_heads: int | None) -> bool:
    """Whether the MatMul / Softmax form is exact and faster at these (static) shapes."""
    if softcap or q_heads is not None or kv_heads is not None:
        return False
    if any(x.rank != 4 or x.dtype is not types.FLOAT or not _static(x) for x in (q, k, v)):
        return False
    b, h, s, d = q.shape  # type: ignore[misc]
    if k.shape[:2] != (b, h) or v.shape[:3] != k.shape[:3] or k.shape[3] != d:  # type: ignore[index]
        return False
    t = k.shape[2]  # type: ignore[index]
    if is_causal and s > t:
        return False
    return prefer_unfused(s, t, d)


def _unfused(op, q, k, v, is_causal, scale, **_):  # type: ignore[no-untyped-def]
    return unfused_attention(op, q, k, v, is_causal, scale)


UNFUSE = [Rule("Attention -> MatMul/Softmax (mid-sized heads)", _attention, _unfused, unfuse_pays, opset=23)]
__all__ = ["UNFUSE", "UNFUSE_MAX_WORK", "UNFUSE_MIN_WORK", "prefer_unfused", "unfuse_pays", "unfused_attention"]
