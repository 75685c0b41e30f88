"""Ops that read their input's storage, not its elements: `as_strided` and `as_strided_copy`.

Their size, stride and storage_offset index the memory the input views, so the answer depends
on the input's strides: `x.transpose(0, 1).as_strided(...)` reads x's elements in x's order.
A graph has no memory layout. torchlib's functions read the input's elements in row-major order,
which is the storage when the input is contiguous and starts the storage. For any other input
the exporter hands the function the storage instead, made from the FX node's layout (its fake
tensor's strides and storage offset): the input's elements put in memory order (a Transpose to
the order of decreasing strides, then flattened), and the offset made relative to it. An input
that does not cover its memory densely (a strided slice) raises: the elements between its own
are not in the graph.
"""

from __future__ import annotations

from typing import Any

import sympy
import torch

from graph_builder import op
from graph_builder.ir import Value

READS_STORAGE = frozenset({"aten::as_strided", "aten::as_strided_copy"})


def storage_arguments(node: torch.fx.Node, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """args and kwargs with `self` replaced by its storage where its layout is not row-major
    from the start of its storage; called while tracing, inside the graph being built."""
    target = node.target
    if not isinstance(target, torch._ops.OpOverload) or target._schema.name not in READS_STORAGE:
        return args, kwargs
    source = node.args[0]
    val = source.meta.get("val") if isinstance(source, torch.fx.Node) else None
    if not isinstance(val, torch.Tensor) or not isinstance(args[0], Value):
        return args, kwargs
    shape, strides, offset = list(val.shape), list(val.stride()), val.storage_offset()
    if not isinstance(offset, int):
        raise ValueError(f"{target._schema.name} reads the storage of an input at a dynamic storage offset ({offset}): "
                         f"call .contiguous() on the input before {target._schema.name}")
    # memory order: decreasing strides (at the sample's sizes; the check below holds at every size),
    # a size-1 dim's stride means nothing (a dynamic size counts as more than 1)
    order = sorted((d for d in range(len(shape)) if not (isinstance(shape[d], int) and shape[d] == 1)),
                   key=lambda d: -_hint(strides[d]))
    expected: Any = sympy.Integer(1)
    for d in reversed(order):
        if sympy.simplify(_expr(strides[d]) - expected) != 0:
            raise ValueError(
                f"{target._schema.name} reads the storage of an input that does not cover its memory densely (shape "
                f"{shape}, strides {strides}): the elements between its own are not in the graph; call .contiguous() "
                f"on the input, or as_strided on the tensor it was sliced from")
        expected = expected * _expr(shape[d])
    in_order = order == sorted(order)
    if in_order and offset == 0:
        return args, kwargs
    storage = args[0] if in_order else op.Transpose(args[0], perm=[*order, *(d for d in range(len(shape)) if d not in order)])
    args = (op.Reshape(storage, [-1]), *args[1:])
    position = 3  # as_strided(self, size, stride, storage_offset=None): torch's default is the input's own offset
    given = args[position] if len(args) > position else kwargs.get("storage_offset")
    if given is None:
        relative: Any = 0
    elif isinstance(given, Value):
        relative = op.Sub(given, offset) if offset else given
    else:
        relative = given - offset
    if len(args) > position:
        args = (*args[:position], relative, *args[position + 1:])
    else:
        kwargs = {**kwargs, "storage_offset": relative}
    return args, kwargs



def _expr(n: Any) -> Any:
    """An int or SymInt as a sympy expression."""
    return sympy.Integer(n) if isinstance(n, int) else n.node.expr


def _hint(n: Any) -> int:
    """An int or SymInt's value at the sample."""
    return n if isinstance(n, int) else int(n.node.hint)
