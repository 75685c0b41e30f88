"""A transformers model's non-persistent buffers, computed from its config as `from_pretrained`
computes them, for a model built on the meta device and exported with `weights=`.

Checkpoints hold parameters and persistent buffers only. The rest (rotary `inv_freq` /
`original_inv_freq` of every rope type, BERT's `position_ids`, ...) are computed: a model built
on the meta device has them on the meta device too. `from_pretrained` gives each an empty CPU
tensor and runs the model's own `_init_weights(module)` on the module that holds it; here the
same, on the modules holding a meta non-persistent buffer only, so no weight is materialized
(the module's parameters, if any, stay on the meta device, where initializing them writes
nothing). Each buffer is computed twice, from zeros and from ones: a buffer `_init_weights` does
not write in full, or writes from its old contents or at random, differs between the two and is
left on the meta device (the caller names it). transformers is not imported: a model is a
transformers model when a class of its MRO is transformers' `PreTrainedModel`.
"""

from __future__ import annotations

import torch


def _is_pretrained_model(module: torch.nn.Module) -> bool:
    return any(c.__name__ == "PreTrainedModel" and c.__module__ == "transformers.modeling_utils" for c in type(module).__mro__)


def _initializers(model: torch.nn.Module) -> dict[int, torch.nn.Module]:
    """id(module) -> the innermost transformers model holding it (whose `_init_weights` knows it)."""
    owners: dict[int, torch.nn.Module] = {}
    for outer in model.modules():  # outer models first: an inner one overwrites them
        if _is_pretrained_model(outer):
            for module in outer.modules():
                owners[id(module)] = outer
    return owners


def _computed(owner: torch.nn.Module, module: torch.nn.Module, names: list[str], fill: int) -> dict[str, torch.Tensor]:
    """The buffers `names` of `module` as `owner._init_weights(module)` writes them into CPU
    tensors filled with `fill`; the module gets its own buffers back."""
    own = {name: module._buffers[name] for name in names}
    new = {name: torch.full_like(t, fill, device="cpu") for name, t in own.items() if t is not None}
    try:
        module._buffers.update(new)
        with torch.no_grad():
            owner._init_weights(module)  # type: ignore[operator]
        return {name: module._buffers[name] for name in new}  # type: ignore[misc]
    finally:
        module._buffers.update(own)


def non_persistent_buffers(model: torch.nn.Module) -> list[tuple[torch.nn.Module, str, torch.Tensor]]:
    """(module, name, tensor) for each non-persistent buffer on the meta device of a transformers
    model (or of one inside `model`) that the model's `_init_weights` computes. The model is
    left as it was; buffers it does not compute are not listed."""
    owners = _initializers(model)
    if not owners:
        return []
    found = []
    for path, module in model.named_modules():
        names = [n for n, t in module._buffers.items()
                 if t is not None and t.is_meta and n in module._non_persistent_buffers_set]
        owner = owners.get(id(module))
        if not names or owner is None:
            continue
        try:
            zeros, ones = _computed(owner, module, names, 0), _computed(owner, module, names, 1)
        except Exception as e:
            raise RuntimeError(f"computing the non-persistent buffers {names} of {path or 'the model'} "
                               f"({type(module).__name__}) with {type(owner).__name__}._init_weights, as "
                               f"from_pretrained does, failed: {e}") from e
        found += [(module, n, zeros[n]) for n in names if torch.equal(zeros[n], ones[n])]
    return found
