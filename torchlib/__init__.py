"""torchlib: every ATen operator as an ONNX function, and an exporter built on torch.export.

`import torchlib` is cheap: torch, the exporter and the function library load on first use of
`torchlib.export`, `torchlib.onnx_export` or `torchlib.get_registry()`.

    result = torchlib.export(model, (x,), dynamic_shapes={"x": {0: "batch"}})
    result.save("model.onnx")
"""

from __future__ import annotations

from typing import Any

__all__ = ["export", "get_registry", "onnx_export"]


def get_registry() -> Any:
    """The filled registry (imports every ops module once)."""
    import torchlib.ops  # noqa: F401
    from torchlib.registry import REGISTRY

    return REGISTRY


def __getattr__(name: str) -> Any:
    # `torchlib.export` is the exporter's own function (so help() shows its parameters), imported
    # on first access: torch is not imported by `import torchlib`.
    if name == "export":
        from torchlib.exporter.export import export

        return export
    if name == "onnx_export":
        from torchlib.exporter.onnx_compat import onnx_export

        return onnx_export
    raise AttributeError(f"module 'torchlib' has no attribute {name!r}")
