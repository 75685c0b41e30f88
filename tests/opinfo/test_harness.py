"""The conformance harness itself: comparison, outcome classification, strictness, reports, CLI."""

from __future__ import annotations

import pytest
import torch
from torch.testing._internal.opinfo.core import SampleInput

from graph_builder import op
from torchlib.conformance import main
from torchlib.conformance.engine import (
    FAILED,
    PASSED,
    SKIPPED,
    XFAIL,
    XPASS,
    JobResult,
    SampleResult,
    compare,
    describe,
    run_sample,
)
from torchlib.conformance.report import Report, to_html, to_json, to_markdown
from torchlib.conformance.spec import Entry, Skip, XFail, call
from torchlib.registry import Registry, aten_op

_PRIVATE = Registry()  # keeps these test functions out of the real registry


@aten_op("aten::neg", registry=_PRIVATE)
def good_neg(self):
    """neg(Tensor self) -> Tensor"""
    return op.Neg(self)


@aten_op("aten::neg", registry=Registry())
def wrong_neg(self):
    """neg(Tensor self) -> Tensor"""
    return op.Add(op.Neg(self), 1)


@aten_op("aten::neg", registry=Registry())
def random_neg(self):
    """neg(Tensor self) -> Tensor"""
    return op.Dropout(self, 0.5, True)  # random zeros (onnxruntime has no opset-23 Random* kernels)


X = torch.tensor([[1.0, -2.0, 3.5]])


def _run(fn, entry, sample=None, dtype=torch.float32, reference=torch.neg):
    return run_sample(fn, entry, dtype, 0, sample or SampleInput(X), reference)


def test_compare_checks_dtype_shape_and_values():
    compare(torch.ones(2), torch.ones(2))
    with pytest.raises(AssertionError, match="expected float32\\[2\\], got float64\\[2\\]"):
        compare(torch.ones(2, dtype=torch.float64), torch.ones(2))
    with pytest.raises(AssertionError, match="expected float32\\[\\], got float32\\[1\\]"):
        compare(torch.ones(1), torch.tensor(1.0))
    with pytest.raises(AssertionError, match="output\\[1\\]"):
        compare((torch.ones(2), torch.ones(2)), (torch.ones(2), torch.zeros(2)))
    with pytest.raises(AssertionError, match="sequence of 2"):
        compare((torch.ones(2),), (torch.ones(2), torch.ones(2)))
    compare(torch.tensor(3), 3)
    with pytest.raises(AssertionError, match="expected a int"):
        compare(torch.tensor(3.0), 3)


def test_compare_judges_non_finite_complex_elements_part_by_part():
    """|a - e| of two complex numbers with an infinite part is NaN: such elements are compared
    part by part, an infinite or NaN part exactly, the other to the tolerance."""
    inf, nan = float("inf"), float("nan")
    e = torch.tensor([complex(inf, 1.4007132e37), complex(1.0, 2.0), complex(nan, 3.0)], dtype=torch.complex64)
    compare(torch.tensor([complex(inf, 1.40071335e37), complex(1.0, 2.0), complex(nan, 3.0)], dtype=torch.complex64), e)
    for wrong in [complex(-inf, 1.4007132e37), complex(inf, 1.5e37), complex(inf, nan)]:
        with pytest.raises(AssertionError):
            compare(torch.tensor([wrong, complex(1.0, 2.0), complex(nan, 3.0)], dtype=torch.complex64), e)
    with pytest.raises(AssertionError):  # the finite elements are still checked
        compare(torch.tensor([complex(inf, 1.4007132e37), complex(1.0, 2.5), complex(nan, 3.0)], dtype=torch.complex64), e)
    with pytest.raises(AssertionError):
        compare(torch.tensor([complex(inf, 1.4007132e37), complex(1.0, 2.0), complex(nan, 4.0)], dtype=torch.complex64), e)


def test_compare_tolerances_per_dtype_and_override():
    a = torch.tensor([1.0, 2.0], dtype=torch.float16)
    compare(a * (1 + 1e-3), a)  # within float16's default (two ulps)
    with pytest.raises(AssertionError):
        compare(a * 1.01, a)
    compare(a * 1.01, a, tol=(2e-2, 0))
    with pytest.raises(AssertionError):
        compare(torch.tensor([1, 2]), torch.tensor([1, 3]), tol=(1.0, 1.0))  # integers are exact


def test_shape_only_comparison_ignores_values():
    compare(torch.rand(2, 3), torch.rand(2, 3), shape_only=True)
    with pytest.raises(AssertionError):
        compare(torch.rand(2, 3), torch.rand(3, 2), shape_only=True)
    assert _run(random_neg, Entry("random_neg", opinfo=["neg"], compare="shape")).outcome == PASSED
    assert _run(random_neg, Entry("random_neg", opinfo=["neg"])).outcome == FAILED


def test_passing_and_failing_samples_name_the_mode():
    assert _run(good_neg, Entry("good_neg", opinfo=["neg"])).outcome == PASSED
    result = _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"]))
    assert result.outcome == FAILED
    assert result.modes["eager"][0] == FAILED and result.modes["traced"][0] == FAILED
    assert "Mismatched elements" in result.modes["traced"][1]


def test_expected_failures_are_strict():
    xfail = XFail("adds one")
    result = _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"], xfail=[xfail]))
    assert result.outcome == XFAIL and result.message == "adds one"
    result = _run(good_neg, Entry("good_neg", opinfo=["neg"], xfail=[xfail]))
    assert result.outcome == XPASS
    only_eager = XFail("eager only", mode="eager")
    result = _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"], xfail=[only_eager]))
    assert result.outcome == FAILED and result.modes == {"eager": (XFAIL, "eager only"), "traced": (FAILED, result.modes["traced"][1])}


def test_expected_failures_match_dtype_index_and_predicate():
    other_dtype = XFail("float64 only", dtypes=[torch.float64])
    assert _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"], xfail=[other_dtype])).outcome == FAILED
    other_index = XFail("sample 3 only", samples=[3])
    assert _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"], xfail=[other_index])).outcome == FAILED
    by_shape = XFail("rank 2", when=lambda s: s.input.dim() == 2)
    assert _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"], xfail=[by_shape])).outcome == XFAIL


def test_skips_adapters_and_rejected_samples():
    skipped = _run(wrong_neg, Entry("wrong_neg", opinfo=["neg"], skip=[Skip("not this one")]))
    assert (skipped.outcome, skipped.message) == (SKIPPED, "not this one")
    adapter_skip = Entry("wrong_neg", opinfo=["neg"], adapter=lambda s: Skip("no ATen equivalent"))
    assert _run(wrong_neg, adapter_skip).outcome == SKIPPED
    negate_twice = Entry("good_neg", opinfo=["neg"], adapter=lambda s: call(-s.input))
    assert _run(good_neg, negate_twice, reference=lambda x: x).outcome == PASSED
    rejected = _run(good_neg, Entry("good_neg", opinfo=["neg"]), reference=lambda x: torch.neg(x, 1))
    assert rejected.outcome == SKIPPED and "torch rejects" in rejected.message


def test_entry_requires_a_source_or_a_reason():
    with pytest.raises(ValueError, match="reason"):
        Entry("aten_x")
    with pytest.raises(ValueError, match="dtypes"):
        Entry("aten_x", samples=lambda dtype: [])
    Entry("aten_x", reason="no torch counterpart")


def test_describe_sample():
    text = describe(SampleInput(X, args=(2,), kwargs={"alpha": 0.5, "dtype": torch.float16}))
    assert text == "input f32[1, 3]; args (2); kwargs {alpha=0.5, dtype=float16}"


def _report(samples):
    results = [JobResult("aten_neg", "float32", samples), JobResult("aten_neg", "int64", [SampleResult(0, "input i64[2]", PASSED)])]
    return Report(results, ["float32", "int64"], {"aten_neg": ("aten::neg",), "aten_foo": ("aten::foo",)}, {"aten_foo": "no OpInfo"}, [])


def test_report_writers():
    failed = SampleResult(1, "input f32[<b>]", FAILED, "eager: boom", {"eager": (FAILED, "boom"), "traced": (PASSED, "")})
    report = _report([SampleResult(0, "input f32[2]", PASSED), failed, SampleResult(2, "input f32[]", XFAIL, "known", {})])
    assert not report.ok
    markdown = to_markdown(report)
    assert "| aten_neg | ❌ 1 F1 x1 | ✅ 1 |" in markdown and "aten_foo: no OpInfo" in markdown
    page = to_html(report)
    assert '<td class="cell fail"' in page and "<details>" in page and "input f32[&lt;b&gt;]" in page
    assert "not tested: no OpInfo" in page
    assert '"outcome": "failed"' in to_json(report)
    assert _report([SampleResult(0, "input f32[2]", XFAIL, "known", {})]).ok


def _table(tmp_path, text):
    path = tmp_path / f"table_{len(list(tmp_path.iterdir()))}.py"
    path.write_text("import torch\nfrom torchlib.conformance.spec import Entry, XFail\n" + text)
    return str(path)


def test_cli_exit_codes_and_html(tmp_path):
    good = _table(tmp_path, "ENTRIES = [Entry('aten_neg', opinfo=['neg']), Entry('aten_neg_complex', opinfo=['neg'])]\n")
    html = tmp_path / "out" / "report.html"
    assert main(["--table", good, "--ops", "neg", "--dtypes", "float32", "--html", str(html), "--no-progress", "-q"]) == 0
    assert "aten_neg" in html.read_text()
    xpass = _table(tmp_path, "ENTRIES = [Entry('aten_neg', opinfo=['neg'], xfail=[XFail('claims a failure')])]\n")
    assert main(["--table", xpass, "--ops", "aten_neg", "--dtypes", "float32", "--no-progress", "-q"]) == 1
    missing = _table(tmp_path, "ENTRIES = []\n")
    assert main(["--table", missing, "--ops", "aten_neg", "--no-progress", "-q"]) == 1
    assert main(["--table", good, "--ops", "no_such_op", "--no-progress"]) == 2
    assert main(["--table", good, "--dtypes", "float99", "--no-progress"]) == 2


def test_aten_route_takes_the_dispatched_call_and_its_output():
    entry = Entry("good_neg", opinfo=["neg"])
    overloads = frozenset({"aten::neg"})
    composite = SampleInput(X, args=(2.0,))  # x * 2 then neg: the function sees neg's own input
    result = run_sample(good_neg, entry, torch.float32, 0, composite, lambda x, k: torch.neg(x * k), "", "aten", overloads)
    assert result.outcome == PASSED and "-> (f32[1, 3])" in result.description
    assert run_sample(good_neg, entry, torch.float32, 0, SampleInput(X), torch.abs, "", "aten", overloads) is None


def test_pre_dispatch_route_sees_composite_implicit_overloads():
    import torch.nn.functional as F

    @aten_op("aten::relu6", registry=Registry())
    def relu6(self):
        """relu6(Tensor self) -> Tensor"""
        return op.Clip(self, 0.0, 6.0)

    sample = SampleInput(torch.tensor([-1.0, 3.0, 9.0]))
    result = run_sample(relu6, Entry("relu6", opinfo=["nn.functional.relu6"]), torch.float32, 0, sample, F.relu6, "", "pre_dispatch", frozenset({"aten::relu6"}))
    assert result.outcome == PASSED


def test_report_flags_functions_no_sample_reaches():
    empty = Report([JobResult("aten_neg", "float32", [])], ["float32"], {"aten_neg": ("aten::neg",)}, {}, [])
    assert not empty.ok and "no sample of its OpInfos reaches it" in to_markdown(empty)
    empty.max_samples = 4  # a bounded run may just not have scanned far enough
    assert empty.ok


def test_torch_less_accurate_is_checked_against_float64():
    from torchlib.conformance.spec import TorchLessAccurate

    x = SampleInput(torch.tensor([0.1, -0.3, 0.7], dtype=torch.float16))
    lossy = lambda t: -(t + 1000) + 1000  # noqa: E731 - float16 rounds t + 1000 to a multiple of 0.5
    rule = [TorchLessAccurate(dtypes=[torch.float16])]
    better = run_sample(good_neg, Entry("good_neg", opinfo=["neg"], xfail=rule), torch.float16, 0, x, lossy)
    assert better.outcome == XFAIL and "torch is less accurate" in better.message and "ours 0" in better.message
    worse = run_sample(wrong_neg, Entry("wrong_neg", opinfo=["neg"], xfail=rule), torch.float16, 0, x, lossy)
    assert worse.outcome == FAILED and "we are less accurate than torch" in worse.message
    plain = run_sample(good_neg, Entry("good_neg", opinfo=["neg"], xfail=rule), torch.float16, 0, x, torch.neg)
    assert plain.outcome == PASSED


def test_tolerances_are_torchs_own():
    from torchlib.conformance.engine import load_op_db
    from torchlib.conformance.spec import DEFAULT_TOL, opinfo_tolerances

    assert DEFAULT_TOL[torch.float16] == (1e-3, 1e-5) and DEFAULT_TOL[torch.bfloat16] == (1.6e-2, 1e-5)
    assert opinfo_tolerances(load_op_db()[("nn.functional.conv2d", "")])[torch.float16] == (1e-3, 5e-3)
    assert opinfo_tolerances(load_op_db()[("abs", "")]) == {}
    with pytest.raises(ValueError, match="tol_reason"):
        Entry("aten_x", opinfo=["abs"], tol={torch.float16: (1e-2, 1e-2)})
