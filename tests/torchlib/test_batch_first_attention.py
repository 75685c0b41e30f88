"""nn.MultiheadAttention with batch_first=True exported in the batch-first layout: the optimizer
rule `attention.BATCH_FIRST` drops the transposes torch's sequence-first implementation makes
(input, each part's heads, output) and gives opset 23's `Attention` the projection's slices with
`q_num_heads`. Its outputs must be bitwise those of the same export without the rule (the same
kernels on the same rows; at a mid-sized head, onnxruntime's Attention against the MatMul /
Softmax form the export writes without it); near misses keep the sequence-first graph."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
import torch
from torch import nn

import torchlib
from graph_builder.optimizer import attention, record

RULE = "Attention in the batch-first layout (nn.MultiheadAttention)"
MASKED = "Attention in the batch-first layout (nn.MultiheadAttention, masked)"
UNFUSED = "Attention -> MatMul/Softmax (mid-sized heads)"


class SelfAttention(nn.Module):
    def __init__(self, embed: int = 32, heads: int = 4, bias: bool = True, batch_first: bool = True):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed, heads, bias=bias, batch_first=batch_first)

    def forward(self, x, mask=None):  # type: ignore[no-untyped-def]
        return self.attn(x, x, x, key_padding_mask=mask, need_weights=False)[0]


class CrossAttention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x, memory):  # type: ignore[no-untyped-def]
        return self.attn(x, memory, memory, need_weights=False)[0]


def _run(proto, args) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {i.name: a.numpy() for i, a in zip(session.get_inputs(), args)})


def _exports(model, args, monkeypatch, **kwargs):  # type: ignore[no-untyped-def]
    """(with the rule, its hits, without the rule)."""
    with record() as hits:
        fast = torchlib.export(model, args, **kwargs).model_proto
    with monkeypatch.context() as m:
        m.setattr(attention, "BATCH_FIRST", [])
        plain = torchlib.export(model, args, **kwargs).model_proto
    return fast, hits, plain


def _ops(proto) -> list[str]:  # type: ignore[no-untyped-def]
    return [n.op_type for n in proto.graph.node]


def _perms(proto) -> list[list[int]]:  # type: ignore[no-untyped-def]
    return [list(a.ints) for n in proto.graph.node if n.op_type == "Transpose" for a in n.attribute if a.name == "perm"]


@pytest.mark.parametrize("case", ["module", "masked", "encoder", "unequal-heads-size", "mid-sized"])
def test_batch_first_attention_drops_the_transposes_bitwise(case, monkeypatch):
    torch.manual_seed(0)
    x = torch.randn(3, 10, 32)
    if case == "encoder":
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        model, args, rule, layers = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval(), (x,), RULE, 2
    elif case == "masked":
        mask = torch.zeros(3, 10, dtype=torch.bool)
        mask[1, 7:] = True
        model, args, rule, layers = SelfAttention().eval(), (x, mask), MASKED, 1
    elif case == "unequal-heads-size":  # 2 heads of 24
        model, args, rule, layers = SelfAttention(48, 2).eval(), (torch.randn(2, 7, 48),), RULE, 1
    elif case == "mid-sized":  # 65 x 65 x 32 per head: MatMul / Softmax sequence-first (attention.UNFUSE)
        model, args, rule, layers = SelfAttention(128, 4).eval(), (torch.randn(2, 65, 128),), RULE, 1
    else:
        model, args, rule, layers = SelfAttention().eval(), (x,), RULE, 1
    fast, hits, plain = _exports(model, args, monkeypatch)
    assert hits[rule] == layers
    assert [1, 0, 2] in _perms(plain) and [1, 0, 2] not in _perms(fast)  # no sequence-first copy left
    assert len(fast.graph.node) < len(plain.graph.node)
    heads = [{a.name: a.i for a in n.attribute} for n in fast.graph.node if n.op_type == "Attention"]
    assert "Transpose" not in _ops(fast) and "Softmax" not in _ops(fast)
    assert len(heads) == layers and all(h["q_num_heads"] == h["kv_num_heads"] for h in heads)
    assert ("Softmax" in _ops(plain)) == (case == "mid-sized")
    for a, b in zip(_run(fast, args), _run(plain, args), strict=True):
        assert a.tobytes() == b.tobytes()  # bitwise, signed zeros included
    want = model(*args)
    np.testing.assert_allclose(_run(fast, args)[0], (want[0] if isinstance(want, tuple) else want).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", ["sequence-first", "dynamic-batch", "cross-attention", "no-bias", "no-bias-mid-sized"])
def test_batch_first_near_misses_keep_the_sequence_first_graph(case, monkeypatch):
    torch.manual_seed(0)
    x = torch.randn(3, 10, 32)
    kwargs = {}
    if case == "sequence-first":  # [L, N, E] already: no transpose of the input to remove
        model, args = SelfAttention(batch_first=False).eval(), (x,)
    elif case == "dynamic-batch":  # the head split's shapes are computed at run time, not constants
        model, args = SelfAttention().eval(), (x,)
        kwargs = {"dynamic_shapes": ({0: torch.export.Dim("batch", min=2, max=16)},)}
    elif case == "cross-attention":  # separate projections of the query and the memory
        model, args = CrossAttention().eval(), (x, torch.randn(3, 6, 32))
    elif case == "no-bias":  # a Gemm without bias (the rule reads the out-projection's bias)
        model, args = SelfAttention(bias=False).eval(), (x,)
    else:  # not taken, so written as MatMul / Softmax after all (attention.UNFUSE_LEFT)
        model, args = SelfAttention(128, 4, bias=False).eval(), (torch.randn(2, 65, 128),)
    fast, hits, plain = _exports(model, args, monkeypatch, **kwargs)
    assert hits[RULE] == hits[MASKED] == 0
    assert _ops(fast) == _ops(plain)
    assert hits[UNFUSED] == ("mid-sized" in case)
    for a, b in zip(_run(fast, args), _run(plain, args), strict=True):
        assert a.tobytes() == b.tobytes()
