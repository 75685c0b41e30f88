"""verify(..., compare_intermediates=True): every FX node's torch value against the ONNX value it
became, and the first node (in graph order) that differs beyond its dtype's tolerance."""

from __future__ import annotations

import copy
import dataclasses
import os
from typing import Any

import numpy as np
import torch
import torch.utils._pytree as pytree

from graph_builder import weights
from graph_builder.evaluator import run_session
from graph_builder.ir import COMPLEX_KEY, Graph, complex_from_real_view
from graph_builder.opset import numpy_to_torch
from torchlib.exporter.comparison import Differences, OutputDiff, compare, table
from torchlib.exporter.hf_cache import contains_cache, registered
from torchlib.exporter.repro import write_repro
from torchlib.exporter.source import module_path, source_line

OPTIMIZED = "optimized away, or rewritten by the optimizer (or inside a local function)"


@dataclasses.dataclass
class IntermediateDiff:
    """One FX node whose ONNX value differs from torch's beyond the tolerance of its dtype."""

    fx_node: str
    aten_op: str  # the FX node's target, e.g. aten.gelu.default
    onnx_value: str
    module: str  # dotted path of the innermost nn.Module ('' for the root)
    source: str  # 'file.py:12 in forward: y = self.act(x)'
    inputs: list[str]  # 'float32[2, 8]' per tensor input, in argument order
    diff: OutputDiff

    def __str__(self) -> str:
        d = self.diff
        what = ("shape differs" if not d.shape_ok else "dtype differs" if not d.dtype_ok
                else f"max abs {d.max_abs:.3g} (scale {d.scale:.3g}), max rel {d.max_rel:.3g}; "
                     f"tolerance atol {d.tolerance[0]:g} x scale or rtol {d.tolerance[1]:g}")
        return (f"first divergence at FX node {self.fx_node!r} ({self.aten_op}), ONNX value {self.onnx_value!r}\n"
                f"  module: {self.module or '<root>'}\n  source: {self.source or '<unknown>'}\n"
                f"  inputs: {', '.join(self.inputs) or '-'}\n  {what}")


@dataclasses.dataclass
class VerifyReport:
    """What verify(..., compare_intermediates=True) returns: the outputs' differences (as the
    plain call gives), the first differing node (None when every compared node agrees), each
    compared node's difference, the nodes not compared and why, and the repro's path."""

    outputs: Differences
    first_divergence: IntermediateDiff | None
    compared: dict[str, OutputDiff]
    not_compared: dict[str, str]
    repro: str | None = None

    def __str__(self) -> str:
        lines = [table(self.outputs)]
        lines.append(f"{len(self.compared)} FX nodes compared, {len(self.not_compared)} not compared")
        lines.append(str(self.first_divergence) if self.first_divergence else "no node differs beyond tolerance")
        if self.repro:
            lines.append(f"repro: python {self.repro}")
        return "\n".join(lines)


class _Recorder(torch.fx.Interpreter):
    def __init__(self, module: torch.fx.GraphModule):
        super().__init__(module)
        self.values: dict[str, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        result = super().run_node(n)
        self.values[n.name] = result
        return result


def torch_values(ep: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """Every node's value when the captured program runs on (args, kwargs), in torch. It runs on
    copies of the weights and inputs: ops that write in place change neither."""
    flat = ep._graph_module_flat_inputs(args, kwargs)  # weights, buffers, constants, then user inputs
    flat = [x.detach().clone() if isinstance(x, torch.Tensor) else x for x in flat]
    recorder = _Recorder(ep.graph_module)
    with torch.no_grad():
        recorder.run(*flat)
    return recorder.values


def compare_intermediates(ep: Any, graph: Graph, fx_to_onnx: dict[str, list[str]], args: tuple, kwargs: dict,
                          feeds: dict[str, np.ndarray], outputs: Differences,
                          repro_dir: str | os.PathLike[str] | None = None) -> VerifyReport:
    """Each call_function node of the exported program `ep`, run in torch on (args, kwargs) (bound
    as the program was captured), against the ONNX values of `graph` it became (`fx_to_onnx`, as
    `ExportResult.fx_to_onnx`), run in onnxruntime on `feeds`. `outputs` are the outputs'
    differences, which the report carries."""
    with registered(contains_cache((args, kwargs))):  # a KV cache's tensors are inputs
        recorded = torch_values(ep, args, kwargs)
    produced = {v.name: v for node in graph.nodes for v in node.outputs if v is not None}
    inputs = {v.name for v in graph.inputs}
    pairs: list[tuple[torch.fx.Node, str, torch.Tensor]] = []
    not_compared: dict[str, str] = {}
    for node in ep.graph.nodes:
        if node.op != "call_function" or node.name not in fx_to_onnx:
            continue
        expected = [x for x in pytree.tree_leaves(recorded.get(node.name)) if isinstance(x, torch.Tensor)]
        names = fx_to_onnx[node.name]
        if isinstance(node.target, torch._ops.OpOverload) and torch.Tag.nondeterministic_seeded in node.target.tags:
            not_compared[node.name] = "random"
        elif not expected:
            not_compared[node.name] = "no tensor value"
        elif not names:
            not_compared[node.name] = OPTIMIZED
        elif len(expected) != len(names):
            not_compared[node.name] = f"{len(expected)} torch tensors, {len(names)} ONNX values"
        for name, value in zip(names, expected) if node.name not in not_compared else ():
            if name in produced and produced[name].dtype is not None or name in graph.initializers:
                pairs.append((node, name, value))
            elif name in inputs:
                not_compared.setdefault(node.name, "the graph's input itself")
            else:
                not_compared.setdefault(node.name, OPTIMIZED)
    actual = _onnx_values(graph, feeds, sorted({n for _, n, _ in pairs}))
    compared: dict[str, OutputDiff] = {}
    first = None
    for node, name, value in pairs:
        diff = compare(name, value, actual[name])
        if node.name not in compared or not diff.ok():
            compared[node.name] = diff
        if first is None and not diff.ok():
            first = IntermediateDiff(node.name, str(node.target), name, module_path(node), source_line(node),
                                     _describe_inputs(node), diff)
    report = VerifyReport(outputs, first, compared, not_compared)
    if first is not None and repro_dir is not None:
        node = next(n for n in ep.graph.nodes if n.name == first.fx_node)
        if isinstance(node.target, torch._ops.OpOverload):  # not operator.getitem and the like
            report.repro = write_repro(node, recorded, repro_dir)
    return report


def _onnx_values(graph: Graph, feeds: dict[str, np.ndarray], names: list[str]) -> dict[str, torch.Tensor]:
    """The graph's values of these names on `feeds`: initializers as they are, the others run in
    onnxruntime as extra outputs of a copy of the graph."""
    found = {n: graph.initializers[n].numpy() for n in names if n in graph.initializers}
    values = {v.name: v for node in graph.nodes for v in node.outputs if v is not None}
    run = copy.copy(graph)
    outputs = {v.name for v in graph.outputs}
    run.outputs = list(graph.outputs) + [values[n] for n in names if n not in outputs and n not in found]
    session = weights.ort_session(run)
    wanted = [v.name for v in run.outputs]
    found.update(zip(wanted, run_session(session, feeds, wanted)))
    complex_names = {v.name for v in run.outputs if COMPLEX_KEY in v.metadata}
    return {n: numpy_to_torch(complex_from_real_view(a) if n in complex_names else np.asarray(a)) for n, a in found.items()}


def _describe_inputs(node: torch.fx.Node) -> list[str]:
    described = []
    for arg in node.all_input_nodes:
        val = arg.meta.get("val")
        if isinstance(val, torch.Tensor):
            described.append(f"{arg.name}: {str(val.dtype).removeprefix('torch.')}{list(val.shape)}")
    return described
