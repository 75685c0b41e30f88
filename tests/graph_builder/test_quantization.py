"""Weight-only quantization: blocked DequantizeLinear -> MatMul (graph_builder/optimizer/quantization.py)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest

from graph_builder import FLOAT, GraphBuilder, op
from graph_builder.optimizer.quantization import (
    WeightQuantization,
    dequantize,
    packed_projections,
    quantize,
    quantize_weights,
)

CONFIGS = [WeightQuantization(d, b, s) for d in ("int4", "int8") for b in (32, 128) for s in (True, False)]


def _weight(shape=(256, 48), seed=0):
    w = np.random.default_rng(seed).standard_normal(shape).astype(np.float32) * 0.05
    w[:32, 0] = 0  # a block of zeros
    w[32:64, 1] = np.abs(w[32:64, 1])  # a block of one sign
    return w


@pytest.mark.parametrize("config", CONFIGS, ids=repr)
def test_quantize_follows_the_formula(config):
    w = _weight()
    q, scale, zero = quantize(w, config, axis=0)
    qmax = {"int4": 7, "int8": 127}[config.dtype] if config.symmetric else {"int4": 15, "int8": 255}[config.dtype]
    assert scale.shape == (256 // config.block_size, 48) and scale.dtype == np.float32
    blocks = w.reshape(-1, config.block_size, 48)
    if config.symmetric:
        assert zero is None and q.dtype == {"int4": ml_dtypes.int4, "int8": np.int8}[config.dtype]
        expected_scale = np.abs(blocks).max(axis=1) / qmax
    else:
        assert q.dtype == {"int4": ml_dtypes.uint4, "int8": np.uint8}[config.dtype] and zero.shape == scale.shape
        expected_scale = (np.maximum(blocks.max(axis=1), 0) - np.minimum(blocks.min(axis=1), 0)) / qmax
    expected_scale[expected_scale == 0] = 1
    np.testing.assert_allclose(scale, expected_scale, rtol=1e-6)
    restored = dequantize(q, scale, zero, 0, config.block_size)
    # round to nearest: each weight within half a step of its block (plus float rounding)
    step = np.repeat(scale, config.block_size, axis=0)
    assert np.all(np.abs(restored - w) <= step / 2 * (1 + 1e-5))
    assert np.all(restored[:32, 0] == 0)


def test_quantize_along_the_second_axis_is_the_transpose():
    w = _weight((40, 96))  # K = 96 along axis 1 (Gemm's B with transB); 96 is not a multiple of 64
    config = WeightQuantization("int4", 64, False)
    q, scale, zero = quantize(w, config, axis=1)
    qt, st, zt = quantize(w.T, config, axis=0)
    np.testing.assert_array_equal(q, qt.T)
    np.testing.assert_array_equal(scale, st.T)
    np.testing.assert_array_equal(zero, zt.T)
    assert scale.shape == (40, 2)


def _model(opset=21, dtype=np.float32):
    w1, w2 = _weight((64, 128), 1).astype(dtype), _weight((128, 32), 2).astype(dtype)
    g = GraphBuilder(opset=opset)
    x = g.input("x", FLOAT if dtype == np.float32 else None, ["batch", 64])
    with g:
        h = op.Relu(op.MatMul(x, g.initializer("w1", w1)))
        y = op.Gemm(h, g.initializer("w2t", np.ascontiguousarray(w2.T)), transB=1)
    g.output(y, "y")
    return g, (w1, w2)


@pytest.mark.parametrize("config", CONFIGS, ids=repr)
def test_quantized_graph_runs_in_onnxruntime(config):
    g, (w1, w2) = _model()
    assert quantize_weights(g, config) == 2
    graph = g.graph
    assert sorted(graph.initializers) == sorted(
        [f"{n}_{part}" for n in ("w1", "w2t") for part in ("quantized", "scale") + (() if config.symmetric else ("zero_point",))])
    dq = [n for n in graph.nodes if n.op_type == "DequantizeLinear"]
    assert [(n.attributes["axis"], n.attributes["block_size"]) for n in dq] == [(0, config.block_size), (1, config.block_size)]
    model = g.to_model()
    onnx.checker.check_model(model, full_check=True)
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["y"]
    x = np.random.default_rng(3).standard_normal((5, 64)).astype(np.float32)
    (out,) = g.run({"x": x})
    d1 = dequantize(*quantize(w1, config, 0), 0, config.block_size)
    d2 = dequantize(*quantize(w2.T.copy(), config, 1), 1, config.block_size)
    np.testing.assert_allclose(out, np.maximum(x @ d1, 0) @ d2.T, atol=1e-5, rtol=1e-4)


def test_a_weight_read_otherwise_stays_float():
    g = GraphBuilder(opset=21)
    x = g.input("x", FLOAT, [64, 64])
    w = _weight((64, 64))
    with g:
        shared = g.initializer("w", w)
        y = op.Add(op.MatMul(x, shared), shared)  # read as MatMul's B and by an Add
    g.output(y, "y")
    assert quantize_weights(g, WeightQuantization("int8")) == 0
    assert g.graph.initializers["w"].const_value is w


def test_opset_before_21_is_refused_with_the_reason():
    g, _ = _model(opset=20)
    with pytest.raises(ValueError, match=r"needs opset 21 or later \(DequantizeLinear's block_size.*this export is opset 20"):
        quantize_weights(g, WeightQuantization("int4"))


def test_bad_options():
    with pytest.raises(ValueError, match="use 'int4' or 'int8'"):
        WeightQuantization("int2")
    with pytest.raises(ValueError, match="power of two, 16 or more"):
        WeightQuantization("int4", block_size=48)
    assert WeightQuantization.of("int8") == WeightQuantization("int8", 32, True)


def _projections(ks=(64, 64, 64), ns=(48, 16, 32)):
    """x read by MatMuls of weights [k, n] each (the same x where the k's are equal), outputs y0, y1, ..."""
    g = GraphBuilder(opset=21)
    x = g.input("x", FLOAT, ["batch", "seq", 64])
    with g:
        ys = [op.MatMul(x, g.initializer(f"w{i}", _weight((k, n), i))) for i, (k, n) in enumerate(zip(ks, ns))]
    for i, y in enumerate(ys):
        g.output(y, f"y{i}")
    return g


@pytest.mark.parametrize("config", [CONFIGS[0], CONFIGS[3]], ids=repr)  # int4 symmetric, int4 asymmetric
def test_projections_of_one_input_read_their_quantized_weights_side_by_side(config):
    g = _projections()
    x = np.random.default_rng(5).standard_normal((2, 3, 64)).astype(np.float32)
    assert quantize_weights(g, config) == 3
    before = g.run({"x": x})
    assert packed_projections(g) == 1
    ops = [n.op_type for n in g.graph.nodes]
    assert ops.count("DequantizeLinear") == 1 and ops.count("MatMul") == 1 and ops.count("Split") == 1
    parts = ("quantized", "scale") + (() if config.symmetric else ("zero_point",))
    weights = sorted(name for name in g.graph.initializers if name.startswith("w"))
    assert weights == sorted(f"w0_packed_{p}" for p in parts)  # the separate ones are gone
    model = g.to_model()
    onnx.checker.check_model(model, full_check=True)
    assert [o.name for o in model.graph.output] == ["y0", "y1", "y2"]
    for a, b in zip(before, g.run({"x": x})):
        np.testing.assert_array_equal(a, b)  # the same dot products, bit for bit


def test_projections_that_differ_stay_apart():
    g = _projections(ns=(48, 16))  # two of one input: packed
    config = WeightQuantization("int4", 32)
    quantize_weights(g, config)
    assert packed_projections(g) == 1
    g = _projections(ns=(48, 16))
    quantize_weights(g, config)
    dq = [n for n in g.graph.nodes if n.op_type == "DequantizeLinear"]
    dq[1].attributes["block_size"] = 64  # another block size: not packed with the first
    dq[1].inputs[1].const_value = dq[1].inputs[1].const_value[::2].copy()
    assert packed_projections(g) == 0
