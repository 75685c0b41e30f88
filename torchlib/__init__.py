"""torchlib: every ATen operator as an ONNX function, and an exporter built on torch.export.

`import torchlib` is cheap; the function library loads on first use of the registry or export.
"""

from __future__ import annotations

from typing import Any

__all__ = ["export", "get_registry"]


def get_registry() -> Any:
    """The filled registry (imports every ops module once)."""
    import torchlib.ops  # noqa: F401
    from torchlib.registry import REGISTRY

    return REGISTRY


def export(*args: Any, **kwargs: Any) -> Any:
    """torchlib.export(model, args, kwargs=None, dynamic_shapes=None, opset=23) -> ExportResult"""
    from torchlib.exporter import export as _export

    return _export(*args, **kwargs)
