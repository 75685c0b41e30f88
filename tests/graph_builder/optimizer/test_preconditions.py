"""Rewrites that matched too much (issue 19, class 1), the fold budget for weight-free generators
and BatchNorm folding with a dynamic batch: each model is exported with optimize=True and
optimize=False and both are compared with torch at several sizes of every dynamic dim."""

from __future__ import annotations

import math
import os

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch.export import Dim

import torchlib
from graph_builder import DOUBLE, FLOAT, GraphBuilder, op
from graph_builder.optimizer import Rule, optimize, record


def _rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def _inv_freq(dim: int = 16) -> torch.Tensor:
    return 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))


def _check(model, args, shapes=None, sizes=(), opset=23):
    """Export both ways; compare both with torch at the example and at each size of the dynamic
    dims (every dynamic dim of every input takes the size); return the optimized op types."""
    plain = torchlib.export(model, args, dynamic_shapes=shapes, opset=opset, optimize=False)
    result = torchlib.export(model, args, dynamic_shapes=shapes, opset=opset)
    runs = [args]
    for n in sizes:
        runs.append(tuple(torch.randn([n if shapes and a in shapes[i] else s for a, s in enumerate(x.shape)])
                          for i, x in enumerate(args)))
    for inputs in runs:
        for exported in (plain, result):
            for d in exported.verify(*inputs):
                assert d.ok(atol=1e-5, rtol=1e-4), (inputs[0].shape, d)
    return [n.op_type for n in result.graph.nodes]


# -- RotaryEmbedding --------------------------------------------------------------------------------


class Rope(torch.nn.Module):
    """Rotate-half rotary embedding of x laid out [batch, heads, seq, dim] (cos = emb.cos()[None,
    None]) or, with seq_axis=1, [batch, seq, heads, dim] (cos = emb.cos()[None, :, None, :])."""

    def __init__(self, seq_axis: int = 2):
        super().__init__()
        self.seq_axis = seq_axis
        self.register_buffer("inv", _inv_freq(), persistent=False)

    def forward(self, x):
        t = torch.arange(x.shape[self.seq_axis], dtype=torch.float32)
        emb = torch.cat((torch.outer(t, self.inv),) * 2, dim=-1)
        cos, sin = emb.cos(), emb.sin()
        if self.seq_axis == 1:
            cos, sin = cos[None, :, None, :], sin[None, :, None, :]
        else:
            cos, sin = cos[None, None], sin[None, None]
        return x * cos + _rotate_half(x) * sin


def test_rotary_with_the_sequence_on_axis_1_is_not_fused():
    ops = _check(Rope(seq_axis=1), (torch.randn(2, 6, 4, 16),), ({1: Dim("seq")},), sizes=(3, 7, 9))
    assert "RotaryEmbedding" not in ops


@pytest.mark.parametrize("opset", [22])  # 18-22: the fuzzer's near misses
def test_rotary_is_not_emitted_below_opset_23(opset):
    ops = _check(Rope(), (torch.randn(2, 4, 6, 16),), ({2: Dim("seq")},), sizes=(3, 7, 9), opset=opset)
    assert "RotaryEmbedding" not in ops


def test_rotary_at_opset_23_still_fuses():
    ops = _check(Rope(), (torch.randn(2, 4, 6, 16),), ({2: Dim("seq")},), sizes=(3, 7, 9))
    assert ops.count("RotaryEmbedding") == 1


def test_a_one_row_angle_table_broadcast_over_the_sequence_is_not_fused():
    class OneRow(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("inv", _inv_freq(), persistent=False)

        def forward(self, x, position):
            emb = torch.cat((torch.outer(position, self.inv),) * 2, dim=-1)  # [1, 16]
            return x * emb.cos() + _rotate_half(x) * emb.sin()

    args = (torch.randn(2, 4, 6, 16), torch.tensor([3.0]))
    assert "RotaryEmbedding" not in _check(OneRow(), args)


# -- Python-number slots ---------------------------------------------------------------------------


class GeluHalfBuffer(torch.nn.Module):
    def __init__(self, rank: int):
        super().__init__()
        self.register_buffer("c_half", torch.full((1,) * rank, 0.5))

    def forward(self, x):
        return x * self.c_half * (1 + torch.erf(x / math.sqrt(2)))


class RMSNormEpsBuffer(torch.nn.Module):
    def __init__(self, rank: int):
        super().__init__()
        self.w = torch.nn.Parameter(torch.rand(16) + 0.5)
        self.register_buffer("eps", torch.full((1,) * rank, 1e-6))

    def forward(self, x):
        return self.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


@pytest.mark.parametrize("x_rank, c_rank, fused", [(1, 2, False), (2, 2, True)])
def test_a_gelu_constant_that_broadcasts_the_result_up_is_not_a_number_slot(x_rank, c_rank, fused):
    shape = [5, 3, 16][-x_rank:]
    ops = _check(GeluHalfBuffer(c_rank), (torch.randn(shape),), ({0: Dim("n")},), sizes=(2, 7, 11))
    assert ("Gelu" in ops) == fused


@pytest.mark.parametrize("x_rank, eps_rank, fused", [(2, 3, False), (3, 3, True)])
def test_an_rms_norm_eps_that_broadcasts_the_result_up_is_not_fused(x_rank, eps_rank, fused):
    shape = [4, 5, 16][-x_rank:]
    ops = _check(RMSNormEpsBuffer(eps_rank), (torch.randn(shape),), ({0: Dim("n")},), sizes=(2, 7, 11))
    assert ("RMSNormalization" in ops) == fused


def _mul_half(op, x):
    return op.Mul(x, 0.5)


def _rule(**kwargs):
    return Rule("half", _mul_half, lambda op, x: op.Div(x, 2.0), **kwargs)


def _rewritten(build, rules, opset=23):
    g = GraphBuilder(opset=opset)
    build(g)
    before = g.to_model()
    report = optimize(g, rules=rules)
    after = g.to_model()
    return report, [n.op_type for n in after.graph.node], before, after


@pytest.mark.parametrize("value, dtype, shape, fires", [
    (0.5, FLOAT, (), True), (0.5, FLOAT, (1,), True), (0.5, FLOAT, (1, 1, 1), False),
    (0.5001, FLOAT, (), False), (0.5 + 2e-16, DOUBLE, (), True), (0.5 + 1e-12, DOUBLE, (), False),
])
def test_a_number_slot_matches_its_value_in_the_constants_dtype_without_broadcasting(value, dtype, shape, fires):
    def build(g):
        x = g.input("x", dtype, [3])
        with g:
            y = op.Mul(x, np.full(shape, value, dtype=dtype.numpy))
        g.output(y, "y")

    _, ops, before, after = _rewritten(build, [_rule()])
    assert ("Div" in ops) == fires, ops
    feeds = {"x": np.arange(3, dtype=dtype.numpy)}
    a = ort.InferenceSession(before.SerializeToString()).run(None, feeds)[0]
    b = ort.InferenceSession(after.SerializeToString()).run(None, feeds)[0]
    assert a.shape == b.shape
    np.testing.assert_allclose(b, a, rtol=1e-6)


def test_a_rule_does_not_fire_below_its_opset():
    def build(g):
        x = g.input("x", FLOAT, [3])
        with g:
            y = op.Mul(x, 0.5)
        g.output(y, "y")

    assert "half" not in _rewritten(build, [_rule(opset=23)], opset=22)[0]
    assert _rewritten(build, [_rule(opset=22)], opset=22)[0]["half"] == 1


def test_a_replacement_of_another_shape_is_dropped():
    def build(g):
        x = g.input("x", FLOAT, [3])
        with g:
            y = op.Mul(x, 0.5)
        g.output(y, "y")

    widening = Rule("widen", _mul_half, lambda op, x: op.Unsqueeze(op.Div(x, 2.0), [0]))
    report, ops, _, _ = _rewritten(build, [widening])
    assert "widen" not in report and ops == ["Mul"]


def test_squeeze_by_no_axes_is_not_an_identity_when_a_dim_is_one():
    def build(g):
        x = g.input("x", FLOAT, [1, 3, 1])
        with g:
            y = op.Squeeze(op.Relu(x), np.array([], np.int64))
        g.output(y, "y")

    _, ops, _, after = _rewritten(build, [])
    assert "Squeeze" in ops
    feeds = {"x": np.ones((1, 3, 1), np.float32)}
    assert ort.InferenceSession(after.SerializeToString()).run(None, feeds)[0].shape == (3,)


# -- fold budget -----------------------------------------------------------------------------------


class CausalMask(torch.nn.Module):
    def __init__(self, length: int):
        super().__init__()
        self.length = length

    def forward(self, x):
        n = self.length
        return x + torch.triu(torch.full((n, n), float("-inf")), 1) + torch.ones(n, n)


def test_a_big_generated_mask_stays_a_generator(tmp_path):
    model, x = CausalMask(2048), torch.randn(1, 1)
    sizes = {}
    for optimized in (True, False):
        path = tmp_path / f"{optimized}.onnx"
        # check=False: the subject is the file's size (the smaller masks below are run and compared)
        torchlib.export(model, (x,), optimize=optimized, check=False).save(path)
        sizes[optimized] = os.path.getsize(path) + (os.path.getsize(f"{path}.data") if os.path.exists(f"{path}.data") else 0)
    assert sizes[True] < 64 << 10 and sizes[False] < 64 << 10, sizes  # folded it was 32 MiB (128 MiB at 4096)


@pytest.mark.parametrize("length, folded", [(8, True), (48, False)])
def test_a_generated_mask_folds_only_while_small_and_stays_exact(length, folded):
    ops = _check(CausalMask(length), (torch.randn(2, length, length),), ({0: Dim("b")},), sizes=(3, 5, 9))
    assert ("Trilu" not in ops) == folded, ops


def test_what_reads_weights_keeps_its_budget():
    """A weight's transpose (a view) and a scaling of a weight still fold."""
    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.randn(64, 48))

        def forward(self, x):
            return x @ (self.w.t() * 2)

    with record() as hits:
        ops = _check(Scaled(), (torch.randn(3, 48),), ({0: Dim("b")},), sizes=(2, 5, 9))
    assert ops == ["MatMul"] and hits["constants folded"] >= 2


# -- BatchNorm after a convolution, dynamic dims --------------------------------------------------


def _conv_bn(bias: bool, conv=torch.nn.Conv2d, bn=torch.nn.BatchNorm2d):
    model = torch.nn.Sequential(conv(3, 8, 3, bias=bias), bn(8), torch.nn.ReLU())
    model[1].running_mean.uniform_(-1, 1)
    model[1].running_var.uniform_(0.5, 2)
    model[1].weight.data.uniform_(0.5, 2)
    model[1].bias.data.uniform_(-1, 1)
    return model.eval()


@pytest.mark.parametrize("bias, dims", [(True, {0: "batch"}), (False, {0: "batch"}), (True, {0: "batch", 2: "h", 3: "w"})])
def test_batch_norm_folds_into_conv_with_dynamic_dims(bias, dims):
    torch.manual_seed(0)
    shapes = ({a: Dim(n, min=4) for a, n in dims.items()},)
    ops = _check(_conv_bn(bias), (torch.randn(4, 3, 10, 9),), shapes, sizes=(4, 5, 11))
    assert ops == ["Conv", "Relu"]


@pytest.mark.parametrize("conv", [torch.nn.Conv2d, torch.nn.ConvTranspose2d])
def test_the_folded_weight_is_the_float64_product_rounded_once(conv):
    """W' = W * s computed in float64 and rounded once to W's dtype, bit for bit."""
    torch.manual_seed(0)
    model = _conv_bn(True, conv=conv)
    result = torchlib.export(model, (torch.randn(2, 3, 10, 9),), check=False)
    assert [n.op_type for n in result.model_proto.graph.node] == [conv.__name__.removesuffix("2d"), "Relu"]
    folded = next(v for v in result.graph.initializers.values() if v.const_value.ndim == 4).const_value
    w, bn = model[0].weight.detach().double(), model[1]
    s = (bn.weight.double() / torch.sqrt(bn.running_var.double() + bn.eps)).detach()
    want = (w * (s.view(-1, 1, 1, 1) if conv is torch.nn.Conv2d else s.view(1, -1, 1, 1))).float()
    assert np.array_equal(np.asarray(folded).view(np.uint32), want.numpy().view(np.uint32))


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "bfloat16"])
@pytest.mark.parametrize("strided", [False, True])
def test_the_scaling_of_a_weight_is_the_float64_product_rounded_once(dtype, strided):
    """folding._times, which computes W * s without float64 copies of W, gives the bits of
    `(W.astype(float64) * s).astype(W.dtype)`: values across the dtype's range, overflow to inf
    and subnormals included, also for a strided (transposed) weight."""
    import ml_dtypes

    from graph_builder.optimizer.folding import _times

    np_dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(0)
    w = (rng.standard_normal((16, 8, 3, 3)) * np.exp(rng.uniform(-30, 30, (16, 8, 3, 3)))).astype(np_dtype)
    s = rng.standard_normal((16, 1, 1, 1)) * np.exp(rng.uniform(-5, 5, (16, 1, 1, 1)))
    if strided:
        w, s = w.transpose(1, 0, 2, 3), s.reshape(1, 16, 1, 1)
    got, want = _times(w, s), (w.astype(np.float64) * s).astype(np_dtype)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_batch_norm_of_a_conv_output_read_elsewhere_stays():
    class Residual(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv, self.bn = torch.nn.Conv2d(3, 8, 3), torch.nn.BatchNorm2d(8)

        def forward(self, x):
            y = self.conv(x)
            return self.bn(y) + y

    model = Residual().eval()
    model.bn.running_var.uniform_(0.5, 2)
    ops = _check(model, (torch.randn(2, 3, 8, 8),), ({0: Dim("batch")},), sizes=(3, 5))
    assert "BatchNormalization" in ops
