"""Constant regions evaluated in one onnxruntime run (graph_builder/optimizer/regions.py): the
bits of the node-by-node evaluation, and what folding makes of them."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import defs

from graph_builder import DOUBLE, FLOAT, FLOAT16, INT64, GraphBuilder, op
from graph_builder.evaluator import EAGER
from graph_builder.optimizer import folding, optimize, regions
from graph_builder.optimizer.editing import Uses
from graph_builder.schema import OpSignature

RNG = np.random.default_rng(0)


def _standardised(g, w, gain):
    """timm's ScaledStdConv2d as torchlib writes it: float32 statistics, the scaling in float64."""
    flat = op.Reshape(w, np.array([1, w.shape[0], -1], np.int64))
    mean = op.ReduceMean(flat, np.array([0, 2], np.int64), keepdims=1)
    centred = op.Sub(flat, mean)
    var = op.ReduceMean(op.Mul(centred, centred), np.array([0, 2], np.int64), keepdims=1)
    inv = op.Cast(op.Reciprocal(op.Sqrt(op.Add(op.Cast(var, to=DOUBLE.onnx), np.float64(1e-6)))), to=FLOAT.onnx)
    scale = op.Mul(inv, op.Unsqueeze(op.Reshape(op.Mul(gain, np.float32(0.3)), np.array([-1], np.int64)),
                                     np.array([0, 2], np.int64)))
    shift = op.Cast(op.Neg(op.Mul(op.Cast(mean, to=DOUBLE.onnx), op.Cast(scale, to=DOUBLE.onnx))), to=FLOAT.onnx)
    out = op.Add(op.Mul(op.Cast(flat, to=DOUBLE.onnx), op.Cast(scale, to=DOUBLE.onnx)), op.Cast(shift, to=DOUBLE.onnx))
    return op.Reshape(op.Cast(out, to=FLOAT.onnx), np.array(w.shape, np.int64))


def _float64_statistics(g, w, _):
    """Reductions in float64 over a long axis (the summation order decides the last bits),
    a matrix product, a softmax, a log-sum-exp and an integer branch."""
    w = op.Reshape(w, np.array([w.shape[0], -1], np.int64))
    w64 = op.Cast(w, to=DOUBLE.onnx)
    centred = op.Sub(w64, op.ReduceMean(w64, np.array([1], np.int64), keepdims=1))
    norm = op.Div(centred, op.Sqrt(op.ReduceSumSquare(centred, np.array([1], np.int64), keepdims=1)))
    gram = op.MatMul(norm, op.Transpose(norm, perm=[1, 0]))
    soft = op.Softmax(op.Mul(gram, np.float64(3.0)), axis=-1)
    lse = op.ReduceLogSumExp(soft, np.array([0], np.int64), keepdims=0)
    counts = op.Cast(op.ReduceSum(op.Cast(op.Greater(w, np.float32(0)), to=INT64.onnx), np.array([1], np.int64),
                                  keepdims=0), to=DOUBLE.onnx)
    return op.Cast(op.Add(lse, counts), to=FLOAT.onnx)


def _relus(g, w, gain):
    """Element-wise chains onnxruntime may compute in place once their intermediates are its own."""
    x = op.Relu(op.Sub(w, op.Mul(gain, np.float32(0.5))))
    return op.Tanh(op.Add(op.Mul(x, x), op.Exp(op.Neg(x))))


def _graph(formula, shape=(96, 40, 3, 3)):
    """A graph computing `formula` of two weights, its output."""
    g = GraphBuilder()
    w = g.initializer("w", RNG.standard_normal(shape).astype(np.float32))
    gain = g.initializer("gain", RNG.standard_normal((shape[0], 1, 1, 1)).astype(np.float32))
    with g:
        y = formula(g, w, gain)
    g.output(y, "y")
    return g


def _node_by_node(g):
    """Every node's results, each node run in a session of its own (folding's evaluation)."""
    known = {id(v): v.const_value for v in g.graph.initializers.values()}
    for node in g.graph.nodes:
        sig = OpSignature(defs.get_schema(node.op_type, g.opset, ""), g.opset)
        arrays = [None if v is None else known[id(v)] for v in node.inputs]
        known.update(zip(map(id, node.outputs), EAGER.run_arrays(sig, arrays, node.attributes, len(node.outputs))))
    return known


@pytest.mark.parametrize("formula", [_standardised, _float64_statistics, _relus])
@pytest.mark.parametrize("every_result", [True, False])
def test_a_region_gives_the_bits_of_the_node_by_node_evaluation(formula, every_result):
    """With every result asked for, and with only the last (onnxruntime then reuses the buffers
    of intermediates, and computes in place where it may): the same bits as node by node."""
    g = _graph(formula)
    uses = Uses(g.graph)
    order = {id(n): i for i, n in enumerate(g.graph.nodes)}
    region = regions.grow(uses, g.graph.nodes[0], order, lambda n: True, 1 << 30)
    assert len(region) == len(g.graph.nodes)  # the whole graph is computed from the weights
    wanted = [v for n in region for v in n.outputs] if every_result else regions.leaving(uses, region)
    assert every_result or [v.name for v in wanted] == ["y"]
    got = regions.evaluate(region, wanted, g.opset)
    want = _node_by_node(g)
    assert got is not None
    for v, array in zip(wanted, got):
        expected = want[id(v)]
        assert array.dtype == expected.dtype and array.shape == expected.shape, v.name
        assert array.tobytes() == expected.tobytes(), v.name


def _folded_weights(g):
    return [(v.const_value.dtype, v.const_value.shape, v.const_value.tobytes())
            for n in g.graph.nodes for v in n.inputs if v is not None and v.const_value is not None]


def _standardised_convs(layers, seed=0):
    rng = np.random.default_rng(seed)
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["batch", 8, 12, 12])
    with g:
        for i in range(layers):
            w = g.initializer(f"conv{i}.weight", rng.standard_normal((8, 8, 3, 3)).astype(np.float32))
            gain = g.initializer(f"conv{i}.gain", rng.standard_normal((8, 1, 1, 1)).astype(np.float32))
            x = op.Relu(op.Conv(x, _standardised(g, w, gain), pads=[1, 1, 1, 1]))
    g.output(x, "y")
    return g


def test_standardised_weights_fold_a_region_a_run_to_the_bits_of_node_by_node_folding(monkeypatch):
    """Each conv's standardisation (25 nodes after its first Reshape, a view) folds in one run
    into one weight named after the conv's weight; the weights are the bits folding node by node
    (the path before regions) gives."""
    runs = []
    evaluate = regions.evaluate
    monkeypatch.setattr(regions, "evaluate", lambda *a: runs.append(1) or evaluate(*a))
    fast = _standardised_convs(3)
    nodes = len(fast.graph.nodes)
    report = optimize(fast)
    assert [n.op_type for n in fast.graph.nodes] == ["Conv", "Relu"] * 3
    assert len(runs) == 3 and report["constants folded"] == nodes - 6 == 3 * 26
    convs = [n for n in fast.graph.nodes if n.op_type == "Conv"]
    assert all(n.inputs[1].name.startswith(f"conv{i}.weight_folded") for i, n in enumerate(convs))
    monkeypatch.setattr(folding, "_fold_region", lambda *a: None)  # node by node, as before regions
    slow = _standardised_convs(3)
    optimize(slow)
    assert [n.op_type for n in slow.graph.nodes] == ["Conv", "Relu"] * 3
    assert _folded_weights(fast) == _folded_weights(slow)


def test_float16_stays_out_of_regions():
    """onnxruntime computes many float16 ops through Casts it inserts per graph: node by node."""
    g = GraphBuilder()
    w = g.initializer("w", RNG.standard_normal((4, 8)).astype(np.float16))
    with g:
        y = op.Cast(op.Mul(op.Add(w, np.float16(1)), np.float16(3)), to=FLOAT.onnx)
    g.output(y, "y")
    uses = Uses(g.graph)
    order = {id(n): i for i, n in enumerate(g.graph.nodes)}
    assert g.graph.nodes[0].outputs[0].dtype == FLOAT16
    assert regions.grow(uses, g.graph.nodes[0], order, lambda n: True, 1 << 30) == []


def test_a_region_that_would_widen_its_weights_folds_node_by_node_as_before():
    """A float64 copy of a weight read at run time: the region would grow the model, so it does
    not fold as a whole; what folds is what folded before (the float32 scaling)."""
    g = GraphBuilder()
    x = g.input("x", DOUBLE, [2, 8])
    w = g.initializer("w", RNG.standard_normal((8, 4)).astype(np.float32))
    with g:
        y = op.MatMul(x, op.Cast(op.Mul(w, np.float32(2)), to=DOUBLE.onnx))
    g.output(y, "y")
    optimize(g)
    assert [n.op_type for n in g.graph.nodes] == ["Cast", "MatMul"]
