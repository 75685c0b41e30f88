"""Every registered function against PyTorch's OpInfo database, eagerly and traced.

One test per (function, dtype). The default run takes the first FAST_SAMPLES samples of each
OpInfo; `pytest -m slow tests/opinfo` runs every sample. Expectations: tests/opinfo/table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from torchlib.conformance.engine import PASSED, SKIPPED, XFAIL, Harness, JobResult
from torchlib.conformance.spec import dtype_name

FAST_SAMPLES = 4

HARNESS = Harness()
JOBS = HARNESS.jobs()
IDS = [f"{key}-{dtype_name(dtype)}" for key, dtype in JOBS]


def _check(result: JobResult, key: str, dtype: torch.dtype) -> None:
    problems = result.problems()
    if problems:
        pytest.fail(f"{len(problems)} unexpected outcomes:\n" + "\n".join(problems), pytrace=False)
    if not result.count(PASSED):
        reasons = sorted({s.message for s in result.samples if s.outcome in (XFAIL, SKIPPED)})
        if result.count(XFAIL):
            pytest.xfail("; ".join(reasons))
        # Nothing ran in the first samples: the cell must still be reachable by some sample
        # (the check test_every_cell_gets_samples makes for every cell at once, here for this one).
        source = HARNESS.coverage([(key, dtype)])[(key, dtype)]
        if not source:
            pytest.fail(f"{key} {dtype_name(dtype)} gets no sample: name other OpInfos, or give samples of its own "
                        "(Entry samples=..., dtypes=...) for this dtype", pytrace=False)
        pytest.skip("; ".join(reasons) or f"no sample among the first ones reaches it (first from {source}: -m slow runs it)")


def test_every_registered_function_has_an_entry():
    """A registered function without an entry (or an entry without a function, or an unknown
    OpInfo name) fails here, all of them listed at once."""
    problems = HARNESS.problems()
    assert not problems, "the expectations table (tests/opinfo/table) is out of date:\n" + "\n".join(problems)


@pytest.mark.parametrize("key, dtype", JOBS, ids=IDS)
def test_opinfo(key, dtype):
    _check(HARNESS.run(key, dtype, max_samples=FAST_SAMPLES), key, dtype)


@pytest.mark.slow
@pytest.mark.parametrize("key, dtype", JOBS, ids=IDS)
def test_opinfo_all_samples(key, dtype):
    _check(HARNESS.run(key, dtype, max_samples=None), key, dtype)


@pytest.mark.slow
def test_every_cell_gets_samples():
    """Every (function, dtype) cell the table runs gets at least one sample: routing only
    (torch runs the OpInfo samples, onnxruntime does not). A cell without samples needs samples
    of its own (Entry samples=) or a Skip with its reason. Slow (about 9 minutes of one core):
    the default run makes the same check cell by cell in test_opinfo, for the cells whose
    first samples run nothing."""
    empty = [f"{key} {dtype_name(dtype)}" for (key, dtype), source in HARNESS.coverage(JOBS).items() if not source]
    assert not empty, (
        f"{len(empty)} function x dtype cells get no sample: name other OpInfos, or give samples of their own "
        f"(Entry samples=..., dtypes=...) for these dtypes:\n" + "\n".join(empty)
    )


def test_every_function_is_run():
    """No entry is a reason alone: each function runs OpInfo samples or samples of its own, or
    (higher-order ops, whose operands are FX graphs; ops that return nothing) its reason names
    the test file that exports models through it: the file must exist, and so must the test
    function when the reason names one (file.py::test_name)."""
    root = Path(__file__).resolve().parents[2]
    unchecked = {}
    for function, reason in HARNESS.untested().items():
        cited = re.findall(r"(tests/[\w/]+\.py)(?:::(\w+))?", reason)
        if not cited or not all((root / f).exists() and (not test or f"def {test}(" in (root / f).read_text())
                                for f, test in cited):
            unchecked[function] = reason
    assert not unchecked, f"entries with a reason but no samples, and no test file that exports them: {unchecked}"


@pytest.mark.parametrize("overload", ["mm.dtype", "bmm.dtype", "addmm.dtype", "baddbmm.dtype"])
def test_out_dtype_overloads_still_have_no_cpu_kernel(overload):
    """The *_dtype entries compare with the same computation in out_dtype because torch has no
    CPU kernel for these CUDA overloads. When it gains one, compare with torch.ops.aten itself."""
    name, _, variant = overload.partition(".")
    packet = getattr(getattr(torch.ops.aten, name), variant)
    args = {"mm": (torch.ones(2, 3), torch.ones(3, 2)), "bmm": (torch.ones(1, 2, 3), torch.ones(1, 3, 2))}
    args["addmm"] = (torch.ones(2, 2), *args["mm"])
    args["baddbmm"] = (torch.ones(1, 2, 2), *args["bmm"])
    with pytest.raises(NotImplementedError, match="CPU"):
        packet(*args[name], torch.float32)
