"""A differential fuzzer for the export-time optimizer (graph_builder/optimizer).

Random small models, each built from one rewrite's pattern or a near miss of it (wrong axes, a
constant that broadcasts, another dtype, a lower opset, a dynamic or odd shape), are exported
with `optimize=True` and `optimize=False` and run in onnxruntime at three sizes of every dynamic
dim. A difference is: the optimized export or run fails where the plain one works, or its
outputs differ from the plain ones, or they differ from torch where the plain ones agree. Hits
per rewrite come from `graph_builder.optimizer.record()`, so a run proves which rewrites it
exercised.

    python bench/fuzz_optimizer.py --models 400        # the long run
    tests/graph_builder/optimizer/test_optimizer_fuzz.py          # the fast slice (and the slow long run)

Case `i` of a run is family FAMILIES[i % len(FAMILIES)], round i // len(FAMILIES): a family's
first rounds build each of its exact forms in turn (so a short run hits every rewrite), later
rounds draw a near miss half of the time. Everything is seeded: a case is reproduced by its
index and seed.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch.utils import _pytree as pytree

import torchlib
from graph_builder.optimizer import record
from graph_builder.optimizer.onnxruntime import OnnxRuntime


class Model(torch.nn.Module):
    """forward(x[, y[, z]]) = fn(self, x[, y[, z]]); tensors given as parameters (weights), buffers
    or modules."""

    def __init__(self, fn: Callable[..., Any], params: dict[str, torch.Tensor] | None = None,
                 buffers: dict[str, torch.Tensor] | None = None, modules: dict[str, torch.nn.Module] | None = None):
        super().__init__()
        self.fn = fn
        for k, v in (params or {}).items():
            self.register_parameter(k, torch.nn.Parameter(v, requires_grad=False))
        for k, v in (buffers or {}).items():
            self.register_buffer(k, v)
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def forward(self, x: torch.Tensor, y: torch.Tensor | None = None, z: torch.Tensor | None = None) -> Any:
        return self.fn(self, *(t for t in (x, y, z) if t is not None))


@dataclasses.dataclass
class Case:
    name: str  # family / form, then the near miss (if any)
    model: torch.nn.Module
    args: tuple[torch.Tensor, ...]
    dynamic: list[dict[int, str]]  # per input: axis -> dim name
    opset: int = 23
    sizes: dict[str, list[int]] = dataclasses.field(default_factory=dict)  # dim name -> sizes run
    # the onnxruntime target's cases: export options of both exports, and the target of the
    # second (compared with target="onnx", both optimized) instead of optimize=True vs False
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    target: Any = None


@dataclasses.dataclass
class Outcome:
    case: str
    hits: Counter[str]
    differences: list[str]
    skipped: str = ""  # why the case says nothing about the optimizer (the plain export fails)


# -- the families --------------------------------------------------------------------------------

_SIZES = [3, 5, 8]  # the sizes every dynamic dim is run at (no 0 / 1: torch.export specialises them)
DTYPE_MISSES = (torch.float64, torch.float16)


def _shape(rng: random.Random, rank: int) -> list[int]:
    return [rng.randint(2, 6) for _ in range(rank)]


def _dynamic(rng: random.Random, rank: int, fixed: tuple[int, ...] = ()) -> dict[int, str]:
    axes = [a for a in range(rank) if a not in fixed and a - rank not in fixed]
    chosen = rng.sample(axes, k=rng.randint(0, min(2, len(axes))))
    return {a: f"d{a}" for a in sorted(chosen)}


def _near(rng: random.Random, round_: int, forms: int, misses: list[str]) -> str | None:
    """None (an exact form) in the first `forms` rounds; then always a near miss in the next
    round (the fast slice's), half of the time after."""
    if round_ < forms or (round_ > forms and rng.random() < 0.5):
        return None
    return rng.choice(misses)


def gelu(rng: random.Random, round_: int) -> Case:
    forms = ["erf_div", "erf_mul", "erf_outer_half", "tanh_pow", "tanh_cube"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["const_rank", "dtype", "opset", "value"])
    rank = rng.randint(1, 4)
    dtype = rng.choice(DTYPE_MISSES) if near == "dtype" else torch.float32
    half = 0.5 + 1e-3 if near == "value" else 0.5
    buffers = {"c_half": torch.full((1,) * rng.randint(1, rank + 1), half, dtype=dtype)} if near == "const_rank" else {}

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        c = m.c_half if buffers else half
        if form == "erf_div":
            return x * c * (1 + torch.erf(x / math.sqrt(2)))
        if form == "erf_mul":
            return x * c * (1 + torch.erf(x * (1 / math.sqrt(2))))
        if form == "erf_outer_half":
            return x * (1 + torch.erf(x / math.sqrt(2))) * c
        cube = torch.pow(x, 3) if form == "tanh_pow" else x * x * x
        return x * c * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * cube)))

    x = torch.randn(_shape(rng, rank), dtype=dtype)
    opset = rng.randint(18, 22) if near == "opset" else 23
    return Case(f"gelu/{form}/{near}", Model(fn, buffers=buffers), (x,), [_dynamic(rng, rank)], opset)


def rms_norm(rng: random.Random, round_: int) -> Case:
    forms = ["pow_rsqrt", "reciprocal_sqrt", "div_sqrt", "pow_tensor"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["axis", "eps_rank", "weight_rank", "dtype", "opset"])
    rank = rng.randint(2, 4)
    dtype = rng.choice(DTYPE_MISSES) if near == "dtype" else torch.float32
    shape = _shape(rng, rank)
    axis = -2 if near == "axis" else -1
    d = shape[axis]
    w_shape = [1] * rng.randint(2, rank + 1) + [d] if near == "weight_rank" else [d]
    params = {"w": torch.rand(w_shape, dtype=dtype) + 0.5}
    buffers = {"two": torch.tensor(2.0, dtype=dtype)}
    if near == "eps_rank":
        buffers["eps"] = torch.full((1,) * rng.randint(1, rank + 1), 1e-6, dtype=dtype)

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        eps = m.eps if near == "eps_rank" else 1e-6
        if form == "pow_rsqrt":
            y = x * torch.rsqrt(x.pow(2).mean(axis, keepdim=True) + eps)
        elif form == "reciprocal_sqrt":
            y = x * torch.reciprocal(torch.sqrt((x * x).mean(axis, keepdim=True) + eps))
        elif form == "pow_tensor":  # a 0-d tensor exponent: Pow(x, 2.0) in the graph
            y = x * torch.rsqrt(x.pow(m.two).mean(axis, keepdim=True) + eps)
        else:
            y = x / torch.sqrt(x.pow(2).mean(axis, keepdim=True) + eps)
        return y * m.w.reshape(d, 1) if axis == -2 else m.w * y

    x = torch.randn(shape, dtype=dtype)
    opset = rng.randint(18, 22) if near == "opset" else 23
    return Case(f"rms_norm/{form}/{near}", Model(fn, params, buffers), (x,), [_dynamic(rng, rank, (axis,))], opset)


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rotary(rng: random.Random, round_: int) -> Case:
    """q * cos + rotate_half(q) * sin, cos / sin of cat(f, f) with f = outer(positions, inv_freq);
    or, as transformers' rotary embedding makes them, one table per batch row (positions
    [batch, seq] from an offset per row), times a scale or not, laid out [batch, 1, seq, size]."""
    forms = ["dynamic_seq", "static_seq", "long_static_seq", "per_batch", "per_batch_scaled", "per_batch_shared"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["bshd_layout", "one_row", "halves_differ", "dtype", "opset", "odd_slice"])
    dim = rng.choice([8, 16])
    dtype = rng.choice(DTYPE_MISSES) if near == "dtype" else torch.float32
    inv = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=dtype) / dim))
    seq_axis = 1 if near == "bshd_layout" else 2
    seq = 40 if form == "long_static_seq" else rng.randint(3, 7)  # 40 x 16 > FOLD_LIMIT: a generator
    per_batch = form.startswith("per_batch")
    offsets = torch.tensor([[2]] if form == "per_batch_shared" else [[3], [0]])  # each row's first position (or all's)

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        n = 1 if near == "one_row" else x.shape[seq_axis]
        t = torch.arange(n, dtype=dtype) + (2 if near == "one_row" else 0)
        if per_batch:  # [batch, n, size/2], as inv_freq @ position_ids
            offsets: torch.Tensor = m.get_buffer("offsets")
            f = (offsets + t.to(torch.int64)).to(dtype)[..., None] * m.get_buffer("inv")
        else:
            f = torch.outer(t, m.inv)
        emb = torch.cat((f, f * 1.5 if near == "halves_differ" else f), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        if form == "per_batch_scaled":
            cos, sin = cos * 0.75, sin * 0.75
        if per_batch:
            cos, sin = (cos[:, :, None], sin[:, :, None]) if near == "bshd_layout" else (cos[:, None], sin[:, None])
        elif near == "bshd_layout":
            cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        else:
            cos, sin = cos[None, None], sin[None, None]
        if near == "odd_slice":  # the rotated halves overlap: not rotate-half
            h = x.shape[-1] // 2
            rotated = torch.cat((-x[..., h - 1:-1], x[..., :h]), dim=-1)
        else:
            rotated = _rotate_half(x)
        return x * cos + rotated * sin

    shape = [2, 3, 3, dim]
    shape[seq_axis] = seq
    x = torch.randn(shape, dtype=dtype)
    dynamic = {seq_axis: "seq"} if form in ("dynamic_seq", "per_batch", "per_batch_scaled") else {}
    if dynamic and rng.random() < 0.5 and form in ("dynamic_seq", "per_batch_shared"):  # per batch: 2 offsets
        dynamic[0] = "batch"
    opset = rng.randint(18, 22) if near == "opset" else 23
    return Case(f"rotary/{form}/{near}", Model(fn, buffers={"inv": inv, "offsets": offsets}), (x,), [dynamic], opset)


def gemm(rng: random.Random, round_: int) -> Case:
    near = _near(rng, round_, 1, ["bias_rank", "bias_full", "input_rank", "dtype"])
    m_, k, n = rng.randint(2, 6), rng.randint(2, 6), rng.randint(2, 6)
    dtype = torch.float64 if near == "dtype" else torch.float32
    b_shape = {"bias_rank": [1, 1, n], "bias_full": [m_, n]}.get(near or "", rng.choice([[n], [1, n]]))
    params = {"w": torch.randn(k, n, dtype=dtype), "b": torch.randn(b_shape, dtype=dtype)}
    x = torch.randn([2, m_, k] if near == "input_rank" else [m_, k], dtype=dtype)
    dynamic = {} if near == "bias_full" else _dynamic(rng, x.ndim, (-1,))
    return Case(f"gemm/matmul_add/{near}", Model(lambda m, x: x @ m.w + m.b, params), (x,), [dynamic])


def unsqueeze_pair(rng: random.Random, round_: int) -> Case:
    rank = rng.randint(0, 3)
    a = rng.randint(-(rank + 1), rank)
    b = rng.randint(-(rank + 2), rank + 1)

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x).unsqueeze(a).unsqueeze(b) * 2

    x = torch.randn(_shape(rng, rank))
    return Case(f"unsqueeze_pair/{a},{b}/None", Model(fn), (x,), [_dynamic(rng, rank)])


def packed_qkv(rng: random.Random, round_: int) -> Case:
    near = _near(rng, round_, 1, ["cross_attention", "kdim"])
    heads = rng.choice([1, 2, 4])
    embed = heads * rng.choice([2, 4])
    batch_first = rng.random() < 0.5
    mha = torch.nn.MultiheadAttention(embed, heads, batch_first=batch_first,
                                      kdim=embed + 2 if near == "kdim" else None,
                                      vdim=embed + 2 if near == "kdim" else None).eval()
    length, batch = rng.randint(2, 6), rng.randint(2, 4)
    x = torch.randn((batch, length, embed) if batch_first else (length, batch, embed))

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        kv = x + 1 if near == "cross_attention" else x
        if near == "kdim":
            kv = torch.cat((kv, kv[..., :2]), dim=-1)
        return m.mha(x, kv, kv, need_weights=False)[0]

    dynamic = _dynamic(rng, 3, (-1,)) if round_ else {}  # the rewrite needs a static Reshape target
    return Case(f"packed_qkv/mha/{near}", Model(fn, modules={"mha": mha}), (x,), [dynamic])


def batch_first_attention(rng: random.Random, round_: int) -> Case:
    """nn.MultiheadAttention(batch_first=True) self-attention (attention.BATCH_FIRST): plain, with a
    key padding mask, and at a mid-sized head (65 x 65 x 32, where the sequence-first graph is
    unfused); near misses: no bias, a dynamic batch, sequence-first, cross-attention."""
    forms = ["plain", "masked", "mid_sized"]
    near = _near(rng, round_, len(forms), ["no_bias", "dynamic", "sequence_first", "cross_attention"])
    form = forms[round_ % len(forms)] if near is None else rng.choice(forms[:2])
    # one head: the identity Reshape [L, N, E] of the head split is gone, which the rule does not match
    heads, length = (4, 65) if form == "mid_sized" else (rng.choice([2, 4]), rng.randint(2, 7))
    embed = 128 if form == "mid_sized" else heads * rng.choice([2, 4, 8])
    batch_first = near != "sequence_first"
    mha = torch.nn.MultiheadAttention(embed, heads, bias=near != "no_bias", batch_first=batch_first).eval()
    batch = rng.randint(2, 4)
    x = torch.randn((batch, length, embed) if batch_first else (length, batch, embed))
    mask = torch.zeros(batch, length, dtype=torch.bool)
    mask[0, length // 2:] = True

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        kv = x * 0.5 if near == "cross_attention" else x
        padding = m.padding if form == "masked" else None
        return m.mha(x, kv, kv, key_padding_mask=padding, need_weights=False)[0]  # type: ignore[operator]

    dynamic = [{0 if batch_first else 1: "batch"}] if near == "dynamic" else [{}]
    return Case(f"batch_first_attention/{form}/{near}", Model(fn, buffers={"padding": mask}, modules={"mha": mha}),
                (x,), dynamic)


def attention(rng: random.Random, round_: int) -> Case:
    """scaled_dot_product_attention with the work per head in or out of the unfused band."""
    near = _near(rng, round_, 1, ["causal_longer_query", "mask", "dtype", "dynamic", "small", "scale"])
    d = rng.choice([32, 64])
    s = rng.choice([32, 64]) if d == 32 else 32
    t = s
    causal = rng.random() < 0.5 or near == "causal_longer_query"
    if near == "causal_longer_query":
        t = s // 2
    if near == "small":
        s = t = 8
    dtype = torch.float64 if near == "dtype" else torch.float32
    b, h = rng.randint(2 if near == "dynamic" else 1, 2), rng.choice([1, 2])
    q, k, v = (torch.randn(b, h, n, d, dtype=dtype) for n in (s, t, t))
    mask = torch.randn(s, t, dtype=dtype) if near == "mask" else None
    scale = 0.3 if near == "scale" else None

    def fn(m: Model, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if mask is not None:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=m.mask)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

    dynamic = [{0: "batch"}] * 3 if near == "dynamic" else [{}, {}, {}]
    buffers = {"mask": mask} if mask is not None else {}
    return Case(f"attention/sdpa{'_causal' if causal else ''}/{near}", Model(fn, buffers=buffers), (q, k, v), dynamic)


def softcap_attention(rng: random.Random, round_: int) -> Case:
    """Attention written out with a soft cap on the scores (Gemma 2's eager attention):
    softmax(tanh(q k^T * scale / cap) * cap [+ mask]) v, the mask additive (0 / finfo.min) or
    boolean-selected."""
    forms = ["plain", "float_mask"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["cap_mismatch", "softmax_axis", "dtype", "opset"])
    dtype = torch.float64 if near == "dtype" else torch.float32
    b, h, s, t, d = rng.randint(1, 2), rng.choice([1, 2]), rng.randint(2, 5), rng.randint(2, 6), rng.choice([8, 16])
    cap, scale = rng.choice([5.0, 30.0, 50.0]), d ** -0.5
    keep = torch.rand(s, t) < 0.7
    if rng.random() < 0.5:  # a row masked everywhere (left padding): torch's weights are uniform there
        keep[0] = False
    mask = torch.where(keep, torch.tensor(0.0, dtype=dtype), torch.tensor(torch.finfo(dtype).min, dtype=dtype))[None, None]

    def fn(m: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = q @ k.transpose(-1, -2) * scale
        scores = torch.tanh(scores / cap) * (cap * 1.5 if near == "cap_mismatch" else cap)
        if form == "float_mask":
            scores = scores + m.mask
        return torch.softmax(scores, dim=-2 if near == "softmax_axis" else -1) @ v

    q, k, v = (torch.randn(b, h, n, d, dtype=dtype) * 3 for n in (s, t, t))
    opset = rng.randint(18, 22) if near == "opset" else 23
    return Case(f"softcap_attention/{form}/{near}", Model(fn, buffers={"mask": mask}), (q, k, v), [{}, {}, {}], opset)


def _repeat_kv(x: torch.Tensor, n: int, tiled: bool = False) -> torch.Tensor:
    """transformers' repeat_kv (each KV head n times in place), or the heads tiled (a near miss)."""
    b, h, t, d = x.shape
    if tiled:
        return x[:, None].expand(b, n, h, t, d).reshape(b, n * h, t, d)
    return x[:, :, None].expand(b, h, n, t, d).reshape(b, h * n, t, d)


def kv_cache(rng: random.Random, round_: int) -> Case:
    """A decode step's attention: cat(past, new) returned as the present, repeat_kv, sdpa with the
    bottom-right causal mask of a step after a past (dynamic past and sequence lengths); the
    second exact form: no mask; the third: one KV head per query head (a repeat that copies
    nothing), no mask."""
    forms = 3
    near = _near(rng, round_, forms, ["causal", "tiled", "read_twice", "dtype"])
    n = 1 if round_ % forms == 2 else 2
    unmasked = round_ % forms != 0
    dtype = torch.float64 if near == "dtype" else torch.float32
    b, hkv, d = rng.randint(1, 2), rng.choice([1, 2]), rng.choice([8, 16])
    q = torch.randn(b, hkv * n, 4, d, dtype=dtype)
    new, past = torch.randn(2, b, hkv, 4, d, dtype=dtype), torch.randn(2, b, hkv, 6, d, dtype=dtype)

    def fn(m: Model, q: torch.Tensor, new: torch.Tensor, past: torch.Tensor) -> Any:
        k, v = torch.cat([past[0], new[0]], dim=2), torch.cat([past[1], new[1]], dim=2)
        rk, rv = _repeat_kv(k, n, near == "tiled"), _repeat_kv(v, n, near == "tiled")
        if near == "causal" or unmasked:
            y = F.scaled_dot_product_attention(q, rk, rv, is_causal=near == "causal")
        else:
            s, t = q.shape[2], k.shape[2]
            mask = torch.ones(s, t, dtype=torch.bool).tril(t - s)
            y = F.scaled_dot_product_attention(q, rk, rv, attn_mask=mask)
        return (y, k, v, k.sum(2)) if near == "read_twice" else (y, k, v)

    dynamic = [{2: "s"}, {3: "s"}, {3: "p"}]
    return Case(f"kv_cache/gqa{n}/{near}", Model(fn), (q, new, past), dynamic)


def heads_inside(rng: random.Random, round_: int) -> Case:
    """A decoder's attention with the heads split from 3-D projections (view + transpose), maybe
    rotated (transformers' per-batch rotary tables), attended (sdpa, repeat_kv for grouped KV
    heads), and merged back (transpose + reshape): `attention.heads_inside` gives Attention the
    3-D projections. Forms: a prompt with is_causal or not; rotary; a decode step over a past
    with a causal mask and the output flattened to [batch * seq, hidden]."""
    forms = ["plain", "rotary", "past"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["heads_swapped", "merge_perm", "output_read", "split_read", "dtype"])
    dtype = torch.float64 if near == "dtype" else torch.float32
    # grouped KV heads (a repeat_kv that copies nothing stays in a dynamic graph: GQA rule's limit)
    heads, size = rng.choice([2, 4]), rng.choice([8, 16])
    kv = rng.choice([h for h in (1, 2) if h < heads])
    e = heads * size
    params = {n: torch.randn(e, d, dtype=dtype) * 0.2 for n, d in (("q", e), ("k", kv * size), ("v", kv * size), ("o", e))}
    inv = 1.0 / (10000 ** (torch.arange(0, size, 2, dtype=dtype) / size))
    causal = rng.random() < 0.5

    def split(x: torch.Tensor, h: int) -> torch.Tensor:
        b, s, _ = x.shape
        if near == "heads_swapped":  # [size, heads] order: not the row-major split into heads
            return x.view(b, s, size, h).permute(0, 3, 1, 2)
        return x.view(b, s, h, size).transpose(1, 2)

    def fn(m: Any, x: torch.Tensor, pk: torch.Tensor | None = None, pv: torch.Tensor | None = None) -> Any:
        b, s, _ = x.shape
        q, k, v = split(x @ m.q, heads), split(x @ m.k, kv), split(x @ m.v, kv)
        p = 0 if pk is None else pk.shape[2]
        if form == "rotary":  # transformers' rotary embedding: one table per batch row
            positions = torch.arange(s)[None].expand(b, s)
            f = positions.to(dtype)[..., None] * m.get_buffer("inv")
            emb = torch.cat((f, f), dim=-1)
            cos, sin = emb.cos()[:, None], emb.sin()[:, None]
            q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
        mask = None
        if pk is not None and pv is not None:
            k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
            mask = torch.ones(s, p + s, dtype=torch.bool).tril(p)
        rk, rv = _repeat_kv(k, heads // kv), _repeat_kv(v, heads // kv)
        if mask is not None:
            y = F.scaled_dot_product_attention(q, rk, rv, attn_mask=mask)
        else:
            y = F.scaled_dot_product_attention(q, rk, rv, is_causal=causal)
        if near == "merge_perm":  # [batch, seq, size, heads]: another order of the merged heads
            merged = y.permute(0, 2, 3, 1).reshape(b, s, e)
        elif form == "past":  # [batch * seq, hidden], as GPT-2's Conv1D reads it
            merged = y.transpose(1, 2).reshape(-1, e)
        else:
            merged = y.transpose(1, 2).reshape(b, s, e)
        out = (merged @ m.o,) + ((k, v) if pk is not None else ())
        if near == "output_read":
            out = (*out, y.sum(1))
        if near == "split_read":
            out = (*out, q.sum(1))
        return out

    dynamic_batch = form != "past" and rng.random() < 0.5
    b, s = 2 if dynamic_batch else rng.randint(1, 2), rng.randint(2, 5)  # a dynamic dim: not 1
    args: tuple[torch.Tensor, ...] = (torch.randn(b, s, e, dtype=dtype),)
    dynamic: list[dict[int, str]] = [{0: "b", 1: "s"}] if dynamic_batch else [{1: "s"}]
    if form == "past":
        args = (*args, torch.randn(b, kv, 3, size, dtype=dtype), torch.randn(b, kv, 3, size, dtype=dtype))
        dynamic = [{1: "s"}, {2: "p"}, {2: "p"}]
    return Case(f"heads_inside/{form}/{near}", Model(fn, params, buffers={"inv": inv}), args, dynamic)


def _random_bn(bn: torch.nn.Module) -> torch.nn.Module:
    bn.running_mean.uniform_(-1, 1)
    bn.running_var.uniform_(0.5, 2)
    bn.weight.data.uniform_(0.5, 2)
    bn.bias.data.uniform_(-1, 1)
    return bn


def batch_norm(rng: random.Random, round_: int) -> Case:
    forms = ["conv2d", "conv1d", "conv_transpose2d", "linear"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["conv_output_read_twice", "dynamic_spatial"])
    bias = rng.random() < 0.5
    groups = rng.choice([1, 2])
    c_in, c_out = 2 * groups, 4 * groups
    kernel = 1 if near == "dynamic_spatial" else 3  # a 3-wide kernel makes torch guard width != 3
    if form == "conv2d":
        layer, bn, shape = torch.nn.Conv2d(c_in, c_out, kernel, groups=groups, bias=bias), torch.nn.BatchNorm2d(c_out), [2, c_in, 7, 6]
    elif form == "conv1d":
        layer, bn, shape = torch.nn.Conv1d(c_in, c_out, kernel, groups=groups, bias=bias), torch.nn.BatchNorm1d(c_out), [2, c_in, 9]
    elif form == "conv_transpose2d":
        layer, bn, shape = (torch.nn.ConvTranspose2d(c_in, c_out, kernel, groups=groups, bias=bias), torch.nn.BatchNorm2d(c_out),
                            [2, c_in, 5, 4])
    else:
        layer, bn, shape = torch.nn.Linear(c_in, c_out, bias=bias), torch.nn.BatchNorm1d(c_out), [3, c_in]

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        y = m.layer(x)
        out = torch.relu(m.bn(y))
        return out + y if near == "conv_output_read_twice" else out

    modules = {"layer": layer.eval(), "bn": _random_bn(bn).eval()}
    dynamic = {0: "batch"} if rng.random() < 0.7 else {}
    if near == "dynamic_spatial" and len(shape) > 2:
        dynamic[2] = "width"
    return Case(f"batch_norm/{form}/{near}", Model(fn, modules=modules), (torch.randn(shape),), [dynamic])


def folding(rng: random.Random, round_: int) -> Case:
    """Generators (a causal mask, ones, arange), what reads weights (a transpose, a cast) and a
    weight standardised in float64 and cast back (the cone that folds as a whole; near miss: it
    stays float64 for a float64 activation, larger than the weight, and does not fold)."""
    forms = ["mask", "weights", "standardised"]
    form = forms[round_ % len(forms)]
    if form == "standardised":
        near = _near(rng, round_, len(forms), ["float64_activation"])
        c_out, c_in = rng.randint(2, 6), rng.randint(1, 4)
        params = {"w": torch.randn(c_out, c_in, 3, 3), "gain": torch.rand(c_out, 1, 1, 1) + 0.5}

        def fn_s(m: Model, x: torch.Tensor) -> torch.Tensor:
            w = m.w.double()
            w = (w - w.mean((1, 2, 3), keepdim=True)) / (w.var((1, 2, 3), keepdim=True, unbiased=False) + 1e-6).sqrt()
            w = w * m.gain.double()
            return F.conv2d(x, w if x.dtype == torch.float64 else w.float(), padding=1)

        dtype = torch.float64 if near == "float64_activation" else torch.float32
        x = torch.randn(rng.randint(2, 4), c_in, 5, 6, dtype=dtype)
        return Case(f"folding/standardised/{near}", Model(fn_s, params), (x,), [_dynamic(rng, 4, (1,))])
    if form == "mask":
        length = rng.choice([4, 8, 40, 64])

        def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
            mask = torch.triu(torch.full((length, length), float("-inf")), 1) + torch.ones(length, length)
            return torch.softmax(x + mask, -1) + torch.arange(length, dtype=torch.float32)

        x = torch.randn(rng.randint(2, 3), length, length)
        return Case(f"folding/mask{length}/None", Model(fn), (x,), [_dynamic(rng, 3, (1, 2))])
    k, n = rng.randint(2, 6), rng.randint(2, 6)
    params = {"w": torch.randn(n, k), "v": torch.randn(k).to(torch.bfloat16)}

    def fn_w(m: Model, x: torch.Tensor) -> torch.Tensor:
        return x @ m.w.t() * 2 + (m.v.float() * 3).sum()

    x = torch.randn(rng.randint(2, 4), k)
    return Case("folding/weights/None", Model(fn_w, params), (x,), [_dynamic(rng, 2, (1,))])


def cleanup(rng: random.Random, round_: int) -> Case:
    """Identities and their near misses: squeeze by dims (some of size 1), reshape to the same
    shape, transpose pairs, relu of relu, casts, and the same subexpression twice."""
    shape = [rng.choice([1, 2, 3]) for _ in range(rng.randint(2, 4))]
    rank = len(shape)
    dims = tuple(sorted(rng.sample(range(rank), k=rng.randint(0, rank))))
    p1 = rng.sample(range(rank), rank)
    p2 = rng.sample(range(rank), rank)

    def fn(m: Model, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        a = torch.relu(torch.relu(x)).to(torch.float32).reshape(x.shape)
        b = x.permute(p1).permute(p2) * 2
        c = torch.squeeze(x + 1, dims)
        return a + torch.exp(x), b, c, torch.exp(x) * 3

    x = torch.randn(shape)
    fixed = tuple(a for a, s in enumerate(shape) if s == 1)
    return Case(f"cleanup/squeeze{list(dims)}/None", Model(fn), (x,), [_dynamic(rng, rank, fixed)])


def reshapes(rng: random.Random, round_: int) -> Case:
    """Reshape chains (levit's `x.flatten(0, 1)` viewed back, a view into heads of a view):
    the batch copied through both, a static dim copied, and the near miss where the second view
    names a dim the first one inferred."""
    shape = [rng.randint(2, 5) for _ in range(rng.randint(3, 4))]
    miss = _near(rng, round_, 1, ["inferred dim"])

    def fn(m: Model, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        back = x.flatten(0, 1).reshape(x.shape) * 2
        heads = x.reshape(x.shape[0], -1).reshape(x.shape[0], x.shape[1], -1) + 1
        if miss is None:
            return back, heads
        rows = x.reshape(-1, x.shape[-1]).reshape(x.shape[0], -1)
        return back, heads, rows - 1

    x = torch.randn(shape)
    # at most one dynamic dim: with two, torch.export cannot prove these views and specialises
    dynamic = rng.choice([{}, {0: "d0"}, {len(shape) - 1: f"d{len(shape) - 1}"}])
    return Case(f"reshapes/{len(shape)}d/{miss}", Model(fn), (x,), [dynamic])


def onnxruntime_target(rng: random.Random, round_: int) -> Case:
    """target="onnxruntime" against target="onnx" (graph_builder/optimizer/onnxruntime.py): a
    residual Add read by an RMSNorm (SkipSimplifiedLayerNormalization), Linears of one input
    (packed), weight-quantized Linears (MatMulNBits, accuracy level 0: float32 activations), and
    a decode step's attention over a past with grouped KV heads and a causal mask made of
    positions (and a padding mask read by index, as transformers' is), or no mask
    (GroupQueryAttention)."""
    forms = ["skip_norm", "packed", "nbits", "gqa_masked", "gqa_unmasked", "gqa_constant_mask", "gqa_float_mask",
             "skip_layer_norm", "gqa_padded"]
    form = forms[round_ % len(forms)]
    misses = {"skip_norm": ["broadcast_residual", "dtype", "norm_axis"], "packed": ["weight_input"],
              "skip_layer_norm": ["broadcast_residual", "dtype", "norm_axis"],
              "nbits": ["int8_asymmetric", "odd_k"], "gqa_masked": ["mask_offset", "mask_strict", "output_read"],
              "gqa_unmasked": ["output_read", "flat_output"], "gqa_constant_mask": ["mask_offset"],
              "gqa_float_mask": ["infinite_mask", "flat_output"],
              "gqa_padded": ["pad_reversed", "pad_transposed", "pad_window"]}[form]  # fmt: skip
    near = _near(rng, round_, len(forms), misses)
    target = OnnxRuntime(accuracy_level=0)
    if form in ("skip_norm", "skip_layer_norm"):
        e = rng.choice([8, 16])
        dtype = torch.float64 if near == "dtype" else torch.float32
        params = {"w": torch.rand(e, dtype=dtype) + 0.5, "b": torch.randn(e, dtype=dtype), "lin": torch.randn(e, e, dtype=dtype) * 0.3}
        axis = -2 if near == "norm_axis" else -1

        def fn_s(m: Any, x: torch.Tensor) -> Any:
            r = (x[:1] if near == "broadcast_residual" else x) + x @ m.lin
            if form == "skip_layer_norm":
                if axis == -2:
                    return F.layer_norm(r.transpose(-1, -2), (r.shape[-2],)).transpose(-1, -2), r * 2
                return F.layer_norm(r, (e,), m.w, m.b, 1e-5), r * 2
            y = r * torch.rsqrt(r.pow(2).mean(axis, keepdim=True) + 1e-6)
            return m.w * y, r * 2  # the sum is read again (the next residual)

        x = torch.randn(rng.randint(2, 3), rng.randint(2, 5), e, dtype=dtype)
        return Case(f"onnxruntime/{form}/{near}", Model(fn_s, params), (x,), [{1: "s"}], target=target)
    if form in ("packed", "nbits"):
        k = 40 if near == "odd_k" else rng.choice([32, 64])
        sizes = [rng.choice([16, 32, 48]) for _ in range(rng.randint(2, 3))]
        params = {f"w{i}": torch.randn(k, n) * 0.2 for i, n in enumerate(sizes)}

        def fn_p(m: Any, x: torch.Tensor, y: torch.Tensor | None = None) -> Any:
            ws = [getattr(m, f"w{i}") for i in range(len(sizes))]
            if y is not None:  # a weight given as an input: not a constant
                ws[0] = y
            return tuple(torch.relu(x @ w) for w in ws)

        args: tuple[torch.Tensor, ...] = (torch.randn(2, rng.randint(2, 4), k),)
        dynamic = [{1: "s"}]
        if near == "weight_input":
            args, dynamic = (*args, torch.randn(k, sizes[0])), [*dynamic, {}]
        options: dict[str, Any] = {}
        if form == "nbits":
            from graph_builder.optimizer.quantization import WeightQuantization

            asym = near == "int8_asymmetric" or rng.random() < 0.5
            options["weight_quantization"] = WeightQuantization("int8" if near == "int8_asymmetric" else "int4",
                                                                rng.choice([16, 32]), symmetric=not asym)  # fmt: skip
        return Case(f"onnxruntime/{form}/{near}", Model(fn_p, params), args, dynamic, options=options, target=target)
    heads, kv, size = 4, rng.choice([1, 2, 4]), 16
    e = heads * size
    params = {n: torch.randn(e, d) * 0.2 for n, d in (("q", e), ("k", kv * size), ("v", kv * size), ("o", e))}
    masked = form in ("gqa_masked", "gqa_padded")
    constant = form == "gqa_constant_mask"  # static sizes: the mask folds to a constant
    padded = rng.random() < 0.5

    def fn_a(m: Any, x: torch.Tensor, pk: torch.Tensor, pv: torch.Tensor) -> Any:
        b, s, _ = x.shape
        p = pk.shape[2]
        q = (x @ m.q).view(b, s, heads, size).transpose(1, 2)
        k = torch.cat([pk, (x @ m.k).view(b, s, kv, size).transpose(1, 2)], 2)
        v = torch.cat([pv, (x @ m.v).view(b, s, kv, size).transpose(1, 2)], 2)
        mask = None
        if masked:
            key, query = torch.arange(p + s), torch.arange(s) + p + (1 if near == "mask_offset" else 0)
            keep = key[None, :] < query[:, None] if near == "mask_strict" else key[None, :] <= query[:, None]
            mask = keep[None, None].expand(b, 1, s, p + s)
            if form == "gqa_padded":  # transformers' padding mask: keep[batch, key] read by index
                keep = torch.cat([pk[:, 0, :, 0], x[:, :, 0]], 1) > -1.2  # [b, p + s], made of the data
                rows, keys = torch.arange(b)[:, None, None, None], torch.arange(p + s)[None, None, None, :]
                if near == "pad_reversed":  # keep[batch, last key - key]: not the padding form
                    keys = p + s - 1 - keys
                padding = keep.t()[keys, rows] if near == "pad_transposed" else keep[rows, keys]
                mask = mask & padding
                if near == "pad_window":  # a sliding window besides: kept in the bias
                    mask = mask & (key[None, :] > query[:, None] - 3)[None, None]
        elif constant:
            mask = torch.ones(s, p + s, dtype=torch.bool).tril(p + (1 if near == "mask_offset" else 0))[None, None]
        elif form == "gqa_float_mask":  # transformers' eager masks: 0 / finfo.min (or -inf: a near miss)
            key = torch.arange(p + s)
            allowed = (key[None, :] <= torch.arange(s)[:, None] + p) & (key[None, :] % 3 != 1)  # not causal-only
            if padded:  # a left-padded row: every key masked (torch: uniform weights over finfo.min)
                allowed = allowed & (torch.arange(s)[:, None] > 0)
            low = float("-inf") if near == "infinite_mask" else torch.finfo(torch.float32).min
            mask = torch.where(allowed, 0.0, low)[None, None].expand(b, 1, s, p + s)
        y = F.scaled_dot_product_attention(q, _repeat_kv(k, heads // kv), _repeat_kv(v, heads // kv), attn_mask=mask)
        if near == "flat_output":  # [batch * seq, hidden], as GPT-2's Conv1D reads it
            out = y.transpose(1, 2).reshape(-1, e) @ m.o
        else:
            out = y.transpose(1, 2).reshape(b, s, e) @ m.o
        return (out, k, v, y) if near == "output_read" else (out, k, v)

    args = (torch.randn(1, 3, e), torch.randn(1, kv, 4, size), torch.randn(1, kv, 4, size))  # batch 1: onnxruntime's
    dynamic = [{}, {}, {}] if constant else [{1: "s"}, {2: "p"}, {2: "p"}]  # kernel takes a prompt after a past only then
    return Case(f"onnxruntime/{form}/{near}", Model(fn_a, params), args, dynamic, target=target)
def zero_adds(rng: random.Random, round_: int) -> Case:
    """timm's reparameterisable blocks as they train (MobileOne, FastViT's RepMixer): an absent
    branch is the number 0, added to a convolution's, a batch norm's or a linear layer's output
    (`cleanup._adds_zero`; tests/graph_builder/optimizer/test_zero_adds.py compares sign bits).
    Near misses: 0 added to a product (which may be -0.0), a batch norm bias holding -0.0."""
    forms = ["conv_bn", "identity_bn", "linear"]
    form = forms[round_ % len(forms)]
    near = _near(rng, round_, len(forms), ["product", "negative_zero_bias"])
    c = rng.randint(2, 5)
    conv, bn = torch.nn.Conv2d(c, c, 3, padding=1, bias=False).eval(), _random_bn(torch.nn.BatchNorm2d(c)).eval()
    identity, linear = torch.nn.BatchNorm2d(c), torch.nn.Linear(c, c).eval()
    _random_bn(identity).eval()
    if near == "negative_zero_bias":
        identity.bias.data[0] = -0.0

    def fn(m: Model, x: torch.Tensor) -> torch.Tensor:
        absent = 0
        if near == "product":
            return F.gelu(x * 0.0 + absent)
        if form == "linear":
            return F.gelu(linear(x.mean((2, 3))) + absent)
        branch = conv(x) if form == "conv_bn" else x
        return F.gelu(absent + identity(branch) + bn(conv(x)))

    modules = {"conv": conv, "bn": bn, "identity": identity, "linear": linear}
    x = torch.randn(rng.randint(2, 3), c, 5, 6)
    return Case(f"zero_adds/{form}/{near}", Model(fn, modules=modules), (x,), [_dynamic(rng, 4, (1, 2, 3))])


FAMILIES: list[Callable[[random.Random, int], Case]] = [gelu, rms_norm, rotary, gemm, unsqueeze_pair, packed_qkv,
                                                        attention, batch_norm, folding, cleanup,
                                                        kv_cache, reshapes, onnxruntime_target, softcap_attention,
                                                        zero_adds, heads_inside, batch_first_attention]
# rounds until every exact form was built
FORMS: dict[Callable[[random.Random, int], Case], int] = {gelu: 5, rms_norm: 4, rotary: 6, batch_norm: 4, folding: 3,
                                                          kv_cache: 3, onnxruntime_target: 9, softcap_attention: 2,
                                                          zero_adds: 3, heads_inside: 3, batch_first_attention: 3}


def make_case(index: int, seed: int = 0) -> Case:
    family = FAMILIES[index % len(FAMILIES)]
    rng = random.Random(seed * 1_000_003 + index)
    torch.manual_seed(seed * 1_000_003 + index)
    with torch.no_grad():
        return family(rng, index // len(FAMILIES))


def fast_slice() -> list[int]:
    """The case indices that build every exact form of every family once, then one near miss of
    each family: a deterministic slice that hits every rewrite."""
    rounds = max(FORMS.values()) + 1
    return [r * len(FAMILIES) + f for r in range(rounds) for f, fam in enumerate(FAMILIES) if r <= FORMS.get(fam, 1)]


# -- running a case ------------------------------------------------------------------------------


def _tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(atol, rtol) for optimized against plain: rounding of a fused kernel, nothing more."""
    return {torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2), torch.float64: (1e-10, 1e-10)}.get(dtype, (2e-5, 2e-5))


def _close(a: torch.Tensor, b: torch.Tensor, atol: float, rtol: float) -> str | None:
    """None when b matches a (same shape, dtype, NaN and inf positions; finite values within
    atol + rtol * |a| after scaling atol by the largest magnitude), else what differs."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype {tuple(a.shape)} {a.dtype} vs {tuple(b.shape)} {b.dtype}"
    if not a.is_floating_point():
        return None if torch.equal(a, b) else "integer values differ"
    a64, b64 = a.double(), b.double()
    finite = torch.isfinite(a64) & torch.isfinite(b64)
    if not bool(((a64 == b64) | (a64.isnan() & b64.isnan()) | finite).all()):
        return "NaN / inf positions differ"
    if not finite.any():
        return None
    scale = max(1.0, float(a64[finite].abs().max()))
    err = (a64 - b64).abs()[finite]
    if bool((err <= atol * scale + rtol * a64[finite].abs()).all()):
        return None
    return f"max abs difference {float(err.max()):.3g}"


def _inputs(case: Case, k: int) -> tuple[torch.Tensor, ...]:
    """The example inputs with every dynamic dim at its k-th size (fresh random values)."""
    out = []
    for x, dyn in zip(case.args, case.dynamic):
        shape = [case.sizes.get(dyn[a], _SIZES)[k] if a in dyn else s for a, s in enumerate(x.shape)]
        out.append(torch.randn(shape, dtype=x.dtype))
    return tuple(out)


def _dynamic_shapes(case: Case) -> tuple[dict[int, Any], ...] | None:
    if not any(case.dynamic):
        return None
    dims: dict[str, Any] = {}
    return tuple({a: dims.setdefault(n, torch.export.Dim(n, min=2)) for a, n in d.items()} for d in case.dynamic)


def run_case(case: Case) -> Outcome:
    """Export with and without the optimizer and compare at every size (see the module's doc)."""
    diffs: list[str] = []
    shapes = _dynamic_shapes(case)
    plain_options = {"optimize": False} if case.target is None else {"check": False}
    second = {} if case.target is None else {"target": case.target, "check": False}
    what = "optimize=True" if case.target is None else "the onnxruntime target"
    try:
        plain = torchlib.export(case.model, case.args, dynamic_shapes=shapes, opset=case.opset, **plain_options,
                                **case.options)  # fmt: skip
    except Exception as e:  # noqa: BLE001  # not the optimizer's doing: counted apart, listed by the bench script
        return Outcome(case.name, Counter(), [], f"{case.name}: the plain export fails: {type(e).__name__}: {str(e)[:200]}")
    if case.target is not None and "weight_quantization" in case.options:
        # onnxruntime fuses the plain DequantizeLinear -> MatMul itself, at its session's accuracy
        # level (4 by default): compare at the level the target writes
        import onnxruntime as ort

        from graph_builder.weights import ort_session

        options = ort.SessionOptions()
        options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", str(case.target.accuracy_level))
        plain._session = ort_session(plain.graph, options)
    with record() as hits:
        try:
            opt = torchlib.export(case.model, case.args, dynamic_shapes=shapes, opset=case.opset, **second, **case.options)
        except Exception as e:  # noqa: BLE001  # a finding, reported
            return Outcome(case.name, hits, [f"{case.name}: {what} fails to export: {type(e).__name__}: {str(e)[:200]}"])
    runs = len(_SIZES) if shapes else 1
    for k in range(runs):
        inputs = _inputs(case, k) if shapes else case.args
        with torch.no_grad():
            expected = [t for t in pytree.tree_leaves(case.model(*inputs)) if isinstance(t, torch.Tensor)]
        try:
            a = plain.run(*inputs)
        except Exception as e:  # noqa: BLE001
            return Outcome(case.name, hits, diffs, f"{case.name}: the plain model fails to run: {str(e)[:200]}")
        try:
            b = opt.run(*inputs)
        except Exception as e:  # noqa: BLE001  # a finding, reported
            diffs.append(f"{case.name} at {[tuple(x.shape) for x in inputs]}: {what} fails to run: {str(e)[:200]}")
            continue
        for i, (e, x, y) in enumerate(zip(expected, a, b)):
            atol, rtol = _tolerance(e.dtype)
            bad = _close(x, y, atol, rtol)
            if bad is None and _close(e, x, 50 * atol, 50 * rtol) is None:
                bad = _close(e, y, 50 * atol, 50 * rtol)
                bad = None if bad is None else f"against torch ({bad}) where optimize=False agrees"
            if bad is not None:
                diffs.append(f"{case.name} at {[tuple(t.shape) for t in inputs]}, output {i}: {bad}")
    return Outcome(case.name, hits, diffs)


def fuzz(indices: list[int], seed: int = 0, progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    outcomes = []
    for i in indices:
        outcome = run_case(make_case(i, seed))
        outcomes.append(outcome)
        if progress is not None:
            progress(outcome)
    return outcomes


def rewrite_names() -> list[str]:
    """Every rewrite a fuzz run must hit: each rule of the optimizer and the BatchNorm fold."""
    from graph_builder.optimizer import attention as attention_rules
    from graph_builder.optimizer import fusions
    from graph_builder.optimizer import onnxruntime as onnxruntime_rules

    names = dict.fromkeys(r.name for r in [*fusions.RULES, *attention_rules.UNFUSE, *attention_rules.GQA, *attention_rules.PAST,
                                           *attention_rules.SOFTCAP, *attention_rules.BATCH_FIRST])
    names[attention_rules.HEADS_INSIDE] = None
    # every onnxruntime pass but "past": not an equivalence but the decode step's contract on its
    # inputs (tests/graph_builder/optimizer/test_onnxruntime_target.py runs it with longer buffers)
    names.update(dict.fromkeys(v for k, v in onnxruntime_rules.NAMES.items() if k != "past"))
    return [*names, "batch norms folded", "constants folded", "identities removed", "reshapes merged",
            "common subexpressions merged"]


def summary(outcomes: list[Outcome]) -> tuple[int, Counter[str], list[str], list[str]]:
    """(models tried, hits per rewrite, differences, skipped cases with the reason)."""
    hits: Counter[str] = Counter()
    diffs: list[str] = []
    for o in outcomes:
        hits.update(o.hits)
        diffs.extend(o.differences)
    return len(outcomes), hits, diffs, [o.skipped for o in outcomes if o.skipped]


__all__ = ["FAMILIES", "Case", "Outcome", "fast_slice", "fuzz", "make_case", "rewrite_names", "run_case", "summary"]
