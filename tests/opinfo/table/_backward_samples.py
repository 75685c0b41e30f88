"""Samples for backward ops, taken from OpInfo samples: each sample of the named OpInfo(s) runs
forward with requires_grad, then torch.autograd.grad with a random output gradient, under a
dispatch mode that records the backward ATen calls autograd makes. Every call to the wanted
overload becomes a sample (its exact arguments), checked against torch.ops.aten.<overload>.
So a backward op gets the arguments an exported training graph would give it, for every
sample and dtype the forward OpInfo has."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from torchlib.conformance.spec import sample_input


@functools.cache
def _op_db() -> dict[tuple[str, str], Any]:
    from torch.testing._internal.common_methods_invocations import op_db

    return {(o.name, o.variant_test_name): o for o in op_db}


def _overload_name(func: Any) -> str:
    name = func._schema.name
    return name if func._overloadname == "default" else f"{name}.{func._overloadname}"


def _snapshot(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(_snapshot(v) for v in x)
    return x


class _Record(TorchDispatchMode):
    def __init__(self, wanted: frozenset[str]) -> None:
        super().__init__()
        self.wanted = wanted
        self.calls: list[tuple[tuple, dict]] = []

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if _overload_name(func) in self.wanted:
            self.calls.append((_snapshot(args), _snapshot(kwargs)))
        return func(*args, **kwargs)


def _backward_calls(info: Any, sample: Any, wanted: frozenset[str], seed: int) -> list[tuple[tuple, dict]]:
    """The calls to `wanted` autograd makes for one sample (empty when torch rejects it)."""
    leaves = [t for t in tree_flatten((sample.input, sample.args, sample.kwargs))[0]
              if isinstance(t, torch.Tensor) and t.requires_grad]  # fmt: skip
    try:
        out = info.op(sample.input, *sample.args, **sample.kwargs)
        outs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor) and t.requires_grad]
        if not outs or not leaves:
            return []
        gen = torch.Generator().manual_seed(seed)
        grads = [torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o.dtype) for o in outs]
        with _Record(wanted) as record:
            torch.autograd.grad(outs, leaves, grads, allow_unused=True)
    except Exception:
        return []
    return record.calls


_MASKS = [[a, b, c] for a in (True, False) for b in (True, False) for c in (True, False) if a != b or b != c]


def from_backward(
    opinfos: Sequence[str | tuple[str, str]], overloads: Sequence[str], limit: int | None = None, masks: bool = False
) -> Callable[[torch.dtype], Iterator[Any]]:
    """A samples= generator: the `overloads` calls autograd makes on the OpInfos' samples
    (at most `limit` per OpInfo and dtype). masks: the call's last argument is a bool[3]
    output_mask; each call is followed by the same call with another mask (one of the 6 with
    both a True and a False, in turn: all False makes a graph without outputs)."""
    refs = [(r, "") if isinstance(r, str) else r for r in opinfos]
    wanted = frozenset(o if "::" in o else f"aten::{o}" for o in overloads)

    def samples(dtype: torch.dtype) -> Iterator[Any]:
        for ref in refs:
            info = _op_db()[ref]
            if dtype not in info.supported_backward_dtypes("cpu"):
                continue
            found = 0
            for i, sample in enumerate(info.sample_inputs("cpu", dtype, requires_grad=True)):
                for args, kwargs in _backward_calls(info, sample, wanted, i):
                    yield sample_input(*args, **kwargs)
                    found += 1
                    if masks:
                        mask = _MASKS[found % len(_MASKS)]
                        yield sample_input(*args[:-1], mask, **kwargs)
                if limit is not None and found >= limit:
                    break

    return samples


def masked_reference(overload: str) -> Callable[..., Any]:
    """torch.ops.aten.<overload> with the outputs its bool[3] output_mask (last argument) leaves
    out set to None: torch's CPU kernels compute some of them anyway, depending on the kernel
    they pick, so those are unspecified; a graph never reads them."""
    packet, _, name = overload.removeprefix("aten::").partition(".")
    fn = getattr(getattr(torch.ops.aten, packet), name or "default")

    def reference(*args: Any) -> Any:
        return tuple(out if wanted else None for out, wanted in zip(fn(*args), args[-1]))

    return reference
