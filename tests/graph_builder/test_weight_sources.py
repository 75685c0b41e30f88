"""Weight sources: safetensors files mapped tensor by tensor, pages given back after use, and
saving a graph whose weights are mapped (graph_builder/weight_sources.py)."""

from __future__ import annotations

import json
import os
import struct

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from graph_builder import FLOAT, GraphBuilder, ir, op, weights
from graph_builder.weight_sources import (
    SafetensorsError,
    is_mapped,
    map_file,
    open_safetensors,
    read_header,
    release,
    write_safetensors,
)

ARRAYS = {
    "f32": np.arange(12, dtype=np.float32).reshape(3, 4) / 7,
    "f16": np.linspace(-1, 1, 5).astype(np.float16),
    "bf16": np.array([[1.5, -2.25], [3.0, 0.0078125]], dtype=ml_dtypes.bfloat16),
    "i64": np.array([1, -(2**40), 3], dtype=np.int64),
    "flag": np.array([True, False, True]),
    "scalar": np.array(2.5, dtype=np.float64),
}


def _write(path, arrays):
    write_safetensors(path, {k: (a.dtype, a.shape) for k, a in arrays.items()}, arrays.values())


def test_write_then_open_gives_the_same_arrays_as_read_only_views(tmp_path):
    path = tmp_path / "w.safetensors"
    _write(path, ARRAYS)
    loaded = open_safetensors(path)
    assert list(loaded) == list(ARRAYS)
    for name, array in ARRAYS.items():
        assert loaded[name].dtype == array.dtype and loaded[name].shape == array.shape
        np.testing.assert_array_equal(loaded[name], array)
        assert not loaded[name].flags.writeable
        assert is_mapped(loaded[name])
    assert not is_mapped(ARRAYS["f32"])


def test_file_layout_is_the_safetensors_format(tmp_path):
    path = tmp_path / "w.safetensors"
    _write(path, {"a": ARRAYS["f32"], "b": ARRAYS["bf16"]})
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    assert (8 + length) % 8 == 0
    assert header["a"] == {"dtype": "F32", "shape": [3, 4], "data_offsets": [0, 48]}
    assert header["b"] == {"dtype": "BF16", "shape": [2, 2], "data_offsets": [48, 56]}
    assert raw[8 + length:8 + length + 48] == ARRAYS["f32"].tobytes()
    assert raw[8 + length + 48:] == ARRAYS["bf16"].tobytes()


def test_a_file_written_by_hand_as_the_safetensors_library_does(tmp_path):
    # {"__metadata__", then tensors in any order}, the header padded with spaces to 8 bytes
    data = np.array([[1, 2], [3, 4]], dtype=np.int32).tobytes() + np.float16([0.5, -1]).tobytes()
    header = json.dumps({"__metadata__": {"format": "pt"}, "y": {"dtype": "F16", "shape": [2], "data_offsets": [16, 20]},
                         "x": {"dtype": "I32", "shape": [2, 2], "data_offsets": [0, 16]}}).encode()  # fmt: skip
    header += b" " * (-len(header) % 8)
    path = tmp_path / "h.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + data)
    tensors, metadata, start = read_header(path)
    assert sorted(tensors) == ["x", "y"]
    assert metadata == {"format": "pt"} and start == 8 + len(header)
    loaded = open_safetensors(path)
    np.testing.assert_array_equal(loaded["x"], [[1, 2], [3, 4]])
    np.testing.assert_array_equal(loaded["y"], np.float16([0.5, -1]))


def test_several_files_and_a_directory(tmp_path):
    _write(tmp_path / "model-1.safetensors", {"a": ARRAYS["f32"]})
    _write(tmp_path / "model-2.safetensors", {"b": ARRAYS["i64"]})
    assert sorted(open_safetensors(tmp_path)) == ["a", "b"]
    assert sorted(open_safetensors([tmp_path / "model-2.safetensors", tmp_path / "model-1.safetensors"])) == ["a", "b"]
    _write(tmp_path / "model-3.safetensors", {"a": ARRAYS["f16"]})
    with pytest.raises(SafetensorsError, match="'a' is in both .*model-1.safetensors and .*model-3.safetensors"):
        open_safetensors(tmp_path)


def test_damaged_files_are_named(tmp_path):
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"abc")
    with pytest.raises(SafetensorsError, match="short.safetensors: not a safetensors file"):
        open_safetensors(short)
    bad = tmp_path / "bad.safetensors"
    header = json.dumps({"x": {"dtype": "F32", "shape": [4], "data_offsets": [0, 8]}}).encode()
    bad.write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
    with pytest.raises(SafetensorsError, match=r"tensor 'x' \(F32\[4\]\) has data_offsets \[0, 8\]"):
        open_safetensors(bad)
    with pytest.raises(ValueError, match=r"'x' is declared float32\[2\], its array is float32\[3\]"):
        write_safetensors(tmp_path / "w.safetensors", {"x": (np.float32, (2,))}, [np.zeros(3, np.float32)])


def _resident() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_release_gives_the_pages_back(tmp_path):
    size = 64 << 20
    path = tmp_path / "big.safetensors"
    write_safetensors(path, {"w": (np.float32, (size // 4,))}, [np.ones(size // 4, np.float32)])
    w = open_safetensors(path)["w"]
    before = _resident()
    assert float(w.sum()) == size // 4  # every page read
    touched = _resident()
    release(w)
    after = _resident()
    assert touched - before > size // 2
    assert touched - after > size // 2
    assert float(w[::1024].sum()) == size // 4 // 1024  # still valid: read from the file again


def test_save_streams_mapped_weights_and_releases_them(tmp_path):
    w = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    _write(tmp_path / "w.safetensors", {"w": w})
    mapped = open_safetensors(tmp_path / "w.safetensors")["w"]
    g = GraphBuilder()
    x = g.input("x", FLOAT, ["batch", 64])
    with g:
        y = op.MatMul(x, g.initializer("w", mapped))
    g.output(y, "y")
    graph = g.to_graph()
    assert graph.initializers["w"].const_value is mapped
    weights.save_model(graph, tmp_path / "m.onnx", external_data=True)
    model = onnx.load(str(tmp_path / "m.onnx"))
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]), w)


def test_map_file_and_int4_packing(tmp_path):
    q = np.array([[1, -2, 3], [7, -8, 0]], dtype=ml_dtypes.int4)
    assert bytes(ir.raw_bytes(q)) == numpy_helper.from_array(q).raw_data
    u = np.arange(2048, dtype=np.uint8).reshape(64, 32) % 16
    u4 = u.astype(ml_dtypes.uint4)
    g = GraphBuilder(opset=21)
    with g:
        value = g.initializer("u", u4)
    g.output(value, "out")
    weights.save_model(g.to_graph(), tmp_path / "m.onnx", external_data=True)
    assert os.path.getsize(tmp_path / "m.onnx.data") == u.size // 2  # two to a byte
    model = onnx.load(str(tmp_path / "m.onnx"))
    np.testing.assert_array_equal(numpy_helper.to_array(model.graph.initializer[0]).astype(np.uint8), u)
    data = map_file(tmp_path / "m.onnx.data")
    assert is_mapped(data) and data[0] == (u.reshape(-1)[0] | u.reshape(-1)[1] << 4)
