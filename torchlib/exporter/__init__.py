"""The exporter: torch.export -> registry -> GraphBuilder -> ONNX."""

from torchlib.exporter.export import CaptureError, ExportError, UnsupportedOpsError, export, translate
from torchlib.exporter.result import ExportResult, OutputDiff

__all__ = ["CaptureError", "ExportError", "ExportResult", "OutputDiff", "UnsupportedOpsError", "export", "translate"]
