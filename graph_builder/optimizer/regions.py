"""Constant regions evaluated in one onnxruntime session run (constant folding's fast path).

Folding node by node runs a session per node and keeps every intermediate result: timm's NFNet
standardises each conv weight in float64 with 25 nodes, 1283 single-node runs for eca_nfnet_l0's
57 weights, each intermediate a new array (float64 copies of the weights among them). A region is a node and every node after it computed from constants and
the region's own results (what `folding._fold_cone` grows into); `evaluate` computes the values
that leave it in one run, the intermediates staying inside onnxruntime, in buffers it reuses.

The values are the bits the node-by-node evaluation gives: onnxruntime runs each node of the
region with the kernel it runs the node with alone (graph optimizations off, so no node is fused
with another or folded away; one thread; the constants fed as graph inputs). Where it writes an
element-wise result over an intermediate it no longer needs, or a Reshape aliases its input, the
values are the same. What onnxruntime computes through Casts it inserts itself stays out of
regions: float16, bfloat16, float8 and float4 (its CPU kernels for many ops take them as float32,
and two such nodes in one graph may share the Casts between them, skipping a rounding), as do
strings and complex numbers. tests/graph_builder/optimizer/test_regions.py compares both
evaluations bit for bit (every result, and only the last one), float64 reductions included.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import onnx
import onnxruntime as ort

from graph_builder import ir, types
from graph_builder.ir import Node, Value
from graph_builder.optimizer.editing import Uses
from graph_builder.weight_sources import release

# the dtypes onnxruntime's CPU kernels compute in directly
_DIRECT = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                 np.uint32, np.uint64, np.bool_)}
# (opset, the region's structure, input dtypes) -> (session, its output names), or None: not built
_SESSIONS: dict[Any, tuple[ort.InferenceSession, list[str]] | None] = {}
_MAX_SESSIONS = 256


def grow(uses: Uses, first: Node, order: dict[int, int], eligible: Callable[[Node], bool], budget_bytes: int) -> list[Node]:
    """`first` (whose inputs are constants) and the nodes after it computed from constants and
    the region's own results, producers before readers: nodes of `order` (the graph's nodes when
    the pass began) that `eligible` takes, whose inputs and results have direct dtypes and whose
    results have static shapes, no more than `budget_bytes` in all. Empty when `first` is not one."""
    region: list[Node] = []
    inside: set[int] = set()  # nodes
    produced: set[int] = set()  # their results
    refused: set[int] = set()
    made = 0

    def add(node: Node) -> bool:
        nonlocal made
        if id(node) in inside:
            return True
        if id(node) in refused:
            return False
        refused.add(id(node))  # until added (a cycle through it is refused)
        if not uses.alive(node) or id(node) not in order or not eligible(node) or not direct(node):
            return False
        for v in node.inputs:
            if v is not None and v.const_value is None and id(v) not in produced:
                if v.producer is None or not add(v.producer):
                    return False
        size = static_bytes(node.outputs)
        if size is None or made + size > budget_bytes:
            return False
        made += size
        refused.discard(id(node))
        inside.add(id(node))
        produced.update(id(v) for v in node.outputs)
        region.append(node)
        queue.extend(n for v in node.outputs for n in uses.of(v))  # a producer added for a reader too
        return True

    queue: list[Node] = []
    if not add(first):
        return []
    while queue:
        add(queue.pop())
    return region


def direct(node: Node) -> bool:
    """Whether every input and result of `node` has a dtype onnxruntime computes in directly."""
    return all(v is None or (v.dtype is not None and v.dtype.numpy in _DIRECT) for v in (*node.inputs, *node.outputs))


def leaving(uses: Uses, region: list[Node]) -> list[Value]:
    """The region's results read after it: by a node outside it, or as graph outputs."""
    inside = {id(n) for n in region}
    return [v for node in region for v in node.outputs
            if id(v) in uses.outputs or any(id(n) not in inside for n in uses.of(v))]


def static_bytes(values: list[Value]) -> int | None:
    """The bytes of these values by their static types; None when one is not static."""
    total = 0
    for v in values:
        if v.dtype is None or v.dtype.numpy is None or v.shape is None or not all(type(d) is int for d in v.shape):
            return None
        total += math.prod(cast("tuple[int, ...]", v.shape)) * v.dtype.itemsize
    return total


def evaluate(region: list[Node], wanted: list[Value], opset: int) -> list[np.ndarray] | None:
    """The `wanted` results of the region (nodes from `grow`), computed in one session run from
    the constants it reads; None when onnx or onnxruntime refuses the graph or a node's values
    (folding then evaluates the nodes one by one, and says nothing new)."""
    feeds: list[np.ndarray] = []
    where: dict[int, tuple[int, ...]] = {}  # id(value) -> (input k,) or (node j, output i)
    structure = []
    for j, node in enumerate(region):
        refs: list[tuple[int, ...] | None] = []
        for v in node.inputs:
            if v is not None and id(v) not in where:  # a constant: the region's results are placed below
                where[id(v)] = (len(feeds),)
                feeds.append(np.asarray(v.const_value))
            refs.append(None if v is None else where[id(v)])
        where.update((id(v), (j, i)) for i, v in enumerate(node.outputs))
        attributes = tuple((k, ir._freeze(a)) for k, a in node.attributes.items())
        structure.append((node.domain, node.op_type, attributes, tuple(refs), len(node.outputs)))
    outputs = tuple(where[id(v)] for v in wanted)
    key = (opset, tuple(structure), outputs, tuple(a.dtype for a in feeds))
    if key not in _SESSIONS:
        if len(_SESSIONS) >= _MAX_SESSIONS:
            _SESSIONS.clear()
        _SESSIONS[key] = _session(region, structure, outputs, feeds, opset)
    built = _SESSIONS[key]
    if built is None:
        return None
    session, names = built
    try:
        return session.run(names, {f"input_{k}": a for k, a in enumerate(feeds)})
    except Exception:  # a node onnxruntime fails on with these values (folding evaluates it alone)
        return None
    finally:
        for a in feeds:
            release(a)  # weights mapped from a checkpoint leave memory again


def _session(region: list[Node], structure: list[Any], outputs: tuple[tuple[int, ...], ...], feeds: list[np.ndarray],
             opset: int) -> tuple[ort.InferenceSession, list[str]] | None:
    """A session computing the region's `outputs` ((node, output) positions) from its constants,
    the graph inputs `input_k`; None when onnx's shape inference or onnxruntime refuses it."""
    graph = ir.Graph("region", {"": opset})  # ONNX ops only (folding's `eligible`)
    graph.inputs = [Value(f"input_{k}", types.from_numpy(a.dtype), None) for k, a in enumerate(feeds)]
    made: list[list[Value]] = []
    for j, (node, (_, _, _, refs, n_outputs)) in enumerate(zip(region, structure)):
        inputs = [None if r is None else graph.inputs[r[0]] if len(r) == 1 else made[r[0]][r[1]] for r in refs]
        copy = Node(node.domain, node.op_type, inputs, dict(node.attributes), dict(node.attr_types), f"node_{j}")
        copy.outputs = [Value(f"result_{j}_{i}", None, None, copy, i) for i in range(n_outputs)]
        made.append(copy.outputs)
        graph.nodes.append(copy)
    graph.outputs = [made[j][i] for j, i in outputs]
    model = graph.to_model()
    try:
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        del model.graph.output[:]
        model.graph.output.extend(inferred.graph.output)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 4
        options.enable_cpu_mem_arena = False  # a cached session keeps no buffers between runs
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception:  # a node onnx or onnxruntime refuses here (folding evaluates it alone)
        return None
    return session, [v.name for v in graph.outputs]
