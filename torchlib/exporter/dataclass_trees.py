"""Plain `@dataclass` inputs and outputs, flattened by their fields like a ModelOutput.

torch.export sees only pytrees: a forward returning `Prediction(scores=..., boxes=...)` fails
with "Found <class Prediction> in output, which is not a known type". While a model is captured
(`capturing`), every dataclass class found in its inputs, or in what forward returns (a forward
hook looks, before torch.export flattens it), is registered as a pytree node with
`torch.utils._pytree.register_dataclass`; afterwards the registrations are undone, and the
ExportResult registers the same classes again (`registered`) while it flattens inputs, rebuilds
outputs or runs torch to compare. A class the user (or a library) registered stays as it was.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import torch
import torch.utils._pytree as pytree


def _found(tree: Any, classes: set[type]) -> None:
    """Add to `classes` the unregistered dataclass classes in `tree` (lists, tuples, dicts and
    dataclasses inside one another)."""
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        if type(tree) not in pytree.SUPPORTED_NODES:
            classes.add(type(tree))
        for field in dataclasses.fields(tree):
            _found(getattr(tree, field.name, None), classes)
    elif isinstance(tree, dict):
        for v in tree.values():
            _found(v, classes)
    elif isinstance(tree, (list, tuple)):
        for v in tree:
            _found(v, classes)


@contextlib.contextmanager
def registered(classes: Iterable[type]) -> Iterator[None]:
    """The given dataclass classes are pytree nodes inside the block (those not registered
    already); deregistered after it."""
    added = []
    try:
        for cls in classes:
            if cls not in pytree.SUPPORTED_NODES:
                pytree.register_dataclass(cls)
                added.append(cls)
        yield
    finally:
        for cls in added:
            pytree._deregister_pytree_node(cls)


@contextlib.contextmanager
def capturing(model: Any, args: Any, kwargs: Any) -> Iterator[set[type]]:
    """Inside the block, the dataclass classes of `(args, kwargs)` and of what `model` returns
    are pytree nodes; yields the set of them (filled as forward runs), deregistered after."""
    classes: set[type] = set()

    def register(tree: Any) -> None:
        new: set[type] = set()
        _found(tree, new)
        for cls in new - classes:
            pytree.register_dataclass(cls)
            classes.add(cls)

    hook = None
    try:
        register((args, kwargs))
        if isinstance(model, torch.nn.Module):
            hook = model.register_forward_hook(lambda module, inputs, output: register(output))
        yield classes
    finally:
        if hook is not None:
            hook.remove()
        for cls in classes:
            pytree._deregister_pytree_node(cls)
