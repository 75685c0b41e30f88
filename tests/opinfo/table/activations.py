"""Expectations for torchlib/ops/activations.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten__log_softmax', opinfo=['log_softmax']),  # aten::_log_softmax; candidates ['log_softmax', ('log_softmax', 'with_dtype')]
    Entry('aten__softmax', opinfo=['softmax']),  # aten::_softmax; candidates ['softmax', ('softmax', 'with_dtype')]
    Entry('aten_celu', opinfo=['nn.functional.celu']),  # aten::celu; candidates ['nn.functional.celu']
    Entry('aten_clamp', opinfo=['clamp']),  # aten::clamp; candidates ['clamp']
    Entry('aten_clamp_max', opinfo=['clamp_max']),  # aten::clamp_max; candidates ['clamp_max']
    Entry('aten_clamp_max_tensor', opinfo=['clamp_max']),  # aten::clamp_max.Tensor; candidates ['clamp_max']
    Entry('aten_clamp_min', opinfo=['clamp_min']),  # aten::clamp_min; candidates ['clamp_min']
    Entry('aten_clamp_min_tensor', opinfo=['clamp_min']),  # aten::clamp_min.Tensor; candidates ['clamp_min']
    Entry('aten_clamp_tensor', opinfo=['clamp']),  # aten::clamp.Tensor; candidates ['clamp']
    Entry('aten_elu', opinfo=['nn.functional.elu']),  # aten::elu; candidates ['nn.functional.elu']
    Entry('aten_gelu', opinfo=['nn.functional.gelu']),  # aten::gelu; candidates ['nn.functional.gelu']
    Entry('aten_glu', opinfo=['nn.functional.glu']),  # aten::glu; candidates ['nn.functional.glu']
    Entry('aten_hardsigmoid', opinfo=['nn.functional.hardsigmoid']),  # aten::hardsigmoid; candidates ['nn.functional.hardsigmoid']
    Entry('aten_hardswish', opinfo=['nn.functional.hardswish']),  # aten::hardswish; candidates ['nn.functional.hardswish']
    Entry('aten_hardtanh', opinfo=['nn.functional.hardtanh']),  # aten::hardtanh; candidates ['nn.functional.hardtanh']
    Entry('aten_leaky_relu', opinfo=['nn.functional.leaky_relu']),  # aten::leaky_relu; candidates ['nn.functional.leaky_relu']
    Entry('aten_log_sigmoid', reason='TODO'),  # aten::log_sigmoid
    Entry('aten_log_sigmoid_forward', reason='TODO'),  # aten::log_sigmoid_forward
    Entry('aten_log_softmax', opinfo=['log_softmax']),  # aten::log_softmax.int; candidates ['log_softmax', ('log_softmax', 'with_dtype')]
    Entry('aten_mish', opinfo=['nn.functional.mish']),  # aten::mish; candidates ['nn.functional.mish']
    Entry('aten_relu6', opinfo=['nn.functional.relu6']),  # aten::relu6; candidates ['nn.functional.relu6']
    Entry('aten_selu', opinfo=['nn.functional.selu']),  # aten::selu; candidates ['nn.functional.selu']
    Entry('aten_sigmoid', opinfo=['sigmoid']),  # aten::sigmoid; candidates ['sigmoid']
    Entry('aten_silu', opinfo=['nn.functional.silu']),  # aten::silu; candidates ['nn.functional.silu', ('nn.functional.silu', 'complex')]
    Entry('aten_softmax', opinfo=['softmax']),  # aten::softmax.int; candidates ['softmax', ('softmax', 'with_dtype')]
    Entry('aten_softplus', opinfo=['nn.functional.softplus']),  # aten::softplus; candidates ['nn.functional.softplus']
]
