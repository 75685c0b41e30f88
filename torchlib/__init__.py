"""torchlib: every ATen operator as an ONNX function, and an exporter built on torch.export.

`import torchlib` is cheap: torch, the exporter and the function library load on first use of
`torchlib.export`, `torchlib.onnx_export` or `torchlib.get_registry()`. It installs one import
hook: where torchvision's compiled ops do not load beside torch (its registry wheels are CUDA
builds), importing torchvision afterwards defines torch ports of them instead
(torchlib/torchvision_stand_ins.py).

    result = torchlib.export(model, (x,), dynamic_shapes={"x": {0: "batch"}})
    result.save("model.onnx")
"""

from __future__ import annotations

from typing import Any

from torchlib import torchvision_stand_ins

__all__ = ["export", "get_registry", "onnx_export"]

torchvision_stand_ins.install()


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
