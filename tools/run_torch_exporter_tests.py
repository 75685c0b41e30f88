"""Run PyTorch's own ONNX exporter tests (test/onnx/exporter/ of a pytorch checkout) both ways:
with torch.onnx.export as it is (the reference), and with `torch.onnx.export(..., dynamo=True)`
routed to `torchlib.onnx_export`; report what passes each way.

    python tools/run_torch_exporter_tests.py /path/to/pytorch [test_api.py test_small_models_e2e.py ...] [-k EXPR]

The test files are read from the checkout given (nothing is downloaded, nothing is copied into
this repository); by default every test_*.py of its test/onnx/exporter/ runs. Each side runs in
its own pytest process, one file at a time, and writes a JUnit XML report that this script
compares: counts per side, then the tests that pass with the reference and fail with torchlib
(and the other way round), with the first line of each failure.

Routing: only calls with dynamo=True (torch.onnx.export's default) are routed. The arguments
torchlib.onnx_export takes are passed on; torch.onnx's others (fallback, training,
operator_export_type, ...) are dropped. What comes back is torch's own ONNXProgram over
torchlib's ModelProto (`torch.onnx.ONNXProgram(onnx_ir model, exported_program)`), so the
tests' checks (`onnx_program.model.graph`, `assert_onnx_program`, calling it) see torchlib's
graph; its `_capture_strategy` is named as torch names the strategy torchlib used. On both
sides, keywords the installed torch.onnx.export no longer takes (`fallback`, in test files older
than the torch installed) are dropped, so that a test file of another version still runs.
"""

from __future__ import annotations

import argparse
import inspect
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
STRATEGY_NAMES = {"non-strict": "TorchExportNonStrictStrategy", "strict": "TorchExportStrictStrategy",
                  "draft_export": "TorchExportDraftExportStrategy"}


def routed_export(original: Any) -> Any:
    """torch.onnx.export, with dynamo=True calls made by torchlib.onnx_export."""
    import onnx_ir
    import torch

    import torchlib

    accepted = set(inspect.signature(torchlib.onnx_export).parameters)

    def export(model: Any, args: Any = (), f: Any = None, **options: Any) -> Any:
        if not options.get("dynamo", True) or isinstance(model, (torch.jit.ScriptModule, torch.jit.ScriptFunction)):
            return original(model, args, f, **options)
        result = torchlib.onnx_export(model, args, f, **{k: v for k, v in options.items() if k in accepted})
        program = torch.onnx.ONNXProgram(onnx_ir.serde.deserialize_model(result.model_proto), result.exported_program)
        program._capture_strategy = STRATEGY_NAMES.get(result.capture_strategy)
        return program

    return export


def installed_keywords(original: Any) -> Any:
    """torch.onnx.export without the keywords the installed torch no longer takes (an older
    test file passes `fallback=`, which torch 2.13 removed): the same on both sides."""
    known = set(inspect.signature(original).parameters)

    def export(model: Any, args: Any = (), f: Any = None, **options: Any) -> Any:
        return original(model, args, f, **{k: v for k, v in options.items() if k in known})

    return export


class Plugin:
    """pytest plugin: for the whole session, torch.onnx.export drops the keywords the installed
    torch does not take, and (torchlib side) routes dynamo=True calls to torchlib."""

    def __init__(self, route: bool):
        self.route = route

    def pytest_configure(self, config: Any) -> None:
        import torch

        export = installed_keywords(torch.onnx.export)
        torch.onnx.export = routed_export(export) if self.route else export


def run_side(side: str, test_file: Path, junit: Path, extra: list[str]) -> None:
    """One pytest process for one side and one file (a crash in one file spares the others)."""
    command = [sys.executable, __file__, "--side", side, "--junit", str(junit), str(test_file), *extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    subprocess.run(command, cwd=test_file.parent, env=env, check=False)


def outcomes(junit: Path) -> dict[str, tuple[str, str]]:
    """test id -> (passed | failed | skipped, the first line of the failure)."""
    found: dict[str, tuple[str, str]] = {}
    if not junit.exists():
        return found
    for case in ElementTree.parse(junit).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        problem = next((c for c in case if c.tag in ("failure", "error")), None)
        skipped = next((c for c in case if c.tag == "skipped"), None)
        if problem is not None:
            message = (problem.get("message") or problem.text or "").strip().splitlines()
            found[name] = ("failed", message[0][:200] if message else "")
        elif skipped is not None:
            found[name] = ("skipped", (skipped.get("message") or "")[:200])
        else:
            found[name] = ("passed", "")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pytorch", type=Path, help="a pytorch checkout (its test/onnx/exporter/ is read)")
    parser.add_argument("files", nargs="*", help="test files of test/onnx/exporter/ (default: all test_*.py)")
    parser.add_argument("-k", dest="keyword", help="pytest -k expression")
    parser.add_argument("--side", choices=["reference", "torchlib"], help=argparse.SUPPRESS)
    parser.add_argument("--junit", type=Path, help=argparse.SUPPRESS)
    options, rest = parser.parse_known_args()
    extra = (["-k", options.keyword] if options.keyword else []) + rest
    if options.side:  # inside one side's process: `pytorch` is then the test file
        import pytest

        args = [str(options.pytorch), "-q", "-p", "no:cacheprovider", "--junitxml", str(options.junit), *extra]
        return int(pytest.main(args, plugins=[Plugin(route=options.side == "torchlib")]))
    folder = options.pytorch / "test" / "onnx" / "exporter"
    files = [folder / f for f in options.files] if options.files else sorted(folder.glob("test_*.py"))
    missing = [str(f) for f in files if not f.exists()]
    if missing:
        parser.error(f"not found: {', '.join(missing)}")
    results: dict[str, dict[str, tuple[str, str]]] = {"reference": {}, "torchlib": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for test_file in files:
            for side in results:
                junit = Path(tmp) / f"{side}-{test_file.stem}.xml"
                run_side(side, test_file, junit, extra)
                results[side].update({f"{test_file.name}::{k}": v for k, v in outcomes(junit).items()})
    print(f"\n{'file':<32} {'tests':>6} {'reference':>10} {'torchlib':>9}")
    for test_file in files:
        ids = [k for k in results["reference"] if k.startswith(test_file.name + "::")]
        passed = [sum(results[s].get(k, ("failed",))[0] == "passed" for k in ids) for s in results]
        print(f"{test_file.name:<32} {len(ids):>6} {passed[0]:>10} {passed[1]:>9}")
    ids = sorted(set(results["reference"]) | set(results["torchlib"]))
    total = [sum(results[s].get(k, ("failed",))[0] == "passed" for k in ids) for s in results]
    print(f"{'all':<32} {len(ids):>6} {total[0]:>10} {total[1]:>9}")
    for title, ours, theirs in (("pass with the reference, not with torchlib", "torchlib", "reference"),
                                ("pass with torchlib, not with the reference", "reference", "torchlib")):
        differ = [k for k in ids if results[theirs].get(k, ("",))[0] == "passed"
                  and results[ours].get(k, ("failed",))[0] != "passed"]
        print(f"\n{len(differ)} {title}:")
        for k in differ:
            print(f"  {k}\n      {results[ours].get(k, ('missing', ''))[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
