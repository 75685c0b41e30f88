"""The importer's registry: ONNX (domain, op type, opset range) -> a converter.

The ATen registry turned around. A converter is a function `fn(ctx, *inputs)` that receives the
node's context (`Ctx`: attributes, constant inputs, the FX graph to add to) and one FX node per
ONNX input (None for an omitted optional input), and returns the FX node of each ONNX output (one
node, or a tuple of them).

    @onnx_op("", "Add", since=7)
    def add(ctx, a, b):
        return ctx.call(torch.add, a, b)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import onnx

Converter = Callable[..., Any]

# (domain, op_type) -> [(since, until (exclusive, None: open), converter)]
_TABLE: dict[tuple[str, str], list[tuple[int, int | None, Converter]]] = {}


def _domain(domain: str) -> str:
    return "" if domain == "ai.onnx" else domain


def onnx_op(domain: str, op_type: str, since: int = 1, until: int | None = None) -> Callable[[Converter], Converter]:
    """Register `fn` for `op_type` of `domain` at opsets [since, until)."""

    def register(fn: Converter) -> Converter:
        entries = _TABLE.setdefault((_domain(domain), op_type), [])
        for lo, hi, other in entries:
            if lo < (until or 10**9) and since < (hi or 10**9):
                raise ValueError(f"{domain}:{op_type} opsets [{since}, {until}) overlap {other.__qualname__}'s [{lo}, {hi})")
        entries.append((since, until, fn))
        return fn

    return register


def lookup(domain: str, op_type: str, opset: int) -> Converter | None:
    """The converter for `op_type` at `opset` of `domain`, or None."""
    for lo, hi, fn in _TABLE.get((_domain(domain), op_type), ()):
        if lo <= opset and (hi is None or opset < hi):
            return fn
    return None


def registered() -> list[tuple[str, str, int, int | None]]:
    """Every (domain, op type, since, until) registered, sorted."""
    return sorted((d, o, lo, hi) for (d, o), entries in _TABLE.items() for lo, hi, _ in entries)


def all_nodes(graph: onnx.GraphProto) -> Iterator[onnx.NodeProto]:
    """Every node of the graph and of its subgraphs (If / Loop / Scan bodies), depth first."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                yield from all_nodes(g)
