"""onnx's backend node tests run through the importer.

`load_cases()` gives onnx's generated node cases (onnx.backend.test.loader, kind="node");
`not_applicable(case)` names the rule that puts a case outside what torch computes (or None);
`run_case(case)` imports the model and compares every output of every input/output pair with
the case's rtol/atol, raising AssertionError (or the importer's error) on a mismatch.
`python -m torchlib import-conformance` prints the rate.
"""

from __future__ import annotations

import functools
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch

from torchlib.importer.registry import all_nodes

RANDOM_OPS = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli"}
STRING_OPS = {"StringConcat", "StringSplit", "StringNormalizer", "RegexFullMatch"}
NO_TORCH_DTYPE = {onnx.TensorProto.STRING, onnx.TensorProto.INT4, onnx.TensorProto.UINT4,
                  onnx.TensorProto.FLOAT4E2M1, onnx.TensorProto.FLOAT8E8M0, onnx.TensorProto.INT2,
                  onnx.TensorProto.UINT2}  # fmt: skip
EXPECTATIONS = Path(__file__).resolve().parents[2] / "tests" / "importer" / "node_expectations.txt"


@functools.lru_cache(maxsize=1)
def load_cases() -> dict[str, Any]:
    import warnings

    from onnx.backend.test.loader import load_model_tests

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {case.name: case for case in load_model_tests(kind="node")}


def _types(model: onnx.ModelProto) -> Iterator[onnx.TypeProto]:
    for v in list(model.graph.input) + list(model.graph.output) + list(model.graph.value_info):
        yield v.type


def not_applicable(case: Any) -> str | None:
    """The rule that puts `case` outside what a torch program computes, or None."""
    model: onnx.ModelProto = case.model
    nodes = list(all_nodes(model.graph))
    for node in nodes:
        if node.domain == "ai.onnx.preview.training":
            return "training op (ai.onnx.preview.training)"
        if node.op_type in RANDOM_OPS:
            return "random op"
        if node.op_type == "Dropout" and len(node.input) > 2 and node.input[2]:
            return "random op (Dropout in training mode)"
        if node.op_type in STRING_OPS:
            return "string tensors"
        if node.op_type == "ImageDecoder":
            return "image decoding (an image codec, not a tensor computation)"
        if "Sequence" in node.op_type or node.op_type.startswith("Optional"):
            return "sequence or optional types"
        for attr in node.attribute:
            if attr.name in ("to", "output_dtype", "dtype") and attr.type == onnx.AttributeProto.INT and attr.i in NO_TORCH_DTYPE:
                return "a dtype torch has no tensor for (string, 4-bit, 2-bit, float8e8m0)"
            if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type in NO_TORCH_DTYPE:
                return "a dtype torch has no tensor for (string, 4-bit, 2-bit, float8e8m0)"
    for t in _types(model):
        kind = t.WhichOneof("value")
        if kind in ("sequence_type", "optional_type", "map_type"):
            return "sequence or optional types"
        if kind == "tensor_type" and t.tensor_type.elem_type in NO_TORCH_DTYPE:
            return "a dtype torch has no tensor for (string, 4-bit, 2-bit, float8e8m0)"
    for init in model.graph.initializer:
        if init.data_type in NO_TORCH_DTYPE:
            return "a dtype torch has no tensor for (string, 4-bit, 2-bit, float8e8m0)"
    return None


_BITS = {"bfloat16": (torch.bfloat16, np.uint16), "float8_e4m3fn": (torch.float8_e4m3fn, np.uint8),
         "float8_e4m3fnuz": (torch.float8_e4m3fnuz, np.uint8), "float8_e5m2": (torch.float8_e5m2, np.uint8),
         "float8_e5m2fnuz": (torch.float8_e5m2fnuz, np.uint8)}  # fmt: skip


def to_torch(array: np.ndarray | onnx.TensorProto) -> torch.Tensor:
    if isinstance(array, onnx.TensorProto):
        array = onnx.numpy_helper.to_array(array)
    array = np.asarray(array)
    if str(array.dtype) in _BITS:
        dtype, bits = _BITS[str(array.dtype)]
        return torch.from_numpy(np.array(array).view(bits)).view(dtype)
    return torch.from_numpy(np.array(array))


def _compare(name: str, got: Any, want: np.ndarray | onnx.TensorProto, rtol: float, atol: float) -> None:
    assert isinstance(got, torch.Tensor), f"output {name}: got {type(got).__name__}, not a tensor"
    expected = to_torch(want)
    assert got.dtype == expected.dtype, f"output {name}: dtype {got.dtype}, expected {expected.dtype}"
    assert tuple(got.shape) == tuple(expected.shape), f"output {name}: shape {tuple(got.shape)}, expected {tuple(expected.shape)}"
    if expected.dtype.is_floating_point and expected.dtype.itemsize <= 2:
        got, expected = got.to(torch.float32), expected.to(torch.float32)
    if got.dtype in (torch.uint16, torch.uint32, torch.uint64):
        got, expected = got.to(torch.int64), expected.to(torch.int64)
    if got.is_floating_point() or got.is_complex():
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True, check_dtype=False,
                                   msg=lambda m: f"output {name}: {m}")
    else:
        mismatched = int((got != expected).sum())
        assert mismatched == 0, f"output {name}: {mismatched} of {expected.numel()} elements differ"


def run_case(case: Any) -> None:
    from torchlib.importer import import_onnx

    gm = import_onnx(case.model)
    names = [o.name for o in case.model.graph.output]
    for inputs, outputs in case.data_sets:
        with torch.no_grad():
            result = gm(*[to_torch(x) for x in inputs])
        got = result if isinstance(result, tuple) else (result,)
        assert len(got) == len(outputs), f"{len(got)} outputs, expected {len(outputs)}"
        for name, g, want in zip(names, got, outputs):
            _compare(name, g, want, case.rtol, case.atol)


def read_expectations(path: Path = EXPECTATIONS) -> dict[str, str]:
    """`case_name: reason` lines (# comments) of the cases expected to fail."""
    table = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, reason = line.partition(":")
            table[name.strip()] = reason.strip()
    return table


def main(argv: list[str]) -> int:
    """Runs every case; prints the not-applicable rules with counts, the failures and the rate.
    On a terminal a bar counts the cases (`--no-progress`: none)."""
    from graph_builder.progress import progress

    verbose = "-v" in argv
    start = time.perf_counter()
    cases = load_cases()
    skipped: Counter[str] = Counter()
    failures: dict[str, str] = {}
    passed = 0
    for name, case in progress(sorted(cases.items()), desc="node tests", unit="case", enabled="--no-progress" not in argv):
        rule = not_applicable(case)
        if rule:
            skipped[rule] += 1
            continue
        try:
            run_case(case)
            passed += 1
        except Exception as e:  # a failing case of any kind is counted and reported
            failures[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]
    applicable = passed + len(failures)
    print(f"onnx {onnx.__version__} node tests: {len(cases)} cases, {sum(skipped.values())} not applicable:")
    for rule, count in skipped.most_common():
        print(f"  {count:5d}  {rule}")
    if verbose:
        for name, why in sorted(failures.items()):
            print(f"FAIL {name}: {why}")
    print(f"applicable: {applicable}, passed: {passed}, failed: {len(failures)}, "
          f"rate: {100 * passed / max(applicable, 1):.1f} %  ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
