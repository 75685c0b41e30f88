"""Weights of any size: check without weights, streamed external data, ORT over the same memory.

The 2 GB threshold is lowered (`ir.EXTERNAL_DATA_THRESHOLD`) so that small graphs take the
big-model path."""

from __future__ import annotations

import os

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest

from graph_builder import BFLOAT16, FLOAT, GraphBuilder, ir, op, weights
from graph_builder.evaluator import run_session
from graph_builder.ir import ModelTooLargeError


def _linear(w: np.ndarray, dtype=FLOAT) -> GraphBuilder:
    g = GraphBuilder()
    x = g.input("x", dtype, ["batch", w.shape[0]])
    with g:
        y = op.MatMul(x, g.initializer("w", w))
        y = op.Add(y, np.ones(w.shape[1], dtype=w.dtype))  # a small constant, stays inline
    g.output(y, "y")
    return g


@pytest.fixture
def low_threshold(monkeypatch):
    monkeypatch.setattr(ir, "EXTERNAL_DATA_THRESHOLD", 10_000)


def test_initializer_is_the_array_given():
    w = np.random.rand(64, 32).astype(np.float32)
    graph = _linear(w).to_graph()
    assert graph.initializers["w"].const_value is w


def test_checker_runs_on_the_graph_without_weights():
    """Large initializers stand as inputs for the checker; small constants stay initializers."""
    w = np.random.rand(64, 32).astype(np.float32)
    graph = _linear(w).to_graph()
    checked = onnx.ModelProto.FromString(graph.to_model_bytes(weights_as_inputs=True))
    assert [i.name for i in checked.graph.input] == ["x", "w"]
    assert [t.name for t in checked.graph.initializer] != [] and "w" not in {t.name for t in checked.graph.initializer}
    weights.check_model(graph)


def test_checker_still_rejects_a_wrong_graph():
    w = np.random.rand(64, 32).astype(np.float32)
    graph = _linear(w).to_graph()
    graph.nodes[0].op_type = "NoSuchOp"
    with pytest.raises(onnx.checker.ValidationError, match="NoSuchOp"):
        weights.check_model(graph)


def test_save_external_data_round_trip(tmp_path):
    w = np.random.rand(600, 300).astype(np.float32)  # 720 KB: aligned on 64 bytes
    w2 = np.random.rand(300, 1024).astype(np.float32)  # 1.2 MB: aligned on 64 KiB
    g = GraphBuilder()
    x = g.input("x", FLOAT, [2, 600])
    with g:
        y = op.MatMul(op.MatMul(x, g.initializer("w", w)), g.initializer("w2", w2))
    g.output(y, "y")
    path = str(tmp_path / "m.onnx")
    data = g.save(path, external_data=True)
    assert data == path + ".data" and os.path.exists(data)
    header = onnx.load(path, load_external_data=False)
    entries = {t.name: {e.key: e.value for e in t.external_data} for t in header.graph.initializer}
    assert entries["w"] == {"location": "m.onnx.data", "offset": "0", "length": str(w.nbytes)}
    assert int(entries["w2"]["offset"]) % 2**16 == 0
    assert os.path.getsize(path) < 2000  # the weights are not in the model file
    loaded = onnx.load(path)
    assert np.array_equal(onnx.numpy_helper.to_array(loaded.graph.initializer[1]), w2)
    onnx.checker.check_model(path, full_check=True)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    xv = np.random.rand(2, 600).astype(np.float32)
    np.testing.assert_allclose(session.run(None, {"x": xv})[0], xv @ w @ w2, rtol=1e-5)


def test_save_is_deterministic(tmp_path):
    w = np.random.rand(64, 32).astype(np.float32)
    for name in ("a", "b"):
        os.mkdir(tmp_path / name)
        _linear(w).save(str(tmp_path / name / "m.onnx"), external_data=True)
    for file in ("m.onnx", "m.onnx.data"):
        assert (tmp_path / "a" / file).read_bytes() == (tmp_path / "b" / file).read_bytes()


def test_save_inline_writes_to_model(tmp_path):
    w = np.random.rand(64, 32).astype(np.float32)
    g = _linear(w)
    path = tmp_path / "m.onnx"
    assert g.save(str(path)) is None
    assert not os.path.exists(str(path) + ".data")
    assert onnx.load(str(path)).SerializeToString() == g.to_model().SerializeToString()


def test_over_threshold_takes_the_big_model_path(tmp_path, low_threshold):
    w = np.random.rand(64, 64).astype(np.float32)  # 16 KB > 10 KB
    g = _linear(w)
    with pytest.raises(ModelTooLargeError, match=r"save\(path\).*to_graph\(\)"):
        g.to_model()
    path = str(tmp_path / "m.onnx")
    assert g.save(path) == path + ".data"  # external data chosen by size
    with pytest.raises(ModelTooLargeError, match="external"):
        g.save(str(tmp_path / "n.onnx"), external_data=False)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    xv = np.random.rand(3, 64).astype(np.float32)
    np.testing.assert_allclose(session.run(None, {"x": xv})[0], xv @ w + 1, rtol=1e-5)
    assert np.allclose(g.run({"x": xv})[0], xv @ w + 1, rtol=1e-5)


def test_ort_session_reads_the_arrays_memory():
    w = np.random.rand(64, 32).astype(np.float32)
    session = weights.ort_session(_linear(w).to_graph())
    (value,) = session.weights
    assert value.data_ptr() == w.ctypes.data  # an OrtValue over the array, not a copy
    xv = np.random.rand(3, 64).astype(np.float32)
    np.testing.assert_allclose(session.run(None, {"x": xv})[0], xv @ w + 1, rtol=1e-5)


def test_bfloat16_weights_stream_and_run(tmp_path):
    w = np.random.rand(64, 32).astype(ml_dtypes.bfloat16)
    g = GraphBuilder()
    x = g.input("x", BFLOAT16, [2, 64])
    with g:
        y = op.Cast(op.MatMul(op.Cast(x, to=FLOAT.onnx), op.Cast(g.initializer("w", w), to=FLOAT.onnx)), to=BFLOAT16.onnx)
    g.output(y, "y")
    graph = g.to_graph()
    session = weights.ort_session(graph)
    assert session.weights[0].data_ptr() == w.ctypes.data
    xv = np.random.rand(2, 64).astype(ml_dtypes.bfloat16)
    expected = (xv.astype(np.float32) @ w.astype(np.float32)).astype(ml_dtypes.bfloat16)
    assert np.array_equal(run_session(session, {"x": xv})[0], expected)
    path = str(tmp_path / "m.onnx")
    weights.save_model(graph, path, external_data=True)
    assert (tmp_path / "m.onnx.data").read_bytes() == w.tobytes()
    loaded = onnx.load(path).graph.initializer[0]
    assert loaded.data_type == BFLOAT16.onnx
    assert np.array_equal(onnx.numpy_helper.to_array(loaded), w)


def test_non_contiguous_weight_is_written_in_c_order(tmp_path):
    w = np.random.rand(32, 64).astype(np.float32).T  # a transposed view
    g = _linear(w)
    path = str(tmp_path / "m.onnx")
    g.save(path, external_data=True)
    assert np.array_equal(onnx.numpy_helper.to_array(onnx.load(path).graph.initializer[0]), w)


@pytest.mark.parametrize("shape", [(300, 700), (700, 300), (256, 256), (40, 50)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16, np.int64])
def test_contiguous_copies_a_transposed_view_tile_by_tile_exactly(shape, dtype):
    """`ir.contiguous` of a transposed matrix (a folded `W.T`) is its C-order copy, element for
    element, at sizes that are and are not multiples of the tiles; a C-order array is returned
    as it is, and a transposed weight in an onnxruntime session reads the same."""
    w = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    copied = ir.contiguous(w.T)
    assert copied.flags.c_contiguous and copied.dtype == w.dtype
    assert np.array_equal(copied.view(np.uint8), np.ascontiguousarray(w.T).view(np.uint8))
    assert ir.contiguous(w) is w
    strided = w[::2].T  # neither C- nor Fortran-ordered: numpy's copy
    assert np.array_equal(ir.contiguous(strided).view(np.uint8), np.ascontiguousarray(strided).view(np.uint8))


def test_ort_session_of_a_transposed_weight():
    w = np.random.rand(320, 300).astype(np.float32)
    session = weights.ort_session(_linear(w.T).to_graph())
    xv = np.random.rand(3, 300).astype(np.float32)
    assert np.array_equal(session.run(None, {"x": xv})[0], run_session(weights.ort_session(_linear(np.ascontiguousarray(w.T)).to_graph()), {"x": xv})[0])
