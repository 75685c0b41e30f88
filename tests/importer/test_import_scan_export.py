"""Scan, and Loop with scan outputs, under torch.export: torch's scan operator and a
torch.while_loop writing preallocated outputs, so that a dynamic sequence length stays dynamic
(one program for every length), matching onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto as T
from onnx import helper as h

from torchlib.importer import import_onnx


def _scan_model() -> onnx.ModelProto:
    """Over the sequence axis 1 of x [2, n, 3] (read backwards) and y [n, 3]: the state s [2, 3]
    becomes s * w + x_t + y_t (w from the outer scope); outputs the final state, every state
    (on axis 1) and s_t summed, reversed."""
    body = h.make_graph(
        [h.make_node("Mul", ["s_in", "w"], ["m"]), h.make_node("Add", ["m", "x_t"], ["a"]),
         h.make_node("Add", ["a", "y_t"], ["s_out"]), h.make_node("Identity", ["s_out"], ["every"]),
         h.make_node("ReduceSum", ["s_out"], ["total"], keepdims=0)],
        "body", [h.make_tensor_value_info("s_in", T.FLOAT, [2, 3]), h.make_tensor_value_info("x_t", T.FLOAT, [2, 3]),
                 h.make_tensor_value_info("y_t", T.FLOAT, [3])],
        [h.make_tensor_value_info("s_out", T.FLOAT, [2, 3]), h.make_tensor_value_info("every", T.FLOAT, [2, 3]),
         h.make_tensor_value_info("total", T.FLOAT, [])])  # fmt: skip
    node = h.make_node("Scan", ["s0", "x", "y"], ["s", "states", "totals"], body=body, num_scan_inputs=2,
                       scan_input_axes=[1, 0], scan_input_directions=[1, 0], scan_output_axes=[1, 0],
                       scan_output_directions=[0, 1])  # fmt: skip
    graph = h.make_graph(
        [node], "g",
        [h.make_tensor_value_info("s0", T.FLOAT, [2, 3]), h.make_tensor_value_info("x", T.FLOAT, [2, "n", 3]),
         h.make_tensor_value_info("y", T.FLOAT, ["n", 3]), h.make_tensor_value_info("w", T.FLOAT, [3])],
        [h.make_tensor_value_info("s", T.FLOAT, [2, 3]), h.make_tensor_value_info("states", T.FLOAT, [2, "n", 3]),
         h.make_tensor_value_info("totals", T.FLOAT, ["n"])])  # fmt: skip
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)


def _feeds(n: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"s0": rng.standard_normal((2, 3)).astype(np.float32), "x": rng.standard_normal((2, n, 3)).astype(np.float32),
            "y": rng.standard_normal((n, 3)).astype(np.float32), "w": rng.uniform(0.5, 1, 3).astype(np.float32)}


def _has_hop(program: torch.export.ExportedProgram, name: str) -> bool:
    return any(isinstance(n.target, torch._ops.HigherOrderOperator) and name in str(n.target.name())
               for n in program.graph.nodes)  # fmt: skip


def _check(model: onnx.ModelProto, got: tuple[torch.Tensor, ...], feeds: dict[str, np.ndarray]) -> None:
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, torch.from_numpy(w), rtol=1e-5, atol=1e-5)


def test_scan_exports_as_scan_with_dynamic_length():
    model = _scan_model()
    gm = import_onnx(model)
    args = tuple(torch.from_numpy(v) for v in _feeds(5, 0).values())
    n = torch.export.Dim("n")
    program = torch.export.export(gm, args, dynamic_shapes=(None, {1: n}, {0: n}, None))
    assert _has_hop(program, "scan")
    for length, seed in ((5, 1), (1, 2), (11, 3)):
        feeds = _feeds(length, seed)
        _check(model, gm(*map(torch.from_numpy, feeds.values())), feeds)  # eager
        _check(model, program.module()(*map(torch.from_numpy, feeds.values())), feeds)


def _loop_model() -> onnx.ModelProto:
    """y = x; up to `trip` times, while sum(y) < lim: y = 2 y + x; scan outputs: each y and i * 1.0."""
    body = h.make_graph(
        [h.make_node("Mul", ["y_in", "two"], ["m"]), h.make_node("Add", ["m", "x"], ["y_out"]),
         h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0), h.make_node("Less", ["s", "lim"], ["c_out"]),
         h.make_node("Identity", ["y_out"], ["y_scan"]), h.make_node("Cast", ["i"], ["i_scan"], to=T.FLOAT)],
        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
                 h.make_tensor_value_info("y_in", T.FLOAT, None)],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("y_out", T.FLOAT, None),
         h.make_tensor_value_info("y_scan", T.FLOAT, None), h.make_tensor_value_info("i_scan", T.FLOAT, [])],
        initializer=[onnx.numpy_helper.from_array(np.array(2, np.float32), "two")])  # fmt: skip
    graph = h.make_graph(
        [h.make_node("Loop", ["trip", "cond", "x"], ["y", "ys", "steps"], body=body)], "g",
        [h.make_tensor_value_info("trip", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("x", T.FLOAT, ["n"]), h.make_tensor_value_info("lim", T.FLOAT, [])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n"]), h.make_tensor_value_info("ys", T.FLOAT, ["k", "n"]),
         h.make_tensor_value_info("steps", T.FLOAT, ["k"])])  # fmt: skip
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)


@pytest.fixture(scope="module")
def loop_program() -> tuple[onnx.ModelProto, torch.export.ExportedProgram]:
    model = _loop_model()
    args = (torch.tensor(3), torch.tensor(True), torch.rand(4) + 0.1, torch.tensor(1e6))
    program = torch.export.export(import_onnx(model), args, dynamic_shapes=(None, None, {0: torch.export.Dim("n")}, None))
    return model, program


def test_loop_with_scan_outputs_exports_as_while_loop(loop_program):
    _, program = loop_program
    assert _has_hop(program, "while_loop")


@pytest.mark.parametrize(("trip", "limit", "n"), [(1, 1e6, 4), (3, 1e6, 4), (7, 1e6, 6), (50, 100.0, 5)])
def test_exported_loop_with_scan_outputs_matches_onnxruntime(loop_program, trip, limit, n):
    model, program = loop_program
    rng = np.random.default_rng(trip)
    feeds = {"trip": np.array(trip), "cond": np.array(True), "x": (rng.random(n) + 0.1).astype(np.float32),
             "lim": np.array(limit, np.float32)}  # fmt: skip
    with torch.no_grad():
        got = program.module()(*[torch.from_numpy(np.asarray(v)) for v in feeds.values()])
    _check(model, got, feeds)


def test_exported_loop_with_scan_outputs_runs_zero_times(loop_program):
    """Zero iterations: empty scan outputs of the graph's declared rank (onnxruntime, with no
    iteration to take the shape from, gives a rank-1 [0] against the declared [k, n]; eager
    mode refuses, having no element shape)."""
    _, program = loop_program
    x = torch.rand(4)
    y, ys, steps = program.module()(torch.tensor(0), torch.tensor(True), x, torch.tensor(1e6))
    assert torch.equal(y, x) and ys.shape == (0, 4) and steps.shape == (0,)
