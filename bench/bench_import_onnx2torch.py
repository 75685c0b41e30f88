"""onnx's backend node tests through torchlib.importer and through onnx2torch, side by side: the
same applicable cases (torchlib.importer.node_tests.not_applicable), each run on every
input/output pair and compared with the case's rtol/atol (dtype and shape exact), as in
tests/importer/test_node_tests.py.

    pip install --no-deps onnx2torch==1.5.15       # the optional comparison (its deps are ours)
    OMP_NUM_THREADS=1 nice -n 5 python bench/bench_import_onnx2torch.py [-v]

Prints both pass rates (all cases, and the cases at ai.onnx opset <= 16, the range onnx2torch
documents), and for onnx2torch how its failures divide (no converter, an error at
conversion, an error or a mismatch at run time). -v lists the cases only one of them passes.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import onnx  # noqa: E402
import torch  # noqa: E402

from torchlib.conformance import torchvision_reference  # noqa: E402
from torchlib.importer.node_tests import _compare, load_cases, not_applicable, run_case, to_torch  # noqa: E402


def run_onnx2torch(case: Any) -> None:
    from onnx2torch import convert

    module = convert(case.model)
    names = [o.name for o in case.model.graph.output]
    for inputs, outputs in case.data_sets:
        with torch.no_grad():
            result = module(*[to_torch(x) for x in inputs])
        got = result if isinstance(result, (tuple, list)) else (result,)
        assert len(got) == len(outputs), f"{len(got)} outputs, expected {len(outputs)}"
        for name, g, want in zip(names, got, outputs):
            _compare(name, g, want, case.rtol, case.atol)


def _opset(model: onnx.ModelProto) -> int:
    return next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 0)


def _kind(error: Exception, stage: str) -> str:
    text = str(error)
    if stage == "convert" and ("Converter is not implemented" in text or "NotImplementedError" in type(error).__name__):
        return "no converter (op, version or attribute)"
    if stage == "convert":
        return "error at conversion"
    if isinstance(error, AssertionError):
        return "wrong result (value, dtype or shape)"
    return "error at run time"


def main(argv: list[str]) -> int:
    torchvision_reference.register()  # onnx2torch imports torchvision (see conftest.py)
    try:
        import onnx2torch
    except ImportError:
        print("onnx2torch is not installed: pip install --no-deps onnx2torch==1.5.15", file=sys.stderr)
        return 2
    verbose = "-v" in argv
    start = time.perf_counter()
    cases = {name: case for name, case in sorted(load_cases().items()) if not not_applicable(case)}
    ours: dict[str, bool] = {}
    theirs: dict[str, bool] = {}
    kinds: Counter[str] = Counter()
    for name, case in cases.items():
        try:
            run_case(case)
            ours[name] = True
        except Exception:  # a failing case of any kind is counted
            ours[name] = False
        stage = "convert"
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                from onnx2torch import convert

                convert(case.model)
                stage = "run"
                run_onnx2torch(case)
            theirs[name] = True
        except Exception as e:  # onnx2torch's own errors are of many types
            theirs[name] = False
            kinds[_kind(e, stage)] += 1
    n = len(cases)
    print(f"onnx {onnx.__version__} node tests, {n} applicable cases (torch {torch.__version__}):")
    print("| importer | passed | rate |")
    print("|---|---|---|")
    print(f"| torchlib.importer | {sum(ours.values())} | {100 * sum(ours.values()) / n:.1f} % |")
    version = getattr(onnx2torch, "__version__", "1.5.15")
    print(f"| onnx2torch {version} | {sum(theirs.values())} | {100 * sum(theirs.values()) / n:.1f} % |")
    old = [k for k, c in cases.items() if _opset(c.model) <= 16]
    print(f"| (opset <= 16 only: {len(old)} cases) torchlib.importer | {sum(ours[k] for k in old)} | "
          f"{100 * sum(ours[k] for k in old) / len(old):.1f} % |")
    print(f"| (opset <= 16 only: {len(old)} cases) onnx2torch {version} | {sum(theirs[k] for k in old)} | "
          f"{100 * sum(theirs[k] for k in old) / len(old):.1f} % |")
    print("onnx2torch's failures:")
    for kind, count in kinds.most_common():
        print(f"  {count:5d}  {kind}")
    both = sum(ours[k] and theirs[k] for k in cases)
    print(f"both pass: {both}; only torchlib.importer: {sum(ours[k] and not theirs[k] for k in cases)}; "
          f"only onnx2torch: {sum(theirs[k] and not ours[k] for k in cases)}  ({time.perf_counter() - start:.0f} s)")
    if verbose:
        for k in cases:
            if theirs[k] and not ours[k]:
                print(f"only onnx2torch passes: {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
