"""Edge inputs torch accepts (issue 13, issue 10 item 4): empty and size-1 inputs, int64
extremes (torch's int64 arithmetic wraps around), float64 precision. Each test is the repro of a
wrong answer or an error the fuzz pass (bench/fuzz_ops.py) found, checked eagerly and traced."""

from __future__ import annotations

import pytest
import torch

from torchlib.ops import losses as L
from torchlib.testing import check_function

A = torch.ops.aten
I64 = torch.iinfo(torch.int64)


@pytest.mark.parametrize("name", [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "hinge_embedding_loss", "huber_loss",
    "l1_loss", "mse_loss", "smooth_l1_loss", "soft_margin_loss",
])  # fmt: skip
def test_mean_reduced_loss_of_an_empty_input_is_nan(name):
    empty = torch.zeros(0)
    check_function(getattr(L, f"aten_{name}"), (empty, empty), expected=getattr(A, name)(empty, empty))
