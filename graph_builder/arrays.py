"""Array conversions at graph_builder's edge: numpy <-> torch (bfloat16 and float8 through
same-width integer views, zero-copy where torch allows it; torch's float4_e2m1fn_x2, two FP4
values a byte, unpacked to one FLOAT4E2M1 a numpy element and packed back), and `as_array` for
any array-like.

torch is imported lazily, on the first conversion that needs it.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from graph_builder import types
from graph_builder.ir import Value, raw_bytes


def as_array(value: Any) -> np.ndarray:
    """numpy view of a numpy array, torch tensor, Python scalar or list, or eager Value."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, Value):
        return value.numpy()
    if type(value).__module__ == "torch":
        return torch_to_numpy(value)
    return np.asarray(value)


_torch: Any = None


def _torch_module() -> Any:
    """torch, imported on first use: graph_builder itself does not need it."""
    global _torch
    if _torch is None:
        import torch

        _torch = torch
    return _torch


# torch dtypes numpy cannot hold natively: viewed through an integer type of the same width
_TORCH_VIEWS: dict[Any, tuple[Any, np.dtype]] = {}
_NUMPY_VIEWS: dict[np.dtype, tuple[Any, Any]] = {}


_FLOAT4_X2: Any = None  # torch.float4_e2m1fn_x2, once torch is imported


def _views() -> dict[Any, tuple[Any, np.dtype]]:
    if not _TORCH_VIEWS:
        global _FLOAT4_X2
        torch = _torch_module()
        _FLOAT4_X2 = getattr(torch, "float4_e2m1fn_x2", None)
        for d in (types.BFLOAT16, types.FLOAT8E4M3FN, types.FLOAT8E4M3FNUZ, types.FLOAT8E5M2, types.FLOAT8E5M2FNUZ,
                  types.FLOAT8E8M0):
            if d.numpy is not None and d.torch_name is not None and hasattr(torch, d.torch_name):
                raw = (torch.int16, np.int16) if d.itemsize == 2 else (torch.uint8, np.uint8)
                _TORCH_VIEWS[d.to_torch()] = (raw[0], d.numpy)
                _NUMPY_VIEWS[d.numpy] = (raw[1], d.to_torch())
    return _TORCH_VIEWS


def torch_to_numpy(tensor: Any) -> np.ndarray:
    if tensor.requires_grad:
        tensor = tensor.detach()
    if not tensor.is_cpu:
        tensor = tensor.cpu()
    view = (_TORCH_VIEWS or _views()).get(tensor.dtype)
    if view is not None:
        return tensor.view(view[0]).numpy().view(view[1])
    if tensor.dtype is _FLOAT4_X2:
        return unpack_nibbles(tensor.view(_torch.uint8).numpy(), types.FLOAT4E2M1)
    if tensor.is_conj():
        tensor = tensor.resolve_conj()
    if tensor.is_neg():
        tensor = tensor.resolve_neg()
    try:
        return tensor.numpy()
    except TypeError:
        types.from_torch(tensor.dtype)  # names the dtype
        raise


def unpack_nibbles(packed: np.ndarray, dtype: types.DType) -> np.ndarray:
    """uint8 bytes holding two 4-bit elements each, the first in the low nibble (ONNX's order,
    and torch's for float4_e2m1fn_x2) -> one element of `dtype` a numpy element, the last dim doubled."""
    if not packed.shape:
        raise ValueError(f"a 0-d array of packed {dtype} pairs has no ONNX shape: its one element holds two values")
    nibbles = np.stack([packed & 0x0F, packed >> 4], axis=-1)
    return nibbles.reshape(*packed.shape[:-1], 2 * packed.shape[-1]).view(dtype.numpy)


def pack_nibbles(array: np.ndarray) -> np.ndarray:
    """unpack_nibbles' inverse: uint8, two elements a byte, the last dim halved (it must be even)."""
    if not array.shape or array.shape[-1] % 2:
        raise ValueError(f"{types.from_numpy(array.dtype)} array of shape {list(array.shape)} does not pack two a byte: "
                         f"its last dim must be even")
    return np.frombuffer(raw_bytes(array), np.uint8).reshape(*array.shape[:-1], array.shape[-1] // 2).copy()


def torch_view(array: np.ndarray) -> Any:
    """A torch tensor over the array's own memory, never a copy (bfloat16 and float8 through an
    integer view; a read-only array, e.g. a mapped checkpoint, too: torch must only read it)."""
    torch = _torch or _torch_module()
    _TORCH_VIEWS or _views()
    view = _NUMPY_VIEWS.get(array.dtype)
    raw = array.view(view[0]) if view is not None else array
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        tensor = torch.from_numpy(raw)
    return tensor.view(view[1]) if view is not None else tensor


def numpy_to_torch(array: np.ndarray) -> Any:
    torch = _torch or _torch_module()
    if type(array) is not np.ndarray:
        array = np.asarray(array)
    if array.dtype == types.FLOAT4E2M1.numpy:
        return torch.from_numpy(pack_nibbles(array)).view(torch.float4_e2m1fn_x2)
    _TORCH_VIEWS or _views()
    view = _NUMPY_VIEWS.get(array.dtype)
    if view is not None:
        raw = np.ascontiguousarray(array).reshape(array.shape).view(view[0])  # ascontiguousarray makes rank 0 rank 1
        return torch.from_numpy(raw.copy()).view(view[1])
    if not array.flags.writeable or not array.flags.c_contiguous:
        array = np.array(array, order="C")  # a copy torch may own and write
    if array.dtype.kind in "USO":
        raise TypeError(f"torch has no tensors of strings: {array!r}")
    return torch.from_numpy(array)
