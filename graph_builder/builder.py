"""GraphBuilder: the tracing evaluator. Inside `with builder:` every op call becomes a node.

    g = GraphBuilder(opset=23)
    x = g.input("x", FLOAT, ["batch", 4])
    with g:
        y = op.Relu(op.MatMul(x, g.initializer("w", w)))
    g.output(y, "y")
    model = g.to_model()

Every Value made while tracing has a dtype and, where ONNX inference can tell, a shape.
Ops whose inputs are all small constants are folded at trace time; equal constants are shared.
Subgraphs (bodies of If, Loop and Scan) are built by `g.subgraph()` builders, which may use
the values of the graphs around them.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
import onnx
from onnx import shape_inference

from graph_builder import ir, types, weights
from graph_builder.arrays import as_array, numpy_to_torch
from graph_builder.evaluator import EAGER, pop_evaluator, push_evaluator, run_session
from graph_builder.evaluator import require as graph_builder_require
from graph_builder.fast_infer import RULES, SYM_RULES
from graph_builder.ir import CHECK_PREFIX, COMPLEX_KEY, Graph, ModelTooLargeError, Node, Value
from graph_builder.opset import CHANGED_MEANING, opset
from graph_builder.schema import DEFAULT_OPSET, OpError, OpSignature
from graph_builder.types import DType

# Operators whose meaning changed between opset 18 and the default opset under the same name.

FOLD_LIMIT = 1024  # fold an op when its constant inputs and outputs have at most this many elements

# (shape rule, shape-value rule) of each signature, from fast_infer
_RULES_BY_SIGNATURE: dict[OpSignature, tuple[Any, Any]] = {}


class _Root:
    """State shared by a builder and its subgraph builders: names, the metadata scope, and the
    subgraph builders by their graph."""

    def __init__(self, opset: int, exact_nan: bool | None = None):
        self.opset = opset
        self.exact_nan = exact_nan
        self.names: set[str] = set()
        self.counters: dict[str, int] = {}
        self.metadata: dict[str, str] = {}
        self.subgraphs: dict[int, GraphBuilder] = {}
        # ONNX shape inference results by (signature, attributes, input types and constants)
        self.inferred: dict[Any, list[tuple[DType | None, ir.Shape | None]]] = {}
        self.folded: dict[Any, list[np.ndarray]] = {}  # constant calls run at trace time, by op and inputs' bytes

    def unique(self, base: str) -> str:
        names = self.names
        if base not in names:
            names.add(base)
            return base
        n = self.counters.get(base, 0) + 1
        name = f"{base}_{n}"
        while name in names:
            n += 1
            name = f"{base}_{n}"
        self.counters[base] = n
        names.add(name)
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
        exact_nan: bool | None = None,
    ):
        self.parent = parent
        self._root: _Root = parent._root if parent is not None else _Root(opset, exact_nan)
        self.opset = self._root.opset
        self.exact_nan = self._root.exact_nan  # None: `graph_builder.exact_nan(...)`'s setting (current_exact_nan)
        imports = {"": self.opset}
        imports.update(opset_imports or {})
        self.graph = Graph(name, imports)
        self._constants: dict[Any, Value] = {}
        self._constants_by_id: dict[int, tuple[np.ndarray, Value]] = {}  # read-only arrays only
        self._targets: dict[OpSignature, OpSignature] = {}
        self._gc_paused: list[bool] = []  # per open `with self:`, whether it paused the collector
        self._checks: list[tuple[Value, str]] = []  # `require`d conditions not yet tied to an output

    # -- graph inputs, weights, constants ------------------------------------------------------
    def input(self, name: str, dtype: DType, shape: Sequence[ir.Dim] | None) -> Value:
        """A graph input; dims are ints, symbolic names (str) or None. A COMPLEX64/COMPLEX128
        input is its real view (FLOAT/DOUBLE, shape + [2], see `Value.is_complex`), recorded
        in the input's metadata (`COMPLEX_KEY`)."""
        if not isinstance(dtype, DType):
            raise TypeError(f"input {name!r}: dtype must be a graph_builder DType (FLOAT, INT64, ...), got {dtype!r}")
        complex_dtype = dtype if dtype.is_complex else None
        if complex_dtype is not None:
            dtype = types.FLOAT if dtype is types.COMPLEX64 else types.DOUBLE
            shape = None if shape is None else (*shape, 2)
        value = Value(self._root.unique(name), dtype, None if shape is None else tuple(shape), graph=self.graph)
        if complex_dtype is not None:
            value.as_complex().metadata[COMPLEX_KEY] = complex_dtype.name.lower()
        self.graph.inputs.append(value)
        return value

    def initializer(self, name: str, array: Any) -> Value:
        """A named weight: kept as an initializer under exactly this name, never folded away."""
        array = as_array(array)
        self._free_name(name)
        self._root.names.add(name)
        value = Value(name, types.from_numpy(array.dtype), array.shape, const_value=array, graph=self.graph)
        value.is_parameter = True
        self.graph.initializers[name] = value
        return value

    def constant(self, value: Any, dtype: DType | None = None) -> Value:
        """A constant Value; equal constants (same dtype, shape and bytes) are one Value, shared
        with the graphs around a subgraph."""
        array = as_array(value)
        if dtype is not None and array.dtype != dtype.numpy:
            array = array.astype(dtype.numpy)
        if array.dtype.kind in "US":
            array = array.astype(object)
        key = (array.dtype.str, array.shape, array.tobytes()) if array.dtype != np.object_ else None
        if key is not None:
            b: GraphBuilder | None = self
            while b is not None:
                found = b._constants.get(key)
                if found is not None:
                    if found.graph is b.graph and found.name not in b.graph.initializers:
                        b.graph.initializers[found.name] = found  # the optimizer dropped it unused: in use again
                    return found
                b = b.parent
        if array.flags.writeable:  # a private, frozen copy: the caller's array or tensor may change
            array = array.copy()
            array.flags.writeable = False
        name = self._root.unique("const" if array.ndim else f"scalar_{types.from_numpy(array.dtype).name.lower()}")
        v = Value(name, types.from_numpy(array.dtype), array.shape, const_value=array, graph=self.graph)
        if key is not None:
            self._constants[key] = v
        self.graph.initializers[name] = v
        return v

    def output(self, value: Any, name: str | None = None, *, exact: bool = True) -> Value:
        """Mark a value as a graph output, under `name` when given. A value that cannot carry
        the name (an input, an initializer, an output already, a value of an outer graph) is
        passed through an Identity node. With exact=False the name is a preference: when an
        input, a weight or another output holds it, the output gets a free variant (`name_1`).
        The run-time checks `require`d since the last output are tied into this one."""
        complex_dtype = value.complex_dtype if isinstance(value, Value) else None
        if not isinstance(value, Value) or value.graph is not self.graph:
            with self:
                value = self._as_value(value)
        if self._checks and value.dtype is not None and value.shape is not None:
            value = self._checked(value)
        needs_identity = value.graph is not self.graph or value.producer is None or value in self.graph.outputs
        if name is not None and value.name != name:
            if not self._free_name(name, exact):
                name = self._root.unique(name)
            if needs_identity:
                with self:
                    value = opset(self.opset).Identity(value)
            self._root.names.add(name)
            self._root.names.discard(value.name)  # the old name is free again
            value.name = name
        elif needs_identity:
            with self:
                value = opset(self.opset).Identity(value)
        if complex_dtype is not None:  # the real view of a complex tensor: say so in its metadata
            value.as_complex().metadata[COMPLEX_KEY] = complex_dtype.name.lower()
        self.graph.outputs.append(value)
        return value

    def require(self, condition: Value, message: str, value: Value | None = None) -> Value | None:
        """Record a run-time check (`graph_builder.require`): a BOOL Value that must hold, every
        element of it, on every run. It is tied into the next output declared, or with `value`
        into that value now: the checked value is returned, to be read in its place."""
        if condition.dtype is not types.BOOL:
            raise OpError(f"require({message!r}): the condition must be BOOL, not {condition.dtype}")
        with self:
            if condition.shape is None or len(condition.shape) != 0:
                ints = opset(self.opset).Cast(condition, to=types.INT64.onnx)
                condition = opset(self.opset).Cast(opset(self.opset).ReduceMin(ints, keepdims=0), to=types.BOOL.onnx)
        if condition.const_value is not None:
            graph_builder_require(condition, message)  # known now: raises if false
            return value
        if value is not None:
            if value.dtype is None or value.shape is None:
                raise OpError(f"require({message!r}): the value to check must have a known dtype and rank")
            return self._tie([(condition, message)], value)
        self._checks.append((condition, message))
        return None

    def _checked(self, value: Value) -> Value:
        """`value` with the pending checks tied into it (`_tie`); none pending after."""
        out = self._tie(self._checks, value)
        self._checks.clear()
        return out

    def _tie(self, checks: list[tuple[Value, str]], value: Value) -> Value:
        """`value` through one Reshape per check: to its own shape where the check holds,
        else to an impossible shape (each dim plus one), so that onnxruntime stops there. Each is
        named `check: <message>`, which onnxruntime's error quotes, and the optimizer keeps it
        (`ir.is_check`). onnxruntime merges a chain of Reshape, Squeeze and Unsqueeze nodes that
        ends in a static shape into one Reshape to that shape, and the checks with it: a value
        made by one of them, and each check after the first, is carried through a Flatten, which
        it does not merge (a scalar as [1], Gathered back after)."""
        o = opset(self.opset)
        with self:
            scalar = len(value.shape or ()) == 0
            carried = value
            shape = np.array([1], dtype=np.int64) if scalar else o.Shape(value)
            impossible = o.Add(shape, np.array(1, dtype=np.int64))
            for condition, message in checks:
                made = carried.producer
                if scalar or (made is not None and made.domain in ("", "ai.onnx")
                              and made.op_type in ("Reshape", "Squeeze", "Unsqueeze")):
                    carried = o.Flatten(carried, axis=0)
                # allowzero: a 0 in the shape is an empty dim, not "the input's dim" (Flatten made [1, 0])
                carried = o.Reshape(carried, o.Where(condition, shape, impossible), allowzero=1)
                cast(Node, carried.producer).name = self._root.unique(CHECK_PREFIX + message)
            out = o.Gather(carried, np.array(0, dtype=np.int64), axis=0) if scalar else carried
        out.set_type(value.dtype, value.shape)
        return out

    def _free_name(self, name: str, exact: bool = True) -> bool:
        """Make `name` available: a node output that holds it is renamed (names matter only
        when the graph is written). Inputs, weights and outputs keep theirs: then this raises,
        or with exact=False returns False."""
        if name not in self._root.names:
            return True
        graphs = [self._root_builder().graph] + [b.graph for b in self._root.subgraphs.values()]
        for graph in graphs:
            constants = [v for v in graph.initializers.values() if not v.is_parameter]
            for v in constants + [o for node in graph.nodes for o in node.outputs]:
                if v.name == name:
                    if any(v is o for g in graphs for o in g.outputs):
                        if not exact:
                            return False
                        raise ValueError(f"the name {name!r} is already taken by a graph output")
                    v.name = self._root.unique(name)
                    if name in graph.initializers:
                        del graph.initializers[name]
                        graph.initializers[v.name] = v
                    return True
        for graph in graphs:
            for v in [*graph.inputs, *graph.initializers.values()]:
                if v.name == name:
                    if not exact:
                        return False
                    raise ValueError(f"the name {name!r} is already taken by a graph input or weight")
        return True  # a value that no graph holds any more (folded or dropped while tracing) had it

    def _root_builder(self) -> GraphBuilder:
        b = self
        while b.parent is not None:
            b = b.parent
        return b

    # -- nesting --------------------------------------------------------------------------------
    def __enter__(self) -> GraphBuilder:
        # Tracing allocates many small objects that live as long as the graph; Python's cyclic
        # garbage collector would scan the whole heap (torch's included) again and again while
        # the graph grows. It is paused inside the outermost `with builder:` (as Mercurial's
        # `nogc` does) and restored on exit; reference counting still frees everything acyclic.
        self._gc_paused.append(gc.isenabled())
        gc.disable()
        push_evaluator(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        pop_evaluator(self)
        if self._gc_paused.pop():
            gc.enable()

    def subgraph(self, name: str = "subgraph") -> GraphBuilder:
        """A builder for the body of If, Loop or Scan: give it inputs (Loop and Scan bodies) and
        outputs, and pass it (or its `.graph`) as the attribute. Inside `with sub:` ops may use
        the values of this graph and the graphs around it."""
        sub = GraphBuilder(name=self._root.unique(name), parent=self)
        self._root.subgraphs[id(sub.graph)] = sub
        return sub

    @contextlib.contextmanager
    def metadata(self, **props: str) -> Iterator[None]:
        """Nodes created inside carry these `metadata_props` (e.g. the ATen op and source line)."""
        saved = self._root.metadata
        self._root.metadata = {**saved, **{k: str(v) for k, v in props.items()}}
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
        if type(x) is Value:
            if x.graph is self.graph:
                return x
            if x.graph is None:
                return self.constant(x.numpy())
            if self._owns(x):
                return x
            raise OpError(f"Value {x.name!r} belongs to another graph than the one being built")
        if type(x) is np.ndarray and not x.flags.writeable and x.base is None:  # e.g. made from Python values
            entry = self._constants_by_id.get(id(x))
            if entry is not None and entry[0] is x:
                return entry[1]
            v = self.constant(x)
            self._constants_by_id[id(x)] = (x, v)
            return v
        return self.constant(as_array(x))

    # -- the tracing evaluator ------------------------------------------------------------------
    def eval_op(self, sig: OpSignature, inputs: list[Any], attrs: dict[str, Any], n_outputs: int) -> list[Value]:
        if sig.domain == "" and sig.opset != self.opset:
            sig = self._at_target_opset(sig, inputs, attrs)
        graph = self.graph
        values: list[Value | None] = []
        foldable = not sig.nondeterministic
        for x in inputs:
            if x is None:
                values.append(None)
                continue
            if type(x) is not Value or x.graph is not graph:
                x = self._as_value(x)
            values.append(x)
            if foldable:
                c = x.const_value
                foldable = c is not None and not x.is_parameter and c.size <= FOLD_LIMIT
        if foldable and attrs:
            foldable = not any(type(a) is Graph for a in attrs.values())
        if foldable:
            arrays = [None if v is None else v.const_value for v in values]
            results = self._fold(sig, arrays, attrs, n_outputs)
            if all(r.size <= FOLD_LIMIT for r in results):
                return [self.constant(r) for r in results]
        node = Node(sig.domain, sig.name, values, attrs, sig.attr_types, None)
        root = self._root
        if root.metadata:
            node.metadata = dict(root.metadata)
        base = sig.lower_name
        if n_outputs == 1:
            node.outputs = [Value(root.unique(base), None, None, node, 0, None, graph)]
        else:
            node.outputs = [Value(root.unique(base), None, None, node, i, None, graph) for i in range(n_outputs)]
        self._infer(sig, node)
        graph.nodes.append(node)
        if sig.domain and sig.domain not in graph.opset_imports:
            graph.opset_imports[sig.domain] = sig.opset
        return node.outputs

    def _fold(self, sig: OpSignature, arrays: list[np.ndarray | None], attrs: dict[str, Any], n_outputs: int) -> list[np.ndarray]:
        """Run an op on constant inputs in onnxruntime, once per distinct call in this graph:
        functions repeat the same small shape computations (every batch norm of a model)."""
        try:
            key: Any = (
                sig, n_outputs,
                tuple([None if a is None else (a.dtype.str, a.shape, a.tobytes()) for a in arrays]),
                tuple([(k, ir._freeze(a)) for k, a in attrs.items()]),
            )  # fmt: skip
            cached = self._root.folded.get(key)
        except TypeError:  # an unhashable attribute
            key, cached = None, None
        if cached is None:
            in_numpy = _NUMPY_FOLDS.get(sig.name) if not sig.domain else None
            cached = in_numpy(arrays, attrs) if in_numpy is not None else EAGER.run_arrays(sig, arrays, attrs, n_outputs)
            if key is not None:
                self._root.folded[key] = cached
        return cached

    def _at_target_opset(self, sig: OpSignature, inputs: list[Any], attrs: dict[str, Any]) -> OpSignature:
        """The signature of the same operator in the opset this graph targets, when the call
        means the same there (same attributes, inputs and allowed dtypes); else a clear error."""
        target = self._targets.get(sig)
        if target is None:
            try:
                target = getattr(opset(self.opset), sig.name).signature
            except AttributeError:
                raise OpError(
                    f"op.{sig.name} does not exist in opset {self.opset}, which this graph targets "
                    f"(it was added in opset {sig.since_version}); export with a newer opset"
                ) from None
            self._targets[sig] = target
        if target.since_version == sig.since_version:
            return target
        problem = None
        if sig.name in CHANGED_MEANING:
            problem = CHANGED_MEANING[sig.name]
        elif len(inputs) > len(target.inputs) and not target.variadic_input:
            problem = f"it takes {len(target.inputs)} inputs there, this call gives {len(inputs)}"
        else:
            for key, a in attrs.items():
                if target.attr_types.get(key) != sig.attr_types.get(key):
                    problem = f"attribute {key!r} does not exist there"
                    break
                dtype = types._BY_NUMPY.get(a.dtype) if type(a) is np.ndarray else None
                if dtype is not None and dtype.since_opset > self.opset:
                    problem = f"attribute {key!r} is a {dtype} tensor ({dtype} exists from opset {dtype.since_opset})"
                    break
            for i, x in enumerate(inputs):
                dtype = x.dtype if isinstance(x, Value) else None
                allowed = target.param_for_input(i).allowed if i < len(target.inputs) or target.variadic_input else None
                if dtype is not None and allowed is not None and dtype not in allowed:
                    newer = f" ({dtype} exists from opset {dtype.since_opset})" if dtype.since_opset > self.opset else ""
                    problem = f"input {i} has dtype {dtype}, which it does not accept there{newer}"
                    break
        if problem is not None:
            raise OpError(
                f"op.{sig.name} (opset {sig.since_version}) cannot be written for opset {self.opset}, which this "
                f"graph targets: {problem}; export with a newer opset"
            )
        return target

    # -- type and shape inference ---------------------------------------------------------------
    def _infer(self, sig: OpSignature, node: Node) -> None:
        rules = _RULES_BY_SIGNATURE.get(sig)
        if rules is None:
            rules = _RULES_BY_SIGNATURE[sig] = (RULES.get(sig.name), SYM_RULES.get(sig.name)) if sig.domain == "" else (None, None)
        rule, sym_rule = rules
        inputs = node.inputs
        result = None
        if rule is not None:
            for v in inputs:
                if v is None or v.dtype is None:
                    break
            else:
                result = rule(inputs, node.attributes)
        if result is not None and len(result) == len(node.outputs):
            for out, (dtype, shape) in zip(node.outputs, result):
                out.dtype = dtype
                out.shape = shape
        else:
            if sig.subgraph_outputs is not None:
                self._infer_control_flow(node)
            else:
                self._infer_onnx(sig, node)
            self._fill_dtypes_from_constraints(sig, node)
        if sym_rule is not None and len(node.outputs) == 1:
            for v in inputs:
                if v is not None and (v.sym_value is not None or sig.name == "Shape"):
                    node.outputs[0].sym_value = sym_rule(inputs, node.attributes)
                    break

    def _infer_onnx(self, sig: OpSignature, node: Node) -> None:
        """ONNX's own inference for the node, cached by op, attributes, input types and the
        payloads of small constant inputs (real graphs repeat the same calls many times)."""
        key_parts: list[Any] = [sig, n_outputs := len(node.outputs)]
        for v in node.inputs:
            if v is None:
                key_parts.append(None)
            else:
                c = v.const_value
                data = c.tobytes() if c is not None and c.size <= FOLD_LIMIT else None
                key_parts.append((v.dtype, v.shape, data, v.sym_value))
        try:
            key_parts.append(tuple([(k, ir._freeze(a)) for k, a in node.attributes.items()]))
            key: Any = tuple(key_parts)
            cached = self._root.inferred.get(key)
        except TypeError:  # an unhashable attribute
            key, cached = None, None
        if cached is None:
            cached = self._run_onnx_inference(sig, node)
            if key is not None:
                self._root.inferred[key] = cached
        for out, (dtype, shape) in zip(node.outputs[:n_outputs], cached):
            out.dtype = dtype
            out.shape = shape

    @staticmethod
    def _run_onnx_inference(sig: OpSignature, node: Node) -> list[tuple[DType | None, ir.Shape | None]]:
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
                input_data[key] = ir.tensor_proto(v.const_value, key)
            elif v.sym_value is not None and all(type(d) is int for d in v.sym_value):
                input_data[key] = ir.tensor_proto(np.array(v.sym_value, dtype=np.int64).reshape(v.shape or ()), key)
        proto.output.extend(f"o{i}" for i in range(len(node.outputs)))
        for key, value in node.attributes.items():
            proto.attribute.append(ir.make_attribute(key, value, node.attr_types.get(key)))
        try:
            inferred = shape_inference.infer_node_outputs(sig.schema, proto, input_types, input_data)
        except Exception as e:
            described = ", ".join(
                "None" if v is None else f"{v.dtype}{list(v.shape) if v.shape is not None else '[?]'}" for v in node.inputs
            )
            raise OpError(f"op.{sig.name}({described}) with attributes {node.attributes} is invalid: {e}") from None
        result: list[tuple[DType | None, ir.Shape | None]] = []
        for i in range(len(node.outputs)):
            tp = inferred.get(f"o{i}")
            result.append(ir.type_from_proto(tp) if tp is not None else (None, None))
        return result

    def _infer_control_flow(self, node: Node) -> None:
        attrs = node.attributes
        if node.op_type == "If":
            then_outputs, else_outputs = attrs["then_branch"].outputs, attrs["else_branch"].outputs
            if len(then_outputs) != len(else_outputs):
                raise OpError(f"op.If: then_branch has {len(then_outputs)} outputs but else_branch has {len(else_outputs)}")
            for out, a, b in zip(node.outputs, then_outputs, else_outputs):
                if a.dtype is not None and b.dtype is not None and a.dtype is not b.dtype:
                    raise OpError(f"op.If: output {out.index} is {a.dtype} in then_branch but {b.dtype} in else_branch")
                out.set_type(a.dtype or b.dtype, _merge_shapes(a.shape, b.shape))
        elif node.op_type == "Loop":
            body = attrs["body"]
            n_carried = len(node.inputs) - 2
            if len(body.inputs) != n_carried + 2:
                raise OpError(f"op.Loop: the body takes {len(body.inputs)} inputs (iteration, condition, "
                              f"{n_carried} carried), but the Loop has {n_carried} carried values")  # fmt: skip
            for i, out in enumerate(node.outputs):
                src = body.outputs[1 + i]
                if i < n_carried:
                    init = node.inputs[2 + i]
                    shape = _merge_shapes(src.shape, init.shape if init is not None else None)
                    out.set_type(src.dtype, shape)
                else:
                    out.set_type(src.dtype, None if src.shape is None else (None, *src.shape))
        else:  # Scan
            body = attrs["body"]
            n_scan = int(attrs.get("num_scan_inputs", 0))
            n_state = len(node.inputs) - n_scan
            scan_axes = attrs.get("scan_input_axes") or [0] * n_scan
            output_axes = attrs.get("scan_output_axes") or [0] * (len(node.outputs) - n_state)
            length: ir.Dim = None
            for j, axis in enumerate(scan_axes):
                scanned = node.inputs[n_state + j]
                shape = scanned.shape if scanned is not None else None
                if shape is not None and shape:
                    length = shape[axis % len(shape)]
                    break
            for i, out in enumerate(node.outputs):
                src = body.outputs[i]
                if i < n_state:
                    out.set_type(src.dtype, src.shape)
                elif src.shape is None:
                    out.set_type(src.dtype, None)
                else:
                    dims = list(src.shape)
                    axis = output_axes[i - n_state]
                    dims.insert(axis % (len(dims) + 1), length)
                    out.set_type(src.dtype, tuple(dims))

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
        and the constants that live nodes use). Subgraphs of live nodes are finalized first, so
        that the values they capture are known."""
        live: set[int] = {id(v) for v in outputs}
        is_live, make_live = live.__contains__, live.add
        nodes: list[Node] = []
        subgraphs = self._root.subgraphs
        for node in reversed(self.graph.nodes):
            outs = node.outputs
            if not (is_live(id(outs[0])) if len(outs) == 1 else any(is_live(id(o)) for o in outs)):
                continue
            nodes.append(node)
            for v in node.inputs:
                if v is not None:
                    make_live(id(v))
            if node.attributes:
                for attr in node.attributes.values():
                    if type(attr) is Graph or type(attr) is list and attr and type(attr[0]) is Graph:
                        for sub in attr if type(attr) is list else [attr]:
                            builder = subgraphs.get(id(sub))
                            if builder is not None:
                                builder.finalize_subgraph()
                            if isinstance(sub, Graph):
                                live.update(_captured(sub))
        nodes.reverse()
        inits = [v for v in self.graph.initializers.values() if v.is_parameter or id(v) in live]
        return nodes, inits

    def _graph_for(self, outputs: Sequence[Value]) -> Graph:
        if self._checks:
            raise OpError(f"{len(self._checks)} run-time check(s) ({self._checks[0][1]!r}, ...) were required after the "
                          f"last output of graph {self.graph.name!r}, or no output could carry them: declare an "
                          "output after them")  # fmt: skip
        nodes, inits = self._live(outputs)
        g = Graph(self.graph.name, self.graph.opset_imports)
        g.inputs = self.graph.inputs
        g.outputs = list(outputs)
        g.nodes = nodes
        g.initializers = {v.name: v for v in inits}
        g.functions = self.graph.functions
        g.metadata = self.graph.metadata
        g.graph_metadata = self.graph.graph_metadata
        g.doc_string = self.graph.doc_string
        g.value_info = self.graph.value_info
        return g

    def finalize_subgraph(self) -> Graph:
        """The graph of a subgraph builder with dead nodes and unused constants dropped."""
        g = self._graph_for(self.graph.outputs)
        self.graph.nodes = g.nodes
        self.graph.initializers = g.initializers
        return self.graph

    def to_graph(self, check: bool = True, ir_version: int = 10) -> Graph:
        """The finished graph: nodes the outputs do not need are dropped, output types are
        completed, and unless check=False it passes `onnx.checker.check_model(full_check=True)`
        (run on the graph without its weights, at any size: `weights.check_model`). Its
        initializers hold the arrays given to `initializer()`, not copies."""
        graph = self._graph_for(self.graph.outputs)
        graph.ir_version = ir_version
        self._complete_output_types(graph)
        if check:
            weights.check_model(graph)
        return graph

    def to_model(self, check: bool = True, ir_version: int = 10) -> onnx.ModelProto:
        """The ModelProto of the graph (see `to_graph`), weights included. A model whose weights
        do not fit in one ModelProto (over `ir.EXTERNAL_DATA_THRESHOLD` bytes) raises
        ModelTooLargeError naming what to call instead: `save(path)`, or `to_graph()`."""
        graph = self.to_graph(check=False, ir_version=ir_version)
        if weights.is_too_large(graph):
            raise ModelTooLargeError(weights.too_large_message(
                graph, "GraphBuilder.to_model()",
                "Call save(path) to write the model with its weights as external data next to it (then "
                "onnx.load(path) or onnxruntime.InferenceSession(path)), or to_graph() for the graph with its weights "
                "uncopied (graph_builder.weights.ort_session(graph) runs it).",
            ))  # fmt: skip
        data = graph.to_model_bytes()
        if check:
            onnx.checker.check_model(data, full_check=True)  # the bytes at hand, weights included
        return onnx.ModelProto.FromString(data)

    def save(self, path: str, external_data: bool | None = None, check: bool = True, ir_version: int = 10,
             progress: bool = True) -> str | None:
        """Write the model (see `to_graph`) to `path`; the weights go to `<path>.data` next to it
        when they are over `ir.EXTERNAL_DATA_THRESHOLD` bytes or external_data=True, streamed
        from their arrays (a bar on a terminal; progress=False: none). Returns the data file's
        path, or None."""
        return weights.save_model(self.to_graph(check, ir_version), path, external_data, progress=progress)

    def _complete_output_types(self, graph: Graph) -> None:
        """Graph inputs and outputs need a rank for onnx.checker: fill the shapes the tracing
        could not tell from ONNX's whole-model inference, or say which value lacks one."""
        for v in graph.inputs:
            if v.shape is None:
                raise OpError(f"graph input {v.name!r} has no shape; give its rank (dims may be names or None)")
        missing = [v for v in graph.outputs if v.shape is None or v.dtype is None]
        if not missing:
            return
        model = graph.to_model(weights_as_inputs=True)  # no weight bytes: any size
        inferred = shape_inference.infer_shapes(model, data_prop=True)
        types_by_name = {info.name: ir.type_from_proto(info.type) for info in inferred.graph.output}
        for v in missing:
            dtype, shape = types_by_name.get(v.name, (None, None))
            if dtype is None or shape is None:
                raise OpError(
                    f"graph output {v.name!r} has no known rank, which ONNX requires of graph outputs; "
                    "reshape it to a known rank before making it an output"
                )
            v.set_type(dtype, shape)

    def run(self, feeds: dict[str, Any], outputs: Sequence[Value] | None = None) -> list[Any]:
        """Run the graph built so far in onnxruntime and return `outputs` (default: the graph
        outputs), any intermediate Value included. Feeds are numpy arrays or torch tensors,
        keyed by input name; results come back as the kind fed (torch in, torch out)."""
        wanted = list(outputs) if outputs is not None else list(self.graph.outputs)
        for v in wanted:
            if not isinstance(v, Value) or v.graph is not self.graph:
                raise OpError(f"run: {v!r} is not a value of this graph")
        session = weights.ort_session(self._graph_for(wanted))  # not checked: an intermediate may have no known rank
        torch_in = any(type(x).__module__ == "torch" for x in feeds.values())
        arrays = {k: as_array(x) for k, x in feeds.items()}
        results = run_session(session, arrays, [v.name for v in wanted])
        return [numpy_to_torch(r) for r in results] if torch_in else results


def _constant_of_shape(arrays: list[np.ndarray | None], attrs: dict[str, Any]) -> list[np.ndarray]:
    """ConstantOfShape: `value`'s one element (float32 0 by default) in every place of the shape."""
    fill = attrs.get("value", np.zeros(1, np.float32))
    return [np.full([int(d) for d in np.asarray(arrays[0])], fill.reshape(-1)[0], fill.dtype)]


# Ops whose fold numpy computes exactly, without an onnxruntime session: also for dtypes that
# onnxruntime has no kernels for (FLOAT4E2M1: a packed weight or zeros returned as they are)
_NUMPY_FOLDS = {
    "ConstantOfShape": _constant_of_shape,
    "Identity": lambda arrays, attrs: [arrays[0]],
    "Shape": lambda arrays, attrs: [np.array(np.shape(arrays[0])[attrs.get("start", 0):attrs.get("end")], np.int64)],
}


def _merge_shapes(a: ir.Shape | None, b: ir.Shape | None) -> ir.Shape | None:
    """The shape two values share: equal dims kept, differing ones unknown."""
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


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
