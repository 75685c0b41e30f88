"""quantized_decomposed ops: exact against torch (tests/opinfo/table/quantized.py runs the
samples eagerly and traced); here the ONNX form (QuantizeLinear / DequantizeLinear with axis and
block_size where the zero point is known to fit) and the errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graph_builder import GraphBuilder, types
from torchlib.ops import quantized as Q

qd = torch.ops.quantized_decomposed


def _traced(fn, inputs: dict[str, torch.Tensor], constants: dict[str, torch.Tensor], *args, **kwargs):
    """Trace fn with `inputs` as graph inputs and `constants` as weights; returns (model, values)."""
    g = GraphBuilder()
    values = {k: g.input(k, types.from_torch(v.dtype), list(v.shape)) for k, v in inputs.items()}
    values.update({k: g.initializer(k, v.numpy()) for k, v in constants.items()})
    with g:
        out = fn(*[values.get(a, a) if isinstance(a, str) else a for a in args], **kwargs)
    g.output(out, "out")
    return g.to_model()


def _run(model, feeds):
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {k: v.numpy() for k, v in feeds.items()})[0]


def _op_types(model) -> list[str]:
    return [n.op_type for n in model.graph.node]


def test_static_per_tensor_pair_is_quantize_and_dequantize_linear():
    x = torch.randn(4, 6) * 3
    model = _traced(Q.quantized_decomposed_quantize_per_tensor, {"x": x}, {}, "x", 0.02, -3, -128, 127, torch.int8)
    assert "QuantizeLinear" in _op_types(model) and "Clip" not in _op_types(model)
    np.testing.assert_array_equal(_run(model, {"x": x}), qd.quantize_per_tensor(x, 0.02, -3, -128, 127, torch.int8).numpy())
    narrow = _traced(Q.quantized_decomposed_quantize_per_tensor, {"x": x}, {}, "x", 0.02, -3, -127, 100, torch.int8)
    assert "Clip" in _op_types(narrow)  # quant_min/quant_max narrower than int8
    np.testing.assert_array_equal(_run(narrow, {"x": x}), qd.quantize_per_tensor(x, 0.02, -3, -127, 100, torch.int8).numpy())


def test_per_channel_weight_is_dequantize_linear_with_axis():
    w = torch.randint(-127, 128, (5, 3, 2), dtype=torch.int8)
    scales, zps = torch.rand(3) * 0.1 + 0.01, torch.tensor([0, 4, -7])
    model = _traced(Q.quantized_decomposed_dequantize_per_channel, {}, {"w": w, "s": scales, "z": zps}, "w", "s", "z", 1, -127, 127, torch.int8)
    (node,) = [n for n in model.graph.node if n.op_type == "DequantizeLinear"]
    assert {a.name: a.i for a in node.attribute}["axis"] == 1
    expected = qd.dequantize_per_channel(w, scales, zps, 1, -127, 127, torch.int8)
    np.testing.assert_array_equal(_run(model, {}), expected.numpy())


def test_per_channel_group_is_dequantize_linear_with_block_size():
    w = torch.randint(-128, 128, (4, 16), dtype=torch.int8)
    scales, zps = torch.rand(16) * 0.05 + 0.01, torch.randint(-5, 5, (16,), dtype=torch.int32)
    model = _traced(Q.quantized_decomposed_dequantize_per_channel_group, {}, {"w": w, "s": scales, "z": zps}, "w", "s", "z", -128, 127, torch.int8, 4, torch.float32)
    (node,) = [n for n in model.graph.node if n.op_type == "DequantizeLinear"]
    assert {a.name: a.i for a in node.attribute}["block_size"] == 4
    expected = qd.dequantize_per_channel_group(w, scales, zps, -128, 127, torch.int8, 4, torch.float32)
    np.testing.assert_array_equal(_run(model, {}), expected.numpy())


def test_zero_point_outside_the_dtype_is_exact():
    # torch does not bound the zero point; it cannot be a QuantizeLinear zero point then
    x = torch.randn(10) * 2
    for zp in (200, -300):
        expected = qd.quantize_per_tensor(x, 0.05, zp, 0, 255, torch.uint8)
        torch.testing.assert_close(Q.quantized_decomposed_quantize_per_tensor(x, 0.05, zp, 0, 255, torch.uint8), expected, rtol=0, atol=0)
        q = expected
        torch.testing.assert_close(
            Q.quantized_decomposed_dequantize_per_tensor(q, 0.05, zp, 0, 255, torch.uint8), qd.dequantize_per_tensor(q, 0.05, zp, 0, 255, torch.uint8), rtol=0, atol=0
        )


def test_round_half_to_even_and_reciprocal_scale_like_torch():
    # values whose x / scale and x * (1 / scale) round differently: torch multiplies
    scale = 0.1
    x = torch.tensor([4.949999809265137, -7.149999618530273, 6.549999713897705, 0.25, -0.25, 1e-8], dtype=torch.float32)
    assert not torch.equal(torch.round(x[:3] / scale), torch.round(x[:3] * (1 / scale)))
    expected = qd.quantize_per_tensor(x, scale, 0, -128, 127, torch.int8)
    for traced in (False, True):
        if traced:
            got = torch.from_numpy(_run(_traced(Q.quantized_decomposed_quantize_per_tensor, {"x": x}, {}, "x", scale, 0, -128, 127, torch.int8), {"x": x}))
        else:
            got = Q.quantized_decomposed_quantize_per_tensor(x, scale, 0, -128, 127, torch.int8)
        assert torch.equal(got, expected), (got, expected)


def test_errors_name_the_op_and_the_problem():
    x = torch.randn(3)
    with pytest.raises(ValueError, match=r"quantize_per_tensor: \[quant_min, quant_max\] = \[-200, 127\] is outside INT8"):
        Q.quantized_decomposed_quantize_per_tensor(x, 0.1, 0, -200, 127, torch.int8)
    with pytest.raises(TypeError, match="quantize_per_tensor: input must be float32"):
        Q.quantized_decomposed_quantize_per_tensor(x.double(), 0.1, 0, -128, 127, torch.int8)
    with pytest.raises(TypeError, match="dequantize_per_tensor: input has dtype UINT8, but dtype=INT8"):
        Q.quantized_decomposed_dequantize_per_tensor(torch.zeros(3, dtype=torch.uint8), 0.1, 0, -128, 127, torch.int8)
    with pytest.raises(IndexError, match="axis 3 is out of range for a tensor of rank 2"):
        Q.quantized_decomposed_quantize_per_channel(torch.randn(2, 3), torch.ones(3), torch.zeros(3, dtype=torch.int64), 3, -128, 127, torch.int8)


def test_higher_order_ops_do_not_run_eagerly():
    from torchlib.ops import control_flow

    with pytest.raises(TypeError, match="runs only while exporting"):
        control_flow.higher_order_while_loop(None, None, [torch.zeros(())], [])


# -- edge inputs of the fuzz pass (issue 13) ---------------------------------------------------------
from torchlib.testing import check_function  # noqa: E402

_NAN_INF = torch.tensor([float("nan"), float("inf"), float("-inf"), 1.0, -1.0, 0.3])


@pytest.mark.parametrize("dtype, bounds, zero_point", [
    (torch.int8, (-128, 127), 3), (torch.int8, (-127, 127), 0), (torch.uint8, (0, 255), 3), (torch.uint8, (10, 200), 20),
    (torch.int16, (-1000, 1000), 3), (torch.int32, (-1000, 1000), 3), (torch.int8, (-128, 127), 300),
])  # fmt: skip
def test_quantize_nan_and_inf_as_torch(dtype, bounds, zero_point):
    """torch's clamp keeps NaN and .to(dtype) gives int32's minimum, 0 in the narrower dtypes
    (onnxruntime's QuantizeLinear gave quant_min); inf clamps to the bounds."""
    low, high = bounds
    if dtype is torch.int8 and zero_point == 300:  # a zero point outside int8: the Round/Clip/Cast path
        low, high = -128, 127
    x = _NAN_INF.repeat(3)
    check_function(Q.quantized_decomposed_quantize_per_tensor, (x, 0.0123, zero_point, low, high, dtype),
                   expected=qd.quantize_per_tensor(x, 0.0123, zero_point, low, high, dtype))  # fmt: skip
    scale, zp = torch.tensor(0.0123, dtype=torch.float64), torch.tensor(zero_point)
    check_function(Q.quantized_decomposed_quantize_per_tensor_tensor, (x, scale, zp, low, high, dtype),
                   expected=qd.quantize_per_tensor.tensor(x, scale, zp, low, high, dtype))  # fmt: skip
    x3 = x.reshape(3, 6)
    scales, zps = torch.tensor([0.1, 0.02, 0.5]), torch.tensor([zero_point, 0, 1])
    check_function(Q.quantized_decomposed_quantize_per_channel, (x3, scales, zps, 0, low, high, dtype),
                   expected=qd.quantize_per_channel(x3, scales, zps, 0, low, high, dtype))  # fmt: skip


@pytest.mark.parametrize("shape", [(0, 16), (0, 3, 8)])
def test_choose_qparams_per_token_of_an_empty_batch(shape):
    """One scale per token: shape (..., 1) even when there is no token (onnxruntime's reductions
    of an empty tensor ignored the negative axis and kept every element)."""
    x = torch.zeros(shape)
    check_function(Q.quantized_decomposed_choose_qparams_per_token, (x, torch.int8), expected=qd.choose_qparams_per_token(x, torch.int8))
    check_function(Q.quantized_decomposed_choose_qparams_per_token_asymmetric, (x, torch.int8),
                   expected=qd.choose_qparams_per_token_asymmetric(x, torch.int8))  # fmt: skip


@pytest.mark.parametrize("with_zero_points", [True, False])
def test_dequantize_per_channel_size1_axis_broadcasts_against_the_channels(with_zero_points):
    """torch views the scales as (C, 1, ...) and broadcasts: an input with 1 on the axis gives C
    channels (DequantizeLinear's axis needs them equal)."""
    q = torch.randint(-128, 127, (1, 5, 4), dtype=torch.int8)
    scales = torch.tensor([0.1, 0.2, 0.3])
    zps = torch.tensor([1, -2, 3]) if with_zero_points else None
    check_function(Q.quantized_decomposed_dequantize_per_channel, (q, scales, zps, 0, -128, 127, torch.int8), {"out_dtype": torch.float32},
                   expected=qd.dequantize_per_channel(q, scales, zps, 0, -128, 127, torch.int8, out_dtype=torch.float32))  # fmt: skip
