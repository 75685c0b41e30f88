"""`torch.onnx.is_in_onnx_export()` is True while torchlib exports, as while torch.onnx does:
models branch on it (to skip a Python-side check, or to take an export-friendly path)."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def onnx_exporting() -> Iterator[None]:
    """Inside, torch.onnx.is_in_onnx_export() returns True. It reads the flag torch.onnx's own
    exporter sets (`torch.onnx._internal.exporter._flags._is_onnx_exporting`); where a torch
    lacks that module, the function itself is replaced for the duration."""
    flags: Any  # a private module of torch: its attributes vary by version
    try:
        flags = importlib.import_module("torch.onnx._internal.exporter._flags")
    except ImportError:
        flags = None
    if flags is not None and hasattr(flags, "_is_onnx_exporting"):
        previous = flags._is_onnx_exporting
        flags._is_onnx_exporting = True
        try:
            yield
        finally:
            flags._is_onnx_exporting = previous
        return
    import torch.onnx

    original = torch.onnx.is_in_onnx_export
    torch.onnx.is_in_onnx_export = lambda: True
    try:
        yield
    finally:
        torch.onnx.is_in_onnx_export = original
