"""Walks an ONNX graph and builds a torch.fx GraphModule, one converter call per ONNX node.

Values are FX nodes. Initializers become `nn.Parameter`s (floating point) or buffers (integer,
bool) of the module, under names derived from their ONNX names; Constant nodes become buffers.
Subgraphs (If, Loop, Scan bodies) become GraphModules of their own, registered as submodules,
taking the outer-scope values they read as extra inputs.
"""

from __future__ import annotations

import keyword
import mmap
import os
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import torch
from onnx import numpy_helper

from torchlib.importer import shape_values
from torchlib.importer.registry import lookup

ONNX_TO_TORCH: dict[int, torch.dtype] = {
    onnx.TensorProto.FLOAT: torch.float32, onnx.TensorProto.UINT8: torch.uint8, onnx.TensorProto.INT8: torch.int8,
    onnx.TensorProto.UINT16: torch.uint16, onnx.TensorProto.INT16: torch.int16, onnx.TensorProto.INT32: torch.int32,
    onnx.TensorProto.INT64: torch.int64, onnx.TensorProto.BOOL: torch.bool, onnx.TensorProto.FLOAT16: torch.float16,
    onnx.TensorProto.DOUBLE: torch.float64, onnx.TensorProto.UINT32: torch.uint32,
    onnx.TensorProto.UINT64: torch.uint64, onnx.TensorProto.COMPLEX64: torch.complex64,
    onnx.TensorProto.COMPLEX128: torch.complex128, onnx.TensorProto.BFLOAT16: torch.bfloat16,
    onnx.TensorProto.FLOAT8E4M3FN: torch.float8_e4m3fn, onnx.TensorProto.FLOAT8E4M3FNUZ: torch.float8_e4m3fnuz,
    onnx.TensorProto.FLOAT8E5M2: torch.float8_e5m2, onnx.TensorProto.FLOAT8E5M2FNUZ: torch.float8_e5m2fnuz,
}  # fmt: skip


class OnnxImportError(ValueError):
    """The model holds something the importer cannot turn into torch (named in the message)."""


def torch_dtype(onnx_type: int, where: str) -> torch.dtype:
    if onnx_type not in ONNX_TO_TORCH:
        name = onnx.TensorProto.DataType.Name(onnx_type)
        raise OnnxImportError(f"{where}: ONNX element type {name} has no torch tensor type; it cannot be imported")
    return ONNX_TO_TORCH[onnx_type]


def to_tensor(proto: onnx.TensorProto, base_dir: str | None, where: str) -> torch.Tensor:
    """An initializer or Constant value as a torch tensor (external data read from `base_dir`)."""
    torch_dtype(proto.data_type, where)
    if proto.data_location == onnx.TensorProto.EXTERNAL:
        return _external(proto, base_dir, where)
    array = numpy_helper.to_array(proto)
    if proto.data_type == onnx.TensorProto.BFLOAT16 or array.dtype.kind == "V" or str(array.dtype).startswith("float8"):
        raw = numpy_helper.to_array(proto).view(np.uint8) if array.dtype.itemsize else array
        return torch.from_numpy(np.ascontiguousarray(raw)).view(ONNX_TO_TORCH[proto.data_type]).reshape(array.shape)
    return torch.from_numpy(np.array(array))


_MAPPED: dict[str, mmap.mmap] = {}


def _map_private(path: str) -> mmap.mmap:
    """The file mapped copy-on-write (one mapping per file): nothing is read until used, and a
    parameter updated in place (training) changes private pages, never the file."""
    if path not in _MAPPED:
        with open(path, "rb") as f:
            _MAPPED[path] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    return _MAPPED[path]


def _external(proto: onnx.TensorProto, base_dir: str | None, where: str) -> torch.Tensor:
    info = {e.key: e.value for e in proto.external_data}
    if base_dir is None:
        raise OnnxImportError(f"{where}: tensor {proto.name!r} is stored as external data; import the model from its "
                              "file path (not a ModelProto) so that the data file can be found")  # fmt: skip
    path = os.path.join(base_dir, info["location"])
    if not os.path.exists(path):
        raise OnnxImportError(f"{where}: its external data file {path!r} does not exist")
    dtype = ONNX_TO_TORCH[proto.data_type]
    count = int(np.prod(proto.dims, dtype=np.int64))
    offset = int(info.get("offset", 0))
    length = int(info.get("length", count * dtype.itemsize))
    if count == 0:
        return torch.zeros(tuple(proto.dims), dtype=dtype)
    mapping = _map_private(path)
    if offset + length > len(mapping) or length != count * dtype.itemsize:
        raise OnnxImportError(f"{where}: external data [{offset}, {offset + length}) of {path!r} does not hold "
                              f"{count} elements of {dtype}")  # fmt: skip
    tensor = torch.frombuffer(mapping, dtype=torch.uint8, count=length, offset=offset)
    return tensor.view(dtype).reshape(tuple(proto.dims))


def attribute_value(attr: onnx.AttributeProto) -> Any:
    value = onnx.helper.get_attribute_value(attr)
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list) and value and isinstance(value[0], bytes):
        return [v.decode() for v in value]
    return value


def _sanitize(name: str) -> str:
    name = re.sub(r"\W", "_", name) or "_"
    if name[0].isdigit() or keyword.iskeyword(name):
        name = "_" + name
    return name


class Ctx:
    """What a converter sees of its node: attributes, constant inputs, and the graph to add to."""

    def __init__(self, builder: GraphBuilder, node: onnx.NodeProto, opset: int) -> None:
        self.builder = builder
        self.node = node
        self.opset = opset
        self.attrs = {a.name: a for a in node.attribute}
        self.created: list[torch.fx.Node] = []

    @property
    def where(self) -> str:
        return f"node {self.node.name!r} ({self.node.domain or 'ai.onnx'}:{self.node.op_type}, opset {self.opset})"

    def attr(self, name: str, default: Any = None) -> Any:
        if name not in self.attrs:
            return default
        return attribute_value(self.attrs[name])

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    def const(self, index: int) -> np.ndarray | None:
        """The value of input `index` when it is known at import time (initializer, Constant)."""
        if index >= len(self.node.input) or not self.node.input[index]:
            return None
        return self.builder.consts.get(self.node.input[index])

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where}: {message}")

    def call(self, target: Any, *args: Any, **kwargs: Any) -> torch.fx.Node:
        node = self.builder.graph.call_function(target, args, kwargs)
        self.created.append(node)
        return node

    def call_multi(self, target: Any, count: int, *args: Any, **kwargs: Any) -> tuple[torch.fx.Node, ...]:
        """A call returning a tuple of `count` tensors: the call and one getitem per output."""
        whole = self.call(target, *args, **kwargs)
        return tuple(self.call(_getitem, whole, i) for i in range(count))

    def subgraph(self, name: str, extra_inputs: Sequence[str] = ()) -> tuple[torch.fx.Node, list[torch.fx.Node]]:
        """Attribute `name`'s graph as a submodule: (its get_attr node, the outer values it reads,
        passed after its own inputs)."""
        graph = self.attrs[name].g
        module, free = self.builder.importer.import_subgraph(graph, self.builder, f"{self.node.name or self.node.op_type}_{name}")
        qualname = self.builder.add_submodule(f"{self.node.name or self.node.op_type}_{name}", module)
        get = self.builder.graph.get_attr(qualname)
        self.created.append(get)
        return get, [self.builder.value(n, self.where) for n in free]


def _getitem(values: Sequence[torch.Tensor], index: int) -> torch.Tensor:
    return values[index]


class GraphBuilder:
    """One FX graph under construction (the main graph or a subgraph) and the module holding its
    parameters and buffers."""

    def __init__(self, importer: Importer, parent: GraphBuilder | None) -> None:
        self.importer = importer
        self.parent = parent
        self.graph = torch.fx.Graph()
        self.module = torch.nn.Module()
        self.values: dict[str, torch.fx.Node] = {}
        self.consts: dict[str, np.ndarray] = {}
        self.used: set[str] = set()
        # ONNX values carried as Python ints / lists at run time (shape_values.py): (node, rank)
        self.shape_values: dict[str, tuple[torch.fx.Node, int]] = {}

    def value(self, name: str, where: str) -> torch.fx.Node:
        if name not in self.values and name in self.shape_values:
            node = self.graph.call_function(shape_values.as_tensor, (self.shape_values[name][0],))
            node.meta["onnx_name"] = name
            node.meta["onnx_op_type"] = "(shape value as tensor)"
            self.values[name] = node
        if name not in self.values:
            raise OnnxImportError(f"{where}: reads {name!r}, which no node, input or initializer of its graph defines")
        return self.values[name]

    def _unique(self, name: str) -> str:
        base, i = name, 1
        while name in self.used:
            name, i = f"{base}_{i}", i + 1
        self.used.add(name)
        return name

    def add_tensor(self, onnx_name: str, tensor: torch.Tensor, trainable: bool) -> torch.fx.Node:
        """A parameter (trainable floating point) or buffer named after `onnx_name`."""
        parts = [re.sub(r"\W", "_", p) for p in onnx_name.split(".") if p]
        owner: torch.nn.Module = self.module
        qual = ".".join(parts)
        if len(parts) > 1 and qual not in self.used and all(not hasattr(torch.nn.Module, p) for p in parts):
            try:
                for p in parts[:-1]:
                    child = owner._modules.get(p)
                    if child is None:
                        if hasattr(owner, p):
                            raise KeyError(p)
                        child = torch.nn.Module()
                        owner.add_module(p, child)
                    owner = child
                leaf = parts[-1]
                if hasattr(owner, leaf):
                    raise KeyError(leaf)
            except KeyError:
                owner, qual, leaf = self.module, self._unique("_".join(parts)), "_".join(parts)
                leaf = qual
            else:
                self.used.add(qual)
        else:
            qual = leaf = self._unique(_sanitize(onnx_name))
            if hasattr(torch.nn.Module, leaf) or leaf in self.module._modules:
                qual = leaf = self._unique("_" + leaf)
        if trainable and (tensor.is_floating_point() or tensor.is_complex()):
            owner.register_parameter(leaf, torch.nn.Parameter(tensor, requires_grad=True))
        else:
            owner.register_buffer(leaf, tensor)
        node = self.graph.get_attr(qual)
        node.meta["onnx_name"] = onnx_name
        return node

    def add_submodule(self, name: str, module: torch.nn.Module) -> str:
        qual = self._unique(_sanitize(name))
        self.module.add_module(qual, module)
        return qual


class Importer:
    """Converts one ModelProto; `import_model` gives the GraphModule."""

    def __init__(self, model: onnx.ModelProto, base_dir: str | None) -> None:
        self.model = model
        self.base_dir = base_dir
        self.opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
        self.functions = {(f.domain, f.name): f for f in model.functions}
        self._types: dict[str, onnx.TypeProto] | None = None

    def types(self) -> dict[str, onnx.TypeProto]:
        """Every value's type as onnx's shape inference gives it (computed on first need)."""
        if self._types is None:
            try:
                inferred = onnx.shape_inference.infer_shapes(self.model)
            except Exception:  # inference is a help here, not a requirement
                inferred = self.model
            self._types = {}
            _collect_types(inferred.graph, self._types)
        return self._types

    def _context_function(self, ctx: Ctx, schema: Any) -> onnx.FunctionProto:
        """The ONNX function body of an op whose body depends on its input types."""
        types = self.types()
        inputs = []
        for n in ctx.node.input:
            if n and n not in types:
                raise ctx.error(f"no converter, and its ONNX function body needs the type of input {n!r}, which "
                                "shape inference did not give")
            inputs.append(types[n] if n else onnx.TypeProto())
        body = onnx.FunctionProto()
        body.ParseFromString(schema.get_context_dependent_function(
            ctx.node.SerializeToString(), [t.SerializeToString() for t in inputs]))
        return body

    def import_model(self) -> torch.fx.GraphModule:
        graph = self.model.graph
        builder = GraphBuilder(self, None)
        initialized = {t.name for t in graph.initializer}
        for value_info in graph.input:
            if value_info.name in initialized:
                continue
            _check_type(value_info, f"graph input {value_info.name!r}")
            builder.values[value_info.name] = builder.graph.placeholder(_sanitize(value_info.name) or "input")
            builder.values[value_info.name].meta["onnx_name"] = value_info.name
        self._fill(builder, graph, trainable=True)
        for value_info in graph.output:
            _check_type(value_info, f"graph output {value_info.name!r}")
        outputs = [builder.value(o.name, f"graph output {o.name!r}") for o in graph.output]
        builder.graph.output(outputs[0] if len(outputs) == 1 else tuple(outputs))
        builder.graph.eliminate_dead_code()
        gm = torch.fx.GraphModule(builder.module, builder.graph, class_name="ImportedOnnx")
        gm.meta["onnx_input_names"] = [i.name for i in graph.input if i.name not in initialized]
        gm.meta["onnx_output_names"] = [o.name for o in graph.output]
        return gm

    def import_subgraph(self, graph: onnx.GraphProto, parent: GraphBuilder, name: str) -> tuple[torch.fx.GraphModule, list[str]]:
        """A subgraph as a GraphModule taking its own inputs, then the outer values it reads."""
        builder = GraphBuilder(self, parent)
        for value_info in graph.input:
            builder.values[value_info.name] = builder.graph.placeholder(_sanitize(value_info.name))
        free = [n for n in free_names(graph) if n not in {i.name for i in graph.input}]
        for n in free:
            builder.values[n] = builder.graph.placeholder(self._unique_placeholder(builder, n))
            if n in parent.consts:
                builder.consts[n] = parent.consts[n]
        self._fill(builder, graph, trainable=True)
        outputs = [builder.value(o.name, f"subgraph {graph.name!r} output {o.name!r}") for o in graph.output]
        builder.graph.output(tuple(outputs))
        builder.graph.eliminate_dead_code()
        return torch.fx.GraphModule(builder.module, builder.graph, class_name=_sanitize(name)), free

    @staticmethod
    def _unique_placeholder(builder: GraphBuilder, name: str) -> str:
        return "outer_" + _sanitize(name)

    def _fill(self, builder: GraphBuilder, graph: onnx.GraphProto, trainable: bool) -> None:
        for init in graph.initializer:
            where = f"initializer {init.name!r}"
            tensor = to_tensor(init, self.base_dir, where)
            builder.values[init.name] = builder.add_tensor(init.name, tensor, trainable)
            if tensor.numel() <= 1024 and tensor.dtype in (torch.int64, torch.int32, torch.bool):
                builder.consts[init.name] = tensor.numpy()
        for node in graph.node:
            self.convert_node(builder, node)

    def convert_node(self, builder: GraphBuilder, node: onnx.NodeProto, opset: int | None = None) -> None:
        domain = "" if node.domain == "ai.onnx" else node.domain
        opset = opset if opset is not None else self.opsets.get(domain, 1)
        ctx = Ctx(builder, node, opset)
        if domain == "" and shape_value_rule(ctx):
            return
        converter = lookup(domain, node.op_type, opset)
        if converter is None:
            if (domain, node.op_type) in self.functions:
                expand_function(self, builder, node, self.functions[(domain, node.op_type)], None)
                return
            schema = _schema(node.op_type, opset, domain)
            if schema is not None and schema.has_function:
                expand_function(self, builder, node, schema.function_body, schema)
                return
            if schema is not None and schema.has_context_dependent_function:
                expand_function(self, builder, node, self._context_function(ctx, schema), schema)
                return
            raise ctx.error("no converter for this op (and no ONNX function body to expand)")
        inputs = [builder.value(n, ctx.where) if n else None for n in node.input]
        result = converter(ctx, *inputs)
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        for n in ctx.created:
            n.meta.setdefault("onnx_name", node.name)
            n.meta.setdefault("onnx_op_type", node.op_type)
        for name, out in zip(node.output, outputs):
            if name:
                builder.values[name] = out
        if len(outputs) < len([o for o in node.output if o]):
            raise ctx.error(f"the converter gave {len(outputs)} outputs for {len(node.output)}")


SHAPE_OPS = {"Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Cast", "Identity", "Reshape"} | set(shape_values.ARITH)


def shape_value_rule(ctx: Ctx) -> bool:
    """Converts the node on shape values (Python ints) when it is Shape, or a shape op whose inputs
    are all shape values or integer constants (at least one a shape value); False otherwise."""
    builder, node, op = ctx.builder, ctx.node, ctx.node.op_type
    if op == "Shape":
        x = builder.value(node.input[0], ctx.where)
        sv = ctx.call(shape_values.shape_of, x, ctx.attr("start", 0), ctx.attr("end"))
        builder.shape_values[node.output[0]] = (sv, 1)
        return True
    if op not in SHAPE_OPS:
        return False
    # a Concat of integer constants alone is a shape too (the ONNX function body of a 3-D
    # Attention reshapes its output by Concat([0], [0], [-1])): computed as a tensor, torch.export
    # would read its values as data
    constant_shape = op == "Concat" and len(node.input) > 0 and all(n in builder.consts for n in node.input)
    if not constant_shape and not any(n in builder.shape_values for n in node.input):
        return False
    args: list[Any] = []
    ranks: list[int] = []
    for n in node.input:
        if n in builder.shape_values:
            args.append(builder.shape_values[n][0])
            ranks.append(builder.shape_values[n][1])
        elif n and n in builder.consts and builder.consts[n].dtype.kind in "iub" and builder.consts[n].ndim <= 1:
            args.append(shape_values.const_value(builder.consts[n]))
            ranks.append(builder.consts[n].ndim)
        else:
            return False
    first_is_shape = node.input[0] in builder.shape_values
    out: tuple[torch.fx.Node, int] | None = None
    if op in ("Identity",) or op == "Cast" and ctx.attr("to") in (onnx.TensorProto.INT64, onnx.TensorProto.INT32,
                                                                 onnx.TensorProto.BOOL):
        out = (args[0], ranks[0])
    elif op in shape_values.ARITH and not (op == "Mod" and ctx.attr("fmod", 0)):
        out = (ctx.call(shape_values.arith, op, *args), max(ranks))
    elif op == "Concat" and all(r == 1 for r in ranks):
        out = (ctx.call(shape_values.concat, *args), 1)
    elif op == "Gather" and first_is_shape and ranks[0] == 1 and ctx.attr("axis", 0) in (0, -1) \
            and node.input[1] not in builder.shape_values:
        index = args[1] if isinstance(args[1], int) else tuple(args[1])
        out = (ctx.call(shape_values.gather, args[0], index, ranks[1] == 0), ranks[1])
    elif op == "Reshape" and first_is_shape and len(args) > 1 and args[1] in ([1], [-1]):
        out = (ctx.call(shape_values.unsqueeze, args[0]) if ranks[0] == 0 else args[0], 1)
    elif op == "Unsqueeze" and ranks[0] == 0:
        axes = args[1] if len(args) > 1 else list(ctx.attr("axes", []))
        if axes in ([0], [-1], 0, -1):
            out = (ctx.call(shape_values.unsqueeze, args[0]), 1)
    elif op == "Squeeze" and ranks[0] == 1:
        axes = args[1] if len(args) > 1 else list(ctx.attr("axes", []))
        if axes in ([0], [-1], 0, -1):
            out = (ctx.call(shape_values.squeeze, args[0]), 0)
    elif op == "Slice" and first_is_shape and ranks[0] == 1:
        if ctx.opset < 10:
            parts = [list(ctx.attr("starts", [])), list(ctx.attr("ends", [])), list(ctx.attr("axes", [0])), [1]]
        else:
            parts = [list(a) if isinstance(a, list) else [a] for a in args[1:]] + [[0], [1]][len(args) - 3:]
        starts, ends, axes_, steps = parts[:4]
        if len(starts) == 1 and axes_ in ([0], [-1]) and steps[0] != 0 and all(isinstance(v, int) for v in starts + ends + steps):
            out = (ctx.call(shape_values.slice_, args[0], starts[0], ends[0], steps[0]), 1)
    if out is None:
        return False
    for n in ctx.created:
        n.meta.setdefault("onnx_name", node.name)
        n.meta.setdefault("onnx_op_type", node.op_type)
    builder.shape_values[node.output[0]] = out
    return True


def _schema(op_type: str, opset: int, domain: str) -> Any:
    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except onnx.defs.SchemaError:
        return None


def expand_function(importer: Importer, builder: GraphBuilder, node: onnx.NodeProto, function: onnx.FunctionProto,
                    schema: Any) -> None:
    """Converts `node` by converting the nodes of its ONNX function body (values renamed)."""
    prefix = (node.name or node.op_type) + "/"
    rename = dict(zip(function.input, node.input))
    rename.update(zip(function.output, node.output))
    given = {a.name: a for a in node.attribute}
    defaults: dict[str, onnx.AttributeProto] = {a.name: a for a in function.attribute_proto}
    if schema is not None:
        for name, attr in schema.attributes.items():
            if attr.default_value.name:
                defaults[name] = attr.default_value
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in function.opset_import}
    local = set(function.input) | {o for n in function.node for o in n.output}
    for inner in function.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(inner)
        copy.name = prefix + (inner.name or inner.op_type)
        del copy.input[:]
        copy.input.extend(rename.get(n, prefix + n) if n else "" for n in inner.input)
        del copy.output[:]
        copy.output.extend(rename.get(n, prefix + n) if n else "" for n in inner.output)
        del copy.attribute[:]
        for attr in inner.attribute:
            if attr.ref_attr_name:
                source = given.get(attr.ref_attr_name) or defaults.get(attr.ref_attr_name)
                if source is None:
                    continue
                resolved = onnx.AttributeProto()
                resolved.CopyFrom(source)
                resolved.name = attr.name
                copy.attribute.append(resolved)
            elif attr.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS):
                renamed = onnx.AttributeProto()
                renamed.CopyFrom(attr)
                for g in [renamed.g] if attr.type == onnx.AttributeProto.GRAPH else list(renamed.graphs):
                    _rename_outer(g, lambda n: rename.get(n, prefix + n) if n in local else n)
                copy.attribute.append(renamed)
            else:
                copy.attribute.append(attr)
        domain = "" if copy.domain == "ai.onnx" else copy.domain
        importer.convert_node(builder, copy, opsets.get(domain, importer.opsets.get(domain, 1)))
        for n in copy.output:
            if n in builder.values:
                for fx_node in [builder.values[n]]:
                    fx_node.meta.setdefault("onnx_function", node.name)


def _rename_outer(graph: onnx.GraphProto, rename: Any) -> None:
    """Renames, in a subgraph, the names it reads from the enclosing scope (those it does not
    define itself)."""
    free = set(free_names(graph))
    for node in graph.node:
        for i, n in enumerate(node.input):
            if n in free:
                node.input[i] = rename(n)
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                _rename_outer(g, lambda n, free=free: rename(n) if n in free else n)
    for o in graph.output:
        if o.name in free:
            o.name = rename(o.name)


def free_names(graph: onnx.GraphProto) -> list[str]:
    """Names a (sub)graph reads that it does not define itself (outer-scope values), in order."""
    defined = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    free: list[str] = []
    for node in graph.node:
        reads = list(node.input)
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                reads.extend(free_names(g))
        for n in reads:
            if n and n not in defined and n not in free:
                free.append(n)
        defined.update(node.output)
    for o in graph.output:
        if o.name not in defined and o.name not in free:
            free.append(o.name)
    return free


def _collect_types(graph: onnx.GraphProto, types: dict[str, onnx.TypeProto]) -> None:
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        if v.type.WhichOneof("value"):
            types.setdefault(v.name, v.type)
    for init in graph.initializer:
        t = onnx.helper.make_tensor_type_proto(init.data_type, list(init.dims))
        types.setdefault(init.name, t)
    for node in graph.node:
        for attr in node.attribute:
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else list(attr.graphs)):
                _collect_types(g, types)


def _check_type(value_info: onnx.ValueInfoProto, where: str) -> None:
    kind = value_info.type.WhichOneof("value")
    if kind is None:
        return
    if kind != "tensor_type":
        raise OnnxImportError(f"{where} has type {kind.replace('_type', '')}: only tensors can be imported into torch")
    torch_dtype(value_info.type.tensor_type.elem_type, where)
