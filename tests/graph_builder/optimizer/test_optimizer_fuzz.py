"""The optimizer's differential fuzzer (torchlib/conformance/optimizer_fuzz.py; the long run:
bench/fuzz_optimizer.py): models built from each rewrite's pattern and its near misses, exported
with optimize=True and optimize=False, compared in onnxruntime and with torch at three sizes of
every dynamic dim."""

from __future__ import annotations

import pytest

from torchlib.conformance import optimizer_fuzz as fz


def test_the_fast_slice_hits_every_rewrite_and_finds_no_difference():
    tried, hits, diffs, skipped = fz.summary(fz.fuzz(fz.fast_slice()))
    assert tried >= len(fz.FAMILIES) and not skipped, skipped
    assert diffs == []
    assert [name for name in fz.rewrite_names() if not hits[name]] == []


def test_every_case_is_reproducible_from_its_index_and_seed():
    a, b = fz.make_case(13, seed=5), fz.make_case(13, seed=5)
    assert a.name == b.name and all(x.equal(y) for x, y in zip(a.args, b.args))


@pytest.mark.slow
def test_a_long_run_finds_no_difference():
    tried, hits, diffs, skipped = fz.summary(fz.fuzz(list(range(300)), seed=1))
    assert diffs == [] and len(skipped) < tried // 10, skipped
    assert [name for name in fz.rewrite_names() if not hits[name]] == []
