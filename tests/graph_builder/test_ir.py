"""The IR: Value, Node, Graph, and the round trip ModelProto -> Graph -> ModelProto."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from onnx import helper, numpy_helper

from graph_builder import BOOL, FLOAT, INT64, Graph, GraphBuilder, Node, Value, model_from_proto, op, types
from graph_builder.ir import make_type_proto, tensor_proto, type_from_proto


def test_value_fields() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["batch", 3, None])
    assert (x.name, x.dtype, x.shape, x.rank, x.producer) == ("x", FLOAT, ("batch", 3, None), 3, None)
    assert not x.is_static and x.const_value is None
    with g:
        y = op.Relu(x)
    assert isinstance(y.producer, Node) and y.producer.op_type == "Relu" and y.producer.inputs == [x]
    assert y.producer.outputs == [y] and y.index == 0 and y.graph is g.graph
    c = g.constant([1, 2])
    assert c.const_value.tolist() == [1, 2] and c.dtype is INT64 and c.is_static and c.shape == (2,)
    assert repr(c) == "Value('const', INT64[2] = [1, 2])"
    assert repr(x) == "Value('x', FLOAT[batch,3,?])"
    with pytest.raises(ValueError, match="has no known payload"):
        x.numpy()
    with pytest.raises(TypeError, match="use op.If for data-dependent control flow"):
        bool(x)


def test_node_fields() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3])
    with g, g.metadata(source="model.py:3"):
        y = op.Softmax(x, axis=0)
    node = y.producer
    assert (node.domain, node.op_type, node.attributes, node.metadata) == ("", "Softmax", {"axis": 0}, {"source": "model.py:3"})
    proto = node.to_proto()
    assert proto.op_type == "Softmax" and list(proto.input) == ["x"] and list(proto.output) == [y.name]
    assert helper.get_attribute_value(proto.attribute[0]) == 0 and proto.name == "node_" + y.name
    assert {p.key: p.value for p in proto.metadata_props} == {"source": "model.py:3"}


def test_type_protos() -> None:
    for dtype, shape in [(FLOAT, ("n", 3, None)), (INT64, ()), (BOOL, None)]:
        tp = make_type_proto(dtype, shape)
        assert type_from_proto(tp) == (dtype, shape)
    assert not make_type_proto(FLOAT, None).tensor_type.HasField("shape")
    assert make_type_proto(FLOAT, ()).tensor_type.HasField("shape")  # a scalar is not an unknown rank


@pytest.mark.parametrize("dtype", [d for d in types.ALL_DTYPES if d is not types.STRING], ids=repr)
def test_tensor_proto_matches_numpy_helper(dtype: types.DType) -> None:
    array = (np.arange(6).reshape(2, 3) % 2).astype(dtype.numpy)
    assert tensor_proto(array, "w").SerializeToString() == numpy_helper.from_array(array, "w").SerializeToString()
    assert tensor_proto(array[:, ::2], "v").SerializeToString() == numpy_helper.from_array(array[:, ::2], "v").SerializeToString()


def test_tensor_proto_strings() -> None:
    array = np.array(["a", "bc"], dtype=object)
    assert numpy_helper.to_array(tensor_proto(array, "s")).tolist() == ["a", "bc"]


def test_graph_fields_and_model() -> None:
    g = GraphBuilder(opset=23, name="tiny")
    x = g.input("x", FLOAT, [2])
    w = g.initializer("w", np.ones(2, np.float32))
    with g:
        y = op.Add(x, w)
    g.output(y, "y")
    g.graph.metadata["source"] = "test"
    graph = g.graph
    assert (graph.name, graph.inputs, graph.outputs, graph.nodes, graph.initializers) == ("tiny", [x], [y], [y.producer], {"w": w})
    assert graph.opset_imports == {"": 23} and graph.functions == []
    model = g.to_model()
    assert model.ir_version == 10 and [(o.domain, o.version) for o in model.opset_import] == [("", 23)]
    assert {p.key: p.value for p in model.metadata_props} == {"source": "test"}
    assert [i.name for i in model.graph.initializer] == ["w"]


# -- round trips -------------------------------------------------------------------------------
def _assert_round_trip(model: onnx.ModelProto) -> Graph:
    graph = model_from_proto(model)
    again = graph.to_model()
    assert again.SerializeToString() == model.SerializeToString()
    # and once more through the reader: a fixed point
    assert model_from_proto(again).to_model().SerializeToString() == model.SerializeToString()
    return graph


def _control_flow_model() -> onnx.ModelProto:
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, ["n", 3])
    flag = g.input("flag", BOOL, [])
    w = g.initializer("w", np.arange(9, dtype=np.float32).reshape(3, 3))
    with g:
        h = op.MatMul(x, w)
        then = g.subgraph("then")
        with then:
            then.output(op.Add(h, 1.0))
        other = g.subgraph("else")
        with other:
            other.output(op.Mul(h, 2.0))
        chosen = op.If(flag, then_branch=then, else_branch=other)
        body = g.subgraph("body")
        body.input("i", INT64, [])
        cond = body.input("cond", BOOL, [])
        acc = body.input("acc", FLOAT, ["n", 3])
        with body:
            body.output(cond)
            body.output(op.Add(acc, chosen))
        looped = op.Loop(np.array(2, np.int64), None, chosen, body=body)
    g.output(looped, "y")
    with g.metadata(note="last"), g:
        g.output(op.ReduceSum(looped, keepdims=0), "total")
    return g.to_model()


def test_round_trip_builder_model_with_subgraphs() -> None:
    model = _control_flow_model()
    graph = _assert_round_trip(model)
    assert [n.op_type for n in graph.nodes] == ["MatMul", "If", "Loop", "ReduceSum"]
    if_node = graph.nodes[1]
    then = if_node.attributes["then_branch"]
    assert isinstance(then, Graph) and then.nodes[0].inputs[0] is graph.nodes[0].outputs[0]  # outer capture
    assert graph.initializers["w"].const_value.shape == (3, 3)
    assert graph.nodes[3].metadata == {"note": "last"}


def test_round_trip_keeps_ir_version_opsets_and_model_fields() -> None:
    node = helper.make_node("Relu", ["x"], ["y"], name="relu", doc_string="doc")
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["N"])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["N"])], doc_string="graph doc",
    )  # fmt: skip
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.example", 1)], ir_version=8,
        producer_name="someone", producer_version="1.0", domain="org.example", model_version=3, doc_string="model doc",
    )  # fmt: skip
    helper.set_model_props(model, {"k": "v"})
    read = _assert_round_trip(model)
    assert read.ir_version == 8 and read.opset_imports == {"": 18, "com.example": 1}
    assert (read.producer_name, read.producer_version, read.model_version) == ("someone", "1.0", 3)


def test_round_trip_of_everything_a_graph_may_hold() -> None:
    """Constant nodes (their payload known), optional inputs, sequence types, value_info with
    metadata, initializers that are also inputs, and a local function."""
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array([1.0, 2.0], np.float32)))
    clip = helper.make_node("Clip", ["x", "", "c1"], ["clipped"])
    seq = helper.make_node("SequenceConstruct", ["clipped", "c"], ["seq"])
    at = helper.make_node("SequenceAt", ["seq", "zero"], ["first"])
    call = helper.make_node("Twice", ["first"], ["y"], domain="local")
    function = helper.make_function(
        "local", "Twice", ["a"], ["b"], [helper.make_node("Add", ["a", "a"], ["b"])], [helper.make_opsetid("", 23)]
    )
    seq_info = helper.make_tensor_sequence_value_info("seq", onnx.TensorProto.FLOAT, None)
    clipped_info = helper.make_tensor_value_info("clipped", onnx.TensorProto.FLOAT, [2])
    clipped_info.metadata_props.add(key="origin", value="clip")
    graph = helper.make_graph(
        [const, clip, seq, at, call], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2]), helper.make_tensor_value_info("c1", onnx.TensorProto.FLOAT, [])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
        initializer=[numpy_helper.from_array(np.array(0.5, np.float32), "c1"), numpy_helper.from_array(np.array(0, np.int64), "zero")],
        value_info=[seq_info, clipped_info],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid("local", 1)], functions=[function])
    onnx.checker.check_model(model, full_check=True)
    read = _assert_round_trip(model)
    c = read.nodes[0].outputs[0]
    assert c.const_value.tolist() == [1.0, 2.0]  # a Constant's payload is known
    assert read.nodes[1].inputs[1] is None and read.initializers["c1"] is read.inputs[1]
    assert read.value_info[1].metadata == {"origin": "clip"} and read.value_info[0].dtype is None
    assert [f.name for f in read.functions] == ["Twice"]


# slow: exports with the reference (torch.onnx, onnxscript) first
@pytest.mark.slow
def test_round_trip_torch_dynamo_export() -> None:
    pytest.importorskip("onnxscript", reason="torch.onnx.export(dynamo=True) needs onnxscript")

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(4, 8)
            self.norm = torch.nn.LayerNorm(8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.norm(torch.relu(self.linear(x)))
            return torch.softmax(y, -1).reshape(x.shape[0], 2, 4).transpose(1, 2) * 2

    batch = torch.export.Dim("batch")
    program = torch.onnx.export(Block().eval(), (torch.randn(3, 4),), dynamo=True, dynamic_shapes=({0: batch},), verbose=False)
    model = program.model_proto
    read = _assert_round_trip(model)
    assert read.producer_name == "pytorch" and "linear.weight" in read.initializers
    assert read.inputs[0].shape[0] == model.graph.input[0].type.tensor_type.shape.dim[0].dim_param
    assert any(n.metadata for n in read.nodes)  # torch's node metadata survives


def test_reading_an_invalid_graph() -> None:
    node = helper.make_node("Relu", ["missing"], ["y"])
    graph = helper.make_graph([node], "g", [], [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])])
    with pytest.raises(ValueError, match="uses 'missing', which is not defined before it"):
        model_from_proto(helper.make_model(graph))


def test_value_constructed_by_hand() -> None:
    v = Value("v", FLOAT, (2,), const_value=np.zeros(2, np.float32))
    assert v.tensor_proto().name == "v"
    v.name = "renamed"
    assert v.tensor_proto().name == "renamed"  # the cached proto follows the name
    bf = Value("bf", types.BFLOAT16, (1,), const_value=np.ones(1, ml_dtypes.bfloat16))
    assert bf.tensor_proto().data_type == onnx.TensorProto.BFLOAT16


def test_graph_built_by_hand() -> None:
    graph = Graph("by_hand", {"": 23})
    x = Value("x", FLOAT, ("n",), graph=graph)
    w = Value("w", FLOAT, (1,), const_value=np.array([2.0], np.float32), graph=graph)
    node = Node("", "Mul", [x, w], {}, {}, "mul_node")
    y = Value("y", FLOAT, ("n",), producer=node, graph=graph)
    node.outputs = [y]
    graph.inputs, graph.initializers, graph.nodes, graph.outputs = [x], {"w": w}, [node], [y]
    model = graph.to_model()
    onnx.checker.check_model(model, full_check=True)
    assert model.graph.node[0].name == "mul_node" and model.producer_name == "torchlib"
    assert numpy_helper.to_array(model.graph.initializer[0]).tolist() == [2.0]
    again = model_from_proto(model)
    assert again.nodes[0].inputs[1].const_value.tolist() == [2.0] and again.nodes[0].inputs[1].is_parameter


@pytest.mark.parametrize("dtype", [d for d in types.ALL_DTYPES if d is not types.STRING], ids=repr)
def test_initializers_are_written_like_numpy_helper(dtype: types.DType) -> None:
    array = (np.arange(6).reshape(3, 2) % 2).astype(dtype.numpy)
    graph = Graph("g")
    graph.initializers["w"] = Value("w", dtype, array.shape, const_value=array, graph=graph)
    written = graph.to_graph_proto().initializer[0]
    assert written.SerializeToString() == numpy_helper.from_array(array, "w").SerializeToString()


def test_fast_model_bytes_equal_the_model() -> None:
    """to_model_bytes writes weights straight from their arrays: the same model once parsed."""
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 50])
    g.initializer("bf16", np.ones(3, ml_dtypes.bfloat16))
    g.initializer("strings", np.array(["a", "bc"], dtype=object))
    g.initializer("empty", np.zeros((0, 3), np.float16))
    g.initializer("scalar", np.array(True))
    g.initializer("strided", np.arange(300, dtype=np.int64).reshape(3, 100)[:, ::2])
    w = g.initializer("w" * 200, np.arange(100, dtype=np.float32).reshape(50, 2))  # a long name
    with g:
        g.output(op.MatMul(x, w), "y")
    graph = g.graph
    expected = graph.to_model().SerializeToString()
    assert onnx.ModelProto.FromString(graph.to_model_bytes()).SerializeToString() == expected
    assert g.to_model().SerializeToString() == g.to_model(check=False).SerializeToString()
    read = model_from_proto(onnx.ModelProto.FromString(expected))  # read tensors are written as read
    assert onnx.ModelProto.FromString(read.to_model_bytes()).SerializeToString() == expected


def test_shapes_are_tuples() -> None:
    v = Value("v", FLOAT, [2, "n"])  # type: ignore[arg-type]
    assert v.shape == (2, "n")
    v.set_type(FLOAT, ["m", 3])
    assert v.shape == ("m", 3)


def test_known_dtype_shape_rank() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["batch", 3, None])
    assert (x.known_dtype, x.known_shape, x.known_rank) == (FLOAT, ("batch", 3, None), 3)
    unknown = Value("u", None, None)
    for attr, what in (("known_dtype", "dtype"), ("known_shape", "shape"), ("known_rank", "shape")):
        with pytest.raises(ValueError, match=f"Value 'u' has no known {what}"):
            getattr(unknown, attr)
    with g:
        y = op.Relu(x)
    y.dtype = None
    with pytest.raises(ValueError, match=r"Value 'relu' \(output of Relu\) has no known dtype"):
        _ = y.known_dtype


def test_known_logical_dtype_shape_rank() -> None:
    g = GraphBuilder()
    z = g.input("z", FLOAT, ["batch", 3, 2]).as_complex()
    assert (z.known_logical_dtype, z.known_logical_shape, z.known_logical_rank) == (types.COMPLEX64, ("batch", 3), 2)
    x = g.input("x", FLOAT, [4])
    assert (x.known_logical_dtype, x.known_logical_shape, x.known_logical_rank) == (FLOAT, (4,), 1)
    unknown = Value("u", None, None)
    for attr, what in (("known_logical_dtype", "dtype"), ("known_logical_shape", "shape"), ("known_logical_rank", "shape")):
        with pytest.raises(ValueError, match=f"Value 'u' has no known {what}"):
            getattr(unknown, attr)


def test_static_dim_and_shape() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["batch", 3, None])
    assert x.static_dim(1) == x.static_dim(-2) == 3
    for axis, dim in ((0, "'batch'"), (2, "None")):
        with pytest.raises(ValueError, match=f"Value 'x' has no known static size for dim {axis} \\(it is {dim}\\)"):
            x.static_dim(axis)
    with pytest.raises(ValueError, match="static size for dim 0"):
        _ = x.static_shape
    assert g.input("w", FLOAT, [4, 0, 2]).static_shape == (4, 0, 2)
    assert g.input("s", FLOAT, []).static_shape == ()
    with pytest.raises(ValueError, match="Value 'u' has no known shape"):
        _ = Value("u", FLOAT, None).static_shape
