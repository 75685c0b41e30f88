import pytest
import torch

from graph_builder import GraphBuilder, types
from torchlib.promotion import result_type

CASES = [
    (torch.int64, [3], torch.float32, [3]),
    (torch.int32, [3], torch.int64, []),
    (torch.float16, [3], torch.float32, []),
    (torch.bool, [3], torch.int8, [3]),
    (torch.uint8, [3], torch.int8, [3]),
    (torch.bfloat16, [3], torch.float16, [3]),
    (torch.int64, [], torch.float16, []),
    (torch.bool, [], torch.float64, [2]),
]


@pytest.mark.parametrize("a_dtype, a_shape, b_dtype, b_shape", CASES)
def test_result_type_matches_torch_for_tensors(a_dtype, a_shape, b_dtype, b_shape):
    g = GraphBuilder()
    a = g.input("a", types.from_torch(a_dtype), a_shape)
    b = g.input("b", types.from_torch(b_dtype), b_shape)
    expected = torch.result_type(torch.zeros(a_shape, dtype=a_dtype), torch.zeros(b_shape, dtype=b_dtype))
    assert result_type(a, b) is types.from_torch(expected)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int8, torch.uint8, torch.bool, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("scalar", [2, 2.5, True, 1j])
def test_result_type_matches_torch_with_python_scalars(dtype, scalar):
    g = GraphBuilder()
    a = g.input("a", types.from_torch(dtype), [3])
    expected = torch.result_type(torch.zeros(3, dtype=dtype), scalar)
    # ONNX has no complex32 nor bcomplex32 (bfloat16 with a complex scalar, torch 2.14 on; complex64
    # before): the documented deviation is COMPLEX64
    if expected in (torch.complex32, getattr(torch, "bcomplex32", torch.complex32)):
        assert result_type(a, scalar) is types.COMPLEX64
        return
    assert result_type(a, scalar) is types.from_torch(expected)
