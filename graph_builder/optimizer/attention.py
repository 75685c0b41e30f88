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

import dataclasses
import math
from typing import TYPE_CHECKING, cast

import numpy as np

from graph_builder import types
from graph_builder.ir import Node, Value
from graph_builder.optimizer.editing import Uses, build_before, ints
from graph_builder.optimizer.pattern import Match, Rule, Var, _same_type

if TYPE_CHECKING:
    from graph_builder.builder import GraphBuilder

UNFUSE_MIN_WORK = 1 << 16  # q_len * kv_len * head_size from which MatMul / Softmax is faster...
UNFUSE_MAX_WORK = 1 << 18  # ... and below which


def prefer_unfused(q_len: int, kv_len: int, head_size: int) -> bool:
    """The measured rule: MatMul / Softmax for a mid-sized head's work, `Attention` otherwise."""
    return UNFUSE_MIN_WORK <= q_len * kv_len * head_size < UNFUSE_MAX_WORK


def unfused_attention(op, q, k, v, is_causal: int = 0, scale: float | None = None):
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


def _attention(op, q, k, v):
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
    # _static(x) above established that every dim of q, k and v is an int.
    b, h, s, d = cast("tuple[int, int, int, int]", q.shape)
    k_shape = cast("tuple[int, ...]", k.shape)
    if k_shape[:2] != (b, h) or cast("tuple[int, ...]", v.shape)[:3] != k_shape[:3] or k_shape[3] != d:
        return False
    t = k_shape[2]
    if is_causal and s > t:
        return False
    return prefer_unfused(s, t, d)


def _unfused(op, q, k, v, is_causal, scale, **_):
    return unfused_attention(op, q, k, v, is_causal, scale)


def _unfuse_unless_batch_first(q: Value, **bindings: object) -> bool:
    """unfuse_pays, except for the attention of a batch-first nn.MultiheadAttention, which
    BATCH_FIRST (a later pass) gives to a 3-D `Attention`: faster than the MatMul / Softmax form at
    the ViT benchmark's 65 x 65 x 32 (docs/performance.md)."""
    return unfuse_pays(q, **bindings) and not _batch_first_part(q)  # type: ignore[arg-type]


_UNFUSE_NAME = "Attention -> MatMul/Softmax (mid-sized heads)"
UNFUSE = [Rule(_UNFUSE_NAME, _attention, _unfused, _unfuse_unless_batch_first, opset=23)]
UNFUSE_LEFT = [Rule(_UNFUSE_NAME, _attention, _unfused, unfuse_pays, opset=23)]  # what BATCH_FIRST left


# -- onnxruntime's Attention reads a float mask's lowest value as -inf ---------------------------
#
# transformers masks with torch.finfo(dtype).min, which torch adds as a number: a query row
# masked everywhere gets equal scores, so uniform weights over its keys. onnxruntime's Attention
# kernel takes the float32 mask value -3.4028235e38 (and only that one: measured, onnxruntime
# 1.31) as -inf and gives that row zeros. The next float up behaves as torch's lowest does in
# every row: a score s with |s| < 2**103 added to either rounds to it (the spacing there is
# 2**104), so a row masked everywhere is uniform and a masked key in any other row weighs 0.


def torch_lowest_mask(op, mask: Value) -> Value:
    """A float32 mask whose lowest-float entries are raised to the next float up, so that
    Attention adds them as torch does (a bool mask, or any other dtype, unchanged)."""
    if mask.dtype is not types.FLOAT:
        return mask
    lowest = np.finfo(np.float32).min
    raised = np.nextafter(lowest, np.float32(0))
    return op.Where(op.Equal(mask, np.array(lowest, np.float32)), np.array(raised, np.float32), mask)


# -- attention written out with a soft cap (Gemma 2's eager attention) -> Attention(softcap) ----
#
# softmax(tanh(q @ k^T * scale / cap) * cap [+ mask]) @ v is opset 23's Attention with `scale` and
# `softcap` (its spec: scores * scale, then softcap * tanh(scores / softcap), then the mask added,
# then softmax over the keys): one node, which the grouped-heads and past rules below then see.


def _softcapped_scores(op, q, k, scale, cap):
    scores = op.Mul(op.MatMul(q, op.Transpose(k, perm=[0, 1, 3, 2])), scale)
    return op.Mul(op.Tanh(op.Div(scores, cap)), cap)


def _softcap_attention(op, q, k, v, scale, cap):
    return op.MatMul(op.Softmax(_softcapped_scores(op, q, k, scale, cap), axis=Var("axis")), v)


def _softcap_attention_masked(op, q, k, v, scale, cap, mask):
    return op.MatMul(op.Softmax(op.Add(_softcapped_scores(op, q, k, scale, cap), mask), axis=Var("axis")), v)


def softcap_exact(q: Value, k: Value, v: Value, scale: Value, cap: Value, axis: int, mask: Value | None = None) -> bool:
    """float32 q [b, h, s, d], k [b, h, t, d], v [b, h, t, dv] (4-D, the same b, h and t, static
    d), one-element float32 constants scale and cap > 0 that do not broadcast the scores to a
    higher rank, softmax over the last axis, and a mask (if any) of float32 or bool whose rank
    is at most 4 and whose last two dims are the scores' (s, t) or 1: what Attention reads."""
    if any(x.rank != 4 or x.dtype is not types.FLOAT or x.shape is None for x in (q, k, v)):
        return False
    if any(c.const_value is None or c.const_value.size != 1 or c.const_value.ndim > 4 or c.dtype is not types.FLOAT
           for c in (scale, cap)) or float(cap.const_value.reshape(())) <= 0:  # type: ignore[union-attr]
        return False
    if axis not in (-1, 3):
        return False
    b, h, s, d = q.shape  # type: ignore[misc]
    if not isinstance(d, int) or k.shape != (b, h, k.shape[2], d) or v.shape[:3] != k.shape[:3]:  # type: ignore[index]
        return False
    if mask is None:
        return True
    if mask.dtype not in (types.FLOAT, types.BOOL) or mask.rank is None or mask.rank > 4 or mask.shape is None:
        return False
    tail = list(mask.shape[-2:])
    return all(m == 1 or m == want for m, want in zip(tail[::-1], (k.shape[2], s)))  # type: ignore[index]


def _as_attention(op, q, k, v, scale, cap, mask=None, **_):
    attrs = {"scale": float(scale.const_value.reshape(())), "softcap": float(cap.const_value.reshape(()))}
    if mask is None:
        return op.Attention(q, k, v, **attrs)
    return op.Attention(q, k, v, torch_lowest_mask(op, mask), **attrs)


SOFTCAP = [Rule("Attention (softcapped scores written out)", _softcap_attention, _as_attention, softcap_exact, opset=23),
           Rule("Attention (softcapped scores written out, masked)", _softcap_attention_masked, _as_attention,
                softcap_exact, opset=23)]


# -- grouped-query attention: the KV heads given to `Attention` as they are ----------------------
#
# transformers' `repeat_kv` (and torchlib's own `enable_gqa` decomposition) copies each KV head
# for the query heads it serves: Reshape(Expand(Unsqueeze(k, 2), [b, kv, n, t, d]), [b, kv*n, t,
# d]). `Attention` groups query heads itself (query head j reads KV head j // n, the same
# interleaving), so the copy goes: in a decode step it copies the whole cache, every layer, every
# token (bench/bench_attention_past.py: Llama decode step at past 1024, 8 heads over 4 KV heads,
# 14-21 % faster; at past 128 within noise).

_ATTRIBUTES = ("is_causal", "scale", "softcap", "q_num_heads", "kv_num_heads", "qk_matmul_output_mode", "softmax_precision")


def _attributes() -> dict[str, Var]:
    return {a: Var(a, default=None) for a in _ATTRIBUTES}


def _repeated(op, x, axes, grown, merged):
    return op.Reshape(op.Expand(op.Unsqueeze(x, axes), grown), merged)


def _gqa(op, q, k, v, ka, kg, km, va, vg, vm):
    return op.Attention(q, _repeated(op, k, ka, kg, km), _repeated(op, v, va, vg, vm), **_attributes())


def _gqa_masked(op, q, k, v, mask, ka, kg, km, va, vg, vm):
    return op.Attention(q, _repeated(op, k, ka, kg, km), _repeated(op, v, va, vg, vm), mask, **_attributes())


def _known(x: Value) -> bool:
    return x.shape is not None and all(d is not None for d in x.shape)


def _repeats(x: Value, axes: Value, repeated: Value) -> int | None:
    """n when `repeated` = Reshape(Expand(Unsqueeze(x, axes))) copies each head of a [b, h, t, d]
    `x` n times in place (heads h*n, head i*n + j a copy of head i), else None. The shapes are the
    graph's own (torch's symbolic dims: equal names are equal sizes), so an Expand that also
    broadcasts the batch or the sequence, or a Reshape to another layout, does not match."""
    expanded = repeated.producer.inputs[0]  # type: ignore[union-attr]
    if expanded is None or not (_known(x) and _known(expanded) and _known(repeated)) or x.rank != 4:
        return None
    axis = axes.const_value
    if axis is None or axis.size != 1 or int(axis.reshape(())) not in (2, -3):
        return None
    b, h, t, d = x.shape  # type: ignore[misc]
    n = expanded.shape[2]  # type: ignore[index]
    if not isinstance(h, int) or not isinstance(n, int) or isinstance(h, bool) or n < 1:
        return None
    if tuple(expanded.shape) != (b, h, n, t, d) or tuple(repeated.shape) != (b, h * n, t, d):  # type: ignore[arg-type]
        return None
    return n


def gqa_exact(root: Node, q: Value, k: Value, v: Value, ka: Value, va: Value, q_num_heads: int | None,
              kv_num_heads: int | None, **_: object) -> bool:
    """Whether `Attention` on the unrepeated k and v computes what `root` does: 4-D inputs (no
    head-count attributes), k and v each repeated n times per head by the pattern above (the same
    n), and q's heads n times theirs, all static."""
    if q_num_heads is not None or kv_num_heads is not None or q.rank != 4 or q.shape is None:
        return False
    n_k, n_v = _repeats(k, ka, root.inputs[1]), _repeats(v, va, root.inputs[2])  # type: ignore[arg-type]
    if n_k is None or n_k != n_v:
        return False
    heads = k.shape[1]  # type: ignore[index]
    return isinstance(heads, int) and v.shape[1] == heads and q.shape[1] == heads * n_k  # type: ignore[index]


def _grouped(op, q, k, v, mask=None, **bindings):
    attributes = {a: bindings[a] for a in _ATTRIBUTES if bindings.get(a) is not None}
    return op.Attention(q, k, v, mask, **attributes) if mask is not None else op.Attention(q, k, v, **attributes)


class _GroupedRule(Rule):
    """A rule whose check also needs the matched Attention (the repeated k and v it reads)."""

    def match(self, node: Node, uses: Uses) -> Match | None:
        m = super().match(node, uses)
        return m if m is not None and gqa_exact(m.root, **m.bindings) else None

    def apply(self, builder: GraphBuilder, uses: Uses, m: Match) -> bool:
        if not super().apply(builder, uses, m):
            return False
        for node in m.nodes:  # the repeat chains, reader first, so that the Concat of a cache is
            if uses.alive(node) and all(uses.count(o) == 0 for o in node.outputs):  # read by
                uses.remove(node)  # the Attention only (PAST)
        return True


GQA: list[Rule] = [_GroupedRule("Attention reads grouped KV heads (repeat_kv removed)", _gqa, _grouped, opset=23),
       _GroupedRule("Attention reads grouped KV heads (repeat_kv removed, masked)", _gqa_masked, _grouped, opset=23)]


# -- the past keys and values as `Attention`'s own inputs -----------------------------------------
#
# A decode step appends the new keys and values to the cache, Concat(past, new) on the sequence
# axis, returns that as `present` and attends over it. `Attention` takes the past itself
# (past_key, past_value) and returns present_key / present_value, the same concatenation:
# bench/bench_attention_past.py times the forms (docs/optimizer.md).


def _past(op, q, pk, k, pv, v, ka, va):
    return op.Attention(q, op.Concat(pk, k, axis=ka), op.Concat(pv, v, axis=va), **_attributes())


def _past_masked(op, q, pk, k, pv, v, ka, va, mask):
    return op.Attention(q, op.Concat(pk, k, axis=ka), op.Concat(pv, v, axis=va), mask, **_attributes())


def past_exact(root: Node, uses: Uses, q: Value, pk: Value, k: Value, pv: Value, v: Value, ka: int, va: int,
               is_causal: int | None, q_num_heads: int | None, kv_num_heads: int | None, **_: object) -> bool:
    """Whether Attention(q, k, v, mask, past_key=pk, past_value=pv) computes what `root` does and
    its present_key / present_value are the two Concats: 4-D inputs (no head-count attributes),
    both Concats on the sequence axis (2) and read only by `root` (and as graph outputs, which the
    new node's outputs become), and no `is_causal` (with a past, `Attention` aligns the causal mask
    to the last key, the Concat form to the first)."""
    if is_causal or q_num_heads is not None or kv_num_heads is not None:
        return False
    if any(x.rank != 4 for x in (q, pk, k, pv, v)) or ka not in (2, -2) or va not in (2, -2):
        return False
    concats = root.inputs[1], root.inputs[2]
    return concats[0] is not concats[1] and all(uses.of(c) == [root] for c in concats)  # type: ignore[arg-type]


def _with_past(op, q, pk, k, pv, v, mask=None, **bindings):
    attributes = {a: bindings[a] for a in _ATTRIBUTES if bindings.get(a) is not None}
    return op.Attention(q, k, v, mask, pk, pv, _outputs=3, **attributes)


class _PastRule(Rule):
    """Attention over Concat(past, new) -> Attention(new, past) whose present outputs replace the
    Concats' results (their graph output names included)."""

    def match(self, node: Node, uses: Uses) -> Match | None:
        m = super().match(node, uses)
        return m if m is not None and past_exact(m.root, uses, **m.bindings) else None

    def apply(self, builder: GraphBuilder, uses: Uses, m: Match) -> bool:
        made: list[Node] = []
        results = build_before(builder, uses, m.root, lambda op: self.replacement(op, **m.bindings), made)
        old = [v for v in (m.root.outputs[0], m.root.inputs[1], m.root.inputs[2]) if v is not None]
        unread = all(uses.count(o) == 0 for o in m.root.outputs[1:])
        # present_key / present_value are by definition Concat(past, new) on axis 2: onnx's shape
        # inference leaves their shape unknown, so they take the Concats' types
        if not unread or not _same_type(old[0], results[0]) or any(a.dtype is not n.dtype for a, n in zip(old, results)):
            for node in made:
                uses.remove(node)
            return False
        for a, n in zip(old, results):
            if a.shape is not None:
                n.set_type(a.dtype, a.shape)  # keep torch's symbolic dim names
        uses.replace(old[0], results[0])
        uses.remove(m.root)
        for a, n in zip(old[1:], results[1:]):
            uses.replace(a, n)
            if a.producer is not None:
                uses.remove(a.producer)
        return True


PAST: list[Rule] = [_PastRule("Attention takes the past keys and values (Concat removed)", _past, _with_past, opset=23),
        _PastRule("Attention takes the past keys and values (Concat removed, masked)", _past_masked, _with_past, opset=23)]


# -- the heads split and merged inside `Attention`: 3-D q, k, v -----------------------------------
#
# A decoder splits each projection [batch, seq, heads * size] into heads, Transpose(Reshape(x,
# [batch, seq, heads, size]), [0, 2, 1, 3]), before `Attention` (and its `RotaryEmbedding`), and
# merges the output back by Transpose [0, 2, 1, 3] and a Reshape. opset 23's `Attention` takes q,
# k and v 3-D with `q_num_heads` / `kv_num_heads` and does that split itself (its function body
# is the same Reshape and Transpose), returning the 3-D [batch, seq, heads * size] output; its
# `RotaryEmbedding` takes the 3-D projection with `num_heads` (likewise). So the split and merge
# nodes go: a Llama decode step keeps 2 of its 34 Reshape / Transpose nodes (docs/optimizer.md).


def _std(node: Node | None, op_type: str) -> bool:
    return node is not None and node.op_type == op_type and node.domain in ("", "ai.onnx")


def _same(a: object, b: object) -> bool:
    return a is not None and a == b


@dataclasses.dataclass
class Heads:
    """A [batch, seq, heads * size] projection `x3` that an `Attention` reads split into heads:
    as x4 = Transpose(Reshape(x3), [0, 2, 1, 3]) (`split_heads`; `nodes` the Transpose and the
    Reshape) or as itself with the head count as an attribute (`heads_of_3d`); `rotary` is the
    RotaryEmbedding that rotates it on the way, if any."""

    x3: Value
    heads: int
    size: int
    nodes: list[Node]
    rotary: Node | None = None


def split_heads(x4: Value, rotary_allowed: bool) -> Heads | None:
    """x4 = [RotaryEmbedding of the default 4-D layout (no num_heads, interleaved 0 or 1) of]
    Transpose(Reshape(x3), [0, 2, 1, 3]), x3 a float32 [batch, seq, heads * size] whose Reshape
    to [batch, seq, heads, size] (the same batch and seq dims, heads and size static) splits its
    last axis."""
    rotary = None
    node = x4.producer
    if rotary_allowed and _std(node, "RotaryEmbedding"):
        a = node.attributes  # type: ignore[union-attr]
        if a.get("num_heads", 0) or int(a.get("interleaved", 0)) not in (0, 1):
            return None
        rotary = node
        x4 = node.inputs[0]  # type: ignore[union-attr,assignment]
        node = x4.producer
    if not _std(node, "Transpose") or list(node.attributes.get("perm", [])) != [0, 2, 1, 3]:  # type: ignore[union-attr]
        return None
    reshape = node.inputs[0].producer  # type: ignore[union-attr]
    if not _std(reshape, "Reshape"):
        return None
    x3 = reshape.inputs[0]  # type: ignore[union-attr]
    split = reshape.outputs[0].shape  # type: ignore[union-attr]
    if x3 is None or x3.rank != 3 or x3.dtype is not types.FLOAT or split is None or len(split) != 4:
        return None
    b, s, h, d = split
    if not (isinstance(h, int) and isinstance(d, int)) or x3.shape[2] != h * d:  # type: ignore[index]
        return None
    if not (_same(b, x3.shape[0]) and _same(s, x3.shape[1])):  # type: ignore[index]
        return None
    return Heads(x3, h, d, [node, reshape], rotary)  # type: ignore[list-item]


def heads_of_3d(x: Value, heads: int, rotary_allowed: bool) -> Heads | None:
    """An input of a 3-D `Attention` of `heads` heads: x3 a float32 [batch, seq, heads * size]
    (size static), or RotaryEmbedding(x3, ..., num_heads=heads) of interleaved 0 or 1."""
    rotary = None
    node = x.producer
    if rotary_allowed and _std(node, "RotaryEmbedding"):
        a = node.attributes  # type: ignore[union-attr]
        if a.get("num_heads") != heads or int(a.get("interleaved", 0)) not in (0, 1):
            return None
        rotary, x = node, node.inputs[0]  # type: ignore[union-attr,assignment]
    if x is None or x.rank != 3 or x.dtype is not types.FLOAT or x.shape is None or not isinstance(x.shape[2], int):
        return None
    if heads < 1 or x.shape[2] % heads:
        return None
    return Heads(x, heads, x.shape[2] // heads, [], rotary)


def merged_heads(y: Value, uses: Uses, heads: int, size: int) -> tuple[Value, Value | None] | None:
    """(out, shape) when `out` is made of y [batch, heads, seq, size] by Transpose [0, 2, 1, 3]
    and a Reshape whose last dim is heads * size (after Reshapes to y's own shape, or not), each
    read only there: out holds a 3-D attention's [batch, seq, heads * size] output in the same
    row-major order. `shape` is None when out is exactly that [batch, seq, heads * size], else
    the Reshape's shape input, to reshape the 3-D output to (allowzero=1, or a constant without
    0s: its 0s would copy other dims of another input)."""
    t = uses.only_reader(y)
    while _std(t, "Reshape") and _known(y) and t.outputs[0].shape == y.shape:  # type: ignore[union-attr]
        t = uses.only_reader(t.outputs[0])  # type: ignore[union-attr]
    if not _std(t, "Transpose") or list(t.attributes.get("perm", [])) != [0, 2, 1, 3]:  # type: ignore[union-attr]
        return None
    r = uses.only_reader(t.outputs[0])  # type: ignore[union-attr]
    if not _std(r, "Reshape") or r.inputs[0] is not t.outputs[0]:  # type: ignore[union-attr]
        return None
    out = r.outputs[0]  # type: ignore[union-attr]
    shape = out.shape
    if shape is None or y.shape is None or not shape or shape[-1] != heads * size:
        return None
    if len(shape) == 3 and _same(shape[0], y.shape[0]) and _same(shape[1], y.shape[2]):
        return out, None
    target = r.inputs[1]  # type: ignore[union-attr]
    fixed = ints(target)
    if target is None or not (r.attributes.get("allowzero", 0) == 1 or (fixed is not None and 0 not in fixed)):  # type: ignore[union-attr]
        return None
    return out, target


_CARRIED = ("is_causal", "scale", "softcap", "qk_matmul_output_mode", "softmax_precision")  # as they are


def heads_inside_exact(node: Node, uses: Uses) -> tuple[Heads, Heads, Heads, tuple[Value, Value | None]] | None:
    """(q, k, v, the merged output) when Attention(q3, k3, v3, ..., q_num_heads, kv_num_heads)
    computes what `node` does:

    - `node` is a standard `Attention` without head-count attributes, of 3, 4 or 6 inputs (no
      nonpad_kv_seqlen) and at most 3 outputs (no qk_matmul_output), its other attributes
      carried over as they are;
    - q, k and v are split from 3-D float32 projections (`split_heads`; q and k maybe rotated
      by a RotaryEmbedding of the default layout, which then rotates the 3-D projection with
      num_heads), q and k of one head size, k and v of one head count (kv_num_heads is both's),
      q's heads a multiple of it, k and v of one batch and seq, q of k's batch;
    - the output is read only by Transpose [0, 2, 1, 3] and a Reshape ending in heads * v's
      size (`merged_heads`)."""
    if not _std(node, "Attention") or len(node.inputs) not in (3, 4, 6) or len(node.outputs) > 3:
        return None
    if node.attributes.get("q_num_heads") is not None or node.attributes.get("kv_num_heads") is not None:
        return None
    if any(key not in _CARRIED for key in node.attributes):
        return None
    q4, k4, v4 = node.inputs[:3]
    if q4 is None or k4 is None or v4 is None:
        return None
    q, k, v = split_heads(q4, True), split_heads(k4, True), split_heads(v4, False)
    if q is None or k is None or v is None or q.size != k.size or k.heads != v.heads or q.heads % k.heads:
        return None
    qs, ks, vs = q.x3.shape, k.x3.shape, v.x3.shape
    if not (_same(ks[0], vs[0]) and _same(ks[1], vs[1]) and _same(qs[0], ks[0])):  # type: ignore[index]
        return None
    merged = merged_heads(node.outputs[0], uses, q.heads, v.size)
    return None if merged is None else (q, k, v, merged)


def _rotated_3d(op, x: Heads) -> Value:
    """x's 3-D projection rotated as its RotaryEmbedding rotates x4: the same op with num_heads."""
    if x.rotary is None:
        return x.x3
    attrs = {key: value for key, value in x.rotary.attributes.items() if key != "num_heads"}
    return op.RotaryEmbedding(x.x3, *x.rotary.inputs[1:], num_heads=x.heads, **attrs)


def _dim_from_3d(uses: Uses, reader: Node, value: Value, x3: Value, dims: dict[int, int]) -> None:
    """`reader` = Shape(value, start=a, end=a + 1) of a 4-D `value` whose dim a is x3's dim
    dims[a] (the same symbolic or static size, `split_heads`) -> Shape(x3) of that dim (the
    per-batch rotary tables read the batch off the rotated heads)."""
    if not _std(reader, "Shape") or reader.inputs[0] is not value or value.rank != 4:
        return
    start, end = int(reader.attributes.get("start", 0)), reader.attributes.get("end")
    start = start + 4 if start < 0 else start
    stop = 4 if end is None else int(end) + 4 if int(end) < 0 else min(int(end), 4)
    if stop - start != 1 or start not in dims:
        return
    reader.attributes["start"], reader.attributes["end"] = dims[start], dims[start] + 1
    uses.set_input(reader, 0, x3)


def heads_inside(builder: GraphBuilder, uses: Uses) -> int:
    """Attention over heads split by Reshape + Transpose and merged back -> Attention over the
    3-D projections (`heads_inside_exact`); the split, merge and 4-D rotation nodes go where
    nothing else reads them. Returns how many Attentions were rewritten."""
    done = 0
    for node in list(uses.graph.nodes):
        if not uses.alive(node):
            continue
        found = heads_inside_exact(node, uses)
        if found is None:
            continue
        q, k, v, (out, shape) = found
        attrs = {key: node.attributes[key] for key in _CARRIED if node.attributes.get(key) is not None}
        outputs = len(node.outputs)

        def build(op, q=q, k=k, v=v, node=node, shape=shape, attrs=attrs, outputs=outputs) -> list[Value]:
            results = op.Attention(_rotated_3d(op, q), _rotated_3d(op, k), v.x3, *node.inputs[3:], q_num_heads=q.heads,
                                   kv_num_heads=k.heads, _outputs=outputs, **attrs)  # fmt: skip
            results = list(results) if outputs > 1 else [results]
            if shape is not None:  # the model's own flattening of the heads, e.g. [batch * seq, hidden]
                results[0] = op.Reshape(results[0], shape, allowzero=1)
            return results

        made: list[Node] = []
        results = build_before(builder, uses, node, build, made)
        old = [out, *node.outputs[1:]]
        if any(a.dtype is not n.dtype or (a.rank is not None and n.rank is not None and a.rank != n.rank)
               for a, n in zip(old, results)):  # fmt: skip
            for new in made:
                uses.remove(new)
            continue
        tail: list[Node] = []  # the output's Transpose and Reshapes, reader first
        value = out
        while value is not node.outputs[0] and value.producer is not None and value.producer.inputs[0] is not None:
            tail.append(value.producer)
            value = value.producer.inputs[0]
        for a, n in zip(old, results):
            if a.shape is not None:
                n.set_type(a.dtype, a.shape)  # torch's symbolic dim names
            uses.replace(a, n)
        uses.remove(node)
        for x in (q, k, v):  # a Shape of one batch or seq dim of the split heads reads x3's
            transpose, reshape = x.nodes
            for value, dims in ((transpose.outputs[0], {0: 0, 2: 1}), (reshape.outputs[0], {0: 0, 1: 1})):
                for reader in list(uses.of(value)):
                    _dim_from_3d(uses, reader, value, x.x3, dims)
        for dead in tail + [n for x in (q, k, v) for n in ([x.rotary] if x.rotary else []) + x.nodes]:
            if uses.alive(dead) and all(uses.count(o) == 0 for o in dead.outputs):
                uses.remove(dead)
        done += 1
    return done


HEADS_INSIDE = "Attention splits and merges the heads itself (3-D q, k, v)"


# -- nn.MultiheadAttention with batch_first=True, in the batch-first layout -----------------------
#
# F.multi_head_attention_forward works sequence-first: a batch-first module transposes its input to
# [L, N, E], projects it (packed QKV, one MatMul), splits each part into heads ([L, N*H, D],
# transposed to [N*H, L, D], viewed [N, H, L, D]), attends, puts the heads back ([L, N, H, D] ->
# [L*N, E]), projects out and transposes back to [N, L, E]. Both projections compute each row on
# its own (a 2-D weight, one bias value per column), so they compute the same rows in the
# batch-first order, and the heads [N, H, L, D] are the same values taken from [N, L, H, D]. So
# the transposes of the input, of each part and of the output go: opset 23's `Attention` splits
# [N, L, H*D] into heads itself (`q_num_heads`). That form is also kept where the sequence-first
# attention would be written as MatMul / Softmax (UNFUSE): in the batch-first layout those
# MatMuls would read [N, L, H, D] transposed [0, 2, 1, 3], which onnxruntime does not fold into
# its FusedMatMul (the sequence-first [1, 2, 0, 3] it does): the ViT benchmark (65 tokens, 4 heads
# of 32) ran 2.0 % fewer instructions with the 3-D `Attention`, 2.0 % more with the batch-first
# MatMuls. The outputs are bitwise those of the sequence-first graph
# (tests/torchlib/test_batch_first_attention.py).


def _split_heads(op, s, s1, s2):
    return op.Reshape(op.Transpose(op.Reshape(s, s1), perm=[1, 0, 2]), s2)


def _parts(op, p, qs, qe, qa, ks, ke, ka, vs, ve, va, q1, q2, k1, k2, v1, v2):
    return (_split_heads(op, op.Slice(p, qs, qe, qa), q1, q2), _split_heads(op, op.Slice(p, ks, ke, ka), k1, k2),
            _split_heads(op, op.Slice(p, vs, ve, va), v1, v2))


def _heads_back(op, attended, r1, wo, bo, r2):
    projected = op.Gemm(op.Reshape(op.Transpose(attended, perm=[2, 0, 1, 3]), r1), wo, bo,
                        transA=Var("transA", default=0), transB=Var("transB", default=0),
                        alpha=Var("alpha", default=1.0), beta=Var("beta", default=1.0))
    return op.Transpose(op.Reshape(projected, r2), perm=[1, 0, 2])


def _mha(op, p, qs, qe, qa, ks, ke, ka, vs, ve, va, q1, q2, k1, k2, v1, v2, r1, wo, bo, r2):
    q, k, v = _parts(op, p, qs, qe, qa, ks, ke, ka, vs, ve, va, q1, q2, k1, k2, v1, v2)
    return _heads_back(op, op.Attention(q, k, v, **_attributes()), r1, wo, bo, r2)


def _mha_masked(op, p, qs, qe, qa, ks, ke, ka, vs, ve, va, q1, q2, k1, k2, v1, v2, r1, wo, bo, r2, mask):
    q, k, v = _parts(op, p, qs, qe, qa, ks, ke, ka, vs, ve, va, q1, q2, k1, k2, v1, v2)
    return _heads_back(op, op.Attention(q, k, v, mask, **_attributes()), r1, wo, bo, r2)


def _projection(p: Value) -> tuple[Value, Value, Value, bool] | None:
    """(x, weight, bias, bias first) when p = Add(bias, MatMul(Transpose(x, [1, 0, 2]), weight))
    (either order of the Add) with a constant 2-D weight and a constant 1-D bias."""
    add = p.producer
    if add is None or add.op_type != "Add" or add.domain != "" or len(add.inputs) != 2 or None in add.inputs:
        return None
    for first, (bias, product) in enumerate((add.inputs[::-1], add.inputs)):
        matmul = product.producer  # type: ignore[union-attr]
        if matmul is None or matmul.op_type != "MatMul" or matmul.domain != "":
            continue
        t, w = matmul.inputs
        if bias.const_value is None or bias.rank != 1 or w is None or w.const_value is None or w.rank != 2:  # type: ignore[union-attr]
            continue
        moved = None if t is None else t.producer
        if moved is None or moved.op_type != "Transpose" or list(moved.attributes.get("perm", ())) != [1, 0, 2]:
            continue
        if moved.inputs[0] is not None:
            return moved.inputs[0], w, cast("Value", bias), bool(first)
    return None


def _batch_first_part(q: Value) -> bool:
    """Whether q = Reshape(Transpose(Reshape(Slice(p), s1), [1, 0, 2]), s2) splits a part of a
    projection p of a transposed input that BATCH_FIRST may take (it checks the rest)."""
    chain = ["Reshape", "Transpose", "Reshape", "Slice"]
    value: Value | None = q
    for op_type in chain:
        node = None if value is None else value.producer
        if node is None or node.op_type != op_type or node.domain != "":
            return False
        value = node.inputs[0]
    return value is not None and _projection(value) is not None


def _heads_of(nodes: list[Node], at: int, batch: int, length: int) -> tuple[int, int] | None:
    """(heads, head size) when the matched Slice nodes[at] and the three nodes before it (the
    pattern's pre-order: Reshape s2, Transpose, Reshape s1, Slice) split a static [L, N, H*D] part
    into [N, H, L, D] heads: s1 = [L, N*H, D], s2 = [N, H, L, D]."""
    s = nodes[at].outputs[0]
    first, second = ints(nodes[at - 1].inputs[1]), ints(nodes[at - 3].inputs[1])
    if s.shape is None or len(s.shape) != 3 or type(s.shape[-1]) is not int or first is None or second is None:
        return None
    if tuple(s.shape[:2]) != (length, batch) or len(first) != 3 or first[0] != length or first[2] < 1 or first[1] % batch:
        return None
    heads, size = first[1] // batch, first[2]
    return (heads, size) if heads * size == s.shape[-1] and second == [batch, heads, length, size] else None


def batch_first_exact(root: Node, nodes: list[Node], uses: Uses, p: Value, qa: Value, ka: Value, va: Value,
                      r1: Value, bo: Value, r2: Value, wo: Value, transA: int, mask: Value | None = None,
                      **attributes: object) -> bool:
    """Whether the batch-first graph computes what `root` does: p = Add(bias, MatMul(Transpose(x,
    [1, 0, 2]), weight)) of a static float32 [N, L, E] x, with a constant 2-D weight and a
    constant 1-D bias, read only by the three Slices, each on the last axis without steps and
    split into heads as `_heads_of` says, one head count for q, k and v and one head size for q
    and k; a 4-D `Attention` with one output and no head-count attributes, its heads put back by Transpose
    [2, 0, 1, 3] and Reshape [L*N, H*Dv] into a Gemm with transA = 0, a constant weight and a
    constant bias of one value per column (the same for every row), reshaped to [L, N, E'] and
    transposed [1, 0, 2]; every matched value but p and the root's read by one node only."""
    found = _projection(p)
    if found is None or transA or attributes.get("q_num_heads") is not None or attributes.get("kv_num_heads") is not None:
        return False
    if attributes.get("qk_matmul_output_mode"):
        return False
    x = found[0]
    if x.dtype is not types.FLOAT or x.rank != 3 or not _static(x) or any(ints(a) not in ([-1], [2]) for a in (qa, ka, va)):
        return False
    batch, length = cast("tuple[int, int, int]", x.shape)[:2]
    slices = [i for i, n in enumerate(nodes) if n.op_type == "Slice"]
    heads = [_heads_of(nodes, i, batch, length) for i in slices]
    if len(slices) != 3 or any(h is None for h in heads):
        return False
    (hq, dq), (hk, dk), (hv, dv) = cast("list[tuple[int, int]]", heads)
    if not hq == hk == hv or dq != dk or wo.const_value is None or bo.const_value is None:
        return False
    if not (bo.rank == 1 or bo.rank == 2 and bo.shape is not None and bo.shape[0] == 1):
        return False
    out = root.outputs[0].shape[-1] if root.outputs[0].shape is not None else None
    if ints(r1) != [length * batch, hv * dv] or type(out) is not int or ints(r2) != [length, batch, out]:
        return False
    if mask is not None and (mask.rank is None or mask.rank > 4):
        return False
    if sorted(id(n) for n in uses.of(p)) != sorted(id(nodes[i]) for i in slices) or id(p) in uses.outputs:
        return False
    return all(len(n.outputs) == 1 and uses.only_reader(n.outputs[0]) is not None for n in nodes[1:])


def _batch_first(op, p, qs, qe, qa, ks, ke, ka, vs, ve, va, q1, r1, wo, bo, r2, mask=None, **bindings):
    """The same attention and projections on the batch-first rows, a 3-D `Attention`."""
    x, w, bias, bias_first = cast("tuple[Value, Value, Value, bool]", _projection(p))
    batch, length, _ = x.shape
    product = op.MatMul(x, w)
    projected = op.Add(bias, product) if bias_first else op.Add(product, bias)
    q, k, v = (op.Slice(projected, s, e, a) for s, e, a in ((qs, qe, qa), (ks, ke, ka), (vs, ve, va)))
    heads = cast("list[int]", ints(q1))[1] // batch
    attributes = {a: bindings[a] for a in _ATTRIBUTES if bindings.get(a) is not None}
    attributes.update(q_num_heads=heads, kv_num_heads=heads)
    attended = op.Attention(q, k, v, mask, **attributes) if mask is not None else op.Attention(q, k, v, **attributes)
    rows = op.Reshape(attended, np.array([batch * length, cast("list[int]", ints(r1))[1]], np.int64))
    out = op.Gemm(rows, wo, bo, **{a: bindings[a] for a in ("transA", "transB", "alpha", "beta")})
    return op.Reshape(out, np.array([batch, length, cast("list[int]", ints(r2))[2]], np.int64))


class _BatchFirstRule(Rule):
    """A rule whose check also needs the matched nodes and who reads them (batch_first_exact)."""

    def match(self, node: Node, uses: Uses) -> Match | None:
        m = super().match(node, uses)
        return m if m is not None and batch_first_exact(m.root, m.nodes, uses, **m.bindings) else None


BATCH_FIRST: list[Rule] = [
    _BatchFirstRule("Attention in the batch-first layout (nn.MultiheadAttention)", _mha, _batch_first, opset=23),
    _BatchFirstRule("Attention in the batch-first layout (nn.MultiheadAttention, masked)", _mha_masked, _batch_first,
                    opset=23)]
__all__ = ["BATCH_FIRST", "GQA", "HEADS_INSIDE", "PAST", "Heads", "batch_first_exact", "heads_inside", "heads_inside_exact",
           "heads_of_3d", "merged_heads", "split_heads", "SOFTCAP", "torch_lowest_mask", "past_exact", "UNFUSE", "UNFUSE_LEFT", "UNFUSE_MAX_WORK", "UNFUSE_MIN_WORK", "gqa_exact", "prefer_unfused", "unfuse_pays",
           "unfused_attention"]
