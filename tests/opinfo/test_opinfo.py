"""Every registered function against PyTorch's OpInfo database, eagerly and traced.

One test per (function, dtype). The default run takes the first FAST_SAMPLES samples of each
OpInfo; `pytest -m slow tests/opinfo` runs every sample. Expectations: tests/opinfo/table.
"""

from __future__ import annotations

import pytest

from torchlib.conformance.engine import PASSED, SKIPPED, XFAIL, Harness, JobResult
from torchlib.conformance.spec import dtype_name

FAST_SAMPLES = 4

HARNESS = Harness()
JOBS = HARNESS.jobs()
IDS = [f"{key}-{dtype_name(dtype)}" for key, dtype in JOBS]
UNTESTED = sorted(HARNESS.untested().items())


def _check(result: JobResult) -> None:
    problems = result.problems()
    if problems:
        pytest.fail(f"{len(problems)} unexpected outcomes:\n" + "\n".join(problems), pytrace=False)
    if not result.count(PASSED):
        reasons = sorted({s.message for s in result.samples if s.outcome in (XFAIL, SKIPPED)})
        if result.count(XFAIL):
            pytest.xfail("; ".join(reasons))
        pytest.skip("; ".join(reasons) or "no samples")


def test_every_registered_function_has_an_entry():
    """A registered function without an entry (or an entry without a function, or an unknown
    OpInfo name) fails here, all of them listed at once."""
    problems = HARNESS.problems()
    assert not problems, "the expectations table (tests/opinfo/table) is out of date:\n" + "\n".join(problems)


@pytest.mark.parametrize("key, dtype", JOBS, ids=IDS)
def test_opinfo(key, dtype):
    _check(HARNESS.run(key, dtype, max_samples=FAST_SAMPLES))


SAMPLES_SEEN: dict[str, int] = {}


@pytest.mark.slow
@pytest.mark.parametrize("key, dtype", JOBS, ids=IDS)
def test_opinfo_all_samples(key, dtype):
    result = HARNESS.run(key, dtype, max_samples=None)
    SAMPLES_SEEN[key] = SAMPLES_SEEN.get(key, 0) + len(result.samples)
    _check(result)


@pytest.mark.slow
def test_every_function_gets_samples():
    """After the full run: an OpInfo entry whose samples never reach the function (they call
    other overloads) tests nothing."""
    if set(SAMPLES_SEEN) != {key for key, _ in JOBS}:
        pytest.skip("needs the whole slow run (test_opinfo_all_samples for every function)")
    unreached = sorted(key for key, n in SAMPLES_SEEN.items() if n == 0)
    assert not unreached, f"no OpInfo sample reaches {', '.join(unreached)}: name other OpInfos or give samples of their own"


@pytest.mark.parametrize("key, reason", UNTESTED, ids=[k for k, _ in UNTESTED])
def test_untested_function_says_why(key, reason):
    pytest.skip(f"not tested: {reason}")
