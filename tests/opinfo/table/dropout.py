"""Expectations for torchlib/ops/dropout.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, XFail

from . import _own_samples as own

ENTRIES = [
    Entry('aten_alpha_dropout', opinfo=['nn.functional.alpha_dropout'], compare='shape', xfail=[
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.bfloat16], samples=[2, 4, 8, 10, 14, 16]),
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float16], samples=[2, 4, 8, 10, 14, 16]),
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float32], samples=[2, 4, 8, 10, 14, 16]),
        XFail('ValueError: aten::alpha_dropout in training mode is not exported; export in eval mode', dtypes=[torch.float64], samples=[2, 4, 8, 10, 14, 16]),
    ]),  # alpha_dropout (CompositeImplicit)
    Entry('aten_dropout', opinfo=['nn.functional.dropout'], compare='shape', xfail=[
        XFail('onnxruntime has no Dropout-22 kernel for this dtype (NOT_IMPLEMENTED)', dtypes=[torch.bfloat16], samples=[2, 4, 8, 10, 14, 16, 18]),
        XFail("onnxruntime failed to run op.Dropout(FLOAT16[5, 5], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/provi...", dtypes=[torch.float16], samples=[4], mode='eager'),
        XFail("Non-zero status code returned while running Dropout node. Name:'node_output_0' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/nn/dropout_op.h:42 float onnxruntime::{anonymous}::GetRatioOrDefault(const...", dtypes=[torch.float16], samples=[4, 10, 16], mode='traced'),
        XFail("onnxruntime failed to run op.Dropout(FLOAT16[5], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/provider...", dtypes=[torch.float16], samples=[10], mode='eager'),
        XFail("onnxruntime failed to run op.Dropout(FLOAT16[], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/providers...", dtypes=[torch.float16], samples=[16], mode='eager'),
        XFail("onnxruntime failed to run op.Dropout(FLOAT[5, 5], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/provide...", dtypes=[torch.float32], samples=[4], mode='eager'),
        XFail("Non-zero status code returned while running Dropout node. Name:'node_output_0' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/nn/dropout_op.h:42 float onnxruntime::{anonymous}::GetRatioOrDefault(const...", dtypes=[torch.float32], samples=[4, 10, 16], mode='traced'),
        XFail("onnxruntime failed to run op.Dropout(FLOAT[5], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/providers/...", dtypes=[torch.float32], samples=[10], mode='eager'),
        XFail("onnxruntime failed to run op.Dropout(FLOAT[], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/providers/c...", dtypes=[torch.float32], samples=[16], mode='eager'),
        XFail("onnxruntime failed to run op.Dropout(DOUBLE[5, 5], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/provid...", dtypes=[torch.float64], samples=[4], mode='eager'),
        XFail("Non-zero status code returned while running Dropout node. Name:'node_output_0' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/nn/dropout_op.h:42 float onnxruntime::{anonymous}::GetRatioOrDefault(const...", dtypes=[torch.float64], samples=[4, 10, 16], mode='traced'),
        XFail("onnxruntime failed to run op.Dropout(DOUBLE[5], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/providers...", dtypes=[torch.float64], samples=[10], mode='eager'),
        XFail("onnxruntime failed to run op.Dropout(DOUBLE[], FLOAT[], BOOL[]) with attributes {}: Non-zero status code returned while running Dropout node. Name:'Dropout' Status Message: /onnxruntime_src/onnxruntime/core/providers/...", dtypes=[torch.float64], samples=[16], mode='eager'),
    ]),  # dropout (CompositeImplicit)
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
        XFail("p=1 in training: onnxruntime's Dropout rejects ratio 1 (dropout_op.h GetRatioOrDefault wants [0, 1)) and has no bfloat16 kernel, where torch returns zeros (issue 13 item 9)", samples=[2]),
        XFail("an empty input: torch returns the mask in the input's dtype (its numel() == 0 shortcut returns empty_like(input)), every other mask is bool; we return bool always", samples=[3]),
    ]),  # on CPU aten::dropout decomposes to bernoulli and mul, so no OpInfo sample calls native_dropout
]
