"""ExportResult: the ONNX model, and running and verifying it against torch."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import torch
import torch.utils._pytree as pytree

from graph_builder.opset import numpy_to_torch, torch_to_numpy

_TWO_GB = 2**31


@dataclasses.dataclass
class OutputDiff:
    name: str
    max_abs: float
    max_rel: float
    dtype_ok: bool
    shape_ok: bool

    def ok(self, atol: float = 1e-4, rtol: float = 1e-3) -> bool:
        return self.dtype_ok and self.shape_ok and (self.max_abs <= atol or self.max_rel <= rtol)


class ExportResult:
    def __init__(self, model_proto: onnx.ModelProto, model: torch.nn.Module, exported_program: Any,
                 timings: dict[str, float], diagnostics: list[str]):
        self.model_proto = model_proto
        self.model = model
        self.exported_program = exported_program
        self.timings = timings
        self.diagnostics = diagnostics
        self._session: ort.InferenceSession | None = None

    @property
    def node_count(self) -> int:
        return len(self.model_proto.graph.node)

    def save(self, path: str | os.PathLike[str], external_data: bool | None = None) -> None:
        """Write the model; weights go to `<path>.data` when the model is over 2 GB (or when
        external_data=True)."""
        path = os.fspath(path)
        size = sum(t.ByteSize() for t in self.model_proto.graph.initializer)
        if external_data is None:
            external_data = size >= _TWO_GB - 2**24
        if external_data:
            proto = onnx.ModelProto()
            proto.CopyFrom(self.model_proto)
            onnx.save_model(proto, path, save_as_external_data=True, all_tensors_to_one_file=True,
                            location=os.path.basename(path) + ".data", size_threshold=1024)
        else:
            onnx.save_model(self.model_proto, path)

    def session(self, threads: int = 0) -> ort.InferenceSession:
        if self._session is None:
            options = ort.SessionOptions()
            if threads:
                options.intra_op_num_threads = threads
            options.log_severity_level = 3
            data = self.model_proto.SerializeToString() if self.model_proto.ByteSize() < _TWO_GB else None
            if data is None:
                raise ValueError("model over 2 GB: save() it and open the file with onnxruntime")
            self._session = ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])
        return self._session

    def _feeds(self, args: tuple, kwargs: dict) -> dict[str, np.ndarray]:
        leaves = [x for x in pytree.tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
        names = [i.name for i in self.model_proto.graph.input]
        if len(leaves) != len(names):
            raise ValueError(f"the model takes {len(names)} tensor inputs ({names}), got {len(leaves)}")
        return {n: torch_to_numpy(x) for n, x in zip(names, leaves)}

    def run(self, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        """Run in onnxruntime; the graph's outputs as a flat list of torch tensors, in order."""
        session = self.session()
        results = session.run(None, self._feeds(args, kwargs))
        return [numpy_to_torch(r) for r in results]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run in onnxruntime and return what the model returns: a tensor, or the same tuple /
        list / dict structure, with torch tensors (and the constants torch.export kept)."""
        return self._structure(self.run(*args, **kwargs))

    def _structure(self, flat: list[torch.Tensor]) -> Any:
        ep = self.exported_program
        specs = getattr(getattr(ep, "graph_signature", None), "output_specs", None)
        out_spec = getattr(getattr(ep, "call_spec", None), "out_spec", None)
        if specs is None or out_spec is None:
            return flat
        graph_outputs = [s for s in specs if type(s.arg).__name__ != "ConstantArgument"]
        if len(graph_outputs) != len(flat):
            return flat
        results = iter(flat)
        leaves: list[Any] = []
        for spec in specs:
            value = spec.arg.value if type(spec.arg).__name__ == "ConstantArgument" else next(results)
            if spec.kind.name == "USER_OUTPUT":
                if type(spec.arg).__name__ in ("SymIntArgument", "SymFloatArgument", "SymBoolArgument"):
                    value = value.item()
                leaves.append(value)
        try:
            return pytree.tree_unflatten(leaves, out_spec)
        except (ValueError, TypeError):
            return leaves

    def rename_outputs(self, names: list[str]) -> None:
        """Give the graph's outputs these names, in order (like torch.onnx's output_names)."""
        graph = self.model_proto.graph
        if len(names) > len(graph.output):
            raise ValueError(f"{len(names)} output names for a model with {len(graph.output)} outputs "
                             f"({', '.join(o.name for o in graph.output)})")
        taken = {v.name for v in graph.input} | {t.name for t in graph.initializer}
        renames = {}
        for output, name in zip(graph.output, names):
            if name in taken:
                raise ValueError(f"output name {name!r} is already the name of an input or initializer")
            renames[output.name] = name
        for node in graph.node:
            node.input[:] = [renames.get(n, n) for n in node.input]
            node.output[:] = [renames.get(n, n) for n in node.output]
        for v in list(graph.output) + list(graph.value_info):
            v.name = renames.get(v.name, v.name)
        self._session = None

    def __repr__(self) -> str:
        def describe(v: Any) -> str:
            t = v.type.tensor_type
            dtype = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type).name if t.elem_type else "?"
            dims = ",".join(d.dim_param or str(d.dim_value) for d in t.shape.dim) if t.HasField("shape") else "?"
            return f"{v.name}: {dtype}[{dims}]"

        graph = self.model_proto.graph
        opset = next((o.version for o in self.model_proto.opset_import if o.domain in ("", "ai.onnx")), "?")
        weights = sum(t.ByteSize() for t in graph.initializer)
        return (f"ExportResult(inputs=[{', '.join(describe(v) for v in graph.input)}], "
                f"outputs=[{', '.join(describe(v) for v in graph.output)}], nodes={len(graph.node)}, "
                f"opset={opset}, initializers={len(graph.initializer)} ({weights / 1e6:.1f} MB))")

    def verify(self, *args: Any, **kwargs: Any) -> list[OutputDiff]:
        """Max absolute and relative difference of each output against torch eager."""
        with torch.no_grad():
            expected = [x for x in pytree.tree_leaves(self.model(*args, **kwargs)) if isinstance(x, torch.Tensor)]
        actual = self.run(*args, **kwargs)
        names = [o.name for o in self.model_proto.graph.output]
        diffs = []
        for name, e, a in zip(names, expected, actual):
            shape_ok = tuple(e.shape) == tuple(a.shape)
            dtype_ok = e.dtype == a.dtype
            if shape_ok and e.numel():
                e64 = e.detach().to(torch.float64) if not e.is_complex() else e.detach().abs().to(torch.float64)
                a64 = a.to(torch.float64) if not a.is_complex() else a.abs().to(torch.float64)
                abs_diff = (e64 - a64).abs()
                finite = torch.isfinite(abs_diff)
                same_nonfinite = bool(((e64 == a64) | (e64.isnan() & a64.isnan()) | finite).all())
                max_abs = float(abs_diff[finite].max()) if finite.any() else 0.0
                if not same_nonfinite:
                    max_abs = float("inf")
                max_rel = float((abs_diff[finite] / e64.abs()[finite].clamp_min(1e-12)).max()) if finite.any() else 0.0
            else:
                max_abs = max_rel = 0.0 if shape_ok else float("inf")
            diffs.append(OutputDiff(name, max_abs, max_rel, dtype_ok, shape_ok))
        if len(expected) != len(actual):
            raise AssertionError(f"torch gives {len(expected)} tensor outputs, the ONNX model {len(actual)}")
        return diffs
