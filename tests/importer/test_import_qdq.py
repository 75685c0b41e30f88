"""QuantizeLinear / DequantizeLinear through the importer against onnxruntime's CPU kernels:
per tensor, per axis and blocked (opset 21), for each integer type both support, on random
inputs that include values past the type's range (saturation) and exact .5 ties (rounding to
even). The past-range values stay under 2^31 steps: onnxruntime's blocked QuantizeLinear wraps
around beyond that (1e9 / 0.02 quantizes to 0 for uint8 there; the spec and the importer give
255). Integers compare exactly; dequantized floats at rtol=1e-6, atol=0 (one multiply-add)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
import torch
from onnx import TensorProto
from onnx import helper as h

from torchlib.importer import import_onnx

TYPES = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.uint16: TensorProto.UINT16,
         np.int16: TensorProto.INT16}  # fmt: skip


def _params(x_shape: tuple[int, ...], mode: str, axis: int, block: int, dtype: type,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(scale, zero point) shaped for `mode`: per tensor (scalars), per axis (1-D along axis), or
    blocked (x's shape with axis cut into blocks of `block`)."""
    if mode == "tensor":
        shape: tuple[int, ...] = ()
    elif mode == "axis":
        shape = (x_shape[axis],)
    else:
        shape = tuple(-(-d // block) if i == axis else d for i, d in enumerate(x_shape))
    info = np.iinfo(dtype)
    scale = rng.uniform(0.02, 0.2, size=shape).astype(np.float32)
    zero = rng.integers(info.min // 4 if info.min else 0, info.max // 4 + 1, size=shape).astype(dtype)
    return scale, zero


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


CASES = [(mode, dtype) for mode in ("tensor", "axis", "block") for dtype in TYPES]


@pytest.mark.parametrize(("mode", "dtype"), CASES, ids=[f"{m}-{d.__name__}" for m, d in CASES])
def test_quantize_dequantize_match_onnxruntime(mode, dtype):
    rng = np.random.default_rng(len(mode) * 10 + TYPES[dtype])
    x_shape, axis, block = (3, 40, 4), 1, 16  # 40 = two full blocks and a half one
    scale, zero = _params(x_shape, mode, axis, block, dtype, rng)
    info = np.iinfo(dtype)
    x = (rng.standard_normal(x_shape) * 0.2 * (info.max - info.min) * 0.1).astype(np.float32)
    x.flat[:6] = [0.5 * float(scale.flat[0]), 1.5 * float(scale.flat[0]), 2.5 * float(scale.flat[0]), 1e6, -1e6, 0]
    attrs = {"axis": axis} if mode != "tensor" else {}
    if mode == "block":
        attrs["block_size"] = block
    inits = [onnx.numpy_helper.from_array(scale, "scale"), onnx.numpy_helper.from_array(zero, "zero")]
    nodes = [h.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], **attrs),
             h.make_node("DequantizeLinear", ["q", "scale", "zero"], ["y"], **attrs)]  # fmt: skip
    graph = h.make_graph(nodes, "qdq", [h.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                         [h.make_tensor_value_info("q", TYPES[dtype], x_shape),
                          h.make_tensor_value_info("y", TensorProto.FLOAT, x_shape)], initializer=inits)  # fmt: skip
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)
    want_q, want_y = _session(model).run(None, {"x": x})
    with torch.no_grad():
        got_q, got_y = import_onnx(model)(torch.from_numpy(x))
    assert got_q.dtype == torch.from_numpy(want_q).dtype
    mismatched = int((got_q.to(torch.int64) != torch.from_numpy(want_q.astype(np.int64))).sum())
    assert mismatched == 0, f"{mismatched} of {want_q.size} quantized values differ from onnxruntime"
    torch.testing.assert_close(got_y, torch.from_numpy(want_y), rtol=1e-6, atol=0)


@pytest.mark.parametrize("mode", ["tensor", "axis", "block"])
def test_dequantize_without_zero_point(mode):
    rng = np.random.default_rng(3)
    x_shape, axis, block = (4, 32), 0, 2
    scale, _ = _params(x_shape, mode, axis, block, np.int8, rng)
    q = rng.integers(-128, 128, size=x_shape).astype(np.int8)
    attrs = {"axis": axis} if mode != "tensor" else {}
    if mode == "block":
        attrs["block_size"] = block
    node = h.make_node("DequantizeLinear", ["q", "scale"], ["y"], **attrs)
    graph = h.make_graph([node], "dq", [h.make_tensor_value_info("q", TensorProto.INT8, x_shape)],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, x_shape)],
                         initializer=[onnx.numpy_helper.from_array(scale, "scale")])  # fmt: skip
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 21)], ir_version=10)
    (want,) = _session(model).run(None, {"q": q})
    with torch.no_grad():
        got = import_onnx(model)(torch.from_numpy(q))
    torch.testing.assert_close(got, torch.from_numpy(want), rtol=1e-6, atol=0)
