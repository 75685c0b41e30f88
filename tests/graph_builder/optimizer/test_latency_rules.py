"""The optimizer rewrites that make onnxruntime faster: a mid-sized `Attention` written as MatMul /
Softmax, unused optional outputs dropped, Unsqueeze pairs merged, repeated constants merged by
contents. Each optimized graph is compared in onnxruntime with the graph before optimizing, and
keeps the metadata of the nodes it replaces."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from graph_builder import BOOL, FLOAT, FLOAT16, GraphBuilder, op
from graph_builder.optimizer import Rule, Var, optimize
from graph_builder.optimizer.attention import prefer_unfused
from graph_builder.optimizer.editing import Uses
from graph_builder.optimizer.pattern import rewrite

ATEN = "pkg.torchlib.aten_op"
RNG = np.random.default_rng(0)


def _run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _optimized(g: GraphBuilder, feeds, rtol=1e-5, atol=1e-6):
    """(op types before, the optimized model, the report), checking equal results."""
    before = g.to_model()
    report = optimize(g)
    after = g.to_model()
    for a, b in zip(_run(before, feeds), _run(after, feeds), strict=True):
        np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)
    return [n.op_type for n in before.graph.node], after, report


def _aten(node) -> str:  # type: ignore[no-untyped-def]
    return {p.key: p.value for p in node.metadata_props}.get(ATEN, "")


def _attention_graph(b, h, s, t, d, dtype=FLOAT, mask=False, **attrs):  # type: ignore[no-untyped-def]
    g = GraphBuilder()
    q = g.input("q", dtype, [b, h, s, d])
    k, v = (g.input(n, dtype, [b, h, t, d]) for n in "kv")
    m = g.input("m", BOOL, [s, t]) if mask else None
    with g, g.metadata(**{ATEN: "aten::scaled_dot_product_attention"}):
        y = op.Attention(q, k, v, m, **attrs)
    g.output(y, "y")
    feeds = {n: RNG.standard_normal(shape).astype(np.float32 if dtype is FLOAT else np.float16)
             for n, shape in (("q", (b, h, s, d)), ("k", (b, h, t, d)), ("v", (b, h, t, d)))}
    if mask:
        feeds["m"] = RNG.random((s, t)) > 0.3
    return g, feeds


@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1}, {"scale": 0.3}, {"is_causal": 1, "scale": 0.5}],
                         ids=["plain", "causal", "scale", "causal-scale"])
@pytest.mark.parametrize("s, t, d", [(32, 32, 64), (20, 40, 128), (65, 65, 32)])
def test_a_mid_sized_attention_becomes_matmul_softmax(attrs, s, t, d):
    g, feeds = _attention_graph(1, 2, s, t, d, **attrs)
    _, after, report = _optimized(g, feeds)
    ops = [n.op_type for n in after.graph.node]
    assert "Attention" not in ops and ops.count("MatMul") == 2 and "Softmax" in ops
    assert ("Add" in ops) == bool(attrs.get("is_causal"))  # the causal mask, a constant
    assert report["Attention -> MatMul/Softmax (mid-sized heads)"] == 1
    assert all(_aten(n) == "aten::scaled_dot_product_attention" for n in after.graph.node)


@pytest.mark.parametrize("case", ["tiny", "large", "mask", "causal-longer-query", "float16", "softcap", "dynamic"])
def test_attention_stays_fused(case):
    if case == "dynamic":
        g = GraphBuilder()
        q, k, v = (g.input(n, FLOAT, [1, 2, "seq", 64]) for n in "qkv")
        with g:
            y = op.Attention(q, k, v)
        g.output(y, "y")
        feeds = {n: RNG.standard_normal((1, 2, 40, 64)).astype(np.float32) for n in "qkv"}
    else:
        shape, kwargs = {"tiny": ((2, 4, 16, 16, 16), {}), "large": ((1, 2, 64, 64, 64), {}),
                         "mask": ((1, 2, 32, 32, 64), {"mask": True}),
                         "causal-longer-query": ((1, 2, 64, 32, 64), {"is_causal": 1}),
                         "float16": ((1, 2, 32, 32, 64), {"dtype": FLOAT16}),
                         "softcap": ((1, 2, 32, 32, 64), {"softcap": 2.0})}[case]
        g, feeds = _attention_graph(*shape, **kwargs)
    _, after, _ = _optimized(g, feeds, rtol=1e-3, atol=1e-3)
    assert [n.op_type for n in after.graph.node] == ["Attention"]


def test_the_measured_rule():
    assert prefer_unfused(32, 32, 64) and prefer_unfused(65, 65, 32) and prefer_unfused(32, 32, 128)
    assert not prefer_unfused(16, 16, 16) and not prefer_unfused(32, 32, 16)  # GPT, Llama, the transformer
    assert not prefer_unfused(64, 64, 64) and not prefer_unfused(128, 128, 16) and not prefer_unfused(1024, 1024, 64)


def test_var_default_matches_a_missing_attribute():
    seen = []

    def pattern(op, x):  # type: ignore[no-untyped-def]
        return op.Softmax(x, axis=Var("axis", default=-1))

    rule = Rule("softmax", pattern, lambda op, x, axis: op.Softmax(x, axis=axis),
                check=lambda x, axis: seen.append(axis) is None and False)
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3])
    with g:
        g.output(op.Softmax(x), "a")
        g.output(op.Softmax(x, axis=0), "b")
    rewrite(g, Uses(g.graph), [rule])
    assert seen == [-1, 0]


def test_unused_optional_outputs_are_dropped():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 8])
    w = g.initializer("w", RNG.standard_normal(8).astype(np.float32))
    with g, g.metadata(**{ATEN: "aten::native_layer_norm"}):
        y, _mean, _inv = op.LayerNormalization(x, w, w, axis=-1, epsilon=1e-5, stash_type=1, _outputs=3)
        first, _second, third = op.Split(x, axis=2, num_outputs=3, _outputs=3)  # a variadic output keeps its count
        ln2 = op.LayerNormalization(x, w, w, axis=-1, _outputs=3)
    g.output(y, "y")
    g.output(first, "first")
    g.output(third, "third")
    g.output(ln2[1], "mean")  # the middle output is read: the node keeps two
    _, after, report = _optimized(g, {"x": RNG.standard_normal((2, 3, 8)).astype(np.float32)})
    counts = {n.op_type + str(i): len(n.output) for i, n in enumerate(after.graph.node)}
    assert sorted(counts.values()) == [1, 2, 3] and report["unused outputs dropped"] == 2
    assert _aten(after.graph.node[0]) == "aten::native_layer_norm"


@pytest.mark.parametrize("inner, outer", [([1], [2]), ([0], [0]), ([-1], [0]), ([0, 2], [-1, 1])])
def test_an_unsqueeze_pair_becomes_one(inner, outer):
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 4])
    with g, g.metadata(**{ATEN: "aten::unsqueeze"}):
        y = op.Unsqueeze(op.Unsqueeze(x, inner), outer)
    g.output(y, "y")
    feeds = {"x": RNG.standard_normal((2, 3, 4)).astype(np.float32)}
    want = np.expand_dims(np.expand_dims(feeds["x"], tuple(inner)), tuple(outer)).shape
    _, after, _ = _optimized(g, feeds)
    (node,) = after.graph.node
    assert node.op_type == "Unsqueeze" and _aten(node) == "aten::unsqueeze"
    assert _run(after, feeds)[0].shape == want


def test_a_relu_of_a_relu_and_a_concat_of_one_input_go():
    # max pooling's NaN check takes Relu(x), and x is often a Relu's output; an LSTM layer's NaN
    # mask concatenates its one direction
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 7])
    with g:
        r = op.Relu(x)
        twice = op.Relu(r)
        single = op.Concat(op.Unsqueeze(x, [0]), axis=0)
        y = op.Add(op.Mul(twice, r), single)
    g.output(y, "y")
    feeds = {"x": np.array([[np.nan, -0.0, 0.0, -np.inf, np.inf, -1.5, 2.5]] * 2, np.float32)}
    expected = _run(g.to_model(), feeds)[0]
    before, after, _ = _optimized(g, feeds)
    assert before.count("Relu") == 2 and "Concat" in before
    assert sorted(n.op_type for n in after.graph.node) == ["Add", "Mul", "Relu", "Unsqueeze"]
    np.testing.assert_array_equal(np.signbit(_run(after, feeds)[0]), np.signbit(expected))


def test_repeated_nodes_on_equal_small_constants_merge():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3])
    with g:
        a = op.Unsqueeze(x, np.array([1], np.int64))
        b = op.Unsqueeze(x, np.array([1], np.int64))  # another constant, the same contents
        c = op.Unsqueeze(x, np.array([0], np.int64))
        y = op.Add(a, b)
    g.output(y, "y")
    g.output(c, "z")
    _, after, _ = _optimized(g, {"x": RNG.standard_normal((2, 3)).astype(np.float32)})
    assert [n.op_type for n in after.graph.node].count("Unsqueeze") == 2


@pytest.mark.parametrize("target, index", [([5, 2, 3, 4], [0, 1, 2]), ([0, 0, 3, 4], [-1, 1, 0])])
def test_a_packed_qkv_select_becomes_a_slice(target, index):
    """nn.MultiheadAttention's unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2)[i]."""
    g = GraphBuilder()
    x = g.input("x", FLOAT, [5, 2, 12])
    with g, g.metadata(**{ATEN: "aten::select"}):
        packed = op.Squeeze(op.Transpose(op.Unsqueeze(op.Reshape(x, target), [0]), perm=[3, 1, 2, 0, 4]), [-2])
        parts = [op.Gather(packed, np.array(i, np.int64), axis=0) for i in index]
    for i, part in enumerate(parts):
        g.output(part, f"y{i}")
    _, after, _ = _optimized(g, {"x": RNG.standard_normal((5, 2, 12)).astype(np.float32)})
    assert [n.op_type for n in after.graph.node] == ["Slice"] * 3
    assert all(_aten(n) == "aten::select" for n in after.graph.node)


def test_a_packed_select_of_another_layout_stays():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [5, 2, 12])
    with g:
        packed = op.Squeeze(op.Transpose(op.Unsqueeze(op.Reshape(x, [5, 2, 4, 3]), [0]), perm=[3, 1, 2, 0, 4]), [-2])
        y = op.Gather(packed, np.array(1, np.int64), axis=0)
    g.output(y, "y")
    _, after, _ = _optimized(g, {"x": RNG.standard_normal((5, 2, 12)).astype(np.float32)})
    assert "Gather" in [n.op_type for n in after.graph.node]


def test_a_small_weight_expanded_over_the_batch_is_folded_but_never_widened():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 4, 8])
    cls = g.initializer("cls", RNG.standard_normal((1, 1, 8)).astype(np.float32))
    big = g.initializer("big", RNG.standard_normal((1, 64, 256)).astype(np.float32))
    half = g.initializer("half", RNG.standard_normal((1, 1, 8)).astype(np.float16))
    with g:
        y = op.Concat(op.Expand(cls, [2, 1, 8]), x, axis=1)  # 64 floats: folded
        z = op.Expand(big, [2, 64, 256])  # 128 KB: stays a node
        w = op.Add(x, op.Cast(half, to=FLOAT.onnx))  # a widening Cast of a weight: stays
    g.output(y, "y")
    g.output(z, "z")
    g.output(w, "w")
    _, after, _ = _optimized(g, {"x": RNG.standard_normal((2, 4, 8)).astype(np.float32)})
    assert sorted(n.op_type for n in after.graph.node) == ["Add", "Cast", "Concat", "Expand"]
    assert {i.name: i.data_type for i in after.graph.initializer}["half"] == 10  # float16 kept
