"""A small in-memory ONNX IR: Value, Node, Graph, and conversion to and from protobuf.

A Value is either a tensor in a graph (it has a producer Node, or is a graph input or
initializer) or a tensor with a known payload (`const_value`). Values made by the eager
evaluator have a payload and no graph.

`model_from_proto(model).to_model()` gives back the same ModelProto, field for field, for the
fields this IR keeps: everything but sparse initializers, quantization annotations, training
info, configurations and device configurations, which are not read.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper, numpy_helper

from graph_builder import types
from graph_builder.types import DType

Dim = int | str | None
Shape = tuple[Dim, ...]

_A = onnx.AttributeProto
_LITTLE_ENDIAN = sys.byteorder == "little"

# Protobuf cannot serialize a message over 2 GiB. A model whose initializers take more bytes than
# this is written with its weights as external data (64 MiB are left for the graph itself).
# Read at call time: tests lower it to take the big-model path with small models.
EXTERNAL_DATA_THRESHOLD = 2**31 - 2**26
# Initializers smaller than this stay inside the model file when the rest goes to external data
# (as onnx.save does), and inside the graph the checker sees.
EXTERNAL_MIN_BYTES = 1024


class ModelTooLargeError(ValueError):
    """The model's weights do not fit in one ModelProto (over EXTERNAL_DATA_THRESHOLD bytes)."""


class ExternalData:
    """Where each large initializer lives in an external-data file: `location` (the file's name,
    relative to the model file) and `entries`, name -> (offset, length). Made by
    `weights.external_layout`; the ModelProto written with it references the file by offsets."""

    def __init__(self, location: str, entries: dict[str, tuple[int, int]], size: int):
        self.location = location
        self.entries = entries
        self.size = size

    def tensor_proto(self, value: Value) -> onnx.TensorProto:
        """The TensorProto of an initializer that references its bytes in the file."""
        offset, length = self.entries[value.name]
        proto = onnx.TensorProto(name=value.name, dims=value.numpy().shape, data_type=value.known_dtype.onnx,
                                 data_location=onnx.TensorProto.EXTERNAL)  # fmt: skip
        for key, text in (("location", self.location), ("offset", str(offset)), ("length", str(length))):
            proto.external_data.add(key=key, value=text)
        return proto


def is_large(value: Value) -> bool:
    """An initializer that goes to external data (and stands as an input for the checker)."""
    array = value.const_value
    return array is not None and array.nbytes >= EXTERNAL_MIN_BYTES and array.dtype != np.object_


# Graph inputs and outputs that are the real view of a complex tensor carry this key in their
# ValueInfo metadata, with the complex dtype ("complex64" / "complex128") as its value.
COMPLEX_KEY = "pkg.graph_builder.complex"


def real_view(array: np.ndarray) -> np.ndarray:
    """A complex array as its real view: shape + (2,), float32 for complex64, float64 for
    complex128 (a copy when the array is not contiguous)."""
    real = np.float32 if array.dtype == np.complex64 else np.float64
    return np.require(array, requirements="C").reshape((*array.shape, 1)).view(real)  # 0-d arrays too


def complex_from_real_view(array: np.ndarray) -> np.ndarray:
    """The inverse of real_view: a float32/float64 array whose last dimension is 2."""
    if array.ndim == 0 or array.shape[-1] != 2:
        raise ValueError(f"an array of shape {list(array.shape)} is not the real view of a complex array (its last dimension must be 2)")
    kind = np.complex64 if array.dtype == np.float32 else np.complex128
    return np.require(array, requirements="C").view(kind).reshape(array.shape[:-1])


class Value:
    """A tensor: its name, dtype, shape (dims are ints, symbolic names or None), producer node
    and, when known, its payload (`const_value`).

    `sym_value` is set while tracing for small INT64 tensors computed from shapes (the output of
    Shape, and Slice, Concat, Gather... of it), and for small INT64 constants once read: their
    elements as dims, so that a Reshape to `Concat(Shape(x)[:2], [4, 16])` keeps the symbolic
    dims by name."""

    __slots__ = ("name", "dtype", "shape", "producer", "index", "const_value", "graph", "is_parameter",
                 "sym_value", "metadata", "doc_string", "_type_proto", "_tensor_proto", "complex_dtype",
                 "__weakref__")  # fmt: skip

    def __init__(
        self,
        name: str,
        dtype: DType | None,
        shape: Shape | None = None,
        producer: Node | None = None,
        index: int = 0,
        const_value: np.ndarray | None = None,
        graph: Graph | None = None,
    ):
        self.name = name
        self.dtype = dtype
        self.shape = shape if shape is None or type(shape) is tuple else tuple(shape)
        self.producer = producer
        self.index = index
        self.const_value = const_value
        self.graph = graph
        self.is_parameter = False  # initializers that hold model weights are never folded away
        self.sym_value: tuple[Dim, ...] | None = None
        self.metadata: dict[str, str] = {}  # ValueInfoProto.metadata_props
        self.doc_string = ""
        self._type_proto: onnx.TypeProto | None = None
        self._tensor_proto: onnx.TensorProto | None = None
        # COMPLEX64 / COMPLEX128 when this real tensor is the view of a complex one (see is_complex)
        self.complex_dtype: DType | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    # -- dtype and shape where they must be known -------------------------------------------
    # `dtype` and `shape` are None when unknown (a graph read from a file may lack them, ONNX's
    # inference may give up). Code that needs them (every torchlib op function, on the Values
    # the eager and tracing evaluators produce) reads these instead: the type says it is known,
    # and an unknown one raises a clear error rather than a TypeError further on.
    @property
    def known_dtype(self) -> DType:
        """dtype, or ValueError when it is not known."""
        dtype = self.dtype
        if dtype is None:
            raise ValueError(f"{self._unknown()} dtype; it is needed here (add type information to the graph)")
        return dtype

    @property
    def known_shape(self) -> Shape:
        """shape (its dims may still be symbolic or None), or ValueError when the rank is not known."""
        shape = self.shape
        if shape is None:
            raise ValueError(f"{self._unknown()} shape, not even its rank; it is needed here (add shape information to the graph)")
        return shape

    @property
    def known_rank(self) -> int:
        """The rank, or ValueError when it is not known."""
        return len(self.known_shape)

    def static_dim(self, axis: int) -> int:
        """The size of dim `axis` as an int, or ValueError when it is symbolic or unknown."""
        dim = self.known_shape[axis]
        if type(dim) is not int:
            raise ValueError(f"{self._unknown()} static size for dim {axis} (it is {dim!r}); it is needed here")
        return dim

    @property
    def static_shape(self) -> tuple[int, ...]:
        """The shape as ints, or ValueError when the rank is unknown or a dim is symbolic or unknown."""
        return tuple(self.static_dim(axis) for axis in range(self.known_rank))

    def _unknown(self) -> str:
        producer = f" (output of {self.producer.op_type})" if self.producer is not None else ""
        return f"Value {self.name!r}{producer} has no known"

    # -- complex tensors ------------------------------------------------------------------
    # ONNX runtimes have no complex arithmetic, so a complex tensor of shape S is held as a real
    # tensor of shape S + (2,) (real, imaginary), FLOAT for complex64 and DOUBLE for complex128.
    # Such a Value is marked (`as_complex()`); `dtype`/`shape` stay those of the real view,
    # `logical_shape`/`logical_rank`/`logical_dtype` are the complex tensor's.
    @property
    def is_complex(self) -> bool:
        return self.complex_dtype is not None

    def as_complex(self) -> Value:
        """Mark this real tensor, whose last dimension is (real, imaginary), as the view of a
        complex tensor; returns self."""
        if self.dtype is not types.FLOAT and self.dtype is not types.DOUBLE:
            raise TypeError(f"Value {self.name!r}: only FLOAT or DOUBLE tensors view complex tensors, not {self.dtype}")
        if self.shape is not None and (not self.shape or self.shape[-1] not in (2, None) and type(self.shape[-1]) is int):
            raise ValueError(f"Value {self.name!r} of shape {list(self.shape)} cannot view a complex tensor: its last dimension must be 2")
        self.complex_dtype = types.COMPLEX64 if self.dtype is types.FLOAT else types.COMPLEX128
        return self

    @property
    def logical_dtype(self) -> DType | None:
        """COMPLEX64/COMPLEX128 for a complex view, else dtype."""
        return self.complex_dtype or self.dtype

    @property
    def logical_shape(self) -> Shape | None:
        """The complex tensor's shape (without the trailing 2) for a complex view, else shape."""
        if self.complex_dtype is None or self.shape is None:
            return self.shape
        return self.shape[:-1]

    @property
    def logical_rank(self) -> int | None:
        shape = self.logical_shape
        return None if shape is None else len(shape)

    @property
    def known_logical_dtype(self) -> DType:
        """logical_dtype, or ValueError when the dtype is not known."""
        return self.complex_dtype or self.known_dtype

    @property
    def known_logical_shape(self) -> Shape:
        """logical_shape, or ValueError when the rank is not known."""
        shape = self.known_shape
        return shape[:-1] if self.complex_dtype is not None else shape

    @property
    def known_logical_rank(self) -> int:
        """logical_rank, or ValueError when the rank is not known."""
        return len(self.known_logical_shape)

    @property
    def is_static(self) -> bool:
        """True when every dimension is a known integer."""
        return self.shape is not None and all(type(d) is int for d in self.shape)

    def numpy(self) -> np.ndarray:
        if self.const_value is None:
            raise ValueError(f"Value {self.name!r} has no known payload; it is computed in a graph")
        return self.const_value

    # An eager Value (one with a payload) is an array to numpy and torch: np.asarray(v),
    # torch.as_tensor(v) and torch.from_dlpack(v) see its payload.
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        array = self.numpy()
        if dtype is not None and array.dtype != dtype:
            return array.astype(dtype)
        return array.copy() if copy else array

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.numpy().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self.numpy().__dlpack_device__()

    def __repr__(self) -> str:
        shape = "?" if self.shape is None else "[" + ",".join("?" if d is None else str(d) for d in self.shape) + "]"
        payload = "" if self.const_value is None or self.const_value.size > 8 else f" = {self.const_value.tolist()}"
        return f"Value({self.name!r}, {self.dtype}{shape}{payload})"

    def __bool__(self) -> bool:
        raise TypeError(
            f"the truth value of Value {self.name!r} is not known while tracing; "
            "use op.If for data-dependent control flow"
        )

    def type_proto(self) -> onnx.TypeProto:
        if self._type_proto is None:
            self._type_proto = make_type_proto(self.dtype, self.shape)
        return self._type_proto

    def tensor_proto(self) -> onnx.TensorProto:
        """The payload as a TensorProto named like the Value (cached)."""
        if self._tensor_proto is None or self._tensor_proto.name != self.name:
            self._tensor_proto = tensor_proto(self.numpy(), self.name)
        return self._tensor_proto

    def set_type(self, dtype: DType | None, shape: Sequence[Dim] | None) -> None:
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self._type_proto = None


CHECK_PREFIX = "check: "  # the name of a Reshape that carries a run-time check (GraphBuilder._checked)


def is_check(node: Node) -> bool:
    """Whether `node` carries a run-time check: its output has its input's shape only where the
    check holds, so no rewrite may take it for an identity."""
    return node.name is not None and node.name.startswith(CHECK_PREFIX)


class Node:
    """One operator call. `attributes` holds plain Python values (Graph for subgraphs, numpy
    arrays for tensors); `attr_types` the AttributeProto type of each. A node made by the
    builder has name None and is named after its first output when emitted."""

    __slots__ = ("domain", "op_type", "inputs", "outputs", "attributes", "attr_types", "metadata", "name",
                 "version", "overload", "doc_string")  # fmt: skip

    def __init__(
        self,
        domain: str,
        op_type: str,
        inputs: Sequence[Value | None],
        attributes: dict[str, Any],
        attr_types: dict[str, int],
        name: str | None,
        version: int | None = None,
    ):
        self.domain = domain
        self.op_type = op_type
        self.inputs = inputs if type(inputs) is list else list(inputs)
        self.outputs: list[Value] = []
        self.attributes = attributes
        self.attr_types = attr_types  # AttributeProto.AttributeType per attribute name
        self.metadata: dict[str, str] = {}
        self.name = name
        self.version = version
        self.overload = ""
        self.doc_string = ""

    def __repr__(self) -> str:
        ins = ", ".join("None" if v is None else v.name for v in self.inputs)
        outs = ", ".join(v.name for v in self.outputs)
        return f"Node({self.op_type}({ins}) -> {outs}, {self.attributes})"

    def emitted_name(self) -> str:
        if self.name is not None:
            return self.name
        return "node_" + self.outputs[0].name if self.outputs else self.op_type

    def to_proto(self) -> onnx.NodeProto:
        graph = onnx.GraphProto()
        self._add_to(graph.node)
        return graph.node[0]

    def _add_to(self, nodes: Any) -> None:
        """Append the NodeProto to a repeated NodeProto field (one `add` call: the fast path)."""
        inputs = ["" if v is None else v.name for v in self.inputs]
        outputs = [v.name for v in self.outputs]
        name = self.emitted_name()
        if self.attributes:
            types_ = self.attr_types
            attributes = [make_attribute(k, v, types_.get(k)) for k, v in self.attributes.items()]
            if name:
                proto = nodes.add(op_type=self.op_type, input=inputs, output=outputs, name=name, attribute=attributes)
            else:
                proto = nodes.add(op_type=self.op_type, input=inputs, output=outputs, attribute=attributes)
        elif name:
            proto = nodes.add(op_type=self.op_type, input=inputs, output=outputs, name=name)
        else:
            proto = nodes.add(op_type=self.op_type, input=inputs, output=outputs)
        if self.domain:
            proto.domain = self.domain
        if self.metadata:
            proto.metadata_props.extend([onnx.StringStringEntryProto(key=k, value=v) for k, v in self.metadata.items()])
        if self.overload:
            proto.overload = self.overload
        if self.doc_string:
            proto.doc_string = self.doc_string


class Graph:
    """A graph: inputs, outputs, nodes in topological order, initializers, opset imports, local
    functions (kept as FunctionProtos) and metadata. A main graph also carries the model's
    fields (ir_version, producer, model metadata) so that a read model is written back as it was.

    `metadata` is the model's metadata_props, `graph_metadata` the graph's."""

    def __init__(self, name: str = "main_graph", opset_imports: dict[str, int] | None = None):
        self.name = name
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.nodes: list[Node] = []
        self.initializers: dict[str, Value] = {}
        self.opset_imports: dict[str, int] = dict(opset_imports or {"": 23})
        self.functions: list[onnx.FunctionProto] = []
        self.metadata: dict[str, str] = {}
        self.graph_metadata: dict[str, str] = {}
        self.doc_string = ""
        self.value_info: list[Value] = []
        # model fields
        self.ir_version = 10
        self.producer_name = "torchlib"
        self.producer_version = ""
        self.model_domain = ""
        self.model_version = 0
        self.model_doc_string = ""

    def to_graph_proto(
        self, proto: onnx.GraphProto | None = None, initializers: bool = True, nodes: bool = True,
        external_data: ExternalData | None = None, weights_as_inputs: bool = False,
    ) -> onnx.GraphProto:
        """The GraphProto (filled into `proto` when given; without initializers or nodes if asked).
        With `external_data`, the initializers it lists reference their bytes in its file. With
        `weights_as_inputs`, the large initializers (`is_large`) are graph inputs instead: the
        graph without its weights, which onnx.checker checks at any model size."""
        graph = onnx.GraphProto() if proto is None else proto
        node_protos = graph.node
        for node in self.nodes if nodes else ():
            node._add_to(node_protos)
        graph.name = self.name
        tensors = graph.initializer
        for v in self.initializers.values() if initializers else ():
            read = v._tensor_proto
            if external_data is not None and v.name in external_data.entries:
                tensors.append(external_data.tensor_proto(v))
            elif weights_as_inputs and is_large(v):
                continue
            elif read is not None and read.name == v.name:
                tensors.append(read)  # as read or made before
            else:
                add_tensor_proto(tensors, v.numpy(), v.name)
        if self.doc_string:
            graph.doc_string = self.doc_string
        graph.input.extend([make_value_info(v) for v in self.inputs])
        if weights_as_inputs:
            inputs = set(map(id, self.inputs))
            graph.input.extend([make_value_info(v) for v in self.initializers.values() if is_large(v) and id(v) not in inputs])
        graph.output.extend([make_value_info(v) for v in self.outputs])
        graph.value_info.extend([make_value_info(v) for v in self.value_info])
        if self.graph_metadata:
            graph.metadata_props.extend([onnx.StringStringEntryProto(key=k, value=v) for k, v in self.graph_metadata.items()])
        return graph

    def to_model_bytes(
        self, ir_version: int | None = None, producer_name: str | None = None,
        external_data: ExternalData | None = None, weights_as_inputs: bool = False,
    ) -> bytes:
        """`to_model().SerializeToString()`, up to the order of fields, made faster: nodes and
        weights are encoded straight into protobuf's wire format (weights from their arrays)
        instead of being built as protobuf objects and serialized again. Protobuf parsers merge
        repeated occurrences of a message field, so they follow the rest of the model as a
        second `graph` field. `onnx.ModelProto.FromString` of it equals `to_model()`."""
        return b"".join(self.model_parts(ir_version, producer_name, external_data, weights_as_inputs))  # one copy of the data

    def model_parts(
        self, ir_version: int | None = None, producer_name: str | None = None,
        external_data: ExternalData | None = None, weights_as_inputs: bool = False,
    ) -> list[Any]:
        """The serialized model as a list of bytes and memoryviews, the weights' ones over the
        arrays themselves (no copy): written one after the other, they are `to_model_bytes()`."""
        core = self.to_model(ir_version, producer_name, initializers=False, nodes=False,
                             weights_as_inputs=weights_as_inputs).SerializeToString()  # fmt: skip
        input_fields: dict[str, bytes] = {}
        parts: list[Any] = [node_entry(node, input_fields) for node in self.nodes]
        for v in self.initializers.values():
            if external_data is not None and v.name in external_data.entries:
                tensor = external_data.tensor_proto(v).SerializeToString()
                parts.extend([b"\x2a", _varint(len(tensor)), tensor])
            elif not (weights_as_inputs and is_large(v)):
                parts.extend(_initializer_entry(v))
        size = sum(len(p) if type(p) is bytes else p.nbytes for p in parts)
        return [core, b"\x3a", _varint(size), *parts]  # ModelProto.graph = 7

    def to_model(
        self, ir_version: int | None = None, producer_name: str | None = None, initializers: bool = True,
        nodes: bool = True, external_data: ExternalData | None = None, weights_as_inputs: bool = False,
    ) -> onnx.ModelProto:
        """The ModelProto, weights included: over EXTERNAL_DATA_THRESHOLD bytes of weights, pass
        `external_data` (see `weights.save_model`) or `weights_as_inputs` (see to_graph_proto)."""
        model = onnx.ModelProto()
        model.ir_version = self.ir_version if ir_version is None else ir_version
        producer_name = self.producer_name if producer_name is None else producer_name
        if producer_name:
            model.producer_name = producer_name
        if self.producer_version:
            model.producer_version = self.producer_version
        if self.model_domain:
            model.domain = self.model_domain
        if self.model_version:
            model.model_version = self.model_version
        if self.model_doc_string:
            model.doc_string = self.model_doc_string
        self.to_graph_proto(model.graph, initializers, nodes, external_data, weights_as_inputs)
        model.opset_import.extend([onnx.OperatorSetIdProto(domain=d, version=v) for d, v in self.opset_imports.items()])
        model.functions.extend(self.functions)
        if self.metadata:
            model.metadata_props.extend([onnx.StringStringEntryProto(key=k, value=v) for k, v in self.metadata.items()])
        return model


def make_type_proto(dtype: DType | None, shape: Shape | None) -> onnx.TypeProto:
    tp = onnx.TypeProto()
    tensor = tp.tensor_type
    if dtype is not None:
        tensor.elem_type = dtype.onnx
    if shape is not None:
        shape_proto = tensor.shape
        shape_proto.SetInParent()
        dims = shape_proto.dim
        for dim in shape:
            if type(dim) is int:
                dims.add(dim_value=dim)
            elif isinstance(dim, str):
                dims.add(dim_param=dim)
            else:
                dims.add()
    return tp


def make_value_info(value: Value) -> onnx.ValueInfoProto:
    info = onnx.ValueInfoProto(name=value.name, type=value.type_proto())
    if value.doc_string:
        info.doc_string = value.doc_string
    if value.metadata:
        info.metadata_props.extend([onnx.StringStringEntryProto(key=k, value=v) for k, v in value.metadata.items()])
    return info


def type_from_proto(tp: onnx.TypeProto) -> tuple[DType | None, Shape | None]:
    if tp.WhichOneof("value") != "tensor_type":
        return None, None
    tensor = tp.tensor_type
    dtype = types.from_onnx(tensor.elem_type) if tensor.elem_type else None
    if not tensor.HasField("shape"):
        return dtype, None
    dims: list[Dim] = []
    for d in tensor.shape.dim:
        which = d.WhichOneof("value")
        dims.append(d.dim_value if which == "dim_value" else d.dim_param if which == "dim_param" else None)
    return dtype, tuple(dims)


def tensor_proto(array: np.ndarray, name: str = "") -> onnx.TensorProto:
    """numpy_helper.from_array, with a fast path for the common numeric types."""
    array = np.asarray(array)
    dtype = types._BY_NUMPY.get(array.dtype)
    if _LITTLE_ENDIAN and dtype is not None and dtype.kind in "fiubc" and dtype.bits != 4:
        proto = onnx.TensorProto(dims=array.shape, data_type=dtype.onnx, raw_data=array.tobytes())
        if name:
            proto.name = name
        return proto
    return numpy_helper.from_array(array, name)


def add_tensor_proto(tensors: Any, array: np.ndarray, name: str) -> None:
    """Append the TensorProto of an array to a repeated TensorProto field: built in place for
    the common numeric types (one copy of the data fewer than building it, then appending)."""
    dtype = types._BY_NUMPY.get(array.dtype)
    if _LITTLE_ENDIAN and dtype is not None and dtype.kind in "fiubc" and dtype.bits != 4:
        if name:
            tensors.add(name=name, dims=array.shape, data_type=dtype.onnx, raw_data=array.tobytes())
        else:
            tensors.add(dims=array.shape, data_type=dtype.onnx, raw_data=array.tobytes())
    else:
        tensors.append(numpy_helper.from_array(array, name))


_TILE = 256


def contiguous(array: np.ndarray) -> np.ndarray:
    """The array in C order: itself when it already is, else a copy. A large transposed matrix
    (a Linear weight folded as `W.T`, a view) is copied tile by tile, 256 x 256 elements: numpy
    walks the source column by column otherwise, and that copy takes 2.5-3x as long (3072 x 768
    float32: 12.8 ms against 4.6 ms; convnext_tiny's weights, 0.13 s of its check session)."""
    if array.flags.c_contiguous:
        return array
    if array.ndim != 2 or array.size < _TILE * _TILE or not array.T.flags.c_contiguous:
        return np.ascontiguousarray(array)
    out = np.empty(array.shape, array.dtype)
    rows, columns = array.shape
    for i in range(0, rows, _TILE):
        for j in range(0, columns, _TILE):
            out[i : i + _TILE, j : j + _TILE] = array[i : i + _TILE, j : j + _TILE]
    return out


def raw_bytes(array: np.ndarray) -> memoryview:
    """The array's bytes as ONNX stores them (TensorProto.raw_data, external data): little
    endian, C order, without a copy when the array is contiguous on a little-endian machine;
    INT4 / UINT4 packed two to a byte, the first element in the low nibble (a packed copy)."""
    dtype = types._BY_NUMPY.get(array.dtype)
    if dtype is not None and dtype.bits == 4:
        nibbles = np.ascontiguousarray(array).reshape(-1).view(np.uint8) & 0x0F
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        return (nibbles[0::2] | (nibbles[1::2] << 4)).data
    if not _LITTLE_ENDIAN and array.dtype.itemsize > 1:
        array = array.astype(array.dtype.newbyteorder("<"))
    return contiguous(array).reshape(-1).view(np.uint8).data


def _varint(n: int) -> bytes:
    """Protobuf's base-128 encoding of a non-negative integer."""
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _text(tag: bytes, text: str) -> bytes:
    """A length-delimited string field."""
    data = text.encode()
    n = len(data)
    return tag + (bytes((n,)) if n < 0x80 else _varint(n)) + data


_OP_TYPE_FIELDS: dict[str, bytes] = {}


def node_entry(node: Node, input_fields: dict[str, bytes]) -> bytes:
    """GraphProto.node entry (field 1) of a node in wire format: the bytes `node.to_proto()`
    serializes to, written directly (NodeProto: input 1, output 2, name 3, op_type 4,
    attribute 5, doc_string 6, domain 7, overload 8, metadata_props 9). `input_fields` keeps
    the encoded input fields, as values are used many times."""
    parts = []
    for v in node.inputs:
        if v is None:
            parts.append(b"\x0a\x00")
            continue
        field = input_fields.get(v.name)
        if field is None:
            field = input_fields[v.name] = _text(b"\x0a", v.name)
        parts.append(field)
    for v in node.outputs:
        parts.append(_text(b"\x12", v.name))
    name = node.emitted_name()
    if name:
        parts.append(_text(b"\x1a", name))
    op_type = _OP_TYPE_FIELDS.get(node.op_type)
    if op_type is None:
        op_type = _OP_TYPE_FIELDS[node.op_type] = _text(b"\x22", node.op_type)
    parts.append(op_type)
    if node.attributes:
        types_ = node.attr_types
        for key, value in node.attributes.items():
            data = attribute_bytes(key, value, types_.get(key))
            parts.append(b"\x2a" + _varint(len(data)) + data)
    if node.doc_string:
        parts.append(_text(b"\x32", node.doc_string))
    if node.domain:
        parts.append(_text(b"\x3a", node.domain))
    if node.overload:
        parts.append(_text(b"\x42", node.overload))
    for key, value in node.metadata.items():
        entry = _text(b"\x0a", key) + _text(b"\x12", value)
        parts.append(b"\x4a" + _varint(len(entry)) + entry)
    body = b"".join(parts)
    n = len(body)
    return b"\x0a" + (bytes((n,)) if n < 0x80 else _varint(n)) + body


def _initializer_entry(v: Value) -> list[Any]:
    """The pieces of one GraphProto.initializer entry (field 5): a TensorProto with dims (1),
    data_type (2), name (8) and raw_data (9) written from the array, as add_tensor_proto makes it."""
    read = v._tensor_proto
    array = v.numpy()
    dtype = types._BY_NUMPY.get(array.dtype)
    if read is not None and read.name == v.name or not _LITTLE_ENDIAN or dtype is None or dtype.kind not in "fiubc" or dtype.bits == 4:
        tensor = (read if read is not None and read.name == v.name else tensor_proto(array, v.name)).SerializeToString()
        return [b"\x2a", _varint(len(tensor)), tensor]
    name = v.name.encode()
    head = b"".join([b"\x08" + _varint(d) for d in array.shape])
    head += b"\x10" + _varint(dtype.onnx) + b"\x42" + _varint(len(name)) + name
    data = contiguous(array).reshape(-1).view(np.uint8).data
    size = len(head) + 1 + len(_varint(data.nbytes)) + data.nbytes
    return [b"\x2a", _varint(size), head, b"\x4a", _varint(data.nbytes), data]


def _freeze(value: Any) -> Any:
    """A hashable key for an attribute value (a Graph stands for itself)."""
    t = type(value)
    if t is float:
        return (value, math.copysign(1.0, value))  # -0.0 == 0.0, but not as an attribute
    if t is list or t is tuple:
        return tuple([_freeze(v) for v in value])
    if t is np.ndarray:
        return (value.dtype.str, value.shape, value.tobytes())
    return value


_ATTRIBUTE_CACHE: dict[Any, onnx.AttributeProto] = {}
_ATTRIBUTE_BYTES: dict[Any, bytes] = {}


def attribute_bytes(key: str, value: Any, attr_type: int | None) -> bytes:
    """make_attribute(...).SerializeToString(), cached like make_attribute."""
    if attr_type == _A.GRAPH or attr_type == _A.GRAPHS or attr_type == _A.TENSOR:
        return make_attribute(key, value, attr_type).SerializeToString()
    t = type(value)
    cache_key = (key, attr_type, t, value if t is int or t is str else _freeze(value))
    try:
        cached = _ATTRIBUTE_BYTES.get(cache_key)
    except TypeError:  # an unhashable value
        return make_attribute(key, value, attr_type).SerializeToString()
    if cached is None:
        if len(_ATTRIBUTE_BYTES) > 10_000:
            _ATTRIBUTE_BYTES.clear()
        cached = _ATTRIBUTE_BYTES[cache_key] = make_attribute(key, value, attr_type).SerializeToString()
    return cached


def make_attribute(key: str, value: Any, attr_type: int | None) -> onnx.AttributeProto:
    """The AttributeProto of a plain Python attribute value (cached: attributes repeat a lot)."""
    if attr_type != _A.GRAPH and attr_type != _A.GRAPHS and attr_type != _A.TENSOR:
        cache_key: tuple[Any, ...] | None = (key, attr_type, type(value), _freeze(value))
        try:
            cached = _ATTRIBUTE_CACHE.get(cache_key)
        except TypeError:  # an unhashable value
            cached, cache_key = None, None
        if cached is not None:
            return cached
        proto = helper.make_attribute(key, value, attr_type=attr_type)
        if cache_key is not None:
            if len(_ATTRIBUTE_CACHE) > 10_000:
                _ATTRIBUTE_CACHE.clear()
            _ATTRIBUTE_CACHE[cache_key] = proto
        return proto
    if isinstance(value, Graph):
        value = value.to_graph_proto()
    elif isinstance(value, np.ndarray):
        value = tensor_proto(value)
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], Graph):
        value = [g.to_graph_proto() for g in value]
    return helper.make_attribute(key, value, attr_type=attr_type)


def attribute_value(attr: onnx.AttributeProto, opset_imports: dict[str, int], scope: dict[str, Value]) -> Any:
    """Decode an AttributeProto into the plain Python value the IR stores."""
    kind = attr.type
    if kind == _A.GRAPH:
        return graph_from_proto(attr.g, opset_imports, scope)
    if kind == _A.GRAPHS:
        return [graph_from_proto(g, opset_imports, scope) for g in attr.graphs]
    if kind == _A.TENSOR:
        return numpy_helper.to_array(attr.t)
    value = helper.get_attribute_value(attr)
    if kind == _A.STRING:
        return value.decode()
    if kind == _A.STRINGS:
        return [v.decode() for v in value]
    if kind in (_A.INTS, _A.FLOATS):
        return list(value)
    return value


def _apply_info(v: Value, info: onnx.ValueInfoProto) -> Value:
    """Give a Value the type, doc string and metadata of its ValueInfo, kept as read (sequence
    and optional types included) so that it is written back the same."""
    v.set_type(*type_from_proto(info.type))
    v._type_proto = onnx.TypeProto()
    v._type_proto.CopyFrom(info.type)
    v.doc_string = info.doc_string
    v.metadata = {p.key: p.value for p in info.metadata_props}
    return v


def _constant_payload(node: Node) -> np.ndarray | None:
    if node.op_type != "Constant" or node.domain not in ("", "ai.onnx") or len(node.attributes) != 1:
        return None
    ((key, value),) = node.attributes.items()
    if key == "value":
        return value
    scalar_types = {"value_float": np.float32, "value_int": np.int64, "value_floats": np.float32, "value_ints": np.int64}
    if key in scalar_types:
        return np.asarray(value, dtype=scalar_types[key])
    return None


def graph_from_proto(proto: onnx.GraphProto, opset_imports: dict[str, int], outer: dict[str, Value] | None = None) -> Graph:
    """Read a GraphProto; `outer` holds the values of enclosing graphs a subgraph may use."""
    graph = Graph(proto.name, opset_imports)
    graph.doc_string = proto.doc_string
    graph.graph_metadata = {p.key: p.value for p in proto.metadata_props}
    infos = {info.name: info for info in proto.value_info}
    infos.update({info.name: info for info in proto.output})
    scope: dict[str, Value] = dict(outer or {})
    for info in proto.input:
        v = _apply_info(Value(info.name, None, graph=graph), info)
        graph.inputs.append(v)
        scope[info.name] = v
    for init in proto.initializer:
        array = numpy_helper.to_array(init)
        found = scope.get(init.name)
        if found is not None and found.graph is graph:  # an initializer that is also a graph input
            v = found
        else:
            v = Value(init.name, types.from_onnx(init.data_type), array.shape, graph=graph)
            if init.name in infos:
                _apply_info(v, infos[init.name])
            scope[init.name] = v
        v.const_value = array
        v.is_parameter = True
        v._tensor_proto = onnx.TensorProto()
        v._tensor_proto.CopyFrom(init)  # written back as read
        graph.initializers[init.name] = v
    for node_proto in proto.node:
        inputs: list[Value | None] = []
        for name in node_proto.input:
            if not name:
                inputs.append(None)
            elif name in scope:
                inputs.append(scope[name])
            else:
                raise ValueError(f"node {node_proto.name!r} ({node_proto.op_type}) uses {name!r}, which is not defined before it")
        attributes = {a.name: attribute_value(a, opset_imports, scope) for a in node_proto.attribute}
        attr_types = {a.name: a.type for a in node_proto.attribute}
        node = Node(node_proto.domain, node_proto.op_type, inputs, attributes, attr_types, node_proto.name)
        node.overload = node_proto.overload
        node.doc_string = node_proto.doc_string
        node.metadata = {p.key: p.value for p in node_proto.metadata_props}
        payload = _constant_payload(node)
        for i, name in enumerate(node_proto.output):
            v = Value(name, None, None, producer=node, index=i, graph=graph)
            if name in infos:
                _apply_info(v, infos[name])
            v.const_value = payload
            node.outputs.append(v)
            if name:
                scope[name] = v
        graph.nodes.append(node)
    for info in proto.output:
        if info.name not in scope:
            raise ValueError(f"graph output {info.name!r} is not computed in graph {proto.name!r}")
        graph.outputs.append(scope[info.name])
    for info in proto.value_info:  # an entry for a name the graph does not define is kept as is
        known = scope.get(info.name)
        graph.value_info.append(known if known is not None else _apply_info(Value(info.name, None, graph=graph), info))
    return graph


def model_from_proto(model: onnx.ModelProto) -> Graph:
    """Read a ModelProto into a Graph; `graph.to_model()` gives the model back."""
    opsets = {o.domain: o.version for o in model.opset_import}
    graph = graph_from_proto(model.graph, opsets)
    graph.functions = list(model.functions)
    graph.metadata = {p.key: p.value for p in model.metadata_props}
    graph.ir_version = model.ir_version
    graph.producer_name = model.producer_name
    graph.producer_version = model.producer_version
    graph.model_domain = model.domain
    graph.model_version = model.model_version
    graph.model_doc_string = model.doc_string
    return graph
