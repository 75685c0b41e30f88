"""GraphBuilder: the tracing evaluator. Inside `with builder:` every op call becomes a node.

    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, ["batch", 4])
    with g:
        y = op.Relu(op.MatMul(x, g.initializer("w", w)))
    g.output(y, "y")
    model = g.to_model()

Every Value made while tracing has a dtype and, where ONNX inference can tell, a shape.
Ops whose inputs are all small constants are folded at trace time; equal constants are shared.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import defs, shape_inference

from graph_builder import ir, types
from graph_builder.fast_infer import RULES
from graph_builder.evaluator import EAGER, pop_evaluator, push_evaluator
from graph_builder.ir import Graph, Node, Shape, Value
from graph_builder.opset import DEFAULT_OPSET, OpError, OpSignature, as_array, numpy_to_torch
from graph_builder.types import DType

FOLD_LIMIT = 1024  # fold an op when its constant inputs and outputs have at most this many elements

class _Root:
    """State shared by a builder and its subgraph builders: names and the metadata scope."""

    def __init__(self, opset: int):
        self.opset = opset
        self.names: set[str] = set()
        self.counters: dict[str, int] = {}
        self.metadata: dict[str, str] = {}

    def unique(self, base: str) -> str:
        if base not in self.names:
            self.names.add(base)
            return base
        n = self.counters.get(base, 0)
        while True:
            n += 1
            name = f"{base}_{n}"
            if name not in self.names:
                self.counters[base] = n
                self.names.add(name)
                return name


class GraphBuilder:
    """Builds one ONNX graph by tracing op calls. Subgraph builders (`subgraph()`) share names
    with their parent and may use the parent's values."""

    def __init__(
        self,
        opset: int = DEFAULT_OPSET,
        name: str = "main_graph",
        parent: GraphBuilder | None = None,
        opset_imports: dict[str, int] | None = None,
    ):
        self.parent = parent
        self._root: _Root = parent._root if parent is not None else _Root(opset)
        self.opset = self._root.opset
        imports = {"": self.opset}
        imports.update(opset_imports or {})
        self.graph = Graph(name, imports)
        self._constants: dict[Any, Value] = {}
        self._schema_ok: dict[tuple[str, str, int], bool] = {}

    # -- graph inputs, weights, constants ------------------------------------------------------
    def input(self, name: str, dtype: DType, shape: Sequence[ir.Dim] | None) -> Value:
        value = Value(self._root.unique(name), dtype, None if shape is None else tuple(shape), graph=self.graph)
        self.graph.inputs.append(value)
        return value

    def initializer(self, name: str, array: Any) -> Value:
        """A named weight: kept as an initializer, never folded away."""
        array = as_array(array)
        value = Value(self._root.unique(name), types.from_numpy(array.dtype), array.shape, const_value=array, graph=self.graph)
        value.is_parameter = True
        self.graph.initializers[value.name] = value
        return value

    def constant(self, value: Any, dtype: DType | None = None) -> Value:
        """A constant Value; equal constants (same dtype, shape and bytes) are one Value."""
        array = as_array(value)
        if dtype is not None and array.dtype != dtype.numpy:
            array = array.astype(dtype.numpy)
        key = (array.dtype.str, array.shape, array.tobytes()) if array.dtype != np.object_ else None
        if key is not None and key in self._constants:
            return self._constants[key]
        name = self._root.unique("const" if array.ndim else f"scalar_{types.from_numpy(array.dtype).name.lower()}")
        v = Value(name, types.from_numpy(array.dtype), array.shape, const_value=array, graph=self.graph)
        if key is not None:
            self._constants[key] = v
        self.graph.initializers[name] = v
        return v

    def output(self, value: Value, name: str | None = None) -> Value:
        """Mark a value as a graph output, under `name` when given."""
        if not isinstance(value, Value):
            with self:
                value = self._as_value(value)
        if value.graph is not self.graph:
            value = self._as_value(value)
        if name is not None and value.name != name:
            renamable = (
                value.producer is not None
                and value.graph is self.graph
                and value not in self.graph.outputs
                and name not in self._root.names
            )
            if renamable:
                self._root.names.add(name)
                value.name = name
            else:
                from graph_builder.opset import opset

                with self:
                    value = opset(self.opset).Identity(value)
                self._root.names.add(name)
                value.name = name
        elif value.graph is not self.graph or value.producer is None and value in self.graph.inputs:
            with self:
                from graph_builder.opset import opset

                value = opset(self.opset).Identity(value)
        self.graph.outputs.append(value)
        return value

    # -- nesting --------------------------------------------------------------------------------
    def __enter__(self) -> GraphBuilder:
        push_evaluator(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        pop_evaluator(self)

    def subgraph(self, name: str = "subgraph") -> GraphBuilder:
        """A builder for the body of If, Loop or Scan; pass `sub.graph` as the attribute."""
        return GraphBuilder(name=self._root.unique(name), parent=self)

    @contextlib.contextmanager
    def metadata(self, **props: str) -> Iterator[None]:
        """Nodes created inside carry these `metadata_props` (e.g. the ATen op and source line)."""
        saved = self._root.metadata
        self._root.metadata = {**saved, **props}
        try:
            yield
        finally:
            self._root.metadata = saved

    def _owns(self, value: Value) -> bool:
        b: GraphBuilder | None = self
        while b is not None:
            if value.graph is b.graph:
                return True
            b = b.parent
        return False

    def _as_value(self, x: Any) -> Value:
        if isinstance(x, Value):
            if x.graph is None:
                return self.constant(x.numpy())
            if self._owns(x):
                return x
            raise OpError(f"Value {x.name!r} belongs to another graph than the one being built")
        return self.constant(as_array(x))

    # -- the tracing evaluator ------------------------------------------------------------------
    def eval_op(self, sig: OpSignature, inputs: list[Any], attrs: dict[str, Any], n_outputs: int) -> list[Value]:
        if sig.domain == "" and sig.opset != self.opset:
            self._check_opset(sig)
        values = [None if x is None else self._as_value(x) for x in inputs]
        if not sig.nondeterministic and self._foldable(values, attrs):
            arrays = [None if v is None else v.const_value for v in values]
            results = EAGER.run_arrays(sig, arrays, attrs, n_outputs)
            if all(r.size <= FOLD_LIMIT for r in results):
                return [self.constant(r) for r in results]
        node = Node(sig.domain, sig.name, values, attrs, sig.attr_types, self._root.unique(sig.name))
        if self._root.metadata:
            node.metadata = dict(self._root.metadata)
        node.outputs = [
            Value(self._root.unique(f"{sig.name.lower()}"), None, None, node, i, graph=self.graph) for i in range(n_outputs)
        ]
        self._infer(sig, node)
        self.graph.nodes.append(node)
        if sig.domain and sig.domain not in self.graph.opset_imports:
            self.graph.opset_imports[sig.domain] = sig.opset
        return node.outputs

    def _check_opset(self, sig: OpSignature) -> None:
        key = (sig.domain, sig.name, sig.since_version)
        ok = self._schema_ok.get(key)
        if ok is None:
            try:
                ok = defs.get_schema(sig.name, self.opset, sig.domain).since_version == sig.since_version
            except defs.SchemaError:
                ok = False
            self._schema_ok[key] = ok
        if not ok:
            raise OpError(
                f"op.{sig.name} as defined in opset {sig.since_version} is not the {sig.name} of opset {self.opset}, "
                f"which this graph targets; use graph_builder.opset({self.opset}).{sig.name} or a newer opset"
            )

    @staticmethod
    def _foldable(values: list[Value | None], attrs: dict[str, Any]) -> bool:
        if any(isinstance(a, Graph) for a in attrs.values()):
            return False
        for v in values:
            if v is None:
                continue
            if v.const_value is None or v.is_parameter or v.const_value.size > FOLD_LIMIT:
                return False
        return True

    def _infer(self, sig: OpSignature, node: Node) -> None:
        name = sig.name
        rule = RULES.get(name) if sig.domain == "" else None
        if rule is not None and all(v is not None and v.dtype is not None for v in node.inputs):
            result = rule(node.inputs, node.attributes)
            if result is not None:
                for out, (dtype, shape) in zip(node.outputs, result):
                    out.set_type(dtype, shape)
                return
        if name in ("If", "Loop", "Scan") and sig.domain == "":
            self._infer_control_flow(node)
        else:
            self._infer_onnx(sig, node)
        self._fill_dtypes_from_constraints(sig, node)

    def _infer_onnx(self, sig: OpSignature, node: Node) -> None:
        proto = onnx.NodeProto()
        proto.op_type = sig.name
        proto.domain = sig.domain
        input_types: dict[str, onnx.TypeProto] = {}
        input_data: dict[str, onnx.TensorProto] = {}
        for i, v in enumerate(node.inputs):
            if v is None:
                proto.input.append("")
                continue
            key = f"i{i}"
            proto.input.append(key)
            input_types[key] = v.type_proto()
            if v.const_value is not None and v.const_value.size <= FOLD_LIMIT:
                input_data[key] = v.tensor_proto()
        proto.output.extend(f"o{i}" for i in range(len(node.outputs)))
        for key, value in node.attributes.items():
            proto.attribute.append(ir.make_attribute(key, value, node.attr_types.get(key)))
        try:
            inferred = shape_inference.infer_node_outputs(sig.schema, proto, input_types, input_data)
        except Exception as e:
            described = ", ".join("None" if v is None else f"{v.dtype}{list(v.shape) if v.shape is not None else '[?]'}" for v in node.inputs)
            raise OpError(f"op.{sig.name}({described}) with attributes {node.attributes} is invalid: {e}") from None
        for i, out in enumerate(node.outputs):
            tp = inferred.get(f"o{i}")
            if tp is not None:
                out.set_type(*ir.type_from_proto(tp))

    def _infer_control_flow(self, node: Node) -> None:
        if node.op_type == "If":
            branch = node.attributes["then_branch"]
            other = node.attributes["else_branch"]
            for out, a, b in zip(node.outputs, branch.outputs, other.outputs):
                shape = a.shape if a.shape == b.shape else (None if a.shape is None or b.shape is None or len(a.shape) != len(b.shape) else tuple(x if x == y else None for x, y in zip(a.shape, b.shape)))
                out.set_type(a.dtype or b.dtype, shape)
        elif node.op_type == "Loop":
            body = node.attributes["body"]
            n_carried = len(node.inputs) - 2
            for i, out in enumerate(node.outputs):
                src = body.outputs[1 + i]
                if i < n_carried:
                    out.set_type(src.dtype, src.shape)
                else:
                    out.set_type(src.dtype, None if src.shape is None else (None, *src.shape))
        else:  # Scan
            body = node.attributes["body"]
            n_state = len(node.inputs) - int(node.attributes.get("num_scan_inputs", 0))
            for i, out in enumerate(node.outputs):
                src = body.outputs[i]
                out.set_type(src.dtype, src.shape if i < n_state else None)

    @staticmethod
    def _fill_dtypes_from_constraints(sig: OpSignature, node: Node) -> None:
        bound: dict[str, DType] = {}
        for i, v in enumerate(node.inputs):
            if v is not None and v.dtype is not None:
                bound.setdefault(sig.param_for_input(i).type_str, v.dtype)
        for i, out in enumerate(node.outputs):
            if out.dtype is None:
                p = sig.outputs[min(i, len(sig.outputs) - 1)]
                dtype = bound.get(p.type_str) or types.from_type_str(p.type_str)
                allowed = sig.allowed.get(p.type_str)
                if dtype is None and allowed is not None and len(allowed) == 1:
                    (dtype,) = allowed
                if dtype is None:
                    raise OpError(f"op.{sig.name}: cannot tell the dtype of output {i}; give the inputs dtypes")
                out.set_type(dtype, out.shape)

    # -- emitting -------------------------------------------------------------------------------
    def _live(self, outputs: Sequence[Value]) -> tuple[list[Node], list[Value]]:
        """Nodes that the outputs depend on, in order, and the initializers to keep (weights,
        and the constants that live nodes use)."""
        live: set[int] = {id(v) for v in outputs}
        nodes: list[Node] = []
        for node in reversed(self.graph.nodes):
            if any(id(o) in live for o in node.outputs):
                nodes.append(node)
                for v in node.inputs:
                    if v is not None:
                        live.add(id(v))
                for attr in node.attributes.values():
                    for sub in attr if isinstance(attr, list) else [attr]:
                        if isinstance(sub, Graph):
                            live.update(_captured(sub))
        nodes.reverse()
        inits = [v for v in self.graph.initializers.values() if v.is_parameter or id(v) in live]
        return nodes, inits

    def _graph_for(self, outputs: Sequence[Value]) -> Graph:
        nodes, inits = self._live(outputs)
        g = Graph(self.graph.name, self.graph.opset_imports)
        g.inputs = self.graph.inputs
        g.outputs = list(outputs)
        g.nodes = nodes
        g.initializers = {v.name: v for v in inits}
        g.functions = self.graph.functions
        g.metadata = self.graph.metadata
        g.doc_string = self.graph.doc_string
        return g

    def finalize_subgraph(self) -> Graph:
        """The graph of a subgraph builder with dead nodes dropped and its constants included."""
        g = self._graph_for(self.graph.outputs)
        self.graph.nodes = g.nodes
        self.graph.initializers = g.initializers
        return self.graph

    def to_model(self, check: bool = True, ir_version: int = 10) -> onnx.ModelProto:
        """The ModelProto of the graph (nodes the outputs do not need are dropped), checked
        with `onnx.checker.check_model(full_check=True)` unless check=False."""
        model = self._graph_for(self.graph.outputs).to_model(ir_version=ir_version)
        if check:
            onnx.checker.check_model(model, full_check=True)
        return model

    def run(self, feeds: dict[str, Any], outputs: Sequence[Value] | None = None) -> list[Any]:
        """Run the graph built so far in onnxruntime and return `outputs` (default: the graph
        outputs), any intermediate Value included. Feeds are numpy arrays or torch tensors,
        keyed by input name; results come back as the kind fed (torch in, torch out)."""
        wanted = list(outputs) if outputs is not None else self.graph.outputs
        model = self._graph_for(wanted).to_model()
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        torch_in = any(type(x).__module__ == "torch" for x in feeds.values())
        arrays = {k: as_array(x) for k, x in feeds.items()}
        results = session.run([v.name for v in wanted], arrays)
        return [numpy_to_torch(r) for r in results] if torch_in else results


def _captured(graph: Graph) -> set[int]:
    ids: set[int] = set()
    for node in graph.nodes:
        ids.update(id(v) for v in node.inputs if v is not None)
        for attr in node.attributes.values():
            for sub in attr if isinstance(attr, list) else [attr]:
                if isinstance(sub, Graph):
                    ids |= _captured(sub)
    ids.update(id(v) for v in graph.outputs)
    return ids
