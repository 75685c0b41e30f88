"""torchlib.export: nn.Module -> torch.export ATen graph -> ONNX, through the registry.

The loop knows torch.export and the registry, nothing about any one op: every call_function
node is looked up by its ATen overload and the function is called under the tracing evaluator.
"""

from __future__ import annotations

import inspect
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree

from graph_builder import GraphBuilder, op, types
from graph_builder.ir import Value
from graph_builder.opset import OpError, torch_to_numpy
from torchlib.exporter.result import ExportResult
from torchlib.exporter.source import module_class, module_path, source_line
from torchlib.registry import REGISTRY, Registry, _name_of


class UnsupportedOpsError(RuntimeError):
    """The model uses ATen ops that have no torchlib function (all of them listed at once)."""


class ExportError(RuntimeError):
    """A torchlib function failed on one node: names the op, the inputs and the user's line."""


def _load_ops() -> Registry:
    import torchlib.ops  # noqa: F401  (fills the registry)

    return REGISTRY


def decomposition_table(registry: Registry) -> dict[Any, Any]:
    """torch's default decompositions minus every op the registry implements, so fused ops
    (attention, layer norm, gelu, linear) stay fused and reach their ONNX form."""
    table = torch.export.default_decompositions()
    for overload in list(table.keys()):
        if overload in registry:
            table.pop(overload)
    return table


def needs_decomposition(ep: torch.export.ExportedProgram, registry: Registry) -> bool:
    """Decomposition re-traces the whole program (most of an export's time); it is needed only
    when an op has no function, mutates its inputs, or the program mutates buffers."""
    if any(spec.kind.name != "USER_OUTPUT" for spec in ep.graph_signature.output_specs):
        return True
    for node in ep.graph.nodes:
        if node.op != "call_function":
            continue
        if node.target not in registry:
            return True
        schema = getattr(node.target, "_schema", None)
        if schema is not None and schema.is_mutable:
            return True
    return False


def export(
    model: torch.nn.Module,
    args: tuple[Any, ...] = (),
    kwargs: Mapping[str, Any] | None = None,
    dynamic_shapes: Any = None,
    opset: int = 23,
    strict: bool = False,
) -> ExportResult:
    """Export `model(*args, **kwargs)` to ONNX. Returns an ExportResult (model_proto, save,
    __call__ running in onnxruntime, verify against torch)."""
    registry = _load_ops()
    if not isinstance(args, tuple):
        args = (args,)
    kwargs = dict(kwargs or {})
    timings: dict[str, float] = {}
    start = time.perf_counter()
    ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes, strict=strict)
    timings["torch.export"] = time.perf_counter() - start
    t = time.perf_counter()
    if needs_decomposition(ep, registry):
        ep = ep.run_decompositions(decomposition_table(registry))
    timings["decompositions"] = time.perf_counter() - t
    t = time.perf_counter()
    dim_names = _dim_names(model, args, kwargs, dynamic_shapes)
    model_proto, diagnostics = translate(ep, registry, opset, dim_names)
    timings["translate"] = time.perf_counter() - t
    timings["total"] = time.perf_counter() - start
    return ExportResult(model_proto, model, ep, timings, diagnostics)


def check_supported(ep: torch.export.ExportedProgram, registry: Registry) -> None:
    """Raise one UnsupportedOpsError naming every op without a function, with counts and lines."""
    missing: Counter[str] = Counter()
    where: dict[str, list[str]] = {}
    for node in ep.graph.nodes:
        if node.op == "call_function" and node.target not in registry:
            name = _name_of(node.target)
            missing[name] += 1
            line = source_line(node) or module_path(node) or node.name
            where.setdefault(name, [])
            if line not in where[name] and len(where[name]) < 3:
                where[name].append(line)
    if missing:
        lines = [f"{len(missing)} ATen op(s) in this model have no torchlib function:"]
        for name, count in sorted(missing.items()):
            lines.append(f"  {name}  x{count}")
            lines.extend(f"      at {w}" for w in where[name])
        lines.append("Add a function for each (see CONTRIBUTING.md), or check `python -m codegen coverage`.")
        raise UnsupportedOpsError("\n".join(lines))


def translate(
    ep: torch.export.ExportedProgram,
    registry: Registry,
    opset: int = 23,
    dim_names: dict[tuple[int, int], str] | None = None,
) -> tuple[Any, list[str]]:
    check_supported(ep, registry)
    g = GraphBuilder(opset=opset)
    env: dict[str, Any] = {}
    diagnostics: list[str] = []
    renames = _symbol_renames(ep, dim_names or {})
    specs = {s.arg.name: s for s in ep.graph_signature.input_specs if hasattr(s.arg, "name")}
    constants = {**ep.constants}
    state = ep.state_dict
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            env[node.name] = _placeholder(g, node, specs.get(node.name), state, constants, renames)
        elif node.op == "call_function":
            env[node.name] = _call(g, node, registry, env, renames, diagnostics)
        elif node.op == "output":
            outputs = pytree.tree_leaves(_map_args(node.args[0], env))
            for i, value in enumerate(outputs):
                if isinstance(value, Value):
                    name = node.args[0][i].name if i < len(node.args[0]) and hasattr(node.args[0][i], "name") else None
                    g.output(value, name)
        else:
            raise ExportError(f"FX node {node.name} of kind {node.op!r} is not supported (control flow submodules are not yet)")
    g.graph.metadata["torchlib.opset"] = str(opset)
    return g.to_model(), diagnostics


def _placeholder(g: GraphBuilder, node: Any, spec: Any, state: dict, constants: dict, renames: dict) -> Any:
    kind = spec.kind.name if spec is not None else "USER_INPUT"
    if kind == "TOKEN":  # effect tokens order side effects in torch; ONNX has none (see ops/effects.py)
        return None
    if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
        tensor = state[spec.target] if spec.target in state else constants[spec.target]
        return g.initializer(spec.target, torch_to_numpy(tensor))
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return g.input(node.name, types.from_torch(val.dtype), _shape(val, renames))
    if isinstance(val, (int, float, bool)) or val is None:
        return val  # non-tensor inputs are specialized by torch.export
    if isinstance(val, torch.SymInt):
        raise ExportError(f"input {node.name} is a symbolic int; pass it as a tensor to keep it dynamic")
    raise ExportError(f"input {node.name} of type {type(val).__name__} is not supported")


def _call(g: GraphBuilder, node: Any, registry: Registry, env: dict, renames: dict, diagnostics: list[str]) -> Any:
    val = node.meta.get("val")
    is_complex = any(isinstance(v, torch.Tensor) and v.is_complex() for v in pytree.tree_leaves((val, [a.meta.get("val") for a in node.all_input_nodes])))
    entry = registry.lookup(node.target, complex=is_complex)
    assert entry is not None  # check_supported ran first
    args = _map_args(node.args, env)
    kwargs = _map_args(node.kwargs, env)
    source = source_line(node)
    metadata = {"pkg.torchlib.aten_op": entry.name, "pkg.torchlib.fx_node": node.name}
    path = module_path(node)
    if path:
        metadata["pkg.torchlib.module"] = path
        metadata["pkg.torchlib.module_class"] = module_class(node)
    if source:
        metadata["pkg.torchlib.source"] = source
    try:
        with g.metadata(**metadata), g:
            result = entry.function(*args, **kwargs)
            return _conform(result, val, renames, entry.name, diagnostics)
    except (OpError, TypeError, ValueError, IndexError, KeyError, AssertionError) as e:
        described = ", ".join(_describe(a) for a in pytree.tree_leaves((args, kwargs)) if isinstance(a, Value))
        raise ExportError(
            f"{entry.name} failed on FX node {node.name!r} (inputs: {described})\n"
            f"  at {source or path or '<unknown>'}\n  {type(e).__name__}: {e}"
        ) from e


def _describe(v: Value) -> str:
    shape = "?" if v.shape is None else list(v.shape)
    return f"{v.dtype}{shape}"


def _conform(result: Any, val: Any, renames: dict, name: str, diagnostics: list[str]) -> Any:
    """Give each output Value torch's dtype and (symbolic) shape from the FX metadata. A dtype
    that differs from torch's is cast and reported: the function has a promotion bug."""
    if isinstance(result, Value) and isinstance(val, torch.Tensor):
        dtype = types.from_torch(val.dtype)
        if result.dtype is not dtype:
            diagnostics.append(f"{name} returned {result.dtype} where torch gives {dtype}; cast inserted")
            result = op.Cast(result, to=dtype.onnx)
        result.set_type(dtype, _shape(val, renames))
        return result
    if isinstance(result, (tuple, list)) and isinstance(val, (tuple, list)):
        return type(result)(_conform(r, v, renames, name, diagnostics) for r, v in zip(result, val))
    return result


def _shape(val: torch.Tensor, renames: dict) -> list[int | str]:
    dims: list[int | str] = []
    for d in val.shape:
        if isinstance(d, int):
            dims.append(d)
        else:
            expr = d.node.expr
            try:
                dims.append(int(expr))
            except TypeError:
                dims.append(str(expr.xreplace(renames)) if renames else str(expr))
    return dims


def _map_args(x: Any, env: dict) -> Any:
    if isinstance(x, torch.fx.Node):
        return env[x.name]
    if isinstance(x, (list, tuple)):
        return [_map_args(v, env) for v in x] if isinstance(x, list) else tuple(_map_args(v, env) for v in x)
    if isinstance(x, dict):
        return {k: _map_args(v, env) for k, v in x.items()}
    return x


def _dim_names(model: torch.nn.Module, args: tuple, kwargs: dict, dynamic_shapes: Any) -> dict[tuple[int, int], str]:
    """(index of the tensor among the flattened inputs, axis) -> the name given with Dim("batch")."""
    if dynamic_shapes is None:
        return {}
    try:
        bound = inspect.signature(model.forward).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {}
    if isinstance(dynamic_shapes, Mapping):
        pairs = [(bound.arguments.get(k), spec) for k, spec in dynamic_shapes.items()]
    elif isinstance(dynamic_shapes, Sequence):
        pairs = list(zip(list(bound.arguments.values()), dynamic_shapes))
    else:
        return {}
    by_id: dict[tuple[int, int], str] = {}

    def walk(value: Any, spec: Any) -> None:
        if spec is None or value is None:
            return
        if isinstance(value, torch.Tensor):
            axes = spec.items() if isinstance(spec, Mapping) else enumerate(spec) if isinstance(spec, Sequence) else []
            for axis, dim in axes:
                name = getattr(dim, "__name__", None)
                if name and isinstance(axis, int) and axis < value.dim():
                    by_id[(id(value), axis)] = name
        elif isinstance(value, (list, tuple)) and isinstance(spec, Sequence):
            for v, sp in zip(value, spec):
                walk(v, sp)
        elif isinstance(value, Mapping) and isinstance(spec, Mapping):
            for k, sp in spec.items():
                walk(value.get(k), sp)

    for value, spec in pairs:
        walk(value, spec)
    leaves = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
    return {(i, axis): name for i, x in enumerate(leaves) for (xid, axis), name in by_id.items() if xid == id(x)}


def _symbol_renames(ep: torch.export.ExportedProgram, dim_names: dict[tuple[int, int], str]) -> dict:
    """sympy symbol of each named input dim -> a symbol with the user's name."""
    import sympy

    renames: dict = {}
    user_inputs = [s.arg.name for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    nodes = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    tensor_index = 0
    for name in user_inputs:
        val = nodes[name].meta.get("val") if name in nodes else None
        if not isinstance(val, torch.Tensor):
            continue
        for axis, d in enumerate(val.shape):
            if not isinstance(d, int) and (tensor_index, axis) in dim_names:
                expr = d.node.expr
                if isinstance(expr, sympy.Symbol):
                    renames[expr] = sympy.Symbol(dim_names[(tensor_index, axis)])
        tensor_index += 1
    return renames
