"""torch.onnx's ways of saying which dims are dynamic, turned into torch.export's.

Accepted, as in `torch.onnx.export(..., dynamo=True)`:

- `dynamic_shapes` mirroring the inputs (a dict keyed by forward's parameter names, or a tuple
  in their order), nested like the inputs are (lists, tuples, dicts of tensors, and other
  pytree nodes, such as transformers' KV caches, as the list of their children); for each tensor
  a dict `{axis: spec}` or a list with one spec per axis, where a spec is
  - a string: the dim's name in the ONNX graph (`{0: "batch"}`), dynamic (`Dim.DYNAMIC`);
  - `torch.export.Dim("batch", ...)`: named by its name;
  - `Dim.AUTO` / `Dim.DYNAMIC` / `Dim.STATIC`, or None (static);
- `dynamic_axes` (the TorchScript exporter's convention): `{input_name: {axis: "name"}}` or
  `{input_name: [axis, ...]}`, where input names are `input_names` (one per tensor input, in
  flattened order) or forward's parameter names. Entries naming outputs are accepted and have
  no effect: output dims follow from the inputs'.

The result is torch.export's `dynamic_shapes` and the ONNX names of the named dims, keyed by
(index of the tensor among the flattened inputs, axis).
"""

from __future__ import annotations

import dataclasses
import inspect
import os
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree
from torch.export import Dim

from torchlib.exporter.hf_cache import cache_spec, is_cache_type


class DynamicShapesError(ValueError):
    """A dynamic_shapes / dynamic_axes spec that does not fit the inputs."""


@dataclasses.dataclass
class RequestedDim:
    """A dim marked dynamic."""

    where: str  # "dynamic_shapes['x'][0]"
    tensor_index: int  # among the flattened tensor inputs
    axis: int
    max: int | None  # the user's upper bound (Dim("b", max=...)), None for none

    def __str__(self) -> str:
        return self.where


@dataclasses.dataclass
class DynamicSpec:
    """torch.export's `dynamic_shapes`, the ONNX names of the named dims, the dims marked
    dynamic, and those of them whose sample size is 0 or 1 (torch.export would specialise them)."""

    dynamic_shapes: Any
    dim_names: dict[tuple[int, int], str]
    size_one: list[RequestedDim]
    requested: list[RequestedDim] = dataclasses.field(default_factory=list)


def normalize(forward: Any, args: tuple, kwargs: dict, dynamic_shapes: Any = None) -> DynamicSpec:
    """Turn torch.onnx's `dynamic_shapes` into a DynamicSpec (see the module docstring)."""
    leaves = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
    bound = _bind(forward, args, kwargs)
    if dynamic_shapes is None:
        return DynamicSpec(None, {}, [])
    names: dict[int, dict[int, str]] = {}  # id(tensor) -> axis -> name
    size_one: list[tuple[str, torch.Tensor, int, int | None]] = []
    requested: list[tuple[str, torch.Tensor, int, int | None]] = []

    def axis_spec(tensor: torch.Tensor, axis: int, spec: Any, where: str) -> Any:
        if not -tensor.dim() <= axis < tensor.dim():
            raise DynamicShapesError(f"dynamic_shapes{where} names axis {axis}, but that input has {tensor.dim()} dims")
        axis %= tensor.dim()
        name = spec if isinstance(spec, str) else getattr(spec, "__name__", None)  # Dim("batch")
        if name:
            names.setdefault(id(tensor), {})[axis] = name
        if isinstance(spec, str):
            spec = Dim.DYNAMIC
        if spec is not None and not _is_static(spec):
            label = f"dynamic_shapes{where}[{axis}]" + (f" ({name!r})" if name else "")
            requested.append((label, tensor, axis, getattr(spec, "max", None)))
            if tensor.shape[axis] <= 1:
                size_one.append((f"dynamic_shapes{where}[{axis}] (sample size {tensor.shape[axis]})", tensor, axis, getattr(spec, "max", None)))
        return spec

    def walk(value: Any, spec: Any, where: str) -> Any:
        if spec is None:
            return None
        if isinstance(value, torch.Tensor):
            if isinstance(spec, Mapping):
                return {axis: axis_spec(value, axis, s, where) for axis, s in spec.items()}
            if isinstance(spec, (list, tuple)):
                return type(spec)(axis_spec(value, axis, s, where) for axis, s in enumerate(spec))
            raise DynamicShapesError(f"dynamic_shapes{where}: expected a dict {{axis: spec}} or a list of specs for a tensor, got {spec!r}")
        if isinstance(value, Mapping) and isinstance(spec, Mapping):
            return {k: walk(value.get(k), s, f"{where}[{k!r}]") for k, s in spec.items()}
        if isinstance(value, (list, tuple)) and isinstance(spec, (list, tuple)):
            return type(spec)(walk(v, s, f"{where}[{i}]") for i, (v, s) in enumerate(zip(value, spec)))
        node = pytree.SUPPORTED_NODES.get(type(value))
        if node is not None and is_cache_type(type(value)):
            spec = cache_spec(value, spec)  # transformers' layout (a list per entry) or ours (a dict per layer)
        if node is not None and isinstance(spec, (list, tuple)):  # another pytree node (a KV cache): specs per child
            children = node.flatten_fn(value)[0]
            return type(spec)(walk(v, s, f"{where}[{i}]") for i, (v, s) in enumerate(zip(children, spec)))
        return spec

    if isinstance(dynamic_shapes, Mapping):
        unknown = [k for k in dynamic_shapes if k not in bound]
        if unknown:
            raise DynamicShapesError(f"dynamic_shapes names {unknown}, which are not parameters of forward ({list(bound)})")
        converted: Any = {k: walk(v, dynamic_shapes.get(k), f"[{k!r}]") for k, v in bound.items()}
    elif isinstance(dynamic_shapes, (list, tuple)):
        values = list(bound.values())
        if len(dynamic_shapes) > len(values) and not _takes_var_positional(forward):
            raise DynamicShapesError(f"dynamic_shapes gives {len(dynamic_shapes)} specs, but forward takes {len(values)} "
                                     f"inputs ({list(bound)}): one spec per input, in order (None for an input "
                                     f"with no dynamic dim), or a dict keyed by their names")  # fmt: skip
        converted = type(dynamic_shapes)(walk(v, s, f"[{i}]") for i, (v, s) in enumerate(zip(values, dynamic_shapes)))
    else:
        raise DynamicShapesError(f"dynamic_shapes must be a dict, tuple or list, got {type(dynamic_shapes).__name__}")
    dim_names = {(i, axis): name for i, x in enumerate(leaves) for axis, name in names.get(id(x), {}).items()}
    index = {id(x): i for i, x in enumerate(leaves)}
    ones = [RequestedDim(where, index[id(t)], axis, m) for where, t, axis, m in size_one if id(t) in index]
    dims = [RequestedDim(where, index[id(t)], axis, m) for where, t, axis, m in requested if id(t) in index]
    return DynamicSpec(converted, dim_names, ones, dims)


def became_static(graph_inputs: list[Any], requested: list[RequestedDim]) -> list[tuple[RequestedDim, int]]:
    """The dims marked dynamic that are a constant in the exported graph's inputs (one per
    tensor input, flattened), with that constant."""
    static = []
    for dim in requested:
        if dim.tensor_index < len(graph_inputs):
            shape = graph_inputs[dim.tensor_index].shape
            if shape is not None and dim.axis < len(shape) and isinstance(shape[dim.axis], int):
                static.append((dim, shape[dim.axis]))
    return static


def specialising_guards(program: torch.export.ExportedProgram, axis: int, size: int) -> list[str]:
    """Where torch.export fixed an input's size on `axis` to `size`: for each guard `s == size`
    that it recorded on a symbol made for that axis of an input, torch's name of the size and the
    line that added the guard (the model's code, or torch's where no model frame made it)."""
    import sympy
    from torch._dynamo.source import TensorProperty

    shape_env = _shape_env(program)
    if shape_env is None:
        return []
    found: list[str] = []
    for guard in shape_env.guards:
        if not isinstance(guard.expr, sympy.Eq) or len(guard.expr.free_symbols) != 1:
            continue
        symbol = next(iter(guard.expr.free_symbols))
        if shape_env.replacements.get(symbol) != size:
            continue
        sources = [s for s in shape_env.var_to_sources.get(symbol, [])
                   if getattr(s, "prop", None) is TensorProperty.SIZE and getattr(s, "idx", None) == axis]
        if not sources:
            continue
        loc = guard.sloc.framework_loc
        where = f"{loc.filename}:{loc.lineno} in {loc.name}" if isinstance(loc, traceback.FrameSummary) else str(guard.sloc)
        text = f"{sources[0].name} == {size} at {where}"
        if text not in found:
            found.append(text)
    return found


def _shape_env(program: torch.export.ExportedProgram) -> Any:
    from torch._subclasses.fake_tensor import FakeTensor

    vals = (n.meta.get("val") for n in program.graph.nodes if n.op == "placeholder")
    fake = next((v for v in vals if isinstance(v, FakeTensor)), None)
    return fake.fake_mode.shape_env if fake is not None else None


def path_guards(program: torch.export.ExportedProgram) -> list[str]:
    """torch.export's guards on input sizes that choose the model's path and that the ONNX model's
    inputs do not show: those with a floor division or a remainder (focalnet's even patch count,
    dinov2's patch count of the sample, mobilevit's patch grid fixed by `int(math.ceil(...))`)
    and inequalities between sizes. Equalities without them are dims torch made equal or static,
    which the ONNX inputs show already. A guard added by a line outside torch (the model's code)
    names that line, and those come first."""
    return [text for _, text, _ in path_conditions(program)]


def path_conditions(program: torch.export.ExportedProgram) -> list[tuple[Any, str, bool]]:
    """`path_guards` as (sympy condition over the inputs' size symbols, its text, whether it has a
    floor division or a remainder)."""
    import sympy
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import ShapeGuardPythonPrinter

    shape_env = _shape_env(program)
    if shape_env is None:
        return []
    inputs = {v for v, sources in shape_env.var_to_sources.items() if not any(isinstance(x, ConstantSource) for x in sources)}
    printer = ShapeGuardPythonPrinter(shape_env.var_to_sources, lambda x: x.name, shape_env.var_to_sources)
    in_model: list[tuple[Any, str, bool]] = []
    in_torch: list[tuple[Any, str, bool]] = []
    seen: set[str] = set()
    for guard in shape_env.guards:
        expr = guard.expr
        if not expr.free_symbols or not expr.free_symbols <= inputs:
            continue
        path = expr.has(sympy.Mod, sympy.floor) or any(type(f).__name__ in ("FloorDiv", "Mod", "PythonMod") for f in expr.atoms(sympy.Function))
        if isinstance(expr, sympy.Eq) and not path:
            continue
        if not isinstance(expr, sympy.Eq) and len(expr.free_symbols) < 2 and not path:
            continue  # a range: the dim's bounds
        text = printer.doprint(expr)
        if "L['self']" in text or text in seen:
            continue
        seen.add(text)
        loc = guard.sloc.framework_loc
        if isinstance(loc, traceback.FrameSummary) and not loc.filename.startswith(_TORCH_DIR):
            in_model.append((expr, f"{text} (at {loc.filename}:{loc.lineno} in {loc.name})", path))
        else:
            in_torch.append((expr, text, path))
    return in_model + in_torch


_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep


def _is_static(spec: Any) -> bool:
    return spec is Dim.STATIC or isinstance(spec, int)


def _takes_var_positional(forward: Any) -> bool:
    try:
        return any(p.kind is p.VAR_POSITIONAL for p in inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        return True  # no signature to say


def _bind(forward: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """forward's parameters -> the given values (positional ones by name)."""
    try:
        return dict(inspect.signature(forward).bind(*args, **kwargs).arguments)
    except (TypeError, ValueError):
        return {**{f"arg{i}": a for i, a in enumerate(args)}, **kwargs}


def from_dynamic_axes(forward: Any, args: tuple, kwargs: dict, dynamic_axes: Mapping[str, Any],
                      input_names: Sequence[str] | None = None) -> dict[str, Any]:
    """dynamic_shapes keyed by forward's parameter names, with string dim names, from
    torch.onnx's dynamic_axes (see the module docstring)."""
    leaves = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
    bound = _bind(forward, args, kwargs)
    by_leaf: dict[int, Any] = {}
    parameter_leaves = {name: [x for x in pytree.tree_leaves(v) if isinstance(x, torch.Tensor)] for name, v in bound.items()}
    for name, axes in dynamic_axes.items():
        if input_names is not None and name in input_names:
            index = list(input_names).index(name)
            if index >= len(leaves):
                raise DynamicShapesError(f"dynamic_axes names input {name!r}, number {index} of input_names, but the model takes {len(leaves)} tensors")
            tensors = [leaves[index]]
        elif name in parameter_leaves:
            tensors = parameter_leaves[name]
        else:
            continue  # an output's axes: they follow from the inputs'
        if isinstance(axes, Mapping):
            spec = {int(axis): str(dim) for axis, dim in axes.items()}
        else:
            spec = {int(axis): f"{name}_dim_{axis}" for axis in axes}
        for tensor in tensors:
            by_leaf[id(tensor)] = spec
    return {name: pytree.tree_map(lambda x: by_leaf.get(id(x)) if isinstance(x, torch.Tensor) else None, value)
            for name, value in bound.items()}
