"""Narrow float dtypes: torch's float8 types are ONNX's FLOAT8* (opset 19+), float8_e8m0fnu
FLOAT8E8M0 (opset 24+), float4_e2m1fn_x2 FLOAT4E2M1 with the last dim doubled (opset 23+); what
cannot be exported exactly says so."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch
from onnx import numpy_helper

import torchlib
from graph_builder.arrays import torch_to_numpy
from graph_builder.types import FLOAT4E2M1, UINT8
from torchlib.exporter.result import NoRuntimeKernelError
from torchlib.ops.casting import _bitcast

FLOAT8 = [torch.float8_e4m3fn, torch.float8_e4m3fnuz, torch.float8_e5m2, torch.float8_e5m2fnuz]


class ScaledWeight(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("weight", (torch.randn(3, 4) * 2).to(dtype))

    def forward(self, x):
        return x @ self.weight.to(torch.float32)


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_float8_weight_cast_to_float(dtype):
    x = torch.randn(2, 3)
    result = torchlib.export(ScaledWeight(dtype), (x,))
    assert result.graph.initializers["weight"].dtype.torch_name == str(dtype).removeprefix("torch.")
    torch.testing.assert_close(result(x), ScaledWeight(dtype)(x))


@pytest.mark.parametrize("dtype", FLOAT8, ids=str)
def test_float8_round_trip_in_the_graph(dtype):
    class RoundTrip(torch.nn.Module):
        def forward(self, x):
            return x.to(dtype).to(torch.float32)

    x = torch.randn(4, 5) * 4
    torch.testing.assert_close(torchlib.export(RoundTrip(), (x,))(x), RoundTrip()(x), rtol=0, atol=0)


def test_float8_needs_opset_19():
    with pytest.raises(Exception, match="FLOAT8E4M3FN.*export with a newer opset"):
        torchlib.export(ScaledWeight(torch.float8_e4m3fn), (torch.randn(2, 3),), opset=18)


def test_float8_e8m0_scale_at_opset_24():
    class Scales(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor([0.25, 2.0, 8.0]).to(torch.float8_e8m0fnu))

        def forward(self, x):
            return x * self.scale.to(torch.float32)

    x = torch.randn(2, 3)
    torch.testing.assert_close(torchlib.export(Scales(), (x,), opset=24)(x), Scales()(x), rtol=0, atol=0)
    with pytest.raises(Exception, match="FLOAT8E8M0"):
        torchlib.export(Scales(), (x,), opset=23)


def test_cast_to_float8_e8m0_is_refused():
    class ToScale(torch.nn.Module):
        def forward(self, x):
            return x.to(torch.float8_e8m0fnu).to(torch.float32)

    with pytest.raises(Exception, match="cast of FLOAT to torch.float8_e8m0fnu is not exported"):
        torchlib.export(ToScale(), (torch.rand(2, 3) + 0.5,), opset=24)


# FP4 E2M1 codes 0..15 and their values (sign bit 8): the ONNX spec's and ml_dtypes' table
FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def packed_fp4(codes: list[list[int]]) -> torch.Tensor:
    """float4_e2m1fn_x2 from FP4 codes, two a byte, the first in the low nibble: the order of
    torch's own packing (torch.testing._internal.common_quantized.pack_uint4) and of ONNX."""
    pairs = torch.tensor(codes, dtype=torch.uint8).reshape(len(codes), -1, 2)
    return (pairs[..., 0] | (pairs[..., 1] << 4)).view(torch.float4_e2m1fn_x2)


class ReturnsBuffer(torch.nn.Module):
    def __init__(self, buffer: torch.Tensor):
        super().__init__()
        self.register_buffer("packed", buffer)

    def forward(self):
        return self.packed


def test_float4_empty_is_float4e2m1_with_the_last_dim_doubled():
    class Empty(torch.nn.Module):
        def forward(self):
            return torch.empty([3, 1], dtype=torch.float4_e2m1fn_x2)

    result = torchlib.export(Empty(), ())
    (output,) = result.model_proto.graph.output
    assert output.type.tensor_type.elem_type == onnx.TensorProto.FLOAT4E2M1
    assert [d.dim_value for d in output.type.tensor_type.shape.dim] == [3, 2]
    got = result()
    assert got.dtype == torch.float4_e2m1fn_x2 and got.shape == (3, 1)
    assert got.view(torch.uint8).eq(0).all()  # torch leaves empty's memory as it was; ONNX writes zeros


def test_float4_weight_keeps_its_packed_bytes():
    codes = [[1, 2, 3, 4, 5, 6, 7, 8], [9, 10, 11, 12, 13, 14, 15, 0]]
    weight = packed_fp4(codes)
    result = torchlib.export(ReturnsBuffer(weight), ())
    initializer = next(t for t in result.model_proto.graph.initializer if t.name == "packed")
    assert initializer.data_type == onnx.TensorProto.FLOAT4E2M1 and list(initializer.dims) == [2, 8]
    assert initializer.raw_data == weight.view(torch.uint8).numpy().tobytes()
    unpacked = numpy_helper.to_array(initializer)
    assert unpacked.dtype == ml_dtypes.float4_e2m1fn
    np.testing.assert_array_equal(unpacked.astype(np.float32), np.array([[FP4_VALUES[c] for c in row] for row in codes], np.float32))
    assert result.self_check.startswith("skipped: the program holds torch.float4_e2m1fn_x2 tensors")
    with pytest.raises(NoRuntimeKernelError, match="no kernel for one of its ops.*Identity.*none for FLOAT4E2M1"):
        result()  # onnxruntime 1.31 has no FLOAT4E2M1 kernels: the output's Identity cannot run


def test_float4_weight_needs_opset_23():
    with pytest.raises(Exception, match=r"FLOAT4E2M1 exists from opset 23\).*export with a newer opset"):
        torchlib.export(ReturnsBuffer(packed_fp4([[1, 2]])), (), opset=22)


def test_float4_zeros_like_a_float_tensor():
    class ZerosLike(torch.nn.Module):
        def forward(self, x):
            return torch.zeros_like(x, dtype=torch.float4_e2m1fn_x2), torch.zeros_like(self.scale(x), dtype=torch.float32)

        def scale(self, x):
            return torch.zeros(x.shape, dtype=torch.float4_e2m1fn_x2)

    x = torch.randn(2, 5)
    outputs = torchlib.export(ZerosLike(), (x,)).model_proto.graph.output
    assert [(o.type.tensor_type.elem_type, [d.dim_value for d in o.type.tensor_type.shape.dim]) for o in outputs] == [
        (onnx.TensorProto.FLOAT4E2M1, [2, 10]), (onnx.TensorProto.FLOAT, [2, 5])]


def test_float4_view_as_uint8_folds_on_a_constant():
    class ViewZeros(torch.nn.Module):
        def forward(self, x):
            return x + torch.zeros(2, 3, dtype=torch.float4_e2m1fn_x2).view(torch.uint8)

    x = torch.arange(6, dtype=torch.uint8).reshape(2, 3)
    assert torch.equal(torchlib.export(ViewZeros(), (x,))(x), x)


def test_float4_bitcast_keeps_the_nibble_order():
    weight = packed_fp4([[1, 2, 3, 4], [13, 14, 15, 0]])
    fp4 = numpy_helper.to_array(numpy_helper.from_array(torch_to_numpy(weight)))
    np.testing.assert_array_equal(_bitcast(fp4, FLOAT4E2M1, UINT8), weight.view(torch.uint8).numpy())
    np.testing.assert_array_equal(_bitcast(weight.view(torch.uint8).numpy(), UINT8, FLOAT4E2M1).view(np.uint8), fp4.view(np.uint8))


def test_float4_weight_viewed_as_uint8_says_what_to_do():
    class Packed(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("packed", torch.randint(0, 255, (2, 3), dtype=torch.uint8).view(torch.float4_e2m1fn_x2))

        def forward(self, x):
            return x + self.packed.view(torch.uint8)

    with pytest.raises(Exception, match=r"aten::view.dtype(.|\n)*has no ONNX equivalent(.|\n)*a weight(.|\n)*register it as uint8"):
        torchlib.export(Packed(), (torch.zeros(2, 3, dtype=torch.uint8),))


@pytest.mark.parametrize("direction", ["to", "from"])
def test_float4_casts_are_refused(direction):
    """torch.export records x.to(float4_e2m1fn_x2) and back, which torch's copy kernel refuses."""

    class Cast(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("packed", packed_fp4([[1, 2, 3, 4]]))

        def forward(self, x):
            return x.to(torch.float4_e2m1fn_x2) if direction == "to" else x + self.packed.float()

    with pytest.raises(Exception, match="torch converts no tensor to or from torch.float4_e2m1fn_x2"):
        torchlib.export(Cast(), (torch.randn(1, 2),))
