"""ONNX element types as named objects, with conversions to numpy, torch and TensorProto.

    >>> FLOAT.numpy, FLOAT.onnx, from_torch(torch.float16)
    (dtype('float32'), 1, FLOAT16)

torch is imported lazily, only when a torch conversion is asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np
from onnx import TensorProto

if TYPE_CHECKING:
    import torch


class DType:
    """One ONNX element type. Instances are singletons: compare with `is` or `==`."""

    __slots__ = ("name", "onnx", "numpy", "torch_name", "itemsize", "kind", "bits", "per_torch_element", "since_opset")

    def __init__(
        self,
        name: str,
        onnx_type: int,
        numpy_dtype: Any,
        torch_name: str | None,
        kind: str,
        bits: int = 0,
        per_torch_element: int = 1,
        since_opset: int = 1,
    ):
        self.name = name
        self.onnx = onnx_type
        self.numpy = np.dtype(numpy_dtype) if numpy_dtype is not None else None
        self.torch_name = torch_name
        self.itemsize = self.numpy.itemsize if self.numpy is not None else 0
        # kind: "f" float, "i" signed int, "u" unsigned int, "b" bool, "c" complex, "s" string
        self.kind = kind
        # bits of one element as ONNX stores it: 4 for INT4 / UINT4 / FLOAT4E2M1 (two to a byte; one byte
        # each in numpy, as ml_dtypes holds them), else 8 * itemsize
        self.bits = bits or 8 * self.itemsize
        # elements of this type in one element of its torch dtype: 2 for FLOAT4E2M1, whose torch
        # dtype float4_e2m1fn_x2 packs two in a byte (the first in the low nibble, as ONNX does):
        # a torch shape's last dim counts half the ONNX shape's (see onnx_shape)
        self.per_torch_element = per_torch_element
        # the first ai.onnx opset whose operators take it (error messages name it)
        self.since_opset = since_opset

    def __repr__(self) -> str:
        return self.name

    def __reduce__(self) -> str:
        return self.name

    @property
    def is_floating(self) -> bool:
        return self.kind == "f"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("i", "u")

    @property
    def is_complex(self) -> bool:
        return self.kind == "c"

    @property
    def is_bool(self) -> bool:
        return self.kind == "b"

    def to_torch(self) -> torch.dtype:
        import torch

        if self.torch_name is None:
            raise TypeError(f"ONNX type {self.name} has no torch dtype")
        return getattr(torch, self.torch_name)


FLOAT = DType("FLOAT", TensorProto.FLOAT, np.float32, "float32", "f")
UINT8 = DType("UINT8", TensorProto.UINT8, np.uint8, "uint8", "u")
INT8 = DType("INT8", TensorProto.INT8, np.int8, "int8", "i")
UINT16 = DType("UINT16", TensorProto.UINT16, np.uint16, "uint16", "u")
INT16 = DType("INT16", TensorProto.INT16, np.int16, "int16", "i")
INT32 = DType("INT32", TensorProto.INT32, np.int32, "int32", "i")
INT64 = DType("INT64", TensorProto.INT64, np.int64, "int64", "i")
STRING = DType("STRING", TensorProto.STRING, np.object_, None, "s")
BOOL = DType("BOOL", TensorProto.BOOL, np.bool_, "bool", "b")
FLOAT16 = DType("FLOAT16", TensorProto.FLOAT16, np.float16, "float16", "f")
DOUBLE = DType("DOUBLE", TensorProto.DOUBLE, np.float64, "float64", "f")
UINT32 = DType("UINT32", TensorProto.UINT32, np.uint32, "uint32", "u")
UINT64 = DType("UINT64", TensorProto.UINT64, np.uint64, "uint64", "u")
COMPLEX64 = DType("COMPLEX64", TensorProto.COMPLEX64, np.complex64, "complex64", "c")
COMPLEX128 = DType("COMPLEX128", TensorProto.COMPLEX128, np.complex128, "complex128", "c")
BFLOAT16 = DType("BFLOAT16", TensorProto.BFLOAT16, ml_dtypes.bfloat16, "bfloat16", "f")
FLOAT8E4M3FN = DType(
    "FLOAT8E4M3FN", TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn, "float8_e4m3fn", "f", since_opset=19
)
FLOAT8E4M3FNUZ = DType(
    "FLOAT8E4M3FNUZ", TensorProto.FLOAT8E4M3FNUZ, ml_dtypes.float8_e4m3fnuz, "float8_e4m3fnuz", "f", since_opset=19
)
FLOAT8E5M2 = DType("FLOAT8E5M2", TensorProto.FLOAT8E5M2, ml_dtypes.float8_e5m2, "float8_e5m2", "f", since_opset=19)
FLOAT8E5M2FNUZ = DType(
    "FLOAT8E5M2FNUZ", TensorProto.FLOAT8E5M2FNUZ, ml_dtypes.float8_e5m2fnuz, "float8_e5m2fnuz", "f", since_opset=19
)
FLOAT8E8M0 = DType(
    "FLOAT8E8M0", TensorProto.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu, "float8_e8m0fnu", "f", since_opset=24
)
INT4 = DType("INT4", TensorProto.INT4, ml_dtypes.int4, None, "i", bits=4, since_opset=21)
UINT4 = DType("UINT4", TensorProto.UINT4, ml_dtypes.uint4, None, "u", bits=4, since_opset=21)
FLOAT4E2M1 = DType(
    "FLOAT4E2M1",
    TensorProto.FLOAT4E2M1,
    ml_dtypes.float4_e2m1fn,
    "float4_e2m1fn_x2",
    "f",
    bits=4,
    per_torch_element=2,
    since_opset=23,
)

ALL_DTYPES: tuple[DType, ...] = (
    FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64,
    COMPLEX64, COMPLEX128, BFLOAT16, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, INT4, UINT4,
    FLOAT4E2M1,
)  # fmt: skip

_BY_ONNX = {d.onnx: d for d in ALL_DTYPES}
_BY_NUMPY = {d.numpy: d for d in ALL_DTYPES if d.numpy is not None}
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_ONNX_TYPE_STR = {f"tensor({n})": d for n, d in {
    "float": FLOAT, "uint8": UINT8, "int8": INT8, "uint16": UINT16, "int16": INT16, "int32": INT32,
    "int64": INT64, "string": STRING, "bool": BOOL, "float16": FLOAT16, "double": DOUBLE,
    "uint32": UINT32, "uint64": UINT64, "complex64": COMPLEX64, "complex128": COMPLEX128,
    "bfloat16": BFLOAT16, "float8e4m3fn": FLOAT8E4M3FN, "float8e4m3fnuz": FLOAT8E4M3FNUZ,
    "float8e5m2": FLOAT8E5M2, "float8e5m2fnuz": FLOAT8E5M2FNUZ, "float8e8m0": FLOAT8E8M0, "int4": INT4, "uint4": UINT4,
    "float4e2m1": FLOAT4E2M1,
}.items()}  # fmt: skip
_BY_TORCH: dict[Any, DType] = {}


def from_onnx(elem_type: int) -> DType:
    try:
        return _BY_ONNX[elem_type]
    except KeyError:
        raise TypeError(f"ONNX element type {elem_type} is not supported") from None


def from_numpy(dtype: Any) -> DType:
    """FLOAT for np.float32, BFLOAT16 for ml_dtypes.bfloat16, STRING for str and object arrays."""
    dtype = np.dtype(dtype)
    found = _BY_NUMPY.get(dtype)
    if found is not None:
        return found
    if dtype.kind in "US":
        return STRING
    raise TypeError(f"numpy dtype {dtype} has no ONNX element type")


def from_name(name: str) -> DType:
    return _BY_NAME[name]


def from_type_str(type_str: str) -> DType | None:
    """`tensor(float)` as written in ONNX schemas -> FLOAT; None for non-tensor types."""
    return _BY_ONNX_TYPE_STR.get(type_str)


def from_torch(dtype: torch.dtype) -> DType:
    if not _BY_TORCH:
        import torch

        for d in ALL_DTYPES:
            if d.torch_name is not None and hasattr(torch, d.torch_name):
                _BY_TORCH[getattr(torch, d.torch_name)] = d
    try:
        return _BY_TORCH[dtype]
    except KeyError:
        raise TypeError(f"torch dtype {dtype} has no ONNX element type") from None


def onnx_shape(dtype: DType, torch_shape: Sequence[Any]) -> list[Any]:
    """The ONNX shape of a torch tensor of `dtype` (from_torch's answer) and `torch_shape`: the
    same, but for a packed torch dtype, whose last dim counts several ONNX elements in one
    (float4_e2m1fn_x2: FLOAT4E2M1, the last dim doubled). Dims are ints or anything that
    multiplies by an int (torch SymInts)."""
    n = dtype.per_torch_element
    if n == 1:
        return list(torch_shape)
    if not torch_shape:
        raise TypeError(
            f"a 0-d torch.{dtype.torch_name} tensor has no ONNX shape: its one element holds {n} {dtype.name} values"
        )
    return [*torch_shape[:-1], torch_shape[-1] * n]


def from_python(value: Any) -> DType:
    """The dtype a Python scalar (or nested list of them) gets when no other input decides."""
    while isinstance(value, (list, tuple)) and value:
        value = value[0]
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, complex):
        return COMPLEX64
    if isinstance(value, str):
        return STRING
    if isinstance(value, (list, tuple)):  # empty list: a shape or axes
        return INT64
    if isinstance(value, np.generic):
        return from_numpy(value.dtype)
    raise TypeError(f"cannot make an ONNX constant from {type(value).__name__}: {value!r}")


FLOAT_TYPES = frozenset({FLOAT16, BFLOAT16, FLOAT, DOUBLE})
INT_TYPES = frozenset({INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64})
