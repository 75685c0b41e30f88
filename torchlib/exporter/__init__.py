"""The exporter: capture (torch.export) -> registry -> GraphBuilder -> ONNX."""

from torchlib.exporter.capture import CaptureError
from torchlib.exporter.dynamic_shapes import DynamicShapesError
from torchlib.exporter.export import ExportError, UnsupportedOpsError, export, translate
from torchlib.exporter.onnx_compat import onnx_export
from torchlib.exporter.result import Differences, ExportResult, OutputDiff, StaleWeightsError
from torchlib.exporter.self_check import SelfCheckError

__all__ = ["CaptureError", "Differences", "DynamicShapesError", "ExportError", "ExportResult", "OutputDiff", "SelfCheckError",
           "StaleWeightsError", "UnsupportedOpsError", "export", "onnx_export", "translate"]
