"""Expectations for torchlib/ops/rnn.py."""

from __future__ import annotations

import torch

from torchlib.conformance.spec import Entry, Skip, XFail, call

ENTRIES = [
    Entry('aten_gru', reason='TODO'),  # aten::gru.input
    Entry('aten_lstm', reason='TODO'),  # aten::lstm.input
    Entry('aten_rnn_relu', reason='TODO'),  # aten::rnn_relu.input
    Entry('aten_rnn_tanh', reason='TODO'),  # aten::rnn_tanh.input
]
