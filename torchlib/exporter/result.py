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
                 timings: dict[str, float], diagnostics: list[str], capture_strategy: str = "non-strict"):
        self.model_proto = model_proto
        self.capture_strategy = capture_strategy  # "non-strict", "strict", "draft_export" or "ExportedProgram"
        self.model = model
        self.exported_program = exported_program
        self.timings = timings
        self.diagnostics = diagnostics
        self._session: ort.InferenceSession | None = None

    @property
    def written_inputs(self) -> list[str]:
        """Buffers and user inputs the model writes (`self.buf.add_(1)`, BatchNorm's running
        statistics in train mode): their new values are the model's first outputs, in this
        order, before the outputs of forward (the order of torch.export's graph signature)."""
        for prop in self.model_proto.metadata_props:
            if prop.key == "torchlib.written_inputs":
                return prop.value.split(",")
        return []

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

    def __call__(self, *args: Any, **kwargs: Any) -> list[torch.Tensor]:
        """Run in onnxruntime; returns the outputs as torch tensors, in the model's output order."""
        session = self.session()
        results = session.run(None, self._feeds(args, kwargs))
        return [numpy_to_torch(r) for r in results]

    def verify(self, *args: Any, **kwargs: Any) -> list[OutputDiff]:
        """Max absolute and relative difference of each output against torch eager."""
        skip = len(self.written_inputs)
        actual = self(*args, **kwargs)[skip:]  # first: torch may write into the inputs
        with torch.no_grad():
            expected = [x for x in pytree.tree_leaves(self.model(*args, **kwargs)) if isinstance(x, torch.Tensor)]
        names = [o.name for o in self.model_proto.graph.output][skip:]
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
