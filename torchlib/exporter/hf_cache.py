"""transformers' KV caches as inputs and outputs of an exported model.

A decoder's decode step takes and returns a `transformers.Cache` (DynamicCache, StaticCache,
EncoderDecoderCache, and the sliding-window layers inside them). torch.export sees only pytrees
of tensors, so while a model is captured (and while an ExportResult flattens inputs or rebuilds
outputs) each cache class is registered as a pytree node here, and deregistered afterwards
(a registration someone else made, e.g. transformers' `register_dynamic_cache_export_support`,
is put back). transformers is never imported unless the model's inputs hold one of its objects.

A cache flattens to one dict per layer, in layer order, of that layer's tensors: `key`, `value`,
then its other tensor attributes (a StaticCache's `cumulative_length`; a linear-attention or
state-space layer's `conv_states.{j}` / `recurrent_states.{j}`, one per state it holds; a layer
without tensors, such as a DummyLayer, is an empty dict), then its item of each list of tensors
the cache itself holds per layer (MiniMaxCache's `linear_cache`, [] for its attention layers). So the ONNX inputs come per layer, key
then value, as optimum and onnxruntime-genai order them. Its `dynamic_shapes` entry is that
structure (`dynamic_shapes_of(cache)` writes it), or transformers' own layout, one list per entry
over the layers that hold it (`[[keys' specs], [values' specs]]`, as for
`register_dynamic_cache_export_support`), which `cache_spec` turns into the first. An
EncoderDecoderCache flattens to one dict per layer too, as optimum orders a seq2seq decoder's
cache: `decoder.key`, `decoder.value` (its self-attention layer), then `encoder.key`,
`encoder.value` (its cross-attention layer).

A sliding-window layer (DynamicSlidingWindowLayer, and the hybrid layers built on it) flattens as
its full-attention counterpart (DynamicLayer), which it comes back as: the exported step takes and
returns every past token and the window is applied by the attention mask, which transformers
builds from the config. Its count of tokens seen is the length of its keys, so a sample cache that
dropped keys (a prompt longer than the window) is refused with the reason.

ONNX names (names.py): a cache input's tensors are `past_key_values.{i}.{entry}` (`key`, `value`,
`conv_states.0`, ...; `decoder.key`, `decoder.value`, `encoder.key`, `encoder.value` for an
EncoderDecoderCache), a cache output's `present.{i}.{entry}`, with `i` the model's layer; other
outputs are named by their field (`logits`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import torch
import torch.utils._pytree as pytree

_ENTRY = {"keys": "key", "values": "value"}  # layer attribute -> entry name (others keep theirs)
_PLAIN = (type(None), bool, int, float, str, type, torch.device, torch.dtype)
# tensor attributes rebuilt on unflattening rather than carried as inputs
_DERIVED = ("_sliding_window_tensor",)


@dataclasses.dataclass(frozen=True)
class _Dict:
    """A dict attribute of a layer in the pytree context (a linear-attention layer's
    `conv_states`, `has_previous_state`, ...): its items in order, None for a tensor (an entry
    `{attribute}.{key}`, carried as a child)."""

    items: tuple[tuple[Any, Any], ...]


def _plain(owner: Any, name: str, value: Any) -> Any:
    """A non-tensor attribute as it goes into the pytree context: plain values only (a context
    is compared, and rebuilt as it is)."""
    if not isinstance(value, _PLAIN):
        raise TypeError(f"{type(owner).__name__}.{name} is a {type(value).__name__}: torchlib exports caches whose "
                        "attributes besides tensors (and dicts of them) are plain values")
    return value


def _sliding(layer: Any) -> bool:
    from transformers import cache_utils

    return isinstance(layer, cache_utils.DynamicSlidingWindowLayer)


# what makes a DynamicSlidingWindowLayer slide: a subclass that defines one of these again has a
# window of its own, which dropping the class's window would not remove
_SLIDING_BEHAVIOUR = ("update", "get_mask_sizes", "get_seq_length", "get_max_length")


_COUNTERPARTS: dict[type, type] = {}


def _full_counterpart(cls: type) -> type:
    """The layer class that is `cls` with its sliding window dropped: DynamicSlidingWindowLayer ->
    DynamicLayer; a class built on it -> the transformers class with the same bases but DynamicLayer
    (LinearAttentionAndSlidingWindowAttentionLayer -> LinearAttentionAndFullAttentionLayer) or, where
    transformers has none (a model's own layer class), the same class rebuilt on DynamicLayer. One
    class per `cls` (kept in _COUNTERPARTS): a pytree context holds it and is compared."""
    from transformers import cache_utils

    sliding, full = cache_utils.DynamicSlidingWindowLayer, cache_utils.DynamicLayer
    if cls is sliding:
        return full
    if cls in _COUNTERPARTS:
        return _COUNTERPARTS[cls]
    own = [f"{c.__name__}.{name}" for c in cls.__mro__ if c is not sliding and issubclass(c, sliding)
           for name in _SLIDING_BEHAVIOUR if name in vars(c)]
    if own:
        raise TypeError(f"{cls.__name__} is a sliding-window layer that defines {', '.join(own)} itself (a window of "
                        f"its own): torchlib exports a sliding layer as the same layer without its window, every past "
                        f"token kept and the window applied by the attention mask, which this class would not be")
    bases = tuple(full if b is sliding else _full_counterpart(b) if issubclass(b, sliding) else b for b in cls.__bases__)
    if cls.__module__ == full.__module__:
        found = [c for c in vars(cache_utils).values() if isinstance(c, type) and c.__bases__ == bases]
        if len(found) == 1:
            return found[0]
    body = {k: v for k, v in vars(cls).items() if k not in ("__dict__", "__weakref__")}
    return _COUNTERPARTS.setdefault(cls, type(cls)(cls.__name__, bases, body))


def _describe_layer(layer: Any, index: int) -> tuple[list[tuple[str, torch.Tensor]], tuple]:
    """A layer's tensors as (entry name, tensor), in order (key, value, then the others), and the
    context that rebuilds it: (class, entries as (entry, attribute, dict key or None), others)."""
    state = vars(layer)
    tensors: list[tuple[str, str, Any, torch.Tensor]] = []
    others: list[tuple[str, Any]] = []
    for name, value in state.items():
        if name in _DERIVED:
            continue
        if isinstance(value, torch.Tensor):
            tensors.append((_ENTRY.get(name, name), name, None, value))
        elif isinstance(value, dict):
            keys = tuple(k for k, v in value.items() if isinstance(v, torch.Tensor))
            tensors.extend((f"{name}.{k}", name, k, value[k]) for k in keys)
            items = tuple((k, None if k in keys else _plain(layer, f"{name}[{k!r}]", v)) for k, v in value.items())
            others.append((name, _Dict(items)))
        elif name == "cumulative_length" and _sliding(layer):
            _check_window(layer, index)  # a sliding layer is exported whole (below): its keys are every token seen
        else:
            others.append((name, _plain(layer, name, value)))
    order = {"key": 0, "value": 1}
    tensors.sort(key=lambda t: order.get(t[0], 2))  # stable: the others keep their attribute order
    entries = tuple((entry, attribute, key) for entry, attribute, key, _ in tensors)
    # a sliding-window layer is rebuilt as its full-attention counterpart: the step's mask applies
    # the window (transformers builds it from the config), whereas a layer that drops its oldest
    # keys would make the kept length, and every shape after it, depend on whether the past is
    # longer than the window. The rebuilt layer flattens to the same context.
    cls = _full_counterpart(type(layer)) if _sliding(layer) else type(layer)
    return [(entry, t) for entry, _, _, t in tensors], (cls, entries, tuple(others))


def _check_window(layer: Any, index: int) -> None:
    """A sliding layer becomes an input only while it holds every token it has seen."""
    seen, keys = layer.cumulative_length, getattr(layer, "keys", None)
    if isinstance(seen, int) and isinstance(keys, torch.Tensor) and seen != keys.shape[-2]:
        raise ValueError(
            f"layer {index} of the cache ({type(layer).__name__}, sliding_window={layer.sliding_window}) has seen {seen} "
            f"tokens but keeps only the last {keys.shape[-2]}: the exported step carries every past token of a sliding "
            f"layer and applies the window in its attention mask, so the sample cache must hold them all. Make the "
            f"sample's cache from a prompt shorter than the window (fewer than {layer.sliding_window} tokens)")


@dataclasses.dataclass(frozen=True)
class _EmptyList:
    """An empty list in a per-layer list of the cache (MiniMaxCache.linear_cache's attention layers)."""


def _per_layer_lists(cache: Any) -> list[str]:
    """The cache's own attributes that are lists holding tensors: one item per layer
    (MiniMaxCache's `linear_cache`, a tensor for each linear-attention layer, [] for the others)."""
    return [k for k, v in vars(cache).items()
            if k != "layers" and isinstance(v, list) and any(isinstance(x, torch.Tensor) for x in v)]


def _flatten_cache(cache: Any) -> tuple[list[dict[str, torch.Tensor]], tuple]:
    """One dict per layer: its layer's tensors, then its item of each per-layer list of the cache
    (an entry named after the list). The context: the layers' layouts, the cache's plain
    attributes, and each list's items (None for a tensor)."""
    described = [_describe_layer(layer, i) for i, layer in enumerate(cache.layers)]
    lists = _per_layer_lists(cache)
    children = [dict(tensors) for tensors, _ in described]
    children += [{} for _ in range(max([0, *(len(getattr(cache, k)) for k in lists)]) - len(children))]
    items = []
    for name in lists:
        values = getattr(cache, name)
        for i, v in enumerate(values):
            if isinstance(v, torch.Tensor):
                children[i][name] = v
        items.append((name, tuple(None if isinstance(v, torch.Tensor) else _EmptyList() if isinstance(v, list) and not v
                                  else _plain(cache, f"{name}[{i}]", v) for i, v in enumerate(values))))
    attrs = tuple((k, _plain(cache, k, v)) for k, v in vars(cache).items() if k != "layers" and k not in lists)
    return children, (tuple(layout for _, layout in described), attrs, tuple(items))


def _flatten_cache_with_keys(cache: Any) -> tuple[list[tuple[Any, Any]], tuple]:
    children, context = _flatten_cache(cache)
    return [(pytree.SequenceKey(i), c) for i, c in enumerate(children)], context


def _unflatten_layer(layout: tuple, tensors: dict[str, torch.Tensor]) -> Any:
    """One layer from its context and tensors (a sliding-window layer as its full-attention
    counterpart, see _describe_layer)."""
    cls, entries, others = layout
    layer = cls.__new__(cls)
    for name, value in others:
        setattr(layer, name, dict(value.items) if isinstance(value, _Dict) else value)
    for entry, attribute, key in entries:
        if key is None:
            setattr(layer, attribute, tensors[entry])
        else:
            getattr(layer, attribute)[key] = tensors[entry]
    return layer


def _unflatten_cache(children: Any, context: tuple, cls: Any) -> Any:  # cls: a transformers Cache class
    layouts, attrs, lists = context
    cache = cls.__new__(cls)
    for k, v in attrs:
        setattr(cache, k, v)
    cache.layers = [_unflatten_layer(layout, tensors) for layout, tensors in zip(layouts, children)]
    for name, items in lists:
        setattr(cache, name, [children[i][name] if v is None else [] if isinstance(v, _EmptyList) else v
                              for i, v in enumerate(items)])
    return cache


# an EncoderDecoderCache's two caches: (entry prefix, attribute)
_PARTS = (("decoder", "self_attention_cache"), ("encoder", "cross_attention_cache"))


def _flatten_encoder_decoder(cache: Any) -> tuple[list[dict[str, torch.Tensor]], tuple]:
    """One dict per layer, as optimum orders a seq2seq decoder's cache: the self-attention layer's
    entries (`decoder.key`, `decoder.value`) then the cross-attention layer's (`encoder.key`,
    `encoder.value`); the context holds each cache's class, its own context and layer count."""
    parts = [(type(getattr(cache, attr)), *_flatten_cache(getattr(cache, attr))) for _, attr in _PARTS]
    layers: list[dict[str, torch.Tensor]] = [{} for _ in range(max(len(children) for _, children, _ in parts))]
    for (prefix, _), (_, children, _) in zip(_PARTS, parts):
        for layer, tensors in zip(layers, children):
            layer.update((f"{prefix}.{entry}", t) for entry, t in tensors.items())
    return layers, tuple((cls, context, len(children)) for cls, children, context in parts)


def _flatten_encoder_decoder_with_keys(cache: Any) -> tuple[list[tuple[Any, Any]], tuple]:
    children, context = _flatten_encoder_decoder(cache)
    return [(pytree.SequenceKey(i), c) for i, c in enumerate(children)], context


def _unflatten_encoder_decoder(children: Any, context: tuple, cls: type) -> Any:
    caches = []
    for (prefix, _), (part_cls, part_context, count) in zip(_PARTS, context):
        start = len(prefix) + 1
        part = [{e[start:]: t for e, t in layer.items() if e.startswith(prefix + ".")} for layer in children[:count]]
        caches.append(_unflatten_cache(part, part_context, part_cls))
    return cls(*caches)


def _cache_classes() -> dict[type, str]:
    """transformers' cache classes that we register, by kind: every subclass of `Cache` loaded
    (transformers' own and those a model's module defines), "encoder_decoder" for
    EncoderDecoderCache and its subclasses, "cache" for the others."""
    from transformers import cache_utils

    classes: dict[type, str] = {}
    pending = list(cache_utils.Cache.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls not in classes:
            classes[cls] = "encoder_decoder" if issubclass(cls, cache_utils.EncoderDecoderCache) else "cache"
            pending.extend(cls.__subclasses__())
    return classes


def dynamic_shapes_of(cache: Any, batch: str = "batch", past: str = "past_sequence",
                      encoder: str = "encoder_sequence") -> Any:
    """The `dynamic_shapes` entry of a cache (the layout it flattens to): dim 0 of every tensor is
    `batch`, dim 2 of the keys and values of a layer that grows (DynamicLayer and the layers built
    on it) is `past` (`encoder` for an EncoderDecoderCache's cross-attention entries: the encoder's
    length), and so is the one other dim of that size in the layer's other tensors (a
    DynamicIndexedLayer's `indexer_keys`, [batch, past, dim]: it grows with the keys); a
    StaticCache's fixed-length keys and a state-space or linear-attention layer's states (a
    hybrid layer's too) keep their other dims;
    scalars (`cumulative_length`) have none."""
    from transformers import cache_utils

    if isinstance(cache, cache_utils.EncoderDecoderCache):
        return _merge_parts(cache, [dynamic_shapes_of(cache.self_attention_cache, batch, past),
                                    dynamic_shapes_of(cache.cross_attention_cache, batch, encoder)])
    specs = []
    for i, tensors in enumerate(_flatten_cache(cache)[0]):
        grows = i < len(cache.layers) and isinstance(cache.layers[i], cache_utils.DynamicLayer)
        # a linear-attention layer's states (a hybrid layer's conv / recurrent states) keep their sizes
        states = i < len(cache.layers) and isinstance(cache.layers[i], cache_utils.LinearAttentionCacheLayerMixin)
        length = tensors["key"].shape[2] if grows and not states and "key" in tensors and tensors["key"].dim() == 4 else None
        specs.append({entry: None if t.dim() == 0 else {0: batch, 2: past} if grows and entry in ("key", "value")
                      else {0: batch, **_past_dim(t, length, past)} for entry, t in tensors.items()})
    return specs


def _past_dim(tensor: torch.Tensor, length: int | None, past: str) -> dict[int, str]:
    """{dim: past} for the one dim after the batch whose size is the layer's past length (a tensor
    that grows with the keys), else {} (none, or several: which one grows is not known)."""
    dims = [d for d in range(1, tensor.dim()) if length is not None and tensor.shape[d] == length]
    return {dims[0]: past} if len(dims) == 1 else {}


def _merge_parts(cache: Any, specs: list[Any]) -> list[dict[str, Any]]:
    """An EncoderDecoderCache's spec per layer from its two caches' (see _flatten_encoder_decoder)."""
    layers: list[dict[str, Any]] = [{} for _ in range(max(len(s) for s in specs))]
    for (prefix, _), spec in zip(_PARTS, specs):
        for layer, entries in zip(layers, spec):
            layer.update((f"{prefix}.{entry}", s) for entry, s in (entries or {}).items())
    return layers


def cache_spec(cache: Any, spec: Any) -> Any:
    """A cache's `dynamic_shapes` entry in the layout it flattens to (one dict per layer), from
    that layout or from transformers' (one list per entry, over the layers that hold it; for an
    EncoderDecoderCache, `[self-attention cache's spec, cross-attention cache's spec]`)."""
    if not isinstance(spec, (list, tuple)) or all(isinstance(s, Mapping) or s is None for s in spec):
        return spec  # one dict per layer (or a spec torch.export judges)
    from transformers import cache_utils

    if isinstance(cache, cache_utils.EncoderDecoderCache):
        if len(spec) != 2:
            raise ValueError(f"an EncoderDecoderCache's dynamic_shapes is one dict per layer, or [self-attention cache's, "
                             f"cross-attention cache's]; got {len(spec)} entries")
        return _merge_parts(cache, [cache_spec(getattr(cache, attr), s) for (_, attr), s in zip(_PARTS, spec)])
    children, (layouts, _, _) = _flatten_cache(cache)
    columns: dict[str, list[int]] = {}
    for i, (_, entries, _) in enumerate(layouts):
        for entry, _, _ in entries:
            columns.setdefault(entry, []).append(i)
    if not all(isinstance(s, (list, tuple)) for s in spec) or any(spec[len(columns):]):
        raise ValueError(f"a cache's dynamic_shapes is one dict per layer, or one list per entry over the layers that "
                         f"hold it ({', '.join(f'{e}: {len(ls)}' for e, ls in columns.items())}); got {spec!r}")
    per_layer: list[dict[str, Any]] = [dict.fromkeys(c) for c in children]  # entries not given: static
    for (entry, layers), column in zip(columns.items(), spec):
        if len(column) != len(layers):
            raise ValueError(f"dynamic_shapes of the cache's {entry!r} entries has {len(column)} specs, but {len(layers)} "
                             f"layers hold one")
        for layer, s in zip(layers, column):
            per_layer[layer][entry] = s
    return per_layer


def is_cache_type(cls: type) -> bool:
    return cls.__module__.startswith("transformers.") and any(c.__name__ in ("Cache", "EncoderDecoderCache") for c in cls.__mro__)


def contains_cache(tree: Any) -> bool:
    """Whether `tree` (nested lists / tuples / dicts, or a TreeSpec) holds a transformers cache.
    Never imports transformers: without it loaded, no object can be one."""
    if "transformers" not in sys.modules:
        return False
    if isinstance(tree, pytree.TreeSpec):
        return (tree.type is not None and is_cache_type(tree.type)) or any(contains_cache(c) for c in tree.children())
    if is_cache_type(type(tree)):
        return True
    if isinstance(tree, dict):
        return any(contains_cache(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return any(contains_cache(v) for v in tree)
    if type(tree).__module__.startswith("transformers.") and hasattr(tree, "values") and callable(tree.values):
        return any(contains_cache(v) for v in tree.values())  # a ModelOutput
    return False


@contextlib.contextmanager
def registered(needed: bool = True) -> Iterator[None]:
    """transformers' cache classes are pytree nodes inside the block (when `needed`); the
    registrations found before it are restored after it."""
    if not needed:
        yield
        return
    saved: dict[type, Any] = {}
    classes = _cache_classes()
    try:
        for cls, kind in classes.items():
            if cls in pytree.SUPPORTED_NODES:
                saved[cls] = (pytree.SUPPORTED_NODES[cls], pytree.SUPPORTED_SERIALIZED_TYPES.get(cls))
                pytree._deregister_pytree_node(cls)
            if kind == "cache":
                pytree.register_pytree_node(
                    cls, _flatten_cache, functools.partial(_unflatten_cache, cls=cls),
                    serialized_type_name=f"{cls.__module__}.{cls.__name__}", flatten_with_keys_fn=_flatten_cache_with_keys)
            else:
                pytree.register_pytree_node(
                    cls, _flatten_encoder_decoder, functools.partial(_unflatten_encoder_decoder, cls=cls),
                    serialized_type_name=f"{cls.__module__}.{cls.__name__}",
                    flatten_with_keys_fn=_flatten_encoder_decoder_with_keys)
        yield
    finally:
        for cls in classes:
            if cls in pytree.SUPPORTED_NODES:
                pytree._deregister_pytree_node(cls)
            if cls in saved:
                node, serialized = saved[cls]
                pytree.register_pytree_node(
                    cls, node.flatten_fn, node.unflatten_fn, flatten_with_keys_fn=node.flatten_with_keys_fn,
                    serialized_type_name=getattr(serialized, "serialized_type_name", None),
                    to_dumpable_context=getattr(serialized, "to_dumpable_context", None),
                    from_dumpable_context=getattr(serialized, "from_dumpable_context", None))
