"""ONNX names of a model's inputs and outputs, from the structure of what forward takes and returns.

A leaf's name is the path that leads to it:
- a field (a dict key, a ModelOutput or dataclass field, a namedtuple field) adds `.field`
  (nothing before it: `field`): `{"logits": t}` gives `logits`, `{"a": {"b": t}}` `a.b`;
- a position in a tuple or list adds `_i` (nothing before it: `output_i`): `(t, (u, v))` gives
  `output_0`, `output_1_0`, `output_1_1`; `{"hidden": (t, u)}` gives `hidden_0`, `hidden_1`;
- a transformers KV cache's tensors are `{cache_prefix}.{layer}.{entry}` (`present.0.key` for an
  output cache, `past_key_values.0.decoder.key` for an input EncoderDecoderCache's; hf_cache.py);
- forward returning one tensor: `output`.

Names that two leaves share (a key holding a dot) get a free variant when the graph is built.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import torch.utils._pytree as pytree

from torchlib.exporter.hf_cache import is_cache_type


def leaf_names(spec: pytree.TreeSpec, cache_prefix: str, root: str = "output") -> list[str]:
    """The name of each leaf of a tree of this structure (flattened with the caches registered)."""
    names: list[str] = []

    def walk(spec: pytree.TreeSpec, path: str) -> None:
        if spec.is_leaf():
            names.append(path or root)
            return
        if is_cache_type(spec.type):  # one dict per layer (hf_cache.py)
            for layer, entries in enumerate(spec.children()):
                names.extend(f"{cache_prefix}.{layer}.{entry}" for entry in entries.context)
            return
        fields = _fields(spec)
        for i, child in enumerate(spec.children()):
            if fields is not None:
                step = f"{path}.{fields[i]}" if path else str(fields[i])
            else:
                step = f"{path or root}_{i}"
            walk(child, step)

    walk(spec, "")
    return names


def _fields(spec: pytree.TreeSpec) -> list[Any] | None:
    """The field names of a node's children, or None for a node whose children are positions."""
    n, context = spec.num_children, spec.context
    if spec.type in (dict,) or (isinstance(spec.type, type) and issubclass(spec.type, dict) and isinstance(context, list)
                                and len(context) == n):  # dict, OrderedDict, a ModelOutput
        return list(context)
    if spec.type is not None and spec.type.__name__ == "defaultdict" and isinstance(context, list) and len(context) == 2:
        return list(context[1])  # (default_factory, keys)
    fields = getattr(context, "_fields", None)  # a namedtuple (pytree's context is its class)
    if isinstance(fields, tuple) and len(fields) == n:
        return list(fields)
    if dataclasses.is_dataclass(spec.type) and isinstance(context, list) and len(context) == 2:
        return list(context[0])  # torch.export.register_dataclass: (names of non-None fields, of None ones)
    if isinstance(context, list) and len(context) == n and all(isinstance(k, str) for k in context):
        return list(context)  # another registered class whose context names its children
    return None
