"""graph_builder.compare: equal up to value names and node order, and nothing looser."""

from __future__ import annotations

import onnx
import onnx.parser
import pytest
import torch

import torchlib
from graph_builder import op
from graph_builder.compare import assert_same_graph, difference


def model(text: str) -> onnx.ModelProto:
    return onnx.parser.parse_model('<ir_version: 10, opset_import: ["" : 23]>\n' + text)


BASE = """
g (float[N, 4] x, float[N, 4] y) => (float[N, 4] out) {
    s = Add (x, y)
    r = Relu (s)
    out = Mul (r, s)
}"""


def test_renamed_values_and_reordered_nodes_are_equal():
    renamed = """
    g (float[N, 4] a, float[N, 4] b) => (float[N, 4] z) {
        t = Add (a, b)
        q = Relu (t)
        z = Mul (q, t)
    }"""
    assert difference(model(BASE), model(renamed)) is None
    # two independent nodes in the other order
    one = "g (float[2] x) => (float[2] o) { a = Relu (x)\n b = Neg (x)\n o = Add (a, b) }"
    two = "g (float[2] x) => (float[2] o) { b = Neg (x)\n a = Relu (x)\n o = Add (a, b) }"
    assert_same_graph(model(one), model(two))


@pytest.mark.parametrize("near_miss, says", [
    # the inputs of a non-commutative op swapped
    ("g (float[N, 4] x, float[N, 4] y) => (float[N, 4] out) { s = Add (x, y)\n r = Relu (s)\n out = Mul (s, r) }",
     "output 0"),
    # the graph inputs read in the other order
    ("g (float[N, 4] x, float[N, 4] y) => (float[N, 4] out) { s = Add (y, x)\n r = Relu (s)\n out = Mul (r, s) }",
     "output 0"),
    ("g (float[M, 4] x, float[M, 4] y) => (float[M, 4] out) { s = Add (x, y)\n r = Relu (s)\n out = Mul (r, s) }",
     "input 0"),
    ("g (float[N, 4] x, float[N, 4] y) => (float[N, 4] out) { s = Add (x, y)\n r = Relu (s)\n out = Mul (r, s)\n"
     " dead = Neg (x) }", "nodes differ"),
])
def test_near_misses_differ(near_miss, says):
    found = difference(model(BASE), model(near_miss))
    assert found is not None and says in found, found


def test_attributes_constants_and_subgraphs_count():
    a = "g (float[3] x) => (float[3] o) { c = Constant <value = float[1] {2.0}> ()\n o = Mul (x, c) }"
    b = "g (float[3] x) => (float[3] o) { c = Constant <value = float[1] {3.0}> ()\n o = Mul (x, c) }"
    assert difference(model(a), model(b)) is not None
    a = "g (float[3, 2] x) => (float[2, 3] o) { o = Transpose <perm = [1, 0]> (x) }"
    b = "g (float[3, 2] x) => (float[2, 3] o) { o = Transpose <perm = [0, 1]> (x) }"
    assert difference(model(a), model(b)) is not None
    branch = "g (bool c, float[3] x) => (float[3] o) {{ o = If (c) <then_branch = t () => (float[3] r) {{ r = {} (x) }}, " \
             "else_branch = e () => (float[3] r) {{ r = Neg (x) }}> }}"
    assert difference(model(branch.format("Relu")), model(branch.format("Relu"))) is None
    assert difference(model(branch.format("Relu")), model(branch.format("Abs"))) is not None


def test_initializers_compare_by_content_not_name():
    def with_weight(name: str, value: float) -> onnx.ModelProto:
        m = model(f"g (float[2] x) => (float[2] o) {{ o = Add (x, {name}) }}")
        m.graph.initializer.append(onnx.helper.make_tensor(name, onnx.TensorProto.FLOAT, [2], [value, value]))
        return m

    assert difference(with_weight("w", 1.0), with_weight("bias", 1.0)) is None
    assert difference(with_weight("w", 1.0), with_weight("w", 2.0)) is not None


def test_function_protos():
    def fn(op_type: str, name: str = "f") -> onnx.FunctionProto:
        return onnx.helper.make_function("local", name, ["a"], ["b"], [onnx.helper.make_node(op_type, ["a"], ["b"])],
                                         [onnx.helper.make_opsetid("", 23)])

    assert difference(fn("Relu"), fn("Relu")) is None
    assert "the first node that differs: Relu(a) against Neg(a), reading the same inputs" in (
        difference(fn("Relu"), fn("Neg")) or "")
    assert difference(fn("Relu"), fn("Relu", "g")) is not None


def test_exports_of_the_same_model_twice_are_equal_and_an_other_model_is_not():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU()).eval()
    x = torch.randn(2, 4)
    first = torchlib.export(net, (x,)).model_proto
    second = torchlib.export(net, (x,)).model_proto
    assert_same_graph(first, second)
    other = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Sigmoid()).eval()
    other[0].load_state_dict(net[0].state_dict())
    assert difference(first, torchlib.export(other, (x,)).model_proto) is not None


def test_names_the_first_node_that_differs_not_the_output_node():
    """An Add made a Sub two nodes before the output: the output's node reads the same on both
    sides, so the message names the Add and the Sub, each with its inputs."""
    deep = "g (float[N, 4] x, float[N, 4] y) => (float[N, 4] out) {{ s = {} (x, y)\n r = Relu (s)\n out = Add (r, s) }}"
    found = difference(model(deep.format("Add")), model(deep.format("Sub")))
    assert found == ("graph: output 0 ('out' / 'out') is computed differently; "
                     "the first node that differs: Add(x, y) against Sub(x, y), reading the same inputs")


def test_names_the_attribute_or_the_input_that_differs():
    a = "g (float[3, 2] x) => (float[2, 3] o) { t = Transpose <perm = [1, 0]> (x)\n o = Relu (t) }"
    b = "g (float[3, 2] x) => (float[2, 3] o) { t = Transpose <perm = [0, 1]> (x)\n o = Relu (t) }"
    assert (difference(model(a), model(b)) or "").endswith(
        "the first node that differs: Transpose(x) against Transpose(x), reading the same inputs; "
        "attributes ['perm'] differ")

    def with_weight(value: float) -> onnx.ModelProto:
        m = model("g (float[2] x) => (float[2] o) { a = Add (x, w)\n o = Relu (a) }")
        m.graph.initializer.append(onnx.helper.make_tensor("w", onnx.TensorProto.FLOAT, [2], [value, value]))
        return m

    assert (difference(with_weight(1.0), with_weight(2.0)) or "").endswith(
        "the first node that differs: Add(x, w) against Add(x, w); its input w has no equal in the second graph")


def test_output_reading_a_value_the_other_graph_also_computes():
    one = "g (float[3] x) => (float[3] o) { o = Relu (x) }"
    two = "g (float[3] x) => (float[3] o) { r = Relu (x)\n o = Neg (r) }"
    assert (difference(model(one), model(two)) or "").endswith(
        "only the second graph computes Neg(r); every value of the other is one of its")


def wrong_sigmoid(x):
    """sigmoid(Tensor self) -> Tensor"""
    return op.Tanh(x)  # deliberately wrong


class Deep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second, self.head = torch.nn.Linear(4, 8), torch.nn.Linear(8, 8), torch.nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.first(x))
        g = torch.sigmoid(self.second(h))  # the wrong function's node, three layers before the output
        return self.head(g * h) + h.sum(-1, keepdim=True)


def test_an_export_with_a_wrong_function_deep_inside_is_named_at_that_function():
    torch.manual_seed(0)
    net, x = Deep().eval(), torch.randn(2, 4)
    right = torchlib.export(net, (x,)).model_proto
    wrong = torchlib.export(net, (x,), functions={torch.ops.aten.sigmoid.default: wrong_sigmoid}, check=False)
    found = difference(right, wrong.model_proto) or ""
    # the node each graph computes from the second Linear's output: Sigmoid against the wrong Tanh
    sigmoid = next(n for n in right.graph.node if n.op_type == "Sigmoid")
    tanh = next(n for n in wrong.graph.nodes if n.op_type == "Tanh")
    assert f"the first node that differs: Sigmoid({sigmoid.input[0]})" in found, found
    assert f"against Tanh({tanh.inputs[0].name})" in found, found
    assert found.endswith("reading the same inputs"), found
