"""`python -m torchlib import`: writes a .pt2, or lists the ops it cannot import (count, names)."""

from __future__ import annotations

import numpy as np
import onnx
import torch
from onnx import TensorProto
from onnx import helper as h

from torchlib.importer.cli import import_main


def test_import_writes_a_loadable_program(tmp_path):
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])
    w = onnx.numpy_helper.from_array(np.full((3,), 2.0, np.float32), "w")
    graph = h.make_graph([h.make_node("Mul", ["x", "w"], ["m"]), h.make_node("Relu", ["m"], ["y"])], "g", [x], [y], [w])
    path = tmp_path / "m.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]), path)
    assert import_main([str(path), "-o", str(tmp_path / "m.pt2")]) == 0
    program = torch.export.load(tmp_path / "m.pt2")
    v = torch.tensor([[-1.0, 0.5, 2.0], [1.0, 1.0, -3.0], [0.0, 4.0, 1.0]])
    torch.testing.assert_close(program.module()(v), torch.relu(v * 2))


def test_import_lists_what_it_cannot_import(tmp_path, capsys):
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    nodes = [h.make_node("Foo", ["x"], ["a"], name="foo1", domain="acme"),
             h.make_node("Foo", ["a"], ["b"], name="foo2", domain="acme"),
             h.make_node("Relu", ["b"], ["y"], name="relu")]
    graph = h.make_graph(nodes, "g", [x], [h.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    path = tmp_path / "bad.onnx"
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18), h.make_opsetid("acme", 1)]), path)
    assert import_main([str(path)]) == 2
    err = capsys.readouterr().err
    assert "acme:Foo (opset 1) x2: foo1, foo2" in err
