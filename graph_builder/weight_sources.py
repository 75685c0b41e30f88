"""Where weights come from: arrays in memory, or safetensors files mapped into memory.

Every source gives each weight as a numpy array over its bytes, without a copy: a live tensor's
storage, an array in a state dict, or a slice of a safetensors file mapped read-only
(`open_safetensors`). Nothing is read until the bytes are used, and what a read brings in from
a mapped file is given back with `release(array)` (the pages leave the process's resident set;
they are read from the file again if needed). Writing a model's weights tensor by tensor and
releasing each one after it is written (`weights.write_external_data` does) keeps the memory
of an export near one tensor, whatever the size of the checkpoint.

The safetensors format: 8 bytes (little-endian header length), a JSON header
`{name: {"dtype": "F32", "shape": [...], "data_offsets": [begin, end]}, "__metadata__": {...}}`,
then the tensors' bytes, offsets relative to the end of the header. `write_safetensors` writes
one from arrays given one at a time.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import ml_dtypes
import numpy as np

# safetensors dtype names <-> numpy dtypes (bfloat16 and float8 as ml_dtypes)
SAFETENSORS_DTYPES: dict[str, np.dtype] = {
    name: np.dtype(t) for name, t in (
        ("F64", np.float64), ("F32", np.float32), ("F16", np.float16), ("BF16", ml_dtypes.bfloat16),
        ("F8_E4M3", ml_dtypes.float8_e4m3fn), ("F8_E5M2", ml_dtypes.float8_e5m2),
        ("I64", np.int64), ("I32", np.int32), ("I16", np.int16), ("I8", np.int8),
        ("U64", np.uint64), ("U32", np.uint32), ("U16", np.uint16), ("U8", np.uint8), ("BOOL", np.bool_),
    )
}  # fmt: skip
_NAMES = {dtype: name for name, dtype in SAFETENSORS_DTYPES.items()}
_HEADER_LIMIT = 100 << 20  # as the safetensors library: a larger header is a damaged file

# the files mapped here: start address -> (end address, weak reference to the mmap)
_MAPPINGS: dict[int, tuple[int, weakref.ref]] = {}


class SafetensorsError(ValueError):
    """A file that is not a valid safetensors file (names the file and what is wrong)."""


def read_header(path: str | os.PathLike[str]) -> tuple[dict[str, dict[str, Any]], dict[str, str], int]:
    """(tensors: name -> {"dtype", "shape", "data_offsets"}, metadata, offset of the data)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise SafetensorsError(f"{path}: not a safetensors file (shorter than 8 bytes)")
        (length,) = struct.unpack("<Q", head)
        if length > _HEADER_LIMIT:
            raise SafetensorsError(f"{path}: not a safetensors file (header length {length} bytes)")
        try:
            header = json.loads(f.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise SafetensorsError(f"{path}: not a safetensors file (its header is not JSON: {e})") from e
    metadata = header.pop("__metadata__", None) or {}
    for name, entry in header.items():
        if entry.get("dtype") not in SAFETENSORS_DTYPES:
            raise SafetensorsError(f"{path}: tensor {name!r} has dtype {entry.get('dtype')!r}, which numpy cannot hold")
    return header, metadata, 8 + length


def open_safetensors(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> dict[str, np.ndarray]:
    """Every tensor of the safetensors file(s) as a read-only numpy array over the mapped file
    (nothing is read yet). `paths`: a file, a list of files (a sharded checkpoint), or a
    directory (its *.safetensors files)."""
    if isinstance(paths, (str, os.PathLike)):
        path = os.fspath(paths)
        if os.path.isdir(path):
            files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".safetensors"))
            if not files:
                raise FileNotFoundError(f"{path}: no .safetensors file in this directory")
        else:
            files = [path]
    else:
        files = [os.fspath(p) for p in paths]
    arrays: dict[str, np.ndarray] = {}
    where: dict[str, str] = {}
    for file in files:
        for name, array in _map_file(file).items():
            if name in arrays:
                raise SafetensorsError(f"tensor {name!r} is in both {where[name]} and {file}")
            arrays[name], where[name] = array, file
    return arrays


def map_file(path: str | os.PathLike[str]) -> np.ndarray:
    """The whole file as a read-only uint8 array over a mapping of it (nothing read yet; views
    of it can be given back with `release`). An empty file gives an empty array."""
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return np.zeros(0, np.uint8)
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    data = np.frombuffer(mm, np.uint8)
    address = data.ctypes.data
    _MAPPINGS[address] = (address + len(mm), weakref.ref(mm, lambda _: _MAPPINGS.pop(address, None)))
    return data


def _map_file(path: str) -> dict[str, np.ndarray]:
    header, _, start = read_header(path)
    size = os.path.getsize(path)
    data = map_file(path)
    arrays = {}
    for name, entry in header.items():
        dtype, shape = SAFETENSORS_DTYPES[entry["dtype"]], tuple(entry["shape"])
        begin, end = entry["data_offsets"]
        count = int(np.prod(shape, dtype=np.int64))
        if end - begin != count * dtype.itemsize or start + end > size:
            raise SafetensorsError(f"{path}: tensor {name!r} ({entry['dtype']}{list(shape)}) has data_offsets "
                                   f"[{begin}, {end}], which do not fit its size or the file")  # fmt: skip
        arrays[name] = data[start + begin:start + end].view(dtype).reshape(shape)
    return arrays


def _byte_range(array: np.ndarray) -> tuple[int, int]:
    """The addresses [first, last + 1) of the bytes the array views (any strides)."""
    low = high = array.ctypes.data
    for n, stride in zip(array.shape, array.strides):
        if n == 0:
            return low, low
        if stride > 0:
            high += (n - 1) * stride
        else:
            low += (n - 1) * stride
    return low, high + array.itemsize


def _mapping_of(array: np.ndarray) -> tuple[mmap.mmap, int, int, int] | None:
    """(mmap, offset in it, end offset, mapping start) when the array views a file mapped here."""
    if not _MAPPINGS or array.size == 0:
        return None
    low, high = _byte_range(array)
    for start, (end, ref) in list(_MAPPINGS.items()):
        mm = ref()
        if mm is not None and start <= low and high <= end:
            return mm, low - start, high - start, start
    return None


def is_mapped(array: np.ndarray) -> bool:
    """True when the array views a file mapped by `open_safetensors` (its bytes are read on use)."""
    return isinstance(array, np.ndarray) and _mapping_of(array) is not None


def release(array: np.ndarray) -> None:
    """Give back the pages that reading this array brought into memory, when it views a mapped
    file (a no-op otherwise): they leave the resident set, and are read again from the file if
    the array is used again. The array stays valid."""
    found = _mapping_of(array) if isinstance(array, np.ndarray) else None
    if found is None:
        return
    mm, begin, end, _ = found
    page = mmap.PAGESIZE
    begin = begin // page * page
    mm.madvise(mmap.MADV_DONTNEED, begin, min(len(mm), -(-end // page) * page) - begin)


def safetensors_dtype(dtype: np.dtype) -> str:
    name = _NAMES.get(np.dtype(dtype))
    if name is None:
        raise TypeError(f"safetensors has no dtype for numpy {np.dtype(dtype)}")
    return name


def write_safetensors(path: str | os.PathLike[str], specs: Mapping[str, tuple[Any, Sequence[int]]],
                      arrays: Iterable[np.ndarray], metadata: Mapping[str, str] | None = None) -> None:
    """Write a safetensors file whose tensors are `specs` (name -> (dtype, shape), in file order)
    with the bytes of `arrays`, given one at a time in the same order (a generator keeps one
    tensor in memory at a time). Each array must have its spec's dtype and shape."""
    header: dict[str, Any] = {"__metadata__": dict(metadata)} if metadata else {}
    offset = 0
    for name, (dtype, shape) in specs.items():
        nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
        header[name] = {"dtype": safetensors_dtype(dtype), "shape": list(shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned, as the safetensors library writes it
    names = iter(specs.items())
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for array in arrays:
            entry = next(names, None)
            if entry is None:
                raise ValueError(f"{path}: more arrays than the {len(specs)} tensors declared")
            name, (dtype, shape) = entry
            if array.dtype != np.dtype(dtype) or tuple(array.shape) != tuple(shape):
                raise ValueError(f"{path}: tensor {name!r} is declared {np.dtype(dtype)}{list(shape)}, "
                                 f"its array is {array.dtype}{list(array.shape)}")  # fmt: skip
            f.write(np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).reshape(-1).view(np.uint8).data)
        if next(names, None) is not None:
            raise ValueError(f"{path}: fewer arrays than the {len(specs)} tensors declared")
