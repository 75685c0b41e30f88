"""transformers' KV caches as inputs and outputs of an exported model.

A decoder's decode step takes and returns a `transformers.Cache` (DynamicCache, StaticCache,
EncoderDecoderCache, and the sliding-window layers inside them). torch.export sees only pytrees
of tensors, so while a model is captured (and while an ExportResult flattens inputs or rebuilds
outputs) each cache class is registered as a pytree node here, and deregistered afterwards
(a registration someone else made, e.g. transformers' `register_dynamic_cache_export_support`,
is put back). transformers is never imported unless the model's inputs hold one of its objects.

A cache flattens like transformers' own registration: `[key per layer, value per layer]`, then
one list per other tensor attribute of its layers (a StaticCache's `cumulative_length`), so its
`dynamic_shapes` entry is `[[{0: "batch", 2: "past"}] * layers, [{0: "batch", 2: "past"}] *
layers]`. An EncoderDecoderCache flattens to `[self_attention_cache, cross_attention_cache]`.

ONNX names (names.py): a cache input's tensors are `past_key_values.{i}.key` / `.value`
(`.decoder.` / `.encoder.` between them for an EncoderDecoderCache's self- and cross-attention),
a cache output's `present.{i}.key` / `.value`; other outputs are named by their field (`logits`).
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from typing import Any

import torch
import torch.utils._pytree as pytree

_ATTRIBUTE = {"key": "keys", "value": "values"}  # entry name -> layer attribute
_ENTRY = {v: k for k, v in _ATTRIBUTE.items()}


def _layer_tensors(cache: Any, name: str) -> list[torch.Tensor]:
    attribute = _ATTRIBUTE.get(name, name)
    return [getattr(layer, attribute) for layer in cache.layers if isinstance(getattr(layer, attribute, None), torch.Tensor)]


_PLAIN = (type(None), bool, int, float, str, type, torch.device, torch.dtype)


def _plain(owner: Any, items: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The non-tensor attributes of a cache or layer, which go into the pytree context: plain
    values only (a context is compared, and rebuilt as it is)."""
    for k, v in items.items():
        if not isinstance(v, _PLAIN):
            raise TypeError(f"{type(owner).__name__}.{k} is a {type(v).__name__}: torchlib exports caches whose "
                            "attributes besides tensors are plain values (DynamicCache, StaticCache, EncoderDecoderCache)")
    return tuple(sorted(items.items()))


# tensor attributes rebuilt on unflattening rather than carried as inputs (marked True)
_DERIVED = ("_sliding_window_tensor",)


def _describe_layer(layer: Any) -> tuple[type, tuple[str, ...], tuple]:
    """(class, names of its tensor attributes, its other attributes) of one cache layer."""
    state = {k: (True if k in _DERIVED else v) for k, v in vars(layer).items()}
    tensors = tuple(k for k, v in state.items() if isinstance(v, torch.Tensor))
    if "keys" in tensors and isinstance(state.get("cumulative_length"), int):
        del state["cumulative_length"]  # a sliding layer's count of tokens seen: rebuilt from its keys
    others = _plain(layer, {k: v for k, v in state.items() if not isinstance(v, torch.Tensor)})
    return type(layer), tensors, others


def _entries(layouts: tuple) -> list[str]:
    """Entry names, in flattening order: key, value, then the layers' other tensor attributes."""
    names = ["key", "value"]
    for _, tensors, _ in layouts:
        names.extend(n for n in tensors if n not in ("keys", "values") and n not in names)
    return names


def _flatten_cache(cache: Any) -> tuple[list[list[torch.Tensor]], tuple]:
    layouts = tuple(_describe_layer(layer) for layer in cache.layers)
    attrs = _plain(cache, {k: v for k, v in vars(cache).items() if k != "layers"})
    names = _entries(layouts)
    return [_layer_tensors(cache, n) for n in names], (layouts, attrs, tuple(names))


def _flatten_cache_with_keys(cache: Any) -> tuple[list[tuple[Any, Any]], tuple]:
    children, context = _flatten_cache(cache)
    return [(pytree.MappingKey(n), c) for n, c in zip(context[2], children)], context


def _unflatten_cache(children: Any, context: tuple, cls: Any) -> Any:  # cls: a transformers Cache class
    layouts, attrs, names = context
    columns = {n: iter(c) for n, c in zip(names, children)}
    layers = []
    for layer_cls, tensors, others in layouts:
        layer = layer_cls.__new__(layer_cls)
        for k, v in others:
            setattr(layer, k, v)
        for attribute in tensors:
            setattr(layer, attribute, next(columns[_ENTRY.get(attribute, attribute)]))
        if "keys" in tensors and not hasattr(layer, "cumulative_length") and hasattr(layer, "sliding_window"):
            # a sliding layer's count of tokens seen is the length of its keys while they are
            # shorter than its window (DynamicSlidingWindowLayer keeps window - 1 of them)
            layer.cumulative_length = layer.keys.shape[-2]
        if getattr(layer, "_sliding_window_tensor", None) is True:
            layer._sliding_window_tensor = torch.tensor(layer.sliding_window, dtype=torch.long)
        layers.append(layer)
    cache = cls.__new__(cls)
    for k, v in attrs:
        setattr(cache, k, v)
    cache.layers = layers
    return cache


def _flatten_encoder_decoder(cache: Any) -> tuple[list[Any], None]:
    return [cache.self_attention_cache, cache.cross_attention_cache], None


def _flatten_encoder_decoder_with_keys(cache: Any) -> tuple[list[tuple[Any, Any]], None]:
    return [(pytree.GetAttrKey("self_attention_cache"), cache.self_attention_cache),
            (pytree.GetAttrKey("cross_attention_cache"), cache.cross_attention_cache)], None


def _unflatten_encoder_decoder(children: Any, context: None, cls: type) -> Any:
    return cls(*children)


def _cache_classes() -> dict[type, str]:
    """transformers' cache classes that we register, by kind ("cache" or "encoder_decoder")."""
    from transformers import cache_utils

    classes: dict[type, str] = {}
    for name in ("DynamicCache", "StaticCache", "SlidingWindowCache", "HybridCache", "HybridChunkedCache",
                 "OffloadedCache", "OffloadedStaticCache"):
        cls = getattr(cache_utils, name, None)
        if isinstance(cls, type) and issubclass(cls, cache_utils.Cache):
            classes[cls] = "cache"
    classes[cache_utils.EncoderDecoderCache] = "encoder_decoder"
    return classes


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
