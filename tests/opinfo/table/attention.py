"""Expectations for torchlib/ops/attention.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate, XFail

ENTRIES = [
    Entry('aten_scaled_dot_product_attention', opinfo=['nn.functional.scaled_dot_product_attention'], xfail=[
        TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16]),
        XFail('random: dropout_p=0.5 draws a mask (a random ONNX Dropout, as torch.onnx exports it); tests/torchlib/test_attention_dropout.py checks its statistics', dtypes=[torch.bfloat16], samples=[2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23]),
        XFail('random: dropout_p=0.5 draws a mask (a random ONNX Dropout, as torch.onnx exports it); tests/torchlib/test_attention_dropout.py checks its statistics', dtypes=[torch.float16], samples=[2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23]),
        XFail('random: dropout_p=0.5 draws a mask (a random ONNX Dropout, as torch.onnx exports it); tests/torchlib/test_attention_dropout.py checks its statistics', dtypes=[torch.float32], samples=[2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23]),
        TorchLessAccurate(dtypes=[torch.float32], samples=[13]),
        XFail('random: dropout_p=0.5 draws a mask (a random ONNX Dropout, as torch.onnx exports it); tests/torchlib/test_attention_dropout.py checks its statistics', dtypes=[torch.float64], samples=[2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23]),
    ]),  # scaled_dot_product_attention (CompositeImplicit)
]
