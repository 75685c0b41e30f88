"""graph_builder.functions.outline: calls become model-local functions that inline back."""

from __future__ import annotations

import numpy as np
import onnx
import onnx.inliner
import onnx.parser
import onnxruntime as ort

from graph_builder.compare import assert_same_graph
from graph_builder.functions import Scope, common_stack, outline
from graph_builder.ir import Graph, model_from_proto


def parse(text: str) -> onnx.ModelProto:
    return onnx.parser.parse_model('<ir_version: 10, opset_import: ["" : 23]>\n' + text)


def scope(key: str, name: str = "Block") -> Scope:
    return Scope(key=key, domain="pkg.test", name=name, node_name=key)


def outlined(text: str, calls: dict[str, list[Scope]]) -> tuple[Graph, list[str]]:
    """The graph of `text` outlined, each node's scopes given by its first output's name."""
    graph = model_from_proto(parse(text))
    for v in graph.initializers.values():
        v.is_parameter = v.name.startswith("w")  # the others are constants, as the builder makes them
    stacks = {id(n): calls[n.outputs[0].name] for n in graph.nodes if n.outputs[0].name in calls}
    notes = outline(graph, stacks)
    return graph, notes


def flat(model: onnx.ModelProto) -> onnx.ModelProto:
    inlined = onnx.inliner.inline_local_functions(model)
    kept = [o for o in inlined.opset_import if o.domain == ""]
    del inlined.opset_import[:]
    inlined.opset_import.extend(kept)
    return inlined


CHAIN = """
g (float[2, 4] x) => (float[2, 4] out) {
    a1 = Relu (x)
    b1 = Mul (a1, x)
    a2 = Relu (b1)
    b2 = Mul (a2, b1)
    a3 = Relu (b2)
    b3 = Mul (a3, b2)
    c3 = Neg (b3)
    out = Add (c3, x)
}"""


def test_alike_calls_share_a_function_and_others_get_their_own():
    one, two, three = scope("one"), scope("two"), scope("three")
    calls = {"a1": [one], "b1": [one], "a2": [two], "b2": [two], "a3": [three], "b3": [three], "c3": [three]}
    graph, notes = outlined(CHAIN, calls)
    model = graph.to_model()
    onnx.checker.check_model(model, full_check=True)
    assert notes == []
    assert [(n.op_type, n.name) for n in model.graph.node] == [("Block", "one"), ("Block", "two"), ("Block_1", "three"),
                                                              ("Add", "")]  # fmt: skip
    assert [(f.name, [n.op_type for n in f.node]) for f in model.functions] == [
        ("Block", ["Relu", "Mul"]), ("Block_1", ["Relu", "Mul", "Neg"])]
    assert [list(n.input) for n in model.graph.node[:2]] == [["x"], ["b1"]]
    assert_same_graph(flat(model), parse(CHAIN))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    run = lambda m: ort.InferenceSession(m.SerializeToString()).run(None, {"x": x})[0]  # noqa: E731
    np.testing.assert_array_equal(run(model), run(parse(CHAIN)))


def test_nested_calls_become_calls_inside_the_function():
    outer, inner = scope("outer", "Outer"), scope("inner", "Inner")
    graph, _ = outlined(CHAIN, {"a1": [outer, inner], "b1": [outer, inner], "a2": [outer], "b2": [outer]})
    model = graph.to_model()
    assert [n.op_type for n in model.graph.node] == ["Outer", "Relu", "Mul", "Neg", "Add"]
    assert [(f.name, [n.op_type for n in f.node]) for f in model.functions] == [
        ("Inner", ["Relu", "Mul"]), ("Outer", ["Inner", "Relu", "Mul"])]
    assert_same_graph(flat(model), parse(CHAIN))


def test_a_call_that_cannot_be_one_node_stays_inline():
    # a path leaves the call (a2 -> b2, outside) and comes back in (b2 -> a3)
    s = scope("s")
    graph, notes = outlined(CHAIN, {"a2": [s], "a3": [s], "b3": [s]})
    assert notes == ["s (Block) stays inline: a path leaves its nodes and comes back in (a fusion across calls?)"]
    assert graph.functions == []
    assert_same_graph(graph.to_model(), parse(CHAIN))


SHARED_SHAPE = """
g (float[N, 4] x) => (float[N, 4] out) {
    shape = Shape (x)
    n = Gather <axis = 0> (shape, zero)
    n2 = Mul (n, two)
    dims = Concat <axis = 0> (n2, minus_one)
    r1 = Reshape (x, dims)
    o1 = Reshape (r1, shape)
    r2 = Reshape (o1, dims)
    out = Reshape (r2, shape)
}"""


def test_work_two_calls_share_is_outlined_at_their_common_caller():
    text = SHARED_SHAPE.replace("{", "<int64[1] zero = {0}, int64[1] two = {2}, int64[1] minus_one = {-1}> {", 1)
    first, second = scope("first"), scope("second")
    # the optimizer's CSE merged the second call's shape arithmetic into the first's: the kept
    # nodes get the stack both calls have in common (here none: the graph itself)
    shared = common_stack([first], [second])
    assert shared == ()
    graph, notes = outlined(text, {"n": shared, "n2": shared, "dims": shared, "r1": [first], "o1": [first],
                                   "r2": [second], "out": [second]})  # fmt: skip
    model = graph.to_model()
    assert notes == []
    assert [f.name for f in model.functions] == ["Block"]
    assert [n.op_type for n in model.graph.node] == ["Shape", "Gather", "Mul", "Concat", "Block", "Block"]
    assert_same_graph(flat(model), parse(text))
    outer = scope("outer", "Outer")
    assert common_stack([outer, first], [outer, second]) == (outer,)


def test_a_call_nothing_reads_is_left_to_dead_code_removal():
    text = "g (float[2] x) => (float[2] y) { y = Relu (x)\n dead = Neg (x) }"
    graph, notes = outlined(text, {"dead": [scope("d")]})
    assert notes == [] and graph.functions == [] and [n.op_type for n in graph.nodes] == ["Relu", "Neg"]


def test_a_calls_attributes_label_the_call_and_the_function_declares_them():
    one = Scope("one", "pkg.test", "Block", "one", attributes=(("width", 4), ("eps", 0.5)))
    two = Scope("two", "pkg.test", "Block", "two", attributes=(("width", 4), ("mode", "fast")))
    graph, _ = outlined(CHAIN, {"a1": [one], "b1": [one], "a2": [two], "b2": [two]})
    model = graph.to_model()
    onnx.checker.check_model(model, full_check=True)
    (block,) = model.functions
    assert list(block.attribute) == ["width", "eps", "mode"]  # the calls share it: every name any call gives
    assert [[onnx.helper.get_attribute_value(a) for a in n.attribute] for n in model.graph.node[:2]] == [
        [4, 0.5], [4, b"fast"]]
    assert_same_graph(flat(model), parse(CHAIN))  # unread by the body: inlining ignores them
