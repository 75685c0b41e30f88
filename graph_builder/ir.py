"""A small in-memory ONNX IR: Value, Node, Graph, and conversion to and from protobuf.

A Value is either a tensor in a graph (it has a producer Node, or is a graph input or
initializer) or a tensor with a known payload (`const_value`). Values made by the eager
evaluator have a payload and no graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Union

import numpy as np
import onnx
from onnx import helper, numpy_helper

from graph_builder import types
from graph_builder.types import DType

Dim = Union[int, str, None]
Shape = tuple[Dim, ...]


class Value:
    """A tensor: its name, dtype, shape (dims are ints, symbolic names or None) and producer."""

    __slots__ = ("name", "dtype", "shape", "producer", "index", "const_value", "graph", "is_parameter",
                 "_type_proto", "_tensor_proto", "__weakref__")  # fmt: skip

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
        self.shape = shape
        self.producer = producer
        self.index = index
        self.const_value = const_value
        self.graph = graph
        self.is_parameter = False  # initializers that hold model weights are never folded away
        self._type_proto: onnx.TypeProto | None = None
        self._tensor_proto: onnx.TensorProto | None = None

    @property
    def rank(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    @property
    def is_static(self) -> bool:
        """True when every dimension is a known integer."""
        return self.shape is not None and all(isinstance(d, int) for d in self.shape)

    def numpy(self) -> np.ndarray:
        if self.const_value is None:
            raise ValueError(f"Value {self.name!r} has no known payload; it is computed in a graph")
        return self.const_value

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
            self._tensor_proto = tensor_proto(self.const_value, self.name)
        return self._tensor_proto

    def set_type(self, dtype: DType | None, shape: Shape | None) -> None:
        self.dtype = dtype
        self.shape = shape
        self._type_proto = None


class Node:
    """One operator call. `attributes` holds plain Python values (Graph for subgraphs)."""

    __slots__ = ("domain", "op_type", "inputs", "outputs", "attributes", "attr_types", "metadata", "name", "version")

    def __init__(
        self,
        domain: str,
        op_type: str,
        inputs: Sequence[Value | None],
        attributes: dict[str, Any],
        attr_types: dict[str, int],
        name: str,
        version: int | None = None,
    ):
        self.domain = domain
        self.op_type = op_type
        self.inputs = list(inputs)
        self.outputs: list[Value] = []
        self.attributes = attributes
        self.attr_types = attr_types  # AttributeProto.AttributeType per attribute name
        self.metadata: dict[str, str] = {}
        self.name = name
        self.version = version

    def __repr__(self) -> str:
        ins = ", ".join("None" if v is None else v.name for v in self.inputs)
        outs = ", ".join(v.name for v in self.outputs)
        return f"Node({self.op_type}({ins}) -> {outs}, {self.attributes})"

    def to_proto(self) -> onnx.NodeProto:
        proto = onnx.NodeProto()
        proto.op_type = self.op_type
        proto.domain = self.domain
        proto.name = self.name
        proto.input.extend("" if v is None else v.name for v in self.inputs)
        proto.output.extend(v.name for v in self.outputs)
        for key, value in self.attributes.items():
            proto.attribute.append(make_attribute(key, value, self.attr_types.get(key)))
        for key, value in self.metadata.items():
            entry = proto.metadata_props.add()
            entry.key = key
            entry.value = value
        return proto


class Graph:
    """A graph: inputs, outputs, nodes in topological order, initializers, opsets, functions."""

    def __init__(self, name: str = "main_graph", opset_imports: dict[str, int] | None = None):
        self.name = name
        self.inputs: list[Value] = []
        self.outputs: list[Value] = []
        self.nodes: list[Node] = []
        self.initializers: dict[str, Value] = {}
        self.opset_imports: dict[str, int] = dict(opset_imports or {"": 23})
        self.functions: list[onnx.FunctionProto] = []
        self.metadata: dict[str, str] = {}
        self.doc_string = ""
        self.value_info: list[Value] = []

    def to_graph_proto(self, initializers_as_constants: bool = False) -> onnx.GraphProto:
        graph = onnx.GraphProto()
        graph.name = self.name
        graph.doc_string = self.doc_string
        for value in self.inputs:
            graph.input.append(make_value_info(value))
        for value in self.outputs:
            graph.output.append(make_value_info(value))
        if initializers_as_constants:
            for value in self.initializers.values():
                graph.node.append(
                    helper.make_node("Constant", [], [value.name], value=tensor_proto(value.const_value, value.name))
                )
        else:
            graph.initializer.extend(tensor_proto(v.const_value, v.name) for v in self.initializers.values())
        graph.node.extend(node.to_proto() for node in self.nodes)
        graph.value_info.extend(make_value_info(v) for v in self.value_info)
        return graph

    def to_model(self, ir_version: int = 10, producer_name: str = "torchlib") -> onnx.ModelProto:
        model = onnx.ModelProto()
        model.ir_version = ir_version
        model.producer_name = producer_name
        model.graph.CopyFrom(self.to_graph_proto())
        for domain, version in sorted(self.opset_imports.items()):
            entry = model.opset_import.add()
            entry.domain = domain
            entry.version = version
        model.functions.extend(self.functions)
        for key, value in self.metadata.items():
            entry = model.metadata_props.add()
            entry.key = key
            entry.value = value
        return model


def make_type_proto(dtype: DType | None, shape: Shape | None) -> onnx.TypeProto:
    tp = onnx.TypeProto()
    tensor = tp.tensor_type
    if dtype is not None:
        tensor.elem_type = dtype.onnx
    if shape is not None:
        shape_proto = tensor.shape
        shape_proto.SetInParent()
        for dim in shape:
            d = shape_proto.dim.add()
            if isinstance(dim, int):
                d.dim_value = dim
            elif isinstance(dim, str):
                d.dim_param = dim
    return tp


def make_value_info(value: Value) -> onnx.ValueInfoProto:
    info = onnx.ValueInfoProto()
    info.name = value.name
    info.type.CopyFrom(value.type_proto())
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


def tensor_proto(array: np.ndarray | None, name: str = "") -> onnx.TensorProto:
    assert array is not None
    return numpy_helper.from_array(np.asarray(array), name)


def make_attribute(key: str, value: Any, attr_type: int | None) -> onnx.AttributeProto:
    if isinstance(value, Graph):
        value = value.to_graph_proto(initializers_as_constants=True)
    elif isinstance(value, np.ndarray):
        value = tensor_proto(value)
    elif isinstance(value, (list, tuple)) and value and isinstance(value[0], Graph):
        value = [g.to_graph_proto(initializers_as_constants=True) for g in value]
    return helper.make_attribute(key, value, attr_type=attr_type)


def attribute_value(attr: onnx.AttributeProto, opset_imports: dict[str, int]) -> Any:
    """Decode an AttributeProto into the plain Python value the IR stores."""
    kind = attr.type
    A = onnx.AttributeProto
    if kind == A.GRAPH:
        return graph_from_proto(attr.g, opset_imports)
    if kind == A.GRAPHS:
        return [graph_from_proto(g, opset_imports) for g in attr.graphs]
    if kind == A.TENSOR:
        return numpy_helper.to_array(attr.t)
    value = helper.get_attribute_value(attr)
    if kind == A.STRING:
        return value.decode()
    if kind == A.STRINGS:
        return [v.decode() for v in value]
    if kind in (A.INTS, A.FLOATS):
        return list(value)
    return value


def graph_from_proto(proto: onnx.GraphProto, opset_imports: dict[str, int], outer: dict[str, Value] | None = None) -> Graph:
    graph = Graph(proto.name, opset_imports)
    graph.doc_string = proto.doc_string
    scope: dict[str, Value] = dict(outer or {})
    for info in proto.input:
        dtype, shape = type_from_proto(info.type)
        v = Value(info.name, dtype, shape, graph=graph)
        graph.inputs.append(v)
        scope[info.name] = v
    for init in proto.initializer:
        array = numpy_helper.to_array(init)
        v = Value(init.name, types.from_onnx(init.data_type), array.shape, const_value=array, graph=graph)
        v.is_parameter = True
        graph.initializers[init.name] = v
        scope[init.name] = v
    known_types = {info.name: type_from_proto(info.type) for info in list(proto.value_info) + list(proto.output)}
    for node_proto in proto.node:
        inputs = [scope[name] if name else None for name in node_proto.input]
        attributes = {a.name: attribute_value(a, opset_imports) for a in node_proto.attribute}
        attr_types = {a.name: a.type for a in node_proto.attribute}
        node = Node(node_proto.domain, node_proto.op_type, inputs, attributes, attr_types, node_proto.name)
        node.metadata = {p.key: p.value for p in node_proto.metadata_props}
        for i, name in enumerate(node_proto.output):
            dtype, shape = known_types.get(name, (None, None))
            v = Value(name, dtype, shape, producer=node, index=i, graph=graph)
            node.outputs.append(v)
            scope[name] = v
        graph.nodes.append(node)
    graph.outputs = [scope[info.name] for info in proto.output]
    graph.value_info = [scope[info.name] for info in proto.value_info if info.name in scope]
    return graph


def model_from_proto(model: onnx.ModelProto) -> Graph:
    """Read a ModelProto into a Graph; `graph.to_model()` gives the model back."""
    opsets = {o.domain: o.version for o in model.opset_import}
    graph = graph_from_proto(model.graph, opsets)
    graph.functions = list(model.functions)
    graph.metadata = {p.key: p.value for p in model.metadata_props}
    return graph
