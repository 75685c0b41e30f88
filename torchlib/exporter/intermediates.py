"""verify(compare_intermediates=True): every FX node's torch value against the ONNX value it
became, the first node that differs, and a one-node repro of it (docs/debugging.md)."""

from __future__ import annotations

import dataclasses
import operator
import os
from typing import Any

import onnx
import onnxruntime as ort
import torch
import torch.utils._pytree as pytree

from graph_builder.opset import numpy_to_torch
from torchlib.exporter.hf_cache import contains_cache, registered
from torchlib.exporter.source import module_path, source_line


@dataclasses.dataclass
class NodeMismatch:
    """The first FX node (graph order) whose ONNX value differs from torch's beyond tolerance."""

    node: str  # the FX node's name
    onnx_value: str  # the ONNX value it became
    aten_op: str  # e.g. aten.gelu.default (for a getitem: the op whose output it takes)
    module: str  # nn_module_stack path, '' for the root module
    source: str  # the user's source line ('file.py:12 in forward: y = ...')
    inputs: list[str]  # dtype and shape of each tensor input
    diff: Any  # the OutputDiff: max_abs, max_rel, scale, tolerance

    def __str__(self) -> str:
        d = self.diff
        what = (f"shape {'ok' if d.shape_ok else 'differs'}, dtype {'ok' if d.dtype_ok else 'differs'}"
                if not (d.shape_ok and d.dtype_ok) else f"max abs {d.max_abs:.3g} (scale {d.scale:.3g}), max rel {d.max_rel:.3g}")
        return (f"FX node {self.node!r} ({self.aten_op}), ONNX value {self.onnx_value!r}\n"
                f"  module: {self.module or '<root>'}\n  source: {self.source or '<unknown>'}\n"
                f"  inputs: {', '.join(self.inputs) or 'none'}\n"
                f"  {what}; tolerance atol {d.tolerance[0]:g} x scale or rtol {d.tolerance[1]:g}")


@dataclasses.dataclass
class IntermediateReport:
    """What compare_intermediates found: `mismatch` is None when every compared node agrees."""

    compared: int  # FX nodes compared with their ONNX value
    optimized_away: list[str]  # FX nodes (tensors) whose value the optimizer fused or folded away: not compared
    mismatch: NodeMismatch | None
    repro: str | None = None  # the repro script written (repro_dir)

    @property
    def ok(self) -> bool:
        return self.mismatch is None

    def __str__(self) -> str:
        head = f"{self.compared} FX nodes compared, {len(self.optimized_away)} fused or optimized away (not compared)"
        if self.mismatch is None:
            return f"{head}: all within tolerance"
        repro = f"\n  repro: python {self.repro}" if self.repro else ""
        return f"{head}; first node beyond tolerance:\n{self.mismatch}{repro}"


class _Recorder(torch.fx.Interpreter):
    """Runs the captured program, keeping a copy of every node's tensor value."""

    def __init__(self, module: torch.fx.GraphModule):
        super().__init__(module)
        self.values: dict[str, Any] = {}

    def run_node(self, n: torch.fx.Node) -> Any:
        value = super().run_node(n)
        self.values[n.name] = pytree.tree_map_only(torch.Tensor, lambda t: t.detach().clone(), value)
        return value


def _program_inputs(result: Any, args: tuple, kwargs: dict) -> list[Any]:
    """The flat inputs of the program's graph: weights, constants, then the user's inputs."""
    ep = result.exported_program
    args, kwargs = result._bind(args, kwargs)
    with registered(contains_cache((args, kwargs))):
        user = iter(pytree.tree_leaves((args, kwargs)))
    state, constants = ep.state_dict, ep.constants
    flat = []
    for spec in ep.graph_signature.input_specs:
        kind = spec.kind.name
        if kind == "USER_INPUT":
            flat.append(next(user))
        elif spec.target in state:
            flat.append(state[spec.target])
        else:
            flat.append(constants[spec.target])
    return flat


def compare_intermediates(result: Any, args: tuple, kwargs: dict, repro_dir: str | os.PathLike[str] | None) -> IntermediateReport:
    from torchlib.exporter.result import compare

    ep = result.exported_program
    feeds = result._feeds(args, kwargs)
    recorder = _Recorder(ep.graph_module)
    with torch.no_grad():
        recorder.run(*_program_inputs(result, args, kwargs))
    torch_values = recorder.values
    nodes = [n for n in ep.graph.nodes if n.op == "call_function"]
    tensors = [n for n in nodes if isinstance(torch_values.get(n.name), torch.Tensor)]
    checked = [n for n in tensors if n.name in result.fx_to_onnx and not torch_values[n.name].is_complex()]
    away = [n.name for n in tensors if n.name not in result.fx_to_onnx]

    proto = onnx.ModelProto()
    proto.CopyFrom(result.model_proto)
    present = {o.name for o in proto.graph.output}
    extra = [result.fx_to_onnx[n.name] for n in checked]
    proto.graph.output.extend(onnx.ValueInfoProto(name=v) for v in dict.fromkeys(extra) if v not in present)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(proto.SerializeToString(), options, providers=["CPUExecutionProvider"])
    wanted = list(dict.fromkeys(extra))
    onnx_values = dict(zip(wanted, session.run(wanted, feeds)))

    report = IntermediateReport(len(checked), away, None)
    for n in checked:  # graph order is a topological order
        diff = compare(n.name, torch_values[n.name], numpy_to_torch(onnx_values[result.fx_to_onnx[n.name]]))
        if not diff.ok():
            op_node = n.args[0] if n.target is operator.getitem else n
            report.mismatch = NodeMismatch(
                n.name, result.fx_to_onnx[n.name], str(op_node.target), module_path(n), source_line(n),
                [f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}" for t in _inputs(op_node, torch_values)
                 if isinstance(t, torch.Tensor)], diff)
            if repro_dir is not None:
                report.repro = write_repro(op_node, torch_values, repro_dir)
            break
    return report


def _inputs(node: torch.fx.Node, values: dict[str, Any]) -> list[Any]:
    return pytree.tree_leaves(_recorded_args(node, values))


def _recorded_args(node: torch.fx.Node, values: dict[str, Any]) -> tuple[Any, Any]:
    return pytree.tree_map_only(torch.fx.Node, lambda a: values[a.name], (node.args, node.kwargs))


_REPRO = '''"""One-node repro written by torchlib's verify(compare_intermediates=True): FX node {node!r},
{op}, from {source}.
Runs the op alone on the recorded inputs (inputs.pt), exports it and compares it with torch.
Exported with functions=... of your own? Call main(functions=...) with the same ones."""

import os
import sys

import torch
import torch.utils._pytree as pytree

import torchlib

OP = "{op}"
HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    saved = torch.load(os.path.join(HERE, "inputs.pt"), weights_only=False)
    leaves, spec = pytree.tree_flatten((saved["args"], saved["kwargs"]))
    positions = [i for i, x in enumerate(leaves) if isinstance(x, torch.Tensor)]
    target = torch.ops
    for part in OP.split("."):
        target = getattr(target, part)

    class Repro(torch.nn.Module):
        def forward(self, *tensors):
            filled = list(leaves)
            for i, t in zip(positions, tensors):
                filled[i] = t
            args, kwargs = pytree.tree_unflatten(filled, spec)
            return target(*args, **kwargs)

    return Repro(), tuple(leaves[i] for i in positions)


def main(functions=None):
    """Export the op alone and compare: 1 when the ONNX model differs from torch, else 0."""
    model, inputs = load()
    result = torchlib.export(model, inputs, functions=functions, check=False)
    diffs = result.verify(*inputs)
    for d in diffs:
        print(f"{{d.name}}: max abs {{d.max_abs:.3g}}, max rel {{d.max_rel:.3g}}, {{'ok' if d.ok() else 'MISMATCH'}}")
    return 0 if all(d.ok() for d in diffs) else 1


if __name__ == "__main__":
    sys.exit(main())
'''


def write_repro(node: torch.fx.Node, values: dict[str, Any], directory: str | os.PathLike[str]) -> str:
    """repro.py and inputs.pt in `directory`: the node's op called alone on its recorded inputs."""
    os.makedirs(directory, exist_ok=True)
    args, kwargs = _recorded_args(node, values)
    torch.save({"args": args, "kwargs": kwargs}, os.path.join(directory, "inputs.pt"))
    path = os.path.join(directory, "repro.py")
    with open(path, "w") as f:
        f.write(_REPRO.format(node=node.name, op=str(node.target), source=source_line(node) or "<unknown>"))
    return path
