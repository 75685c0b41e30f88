"""Helpers shared by the special-function modules."""

from __future__ import annotations

from collections.abc import Callable

from graph_builder import GraphBuilder, op
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from graph_builder.types import BFLOAT16, DOUBLE, FLOAT, FLOAT16, DType

D64 = frozenset({DOUBLE})


def rounding_to(dtype: DType) -> Callable[[Value], Value]:
    """Round an intermediate to a half type and back: torch's half kernels round after every
    step, and matching them needs the same roundings."""
    if dtype not in (FLOAT16, BFLOAT16):
        return lambda v: v
    return lambda v: op.Cast(op.Cast(v, to=dtype.onnx), to=v.known_dtype.onnx)


def float32_or_64(name: str, x: Value) -> None:
    if x.dtype not in (FLOAT, DOUBLE):
        raise TypeError(f"aten::{name} is implemented for float32 and float64 only (torch has no {x.dtype} kernel either)")


def loop_builder(name: str) -> GraphBuilder:
    """A builder for a Loop body: a subgraph of the graph being traced, or (eagerly) a graph
    of its own, whose captured values become constants."""
    ev = current_evaluator()
    return ev.subgraph(name) if isinstance(ev, GraphBuilder) else GraphBuilder(name=name)
