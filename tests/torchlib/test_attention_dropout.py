"""Attention with dropout in training mode exports, as torch.onnx exports it: a random ONNX
Dropout on the attention weights. Outputs are random, so they are checked by their statistics."""

from __future__ import annotations

import onnx
import pytest
import torch
import torch.nn.functional as F

import torchlib


class Attention(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, q, k, v):
        return F.scaled_dot_product_attention(q, k, v, dropout_p=self.p if self.training else 0.0)


def qkv(length=64):
    torch.manual_seed(0)
    return torch.randn(2, 2, length, 8), torch.randn(2, 2, length, 8), torch.ones(2, 2, length, 8)


def test_training_dropout_is_a_random_dropout_node():
    q, k, v = qkv()
    result = torchlib.export(Attention(0.5).train(), (q, k, v))
    dropouts = [n for n in result.model_proto.graph.node if n.op_type == "Dropout"]
    assert len(dropouts) == 1 and len(dropouts[0].input) == 3  # data, ratio, training_mode
    training_mode = onnx.numpy_helper.to_array(next(
        i for i in result.model_proto.graph.initializer if i.name == dropouts[0].input[2])) if dropouts[0].input[2] in {
        i.name for i in result.model_proto.graph.initializer} else None
    assert training_mode is None or bool(training_mode)
    assert "random" in result.self_check  # the self-check knows it cannot compare
    first, second = result(q, k, v), result(q, k, v)
    assert first.shape == (2, 2, 64, 8) and not torch.equal(first, second)
    # with v all ones each output is (kept weights) / (1 - p): mean 1, as torch's
    torch.manual_seed(1)
    expected = Attention(0.5).train()(q, k, v)
    assert abs(float(first.mean()) - 1) < 0.05 and abs(float(expected.mean()) - 1) < 0.05
    assert abs(float(first.std()) - float(expected.std())) < 0.05


def test_dropout_zero_and_eval_mode_are_exact():
    q, k, v = qkv(8)
    v = torch.randn_like(v)
    eval_result = torchlib.export(Attention(0.5).eval(), (q, k, v))
    zero_result = torchlib.export(Attention(0.0).train(), (q, k, v))
    expected = Attention(0.5).eval()(q, k, v)
    for result in (eval_result, zero_result):
        assert not any(n.op_type == "Dropout" for n in result.model_proto.graph.node)
        torch.testing.assert_close(result(q, k, v), expected)


@pytest.mark.parametrize("p", [1.0])
def test_dropout_one_gives_zeros_as_torch(p):
    q, k, v = qkv(8)
    result = torchlib.export(Attention(p).train(), (q, k, v))
    torch.testing.assert_close(Attention(p).train()(q, k, v), torch.zeros(2, 2, 8, 8))
    torch.testing.assert_close(result(q, k, v), torch.zeros(2, 2, 8, 8))


def test_dropout_inside_the_model_survives_onnxruntime_optimizations():
    class Inner(torch.nn.Module):
        def forward(self, x):
            return F.dropout(x, 0.5, training=True).sum(-1)  # the Dropout's output is no graph output

    x = torch.ones(8, 1000)
    sums = torchlib.export(Inner(), (x,))(x)
    assert not torch.all(sums == 1000)  # onnxruntime would drop an unread-mask Dropout: every sum 1000
    assert abs(float(sums.mean()) - 1000) < 60 and set(torch.unique(torch.remainder(sums, 2)).tolist()) == {0.0}
