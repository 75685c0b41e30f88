"""`python -m torchlib export MODULE:FACTORY -o model.onnx --verify` and `python -m torchlib demo`."""

from __future__ import annotations

import argparse
import importlib
import sys
import time
import warnings
from typing import Any

import torch

# torch.export's own deprecation chatter (pytree LeafSpec) says nothing about the user's model
warnings.filterwarnings("ignore", message=".*LeafSpec.*", category=FutureWarning)


def _load_factory(spec: str) -> Any:
    if ":" not in spec:
        raise SystemExit(f"expected MODULE:FACTORY, got {spec!r}")
    module_name, attr = spec.split(":", 1)
    sys.path.insert(0, ".")
    module = importlib.import_module(module_name)
    return getattr(module, attr)


def _unpack(made: Any) -> tuple[torch.nn.Module, tuple, dict]:
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise SystemExit("FACTORY() must return (model, args) or (model, args, kwargs)")
    model, args = made[0], made[1]
    kwargs = made[2] if len(made) == 3 else {}
    return model, args if isinstance(args, tuple) else (args,), kwargs


def export_main(argv: list[str]) -> int:
    from torchlib.exporter import export

    parser = argparse.ArgumentParser(prog="python -m torchlib export", description="Export a model to ONNX.")
    parser.add_argument("factory", help="MODULE:FACTORY; FACTORY() returns (model, args) or (model, args, kwargs)")
    parser.add_argument("-o", "--output", required=True, help="path of the .onnx file")
    parser.add_argument("--opset", type=int, default=23)
    parser.add_argument("--verify", action="store_true", help="run in onnxruntime and compare with torch")
    ns = parser.parse_args(argv)
    model, args, kwargs = _unpack(_load_factory(ns.factory)())
    result = export(model, args, kwargs, opset=ns.opset)
    result.save(ns.output)
    print(f"wrote {ns.output}: {result.node_count} nodes, exported in {result.timings['total']:.2f} s")
    for d in result.diagnostics:
        print("note:", d)
    if ns.verify:
        return _report_verify(result.verify(*args, **kwargs))
    return 0


def _report_verify(diffs: list[Any]) -> int:
    bad = 0
    for d in diffs:
        status = "ok" if d.ok() else "MISMATCH"
        bad += status != "ok"
        print(f"  {d.name}: max abs {d.max_abs:.2e}, max rel {d.max_rel:.2e}, dtype {'ok' if d.dtype_ok else 'DIFFERS'}, "
              f"shape {'ok' if d.shape_ok else 'DIFFERS'}: {status}")
    return 1 if bad else 0


def demo_main(argv: list[str]) -> int:
    from torchlib.exporter import export
    from torchlib.exporter.demo import DEMOS

    parser = argparse.ArgumentParser(prog="python -m torchlib demo", description="Export and verify the built-in demo models.")
    parser.add_argument("--output-dir", default=None, help="also save the .onnx files here")
    ns = parser.parse_args(argv)
    rows = []
    failed = 0
    for name, (factory, dynamic) in DEMOS.items():
        model, args = factory()
        start = time.perf_counter()
        result = export(model, args, dynamic_shapes=dynamic() if dynamic else None)
        seconds = time.perf_counter() - start
        diffs = result.verify(*args)
        ok = all(d.ok() for d in diffs)
        failed += not ok
        rows.append((name, max(d.max_abs for d in diffs), result.node_count, seconds, "ok" if ok else "MISMATCH"))
        if ns.output_dir:
            import os

            os.makedirs(ns.output_dir, exist_ok=True)
            result.save(os.path.join(ns.output_dir, f"{name}.onnx"))
    print(f"{'model':<12} {'max abs err':>12} {'nodes':>6} {'export s':>9}  verified")
    for name, err, nodes, seconds, status in rows:
        print(f"{name:<12} {err:>12.2e} {nodes:>6} {seconds:>9.2f}  {status}")
    return 1 if failed else 0
