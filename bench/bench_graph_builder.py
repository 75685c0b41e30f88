"""Benchmark graph_builder: eager overhead per op, and tracing cost per node.

    python bench/bench_graph_builder.py [--nodes 10000] [--repeat 2000]

Eager overhead: the time of `op.X(...)` outside any graph, after warm-up, minus the time of a
direct `session.run` of the same single-node model on the same inputs. Tracing cost: the time
to trace a graph of about 10,000 nodes of mixed transformer-like ops (symbolic batch and
sequence dims, 64x64 float weights: about 18 MB), and the time of `to_model()` with its
`onnx.checker.check_model(full_check=True)` pass, both per node.
Targets: at most 30 us eager overhead per op, at most 30 us per node for trace + to_model().

Times are CPU times of this process (time.process_time), so that other work on a shared
machine inflates them less than wall-clock times would.
"""

from __future__ import annotations

import os as _os
import sys as _sys

_sys.path.insert(0, _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))  # this checkout's torchlib

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch

from graph_builder import FLOAT, INT64, GraphBuilder, Value, op
from graph_builder.evaluator import EAGER

EAGER_TARGET_US = 30.0
TRACE_TARGET_US = 30.0


def _best_per_call(fn: Callable[[], Any], repeat: int, rounds: int = 5) -> float:
    """Best mean time of one call over `rounds` rounds of `repeat` calls, in microseconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(repeat):
            fn()
        best = min(best, (time.process_time() - start) / repeat)
    return best * 1e6


def _direct_session(name: str, arrays: list[np.ndarray], attrs: dict[str, Any]) -> Callable[[], Any]:
    """session.run of the single-node model the eager evaluator builds for this call."""
    inputs = [onnx.helper.make_tensor_value_info(f"input_{i}", onnx.helper.np_dtype_to_tensor_dtype(a.dtype), None)
              for i, a in enumerate(arrays)]  # fmt: skip
    node = onnx.helper.make_node(name, [i.name for i in inputs], ["output_0"], **attrs)
    graph = onnx.helper.make_graph([node], "bench", inputs, [onnx.helper.make_value_info("output_0", onnx.TypeProto())])
    model = onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 23)], ir_version=10)
    session = ort.InferenceSession(model.SerializeToString(), EAGER._options, providers=["CPUExecutionProvider"])
    feeds = {f"input_{i}": a for i, a in enumerate(arrays)}
    return lambda: session.run(None, feeds)


def bench_eager(repeat: int) -> list[tuple[str, float, float, float]]:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 8)).astype(np.float32)
    idx = np.array([0, 2, 1], dtype=np.int64)
    shape = np.array([8, 4], dtype=np.int64)
    cases: list[tuple[str, Callable[[], Any], str, list[np.ndarray], dict[str, Any]]] = [
        ("Add(np, np)", lambda: op.Add(a, b), "Add", [a, b], {}),
        ("Relu(np)", lambda: op.Relu(a), "Relu", [a], {}),
        ("MatMul(np, np)", lambda: op.MatMul(a, w), "MatMul", [a, w], {}),
        ("Softmax(np, axis=-1)", lambda: op.Softmax(a, axis=-1), "Softmax", [a], {"axis": -1}),
        ("Transpose(np, perm)", lambda: op.Transpose(a, perm=[1, 0]), "Transpose", [a], {"perm": [1, 0]}),
        ("Reshape(np, np)", lambda: op.Reshape(a, shape), "Reshape", [a, shape], {}),
        ("Gather(np, np, axis=0)", lambda: op.Gather(a, idx, axis=0), "Gather", [a, idx], {"axis": 0}),
        ("Mul(np, 2.0) scalar", lambda: op.Mul(a, 2.0), "Mul", [a, np.array(2.0, np.float32)], {}),
    ]
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    cases.append(("Add(torch, torch)", lambda: op.Add(ta, tb), "Add", [a, b], {}))
    va, vb = Value("", FLOAT, a.shape, const_value=a), Value("", FLOAT, b.shape, const_value=b)
    cases.append(("Add(Value, Value)", lambda: op.Add(va, vb), "Add", [a, b], {}))  # torchlib's eager mode
    rows = []
    for label, call, name, arrays, attrs in cases:
        direct = _direct_session(name, arrays, attrs)
        for _ in range(50):  # warm-up: session creation and caches
            call()
            direct()
        t_op = _best_per_call(call, repeat)
        t_direct = _best_per_call(direct, repeat)
        rows.append((label, t_op, t_direct, t_op - t_direct))
    return rows


NODES_PER_BLOCK = 28


def make_weights(n_nodes: int, hidden: int = 64) -> list[np.ndarray]:
    """Distinct random weights for every block, made before the clock starts."""
    rng = np.random.default_rng(0)
    n_blocks = n_nodes // NODES_PER_BLOCK + 2
    return [rng.standard_normal((hidden, hidden)).astype(np.float32) for _ in range(3 * n_blocks + 1)]


def build_graph(n_nodes: int, weights: list[np.ndarray] | None = None, hidden: int = 64) -> tuple[GraphBuilder, int]:
    """A stack of attention-like blocks (28 nodes each) over a [batch, seq, hidden] input until
    about n_nodes: LayerNormalization, Shape, Slice, Concat, MatMul, Reshape, Transpose, Div,
    Greater, Cast, Mul, Softmax, Gather, Unsqueeze, Less, Relu, Where, Add."""
    weights = weights if weights is not None else make_weights(n_nodes, hidden)
    heads = 4
    g = GraphBuilder(opset=23, name="bench")
    x = g.input("x", FLOAT, ["batch", "seq", hidden])
    ids = g.input("ids", INT64, ["batch", "seq"])
    emb = g.initializer("embedding", weights[-1])
    block = 0
    with g:
        h = op.Add(x, op.Gather(emb, ids, axis=0))
        while len(g.graph.nodes) < n_nodes:
            p = f"layers.{block}."
            wq = g.initializer(p + "wq", weights[3 * block])
            wk = g.initializer(p + "wk", weights[3 * block + 1])
            wo = g.initializer(p + "wo", weights[3 * block + 2])
            scale = g.initializer(p + "ln.weight", np.ones(hidden, np.float32))
            bias = g.initializer(p + "ln.bias", np.zeros(hidden, np.float32))
            normed = op.LayerNormalization(h, scale, bias, axis=-1, epsilon=1e-5)
            shape = op.Shape(normed)
            batch_seq = op.Slice(shape, [0], [2], [0])
            heads_shape = op.Concat(batch_seq, [heads, hidden // heads], axis=0)
            q = op.Transpose(op.Reshape(op.MatMul(normed, wq), heads_shape), perm=[0, 2, 1, 3])
            k = op.Transpose(op.Reshape(op.MatMul(normed, wk), heads_shape), perm=[0, 2, 3, 1])
            scores = op.Div(op.MatMul(q, k), float(np.sqrt(hidden // heads)))
            mask = op.Cast(op.Greater(scores, -1e4), to=FLOAT.onnx)
            probs = op.Softmax(op.Mul(scores, mask), axis=-1)
            ctx = op.MatMul(probs, op.Transpose(q, perm=[0, 1, 2, 3]))
            merged = op.Reshape(op.Transpose(ctx, perm=[0, 2, 1, 3]), op.Concat(batch_seq, [hidden], axis=0))
            gathered = op.Unsqueeze(op.Gather(merged, 0, axis=1), [1])
            mixed = op.Where(op.Less(merged, gathered), merged, op.Relu(merged))
            h = op.Add(h, op.MatMul(mixed, wo))
            block += 1
    g.output(h, "y")
    return g, len(g.graph.nodes)


def bench_trace(n_nodes: int, rounds: int = 3) -> tuple[int, float, float]:
    """Best of `rounds` builds and to_model() calls, per node."""
    weights = make_weights(n_nodes)
    build_graph(300, weights)[0].to_model()  # warm-up: schemas, session caches
    best_trace = best_emit = float("inf")
    count = 0
    for _ in range(rounds):
        gc.collect()
        start = time.process_time()
        g, count = build_graph(n_nodes, weights)
        best_trace = min(best_trace, time.process_time() - start)
        start = time.process_time()
        g.to_model()
        best_emit = min(best_emit, time.process_time() - start)
        del g
    return count, best_trace / count * 1e6, best_emit / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()

    print(f"Eager op call (best of 5 x {args.repeat} calls, after warm-up), microseconds per call")
    print(f"{'op':28s} {'op call':>9s} {'session.run':>12s} {'overhead':>9s}")
    rows = bench_eager(args.repeat)
    for label, t_op, t_direct, overhead in rows:
        print(f"{label:28s} {t_op:9.1f} {t_direct:12.1f} {overhead:9.1f}")
    mean_overhead = sum(r[3] for r in rows) / len(rows)
    worst = max(r[3] for r in rows)
    print(f"{'mean overhead':28s} {'':9s} {'':12s} {mean_overhead:9.1f}   (worst {worst:.1f}, target <= {EAGER_TARGET_US:.0f})")
    print()
    count, trace_us, emit_us = bench_trace(args.nodes)
    print(f"Tracing a graph of {count} nodes (mixed ops, symbolic batch and seq; best of 3), microseconds per node")
    print(f"{'trace':28s} {trace_us:9.1f}")
    print(f"{'to_model() incl. checker':28s} {emit_us:9.1f}")
    total = trace_us + emit_us
    print(f"{'total':28s} {total:9.1f}   (target <= {TRACE_TARGET_US:.0f})")


if __name__ == "__main__":
    main()
