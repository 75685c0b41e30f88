"""What torch.export's program assumes at run time, the ONNX model checks: never a wrong answer
on inputs the program was not made for (`aten::_assert_scalar`, draft_export's branches; the
size conditions are in test_dynamic_dims.py)."""

from __future__ import annotations

import warnings

import pytest
import torch

import torchlib
from graph_builder.evaluator import CheckFailed


class CountedScale(torch.nn.Module):
    def forward(self, x):
        n = (x > 0).sum().item()
        torch._check(n <= 6)
        return x * n


def test_torch_check_on_data_is_checked_by_the_onnx_model():
    result = torchlib.export(CountedScale(), (torch.tensor([1.0, -1.0, 2.0, 3.0]),), dynamic_shapes=({0: "n"},))
    assert any(n.name and n.name.startswith("check: ") for n in result.graph.nodes)
    x = torch.tensor([1.0, 2.0, -3.0, 4.0, 5.0, 6.0, -7.0, 8.0])  # six positive
    torch.testing.assert_close(result(x), CountedScale()(x))
    with pytest.raises(CheckFailed, match=r"u0 <= 6"):
        result(torch.ones(8))


class MaskedWhenPadded(torch.nn.Module):
    """fsmt's pattern: a branch on `mask.any()`, which torch.export cannot trace and draft_export
    takes the sample's way."""

    def forward(self, x, mask):
        if mask.any():
            x = x.masked_fill(mask, 0.0)
        return x * 2


def test_draft_exports_branch_is_checked_by_the_onnx_model():
    x, mask = torch.randn(2, 5), torch.zeros(2, 5, dtype=torch.bool)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # draft_export's warning
        result = torchlib.export(MaskedWhenPadded(), (x, mask), dynamic_shapes=({0: "b", 1: "s"}, {0: "b", 1: "s"}))
    assert result.capture_strategy == "draft_export"
    other = (torch.randn(3, 7), torch.zeros(3, 7, dtype=torch.bool))  # the sample's path, other sizes
    torch.testing.assert_close(result(*other), MaskedWhenPadded()(*other))
    padded = mask.clone()
    padded[0, 1] = True
    with pytest.raises(CheckFailed, match=r"Ne\(u0, 1\)"):  # the other path: stopped, not answered wrongly
        result(x, padded)


class KeptRows(torch.nn.Module):
    def forward(self, scores, boxes):
        keep = scores > 0.5
        kept = scores[keep]
        top = torch.topk(kept, min(5, kept.shape[0]))  # torch asserts Min(5, u) <= u
        return boxes[keep], top.values


def test_what_the_ops_make_true_is_not_checked():
    """torch asserts the range it gave each data-decided size (nonzero's count: u >= 0, u <= 40)
    and Min(k, u) <= u: true of any correct translation, so the ONNX model leaves them out
    (ssdlite had 291 such checks)."""
    scores, boxes = torch.linspace(0, 1, 40), torch.randn(40, 4)
    program = torch.export.export(KeptRows(), (scores, boxes))
    asserted = [n for n in program.graph.nodes if n.target is torch.ops.aten._assert_scalar.default]
    assert asserted, "the model should make torch assert its sizes' ranges"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = torchlib.export(KeptRows(), (scores, boxes))
    assert not [n.name for n in result.graph.nodes if n.name and n.name.startswith("check: ")]
    few = torch.linspace(0, 0.6, 40)
    for got, want in zip(result(few, boxes), KeptRows()(few, boxes)):
        torch.testing.assert_close(got, want)


def test_size_conditions_are_written_exactly():
    """`size_checks._write` against sympy's own value of each condition, at sizes 0..40 (negative
    sums too): floor division and remainders with torch's sympy functions, math.ceil / math.floor
    of a true division, min / max, comparisons and logic."""
    import numpy as np
    import sympy
    from torch.utils._sympy.functions import CeilToInt, FloorDiv, FloorToInt, IntTrueDiv, Max, Min, PythonMod

    from torchlib.exporter import size_checks

    s = sympy.Symbol("s0", integer=True, positive=True)
    conditions = [
        sympy.Eq(PythonMod(FloorDiv(s, 4), 2), 0),
        sympy.Eq(2 * CeilToInt(IntTrueDiv(FloorDiv(s + 3, 4), 2)), 8),
        sympy.Ge(FloorToInt(IntTrueDiv(s - 20, 3)), -2),
        sympy.Ne(FloorDiv(s - 17, 5), -1),
        sympy.Le(Min(s, 12), Max(7, FloorDiv(s, 2))),
        sympy.And(sympy.Gt(s, 3), sympy.Lt(s, 30)),
    ]
    for condition in conditions:
        for size in range(41):
            got = size_checks._write(condition, {s: lambda size=size: np.array(size, np.int64)})
            want = bool(condition.xreplace({s: sympy.Integer(size)}))
            assert bool(np.asarray(got)) == want, (condition, size)


def test_which_size_conditions_the_onnx_model_checks():
    """A path of one size is checked (focalnet's parity; a remainder that is not zero, the other
    side of `if w % 16 != 0: pad`), and an equality of sizes, one or several (a patch grid's
    count); torch's assumption that a derived size is not 0 or 1, and an inequality relating two
    sizes, are the inputs' contract: listed, not checked (col2im's fold at
    one channel and one block per row is right, tests/ops/test_unfold_fold_dynamic.py)."""
    import sympy
    from torch.utils._sympy.functions import FloorDiv, PythonMod

    from torchlib.exporter.size_checks import checked

    s, t = sympy.Symbol("s0", integer=True, positive=True), sympy.Symbol("s1", integer=True, positive=True)
    assert checked(sympy.Eq(PythonMod(FloorDiv(s, 16), 2), 0), True)
    assert checked(sympy.Ne(PythonMod(s, 16), 0), True)
    assert not checked(sympy.Ne(FloorDiv(s, 6), 1), True)
    assert not checked(sympy.Ne(1 + FloorDiv(s - 1, 2), t), True)
    assert checked(sympy.Eq((1 + FloorDiv(s - 1, 32)) * (1 + FloorDiv(t - 1, 32)), 49), True)  # efficientformer's grid
    assert not checked(sympy.Ge(s, 3), False)
