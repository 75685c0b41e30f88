"""torchvision's detection ops where its compiled library does not load: installed by `import torchlib`.

torchvision's wheels on the package registry are CUDA builds. Beside torch's CPU wheel (the one
constraints.txt pins) their compiled library (`torchvision/_C.so`) fails to load, and then
`import torchvision` itself fails ("operator torchvision::nms does not exist"); so do
transformers' model classes, which import torchvision whenever it is installed.

`install()` puts `Finder` first on `sys.meta_path`. It does nothing until torchvision is
imported, so `import torchlib` stays cheap (no torch). When torchvision's package runs:

1. if its own compiled ops load beside this torch (a torchvision built for it), they are loaded
   and used, and nothing else happens: the stand-ins never replace real ops;
2. otherwise `torchvision::nms`, `roi_align`, `roi_pool`, `ps_roi_align`, `ps_roi_pool` and
   `deform_conv2d` are defined, before torchvision's Python runs, with the torch ports of
   torchvision's CPU kernels (torchlib/conformance/torchvision_reference.py; correct, slow:
   Python loops), and after it runs torchvision's `_has_ops()` answers True, so that
   `torchvision.ops` and the detection models run eagerly and are captured by torch.export.

The stand-ins need torchlib imported before torchvision (or before the first use of a
transformers model class, which imports it). docs/detection.md says why this, and not a
torchvision pin, is the README environment's answer.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

PACKAGE = "torchvision"


class Finder(importlib.abc.MetaPathFinder):
    """Finds torchvision with the finders after it and hands its loader to `Loader`, until
    torchvision has been imported once."""

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> Any:
        if name != PACKAGE or name in sys.modules:
            return None
        for finder in sys.meta_path[sys.meta_path.index(self) + 1:] if self in sys.meta_path else []:
            find_spec = getattr(finder, "find_spec", None)
            spec = find_spec(name, path, target) if find_spec else None
            if spec is not None:
                if spec.loader is not None and spec.submodule_search_locations is not None:
                    spec.loader = Loader(spec.loader)
                return spec
        return None


class Loader(importlib.abc.Loader):
    """torchvision's own loader, with the stand-ins defined before its package runs (only where
    its compiled ops do not load) and handed to its Python after; then it steps aside."""

    def __init__(self, loader: Any):
        self.loader = loader

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, get_source, ...: torchvision's own
        return getattr(self.loader, name)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        from torchlib.conformance import torchvision_reference

        spec = module.__spec__
        folders = list(spec.submodule_search_locations or []) if spec else []
        if torchvision_reference.define(folders):
            warnings.warn("torchvision's compiled ops do not load beside this torch (a build for another torch or "
                          "CUDA): torchlib defined torch ports of torchvision::nms, roi_align, roi_pool, ps_roi_align, "
                          "ps_roi_pool and deform_conv2d instead (the results of its CPU kernels, slower). Install a "
                          "torchvision built for this torch to use its own (torchlib's docs/detection.md).",
                          UserWarning, stacklevel=2)  # fmt: skip
        self.loader.exec_module(module)
        torchvision_reference.attach()
        module.__loader__ = self.loader
        if spec is not None:
            spec.loader = self.loader
        uninstall()


def install() -> None:
    """Put the finder first on sys.meta_path, unless torchvision is imported already (then it
    loaded, with its own ops or this module's) or the finder is there."""
    if PACKAGE not in sys.modules and not any(isinstance(f, Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, Finder())


def uninstall() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, Finder)]
