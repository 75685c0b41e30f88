"""ONNX element types: named singletons with conversions to and from numpy, torch, TensorProto."""

from __future__ import annotations

import copy
import pickle
import typing

import ml_dtypes
import numpy as np
import onnx
import pytest
import torch

from graph_builder import types
from graph_builder.type_constraints import ALLOWED, TFloat, TInt, TReal, TTensor
from graph_builder.types import (
    ALL_DTYPES,
    BFLOAT16,
    BOOL,
    COMPLEX64,
    DOUBLE,
    FLOAT,
    FLOAT8E4M3FN,
    FLOAT8E5M2,
    FLOAT16,
    INT8,
    INT32,
    INT64,
    STRING,
    UINT8,
)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=repr)
def test_onnx_enum_round_trip(dtype: types.DType) -> None:
    assert types.from_onnx(dtype.onnx) is dtype
    assert onnx.TensorProto.DataType.Name(dtype.onnx) == dtype.name
    assert types.from_name(dtype.name) is dtype


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d is not STRING], ids=repr)
def test_numpy_round_trip(dtype: types.DType) -> None:
    assert types.from_numpy(dtype.numpy) is dtype
    assert onnx.helper.tensor_dtype_to_np_dtype(dtype.onnx) == dtype.numpy
    assert dtype.itemsize == dtype.numpy.itemsize


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d.torch_name is not None], ids=repr)
def test_torch_round_trip(dtype: types.DType) -> None:
    torch_dtype = dtype.to_torch()
    assert isinstance(torch_dtype, torch.dtype)
    assert types.from_torch(torch_dtype) is dtype
    assert torch.empty(0, dtype=torch_dtype).element_size() == dtype.itemsize


def test_ml_dtypes_for_bfloat16_and_float8() -> None:
    assert BFLOAT16.numpy == np.dtype(ml_dtypes.bfloat16)
    assert FLOAT8E4M3FN.numpy == np.dtype(ml_dtypes.float8_e4m3fn)
    assert FLOAT8E5M2.numpy == np.dtype(ml_dtypes.float8_e5m2)
    assert types.from_numpy(np.array([1.5], dtype=ml_dtypes.bfloat16).dtype) is BFLOAT16
    assert BFLOAT16.to_torch() is torch.bfloat16 and FLOAT8E4M3FN.to_torch() is torch.float8_e4m3fn


def test_strings() -> None:
    assert types.from_numpy(np.array(["a", "bc"]).dtype) is STRING
    assert types.from_numpy(np.dtype(object)) is STRING
    with pytest.raises(TypeError, match="STRING has no torch dtype"):
        STRING.to_torch()


def test_unknown_types_raise() -> None:
    with pytest.raises(TypeError, match="element type 12345"):
        types.from_onnx(12345)
    with pytest.raises(TypeError, match="has no ONNX element type"):
        types.from_numpy(np.dtype("datetime64[s]"))
    with pytest.raises(TypeError, match="has no ONNX element type"):
        types.from_torch(torch.complex32)


def test_schema_type_strings() -> None:
    assert types.from_type_str("tensor(float)") is FLOAT
    assert types.from_type_str("tensor(bfloat16)") is BFLOAT16
    assert types.from_type_str("seq(tensor(float))") is None


def test_python_values() -> None:
    assert types.from_python(True) is BOOL
    assert types.from_python(3) is INT64
    assert types.from_python(2.5) is FLOAT
    assert types.from_python([[1, 2], [3, 4]]) is INT64
    assert types.from_python([]) is INT64  # an empty shape or axes list
    assert types.from_python(1j) is COMPLEX64
    assert types.from_python(np.int8(3)) is INT8
    with pytest.raises(TypeError, match="cannot make an ONNX constant"):
        types.from_python(object())


def test_kinds() -> None:
    assert FLOAT16.is_floating and BFLOAT16.is_floating and not INT32.is_floating
    assert UINT8.is_integer and INT64.is_integer and not BOOL.is_integer
    assert BOOL.is_bool and COMPLEX64.is_complex


def test_singletons_survive_copy_and_pickle() -> None:
    assert copy.deepcopy(FLOAT) is FLOAT
    assert pickle.loads(pickle.dumps(DOUBLE)) is DOUBLE
    assert repr(FLOAT16) == "FLOAT16"


def test_type_constraint_groups() -> None:
    assert ALLOWED["TFloat"] == {FLOAT16, BFLOAT16, FLOAT, DOUBLE}
    assert INT64 in ALLOWED["TInt"] and FLOAT not in ALLOWED["TInt"]
    assert ALLOWED["TReal"] == ALLOWED["TFloat"] | ALLOWED["TInt"]
    assert set(ALLOWED["TTensor"]) == set(ALL_DTYPES)
    assert BOOL in ALLOWED["TRealOrBool"] and BOOL not in ALLOWED["TReal"]

    def scale(x: TFloat, k: TInt) -> TReal:
        return x

    hints = typing.get_type_hints(scale)
    assert hints == {"x": TFloat, "k": TInt, "return": TReal}
    assert all(isinstance(t, typing.TypeVar) for t in (TFloat, TInt, TReal, TTensor))
    assert TFloat.__name__ in ALLOWED


def test_float4_x2_is_float4e2m1_with_the_last_dim_doubled() -> None:
    assert types.from_torch(torch.float4_e2m1fn_x2) is types.FLOAT4E2M1 and types.FLOAT4E2M1.per_torch_element == 2
    assert types.onnx_shape(types.FLOAT4E2M1, [3, 4]) == [3, 8]
    assert types.onnx_shape(types.FLOAT, [3, 4]) == [3, 4]
    with pytest.raises(TypeError, match="0-d torch.float4_e2m1fn_x2 tensor has no ONNX shape"):
        types.onnx_shape(types.FLOAT4E2M1, [])
