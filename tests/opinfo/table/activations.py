"""Expectations for torchlib/ops/activations.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, TorchLessAccurate

from . import _helpers as h

ENTRIES = [
    Entry('aten__log_softmax', opinfo=[('log_softmax', 'with_dtype'), 'log_softmax'], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # _log_softmax
    Entry('aten__softmax', opinfo=[('softmax', 'with_dtype'), 'softmax']),  # _softmax
    Entry('aten_celu', opinfo=['nn.functional.celu']),  # celu
    Entry('aten_clamp', opinfo=['clamp', 'nn.functional.hardtanh', 'corrcoef']),
    Entry('aten_clamp_max', samples=h.tensor_and_scalar, dtypes=[torch.float32, torch.float16, torch.float64, torch.int64, torch.int32]),
    Entry('aten_clamp_max_tensor', opinfo=['clamp_max']),  # clamp_max.Tensor
    Entry('aten_clamp_min', opinfo=['nn.functional.triplet_margin_loss', 'nn.functional.triplet_margin_with_distance_loss']),  # clamp_min
    Entry('aten_clamp_min_tensor', opinfo=['clamp_min']),  # clamp_min.Tensor
    Entry('aten_clamp_tensor', opinfo=['clamp']),  # clamp.Tensor
    Entry('aten_elu', opinfo=['nn.functional.elu']),  # elu
    Entry('aten_gelu', opinfo=['nn.functional.gelu'], xfail=[
    ]),  # gelu
    Entry('aten_glu', opinfo=['nn.functional.glu']),  # glu
    Entry('aten_hardsigmoid', opinfo=['nn.functional.hardsigmoid']),  # hardsigmoid
    Entry('aten_hardswish', opinfo=['nn.functional.hardswish']),  # hardswish
    Entry('aten_hardtanh', opinfo=['nn.functional.hardtanh']),  # hardtanh
    Entry('aten_leaky_relu', opinfo=['nn.functional.leaky_relu']),  # leaky_relu
    Entry('aten_hardshrink', opinfo=['nn.functional.hardshrink']),  # hardshrink
    Entry('aten_softshrink', opinfo=['nn.functional.softshrink']),  # softshrink
    Entry('aten_threshold', opinfo=['nn.functional.threshold']),  # threshold
    Entry('aten_log_sigmoid', opinfo=['nn.functional.logsigmoid']),
    Entry('aten_log_sigmoid_forward', opinfo=['nn.functional.multilabel_soft_margin_loss', 'nn.functional.logsigmoid']),  # log_sigmoid_forward
    Entry('aten_log_softmax', opinfo=['log_softmax', ('log_softmax', 'with_dtype')], xfail=[TorchLessAccurate(dtypes=[torch.bfloat16, torch.float16])]),  # log_softmax.int (CompositeImplicit)
    Entry('aten_mish', opinfo=['nn.functional.mish']),  # mish
    Entry('aten_relu', opinfo=['nn.functional.relu']),  # relu
    Entry('aten_relu6', opinfo=['nn.functional.relu6']),  # relu6 (CompositeImplicit)
    Entry('aten_selu', opinfo=['nn.functional.selu']),  # selu (CompositeImplicit)
    Entry('aten_sigmoid', opinfo=['sigmoid']),  # sigmoid
    Entry('aten_silu', opinfo=['nn.functional.silu']),  # silu
    Entry('aten_softmax', opinfo=['softmax', ('softmax', 'with_dtype')]),  # softmax.int (CompositeImplicit)
    Entry('aten_softplus', opinfo=['nn.functional.softplus']),  # softplus
]
