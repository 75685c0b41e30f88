"""Which missing ATen overloads already export through a torch decomposition, and how many ONNX
nodes one call gives (`python -m codegen coverage --missing all [--nodes]`, `--op NAME`).

An overload with no torchlib function still exports when torch decomposes it into ops that have
functions: the exporter decomposes such a node with `torch.export.default_decompositions()`
(torchlib/exporter/decompose.py), and torch.export itself decomposes CompositeImplicitAutograd
ops before the exporter sees them. A function for one of these is worth writing when it gives
fewer nodes, or numbers closer to torch's, than the decomposition; the others (no
decomposition) fail to export until someone writes one.

The node count comes from exporting the overload alone, called directly on the first float32
sample of its OpInfo (torch's test inputs) that it accepts, and verifying the result against
torch: overloads without an OpInfo, or whose OpInfo samples do not fit the ATen signature, have
no count.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

import torch
import torch.utils._pytree as pytree

DECOMPOSITION = "torch's decomposition"
COMPOSITE = "its CompositeImplicitAutograd kernel"  # which torch.export inlines


@dataclasses.dataclass
class Route:
    """How the exporter handles one overload that has no function (`how`: DECOMPOSITION or
    COMPOSITE), and, once measured, what one call on a sample gives."""

    how: str
    nodes: int | None = None  # ONNX nodes of the exported call
    verified: bool | None = None  # the exported call matches torch (None: random op, or not run)
    sample: str = ""  # which sample was exported, or why none was
    error: str = ""  # why exporting the sample failed: the overload needs a function after all

    def __str__(self) -> str:
        if self.error:
            return f"has {self.how}, but exporting it fails ({self.sample}): {self.error}"
        if self.nodes is None:
            return f"exports through {self.how}" + (f" ({self.sample})" if self.sample else "")
        check = "" if self.verified is None else ", matches torch" if self.verified else ", DIFFERS from torch"
        constant = ": the result is a constant on this sample" if self.nodes == 0 else ""
        return f"exports through {self.how}: {self.nodes} ONNX nodes ({self.sample}{check}{constant})"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def overload(qualified_name: str) -> torch._ops.OpOverload | None:
    """torch's OpOverload of 'aten::name.overload', or None when this torch lacks it."""
    name, _, overload_name = qualified_name.removeprefix("aten::").partition(".")
    packet = getattr(torch.ops.aten, name, None)
    return getattr(packet, overload_name or "default", None) if packet is not None else None


def routes(names: Iterable[str], table: dict[Any, Any]) -> dict[str, Route]:
    """Of these overloads (which have no function), those the exporter handles through a torch
    decomposition: in `table` (the exporter's decomposition table,
    `torchlib.exporter.export.decomposition_table`) or CompositeImplicitAutograd."""
    found = {}
    for name in names:
        op = overload(name)
        if op is None:
            continue
        if op in table:
            found[name] = Route(DECOMPOSITION)
        elif torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "CompositeImplicitAutograd"):
            found[name] = Route(COMPOSITE)
    return found


def measure(name: str, route: Route) -> Route:
    """`route` with the node count of exporting the overload `name` alone on an OpInfo sample."""
    import torchlib

    op = overload(name)
    if op is None:
        return route
    tried = False
    for label, args, kwargs in _samples(op):
        tried = True
        try:
            with torch.no_grad():
                op(*args, **kwargs)
        except Exception:  # the OpInfo's Python signature is not the overload's: try the next sample
            continue
        flat, spec = pytree.tree_flatten((args, kwargs))
        positions = [i for i, x in enumerate(flat) if isinstance(x, torch.Tensor)]
        call = _Call(op, flat, spec, positions)
        tensors = tuple(flat[p] for p in positions)
        try:
            result = torchlib.export(call, tensors, check=False)
        except Exception as e:  # a decomposition into ops without functions, or one torch cannot trace
            first_line = (str(e).strip().splitlines() or [""])[0][:120]
            return dataclasses.replace(route, sample=label, error=f"{type(e).__name__}: {first_line}")
        random = torch.Tag.nondeterministic_seeded in op.tags
        verified = None if random else result.verify(*tensors).ok()
        return dataclasses.replace(route, nodes=result.node_count, verified=verified, sample=label)
    return dataclasses.replace(route, sample="no OpInfo sample fits its signature" if tried else "no OpInfo to count with")


class _Call(torch.nn.Module):
    """One call of `op`, its tensor arguments the module's inputs and the rest fixed."""

    def __init__(self, op: Any, flat: list[Any], spec: Any, positions: list[int]):
        super().__init__()
        self.op, self.flat, self.spec, self.positions = op, flat, spec, positions

    def forward(self, *tensors: torch.Tensor) -> Any:
        full = list(self.flat)
        for position, tensor in zip(self.positions, tensors):
            full[position] = tensor
        args, kwargs = pytree.tree_unflatten(full, self.spec)
        return self.op(*args, **kwargs)


def _samples(op: torch._ops.OpOverload) -> Iterator[tuple[str, tuple, dict]]:
    """(label, args, kwargs) of the float32 OpInfo samples of the op's base name."""
    from torchlib.conformance.engine import load_op_db

    base = op._schema.name.removeprefix("aten::")
    for (name, variant), info in sorted(load_op_db().items()):
        if base not in (name, info.aten_name) or torch.float32 not in info.supported_dtypes("cpu"):
            continue
        for i, sample in enumerate(info.sample_inputs("cpu", torch.float32)):
            label = f"OpInfo {name}{'.' + variant if variant else ''} float32 sample {i}"
            yield label, (sample.input, *sample.args), dict(sample.kwargs)
