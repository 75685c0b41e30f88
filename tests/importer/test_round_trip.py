"""Round trips: torchlib.export -> import_onnx -> compare with torch; then the imported module
-> torchlib.export -> onnxruntime -> compare. Plus fine-tuning an imported model, the GraphModule's
conventions (parameters, names, meta) and the errors for what cannot be imported."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto
from onnx import helper as h

import torchlib
from torchlib.exporter import demo_models
from torchlib.importer import OnnxImportError, import_onnx


def _encoder() -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    layer = torch.nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True)
    return torch.nn.TransformerEncoder(layer, 2), (torch.randn(2, 5, 16),)


def _flat(x: object) -> list[torch.Tensor]:
    return list(x) if isinstance(x, (tuple, list)) else [x]  # type: ignore[list-item]


MODELS = {"resnet": demo_models.resnet, "lstm": demo_models.lstm_model, "encoder": _encoder,
          "gpt": demo_models.rms_rope_decoder}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_export_import_export(name):
    torch.manual_seed(0)
    model, args = MODELS[name]()
    model.eval()
    proto = torchlib.export(model, args).model_proto
    gm = import_onnx(proto)
    with torch.no_grad():
        want = _flat(model(*args))
        got = _flat(gm(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    again = torchlib.export(gm, args).model_proto
    session = ort.InferenceSession(again.SerializeToString())
    outs = session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})
    for o, w in zip(outs, want):
        np.testing.assert_allclose(o, w.numpy(), rtol=1e-4, atol=1e-5)


def test_fine_tune_imported_model():
    torch.manual_seed(0)
    model, args = demo_models.resnet()
    gm = import_onnx(torchlib.export(model.eval(), args).model_proto)
    params = dict(gm.named_parameters())
    assert params, "floating point initializers must be parameters"
    before = {k: v.detach().clone() for k, v in params.items()}
    opt = torch.optim.SGD(gm.parameters(), lr=0.1)
    loss0 = gm(*args).square().mean()
    loss0.backward()
    opt.step()
    changed = [k for k, v in gm.named_parameters() if not torch.equal(v.detach(), before[k])]
    assert changed, "one optimizer step changes the parameters"
    loss1 = gm(*args).square().mean()
    assert float(loss1.detach()) != float(loss0.detach())


def test_fine_tune_step_matches_the_original_model():
    """Three Adam steps on the imported module and on the torch model it came from: the same
    parameters (by name) and the same losses."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.GELU(), torch.nn.LayerNorm(16), torch.nn.Linear(16, 3))
    x, target = torch.randn(8, 6), torch.randn(8, 3)
    gm = import_onnx(torchlib.export(model, (x,)).model_proto)
    assert [k for k, _ in gm.named_parameters()] == [k for k, _ in model.named_parameters()]
    losses = []
    for module in (model, gm):
        opt = torch.optim.Adam(module.parameters(), lr=0.01)
        run = []
        for _ in range(3):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(module(x), target)
            loss.backward()
            opt.step()
            run.append(float(loss.detach()))
        losses.append(run)
    assert losses[0][0] > losses[0][-1]
    torch.testing.assert_close(torch.tensor(losses[1]), torch.tensor(losses[0]), rtol=1e-5, atol=1e-6)
    for (name, p), (_, q) in zip(gm.named_parameters(), model.named_parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6, msg=name)


def _model(nodes, inputs, outputs, inits=(), opset=18):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


def test_names_meta_and_buffers():
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])
    w = onnx.numpy_helper.from_array(np.ones((3, 2), np.float32), "layer.0.weight")
    shape = onnx.numpy_helper.from_array(np.array([3, 2], np.int64), "shape")
    nodes = [h.make_node("Reshape", ["x", "shape"], ["r"], name="reshape0"),
             h.make_node("Add", ["r", "layer.0.weight"], ["y"], name="add0")]
    gm = import_onnx(_model(nodes, [x], [y], [w, shape]))
    assert [n for n, _ in gm.named_parameters()] == ["layer.0.weight"]
    # an integer constant read as a shape is passed as Python ints: no buffer is left for it
    assert [n for n, _ in gm.named_buffers()] == []
    reshape = next(n for n in gm.graph.nodes if n.meta.get("onnx_op_type") == "Reshape")
    assert reshape.args[1] == (3, 2)
    metas = {n.meta.get("onnx_name"): n.meta.get("onnx_op_type") for n in gm.graph.nodes if n.op == "call_function"}
    assert metas == {"reshape0": "Reshape", "add0": "Add"}
    out = gm(torch.arange(6.0).reshape(2, 3))
    torch.testing.assert_close(out, torch.arange(6.0).reshape(3, 2) + 1)


def test_unknown_op_error_names_op_node_and_opset():
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    node = h.make_node("NoSuchOp", ["x"], ["y"], name="mystery", domain="my.domain")
    model = h.make_model(h.make_graph([node], "g", [x], [x]),
                         opset_imports=[h.make_opsetid("", 18), h.make_opsetid("my.domain", 3)])
    with pytest.raises(OnnxImportError, match=r"'mystery' \(my.domain:NoSuchOp, opset 3\)"):
        import_onnx(model)


def test_old_opset_is_version_converted_or_the_node_named():
    x, y = h.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]), h.make_tensor_value_info("y", TensorProto.FLOAT, None)
    relu = h.make_node("Relu", ["x"], ["r"], name="first")
    converts = h.make_model(h.make_graph([relu, h.make_node("Neg", ["r"], ["y"])], "g", [x], [y]),
                            opset_imports=[h.make_opsetid("", 6)], ir_version=3)
    data = torch.randn(2, 3)
    torch.testing.assert_close(import_onnx(converts)(data), -torch.relu(data))
    custom = h.make_model(h.make_graph([relu, h.make_node("ATen", ["r"], ["y"], name="custom_op")], "g", [x], [y]),
                          opset_imports=[h.make_opsetid("", 6)], ir_version=3)
    with pytest.raises(OnnxImportError, match=r"opset 6; .* could not bring node 'custom_op' \(ATen\) to opset 7"):
        import_onnx(custom)


def test_sequence_input_is_refused():
    seq = h.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)
    y = h.make_tensor_value_info("y", TensorProto.INT64, [])
    model = _model([h.make_node("SequenceLength", ["s"], ["y"])], [seq], [y])
    with pytest.raises(OnnxImportError, match="graph input 's' has type sequence"):
        import_onnx(model)


def test_string_input_is_refused():
    x = h.make_tensor_value_info("x", TensorProto.STRING, [2])
    model = _model([h.make_node("Identity", ["x"], ["y"])], [x], [x])
    with pytest.raises(OnnxImportError, match="STRING has no torch tensor type"):
        import_onnx(model)


def test_if_becomes_taken_branch_in_eager_mode():
    cond = h.make_tensor_value_info("c", TensorProto.BOOL, [])
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    then = h.make_graph([h.make_node("Neg", ["x"], ["t"])], "then", [], [h.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
    other = h.make_graph([h.make_node("Abs", ["x"], ["e"])], "else", [], [h.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
    model = _model([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other)], [cond, x], [y])
    gm = import_onnx(model)
    v = torch.tensor([-1.0, 2.0])
    torch.testing.assert_close(gm(torch.tensor(True), v), -v)
    torch.testing.assert_close(gm(torch.tensor(False), v), v.abs())


@pytest.mark.parametrize("name", ["encoder", "gpt"])
def test_imported_transformer_exports_with_dynamic_batch_and_sequence(name):
    """Shape subgraphs stay symbolic: torch.export captures the imported module with dynamic
    batch and sequence, and the program runs at other sizes."""
    torch.manual_seed(0)
    model, args = MODELS[name]()
    model.eval()
    dims = tuple({0: "batch", 1: "seq"} for _ in args)
    gm = import_onnx(torchlib.export(model, args, dynamic_shapes=dims).model_proto)
    auto = torch.export.Dim.AUTO
    program = torch.export.export(gm, args, dynamic_shapes=tuple({0: auto, 1: auto} for _ in args))
    other = torch.randn(3, 7, 16) if name == "encoder" else torch.randint(0, 200, (3, 9))
    with torch.no_grad():
        torch.testing.assert_close(program.module()(other), model(other), rtol=1e-4, atol=1e-5)


def test_external_data_is_mapped_and_trainable(tmp_path):
    x = h.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = h.make_tensor_value_info("y", TensorProto.FLOAT, [4, 16])
    weight = np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32)
    w = onnx.numpy_helper.from_array(weight, "fc.weight")
    model = _model([h.make_node("MatMul", ["x", "fc.weight"], ["y"])], [x], [y], [w])
    path = tmp_path / "m.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="m.data", size_threshold=0)
    gm = import_onnx(path)
    v = torch.randn(4, 8)
    torch.testing.assert_close(gm(v), v @ torch.from_numpy(weight))
    opt = torch.optim.SGD(gm.parameters(), lr=0.1)
    gm(v).sum().backward()
    opt.step()  # in place on the mapping: private pages
    assert not torch.equal(gm.get_parameter("fc.weight").detach(), torch.from_numpy(weight))
    assert np.array_equal(np.fromfile(tmp_path / "m.data", np.float32).reshape(8, 16), weight)


@pytest.mark.parametrize("name", ["encoder", "resnet"])
def test_torch_onnx_exported_model_imports(name):
    """A file from the other exporter (torch.onnx, dynamo=True, dynamic batch): the import matches
    torch and onnxruntime at a batch size other than the exported one."""
    import warnings

    torch.manual_seed(0)
    model, args = MODELS[name]()
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        proto = torch.onnx.export(model, args, dynamo=True, dynamic_shapes=({0: "batch"},), verbose=False).model_proto
    gm = import_onnx(proto)
    x = torch.randn(3, *args[0].shape[1:])
    with torch.no_grad():
        want = model(x)
        got = gm(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    (ort_out,) = session.run(None, {proto.graph.input[0].name: x.numpy()})
    torch.testing.assert_close(got, torch.from_numpy(ort_out), rtol=1e-4, atol=1e-5)
