"""Loop under torch.export: a trip count and a condition known only at run time become
torch.while_loop, and one exported program runs any trip count, matching onnxruntime."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto as T
from onnx import helper as h

from torchlib.importer import import_onnx


def _loop_model() -> onnx.ModelProto:
    """y = x; up to `trip` times, while sum(y) < lim: y = 2 y + x (x read from the outer scope)."""
    body = h.make_graph(
        [h.make_node("Mul", ["y_in", "two"], ["m"]), h.make_node("Add", ["m", "x"], ["y_out"]),
         h.make_node("ReduceSum", ["y_out"], ["s"], keepdims=0), h.make_node("Less", ["s", "lim"], ["c_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []), h.make_tensor_value_info("c", T.BOOL, []),
                 h.make_tensor_value_info("y_in", T.FLOAT, None)],
        [h.make_tensor_value_info("c_out", T.BOOL, []), h.make_tensor_value_info("y_out", T.FLOAT, None)],
        initializer=[onnx.numpy_helper.from_array(np.array(2, np.float32), "two")])  # fmt: skip
    graph = h.make_graph(
        [h.make_node("Loop", ["trip", "cond", "x"], ["y"], body=body)], "g",
        [h.make_tensor_value_info("trip", T.INT64, []), h.make_tensor_value_info("cond", T.BOOL, []),
         h.make_tensor_value_info("x", T.FLOAT, ["n"]), h.make_tensor_value_info("lim", T.FLOAT, [])],
        [h.make_tensor_value_info("y", T.FLOAT, ["n"])])  # fmt: skip
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)


@pytest.fixture(scope="module")
def exported() -> tuple[onnx.ModelProto, torch.export.ExportedProgram]:
    model = _loop_model()
    args = (torch.tensor(3), torch.tensor(True), torch.randn(4), torch.tensor(1e6))
    dims = (None, None, {0: torch.export.Dim.AUTO}, None)
    return model, torch.export.export(import_onnx(model), args, dynamic_shapes=dims)


def test_loop_exports_as_while_loop(exported):
    _, program = exported
    assert any(isinstance(n.target, torch._ops.HigherOrderOperator) and "while_loop" in str(n.target.name())
               for n in program.graph.nodes)  # fmt: skip


@pytest.mark.parametrize(("trip", "limit", "n"), [(0, 1e6, 4), (3, 1e6, 4), (7, 1e6, 6), (50, 100.0, 5)])
def test_exported_loop_matches_onnxruntime(exported, trip, limit, n):
    model, program = exported
    rng = np.random.default_rng(trip)
    feeds = {"trip": np.array(trip), "cond": np.array(True), "x": np.abs(rng.standard_normal(n)).astype(np.float32),
             "lim": np.array(limit, np.float32)}  # fmt: skip
    (want,) = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    with torch.no_grad():
        got = program.module()(*[torch.from_numpy(np.asarray(feeds[k])) for k in ("trip", "cond", "x", "lim")])
    torch.testing.assert_close(got, torch.from_numpy(want), rtol=1e-6, atol=0)
