"""Attention: aten::scaled_dot_product_attention to the ONNX Attention op (opset 23).

ONNX Attention and torch agree on the math: scale (default 1/sqrt(head_dim)) applied as
sqrt(scale) to Q and K, a boolean mask (True = attend) or a float mask added to the scores,
is_causal as the top-left lower-triangular mask (ONNX aligns it bottom-right only past a KV
cache, which torch's op never has), causal and mask combined, GQA by repeat-interleaved KV
heads, and a fully masked query row giving zeros rather than NaN.

onnxruntime 1.31's CPU kernel runs float32 and float16; float16 and bfloat16 compute in float32,
as torch accumulates them. It needs
4-D inputs with one batch size and a mask of rank 2 to 4 whose query-length dim is not
broadcast, and it rejects empty inputs. So 3-D inputs get a heads dim, masks are expanded over
the query length, and every other case (double, ranks other than 3 and 4, Q/K/V batch or head
dims that broadcast, empty dims) takes the explicit MatMul/Softmax decomposition instead: for
double the kernel is missing (onnxruntime would fall back to the op's function body, which gives
NaN for fully masked rows), and the rest is outside what the op accepts.

dropout_p > 0 (a model in training mode) takes the decomposition too, with the attention weights
through ONNX Dropout in training mode (scaled by 1 / (1 - p), as torch's math kernel does; p = 1
gives zeros as torch does): like torch.onnx's export, the outputs are random, so they can be
checked by their statistics only.

torch.export (torch 2.13, CPU) records aten::scaled_dot_product_attention itself, both with
run_decompositions({}) and with the exporter's table; the backend kernels it dispatches to
(_scaled_dot_product_flash_attention_for_cpu, _scaled_dot_product_efficient_attention) never
appear in exported graphs, so they have no functions here.
"""

from __future__ import annotations

import math
from typing import Any

from graph_builder import current_opset, op, types
from graph_builder.ir import Value
from graph_builder.optimizer.attention import torch_lowest_mask
from graph_builder.type_constraints import TFloat
from torchlib.ops._helpers import one_output
from torchlib.ops._kernels import scale as scale_exact
from torchlib.ops.dropout import training_dropout
from torchlib.registry import aten_op

_FUSED = (types.FLOAT, types.FLOAT16, types.BFLOAT16)


def _dim(x: Value, axis: int) -> Any:
    return None if x.shape is None else x.shape[axis]


def _known_equal(a: Any, b: Any) -> bool:
    return a is not None and a == b


def _fits_fused(query: Value, key: Value, value: Value, attn_mask: Value | None, enable_gqa: bool) -> bool:
    if current_opset() < 23:  # ONNX Attention is new in opset 23
        return False
    rank = query.rank
    if query.dtype not in _FUSED or rank not in (3, 4) or key.rank != rank or value.rank != rank:
        return False
    if any(d == 0 for x in (query, key, value) for d in x.known_shape):
        return False
    if attn_mask is not None and attn_mask.known_rank > rank:
        return False
    if not (_known_equal(_dim(query, 0), _dim(key, 0)) and _known_equal(_dim(key, 0), _dim(value, 0))):
        return False
    if rank == 4:
        q_heads, kv_heads = _dim(query, 1), _dim(key, 1)
        if not _known_equal(kv_heads, _dim(value, 1)):
            return False
        if not _known_equal(q_heads, kv_heads):
            grouped = isinstance(q_heads, int) and isinstance(kv_heads, int) and q_heads % kv_heads == 0
            return enable_gqa and grouped
    return True


def _fused(query: Value, key: Value, value: Value, attn_mask: Value | None, is_causal: bool, scale: float | None) -> Value:
    dtype = query.known_dtype
    # the half dtypes accumulate in float32, as torch's CPU kernels do: onnxruntime's float16
    # kernel accumulates in float16 (error 0.013 against float64 where torch's is 0.0019)
    compute = types.FLOAT if dtype in (types.FLOAT16, types.BFLOAT16) else dtype
    q, k, v = (op.Cast(x, to=compute.onnx) if x.dtype is not compute else x for x in (query, key, value))
    mask = attn_mask
    unbatched_heads = query.rank == 3
    if unbatched_heads:  # (N, L, E): a heads dim of 1, since 3-D means (N, L, heads * E) to ONNX
        q, k, v = (op.Unsqueeze(x, [1]) for x in (q, k, v))
        if mask is not None and mask.rank == 3:
            mask = op.Unsqueeze(mask, [1])
    if mask is not None:
        if not mask.known_dtype.is_bool and mask.dtype is not compute:
            mask = op.Cast(mask, to=compute.onnx)
        mask = torch_lowest_mask(op, mask)  # onnxruntime reads float32's lowest as -inf; torch adds it
        if mask.known_rank < 2 or not _known_equal(_dim(mask, -2), _dim(query, -2)):
            q_len, kv_len = _dim(query, -2), _dim(key, -2)
            if isinstance(q_len, int) and isinstance(kv_len, int):
                lengths: Any = [q_len, kv_len]
            else:
                lengths = op.Concat(op.Shape(q, start=-2, end=-1), op.Shape(k, start=-2, end=-1), axis=0)
            mask = op.Expand(mask, lengths)  # onnxruntime does not broadcast the query-length dim
    y = one_output(op.Attention(q, k, v, mask, is_causal=int(is_causal), scale=scale))
    if unbatched_heads:
        y = op.Squeeze(y, [1])
    return op.Cast(y, to=dtype.onnx) if dtype is not compute else y


def _length(x: Value, original: Value) -> Any:
    """The sequence length (dim -2) of x, an int when `original` knows it."""
    length = _dim(original, -2)
    if isinstance(length, int):
        return length
    return op.Squeeze(op.Shape(x, start=-2, end=-1), [0])


def _repeat_heads(x: Value, repeats: int) -> Value:
    """torch's repeat_interleave(repeats, dim=-3): each KV head serves `repeats` query heads."""
    if x.is_static:
        shape = list(x.static_shape)
        grown: Any = [*shape[:-2], repeats, *shape[-2:]]
        merged: Any = [*shape[:-3], shape[-3] * repeats, *shape[-2:]]
    else:
        grown = op.Concat(op.Shape(x, end=-2), [repeats], op.Shape(x, start=-2), axis=0)
        merged = op.Concat(op.Shape(x, end=-3), [-1], op.Shape(x, start=-2), axis=0)
    return op.Reshape(op.Expand(op.Unsqueeze(x, [-3]), grown), merged)


def _decomposed(
    query: Value, key: Value, value: Value, attn_mask: Value | None, is_causal: bool, scale: float | None,
    enable_gqa: bool, dropout_p: float = 0.0,
) -> Value:  # fmt: skip
    dtype = query.known_dtype
    compute = types.FLOAT if dtype in (types.FLOAT16, types.BFLOAT16) else dtype
    q, k, v = (op.Cast(x, to=compute.onnx) if x.dtype is not compute else x for x in (query, key, value))
    q_heads, kv_heads = (_dim(query, -3), _dim(key, -3)) if query.known_rank >= 3 else (1, 1)
    if enable_gqa and q_heads != kv_heads:
        if not (isinstance(q_heads, int) and isinstance(kv_heads, int)):
            raise ValueError(f"enable_gqa needs the head counts known when the graph is built, got {q_heads} and {kv_heads}")
        k, v = _repeat_heads(k, q_heads // kv_heads), _repeat_heads(v, q_heads // kv_heads)
    head_dim = _dim(query, -1)
    if scale is not None:
        root: Any = math.sqrt(scale)
    elif isinstance(head_dim, int):
        root = head_dim**-0.25
    else:
        root = op.Pow(op.Cast(op.Shape(q, start=-1), to=compute.onnx), -0.25)
    rank = key.known_rank  # a 3-D query broadcasts against 4-D keys and values, as in torch
    k_t = op.Transpose(k, perm=[*range(rank - 2), rank - 1, rank - 2])
    if isinstance(root, Value):
        scores = op.MatMul(op.Mul(q, root), op.Mul(k_t, root))
    else:
        scores = op.MatMul(scale_exact(q, root), scale_exact(k_t, root))
    if is_causal:
        rows = op.Range(0, _length(q, query), 1)
        cols = op.Range(0, _length(k, key), 1)
        allowed = op.LessOrEqual(op.Unsqueeze(cols, [0]), op.Unsqueeze(rows, [1]))
        scores = op.Where(allowed, scores, float("-inf"))
    if attn_mask is not None:
        if attn_mask.known_dtype.is_bool:
            scores = op.Where(attn_mask, scores, float("-inf"))
        else:
            mask = op.Cast(attn_mask, to=compute.onnx) if attn_mask.dtype is not compute else attn_mask
            scores = op.Add(scores, mask)
    probs = op.Softmax(scores, axis=-1)
    if attn_mask is not None:  # torch: a row with every key masked gives zeros, not NaN
        last = scores.known_rank - 1  # positive: onnxruntime ignores axes=[-1] on empty inputs
        fully_masked = op.Equal(op.ReduceMax(scores, [last], keepdims=1), float("-inf"))
        probs = op.Where(fully_masked, 0.0, probs)
    if dropout_p != 0:
        probs = training_dropout(probs, dropout_p)[0]
    y = op.MatMul(probs, v)
    return op.Cast(y, to=dtype.onnx) if dtype is not compute else y


@aten_op("aten::scaled_dot_product_attention")
def aten_scaled_dot_product_attention(
    query: TFloat, key: TFloat, value: TFloat, attn_mask: Value | None = None, dropout_p: float = 0.0,
    is_causal: bool = False, *, scale: float | None = None, enable_gqa: bool = False,
) -> TFloat:  # fmt: skip
    """scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor"""
    if dropout_p == 0 and _fits_fused(query, key, value, attn_mask, enable_gqa):
        return _fused(query, key, value, attn_mask, is_causal, scale)
    # dropout_p > 0 (a model in training mode): the attention weights go through a random ONNX
    # Dropout in training mode, as torch's math kernel and torch.onnx do: the outputs are random
    return _decomposed(query, key, value, attn_mask, is_causal, scale, enable_gqa, dropout_p)
