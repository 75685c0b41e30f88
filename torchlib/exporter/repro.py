"""A one-node repro of a differing FX node: its ATen op alone, on the inputs it had, exported
with torchlib and compared with torch."""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.utils._pytree as pytree

from torchlib.exporter.source import source_line

_SCRIPT = '''"""Repro of FX node {node!r} ({op}), written by verify(compare_intermediates=True).
In the model: {source}

Run `python repro.py`: it exports {op} alone on the recorded inputs (inputs.pt) with torchlib
and fails when the ONNX model differs from torch. To test a function given to export as
`functions=`, call main(functions={{...}}) with it."""

import os

import torch
import torch.utils._pytree as pytree

import torchlib

OP = torch.ops.{qualified}
HERE = os.path.dirname(os.path.abspath(__file__))


class OneOp(torch.nn.Module):
    def __init__(self, leaves, spec, positions):
        super().__init__()
        self.leaves, self.spec, self.positions = leaves, spec, positions

    def forward(self, *tensors):
        leaves = list(self.leaves)
        for i, t in zip(self.positions, tensors):
            leaves[i] = t
        args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return OP(*args, **kwargs)


def main(functions=None):
    recorded = torch.load(os.path.join(HERE, "inputs.pt"), weights_only=True)
    leaves, spec = pytree.tree_flatten((recorded["args"], recorded["kwargs"]))
    positions = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    tensors = tuple(leaves[i] for i in positions)
    module = OneOp([None if i in positions else x for i, x in enumerate(leaves)], spec, positions)
    result = torchlib.export(module, tensors, functions=functions, check=False)
    diffs = result.verify(*tensors)
    for d in diffs:
        print(f"{{d.name}}: max abs {{d.max_abs:.3g}}, max rel {{d.max_rel:.3g}} {{'ok' if d.ok() else 'DIFFERS'}}")
    if not all(d.ok() for d in diffs):
        raise AssertionError("{op} differs from torch on the recorded inputs")


if __name__ == "__main__":
    main()
'''


def write_repro(node: torch.fx.Node, values: dict[str, Any], directory: str | os.PathLike[str]) -> str:
    """Write repro.py and inputs.pt for `node` (its inputs from `values`, the recorded torch
    values by FX node name) into `directory`; the script's path."""
    os.makedirs(directory, exist_ok=True)

    def value(x: Any) -> Any:
        return values[x.name] if isinstance(x, torch.fx.Node) else x

    args, kwargs = pytree.tree_map(value, (node.args, dict(node.kwargs)), is_leaf=lambda x: isinstance(x, torch.fx.Node))
    torch.save({"args": args, "kwargs": kwargs}, os.path.join(directory, "inputs.pt"))
    target = node.target
    if not isinstance(target, torch._ops.OpOverload):
        raise TypeError(f"a repro is written for an ATen op; FX node {node.name!r} calls {target}")
    qualified = f"{target.namespace}.{target._opname}.{target._overloadname}"
    path = os.path.join(directory, "repro.py")
    with open(path, "w") as f:
        f.write(_SCRIPT.format(node=node.name, op=str(target), source=source_line(node) or "<unknown>",
                               qualified=qualified))
    return path
