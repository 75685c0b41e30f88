"""Tiny configs of transformers architectures for issue 34's sweeps (bench_transformers.py,
bench_decode_sweep.py): random weights, a few layers, widths of 64.

`shrink_config` caps every size by its attribute's name (`_CAPS`), keeps the sizes the models
relate in agreement (`_agree`: top-k within the experts, a partial rotary dim within the head dim,
Mamba-2's heads), and re-derives from them the sizes the config class derives in its
`__post_init__` (DeepSeek's `qk_head_dim` from `qk_nope_head_dim + qk_rope_head_dim`, Zamba2's
`mamba_headdim` from `mamba_expand * hidden_size`). `model_config` is the config a model class
takes, as `AutoModelForCausalLM.from_config` picks it.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import math
import re
import zlib
from typing import Any

# Caps by attribute name (a value above the cap is lowered to it). Matched on the whole name.
_CAPS: list[tuple[str, int]] = [
    (r"(num_)?(hidden_|encoder_|decoder_|text_|vision_|audio_)?layers|n_layers?|num_layers|.*_layers", 2),
    (r"num_(attention_)?heads|n_heads?|(encoder_|decoder_)?attention_heads|num_attention_heads", 4),
    (r"num_key_value_heads|n_kv_heads|num_kv_heads", 2),
    (r"hidden_size|d_model|n_embd|embed_dim|dim|hidden_dim|model_dim|d_embed|embedding_size|word_embed_proj_dim", 64),
    (r"intermediate_size|(encoder_|decoder_)?ffn_dim|n_inner|d_ff|ffn_hidden_size|d_inner|mlp_dim", 128),
    (r"moe_intermediate_size|expert_intermediate_size|shared_expert_intermediate_size|intermediate_size_mlp", 64),
    (r"head_dim|d_kv|attention_head_dim|qk_nope_head_dim|qk_rope_head_dim|v_head_dim|kv_lora_rank|q_lora_rank", 16),
    # every vocabulary of the model (inkling2's `unpadded_vocab_size`, which its embedding reads)
    (r".*vocab_size.*|n_vocab", 256),
    (r"num_(local_|routed_)?experts|n_routed_experts|moe_num_experts", 4),
    (r"num_experts_per_tok(en)?|moe_topk|moe_top_k|moe_k|top_k|num_selected_experts", 2),
    (r"max_position_embeddings|n_positions|max_seq_len|max_sequence_length", 512),
    (r"image_size|img_size", 64),
    (r"num_conv_pos_embeddings", 16),
]
_TOKEN_IDS = re.compile(r".*_token_id")
_EXPERTS = re.compile(r"num_(local_|routed_)?experts|n_routed_experts|moe_num_experts")
_TOP_K = re.compile(r"num_experts_per_tok(en)?|moe_topk|moe_top_k|moe_k|top_k|num_selected_experts")
_HIDDEN = ("hidden_size", "d_model", "n_embd", "embed_dim")
_HEADS = ("num_attention_heads", "n_head", "n_heads", "num_heads")
_LAYERS = ("num_hidden_layers", "num_layers", "n_layer", "n_layers")
# Mamba-2's mixer: heads * head dim == expand * hidden (bamba, falcon_h1, granitemoehybrid validate it)
_MAMBA2 = ("num_heads", "head_dim", "expand", "n_groups")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _cap(name: str, value: Any) -> Any:
    for pattern, cap in _CAPS:
        if re.fullmatch(pattern, name):
            if _is_int(value) and value > cap:
                return cap
            if isinstance(value, (list, tuple)) and value and all(_is_int(v) for v in value):
                return type(value)(min(v, cap) for v in value)
    return value


def _first(sizes: dict[str, Any], names: tuple[str, ...]) -> Any:
    return next((sizes[n] for n in names if _is_int(sizes.get(n))), None)


def _head_dim(sizes: dict[str, Any]) -> int | None:
    """The attention head dim: `head_dim` where set, else hidden size over heads."""
    if _is_int(sizes.get("head_dim")):
        return sizes["head_dim"]
    hidden, heads = _first(sizes, _HIDDEN), _first(sizes, _HEADS)
    return hidden // heads if hidden and heads else None


def _agree(before: dict[str, Any], sizes: dict[str, Any]) -> None:
    """Make the capped `sizes` (the config's fields; `before`: their values uncapped) agree where
    the model relates them; in place."""
    hidden, heads = _first(sizes, _HIDDEN), _first(sizes, _HEADS)
    # a head dim or key/value head count left None where the model reads it (Ministral, Nemotron,
    # Hunyuan read `config.head_dim` / `config.num_key_value_heads` as they are): hidden over heads,
    # and key/value heads capped like the others
    if "head_dim" in sizes and sizes["head_dim"] is None and hidden and heads:
        sizes["head_dim"] = hidden // heads
    if "num_key_value_heads" in sizes and sizes["num_key_value_heads"] is None and heads:
        sizes["num_key_value_heads"] = _cap("num_key_value_heads", heads)
    # top-k experts among at least k experts; a top-k left None beside experts (DeepSeek-V2's
    # default, which its router cannot run) takes the tiny top-k
    experts = [v for k, v in sizes.items() if _EXPERTS.fullmatch(k) and _is_int(v) and v > 0]
    for name, value in sizes.items():
        if _TOP_K.fullmatch(name) and experts and (_is_int(value) or value is None):
            sizes[name] = min(_cap(name, value) if value is not None else _cap(name, 1 << 30), *experts)
    # multi-head latent attention: a query / key head is its unrotated and its rotary parts (a
    # field in LongCat-Flash's config; other MLA configs derive it, rederive)
    if all(_is_int(sizes.get(n)) for n in ("qk_head_dim", "qk_nope_head_dim", "qk_rope_head_dim")):
        sizes["qk_head_dim"] = sizes["qk_nope_head_dim"] + sizes["qk_rope_head_dim"]
    # a group-limited router (DeepSeek-V3's n_group, topk_group): the groups divide the experts,
    # two or more in each (it scores a group by its top two)
    for groups in ("n_group", "num_expert_group"):
        if _is_int(sizes.get(groups)) and experts:
            sizes[groups] = math.gcd(sizes[groups], max(min(experts) // 2, 1))
            if _is_int(sizes.get("topk_group")):
                sizes["topk_group"] = min(sizes["topk_group"], sizes[groups])
    # a partial rotary dim keeps its share of the head dim (GPT-J, CodeGen: 64 of 256)
    old_head, new_head = _head_dim(before), _head_dim(sizes)
    if _is_int(sizes.get("rotary_dim")) and old_head and new_head and sizes["rotary_dim"] > new_head:
        sizes["rotary_dim"] = max(2, 2 * (before["rotary_dim"] * new_head // old_head // 2))
    # Mamba-2 (its own config's names): heads follow expand * hidden over the head dim; the
    # groups divide the heads
    heads_name, dim_name, expand_name, groups_name = _MAMBA2
    dim, expand = sizes.get(dim_name), sizes.get(expand_name)
    if _is_int(sizes.get(heads_name)) and _is_int(dim) and _is_int(expand) and hidden:
        sizes[heads_name] = max(1, expand * hidden // dim)
        if _is_int(sizes.get(groups_name)):
            sizes[groups_name] = math.gcd(sizes[groups_name], sizes[heads_name])


def shrink_config(config: Any, seen: set[int] | None = None, equal_kv_heads: bool = False) -> Any:
    """Cap the sizes of `config` and of its sub-configs in place (see _CAPS), make those the model
    relates agree (`_agree`) and re-derive the config's derived attributes from them (`rederive`);
    return it. equal_kv_heads: as many key/value heads as heads where the config had so
    (deepseek_v3's attention has no grouped heads); otherwise they are capped lower, grouped."""
    from transformers import PretrainedConfig

    seen = set() if seen is None else seen
    if id(config) in seen:
        return config
    seen.add(id(config))
    before = dict(vars(config))
    layers_before = {k: v for k, v in before.items() if _is_int(v) and "layers" in k}
    heads = [before.get(k) for k in ("num_attention_heads", "num_key_value_heads")]
    for name, value in before.items():
        if isinstance(value, PretrainedConfig):
            shrink_config(value, seen, equal_kv_heads)
            continue
        new = _cap(name, value)
        if new is not value:
            with contextlib.suppress(Exception):
                setattr(config, name, new)
    _sum_of_parts(config, layers_before)
    # lists (and tuples: sew's conv_dim) with one entry per layer follow the layer count
    layers = {k: getattr(config, k) for k in layers_before}
    for name, value in list(vars(config).items()):
        if isinstance(value, (list, tuple)) and value and any(len(value) == n and n != layers[k] for k, n in layers_before.items()):
            k = next(k for k, n in layers_before.items() if len(value) == n)
            with contextlib.suppress(Exception):
                setattr(config, name, value[: layers[k]])
    if equal_kv_heads and _is_int(heads[0]) and heads[0] == heads[1]:
        with contextlib.suppress(Exception):
            config.num_key_value_heads = vars(config)["num_attention_heads"]
    sizes = dict(vars(config))
    _agree(before, sizes)
    for name, value in sizes.items():
        if value is not vars(config)[name]:
            setattr(config, name, value)
    vocab = vars(config).get("vocab_size")
    for name, value in list(vars(config).items()):
        if _TOKEN_IDS.fullmatch(name) and _is_int(value) and _is_int(vocab) and value >= vocab:
            setattr(config, name, vocab - 1 - zlib.crc32(name.encode()) % 3)
    if hasattr(config, "use_cache"):
        config.use_cache = False
    rederive(config, {k for k, v in vars(config).items() if k in before and v is not before[k]})
    return config


def _sum_of_parts(config: Any, layers_before: dict[str, int]) -> None:
    """Where the model's layer count is the sum of its other layer counts (Dory's input, recurrent
    and output layers: 8 + 20 + 8 = 36), it stays their sum after the caps (2 + 2 + 2 = 6)."""
    total = next((n for n in _LAYERS if n in layers_before), None)
    parts = [n for n in layers_before if n != total and n not in _LAYERS]
    if total is None or len(parts) < 2 or sum(layers_before[n] for n in parts) != layers_before[total]:
        return
    with contextlib.suppress(Exception):
        setattr(config, total, sum(getattr(config, n) for n in parts))


def rederive(config: Any, set_here: set[str]) -> None:
    """Re-derive the attributes `config`'s class computes from its fields (its `__post_init__`:
    DeepSeek's `qk_head_dim`, Zamba2's `mamba_headdim` and `hybrid_layer_ids`), from the capped
    fields. A field that defaults to None and holds a value was filled by the class from others
    (RWKV's `attention_hidden_size` and xLSTM's `embedding_dim` from the hidden size, HRM's
    `num_layers_per_stack` from the layer count): it is None again, for the class to fill from the
    capped sizes. The attributes set here (`set_here`, capped) stay, but for a field the class
    rewrites from what it is given (HRM's layer count: its stacks times their cycles). Where the
    class refuses the capped fields (its own validation: xlnet's `d_head` against
    `d_model // n_head`), the config stays as capped."""
    fields = {f.name: f for f in dataclasses.fields(config) if f.init}
    values = vars(config)
    filled = {n for n, f in fields.items() if f.default is None and values.get(n) is not None and n not in set_here}
    given = {n: None if n in filled else copy.deepcopy(values[n]) for n in fields if n in values}
    try:  # sub-configs copied: a composite's __post_init__ may set theirs
        rebuilt = type(config)(**given)
    except Exception:  # noqa: BLE001  (the class's validation of the capped sizes: they stay as capped)
        return
    for name, value in vars(rebuilt).items():
        if name.startswith("_") or name not in values:
            continue
        rewritten = name in given and value != given[name]
        if name in set_here and not rewritten:
            continue
        if (_is_int(value) or (isinstance(value, (list, tuple)) and all(_is_int(v) for v in value))) and value != values[name]:
            setattr(config, name, value)


def as_causal_lm(config: Any) -> Any:
    """A causal LM's config, as a user sets it for one: `is_decoder=True` where the config (or a
    sub-config) has that flag (BERT-like encoders' LM heads, `BertLMHeadModel`: without it they
    attend both ways and return no cache; transformers warns "add `is_decoder=True`"); returned."""
    from transformers import PretrainedConfig

    for c in [config, *(v for v in vars(config).values() if isinstance(v, PretrainedConfig))]:
        if "is_decoder" in vars(c):
            c.is_decoder = True
    return config


def model_config(model_class: Any, config: Any) -> Any:
    """The config `model_class` takes: `config`, or its sub-config of the class's config class
    (Qwen3.5's, Llama 4's, Emu3's causal LM take the text config, as `AutoModelForCausalLM.from_config`
    gives them; MusicGen's its decoder's)."""
    from transformers import PretrainedConfig

    wanted = getattr(model_class, "config_class", None)
    if wanted is None or isinstance(config, wanted):
        return config
    subs = [v for v in vars(config).values() if isinstance(v, PretrainedConfig) and isinstance(v, wanted)]
    return subs[0] if len(subs) == 1 else config
