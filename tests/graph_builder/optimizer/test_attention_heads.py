"""Attention splitting and merging the heads itself (`attention.heads_inside`): opset 23's 3-D q, k
and v with q_num_heads / kv_num_heads (and RotaryEmbedding on the 3-D projection with num_heads)
in place of the Reshape / Transpose around it. Each optimized graph gives the same bits as the
graph before optimizing in onnxruntime; the near misses keep their 4-D form."""

from __future__ import annotations

import collections

import numpy as np
import onnxruntime as ort
import pytest

from graph_builder import FLOAT, GraphBuilder, op
from graph_builder.optimizer import attention, optimize

RNG = np.random.default_rng(0)
B, HQ, HKV, S, P, D = 2, 4, 2, 3, 5, 8


def _run(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _attention(miss: str | None = None):  # type: ignore[no-untyped-def]
    """q, k, v projections [B, S, heads * D] split into heads (Reshape + Transpose), q and k
    rotated, Attention over a past, the output merged (Transpose + Reshape)."""
    g = GraphBuilder()
    x3 = {n: g.input(n, FLOAT, [B, S, h * D]) for n, h in (("q", HQ), ("k", HKV), ("v", HKV))}
    past = [g.input(n, FLOAT, [B, HKV, P, D]) for n in ("past_k", "past_v")]
    cos, sin = (g.input(n, FLOAT, [B, S, D // 2]) for n in ("cos", "sin"))
    with g:

        def split(x, h):  # type: ignore[no-untyped-def]
            if miss == "heads_swapped":  # [size, heads] order: not a split into heads
                return op.Transpose(op.Reshape(x, [B, S, D, h]), perm=[0, 3, 1, 2])
            return op.Transpose(op.Reshape(x, [B, S, h, D]), perm=[0, 2, 1, 3])

        q4, k4, v4 = split(x3["q"], HQ), split(x3["k"], HKV), split(x3["v"], HKV)
        q4r, k4r = op.RotaryEmbedding(q4, cos, sin), op.RotaryEmbedding(k4, cos, sin)
        y, pk, pv = op.Attention(q4r, k4r, v4, None, past[0], past[1], scale=0.3, _outputs=3)
        out = op.Reshape(op.Transpose(y, perm=[0, 2, 1, 3]), [B * S, HQ * D])  # a flattening of its own
    g.output(out, "out")
    g.output(pk, "present.0.key")
    g.output(pv, "present.0.value")
    if miss == "output_read":
        g.output(y, "y4")
    if miss == "split_read":
        g.output(q4, "q4")
    feeds = {n: RNG.standard_normal((B, S, h * D), dtype=np.float32) for n, h in (("q", HQ), ("k", HKV), ("v", HKV))}
    feeds.update({n: RNG.standard_normal((B, HKV, P, D), dtype=np.float32) for n in ("past_k", "past_v")})
    angles = RNG.standard_normal((B, S, D // 2)).astype(np.float32)
    feeds.update(cos=np.cos(angles), sin=np.sin(angles))
    return g, feeds


def _optimized(g: GraphBuilder, feeds):  # type: ignore[no-untyped-def]
    before = g.to_model()
    report = optimize(g)
    after = g.to_model()
    for a, b in zip(_run(before, feeds), _run(after, feeds), strict=True):
        np.testing.assert_array_equal(b, a)  # the same bits
    return after, report


def test_attention_takes_the_3d_projections():
    g, feeds = _attention()
    after, report = _optimized(g, feeds)
    ops = [n.op_type for n in after.graph.node]
    assert ops == ["RotaryEmbedding", "RotaryEmbedding", "Attention", "Reshape"], ops  # the flattening stays
    node = after.graph.node[2]
    attrs = {a.name: a for a in node.attribute}
    assert attrs["q_num_heads"].i == HQ and attrs["kv_num_heads"].i == HKV and attrs["scale"].f == pytest.approx(0.3)
    assert list(node.input)[:3] == [*(n.output[0] for n in after.graph.node[:2]), "v"]
    assert [list(n.input)[0] for n in after.graph.node[:2]] == ["q", "k"]  # rotated in 3-D
    assert [a.i for n in after.graph.node[:2] for a in n.attribute if a.name == "num_heads"] == [HQ, HKV]
    assert report[attention.HEADS_INSIDE] == 1


@pytest.mark.parametrize("miss, fires", [
    ("heads_swapped", False),  # the Reshape splits [size, heads]: not the heads Attention makes
    ("output_read", False),  # the 4-D output is read besides the merge
    ("split_read", True),  # the split q is read besides: it stays, beside the 3-D Attention
])
def test_near_misses(miss, fires):
    g, feeds = _attention(miss)
    after, report = _optimized(g, feeds)
    ops = collections.Counter(n.op_type for n in after.graph.node)
    assert report.get(attention.HEADS_INSIDE, 0) == int(fires)
    assert ops["Transpose"] == (1 if fires else 4)


def test_llama_decode_step_keeps_no_reshape_or_transpose(monkeypatch):
    """The tiny Llama's decode step (torchlib.genai's form): no Reshape or Transpose left, and the
    same bits as the graph with the heads split outside (the pass off), prompts and steps."""
    pytest.importorskip("transformers")
    import torch

    import torchlib
    from torchlib.genai import demo_folders, step

    model = demo_folders.model("llama")
    spec = step.DecoderSpec.of(model.config)
    wrapped = step.DecodeStep(model, spec.layers, position_ids=True)
    names, args, shapes = step.sample_inputs(spec, True)
    kwargs = dict(dynamic_shapes=step.grouped_like(wrapped.forward, shapes), input_names=names,
                  output_names=["logits", *step.present_names(spec.layers)])  # fmt: skip
    inside = torchlib.export(wrapped, args, **kwargs)
    monkeypatch.setattr(attention, "heads_inside", lambda builder, uses: 0)
    outside = torchlib.export(wrapped, args, **kwargs)
    ops, before = (collections.Counter(n.op_type for n in r.graph.nodes) for r in (inside, outside))
    assert ops["Reshape"] == ops["Transpose"] == 0 and ops["Attention"] == spec.layers
    assert before["Transpose"] == 4 * spec.layers  # q, k, v split and the output merged, each layer
    for batch, new, past in ((2, 1, 5), (1, 4, 3), (2, 4, 0)):
        _, inputs, _ = step.sample_inputs(spec, True, batch=batch, new=new, past=past)
        for a, b in zip(inside.run(*inputs), outside.run(*inputs), strict=True):
            assert torch.equal(a, b)
