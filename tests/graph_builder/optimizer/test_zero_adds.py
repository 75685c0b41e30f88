"""Add(x, 0) dropped where it returns x bit for bit, signed zeros included (cleanup._adds_zero):
each exact form and each near miss is run with and without the optimizer in onnxruntime on
inputs that make -0.0 where a graph can (products of -0.0 and zero weights) and compared with
their sign bits."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch

import torchlib
from graph_builder import FLOAT, INT64, GraphBuilder, op
from graph_builder.optimizer import optimize

ZERO, NEG_ZERO = np.array(0.0, np.float32), np.array(-0.0, np.float32)


def _x():
    """[2, 3, 4, 4] of -0.0, 0.0, 1.5, -2.0, tiny and huge values."""
    values = np.array([-0.0, 0.0, 1.5, -2.0, 1e-30, -3e38], np.float32)
    return np.resize(values, (2, 3, 4, 4))


def _weight(shape, zeros=0.5):
    """Weights with a share of exact zeros (products of 0 * -0.0 are -0.0)."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal(shape).astype(np.float32)
    w[rng.random(shape) < zeros] = 0.0
    return w


def _same_bits(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _both(build, feeds):
    """(Add nodes before, after; outputs equal bit for bit)."""
    g = GraphBuilder()
    build(g)
    before = g.to_model()
    optimize(g)
    after = g.to_model()
    runs = [ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
            for m in (before, after)]
    adds = [sum(n.op_type == "Add" for n in m.graph.node) for m in (before, after)]
    return adds, all(_same_bits(a, b) for a, b in zip(*runs))


def _conv(g, bias):
    x = g.input("x", FLOAT, [2, 3, 4, 4])
    w = g.initializer("w", np.zeros((5, 3, 1, 1), np.float32))  # every output a sum of -0.0 or 0.0 products
    b = None if bias is None else g.initializer("b", np.array(bias, np.float32))
    return x, w, b


# (name, build, zero added, Add removed)
def _conv_biased(g, zero=ZERO, bias=(0.0, 1.0, -2.0, 0.0, 3.0)):
    x, w, b = _conv(g, bias)
    with g:
        y = op.Add(op.Conv(x, w, b), zero)
    g.output(y, "y")


def _conv_without_bias(g):
    x, w, _ = _conv(g, None)
    with g:
        y = op.Add(op.Conv(x, w), ZERO)
    g.output(y, "y")


def _conv_transpose(g):
    x = g.input("x", FLOAT, [2, 3, 4, 4])
    w = g.initializer("w", _weight((3, 2, 3, 3)))
    b = g.initializer("b", np.array([0.0, -1.0], np.float32))
    with g:
        y = op.Add(op.ConvTranspose(x, w, b), ZERO)
    g.output(y, "y")


def _gemm(g, beta=1.0):
    x = g.input("x", FLOAT, [6, 4])
    w = g.initializer("w", _weight((4, 3)))
    c = g.initializer("c", np.array([0.0, 2.0, 0.0], np.float32))
    with g:
        y = op.Add(op.Gemm(x, w, c, beta=beta), ZERO)
    g.output(y, "y")


def _batch_norm(g, beta=(0.0, 0.5, 0.0)):
    x = g.input("x", FLOAT, [2, 3, 4, 4])
    scale, b = g.initializer("scale", np.array([1.0, 0.0, 2.0], np.float32)), g.initializer("beta", np.array(beta, np.float32))
    mean, var = g.initializer("mean", np.zeros(3, np.float32)), g.initializer("var", np.ones(3, np.float32))
    with g:
        y = op.Add(op.BatchNormalization(x, scale, b, mean, var), ZERO)
    g.output(y, "y")


def _product(g):
    x = g.input("x", FLOAT, [2, 3, 4, 4])
    with g:
        y = op.Add(op.Mul(x, ZERO), ZERO)  # -0.0 where x < 0, then 0.0
    g.output(y, "y")


def _negative_zero_to_any(g):
    x = g.input("x", FLOAT, [2, 3, 4, 4])
    with g:
        y = op.Add(op.Neg(x), NEG_ZERO)
    g.output(y, "y")


def _wider_zero(g):
    x, w, b = _conv(g, (0.0, 1.0, -2.0, 0.0, 3.0))
    with g:
        y = op.Add(op.Conv(x, w, b), np.zeros((1, 1, 1, 1, 1), np.float32))  # broadcasts to rank 5
    g.output(y, "y")


def _int_zero(g):
    x = g.input("i", INT64, [2, 3])
    with g:
        y = op.Add(op.Mul(x, x), np.array(0, np.int64))
    g.output(y, "y")


FEEDS = {"x": _x()}
CASES = {
    "conv with a bias": (_conv_biased, FEEDS, True),
    "conv_transpose with a bias": (_conv_transpose, FEEDS, True),
    "gemm with C": (_gemm, {"x": _x().reshape(-1)[:24].reshape(6, 4)}, True),
    "batch_norm": (_batch_norm, FEEDS, True),
    "x + -0.0": (_negative_zero_to_any, FEEDS, True),
    "integer x + 0": (_int_zero, {"i": np.arange(-3, 3, dtype=np.int64).reshape(2, 3)}, True),
    # near misses: the Add stays
    "conv without a bias (its sums may be -0.0)": (_conv_without_bias, FEEDS, False),
    "conv with a -0.0 bias": (lambda g: _conv_biased(g, bias=(0.0, -0.0, 1.0, 2.0, 3.0)), FEEDS, False),
    "gemm with beta 0.5": (lambda g: _gemm(g, beta=0.5), {"x": _x().reshape(-1)[:24].reshape(6, 4)}, False),
    "batch_norm with a -0.0 beta": (lambda g: _batch_norm(g, beta=(0.0, -0.0, 1.0)), FEEDS, False),
    "a product + 0.0": (_product, FEEDS, False),
    "a zero that broadcasts to a higher rank": (_wider_zero, FEEDS, False),
    "a zero that is not zero": (lambda g: _conv_biased(g, zero=np.array(1e-45, np.float32)), FEEDS, False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_zero_add_goes_only_where_it_returns_x_bit_for_bit(name):
    build, feeds, removed = CASES[name]
    (before, after), same = _both(build, feeds)
    assert same, f"{name}: the optimized graph differs from the plain one (sign bits included)"
    assert after == before - 1 if removed else after == before


class RepBlock(torch.nn.Module):
    """timm's MobileOneBlock as it trains (FastViT's RepMixer): absent branches are the number 0."""

    def __init__(self, c: int, identity: bool):
        super().__init__()
        self.conv = torch.nn.Sequential(torch.nn.Conv2d(c, c, 3, padding=1, bias=False), torch.nn.BatchNorm2d(c))
        self.identity = torch.nn.BatchNorm2d(c) if identity else None

    def forward(self, x):
        identity_out = self.identity(x) if self.identity is not None else 0
        scale_out = 0
        return torch.nn.functional.gelu(scale_out + identity_out + self.conv(x))


def test_a_reparameterisable_block_loses_its_zero_adds_and_keeps_torchs_answer():
    torch.manual_seed(0)
    model = torch.nn.Sequential(RepBlock(4, False), RepBlock(4, True)).eval()
    for bn in (m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)):
        bn.running_mean.uniform_(-1, 1)
        bn.bias.data.uniform_(-1, 1)
    x = torch.randn(2, 4, 6, 6)
    plain = torchlib.export(model, (x,), optimize=False)
    result = torchlib.export(model, (x,))
    adds = [sum(n.op_type == "Add" for n in r.model_proto.graph.node) for r in (plain, result)]
    assert adds[1] < adds[0]
    for inputs in (x, torch.zeros(2, 4, 6, 6), -torch.zeros(2, 4, 6, 6)):
        with torch.no_grad():
            expected = model(inputs)
        a, b = plain(inputs), result(inputs)
        torch.testing.assert_close(b, expected, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(b, a, atol=1e-6, rtol=1e-6)
