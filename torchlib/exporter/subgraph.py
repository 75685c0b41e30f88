"""The bodies of higher-order ops: FX sub-GraphModules that the exporter translates on request.

torch.export records `torch.cond(pred, true_fn, false_fn, operands)` as a call of the
higher-order op `torch.ops.higher_order.cond`, whose branches are submodules of the graph
module read by `get_attr` nodes. The exporter turns each such node into a `Body`, and the
higher-order op's function (registered like any ATen function, e.g. under `higher_order::cond`
in torchlib/ops/control_flow.py) receives it as an argument. A Body translates its graph node
by node through the registry, the same way the exporter translates the main graph, into the
graph being built: inline, or into a subgraph builder the function made (an If branch, a Loop
or Scan body) whose formal inputs `input_like` creates.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
import torch.utils._pytree as pytree

from graph_builder import GraphBuilder, op, types
from graph_builder.evaluator import current_evaluator
from graph_builder.ir import Value
from graph_builder.opset import torch_to_numpy
from torchlib.exporter.errors import ExportError
from torchlib.registry import Registry

# translate(builder, node, env): the Value(s) of one FX node, its arguments looked up in env
NodeTranslator = Callable[[GraphBuilder, torch.fx.Node, dict], Any]


@dataclasses.dataclass
class Translator:
    """What translating a body needs: the registry, the names of the symbolic dims, the
    diagnostics list of the export, and the exporter's own node translation for a graph
    (`for_graph(fx_graph)` gives the function that translates one node of it). The exporter
    passes it in, so that this module needs nothing from the exporter loop above it."""

    registry: Registry
    renames: dict
    diagnostics: list[str]
    for_graph: Callable[[torch.fx.Graph], NodeTranslator]


class Body:
    """An FX GraphModule that a higher-order op calls (a branch of cond, the body of while_loop,
    scan, map, the region of wrap_with_autocast, ...), as the op's function receives it."""

    def __init__(self, module: torch.fx.GraphModule, name: str, translator: Translator):
        self.module = module
        self.name = name
        self._translator = translator
        self.placeholders = [n for n in module.graph.nodes if n.op == "placeholder"]

    def __repr__(self) -> str:
        return f"Body({self.name!r}, {len(self.placeholders)} inputs)"

    def input_like(self, builder: GraphBuilder, index: int) -> Value:
        """A formal input of `builder` (a Loop or Scan body) typed like the body's placeholder
        `index`: torch's dtype and (symbolic) shape. A SymInt placeholder is an INT64 scalar."""
        node = self.placeholders[index]
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            return builder.input(node.name, *fx_type(val, self._translator.renames))
        if isinstance(val, (int, torch.SymInt)):
            return builder.input(node.name, types.INT64, [])
        if isinstance(val, (bool, torch.SymBool)):
            return builder.input(node.name, types.BOOL, [])
        if isinstance(val, (float, torch.SymFloat)):
            return builder.input(node.name, types.DOUBLE, [])
        raise TypeError(f"{self.name}: input {node.name!r} holds {type(val).__name__}, which cannot be a formal input of a subgraph")

    def inline(self, *args: Any, autocast: bool = False) -> list[Any]:
        """Translate the body into the graph being built (the current `with builder:`), its
        placeholders bound to `args` (Values of this graph or of a graph around it, Python
        values); returns the body's outputs, flattened. With autocast=True (an autocast
        region), each op's floating inputs are first cast to the floating dtype torch recorded
        for its result, the dtype autocast chose for it."""
        builder = current_evaluator()
        if not isinstance(builder, GraphBuilder):
            raise ExportError(f"{self.name}: the body of a higher-order op can only be translated inside a graph being built")
        if len(args) != len(self.placeholders):
            raise ExportError(f"{self.name} takes {len(self.placeholders)} inputs ({', '.join(n.name for n in self.placeholders)}), got {len(args)}")
        t = self._translator
        translate = t.for_graph(self.module.graph)
        env: dict[str, Any] = {n.name: a for n, a in zip(self.placeholders, args)}
        for node in self.module.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "get_attr":
                env[node.name] = attribute(builder, self.module, node, t)
            elif node.op == "call_function":
                # ATen ops only: a nested higher-order op passes its operands on unchanged
                node_env = _autocast_inputs(node, env) if autocast and hasattr(node.target, "_schema") else env
                env[node.name] = translate(builder, node, node_env)
            elif node.op == "output":
                return [_lookup(a, env) for a in pytree.tree_leaves(node.args[0])]
            else:
                raise ExportError(f"{self.name}: FX node {node.name} of kind {node.op!r} is not supported")
        raise ExportError(f"{self.name}: the graph has no output node")


def attribute(builder: GraphBuilder, root: torch.nn.Module, node: torch.fx.Node, translator: Translator) -> Any:
    """The value of a `get_attr` node: a Body for a submodule (a higher-order op's branch or
    body), a constant for a tensor attribute."""
    obj: Any = root
    target = str(node.target)  # a get_attr node's target: the attribute's dotted name
    for part in target.split("."):
        obj = getattr(obj, part)
    if isinstance(obj, torch.fx.GraphModule):
        return Body(obj, target, translator)
    if isinstance(obj, torch.Tensor):
        if isinstance(obj, torch._subclasses.FakeTensor):
            raise TypeError(f"get_attr {node.target!r} holds a fake tensor without data; pass the tensor as an input of the higher-order op")
        return builder.constant(torch_to_numpy(obj.detach()))
    raise TypeError(f"get_attr {node.target!r} holds a {type(obj).__name__}, which the exporter cannot translate")


def all_nodes(module: torch.fx.GraphModule) -> Iterator[torch.fx.Node]:
    """The nodes of the graph and of every submodule graph (the bodies of higher-order ops)."""
    for sub in module.modules():
        if isinstance(sub, torch.fx.GraphModule):
            yield from sub.graph.nodes


def _lookup(x: Any, env: dict) -> Any:
    return env[x.name] if isinstance(x, torch.fx.Node) else x


def _autocast_inputs(node: torch.fx.Node, env: dict) -> dict:
    """env with the node's floating Values cast to the one floating dtype torch recorded for
    its results (what autocast chose for the op); env itself when there is no such dtype."""
    results = [v for v in pytree.tree_leaves(node.meta.get("val")) if isinstance(v, torch.Tensor)]
    dtypes = {v.dtype for v in results if v.dtype.is_floating_point}
    if len(dtypes) != 1:
        return env
    target = types.from_torch(dtypes.pop())
    casts = {}
    for inp in node.all_input_nodes:
        v = env.get(inp.name)
        if isinstance(v, Value) and v.known_dtype.is_floating and v.dtype is not target:
            casts[inp.name] = op.Cast(v, to=target.onnx)
    return {**env, **casts} if casts else env


def fx_type(val: torch.Tensor, renames: dict) -> tuple[types.DType, list[int | str]]:
    """The ONNX dtype and shape of an FX node's fake tensor: ints, and the user's names for
    symbolic dims (a packed dtype's last dim counts its ONNX elements: types.onnx_shape)."""
    dtype = types.from_torch(val.dtype)
    dims: list[int | str] = []
    for d in types.onnx_shape(dtype, val.shape):
        if isinstance(d, int):
            dims.append(d)
        else:
            expr = d.node.expr
            try:
                dims.append(int(expr))
            except TypeError:
                dims.append(str(expr.xreplace(renames)) if renames else str(expr))
    return dtype, dims


def flat_values(values: Sequence[Any]) -> list[Any]:
    """A HOP's operand list (lists and tuples nested as torch gives them), flattened."""
    return list(pytree.tree_leaves(list(values)))
