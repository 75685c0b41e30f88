"""Weights of any size: checking, saving and running a Graph without copying its initializers.

An initializer holds the array it was given (for an exported model, a numpy view of the torch
parameter's storage: bfloat16 as an ml_dtypes view of the same memory). Its bytes are made only
where they are written:

- `check_model(graph)` runs `onnx.checker` (full check) on the graph without its weights: large
  initializers stand as graph inputs of the same type, so the check holds at any model size.
- `save_model(graph, path)` writes the model, atomically (temporary files renamed); above `ir.EXTERNAL_DATA_THRESHOLD` bytes of
  weights (or when asked) the large initializers stream, tensor by tensor, straight from their
  arrays to `<path>.data` next to the model, which references them by offset; an array mapped
  from a checkpoint (`weight_sources`) gives its pages back once written.
- `ort_session(graph)` opens an onnxruntime session whose weights are OrtValues over the same
  arrays (`SessionOptions.add_external_initializers`): no serialized copy of the weights at all.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort

from graph_builder import ir, types
from graph_builder.evaluator import to_ort_value
from graph_builder.ir import ExternalData, Graph, ModelTooLargeError
from graph_builder.progress import progress as bar
from graph_builder.weight_sources import release

# Offsets in the data file: large tensors start on a 64 KiB boundary (the allocation
# granularity runtimes map files with), the others on 64 bytes.
_LARGE_TENSOR = 2**20
_ALIGN_LARGE, _ALIGN_SMALL = 2**16, 64


def weights_nbytes(graph: Graph) -> int:
    """Bytes of all initializers (weights and constants) of the graph."""
    return sum(_stored_nbytes(v.const_value) for v in graph.initializers.values() if v.const_value is not None)


def is_too_large(graph: Graph) -> bool:
    """True when the graph's weights do not fit in one ModelProto (`ir.EXTERNAL_DATA_THRESHOLD`)."""
    return weights_nbytes(graph) > ir.EXTERNAL_DATA_THRESHOLD


def too_large_message(graph: Graph, what: str, instead: str) -> str:
    size = weights_nbytes(graph)
    return (
        f"{what}: the weights take {size / 2**30:.2f} GiB, more than one ModelProto can hold "
        f"(protobuf's 2 GiB limit; graph_builder.ir.EXTERNAL_DATA_THRESHOLD = {ir.EXTERNAL_DATA_THRESHOLD} bytes). "
        f"{instead}"
    )


def _stored_nbytes(array: np.ndarray) -> int:
    """Bytes of the array as ONNX stores it (4-bit types: two elements to a byte)."""
    bits = types._BY_NUMPY[array.dtype].bits if array.dtype in types._BY_NUMPY else 8 * array.itemsize
    return (array.size * bits + 7) // 8


def external_layout(graph: Graph, location: str) -> ExternalData:
    """Offsets of the large initializers (`ir.is_large`) in an external-data file named
    `location`, in initializer order (deterministic: the same graph gives the same file)."""
    entries: dict[str, tuple[int, int]] = {}
    offset = 0
    for v in graph.initializers.values():
        if not ir.is_large(v):
            continue
        length = _stored_nbytes(v.numpy())
        align = _ALIGN_LARGE if length >= _LARGE_TENSOR else _ALIGN_SMALL
        offset = -(-offset // align) * align
        entries[v.name] = (offset, length)
        offset += length
    return ExternalData(location, entries, offset)


def write_external_data(graph: Graph, layout: ExternalData, path: str, progress: bool = True) -> None:
    """Write the initializers of `layout` to `path`, one tensor at a time from its array (the
    pages a tensor mapped from a file brought in are given back once it is written). A bar
    counts the bytes on a terminal (`graph_builder.progress`; progress=False: never)."""
    with open(path, "wb") as f, bar(total=layout.size, desc=f"writing {layout.location}", unit="B",
                                    unit_scale=True, enabled=progress) as written:
        for name, (offset, length) in layout.entries.items():
            position = f.tell()
            if position < offset:
                f.write(b"\0" * (offset - position))
            array = graph.initializers[name].numpy()
            f.write(ir.raw_bytes(array))
            release(array)  # a tensor mapped from a checkpoint leaves memory once written
            written.update(offset + length - position)
        _flush_to_disk(f)


def save_model(graph: Graph, path: str | os.PathLike[str], external_data: bool | None = None, ir_version: int | None = None,
               progress: bool = True) -> str | None:
    """Write the model to `path` (its folder is created when missing). The large initializers
    go to `<path>.data` (in the same directory) when `external_data` is True, or when it is None
    and the weights are over `ir.EXTERNAL_DATA_THRESHOLD`. Returns the data file's path, or None.
    At no point are the weights copied as a whole: they stream from their arrays.

    Atomic: the files are written under temporary names in the same folder, then renamed over
    the old ones; when writing fails (a full disk), the model that was at `path` and its data
    file are untouched and no temporary file is left. Saving inline over a model whose weights
    were in `<path>.data` removes that file (only that one: other files are never deleted).

    Writing the data file shows a bar on a terminal (`graph_builder.progress`); progress=False
    never does."""
    path = os.fspath(path)
    too_large = is_too_large(graph)
    if external_data is None:
        external_data = too_large
    if not external_data and too_large:
        raise ModelTooLargeError(too_large_message(graph, f"save({path!r}, external_data=False)", "Save with external data."))
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    location = os.path.basename(path) + ".data"
    data_path = os.path.join(os.path.dirname(path), location)
    stale_data = not external_data and os.path.isfile(data_path) and _references(path, location)
    layout = external_layout(graph, location) if external_data else None
    temporaries: list[str] = []
    try:
        if layout is not None:
            temporaries.append(_temporary_beside(data_path))
            write_external_data(graph, layout, temporaries[-1], progress)
        temporaries.append(_temporary_beside(path))
        with open(temporaries[-1], "wb") as f:
            f.writelines(graph.model_parts(ir_version, external_data=layout))
            _flush_to_disk(f)
        if layout is not None:
            os.replace(temporaries[0], data_path)
        os.replace(temporaries[-1], path)
    except BaseException:
        for temporary in temporaries:
            with contextlib.suppress(OSError):
                os.remove(temporary)
        raise
    if stale_data:
        with contextlib.suppress(OSError):
            os.remove(data_path)
    return data_path if layout is not None else None


def _temporary_beside(path: str) -> str:
    """A new empty file next to `path` (same folder, so that renaming it over `path` is atomic),
    with the permissions a new file gets (mkstemp's are owner-only)."""
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        os.chmod(fd, 0o666 & ~_UMASK)
    finally:
        os.close(fd)
    return temporary


def _flush_to_disk(f: Any) -> None:
    f.flush()
    os.fsync(f.fileno())


def _references(model_path: str, location: str) -> bool:
    """True when the ONNX model at `model_path` keeps tensors in the external file `location`."""
    try:
        model = onnx.load(model_path, load_external_data=False)
    except Exception:  # noqa: BLE001  (not a readable model: it references nothing we know of)
        return False
    return any(e.key == "location" and os.path.normpath(e.value) == location
               for tensor in _tensors(model.graph) if tensor.data_location == onnx.TensorProto.EXTERNAL
               for e in tensor.external_data)


def _tensors(graph: onnx.GraphProto) -> Any:
    """Every TensorProto of a graph: initializers and tensor attributes, subgraphs included."""
    yield from graph.initializer
    for node in graph.node:
        for attribute in node.attribute:
            yield from ([attribute.t] if attribute.HasField("t") else []) + list(attribute.tensors)
            for subgraph in ([attribute.g] if attribute.HasField("g") else []) + list(attribute.graphs):
                yield from _tensors(subgraph)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()


def check_model(graph: Graph, ir_version: int | None = None) -> None:
    """onnx.checker.check_model(full_check=True) on the graph without its weights (the large
    initializers stand as inputs of the same type and shape), at any model size."""
    onnx.checker.check_model(graph.to_model_bytes(ir_version, weights_as_inputs=True), full_check=True)


def ort_session(graph: Graph, options: ort.SessionOptions | None = None, providers: Any = ("CPUExecutionProvider",)) -> ort.InferenceSession:
    """An onnxruntime session of the graph whose large initializers are OrtValues over their
    arrays (zero-copy), given through `SessionOptions.add_external_initializers`: the model
    onnxruntime parses holds no weight bytes, at any size. The OrtValues live as long as the
    session (its `weights` attribute)."""
    options = options or ort.SessionOptions()
    layout = external_layout(graph, "weights.data")  # never read: every entry is given as an OrtValue
    for name in [n for n in layout.entries if types.from_numpy(graph.initializers[n].numpy().dtype).bits == 4]:
        del layout.entries[name]  # INT4 / UINT4 have no OrtValue over numpy memory: inside the model, packed
    names = list(layout.entries)
    values = [to_ort_value(graph.initializers[name].numpy()) for name in names]
    if names:
        options.add_external_initializers(names, values)
    model = graph.to_model_bytes(external_data=layout)
    session = ort.InferenceSession(model, options, providers=list(providers))
    session.weights = values  # the session reads the weights from these OrtValues' memory
    return session
