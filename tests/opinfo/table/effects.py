"""Expectations for torchlib/ops/effects.py."""

from __future__ import annotations

from torchlib.conformance.spec import Entry

ENTRIES = [
    Entry('higher_order_with_effects', reason='a higher-order op of exported programs (the effect token around an op), not an OpInfo op; tests/ops/test_linalg_decompositions.py::test_export_with_a_dynamic_batch_runs_in_onnxruntime exports torch.linalg.inv/solve/cholesky through it'),
    Entry('aten__linalg_check_errors', reason='returns nothing (an ONNX graph cannot raise); reached by exported torch.linalg.inv/solve/cholesky, see tests/ops/test_linalg_decompositions.py::test_export_with_a_dynamic_batch_runs_in_onnxruntime'),
]
