import pytest
import torch

from torchlib.ops import dropout, shape
from torchlib.testing import check_function, run_traced


@pytest.mark.parametrize("fn, aten", [
    (dropout.aten_dropout, torch.ops.aten.dropout.default),
    (dropout.aten_feature_dropout, torch.ops.aten.feature_dropout.default),
    (dropout.aten_alpha_dropout, torch.ops.aten.alpha_dropout.default),
    (dropout.aten_feature_alpha_dropout, torch.ops.aten.feature_alpha_dropout.default),
])
def test_dropout_is_identity_at_inference(fn, aten):
    x = torch.randn(2, 3, 4)
    check_function(fn, (x, 0.5, False), expected=aten(x, 0.5, False))


def test_native_dropout_at_inference_keeps_everything():
    x = torch.randn(3, 4)
    check_function(dropout.aten_native_dropout, (x, 0.3, False), expected=torch.ops.aten.native_dropout(x, 0.3, False))


def test_dropout_in_training_zeroes_and_rescales():
    x = torch.ones(1000)
    y = run_traced(dropout.aten_dropout, x, 0.5, True)
    kept = y[y != 0]
    assert torch.allclose(kept, torch.full_like(kept, 2.0))
    assert 300 < kept.numel() < 700


def test_feature_dropout_in_training_is_refused_clearly():
    with pytest.raises(ValueError, match="eval mode"):
        dropout.aten_feature_dropout(torch.ones(2, 3), 0.5, True)


def test_contiguous_is_free():
    x = torch.randn(2, 3)
    check_function(shape.aten_contiguous, (x,), expected=x)
