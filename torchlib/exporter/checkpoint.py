"""`export(model, args, weights=...)`: the weights come from a checkpoint, not from the model.

The model may live on the meta device (`with torch.device("meta"): model = MyModel(config)`):
its parameters have shapes and dtypes but no data. During the capture only, each parameter and
persistent buffer is replaced by a tensor over its checkpoint's bytes (a safetensors file mapped
into memory, or a state dict's tensor: no copy, nothing read), and a transformers model's
non-persistent buffers (rotary tables) are computed from its config as `from_pretrained` does
(hf_buffers.py); then the model gets its own tensors back. torch.export reads no weight, the
exported program holds the checkpoint's tensors, and the ONNX graph's initializers are numpy
views of them: `save()` then writes each weight from the checkpoint to the external-data file,
tensor by tensor (graph_builder/weight_sources.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from graph_builder import types
from graph_builder.arrays import torch_view
from graph_builder.weight_sources import open_safetensors
from torchlib.exporter.hf_buffers import non_persistent_buffers

Weights = Mapping[str, Any] | str | os.PathLike | Sequence[str | os.PathLike]


class WeightsError(ValueError):
    """The checkpoint given as `weights=` does not fit the model: names the parameters and shapes."""


def checkpoint_arrays(weights: Weights) -> dict[str, Any]:
    """name -> tensor or numpy array: a state dict as given, safetensors file(s) mapped."""
    if isinstance(weights, Mapping):
        return dict(weights)
    return open_safetensors(weights)


def meta_tensors(model: torch.nn.Module) -> list[str]:
    """Names of the model's parameters and buffers that have no data (on the meta device)."""
    named = [*model.named_parameters(remove_duplicate=False), *model.named_buffers(remove_duplicate=False)]
    return [name for name, t in named if t.is_meta]


def _describe(t: Any) -> str:
    dtype = t.dtype if isinstance(t, torch.Tensor) else types.from_numpy(t.dtype).to_torch()
    return f"{list(t.shape)} ({str(dtype).removeprefix('torch.')})"


def _as_tensor(name: str, source: Any, expected: torch.Tensor) -> torch.Tensor:
    """The checkpoint's tensor for parameter `name`, as a torch tensor over the same memory."""
    if isinstance(source, np.ndarray):
        try:
            tensor = torch_view(source)
        except TypeError as e:
            raise WeightsError(f"weights[{name!r}] has numpy dtype {source.dtype}, which torch has no tensor for") from e
    elif isinstance(source, torch.Tensor):
        if source.is_meta:
            raise WeightsError(f"weights[{name!r}] is on the meta device: it has no data. Give the tensors that hold the weights.")
        tensor = source.detach()
    else:
        raise WeightsError(f"weights[{name!r}] is a {type(source).__name__}; give a torch tensor or a numpy array")
    if tuple(tensor.shape) != tuple(expected.shape) or tensor.dtype != expected.dtype:
        raise WeightsError(f"weights[{name!r}] does not fit the model: the model's {name} is {_describe(expected)}, "
                           f"the checkpoint's tensor is {_describe(source)}. Build the model with the checkpoint's "
                           f"config and dtype (e.g. model.to(dtype) before export).")  # fmt: skip
    return tensor


@contextlib.contextmanager
def attached(model: torch.nn.Module, weights: Weights) -> Iterator[list[str]]:
    """Inside the block, the model's parameters and persistent buffers are the checkpoint's
    tensors (tied parameters stay tied: one checkpoint entry serves every name of a parameter);
    after it, the model's own again. Yields notes (checkpoint entries the model does not use).
    Raises WeightsError naming what is missing, what does not fit, and what would be left
    without data."""
    source = checkpoint_arrays(weights)
    state = model.state_dict(keep_vars=True)
    groups: dict[int, list[str]] = {}
    for name, t in state.items():
        groups.setdefault(id(t), []).append(name)
    missing = [names[0] for names in groups.values() if not any(n in source for n in names)]
    if missing:
        shown = ", ".join(missing[:8]) + (f", ... ({len(missing)} in all)" if len(missing) > 8 else "")
        some = ", ".join(list(source)[:5])
        raise WeightsError(f"the checkpoint has no tensor for {len(missing)} of the model's weights: {shown}. "
                           f"It holds {len(source)} tensors ({some}{', ...' if len(source) > 5 else ''}); "
                           f"the names must be the model's state_dict keys.")  # fmt: skip
    new: dict[int, torch.Tensor] = {}
    for key, names in groups.items():
        name = next(n for n in names if n in source)
        tensor = _as_tensor(name, source[name], state[name])
        old = state[name]
        new[key] = torch.nn.Parameter(tensor, requires_grad=old.requires_grad) if isinstance(old, torch.nn.Parameter) else tensor
    saved: list[tuple[dict, str, Any]] = []
    for module in model.modules():
        for table in (module._parameters, module._buffers):
            for attr, t in table.items():
                if t is not None and id(t) in new:
                    saved.append((table, attr, t))
    try:
        for slots, attr, t in saved:
            slots[attr] = new[id(t)]
        for module, attr, tensor in non_persistent_buffers(model):  # a transformers model's, from its config
            saved.append((module._buffers, attr, module._buffers[attr]))
            module._buffers[attr] = tensor
        left = meta_tensors(model)
        if left:
            raise WeightsError(f"{len(left)} of the model's tensors have no data after the checkpoint is applied: "
                               f"{', '.join(left[:8])}{', ...' if len(left) > 8 else ''}. Non-persistent buffers "
                               f"(rotary tables, masks) are not in checkpoints: a transformers model's are computed "
                               f"by its `_init_weights` as from_pretrained does; for others (or where it leaves "
                               f"them out), compute them on the CPU after building the model on the meta device "
                               f"(e.g. `model.inv_freq = make_inv_freq(config)`).")  # fmt: skip
        used = {n for names in groups.values() for n in names}
        unused = [n for n in source if n not in used]
        note = (f"{len(unused)} checkpoint tensor(s) are not weights of the model and were not used: "
                f"{', '.join(unused[:5])}{', ...' if len(unused) > 5 else ''}")  # fmt: skip
        yield [note] if unused else []
    finally:
        for table, attr, t in saved:
            table[attr] = t
