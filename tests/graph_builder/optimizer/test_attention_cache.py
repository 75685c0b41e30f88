"""The decode step's attention: KV heads read grouped (transformers' repeat_kv removed) and the
past keys / values given to `Attention` itself. Each optimized graph is compared in onnxruntime
with the graph before optimizing; the near misses keep their nodes."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from graph_builder import BOOL, FLOAT, GraphBuilder, op
from graph_builder.optimizer import optimize

GQA = "Attention reads grouped KV heads (repeat_kv removed, masked)"
PAST = "Attention takes the past keys and values (Concat removed, masked)"
RNG = np.random.default_rng(0)
B, HQ, HKV, S, P, D = 2, 4, 2, 3, 5, 8


def _run(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _optimized(g: GraphBuilder, feeds):
    before = g.to_model()
    report = optimize(g)
    after = g.to_model()
    for a, b in zip(_run(before, feeds), _run(after, feeds), strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    return after, report


def _repeat(x, n: int, axis: int = 2, batch: int = B):  # type: ignore[no-untyped-def]
    """transformers' repeat_kv (axis 2), or a head-tiling near miss (axis 1)."""
    b, h, t, d = x.shape
    grown = [batch, h, n, t, d] if axis == 2 else [batch, n, h, t, d]
    return op.Reshape(op.Expand(op.Unsqueeze(x, [axis]), grown), [batch, h * n, t, d])


def _decode_step(miss: str | None = None):  # type: ignore[no-untyped-def]
    """Concat(past, new) as `present`, repeat_kv, Attention with a boolean mask."""
    g = GraphBuilder()
    kv_batch = 1 if miss == "batch_broadcast" else B
    q = g.input("q", FLOAT, [B, HQ, S, D])
    new = [g.input(n, FLOAT, [kv_batch, HKV, S, D]) for n in ("k", "v")]
    past = [g.input(n, FLOAT, [kv_batch, HKV, P, D]) for n in ("past_k", "past_v")]
    mask = g.input("mask", BOOL, [S, P + S])
    with g:
        present = [op.Concat(p, x, axis=2) for p, x in zip(past, new)]
        k, v = (_repeat(x, HQ // HKV, axis=1 if miss == "tiled_heads" else 2) for x in present)
        y = op.Attention(q, k, v, mask, is_causal=int(miss == "causal"))
        extra = op.ReduceSum(present[0], [2], keepdims=0) if miss == "present_read" else None
    g.output(y, "y")
    g.output(present[0], "present.0.key")
    g.output(present[1], "present.0.value")
    if extra is not None:
        g.output(extra, "extra")
    feeds = {"q": RNG.standard_normal((B, HQ, S, D), dtype=np.float32), "mask": RNG.random((S, P + S)) > 0.2}
    feeds.update({n: RNG.standard_normal((kv_batch, HKV, S, D), dtype=np.float32) for n in ("k", "v")})
    feeds.update({n: RNG.standard_normal((kv_batch, HKV, P, D), dtype=np.float32) for n in ("past_k", "past_v")})
    feeds["mask"][:, 0] = True  # no fully masked row
    return g, feeds


def test_a_decode_step_attends_over_the_past_without_copies():
    g, feeds = _decode_step()
    after, report = _optimized(g, feeds)
    ops = [n.op_type for n in after.graph.node]
    assert ops == ["Attention"], ops  # no Concat, no repeat_kv
    node = after.graph.node[0]
    assert list(node.input) == ["q", "k", "v", "mask", "past_k", "past_v"]
    assert list(node.output)[1:] == ["present.0.key", "present.0.value"]
    assert [o.name for o in after.graph.output] == ["y", "present.0.key", "present.0.value"]
    assert report[GQA] == 1 and report[PAST] == 1


@pytest.mark.parametrize("miss, gqa, past", [
    ("tiled_heads", 0, 0),  # heads h0 h1 h0 h1: not Attention's grouping
    ("batch_broadcast", 0, 0),  # the Expand also broadcasts the batch
    ("causal", 1, 0),  # with a past, Attention's causal mask ends at the last key, torch's at the first
    ("present_read", 1, 0),  # the Concat is read by another node too
])
def test_near_misses_keep_their_form(miss, gqa, past):
    g, feeds = _decode_step(miss)
    after, report = _optimized(g, feeds)
    ops = [n.op_type for n in after.graph.node]
    assert report.get(GQA, 0) == gqa and report.get(PAST, 0) == past
    assert ("Expand" in ops) == (not gqa) and ("Concat" in ops) == (not past)


def test_attention_with_a_past_and_is_causal_differs_from_the_concat_form():
    """Why the causal form is left alone: the two are not the same function."""
    q, k, v = (RNG.standard_normal((1, 2, n, 4), dtype=np.float32) for n in (2, 2, 2))
    pk, pv = (RNG.standard_normal((1, 2, 3, 4), dtype=np.float32) for _ in range(2))
    results = []
    for form in ("concat", "past"):
        g = GraphBuilder()
        ins = [g.input(n, FLOAT, list(a.shape)) for n, a in zip("qkvPV", (q, k, v, pk, pv))]
        with g:
            if form == "concat":
                y = op.Attention(ins[0], op.Concat(ins[3], ins[1], axis=2), op.Concat(ins[4], ins[2], axis=2), is_causal=1)
            else:
                y = op.Attention(ins[0], ins[1], ins[2], None, ins[3], ins[4], is_causal=1, _outputs=3)[0]
        g.output(y, "y")
        results.append(_run(g.to_model(), dict(zip("qkvPV", (q, k, v, pk, pv))))[0])
    assert not np.allclose(results[0], results[1])
