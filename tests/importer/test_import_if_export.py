"""If under torch.export with a branch whose sizes come from NonZero (unbacked): the branch's
Range over that length keeps its exact size. torch.export's non-strict mode replaces Python's
builtin max, and inside a torch.cond branch (traced by Dynamo) that replacement returned the
minimum (torch 2.13): `max(count, 0)` sized the Range Min(0, u), so that this export failed
(a guard on the unbacked length) and the imported Faster R-CNN's exported program failed its
runtime assertion `Eq(u, Min(0, u))`. The importer's shape arithmetic uses torch.sym_max /
torch.sym_min instead."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import torch
from onnx import TensorProto as T
from onnx import helper as h

from torchlib.importer import import_onnx


def _model() -> onnx.ModelProto:
    """idx = NonZero(x > 0); if any: idx + Range(0, len(idx)) * 10 else idx."""
    then = h.make_graph(
        [h.make_node("Shape", ["idx"], ["n"]), h.make_node("Squeeze", ["n"], ["count"]),
         h.make_node("Range", ["zero", "count", "one"], ["r"]), h.make_node("Mul", ["r", "ten"], ["r10"]),
         h.make_node("Add", ["idx", "r10"], ["y"])], "then", [], [h.make_tensor_value_info("y", T.INT64, None)],
        initializer=[onnx.numpy_helper.from_array(np.array(v, np.int64), name)
                     for name, v in (("zero", 0), ("one", 1), ("ten", 10))])  # fmt: skip
    other = h.make_graph([h.make_node("Identity", ["idx"], ["z"])], "else", [],
                         [h.make_tensor_value_info("z", T.INT64, None)])
    nodes = [h.make_node("Greater", ["x", "zero_f"], ["pos"]), h.make_node("NonZero", ["pos"], ["nz"]),
             h.make_node("Reshape", ["nz", "flat"], ["idx"]), h.make_node("ReduceMax", ["x"], ["top"], keepdims=0),
             h.make_node("Greater", ["top", "zero_f"], ["any"]),
             h.make_node("If", ["any"], ["y"], then_branch=then, else_branch=other)]
    graph = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
                         [h.make_tensor_value_info("y", T.INT64, [None])],
                         initializer=[onnx.numpy_helper.from_array(np.array(0, np.float32), "zero_f"),
                                      onnx.numpy_helper.from_array(np.array([-1], np.int64), "flat")])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)


def test_exported_if_with_unbacked_range_matches_onnxruntime():
    model = _model()
    session = ort.InferenceSession(model.SerializeToString())
    rng = np.random.default_rng(0)
    program = torch.export.export(import_onnx(model), (torch.from_numpy(rng.standard_normal(12).astype(np.float32)),),
                                  dynamic_shapes=({0: torch.export.Dim("n")},))
    for n in (12, 30, 5):
        x = rng.standard_normal(n).astype(np.float32)
        (want,) = session.run(None, {"x": x})
        np.testing.assert_array_equal(program.module()(torch.from_numpy(x)).numpy(), want)

