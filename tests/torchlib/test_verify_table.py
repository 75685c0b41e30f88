"""`ExportResult.verify(*args)` returns a list of OutputDiff that prints as a table."""

from __future__ import annotations

import torch

import torchlib
from graph_builder import op
from torchlib.exporter.comparison import Differences, OutputDiff, compare


class TwoOutputs(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.silu(x) * 2, x.argmax(-1)


def wrong_silu(x):
    """silu(Tensor self) -> Tensor"""
    return op.Relu(x)  # deliberately wrong below 0


def test_verify_prints_a_table_of_its_outputs():
    x = torch.randn(3, 5)
    diffs = torchlib.export(TwoOutputs(), (x,)).verify(x)
    assert isinstance(diffs, Differences) and isinstance(diffs, list) and diffs.ok()
    lines = str(diffs).splitlines()
    assert lines[0].split() == ["output", "shape", "dtype", "max", "abs", "max", "rel", "tolerance", "ok"]
    first, second = (line.split() for line in lines[1:])
    assert first[:3] == [diffs[0].name, "[3,", "5]"] and first[3] == "float32" and first[-1] == "ok"
    assert second[:3] == [diffs[1].name, "[3]", "int64"] and second[-1] == "ok"
    assert "abs or" in lines[1] and "rel" in lines[1]
    assert "OutputDiff(" not in str(diffs)


def test_a_wrong_output_reads_differs_in_its_row():
    x = torch.randn(3, 5) - 1
    result = torchlib.export(TwoOutputs(), (x,), functions={torch.ops.aten.silu.default: wrong_silu}, check=False)
    diffs = result.verify(x)
    assert not diffs.ok()
    rows = str(diffs).splitlines()[1:]
    assert rows[0].endswith("DIFFERS") and rows[1].endswith("ok")
    assert f"{diffs[0].max_abs:.1e}" in rows[0]


def test_shape_and_dtype_mismatches_are_named():
    expected = torch.zeros(2, 3)
    shape = compare("y", expected, torch.zeros(3, 2))
    dtype = compare("z", expected, torch.zeros(2, 3, dtype=torch.float64))
    text = str(Differences([shape, dtype]))
    assert text.splitlines()[1].startswith("y ") and text.splitlines()[1].endswith("shape differs")
    assert text.splitlines()[2].endswith("dtype differs")
    # the tolerance is the dtype's: atol x the output's scale (its largest magnitude, at least 1), or rtol
    scaled = OutputDiff("w", 0.1, 0.01, True, True, scale=100.0, tolerance=(1e-4, 1e-3), shape=(4,), dtype="float32")
    assert "1.0e-02 abs or 1.0e-03 rel" in str(Differences([scaled]))


def test_a_nan_or_infinity_where_torch_has_a_number_is_never_within_tolerance():
    """Where the other elements agree exactly, the relative bound must not excuse the one that is
    NaN (or infinite) on one side only: both bounds are infinite then."""
    expected = torch.tensor([1.0, 2.0, 0.0])
    for wrong in (float("nan"), float("inf"), -float("inf")):
        actual = expected.clone()
        actual[2] = wrong
        diff = compare("x", expected, actual)
        assert not diff.ok() and diff.max_abs == diff.max_rel == float("inf"), (wrong, diff)
        assert not compare("x", actual, expected).ok()
    both = torch.tensor([1.0, float("nan"), float("inf")])
    assert compare("x", both, both.clone()).ok()  # NaN where torch has NaN, inf where it has inf
