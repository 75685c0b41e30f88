"""Expectations for torchlib/ops/control_flow.py: higher-order ops take FX graph bodies, which
no OpInfo sample can give; tests/torchlib/test_control_flow.py exports real models that use each
one and compares them with torch in onnxruntime, on inputs that take every branch."""

from __future__ import annotations

from torchlib.conformance.spec import Entry

WHY = 'takes FX sub-GraphModules (a higher-order op); tests/torchlib/test_control_flow.py exports models using it and compares with torch'

ENTRIES = [
    Entry('higher_order_associative_scan', reason=WHY),
    Entry('higher_order_cond', reason=WHY),
    Entry('higher_order_map_impl', reason=WHY),
    Entry('higher_order_scan', reason=WHY),
    Entry('higher_order_while_loop', reason=WHY),
    Entry('higher_order_wrap_with_autocast', reason=WHY),
    Entry('higher_order_wrap_with_set_grad_enabled', reason=WHY),
]
