"""The edge-input fuzz pass (torchlib/conformance/fuzz.py; longer runs: bench/fuzz_ops.py)."""

from __future__ import annotations

import pytest
import torch

from torchlib.conformance.engine import Harness
from torchlib.conformance.fuzz import (
    Finding,
    FuzzReport,
    fuzz,
    fuzz_cell,
    negative_dims,
    noncontiguous,
    run_input,
    transforms,
)
from torchlib.conformance.spec import Call


@pytest.fixture(scope="module")
def harness():
    return Harness()


def test_transforms_make_edge_inputs():
    c = Call((torch.ones(3, 4), torch.ones(3, 4)), {})
    made = {name: t(c) for name, t in transforms(torch.ops.aten.sum.dim_IntList)}
    assert made["empty"].args[0].shape == (0, 4) and made["empty"].args[1].shape == (0, 4)
    assert made["size1"].args[0].shape == (1, 4)
    assert made["nan_inf"].args[0].view(-1)[:3].tolist()[1:] == [float("inf"), float("-inf")]
    assert made["huge"].args[0].view(-1)[0] == torch.finfo(torch.float32).max
    assert made["int_extremes"] is None  # no integer tensor
    assert not noncontiguous(c).args[0].is_contiguous()
    dims = negative_dims(torch.ops.aten.sum.dim_IntList)(Call((torch.ones(2, 3), [0, 1], True), {}))
    assert dims.args[1] == [-2, -1]


def test_a_wrong_answer_is_a_mismatch_and_an_exception_an_error(harness):
    entry_key = "aten_neg"
    good = run_input(harness, entry_key, "original", Call((torch.tensor([1.0, float("nan")]),), {}), torch.neg, torch.float32)
    assert good == ("ok", "")
    wrong = run_input(harness, entry_key, "original", Call((torch.tensor([1.0]),), {}), torch.abs, torch.float32)
    assert wrong[0] == "mismatch"
    rejected = run_input(harness, entry_key, "original", Call((torch.tensor([1.0]),), {}), lambda x: torch.neg(x, 1), torch.float32)
    assert rejected[0] == "rejected"


def test_an_abort_is_counted_not_fatal(harness, monkeypatch):
    import os

    from torchlib.conformance import fuzz as fuzz_module

    calls = []

    def aborting(h, key, name, the_call, reference, dtype, tol=None):
        calls.append(name)
        if name == "nan_inf":
            os.abort()
        return "ok", ""

    monkeypatch.setattr(fuzz_module, "run_input", aborting)
    findings = fuzz_cell(harness, "aten_abs", torch.float32, limit=1)
    outcomes = {f.transform: f.outcome for f in findings}
    assert outcomes["nan_inf"] == "crash" and outcomes["original"] == "ok"
    assert "huge" in outcomes  # the cell went on after the crash


def test_report_counts():
    report = FuzzReport([Finding("f", "float32", "original", "ok"), Finding("f", "float32", "empty", "crash", "(x)", "SIGABRT")], 1, 1, 1.0)
    assert "1 functions x 2 edge inputs" in report.summary() and "1 crashes" in report.summary()
    assert report.lines() == ["crash    f float32 [empty] (x): SIGABRT"]


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the first fuzz pass (23 Nov 2026) found silent mismatches in 116 functions: NaN not propagated "
                   "(sort, topk, cummax, max_pool, clamp_min, upsample, RNNs), overflow where torch stays finite (std, prod, conv, "
                   "norms), int64 extremes computed through double (sum, fmod, cumprod), empty inputs (mean losses give 0, torch nan); "
                   "issue 13. Remove this mark when `python bench/fuzz_ops.py` reports none.")
def test_fuzz_every_function(harness):
    """Every function's first dtype on edge inputs: no crash of the process, no silent
    mismatch (`python bench/fuzz_ops.py` for every dtype and the list)."""
    first = {}
    for key, dtype in harness.jobs():
        first.setdefault(key, dtype)
    report = fuzz(harness, list(first.items()), limit=2)
    bad = report.lines(("crash", "timeout", "mismatch"))
    assert not bad, report.summary() + "\n" + "\n".join(bad)
