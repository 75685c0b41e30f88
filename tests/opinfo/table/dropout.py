"""Expectations for torchlib/ops/dropout.py."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

from torchlib.conformance.spec import Entry, XFail, sample_input


def native_dropout_samples(dtype: torch.dtype) -> Iterator[Any]:
    """Inference, training with p in (0, 1) (random: shapes and dtypes compared) and p = 1."""
    torch.manual_seed(0)
    for shape in ((5, 5), (3,), (), (0, 4)):
        x = torch.randn(shape).to(dtype)
        for p, train in ((0.3, False), (0.3, None), (0.0, True), (0.4, True), (1.0, True)):
            yield sample_input(x, p, train)

from . import _own_samples as own

ENTRIES = [
    Entry('aten_alpha_dropout', opinfo=['nn.functional.alpha_dropout'], compare='shape', xfail=[
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.bfloat16], samples=[2, 4, 8, 10, 14, 16]),
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float16], samples=[2, 4, 8, 10, 14, 16]),
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float32], samples=[2, 4, 8, 10, 14, 16]),
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float64], samples=[2, 4, 8, 10, 14, 16]),
    ]),  # alpha_dropout (CompositeImplicit)
    Entry('aten_dropout', opinfo=['nn.functional.dropout'], compare='shape'),  # dropout (CompositeImplicit)
    Entry('aten_feature_alpha_dropout', opinfo=[('nn.functional.feature_alpha_dropout', 'with_train'), ('nn.functional.feature_alpha_dropout', 'without_train')], compare='shape', xfail=[
        XFail('ValueError: aten::feature_alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.bfloat16], samples=[1, 2, 4, 5], opinfo='nn.functional.feature_alpha_dropout.with_train'),
        XFail('ValueError: aten::feature_alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float16], samples=[1, 2, 4, 5], opinfo='nn.functional.feature_alpha_dropout.with_train'),
        XFail('ValueError: aten::feature_alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float32], samples=[1, 2, 4, 5], opinfo='nn.functional.feature_alpha_dropout.with_train'),
        XFail('ValueError: aten::feature_alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float64], samples=[1, 2, 4, 5], opinfo='nn.functional.feature_alpha_dropout.with_train'),
    ]),  # feature_alpha_dropout (CompositeImplicit)
    Entry('aten_feature_dropout', opinfo=['nn.functional.dropout2d', 'nn.functional.dropout3d'], compare='shape', xfail=[
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.bfloat16], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout2d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.bfloat16], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout3d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.float16], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout2d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.float16], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout3d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.float32], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout2d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.float32], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout3d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.float64], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout2d'),
        XFail('ValueError: aten::feature_dropout in training mode (whole-channel masks) is not exported; export in eval mode', dtypes=[torch.float64], samples=[2, 4, 8, 10, 12], opinfo='nn.functional.dropout3d'),
    ]),  # feature_dropout CIA
    Entry('aten_native_dropout', samples=own.native_dropout, dtypes=own.FLOATS, xfail=[
    ]),  # on CPU aten::dropout decomposes to bernoulli and mul, so no OpInfo sample calls native_dropout
]
