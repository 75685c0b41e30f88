"""The eager evaluator: op.X outside any graph runs in onnxruntime."""

from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest
import torch

from graph_builder import BFLOAT16, FLOAT, FLOAT16, INT64, GraphBuilder, OpError, Value, op
from graph_builder.evaluator import EAGER, current_evaluator
from graph_builder.opset import numpy_to_torch, torch_to_numpy
from graph_builder.types import FLOAT4E2M1, FLOAT8E4M3FN


def test_numpy_in_numpy_out() -> None:
    y = op.Add(np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32))
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    np.testing.assert_array_equal(y, [4.0, 6.0])


def test_torch_in_torch_out() -> None:
    a = torch.tensor([[1.0, -2.0]], dtype=torch.float16)
    y = op.Relu(a)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float16
    torch.testing.assert_close(y, torch.tensor([[1.0, 0.0]], dtype=torch.float16))
    # mixed torch and numpy inputs: torch wins
    z = op.Add(torch.tensor([1], dtype=torch.int64), np.array([2], np.int64))
    assert isinstance(z, torch.Tensor) and z.tolist() == [3]


def test_torch_tensors_that_need_care() -> None:
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert op.Neg(x).tolist() == [-1.0, -2.0]
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # not contiguous
    assert op.Identity(t).tolist() == t.tolist()
    c = torch.tensor([1 + 2j], dtype=torch.complex64).conj()  # a lazily conjugated view
    assert torch_to_numpy(c).tolist() == [1 - 2j]
    n = torch.tensor([1.0, -2.0])._neg_view()  # a lazily negated view
    assert op.Identity(n).tolist() == [-1.0, 2.0]


def test_bfloat16_and_float8() -> None:
    """onnxruntime's numpy bridge knows neither: they go through OrtValues."""
    bf = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    y = op.Cast(op.Mul(op.Cast(bf, to=FLOAT), 2.0), to=BFLOAT16)
    assert y.dtype == torch.bfloat16 and y.tolist() == [3.0, -4.0]
    x = np.array([1.5, 2.0], dtype=ml_dtypes.bfloat16)
    assert op.Identity(x).dtype == ml_dtypes.bfloat16 and op.Identity(x).astype(np.float32).tolist() == [1.5, 2.0]
    f8 = op.Cast(np.array([0.5, 448.0, 1000.0], np.float32), to=FLOAT8E4M3FN)
    assert f8.dtype == ml_dtypes.float8_e4m3fn and f8.astype(np.float32).tolist() == [0.5, 448.0, 448.0]
    assert op.Cast(np.zeros((0, 3), np.float32), to=BFLOAT16).shape == (0, 3)


def test_python_scalars() -> None:
    only_python = op.Add(2, 3)  # no tensor given: an eager Value, as when Values are given
    assert isinstance(only_python, Value) and only_python.dtype is INT64 and only_python.numpy().tolist() == 5
    assert op.Mul(np.array([1.5], np.float64), 2).dtype == np.float64
    assert op.Add(torch.tensor([1.0]), 1).tolist() == [2.0]


def test_eager_values_in_eager_values_out() -> None:
    x = Value("", FLOAT, (2,), const_value=np.array([1.0, 4.0], np.float32))
    y = op.Sqrt(x)
    assert isinstance(y, Value) and y.dtype is FLOAT and y.shape == (2,)
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0])


def test_multiple_outputs() -> None:
    values, indices = op.TopK(torch.tensor([[3.0, 1.0, 2.0]]), [2])
    assert values.tolist() == [[3.0, 2.0]] and indices.tolist() == [[0, 2]] and indices.dtype == torch.int64


def test_sessions_are_cached_by_op_attributes_and_input_types() -> None:
    x32 = np.ones((2, 3), np.float32)
    op.Softmax(x32, axis=0)
    before = len(EAGER._sessions)
    op.Softmax(x32 * 2, axis=0)
    op.Softmax(np.ones((5, 7), np.float32), axis=0)  # another shape: same session
    assert len(EAGER._sessions) == before
    op.Softmax(x32, axis=1)  # another attribute value
    op.Softmax(x32.astype(np.float16), axis=0)  # another input type
    assert len(EAGER._sessions) == before + 2


def test_runtime_errors_name_op_attributes_types_and_shapes() -> None:
    with pytest.raises(OpError) as info:
        op.Add(np.ones(3, np.float32), np.ones(4, np.float32))
    message = str(info.value)
    assert message.startswith("onnxruntime failed to run op.Add(FLOAT[3], FLOAT[4]) with attributes {}:")
    assert "broadcast" in message
    with pytest.raises(OpError) as info:
        op.Reshape(np.ones(6, np.float32), [4, -1], allowzero=0)
    assert str(info.value).startswith("onnxruntime failed to run op.Reshape(FLOAT[6], INT64[2]) with attributes {'allowzero': 0}:")


def test_invalid_op_for_runtime_is_reported() -> None:
    # a type onnxruntime has no kernel for
    with pytest.raises(OpError, match=r"onnxruntime cannot build op.Mul\(BFLOAT16\[2\], BFLOAT16\[2\]\) with attributes \{\}: .*NOT_IMPLEMENTED"):
        op.Mul(np.ones(2, ml_dtypes.bfloat16), np.ones(2, ml_dtypes.bfloat16))


def test_values_of_a_graph_are_not_eager() -> None:
    g = GraphBuilder()
    x = g.input("x", FLOAT16, [2])
    with pytest.raises(OpError, match=r"op.Relu: input 'x' belongs to a graph being built; call ops on it inside `with builder:`"):
        op.Relu(x)


def test_outside_any_graph_the_evaluator_is_eager() -> None:
    assert current_evaluator() is EAGER
    g = GraphBuilder()
    with g:
        assert current_evaluator() is g
        with g.subgraph() as sub:
            assert current_evaluator() is sub
        assert current_evaluator() is g
    assert current_evaluator() is EAGER


def test_eager_inside_a_graph_becomes_constants() -> None:
    g = GraphBuilder()
    x = g.input("x", INT64, [3])
    eager = op.Add(np.array([1, 2, 3]), 1)  # computed now
    with g:
        y = op.Mul(x, eager)
    assert y.producer.inputs[1].const_value.tolist() == [2, 3, 4]


def test_the_evaluator_is_per_thread() -> None:
    g = GraphBuilder()
    seen = []
    with g:
        thread = threading.Thread(target=lambda: seen.append(current_evaluator()))
        thread.start()
        thread.join()
        assert current_evaluator() is g
    assert seen == [EAGER]


def test_float4_arrays_and_onnxruntime() -> None:
    """torch's float4_e2m1fn_x2 packs the first value in the low nibble, as ONNX does; numpy holds
    one FLOAT4E2M1 an element. onnxruntime has no FLOAT4E2M1 kernel, but passes a Constant through."""
    packed = torch.tensor([[0x21, 0xF7]], dtype=torch.uint8).view(torch.float4_e2m1fn_x2)
    unpacked = torch_to_numpy(packed)
    assert unpacked.dtype == ml_dtypes.float4_e2m1fn and unpacked.astype(np.float32).tolist() == [[0.5, 1.0, 6.0, -6.0]]
    assert numpy_to_torch(unpacked).view(torch.uint8).tolist() == [[0x21, 0xF7]]
    constant = op.Constant(value=unpacked[0, :3])
    assert constant.dtype is FLOAT4E2M1 and constant.numpy().astype(np.float32).tolist() == [0.5, 1.0, 6.0]
    with pytest.raises(OpError, match="onnxruntime cannot build op.Identity"):
        op.Identity(unpacked)
