"""The optimizer: each pass and each rewrite rule on its own, and its effect on exported models.
Every optimized graph is compared in onnxruntime with the graph before optimizing."""

from __future__ import annotations

import math

import numpy as np
import onnxruntime as ort
import pytest
import torch

import torchlib
from graph_builder import DOUBLE, FLOAT, GraphBuilder, op
from graph_builder.optimizer import Rule, Var, optimize
from graph_builder.optimizer.editing import Uses
from graph_builder.optimizer.pattern import rewrite


def _run(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def _optimized(build, feeds, **kwargs):
    """(op types before, op types after) of the graph `build(g)` makes; checks equal results."""
    g = GraphBuilder()
    build(g)
    before = g.to_model()
    report = optimize(g, **kwargs)
    after = g.to_model()
    for a, b in zip(_run(before, feeds), _run(after, feeds)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    return [n.op_type for n in before.graph.node], [n.op_type for n in after.graph.node], report


X = np.random.default_rng(0).standard_normal((2, 3, 8)).astype(np.float32)


def test_folds_what_depends_only_on_weights():
    def build(g):
        x = g.input("x", FLOAT, [2, 3, 8])
        w = g.initializer("w", np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32))
        with g:
            y = op.MatMul(x, op.Transpose(op.Mul(w, 2.0), perm=[1, 0]))
        g.output(y, "y")

    before, after, report = _optimized(build, {"x": X})
    assert before == ["Mul", "Transpose", "MatMul"] and after == ["MatMul"]
    assert report["constants folded"] == 2


def test_a_weight_standardised_in_float64_and_cast_back_folds_into_one_weight():
    """timm's StdConv2d: the Cast to float64 alone would double the weight, the cone it starts
    ends in a weight of the same size, so the whole cone folds."""
    w = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)

    def build(g):
        x = g.input("x", FLOAT, [2, 3, 8])
        gain = g.initializer("gain", np.full((4, 1), 0.5, np.float32))
        with g:
            w64 = op.Cast(g.initializer("w", w), to=DOUBLE.onnx)
            centered = op.Sub(w64, op.ReduceMean(w64, [1], keepdims=1))
            scaled = op.Cast(op.Mul(centered, op.Cast(gain, to=DOUBLE.onnx)), to=FLOAT.onnx)  # gain's Cast: after the root
            y = op.MatMul(x, op.Transpose(scaled, perm=[1, 0]))
        g.output(y, "y")

    before, after, _ = _optimized(build, {"x": X})
    assert len(before) == 8 and after == ["MatMul"]


def test_reshapes_of_a_weight_fold_as_views_of_it():
    """Reshape, Squeeze, Unsqueeze and Flatten of a weight (NFNet reshapes every conv weight
    before standardising it) fold as numpy views: no bytes copied, the values onnxruntime gives."""
    w = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 8])
    weight = g.initializer("w", w)
    with g:
        flat = op.Flatten(op.Unsqueeze(weight, [0, -1]), axis=1)  # [1, 32]
        back = op.Squeeze(op.Reshape(flat, np.array([0, 4, -1], np.int64)), [0])  # [4, 8]
        y = op.MatMul(x, op.Transpose(back, perm=[1, 0]))
    g.output(y, "y")
    before = g.to_model()
    optimize(g)
    after = g.to_model()
    assert [n.op_type for n in after.graph.node] == ["MatMul"]
    np.testing.assert_array_equal(_run(before, {"x": X})[0], _run(after, {"x": X})[0])
    folded = g.graph.nodes[0].inputs[1].const_value
    assert np.shares_memory(folded, w)


def test_views_folded_by_numpy_are_what_onnxruntime_computes():
    """Every argument the view folding takes gives onnxruntime's result, and every argument
    onnxruntime rejects is declined (then the node stays, or onnxruntime says why)."""
    import itertools

    from onnx import defs

    from graph_builder.evaluator import EAGER
    from graph_builder.optimizer import folding
    from graph_builder.schema import OpSignature

    class Node:  # the fields _view reads
        def __init__(self, op_type, attributes):
            self.op_type, self.attributes = op_type, attributes

    a = np.random.default_rng(0).standard_normal((2, 1, 3)).astype(np.float32)
    folded = 0
    for src in (a, a.transpose(2, 1, 0), a[0, 0]):
        r = src.ndim
        cases = [("Reshape", [np.array(dims, np.int64)], {"allowzero": z})
                 for k in range(4) for dims in itertools.product([-2, -1, 0, 1, 3, 6], repeat=k) for z in (0, 1)]
        axes = [list(c) for k in (1, 2) for c in itertools.product(range(-r - 2, r + 2), repeat=k)]
        cases += [("Squeeze", [], {})] + [(o, [np.array(x, np.int64)], {}) for x in axes for o in ("Squeeze", "Unsqueeze")]
        cases += [("Flatten", [], {"axis": axis}) for axis in range(-r - 1, r + 2)]
        for op_type, extra, attributes in cases:
            mine = folding._view(Node(op_type, attributes), [src, *extra])
            try:
                sig = OpSignature(defs.get_schema(op_type, 23, ""), 23)
                want = EAGER.run_arrays(sig, [src.copy(order="C"), *extra], attributes, 1)[0]
            except Exception:  # noqa: BLE001  (rejected by onnxruntime)
                want = None
            if mine is not None:
                assert want is not None and mine[0].shape == want.shape, (op_type, src.shape, extra, attributes)
                np.testing.assert_array_equal(mine[0], want)
                folded += 1
    assert folded > 100


class RelativeBias(torch.nn.Module):
    """maxvit / swin: a bias table gathered by an int64 index buffer into (heads, 49, 49)."""

    def __init__(self, heads: int):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(169, heads))
        self.register_buffer("index", torch.randint(0, 169, (49, 49)))

    def forward(self, x):
        return x + self.table[self.index.view(-1)].view(49, 49, -1).permute(2, 0, 1)


@pytest.mark.parametrize("heads, folded", [(4, True), (8, False)])
def test_a_weight_gathered_by_an_index_buffer_folds_within_the_growth_allowance(heads, folded):
    """The int64 index table is not a second weight dtype (the result is the table's floats):
    4 heads make 38 KB, within the 64 KB allowance, and fold; 8 heads (77 KB) stay a Gather."""
    model, x = RelativeBias(heads), torch.randn(2, heads, 49, 49)
    result = torchlib.export(model, (x,), dynamic_shapes=({0: torch.export.Dim("b")},))
    ops = [n.op_type for n in result.model_proto.graph.node]
    assert (ops == ["Add"]) == folded and ("Gather" in ops) != folded
    with torch.no_grad():
        y = torch.randn(3, heads, 49, 49)
        torch.testing.assert_close(result(y), model(y), rtol=0, atol=0)


class RelativeBiasInModel(torch.nn.Module):
    """RelativeBias beside a 1024 x 1024 Linear: 4.2 MB of weights, a growth allowance of 2 %
    (84 KB) over the 64 KB any one node may make."""

    def __init__(self, heads: int):
        super().__init__()
        self.bias = RelativeBias(heads)
        self.proj = torch.nn.Linear(1024, 1024)

    def forward(self, x, y):
        return self.bias(x), self.proj(y)


@pytest.mark.parametrize("heads, folded", [(8, True), (16, False)])
def test_a_gathered_weight_over_64_kb_folds_within_2_percent_of_the_models_weights(heads, folded):
    """8 heads make 77 KB, over the 64 KB a node may grow the weights by but within the model's
    2 % (84 KB): the bias folds into one weight; 16 heads (154 KB) stay a Gather. The bias is
    torch's exactly either way."""
    model, x, y = RelativeBiasInModel(heads), torch.randn(2, heads, 49, 49), torch.randn(2, 1024)
    result = torchlib.export(model, (x, y), dynamic_shapes=({0: torch.export.Dim("b")}, {0: torch.export.Dim("b")}))
    ops = [n.op_type for n in result.model_proto.graph.node]
    assert ("Gather" in ops) != folded and ops.count("Add") + ops.count("Gemm") + ops.count("MatMul") >= 2
    with torch.no_grad():
        x, y = torch.randn(3, heads, 49, 49), torch.randn(3, 1024)
        (got, got_proj), (want, want_proj) = result(x, y), model(x, y)
    torch.testing.assert_close(got, want, rtol=0, atol=0)  # the folded bias: torch's values exactly
    torch.testing.assert_close(got_proj, want_proj)


def test_the_growth_allowance_is_shared_by_the_nodes_that_use_it():
    """Two 77 KB biases in a model with an 84 KB allowance: the first folds, the second, which
    would take the weights 2 x 77 KB past them, stays a Gather."""

    class Two(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b, self.proj = RelativeBias(8), RelativeBias(8), torch.nn.Linear(1024, 1024)

        def forward(self, x, y):
            return self.b(self.a(x)), self.proj(y)

    model, x, y = Two(), torch.randn(2, 8, 49, 49), torch.randn(2, 1024)
    result = torchlib.export(model, (x, y))
    assert [n.op_type for n in result.model_proto.graph.node].count("Gather") == 1


def test_a_float16_weight_cast_to_float32_for_an_activation_stays_a_cast():
    def build(g):
        x = g.input("x", FLOAT, [2, 3, 8])
        w = g.initializer("w", np.random.default_rng(1).standard_normal((4, 8)).astype(np.float16))
        with g:
            y = op.MatMul(x, op.Transpose(op.Cast(w, to=FLOAT.onnx), perm=[1, 0]))
        g.output(y, "y")

    _, after, _ = _optimized(build, {"x": X})
    assert after == ["Cast", "Transpose", "MatMul"]


def test_removes_identities_and_transpose_pairs_and_merges_repeats():
    def build(g):
        x = g.input("x", FLOAT, [2, 3, 8])
        with g:
            a = op.Transpose(op.Transpose(x, perm=[1, 0, 2]), perm=[1, 0, 2])
            b = op.Cast(op.Reshape(a, [2, 3, 8]), to=FLOAT.onnx)
            y = op.Add(op.Relu(b), op.Relu(b))
            z = op.Transpose(op.Transpose(x, perm=[0, 2, 1]), perm=[2, 0, 1])
        g.output(y, "y")
        g.output(z, "z")

    before, after, _ = _optimized(build, {"x": X})
    assert after == ["Relu", "Add", "Transpose"]


def _reshapes(shapes, dims=("n", 3, 8), allowzero=(0, 0)):
    """(op types after optimizing, results before and after) of Reshape(Reshape(x, a), b) for
    inputs of batch 2, 5 and 0."""

    def build(g):
        x = g.input("x", FLOAT, list(dims))
        with g:
            y = op.Reshape(op.Reshape(x, shapes[0], allowzero=allowzero[0]), shapes[1], allowzero=allowzero[1])
        g.output(y, "y")

    g = GraphBuilder()
    build(g)
    before = g.to_model()
    optimize(g)
    after = g.to_model()
    empty_ok = not any(-1 in shape for shape in shapes)  # onnxruntime cannot infer a -1 from no elements
    for n in ((2, 5, 0) if empty_ok else (2, 5)) if isinstance(dims[0], str) else (dims[0],):
        feeds = {"x": np.random.default_rng(n).standard_normal((n, 3, 8)).astype(np.float32)}
        a, b = _run(before, feeds)[0], _run(after, feeds)[0]
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    return [n.op_type for n in after.graph.node]


def test_a_reshape_of_a_reshape_reads_the_input_directly():
    assert _reshapes(([-1, 8], [2, 3, 8]), dims=(2, 3, 8)) == ["Reshape"]  # static sizes
    assert _reshapes(([0, 24], [0, 4, 6])) == ["Reshape"]  # both copy the dynamic batch
    assert _reshapes(([0, 3, 2, 4], [0, 0, 8])) == ["Reshape"]  # the second 0 is the static 3
    assert _reshapes(([0, -1], [-1, 4])) == ["Reshape"]  # no 0 in the outer shape


def test_a_reshape_of_a_reshape_stays_two_where_a_copied_dim_is_unknown():
    """Near misses: the outer 0 copies a dim the inner Reshape inferred (-1), which need not be
    the input's: the two Reshapes stay (results equal either way)."""
    assert _reshapes(([-1, 8], [0, 2, 4])) == ["Reshape", "Reshape"]  # inner dim 0 is 3n
    # the inner Reshape infers its own input's shape (n, 3, 8): an identity, so the outer 0 is n
    assert _reshapes(([-1, 3, 8], [0, 24])) == ["Reshape"]
    assert _reshapes(([0, 3, 8], [-1, 2, 12]), allowzero=(0, 1)) == ["Reshape"]  # no 0 in the outer shape


def test_an_output_that_views_a_complex_tensor_stays_one_when_its_node_goes():
    """Removing the no-op Cast that made an output moves the output (name, type) to the Cast's
    input: its complex marking and metadata move too (else a complex128 result came back as its
    real view)."""
    g = GraphBuilder()
    x = g.input("x", FLOAT, [3, 2])
    with g:
        y = op.Cast(op.Add(x, x), to=FLOAT.onnx).as_complex()
    g.output(y, "y")
    optimize(g)
    model = g.to_model()
    assert [n.op_type for n in model.graph.node] == ["Add"]
    assert g.graph.outputs[0].is_complex
    assert [(p.key, p.value) for p in model.graph.output[0].metadata_props] == [("pkg.graph_builder.complex", "complex64")]


def test_keeps_an_identity_that_names_an_input_as_output():
    def build(g):
        x = g.input("x", FLOAT, [2, 3, 8])
        g.output(x, "y")

    _, after, _ = _optimized(build, {"x": X})
    assert after == ["Identity"]


def test_dead_nodes_and_unused_weights_go():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 8])
    g.initializer("unused", np.ones(3, np.float32))
    with g:
        y = op.Relu(x)
        op.Sigmoid(x)
    g.output(y, "y")
    optimize(g)
    model = g.to_model()
    assert [n.op_type for n in model.graph.node] == ["Relu"]
    assert not model.graph.initializer


def _rms(op, x, w, eps):  # type: ignore[no-untyped-def]
    return op.Mul(op.Div(x, op.Add(op.Abs(x), eps)), w)


def test_a_rule_binds_vars_matches_either_input_order_and_checks():
    rule = Rule("softsign-scale", _rms, lambda op, x, w, eps: op.Mul(op.Softsign(x), w), check=lambda x, w, eps: True)
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 8])
    w = g.initializer("w", np.full(8, 2.0, np.float32))
    with g:
        y = op.Mul(w, op.Div(x, op.Add(1.0, op.Abs(x))))  # operands of Mul and Add swapped
        other = op.Mul(w, op.Div(x, op.Add(op.Abs(w), 1.0)))  # x in Div, but Abs of w: no match
    g.output(y, "y")
    g.output(other, "other")
    uses = Uses(g.graph)
    counts = rewrite(g, uses, [rule])
    uses.commit()
    assert counts == {"softsign-scale": 1}
    ops = [n.op_type for n in g.to_model().graph.node]
    assert "Softsign" in ops and ops.count("Div") == 1


def test_a_rule_keeps_the_metadata_of_what_it_replaces():
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 8])
    with g, g.metadata(**{"pkg.torchlib.aten_op": "aten::gelu"}):
        y = op.Mul(op.Mul(x, 0.5), op.Add(op.Erf(op.Div(x, math.sqrt(2))), 1.0))
    g.output(y, "y")
    optimize(g)
    (node,) = g.to_model().graph.node
    assert node.op_type == "Gelu"
    assert {p.key: p.value for p in node.metadata_props}["pkg.torchlib.aten_op"] == "aten::gelu"


def test_var_as_attribute_and_constant_var():
    seen = {}

    def pattern(op, x):  # type: ignore[no-untyped-def]
        return op.Softmax(x, axis=Var("axis"))

    def check(x, axis):  # type: ignore[no-untyped-def]
        seen["axis"] = axis
        return True

    rule = Rule("softmax", pattern, lambda op, x, axis: op.Softmax(x, axis=axis), check)
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 3, 8])
    with g:
        y = op.Softmax(x, axis=1)
    g.output(y, "y")
    rewrite(g, Uses(g.graph), [rule])
    assert seen == {"axis": 1}
    assert Var("c", constant=True).constant


# -- exported models ------------------------------------------------------------------------------


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(dim) + 0.5)
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class GeluFormulas(torch.nn.Module):
    def forward(self, x):
        erf = 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))
        tanh = 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * torch.pow(x, 3))))
        return erf, tanh


def _conv_bn_model():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, groups=2, bias=False), torch.nn.BatchNorm2d(8),
        torch.nn.ConvTranspose2d(8, 4, 3, groups=2), torch.nn.BatchNorm2d(4),
    )  # fmt: skip
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
            m.weight.data.uniform_(0.5, 2)
            m.bias.data.uniform_(-1, 1)
    return model.eval()


@pytest.mark.parametrize(
    "make, args, fused",
    [
        (lambda: RMSNorm(16), (torch.randn(2, 5, 16),), ["RMSNormalization"]),
        (GeluFormulas, (torch.randn(2, 5, 16),), ["Gelu", "Gelu"]),
        (_conv_bn_model, (torch.randn(2, 3, 12, 12),), ["Conv", "Relu", "Conv", "ConvTranspose"]),
    ],
)
def test_exported_model_is_fused_and_still_verifies(make, args, fused):
    torch.manual_seed(0)
    model = make()
    plain = torchlib.export(model, args, optimize=False)
    result = torchlib.export(model, args)
    assert [n.op_type for n in result.model_proto.graph.node] == fused
    assert len(result.model_proto.graph.node) < len(plain.model_proto.graph.node)
    for d in result.verify(*args):
        assert d.ok(atol=1e-5, rtol=1e-4), d


def test_folded_conv_weights_keep_state_dict_names_and_kernel_shape():
    model = _conv_bn_model()
    result = torchlib.export(model, (torch.randn(1, 3, 12, 12),))
    names = {t.name for t in result.model_proto.graph.initializer}
    assert {"0.weight", "0.bias", "3.weight", "5.weight", "5.bias"} <= names
    assert not any(n.startswith(("1.", "4.", "6.")) for n in names)  # BatchNorm parameters folded away
    for node in result.model_proto.graph.node:
        if node.op_type in ("Conv", "ConvTranspose"):
            assert [a.ints for a in node.attribute if a.name == "kernel_shape"] == [[3, 3]]


def test_lstm_weight_reordering_is_folded():
    model = torch.nn.LSTM(8, 16, num_layers=2)
    args = (torch.randn(5, 2, 8),)
    result = torchlib.export(model, args)
    ops = [n.op_type for n in result.model_proto.graph.node]
    assert "Split" not in ops and ops.count("LSTM") == 2
    assert all(d.ok() for d in result.verify(*args))


def test_model_weights_are_never_written():
    model = _conv_bn_model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    torchlib.export(model, (torch.randn(1, 3, 12, 12),))
    for k, v in model.state_dict().items():
        assert torch.equal(v, before[k]), k


def test_a_folded_weight_transpose_is_a_view_of_the_model_weight():
    """Every Linear's weight transpose folds without a second copy of the weights in memory."""
    model = torch.nn.Sequential(torch.nn.Linear(8, 16, bias=False), torch.nn.ReLU(), torch.nn.Linear(16, 4, bias=False))
    x = torch.randn(2, 3, 8)
    result = torchlib.export(model, (x,))
    assert "Transpose" not in [n.op_type for n in result.graph.nodes]
    folded = [v.const_value for v in result.graph.initializers.values() if v.const_value.ndim == 2]
    weights = [model[0].weight.detach().numpy(), model[2].weight.detach().numpy()]
    assert len(folded) == 2 and all(any(np.shares_memory(f, w) for w in weights) for f in folded)
    (diff,) = result.verify(x)
    assert diff.ok()


def _rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class RotaryQK(torch.nn.Module):
    """Rotary embeddings as Llama-style code writes them: cos/sin of cat(freqs, freqs)."""

    def __init__(self, dim: int = 16, base: float = 10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)

    def forward(self, q, k):
        t = torch.arange(q.shape[2], dtype=torch.float32)
        emb = torch.cat((torch.outer(t, self.inv_freq),) * 2, dim=-1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        return q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin


@pytest.mark.parametrize("dynamic", [False, True])
def test_rotary_embedding_is_fused(dynamic):
    q, k = torch.randn(2, 4, 6, 16), torch.randn(2, 4, 6, 16)
    seq = torch.export.Dim("seq")
    shapes = {"q": {2: seq}, "k": {2: seq}} if dynamic else None
    result = torchlib.export(RotaryQK(), (q, k), dynamic_shapes=shapes)
    ops = [n.op_type for n in result.model_proto.graph.node]
    assert ops.count("RotaryEmbedding") == 2 and "Neg" not in ops
    assert all(d.ok() for d in result.verify(q, k))
    if dynamic:
        q, k = torch.randn(2, 4, 9, 16), torch.randn(2, 4, 9, 16)
        assert all(d.ok() for d in result.verify(q, k))


def test_rotary_with_cos_sin_that_do_not_repeat_halves_is_left_alone():
    class Rope(torch.nn.Module):
        def forward(self, q, cos, sin):
            return q * cos + _rotate_half(q) * sin

    args = (torch.randn(2, 4, 6, 16), torch.randn(6, 16), torch.randn(6, 16))
    result = torchlib.export(Rope(), args)
    assert "RotaryEmbedding" not in [n.op_type for n in result.model_proto.graph.node]
    assert all(d.ok() for d in result.verify(*args))
