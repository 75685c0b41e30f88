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


# -- regression (issue 13): p = 1 in training, bfloat16 ------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.float64, torch.bfloat16], ids=str)
def test_dropout_p1_in_training_gives_input_times_zero(dtype):
    # onnxruntime refuses ratio 1; torch returns input * 0 and an all-False mask
    x = torch.tensor([[1.0, float("inf")], [float("nan"), -2.0]], dtype=dtype)
    check_function(dropout.aten_dropout, (x, 1.0, True), expected=torch.ops.aten.dropout(x, 1.0, True))
    check_function(dropout.aten_native_dropout, (x, 1.0, True), expected=torch.ops.aten.native_dropout(x, 1.0, True))


def test_dropout_bfloat16_in_training_keeps_dtype_and_scale():
    y = dropout.aten_dropout(torch.ones(1000, dtype=torch.bfloat16), 0.5, True)
    assert y.dtype == torch.bfloat16
    assert set(y.unique().tolist()) <= {0.0, 2.0}


@pytest.mark.parametrize("train", [True, False, None])
def test_native_dropout_of_empty_input_gives_mask_of_input_dtype(train):
    x = torch.zeros(0, 4)
    check_function(dropout.aten_native_dropout, (x, 0.5, train), expected=torch.ops.aten.native_dropout(x, 0.5, train))
