"""onnx's backend node tests (onnx.backend.test.loader, kind="node") through torchlib.importer.

Each applicable case is imported and run on every input/output pair with its own rtol/atol.
Cases outside what torch computes are skipped by rule (torchlib.importer.node_tests.not_applicable);
the applicable cases that fail are listed, with a reason, in node_expectations.txt, strictly: a
listed case that passes fails here too, so the table only shrinks.
"""

from __future__ import annotations

import pytest

from torchlib.importer.node_tests import load_cases, not_applicable, read_expectations, run_case

CASES = load_cases()
EXPECTED_FAILURES = read_expectations()


def test_expectations_name_real_cases():
    unknown = sorted(set(EXPECTED_FAILURES) - set(CASES))
    assert unknown == [], f"node_expectations.txt lists cases onnx does not generate: {unknown}"
    inapplicable = sorted(n for n in EXPECTED_FAILURES if not_applicable(CASES[n]))
    assert inapplicable == [], f"node_expectations.txt lists not-applicable cases: {inapplicable}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_node_case(name):
    case = CASES[name]
    rule = not_applicable(case)
    if rule:
        pytest.skip(f"not applicable: {rule}")
    if name in EXPECTED_FAILURES:
        try:
            run_case(case)
        except Exception:
            return  # fails as the table says
        pytest.fail(f"{name} passes now: remove it from tests/importer/node_expectations.txt "
                    f"(it was listed as: {EXPECTED_FAILURES[name]})")
    run_case(case)
