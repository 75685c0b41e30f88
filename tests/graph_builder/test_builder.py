"""Tracing with GraphBuilder: types and shapes, folding, subgraphs, emitting, running."""

from __future__ import annotations

import gc

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch

from graph_builder import BOOL, FLOAT, FLOAT16, INT64, GraphBuilder, OpError, Value, op, opset, types
from graph_builder.builder import FOLD_LIMIT


def _run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


# -- types and shapes --------------------------------------------------------------------------
def test_every_value_has_a_dtype_and_symbolic_dims_are_kept() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT16, ["batch", "seq", 8])
    ids = g.input("ids", INT64, ["batch", "seq"])
    table = g.initializer("table", np.zeros((10, 8), np.float16))
    w = g.initializer("w", np.zeros((8, 4), np.float16))
    with g:
        h = op.Add(x, op.Gather(table, ids, axis=0))
        m = op.MatMul(h, w)
        t = op.Transpose(m, perm=[1, 0, 2])
        s = op.Softmax(t, axis=-1)
        r = op.ReduceMean(s, [-1], keepdims=0)
        c = op.Concat(r, r, axis=0)
        u = op.Unsqueeze(c, [0])
        sl = op.Slice(x, [1], [3], [2])
        cmp = op.Greater(m, 0.0)
        ln = op.LayerNormalization(x, g.constant(np.ones(8, np.float16)), axis=-1)
        top_values, top_indices = op.TopK(x, [3], axis=-1)
        nz = op.NonZero(cmp)
    assert h.dtype is FLOAT16 and h.shape == ("batch", "seq", 8)
    assert m.shape == ("batch", "seq", 4)
    assert t.shape == ("seq", "batch", 4) and s.shape == t.shape
    assert r.shape == ("seq", "batch")
    assert c.shape == (None, "batch")  # seq + seq has no name
    assert u.shape == (1, None, "batch")
    assert sl.shape == ("batch", "seq", 2)
    assert cmp.dtype is BOOL and cmp.shape == m.shape
    assert ln.dtype is FLOAT16 and ln.shape == x.shape
    assert top_values.shape == ("batch", "seq", 3) and top_indices.dtype is INT64
    assert nz.dtype is INT64 and nz.shape is not None and nz.shape[0] == 3  # from ONNX's inference
    for node in g.graph.nodes:
        for v in node.outputs:
            assert v.dtype is not None, v


def test_shapes_computed_from_shapes_keep_their_names() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["batch", "seq", 64])
    with g:
        shape = op.Shape(x)
        batch_seq = op.Slice(shape, [0], [2])
        heads = op.Reshape(x, op.Concat(batch_seq, [4, 16], axis=0))
        back = op.Reshape(heads, op.Concat(op.Gather(shape, [0]), [-1, 64], axis=0))
        flat = op.Reshape(x, [0, -1])
        merged = op.Reshape(x, [-1, 64])
        zeros = op.ConstantOfShape(batch_seq)
        expanded = op.Expand(op.Unsqueeze(zeros, [-1]), op.Shape(x))
        last = op.Mul(op.Gather(shape, 2), 2)
    assert shape.sym_value == ("batch", "seq", 64)
    assert heads.shape == ("batch", "seq", 4, 16)
    assert back.shape == ("batch", "seq", 64)  # -1 is "seq": the ints and the other names cancel
    assert flat.shape == ("batch", None)
    assert merged.shape == (None, 64)
    assert zeros.dtype is FLOAT and zeros.shape == ("batch", "seq")
    assert expanded.shape == ("batch", "seq", 64)
    assert last.sym_value == (128,)
    g.output(heads, "heads")
    model = g.to_model()
    out = model.graph.output[0].type.tensor_type.shape
    assert [d.dim_param or d.dim_value for d in out.dim] == ["batch", "seq", 4, 16]
    (result,) = _run(model, {"x": np.ones((2, 3, 64), np.float32)})
    assert result.shape == (2, 3, 4, 16)


def test_fast_shape_rules_agree_with_onnx_inference() -> None:
    """The builder's Python rules and ONNX's own inference give the same types and shapes."""
    from graph_builder import builder

    def both(build):  # type: ignore[no-untyped-def]
        results = []
        for rules in (builder.RULES, {}):
            saved = dict(builder.RULES)
            builder.RULES.clear()
            builder.RULES.update(rules or {})
            builder._RULES_BY_SIGNATURE.clear()
            try:
                g = GraphBuilder()
                with g:
                    v = build(g)
                results.append((v.dtype, v.shape))
            finally:
                builder.RULES.clear()
                builder.RULES.update(saved)
                builder._RULES_BY_SIGNATURE.clear()
        return results

    def x(g, shape=(4, 6, 8), dtype=FLOAT):  # type: ignore[no-untyped-def]
        return g.input("x", dtype, list(shape))

    cases = [
        lambda g: op.Add(x(g), g.input("y", FLOAT, [6, 1])),
        lambda g: op.Where(g.input("c", BOOL, [8]), x(g), 0.0),
        lambda g: op.MatMul(x(g), g.input("w", FLOAT, [1, 8, 3])),
        lambda g: op.MatMul(x(g, (8,)), g.input("w", FLOAT, [8, 3])),
        lambda g: op.Reshape(x(g), [0, -1]),
        lambda g: op.Reshape(x(g), [2, -1, 4]),
        lambda g: op.Reshape(x(g, (0, 3)), [3, 0], allowzero=1),
        lambda g: op.Transpose(x(g)),
        lambda g: op.Transpose(x(g), perm=[2, 0, 1]),
        lambda g: op.Squeeze(x(g, (4, 1, 8, 1)), [1, -1]),
        lambda g: op.Unsqueeze(x(g), [0, -1]),
        lambda g: op.Shape(x(g), start=1, end=-1),
        lambda g: op.Shape(x(g), start=-10, end=10),
        lambda g: op.Concat(x(g), x(g, (4, 2, 8)), axis=-2),
        lambda g: op.Gather(x(g), g.input("i", INT64, [2, 3]), axis=1),
        lambda g: op.Gather(x(g), g.input("i", INT64, []), axis=-1),
        lambda g: op.Slice(x(g), [1], [-1], [1]),
        lambda g: op.Slice(x(g), [-1, 0], [-100, 8], [0, 2], [-2, 3]),
        lambda g: op.Slice(x(g), [10], [20]),
        lambda g: op.Slice(x(g), [2, 1], [2**63 - 1, 5], [1, 2]),
        lambda g: op.Expand(x(g, (6, 1)), [4, 6, 3]),
        lambda g: op.Expand(x(g, (6, 1)), [1]),
        lambda g: op.ConstantOfShape([2, 3], value=np.array([1], np.int64)),
        lambda g: op.ReduceSum(x(g), [1, -1]),
        lambda g: op.ReduceMax(x(g), keepdims=0),
        lambda g: op.ReduceMean(x(g), noop_with_empty_axes=1),
        lambda g: op.Cast(x(g), to=FLOAT16),
        lambda g: op.CastLike(x(g), g.input("y", INT64, [])),
        lambda g: op.Equal(x(g, (4, 1)), g.input("y", FLOAT, [5])),
        lambda g: op.CumSum(x(g), g.constant(np.array(1))),
        lambda g: op.LayerNormalization(x(g), g.input("s", FLOAT, [8])),
    ]
    for i, case in enumerate(cases):
        fast, onnx_result = both(case)
        assert fast == onnx_result, f"case {i}: fast {fast} != onnx {onnx_result}"


def test_invalid_shapes_are_reported_while_tracing() -> None:
    g = GraphBuilder()
    a = g.input("a", FLOAT, [2, 3])
    b = g.input("b", FLOAT, [4, 5])
    with g:
        with pytest.raises(OpError, match=r"MatMul: shapes \[2, 3\] and \[4, 5\] do not match"):
            op.MatMul(a, b)
        with pytest.raises(OpError, match=r"cannot be broadcast"):
            op.Add(a, b)
        with pytest.raises(OpError, match=r"op.Reshape: cannot reshape \[2, 3\] \(6 elements\) to \[4, 4\]"):
            op.Reshape(a, [4, 4])


# -- constants ---------------------------------------------------------------------------------
def test_ops_on_small_constants_fold() -> None:
    g = GraphBuilder()
    x = g.input("x", INT64, [3])
    with g:
        shape = op.Concat([2], op.Add([1], [2]), axis=0)
        y = op.Reshape(op.Tile(x, [2]), shape)
    assert [n.op_type for n in g.graph.nodes] == ["Tile", "Reshape"]
    assert shape.const_value.tolist() == [2, 3] and shape.producer is None
    assert y.shape == (2, 3)


def test_no_folding_of_weights_large_constants_or_random_ops() -> None:
    g = GraphBuilder()
    w = g.initializer("w", np.ones(3, np.float32))
    big = g.constant(np.ones(FOLD_LIMIT + 1, np.float32))
    with g:
        op.Neg(w)
        op.Neg(big)
        op.RandomUniform(shape=[2], dtype=FLOAT.onnx)
        op.Neg(g.constant(np.ones(4, np.float32)))
    assert [n.op_type for n in g.graph.nodes] == ["Neg", "Neg", "RandomUniform"]


def test_identical_constants_are_one_value() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [3])
    with g:
        a = op.Add(x, 1.0).producer.inputs[1]
        b = op.Mul(x, np.float32(1.0)).producer.inputs[1]
        c = op.Sub(x, g.constant([1.0], FLOAT)).producer.inputs[1]
    assert a is b and a is not c  # c has another shape
    assert g.constant(np.array(1.0, np.float32)) is a
    g.output(op.Add(x, 1.0) if False else x)


def test_constant_dtype_conversion() -> None:
    g = GraphBuilder()
    assert g.constant([1, 2], FLOAT16).dtype is FLOAT16
    assert g.constant(torch.tensor([1.5])).dtype is FLOAT
    assert g.constant(["a", "b"]).dtype.name == "STRING"


# -- subgraphs ---------------------------------------------------------------------------------
def test_if_with_captures_and_inner_constants() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["n"])
    with g:
        total = op.ReduceSum(x, keepdims=0)
        then = g.subgraph("then")
        with then:
            then.output(op.Mul(x, 10.0))  # x from the outer graph, 10.0 made inside
        other = g.subgraph("else")
        with other:
            other.output(op.Sub(op.Neg(x), op.Add([1.0], [1.0])))  # folded inside the branch
        y = op.If(op.Greater(total, 0.0), then_branch=then, else_branch=other)
    assert y.dtype is FLOAT and y.shape == ("n",)
    g.output(y, "y")
    model = g.to_model()
    (pos,) = _run(model, {"x": np.array([1.0, 2.0], np.float32)})
    (neg,) = _run(model, {"x": np.array([-1.0, -2.0], np.float32)})
    np.testing.assert_array_equal(pos, [10.0, 20.0])
    np.testing.assert_array_equal(neg, [-1.0, 0.0])
    branch = model.graph.node[-1].attribute
    inner = {a.name: a.g for a in branch}
    assert [i.name for i in inner["then_branch"].initializer] == ["scalar_float"]  # made inside
    (folded,) = inner["else_branch"].initializer  # the fold result only
    assert onnx.numpy_helper.to_array(folded).tolist() == [2.0]


def test_loop_with_captures_carried_values_and_scan_outputs() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [3])
    step = g.initializer("step", np.array([1.0, 2.0, 3.0], np.float32))
    with g:
        body = g.subgraph("body")
        i = body.input("i", INT64, [])
        body.input("cond", BOOL, [])
        acc = body.input("acc", FLOAT, [3])
        with body:
            new_acc = op.Add(acc, op.Mul(step, 0.5))  # outer weight, inner constant
            keep_going = op.Less(i, 3)
            body.output(keep_going)
            body.output(new_acc)
            body.output(op.Cast(i, to=FLOAT))
        final, history = op.Loop(np.array(10, np.int64), np.array(True), x, body=body)
    assert final.shape == (3,) and history.dtype is FLOAT and history.shape == (None,)
    g.output(final, "final")
    g.output(history, "history")
    final_value, history_value = _run(g.to_model(), {"x": np.zeros(3, np.float32)})
    np.testing.assert_allclose(final_value, [2.0, 4.0, 6.0])  # 4 iterations: i = 0..3
    np.testing.assert_array_equal(history_value, [0.0, 1.0, 2.0, 3.0])


def test_scan_with_captures() -> None:
    g = GraphBuilder()
    rows = g.input("rows", FLOAT, ["n", 2])
    scale = g.input("scale", FLOAT, [])
    with g:
        body = g.subgraph("scan_body")
        state = body.input("state", FLOAT, [2])
        row = body.input("row", FLOAT, [2])
        with body:
            new_state = op.Add(state, op.Mul(row, scale))
            body.output(new_state)
            body.output(op.ReduceSum(new_state, keepdims=0))
        last, sums = op.Scan(g.constant(np.zeros(2, np.float32)), rows, body=body, num_scan_inputs=1)
    assert last.shape == (2,) and sums.shape == ("n",)
    g.output(last, "last")
    g.output(sums, "sums")
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    last_value, sums_value = _run(g.to_model(), {"rows": data, "scale": np.array(2.0, np.float32)})
    np.testing.assert_array_equal(last_value, 2 * data.sum(0))
    np.testing.assert_array_equal(sums_value, 2 * np.cumsum(data.sum(1)))


def test_subgraph_errors() -> None:
    g = GraphBuilder()
    c = g.input("c", BOOL, [])
    with g:
        a, b = g.subgraph(), g.subgraph()
        with a:
            a.output(op.Add(1.0, g.input("z", FLOAT, [])))
        with b:
            b.output(g.constant(np.array(1, np.int64)))
        with pytest.raises(OpError, match="op.If: output 0 is FLOAT in then_branch but INT64 in else_branch"):
            op.If(c, then_branch=a, else_branch=b)
    other = GraphBuilder()
    v = other.input("v", FLOAT, [])
    with g, pytest.raises(OpError, match="Value 'v' belongs to another graph"):
        op.Neg(v)


# -- emitting ----------------------------------------------------------------------------------
def _transformer_like() -> onnx.ModelProto:
    g = GraphBuilder(name="block")
    x = g.input("x", FLOAT, ["batch", "seq", 16])
    rng = np.random.default_rng(0)
    with g, g.metadata(layer="0"):
        w = g.initializer("layers.0.w", rng.standard_normal((16, 16)).astype(np.float32))
        h = op.LayerNormalization(x, g.initializer("layers.0.ln.weight", np.ones(16, np.float32)), axis=-1)
        q = op.Reshape(op.MatMul(h, w), op.Concat(op.Slice(op.Shape(h), [0], [2]), [2, 8], axis=0))
        s = op.Softmax(op.MatMul(op.Transpose(q, perm=[0, 2, 1, 3]), op.Transpose(q, perm=[0, 2, 3, 1])), axis=-1)
        op.Neg(s)  # dead: dropped
        y = op.Add(x, op.Unsqueeze(op.ReduceMean(s, [1, 3], keepdims=0), [-1]))
    g.output(y, "y")
    return g.to_model()


def test_to_model_passes_the_full_checker() -> None:
    model = _transformer_like()
    onnx.checker.check_model(model, full_check=True)
    assert "Neg" not in [n.op_type for n in model.graph.node]
    assert [i.name for i in model.graph.initializer][:2] == ["layers.0.w", "layers.0.ln.weight"]
    (y,) = _run(model, {"x": np.ones((2, 3, 16), np.float32)})
    assert y.shape == (2, 3, 16)


def test_same_build_twice_is_byte_identical() -> None:
    assert _transformer_like().SerializeToString() == _transformer_like().SerializeToString()


def test_node_metadata() -> None:
    model = _transformer_like()
    props = [{p.key: p.value for p in n.metadata_props} for n in model.graph.node]
    assert props and all(p == {"layer": "0"} for p in props)
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2])
    with g:
        with g.metadata(aten="aten::add.Tensor", line="model.py:10"):
            a = op.Add(x, x)
            with g.metadata(line="model.py:11"):  # nested scopes merge, inner wins
                b = op.Mul(a, a)
        c = op.Neg(b)
    assert a.producer.metadata == {"aten": "aten::add.Tensor", "line": "model.py:10"}
    assert b.producer.metadata == {"aten": "aten::add.Tensor", "line": "model.py:11"}
    assert c.producer.metadata == {}
    g.output(c, "c")
    nodes = g.to_model().graph.node
    assert [{p.key: p.value for p in n.metadata_props} for n in nodes] == [
        {"aten": "aten::add.Tensor", "line": "model.py:10"}, {"aten": "aten::add.Tensor", "line": "model.py:11"}, {},
    ]  # fmt: skip


def test_run_evaluates_intermediate_values() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["n"])
    with g:
        doubled = op.Mul(x, 2.0)
        shifted = op.Add(doubled, 1.0)
        shape = op.Shape(shifted)
    g.output(shifted, "y")
    data = np.array([1.0, 2.0], np.float32)
    (mid,) = g.run({"x": data}, outputs=[doubled])
    np.testing.assert_array_equal(mid, [2.0, 4.0])
    mid, y, s = g.run({"x": torch.tensor([1.0, 2.0])}, outputs=[doubled, shifted, shape])
    assert isinstance(mid, torch.Tensor) and y.tolist() == [3.0, 5.0] and s.tolist() == [2]
    (y,) = g.run({"x": data})
    np.testing.assert_array_equal(y, [3.0, 5.0])


def test_output_naming() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2])
    with g:
        a = op.Relu(x)
        b = op.Neg(x)
        relu_again = op.Relu(b)  # named "relu_1"
    assert (a.name, relu_again.name) == ("relu", "relu_1")
    assert g.output(a, "out_a") is a and a.name == "out_a"
    passthrough = g.output(x, "same_x")  # an input: passed through Identity
    assert passthrough.producer.op_type == "Identity" and passthrough.name == "same_x"
    twice = g.output(a, "out_a_again")  # already an output
    assert twice.producer.op_type == "Identity"
    g.output(relu_again, "neg")  # "neg" is b's name: b is renamed, the output takes it
    assert relu_again.name == "neg" and b.name == "neg_1"
    with pytest.raises(ValueError, match="already taken by a graph input"):
        g.output(b, "x")
    model = g.to_model()
    assert [o.name for o in model.graph.output] == ["out_a", "same_x", "out_a_again", "neg"]
    outputs = _run(model, {"x": np.array([-1.0, 2.0], np.float32)})
    assert [o.tolist() for o in outputs] == [[0.0, 2.0], [-1.0, 2.0], [0.0, 2.0], [1.0, 0.0]]


def test_outputs_of_unknown_rank() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3])
    n = g.input("n", INT64, [1])
    with g:
        y = op.Reshape(x, op.Concat(n, [-1], axis=0))  # rank 2, dims unknown
        z = op.Reshape(x, n)
    assert y.shape == (None, None) and z.shape == (None,)
    g.output(y, "y")
    g.to_model()
    g2 = GraphBuilder()
    x2 = g2.input("x", FLOAT, None)
    with g2:
        g2.output(op.Relu(x2), "y")
    with pytest.raises(OpError, match="graph input 'x' has no shape"):
        g2.to_model()


def test_domains_and_opset_imports() -> None:
    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, [2])
    with g:
        y = op.Relu(x)
    g.output(y, "y")
    assert {o.domain: o.version for o in g.to_model().opset_import} == {"": 23}
    assert opset(23).Relu is not None


def test_tracing_pauses_the_garbage_collector_and_restores_it() -> None:
    assert gc.isenabled()
    g = GraphBuilder()
    with g:
        assert not gc.isenabled()
        with g:
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with g:
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError), g:
        1 / 0  # noqa: B018
    assert gc.isenabled()


def test_values_are_values() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT, [1])
    with g:
        y = op.Identity(x)
    assert isinstance(y, Value) and y is not x


def test_constants_do_not_follow_later_changes_of_their_source() -> None:
    g = GraphBuilder()
    x = g.input("x", INT64, [2])
    source = np.array([1, 2])
    tensor = torch.tensor([3, 4])
    with g:
        a = op.Add(x, source).producer.inputs[1]
        b = op.Add(x, tensor).producer.inputs[1]
    source[0] = 100
    tensor[0] = 100
    assert a.const_value.tolist() == [1, 2] and b.const_value.tolist() == [3, 4]
    assert g.constant(np.array([1, 2])) is a  # equal bytes: the same constant


def test_attributes_that_compare_equal_stay_distinct() -> None:
    x = np.array([-1.0, 2.0], np.float32)
    assert np.signbit(op.LeakyRelu(x, alpha=0.0)[0]) and not np.signbit(op.LeakyRelu(x, alpha=-0.0)[0])  # -1 * -0.0 = +0.0
    g = GraphBuilder()
    v = g.input("v", FLOAT, [2])
    with g:
        a = op.LeakyRelu(v, alpha=0.0)
        b = op.LeakyRelu(v, alpha=-0.0)
        c = op.Cast(v, to=INT64)
        d = op.Cast(v, to=types.BOOL)  # True == 1 would collide with FLOAT's enum 1 if the type were not part of the key
    for i, out in enumerate([a, b, c, d]):
        g.output(out, f"o{i}")
    attrs = [n.attribute[0] for n in g.to_model().graph.node]
    assert [str(onnx.helper.get_attribute_value(x)) for x in attrs] == ["0.0", "-0.0", "7", "9"]


def test_ops_of_the_default_opset_are_written_for_a_lower_target() -> None:
    import graph_builder

    g = graph_builder.GraphBuilder(opset=18)
    x = g.input("x", graph_builder.FLOAT, [2, 3])
    with g:
        y = graph_builder.op.Reshape(graph_builder.op.Relu(x), [3, 2])  # Reshape-21, Relu-14
    g.output(y, "y")
    model = g.to_model()
    assert [o.version for o in model.opset_import] == [18]
    np.testing.assert_array_equal(g.run({"x": np.ones((2, 3), np.float32)})[0], np.ones((3, 2), np.float32))


def test_ops_missing_or_changed_at_the_target_opset_are_refused_clearly() -> None:
    import graph_builder

    g = graph_builder.GraphBuilder(opset=18)
    q = g.input("q", graph_builder.FLOAT, [1, 2, 4, 8])
    with g, pytest.raises(graph_builder.OpError, match="does not exist in opset 18"):
        graph_builder.op.Attention(q, q, q)
    with g, pytest.raises(graph_builder.OpError, match="per channel since opset 21"):
        graph_builder.op.GroupNormalization(q, [1.0, 1.0], [0.0, 0.0], num_groups=2)


def test_an_output_may_take_the_name_of_an_unused_value():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2])
    with g:
        op.Add(x, x)  # "add": never used; the output takes its name, the unused value is renamed
        y = op.Mul(x, x)
    g.output(y, "add")
    model = g.to_model()
    assert [o.name for o in model.graph.output] == ["add"]
    with pytest.raises(ValueError, match="graph input"):
        g.output(y, "x")


def test_float4_folds_in_numpy_and_needs_opset_23() -> None:
    """onnxruntime has no FLOAT4E2M1 kernel: ConstantOfShape, Shape and Identity fold in numpy."""
    fill = np.zeros(1, types.FLOAT4E2M1.numpy)
    g = GraphBuilder(opset=23)
    with g:
        zeros = op.ConstantOfShape([2, 4], value=fill)
        assert zeros.dtype is types.FLOAT4E2M1 and zeros.const_value.shape == (2, 4)
        assert op.Shape(zeros, start=-1).const_value.tolist() == [4]
        assert op.Identity(zeros).const_value.view(np.uint8).tolist() == [[0] * 4] * 2
    with pytest.raises(OpError, match=r"FLOAT4E2M1 exists from opset 23\).*export with a newer opset"):
        with GraphBuilder(opset=21):
            op.ConstantOfShape([2], value=fill)
