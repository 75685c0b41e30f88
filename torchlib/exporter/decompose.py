"""An op with no function, decomposed on its own node.

`run_decompositions` re-traces the whole program, which costs more than `torch.export` itself.
When one node's op has no torchlib function (or writes its arguments in a way only
functionalization can express), the exporter traces torch's decomposition of just that node on
the node's fake inputs, under the ExportedProgram's fake mode and with its symbolic shapes, into
a small graph of ATen nodes, and translates those. Written arguments are cloned first and
returned, so the small graph is functional: it returns (the op's result, [the new value of
each written argument]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.utils._pytree as pytree

from torchlib.exporter.mutation import functional_variant, is_inplace_view, node_written_arguments


class NeedsWholeProgramDecomposition(Exception):
    """Raised while translating when a node can be handled only by `run_decompositions`; the
    message says which op and why (it lands in `ExportResult.diagnostics`)."""


class NodeDecomposition:
    """The decomposition of one FX node: `graph` takes the node's tensor arguments `inputs` (FX
    nodes, in order) and returns (result, [new values of `written`])."""

    def __init__(self, graph: torch.fx.Graph, inputs: list[torch.fx.Node], written: list[torch.fx.Node]):
        self.graph = graph
        self.inputs = inputs
        self.written = written


def _called(node: torch.fx.Node) -> Callable[..., Any]:
    """The function a call_function node calls (its target; other nodes name theirs by a string)."""
    if isinstance(node.target, str):
        raise TypeError(f"FX node {node.name!r} ({node.op} {node.target!r}) calls no function to decompose")
    return node.target


def decompose_node(node: torch.fx.Node, table: dict[Any, Any], fake_mode: Any) -> NodeDecomposition:
    """Trace torch's decomposition of `node` alone. Raises NeedsWholeProgramDecomposition when
    tracing fails or torch has no decomposition for the op."""
    flat, spec = pytree.tree_flatten((node.args, node.kwargs))
    tensor_positions = [i for i, a in enumerate(flat) if isinstance(a, torch.fx.Node) and _traceable(a)]
    values = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in flat]
    written_names = {name for _, name in node_written_arguments(node)}
    written_positions = _written_positions(node, flat, written_names)

    def run(*tensors: torch.Tensor) -> Any:
        full = list(values)
        for position, tensor in zip(tensor_positions, tensors):
            full[position] = tensor.clone() if position in written_positions else tensor
        args, kwargs = pytree.tree_unflatten(full, spec)
        result = _called(node)(*args, **kwargs)
        return result, [full[p] for p in written_positions]

    tensors = [values[p] for p in tensor_positions]
    own = _own_decomposition(node.target)
    if own is not None and node.target not in table:  # the op has a function, but not for this call
        table = {**table, node.target: own}
    graph = _trace(run, tensors, node, table, fake_mode, "has no torchlib function and its decomposition")
    if any(sub.op == "call_function" and sub.target is node.target for sub in graph.graph.nodes):
        raise NeedsWholeProgramDecomposition(f"{node.target} (FX node {node.name!r}) has no torchlib function and no torch decomposition")
    inputs = [flat[p] for p in tensor_positions]
    return NodeDecomposition(graph.graph, inputs, [flat[p] for p in written_positions])


def _own_decomposition(target: Any) -> Any:
    """torch's decomposition of `target`, which the exporter's table leaves out when the registry
    has a function for the op: a call that writes arguments its function cannot (a
    training-mode batch norm's running statistics) is decomposed all the same."""
    from torch._decomp import decomposition_table

    return decomposition_table.get(target)


def _written_positions(node: torch.fx.Node, flat: list[Any], written_names: set[str]) -> list[int]:
    """Positions in the flattened (args, kwargs) of the written tensor arguments."""
    schema = getattr(node.target, "_schema", None)
    if schema is None or not written_names:
        return []
    wanted = []
    for i, a in enumerate(schema.arguments):
        if a.name in written_names:
            arg = node.args[i] if i < len(node.args) else node.kwargs.get(a.name)
            if isinstance(arg, torch.fx.Node):
                wanted.append(arg)
    return [next(i for i, a in enumerate(flat) if a is w) for w in wanted]


def _write_inputs(node: torch.fx.Node, chain: list[torch.fx.Node], base: torch.fx.Node, resolve: Any) -> list[torch.fx.Node]:
    """What a write into a view of `base` reads: base first, then the other tensors the views and
    the write take (a view of the chain is made from base, not read)."""
    inputs: list[torch.fx.Node] = [base]
    for n in [*chain, node]:
        for a in n.all_input_nodes:
            a = resolve(a)
            if a not in inputs and a not in chain and _traceable(a):
                inputs.append(a)
    return inputs


def decompose_view_write(node: torch.fx.Node, chain: list[torch.fx.Node], base: torch.fx.Node, resolve: Any,
                         table: dict[Any, Any], fake_mode: Any) -> NodeDecomposition:
    """Trace a write into a view together with the view ops that made the view from `base` (the
    whole tensor): the small graph returns (the op's result, [the new value of base]).
    `resolve(n)` gives, for a node naming a view, the node that made it."""
    inputs = _write_inputs(node, chain, base, resolve)
    views = " -> ".join(str(v.target) for v in chain)
    specialising = [v for v in chain if v.target in _SPECIALISING_VIEWS]
    if specialising and any(isinstance(d, torch.SymInt) for d in base.meta["val"].shape):
        raise NeedsWholeProgramDecomposition(
            f"{node.target} (FX node {node.name!r}) writes into a view ({views}) of a tensor with dynamic dims, and "
            f"functionalizing {specialising[0].target} on its own fixes them to the sample's sizes")

    def run(*tensors: torch.Tensor) -> Any:
        values: dict[torch.fx.Node, Any] = dict(zip(inputs, tensors))
        values[base] = values[base].clone()

        def value(a: torch.fx.Node) -> Any:
            return values.get(resolve(a), a.meta.get("val"))

        for view in chain:
            args, kwargs = pytree.tree_map_only(torch.fx.Node, value, (view.args, view.kwargs))
            target = functional_variant(view.target) if is_inplace_view(view.target) else _called(view)
            values[view] = target(*args, **kwargs)
        args, kwargs = pytree.tree_map_only(torch.fx.Node, value, (node.args, node.kwargs))
        return _called(node)(*args, **kwargs), [values[base]]

    tensors = [n.meta["val"] for n in inputs]
    graph = _trace(run, tensors, node, table, fake_mode, f"writes into a view ({views}) and that write")
    return NodeDecomposition(graph.graph, inputs, [base])


# View ops whose functionalization, traced on its own, makes torch replace each dynamic size of
# the tensor by the sample's in the program's shared ShapeEnv (a write into `x.unbind(1)[2]`
# with a dynamic `x.shape[0]`): the small graph, and every node translated after it, would hold
# for the sample's sizes only.
_SPECIALISING_VIEWS = {torch.ops.aten.unbind.int}


# The view ops a write into a view is replayed through without tracing, and the op that puts the
# written view back into the tensor it was taken from: what functionalization writes for them.
_SCATTERS: dict[Any, Any] = {
    torch.ops.aten.slice.Tensor: torch.ops.aten.slice_scatter.default,
    torch.ops.aten.select.int: torch.ops.aten.select_scatter.default,
}


def replay_view_write(node: torch.fx.Node, chain: list[torch.fx.Node], base: torch.fx.Node, resolve: Any,
                      fake_mode: Any) -> NodeDecomposition | None:
    """The graph functionalization traces for a write into a chain of slices and selects of
    `base` (swin's `mask[h0:h1, w0:w1] = count`, `y[:, 0] = 5`, `cache[:, pos:].copy_(k)`),
    built directly: the views of base, the write's functional variant (`fill.Tensor` for
    `fill_.Tensor`) on the last one, then `slice_scatter` / `select_scatter` back up the chain;
    it returns (the written view, [the new base]), as `decompose_view_write` does without its
    clones. Tracing that graph with make_fx costs about 20 ms a write. None when the chain has
    another view op or the functional variant does not give the view's dtype and shape (an
    in-place op rounds into its argument's dtype): those are traced."""
    functional = functional_variant(node.target)
    if functional is None or not chain or fake_mode is None or any(v.target not in _SCATTERS for v in chain):
        return None
    inputs = _write_inputs(node, chain, base, resolve)
    graph = torch.fx.Graph()
    made: dict[torch.fx.Node, torch.fx.Node] = {}
    for a in inputs:
        made[a] = graph.placeholder(a.name)
        made[a].meta["val"] = a.meta["val"]

    def mapped(a: torch.fx.Node) -> Any:
        a = resolve(a)
        return made[a] if a in made else a.meta.get("val")

    def call(target: Any, args: tuple, kwargs: dict, val: Any) -> torch.fx.Node:
        made_node = graph.call_function(target, args, kwargs)
        made_node.meta.update({k: node.meta[k] for k in ("stack_trace", "nn_module_stack") if k in node.meta})
        made_node.meta["val"] = val
        return made_node

    for view in chain:
        args, kwargs = pytree.tree_map_only(torch.fx.Node, mapped, (view.args, view.kwargs))
        made[view] = call(view.target, args, kwargs, view.meta["val"])
    args, kwargs = pytree.tree_map_only(torch.fx.Node, mapped, (node.args, node.kwargs))
    fake_args, fake_kwargs = pytree.tree_map_only(torch.fx.Node, lambda n: n.meta["val"], (args, kwargs))
    view_val = chain[-1].meta["val"]
    try:
        with fake_mode:
            val = functional(*fake_args, **fake_kwargs)
    except Exception:  # torch raises many kinds here; the traced path gives the reason
        return None
    if not isinstance(val, torch.Tensor) or val.dtype != view_val.dtype or val.shape != view_val.shape:
        return None
    written = call(functional, args, kwargs, val)
    new = written
    for view, parent in zip(reversed(chain), [base, *chain][-2::-1]):
        new = call(_SCATTERS[view.target], (made[parent], new, *made[view].args[1:]), made[view].kwargs, parent.meta["val"])
    graph.output((written, [new]))
    return NodeDecomposition(graph, inputs, [base])


def _traceable(node: torch.fx.Node) -> bool:
    """A tensor, or a symbolic int (a dynamic size): an input of the small graph."""
    return isinstance(node.meta.get("val"), (torch.Tensor, torch.SymInt))


def _slice_copy(x: torch.Tensor, dim: int = 0, start: Any = None, end: Any = None, step: Any = 1) -> torch.Tensor:
    return torch.ops.aten.slice.Tensor(x, dim, start, end, step).clone()


def _select_copy(x: torch.Tensor, dim: int, index: Any) -> torch.Tensor:
    return torch.ops.aten.select.int(x, dim, index).clone()


def _split_copy(x: torch.Tensor, split_size: Any, dim: int = 0) -> list[torch.Tensor]:
    return [t.clone() for t in torch.ops.aten.split.Tensor(x, split_size, dim)]


def _split_with_sizes_copy(x: torch.Tensor, split_sizes: Any, dim: int = 0) -> list[torch.Tensor]:
    return [t.clone() for t in torch.ops.aten.split_with_sizes.default(x, split_sizes, dim)]


# Functionalization replays a view as its *_copy op. torch has no decomposition for these, and
# their C++ kernels read the storage offset, which a tensor with symbolic sizes has not ("Cannot
# call storage_offset() on tensor with symbolic sizes/strides"): every write into a slice of a
# tensor with a dynamic dim (`shifted[:, 1:] = ids[:, :-1]`, `a, b = x.split(2, 1); a.mul_(2)`)
# failed here and fell back to the whole-program decomposition, which specialised the dims. The
# view and a clone instead.
_VIEW_COPIES: dict[Any, Any] = {
    torch.ops.aten.slice_copy.Tensor: _slice_copy,
    torch.ops.aten.select_copy.int: _select_copy,
    torch.ops.aten.split_copy.Tensor: _split_copy,
    torch.ops.aten.split_with_sizes_copy.default: _split_with_sizes_copy,
}


def _trace(run: Any, tensors: list[torch.Tensor], node: torch.fx.Node, table: dict[Any, Any], fake_mode: Any,
           what: str) -> torch.fx.GraphModule:
    """make_fx of functionalize(run) on the fake `tensors`; the small graph's nodes point to the
    user's code of `node`. `what` starts the reason given when tracing fails."""
    from torch.fx.experimental.proxy_tensor import make_fx

    depth = torch._C._functorch.get_dynamic_layer_stack_depth()
    try:
        with fake_mode:
            graph = make_fx(torch.func.functionalize(run, remove="mutations_and_views"),
                            decomposition_table={**_VIEW_COPIES, **table})(*tensors)
    except Exception as e:  # torch raises many kinds here; the reason goes to the diagnostics
        # a node that failed inside a functorch transform (t5gemma2's `_vmap_increment_nesting`, from
        # the vmap of transformers' mask functions) leaves its layer on functorch's stack: every later
        # trace, run_decompositions' too, would run inside it ("expected non-functional tensor")
        torch._C._functorch.pop_dynamic_layer_stack_and_undo_to_depth(depth)
        first = str(e).splitlines()[0] if str(e) else ""
        raise NeedsWholeProgramDecomposition(
            f"{node.target} (FX node {node.name!r}) {what} could not be traced on its own ({type(e).__name__}: {first})"
        ) from e
    graph.graph.eliminate_dead_code()  # functionalization's unused reads (unbind's inverse reads `aten.size`)
    for sub in graph.graph.nodes:
        for key in ("stack_trace", "nn_module_stack"):
            if key in node.meta:
                sub.meta[key] = node.meta[key]
    return graph
